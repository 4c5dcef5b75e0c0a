/**
 * How deeply critical sections (`blockConcurrencyWhile`, `transaction()`) nest, as the platform
 * counts it: a section started from inside another one's callback is one deeper; sections started
 * side by side (`Promise.all` of several calls made at the same level) have the same depth. The
 * platform refuses to start one deeper than {@link MAX_BLOCK_CONCURRENCY_WHILE_DEPTH}.
 *
 * The platform knows which section a call comes from (its input lock travels with the callback).
 * JavaScript has no portable async context, so the depth is taken from what can be seen: a call
 * made while a section's callback runs synchronously is exactly one deeper than that section; a
 * call made later (after an `await` inside a callback) is taken to nest in the deepest section
 * whose callback is still running (docs/semantics.md).
 */

/** The platform's limit on nested `blockConcurrencyWhile` calls (the outermost is depth 1). */
export const MAX_BLOCK_CONCURRENCY_WHILE_DEPTH = 64;

/** The platform's message when a section would nest deeper than the limit. */
export const NESTED_TOO_DEEPLY_MESSAGE = "blockConcurrencyWhile() calls are nested too deeply.";

/** The depths of the critical sections of one object. */
export class SectionDepth {
  /** Depth of the section whose callback is running synchronously right now (0: none). */
  #current = 0;
  /** Sections whose callback has started and not yet settled. */
  readonly #running = new Set<{ readonly depth: number }>();

  /**
   * The sections whose callback is running now (outermost to deepest: they nest), as a token for
   * {@link SectionDepth.anyRunning}; `null` when none is.
   */
  runningNow(): ReadonlyArray<object> | null {
    return this.#running.size === 0 ? null : [...this.#running];
  }

  /** Whether one of `sections` (from {@link SectionDepth.runningNow}) is still running. */
  anyRunning(sections: ReadonlyArray<object>): boolean {
    return sections.some((section) => this.#running.has(section as { readonly depth: number }));
  }

  /** The depth a section started now would have. */
  next(): number {
    if (this.#current > 0) return this.#current + 1;
    let deepest = 0;
    for (const section of this.#running) deepest = Math.max(deepest, section.depth);
    return deepest + 1;
  }

  /** The error for a section of `depth`, or undefined when the platform would start it. */
  refuse(depth: number): Error | undefined {
    return depth > MAX_BLOCK_CONCURRENCY_WHILE_DEPTH ? new Error(NESTED_TOO_DEEPLY_MESSAGE) : undefined;
  }

  /**
   * Per depth, when the last section started (or queued) at that depth settles. Sections started
   * side by side are siblings, and on the platform a section takes its parent's lock, so siblings
   * run one after the other, in the order they were called (what one writes, a later one sees).
   */
  readonly #tails = new Map<number, Promise<void>>();

  /**
   * Runs the callback of a section of `depth` once the sibling sections started before it have
   * settled, tracking it until its promise settles.
   */
  run<T>(depth: number, callback: () => Promise<T>, startAfter?: Promise<void>): Promise<T> {
    // Taken at the call, so siblings keep the order they were called in even when one of them
    // starts its callback on a later turn (`startAfter`: blockConcurrencyWhile's callback never
    // runs inside the call, but once the caller's pending microtasks have run).
    const previous = this.#tails.get(depth) ?? startAfter;
    const result =
      previous === undefined ? this.#start(depth, callback) : previous.then(() => this.#start(depth, callback));
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(depth, tail);
    void tail.then(() => {
      if (this.#tails.get(depth) === tail) this.#tails.delete(depth);
    });
    return result;
  }

  #start<T>(depth: number, callback: () => Promise<T>): Promise<T> {
    const section = { depth };
    this.#running.add(section);
    const outer = this.#current;
    this.#current = depth;
    let result: Promise<T>;
    try {
      result = Promise.resolve(callback());
    } catch (e) {
      result = Promise.reject(e);
    } finally {
      this.#current = outer;
    }
    return result.finally(() => this.#running.delete(section));
  }
}
