/**
 * The output gate: outgoing messages (an event's result, a callback, a fetch, a WebSocket send)
 * leave only after every write issued before them is confirmed. Writes register their batch's
 * confirmation with {@link OutputGate.hold}; `allowUnconfirmed` writes do not register.
 */

/** The output gate of one object instance. */
export class OutputGate {
  #held: Promise<void> = Promise.resolve();
  #broken: Error | null = null;

  /** Holds later outgoing messages until `confirmation` settles. */
  hold(confirmation: Promise<void>): void {
    const previous = this.#held;
    this.#held = Promise.all([previous, confirmation]).then(() => undefined);
    this.#held.catch(() => {});
  }

  /** Resolves when everything held so far is confirmed; rejects if the gate broke. */
  async wait(): Promise<void> {
    if (this.#broken) throw this.#broken;
    await this.#held;
    if (this.#broken) throw this.#broken;
  }

  /** Breaks the gate: every waiting and later message is discarded with `error`. */
  break(error: Error): void {
    this.#broken ??= error;
  }

  /** Whether the gate is broken. */
  get broken(): Error | null {
    return this.#broken;
  }
}
