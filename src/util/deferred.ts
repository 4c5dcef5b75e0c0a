/** A promise with its resolve and reject functions. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
  readonly settled: boolean;
}

/** Creates a {@link Deferred}. Its promise never reports an unhandled rejection on its own. */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  let settled = false;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Callers that never await a confirmation must not crash the process on a failed write;
  // the failure is delivered through the object's reset path instead.
  promise.catch(() => {});
  return {
    promise,
    resolve(value) {
      if (settled) return;
      settled = true;
      resolve(value);
    },
    reject(reason) {
      if (settled) return;
      settled = true;
      reject(reason);
    },
    get settled() {
      return settled;
    },
  };
}
