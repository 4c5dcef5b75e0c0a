/**
 * The arguments of the key-value calls, converted as the platform's bindings convert them, in
 * their order, before the method looks at any of them (and so before the state of a transaction is
 * looked at): the key or keys, then the options' members ({@link readOptions}). The storage and its
 * transactions convert once and hand the converted values on, so no getter runs twice.
 */
import { type AsyncApiInterface, isDictionary } from "./argument-types";
import { isKeyArray, toKey, toKeyArgument } from "./keys";
import { GET_OPTIONS, PUT_OPTIONS, readOptions } from "./option-dictionaries";
import type { GetOptions, PutOptions } from "./options";

/** A `get()` or `delete()` call after conversion: one key or a list of keys, and the options. */
export interface KeyCall<O> {
  readonly keys: string | string[];
  readonly options: O | undefined;
}

/** A `put()` call after conversion: one key and its value, or the entries to write. */
export type PutCall =
  | { readonly key: string; readonly value: unknown; readonly options: PutOptions | undefined }
  | { readonly entries: ReadonlyArray<readonly [string, unknown]>; readonly options: PutOptions | undefined };

/** `get(keyOrKeys, options)`: the keys, then the options (parameter 2). */
export function convertGetCall(keyOrKeys: unknown, options: unknown, on: AsyncApiInterface): KeyCall<GetOptions> {
  const keys = toKeyArgument(keyOrKeys);
  return { keys, options: readOptions(options, GET_OPTIONS, "get", on, 2) };
}

/** `delete(keyOrKeys, options)`: the keys, then the options (parameter 2). */
export function convertDeleteCall(keyOrKeys: unknown, options: unknown, on: AsyncApiInterface): KeyCall<PutOptions> {
  const keys = toKeyArgument(keyOrKeys);
  return { keys, options: readOptions(options, PUT_OPTIONS, "delete", on, 2) };
}

const PUT_FORMS_MESSAGE =
  "put() may only be called with a single key-value pair and optional options as put(key, value, options) or with multiple key-value pairs and optional options as put(entries, options)";

/**
 * `put()`, in the platform's order. Parameter 1 is the entries when it is an object or a function
 * that is not an array (a Date, a Map, a boxed string: their own enumerable properties, each value
 * read once, those whose value is undefined dropped, as the platform drops them), else one key; then
 * the options of parameter 3 (converted in both forms); then, for one key, a value must be given; for
 * entries, parameter 2 must be options (converted then: these are the options the entries use).
 */
export function convertPutCall(
  keyOrEntries: unknown,
  valueOrOptions: unknown,
  options: unknown,
  on: AsyncApiInterface,
): PutCall {
  const isEntries =
    typeof keyOrEntries === "function" ||
    (typeof keyOrEntries === "object" && keyOrEntries !== null && !isKeyArray(keyOrEntries));
  if (!isEntries) {
    const key = toKey(keyOrEntries);
    const converted = readOptions(options, PUT_OPTIONS, "put", on, 3);
    if (valueOrOptions === undefined) throw new TypeError("put() called with undefined value.");
    return { key, value: valueOrOptions, options: converted };
  }
  const entries = definedEntries(keyOrEntries as Record<string, unknown>);
  readOptions(options, PUT_OPTIONS, "put", on, 3);
  if (!isDictionary(valueOrOptions)) throw new TypeError(PUT_FORMS_MESSAGE);
  return { entries, options: readOptions(valueOrOptions, PUT_OPTIONS, "put", on, 2) };
}

/**
 * The entries `put(entries)` writes: each property read exactly once (a getter may answer
 * differently the second time), fields whose value is undefined dropped, as the platform drops them.
 */
function definedEntries(entries: Record<string, unknown>): Array<[string, unknown]> {
  const defined: Array<[string, unknown]> = [];
  for (const k of Object.keys(entries)) {
    const value = entries[k];
    if (value !== undefined) defined.push([k, value]);
  }
  return defined;
}
