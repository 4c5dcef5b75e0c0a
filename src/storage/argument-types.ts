/**
 * The platform's checks of argument types, which its bindings make while converting the arguments,
 * before the method looks at any of them: an options argument must be an object (a function or an
 * array will do), `null` or `undefined`; a closure must be a function. Arguments convert in order,
 * so a key that cannot become a string fails before the options after it.
 */

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
 * options dictionary. The key or keys before it are converted first by the caller (a Symbol fails
 * with its own error there); the members are read by `readOptions` (option-dictionaries.ts).
 */
export function checkOptions(options: unknown, method: string, on: ApiInterface, position: number, type: string): void {
  if (!isDictionary(options)) throw argumentTypeError(method, on, position, type);
}

/** Throws the platform's TypeError when `closure` (parameter 1 of `method`) is not a function. */
export function checkClosure(closure: unknown, method: string): void {
  if (typeof closure !== "function") throw argumentTypeError(method, "DurableObjectStorage", 1, "function");
}
