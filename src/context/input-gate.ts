/**
 * The input gate: decides when the next event may be delivered to the object.
 *
 * Events are queued in arrival order and delivered one per macrotask while the gate is open, so an
 * event that only awaits storage (which resolves without yielding to the event loop) runs to its
 * next real I/O before the next event starts: ten concurrent `get → put(v+1)` events end at 10.
 * A critical section (blockConcurrencyWhile, transaction) closes the gate until it settles.
 */
import { scheduleMacrotask } from "../util/clock";

/** The input gate of one object. */
export class InputGate {
  readonly #queue: Array<() => void> = [];
  #criticalDepth = 0;
  /** Grows with {@link InputGate.reopen}: holds taken before it no longer count. */
  #generation = 0;
  #pumping = false;

  /** Whether a critical section holds the gate closed. */
  get closed(): boolean {
    return this.#criticalDepth > 0;
  }

  /** Resolves when the event may start (in order, on its own macrotask, with the gate open). */
  enter(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#queue.push(resolve);
      this.#pump();
    });
  }

  /**
   * Runs `fn` with the gate closed: no queued event starts until it settles. Nested critical
   * sections (a transaction inside blockConcurrencyWhile) simply deepen the hold.
   */
  async runCritical<T>(fn: () => Promise<T>): Promise<T> {
    const generation = this.#generation;
    this.#criticalDepth++;
    try {
      return await fn();
    } finally {
      if (generation === this.#generation) this.#criticalDepth--;
      this.#pump();
    }
  }

  /**
   * Drops every hold taken so far: the instance whose critical sections took them was reset, and
   * on the platform its successor gets a gate of its own at once, whatever the dead sections'
   * callbacks still wait for (a timer, a fetch, a promise that never settles).
   */
  reopen(): void {
    this.#generation++;
    this.#criticalDepth = 0;
    this.#pump();
  }

  #pump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    scheduleMacrotask(() => {
      this.#pumping = false;
      if (this.#criticalDepth > 0) return;
      const next = this.#queue.shift();
      if (next === undefined) return;
      next();
      // One event per macrotask: the one just started runs its synchronous part and its
      // microtasks first.
      if (this.#queue.length > 0) this.#pump();
    });
  }
}
