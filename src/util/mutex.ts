/** A FIFO async mutex: callers run one at a time, in the order they asked. */
export class Mutex {
  #tail: Promise<void> = Promise.resolve();

  /** Runs `fn` when every earlier caller has finished. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((r) => {
      release = r;
    });
    try {
      await previous;
      return await fn();
    } finally {
      release();
    }
  }
}
