/**
 * A minimal async-context scope (Node's AsyncLocalStorage where it exists). Storage uses it to tell
 * a transaction started *inside* another transaction's closure (a nested transaction, which must
 * run at once as a savepoint) from one started concurrently elsewhere (which must wait its turn).
 */

/** Runs code with a value that its async continuations can read back. */
export interface AsyncScope<T> {
  run<R>(value: T, fn: () => R): R;
  get(): T | undefined;
}

interface AsyncLocalStorageLike<T> {
  run<R>(store: T, fn: () => R): R;
  getStore(): T | undefined;
}

/** Loads Node's AsyncLocalStorage; `undefined` where the runtime has none (browsers). */
export async function loadAsyncScope<T>(): Promise<AsyncScope<T> | undefined> {
  try {
    const hooks = (await import(/* @vite-ignore */ "node:async_hooks")) as {
      AsyncLocalStorage: new () => AsyncLocalStorageLike<T>;
    };
    const als = new hooks.AsyncLocalStorage();
    return { run: (value, fn) => als.run(value, fn), get: () => als.getStore() };
  } catch {
    return undefined;
  }
}
