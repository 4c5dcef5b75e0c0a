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
   * Rejects when the gate breaks. Waiters race it against the held writes: a message waiting on a
   * write that is still in flight (or never settles) is discarded at once when the object resets,
   * as on the platform, instead of when that write finally settles.
   */
  readonly #onBroken: Promise<never>;
  #rejectOnBroken!: (error: Error) => void;

  constructor() {
    this.#onBroken = new Promise<never>((_, reject) => {
      this.#rejectOnBroken = reject;
    });
    this.#onBroken.catch(() => {});
  }

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
    await Promise.race([this.#held, this.#onBroken]);
    if (this.#broken) throw this.#broken;
  }

  /** Breaks the gate: every waiting and later message is discarded with `error`. */
  break(error: Error): void {
    if (this.#broken) return;
    this.#broken = error;
    this.#rejectOnBroken(error);
  }

  /**
   * Rejects with the error when the gate breaks (never resolves). An event's handler is raced
   * against it: on the platform a reset fails every event of the instance at once, also one whose
   * handler still waits for something that may never come.
   */
  get whenBroken(): Promise<never> {
    return this.#onBroken;
  }

  /** Whether the gate is broken. */
  get broken(): Error | null {
    return this.#broken;
  }
}
