/** A promise resolved or rejected by hand, to force an interleaving (STYLE.md's `triggerPromise()`). */
export interface Trigger<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

/** Creates a {@link Trigger}. */
export function triggerPromise<T = void>(): Trigger<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
