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
  const AsyncLocalStorage = (await loadAsyncLocalStorage()) as (new () => AsyncLocalStorageLike<T>) | undefined;
  if (AsyncLocalStorage === undefined) return undefined;
  const als = new AsyncLocalStorage();
  return { run: (value, fn) => als.run(value, fn), get: () => als.getStore() };
}

let asyncLocalStorage: Promise<(new () => AsyncLocalStorageLike<unknown>) | undefined> | undefined;

/**
 * Node's AsyncLocalStorage class, or `undefined`; imported once per process (each storage opens a
 * scope of its own, and a dynamic import is a round trip through the module loader).
 */
function loadAsyncLocalStorage(): Promise<(new () => AsyncLocalStorageLike<unknown>) | undefined> {
  asyncLocalStorage ??= (async () => {
    try {
      const hooks = (await import(/* @vite-ignore */ "node:async_hooks")) as {
        AsyncLocalStorage: new () => AsyncLocalStorageLike<unknown>;
      };
      return hooks.AsyncLocalStorage;
    } catch {
      return undefined;
    }
  })();
  return asyncLocalStorage;
}
