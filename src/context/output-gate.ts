/**
 * The output gate: outgoing messages (an event's result, a callback, a fetch, a WebSocket send)
 * leave only after every write issued before them is confirmed. Writes register their batch's
 * confirmation with {@link OutputGate.hold}; `allowUnconfirmed` writes do not register.
 */

/** The output gate of one object instance. */
export class OutputGate {
  #held: Promise<void> = Promise.resolve();
  /** The confirmation {@link OutputGate.hold} chained last. */
  #lastHeld: Promise<void> | undefined;
  #broken: Error | null = null;
  /**
   * Who waits to hear that the gate broke: each waiter until what it races settles. Waiters race
   * it against the held writes (a message waiting on a write still in flight, or one that never
   * settles, is discarded at once when the object resets, as on the platform) and events race it
   * against their handler. A listener leaves when its work settles, so nothing accumulates on a gate
   * that never breaks (a race against one long-lived promise kept every event's result).
   */
  readonly #breakListeners = new Set<(error: Error) => void>();

  /** Holds later outgoing messages until `confirmation` settles. */
  hold(confirmation: Promise<void>): void {
    // Every write of a batch holds the same confirmation: chaining it once is enough (a chain of
    // promises per put, otherwise).
    if (confirmation === this.#lastHeld) return;
    this.#lastHeld = confirmation;
    const previous = this.#held;
    this.#held = Promise.all([previous, confirmation]).then(() => undefined);
    this.#held.catch(() => {});
  }

  /** Resolves when everything held so far is confirmed; rejects if the gate broke. */
  async wait(): Promise<void> {
    if (this.#broken) throw this.#broken;
    await this.race(this.#held);
    if (this.#broken) throw this.#broken;
  }

  /** Breaks the gate: every waiting and later message is discarded with `error`. */
  break(error: Error): void {
    if (this.#broken) return;
    this.#broken = error;
    for (const listener of this.#breakListeners) listener(error);
    this.#breakListeners.clear();
  }

  /**
   * `work`'s outcome, or the gate's error if the gate breaks first (`work` then settles unobserved).
   * An event's handler is raced this way: on the platform a reset fails every event of the
   * instance at once, also one whose handler still waits for something that may never come.
   */
  race<T>(work: Promise<T>): Promise<T> {
    const broken = this.#broken;
    if (broken !== null) {
      work.catch(() => {});
      return Promise.reject(broken);
    }
    return new Promise<T>((resolve, reject) => {
      this.#breakListeners.add(reject);
      work.then(
        (value) => {
          this.#breakListeners.delete(reject);
          resolve(value);
        },
        (error: unknown) => {
          this.#breakListeners.delete(reject);
          reject(error);
        },
      );
    });
  }

  /** Whether the gate is broken. */
  get broken(): Error | null {
    return this.#broken;
  }
}
