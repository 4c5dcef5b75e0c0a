/**
 * The platform's checks of argument types, which its bindings make while converting the arguments,
 * before the method looks at any of them: an options argument must be an object (a function or an
 * array will do), `null` or `undefined`; a closure must be a function. Arguments convert in order,
 * so a key that cannot become a string fails before the options after it.
 */
import { toKey } from "./keys";

/** The platform interfaces with promise-returning key-value methods. */
export type AsyncApiInterface = "DurableObjectStorage" | "DurableObjectTransaction";

/** The platform interfaces whose methods these checks speak for (`DurableObjectState` is `ctx`). */
export type ApiInterface = AsyncApiInterface | "SyncKvStorage" | "DurableObjectState";

/** `Failed to execute 'get' on 'DurableObjectStorage': parameter 2 is not of type 'GetOptions'.` */
export function argumentTypeError(method: string, on: ApiInterface, position: number, type: string): TypeError {
  return new TypeError(`Failed to execute '${method}' on '${on}': parameter ${position} is not of type '${type}'.`);
}

/** Whether `value` converts to an options dictionary: `undefined`, `null`, an object or a function. */
export function isDictionary(value: unknown): boolean {
  return value === undefined || value === null || typeof value === "object" || typeof value === "function";
}

/**
 * Throws the platform's TypeError when `options` (parameter `position` of `method`) is not an
 * options dictionary. `keys`, the key or keys converted before it, are converted first (a Symbol
 * fails with its own error there); this costs nothing on the path where the options are fine.
 */
export function checkOptions(
  options: unknown,
  method: string,
  on: ApiInterface,
  position: number,
  type: string,
  keys?: unknown,
): void {
  if (isDictionary(options)) return;
  if (Array.isArray(keys)) for (const key of keys) toKey(key);
  else if (keys !== undefined) toKey(keys);
  throw argumentTypeError(method, on, position, type);
}

/** Throws the platform's TypeError when `closure` (parameter 1 of `method`) is not a function. */
export function checkClosure(closure: unknown, method: string): void {
  if (typeof closure !== "function") throw argumentTypeError(method, "DurableObjectStorage", 1, "function");
}

/**
 * The argument checks of `put()` that come before any value is serialized, in the platform's order:
 * the key, the options (parameter 3, in both forms), then, for one key, an `undefined` value, and
 * for entries, a second argument that cannot be options.
 */
export function checkPutArguments(
  keyOrEntries: unknown,
  valueOrOptions: unknown,
  options: unknown,
  on: ApiInterface,
): void {
  const single = typeof keyOrEntries !== "object" || keyOrEntries === null || Array.isArray(keyOrEntries);
  checkOptions(options, "put", on, 3, "PutOptions", single ? keyOrEntries : undefined);
  if (single) {
    if (valueOrOptions === undefined) {
      toKey(keyOrEntries);
      throw new TypeError("put() called with undefined value.");
    }
  } else if (!isDictionary(valueOrOptions)) {
    throw new TypeError(
      "put() may only be called with a single key-value pair and optional options as put(key, value, options) or with multiple key-value pairs and optional options as put(entries, options)",
    );
  }
}
