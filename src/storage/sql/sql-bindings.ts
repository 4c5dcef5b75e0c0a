/**
 * How `exec` bindings become SQLite values, as on the platform (workerd binds a
 * `Maybe<OneOf<bytes, String, double>>`): numbers bind as REAL (`NaN` as NULL), strings as TEXT,
 * `null`/`undefined` as NULL, ArrayBuffer, SharedArrayBuffer and views as BLOB (a detached buffer
 * as an empty one, as V8 reports its contents to workerd), and everything else through its string
 * form; a BigInt or a Symbol is refused with the platform's TypeError.
 */
import type { EngineValue } from "../../engine/engine";

/** A value `exec` accepts as a binding. */
export type SqlBindingValue = unknown;

/**
 * Converts one binding. Buffers are copied, so later changes to the caller's memory cannot reach
 * a statement that is still running.
 *
 * @example
 * ```ts
 * toEngineValue(true); // "true"
 * toEngineValue(new Uint8Array([1])); // Uint8Array [1] (a copy)
 * ```
 */
export function toEngineValue(value: SqlBindingValue): EngineValue {
  switch (typeof value) {
    case "number":
      return Number.isNaN(value) ? null : value;
    case "string":
      return value;
    case "undefined":
      return null;
    case "bigint":
      throw new TypeError("Cannot convert a BigInt value to a number");
    case "symbol":
      throw new TypeError("Cannot convert a Symbol value to a string");
    case "object":
      if (value === null) return null;
      if (ArrayBuffer.isView(value)) return viewBytes(value);
      {
        const length = bufferLength(value);
        if (length !== undefined) return copyBytes(value as ArrayBufferLike, 0, length);
      }
      return String(value);
    default:
      // booleans and functions: their string form, like any other object
      return String(value);
  }
}

const arrayBufferLength = byteLengthGetter(ArrayBuffer);
const sharedArrayBufferLength =
  typeof SharedArrayBuffer === "function" ? byteLengthGetter(SharedArrayBuffer) : undefined;

function byteLengthGetter(
  bufferClass: ArrayBufferConstructor | SharedArrayBufferConstructor,
): (this: unknown) => number {
  const getter = Object.getOwnPropertyDescriptor(bufferClass.prototype, "byteLength")?.get;
  if (getter === undefined) throw new Error(`${bufferClass.name}.prototype.byteLength has no getter`);
  return getter as (this: unknown) => number;
}

/**
 * The byte length of an ArrayBuffer or SharedArrayBuffer (of any realm: the getters check the
 * internal slot, as V8's `IsArrayBuffer` does for workerd), else `undefined`. A detached buffer has 0.
 */
function bufferLength(value: object): number | undefined {
  try {
    return arrayBufferLength.call(value);
  } catch {
    // not an ArrayBuffer
  }
  if (sharedArrayBufferLength === undefined) return undefined;
  try {
    return sharedArrayBufferLength.call(value);
  } catch {
    return undefined;
  }
}

/**
 * A copy of a view's bytes. A view whose buffer was detached, or shrunk below it, has none (V8
 * reports no contents to workerd then); a DataView throws when asked for its offset or length then,
 * a typed array answers 0.
 */
function viewBytes(view: ArrayBufferView): Uint8Array {
  let offset: number;
  let length: number;
  try {
    offset = view.byteOffset;
    length = view.byteLength;
  } catch {
    return new Uint8Array(0);
  }
  return copyBytes(view.buffer, offset, length);
}

/** A copy of `length` bytes at `offset` of `buffer`; nothing is read when `length` is 0 (a detached buffer). */
function copyBytes(buffer: ArrayBufferLike, offset: number, length: number): Uint8Array {
  const copy = new Uint8Array(length);
  if (length > 0) copy.set(new Uint8Array(buffer, offset, length));
  return copy;
}

/**
 * Converts every binding of one `exec` call, in place: pass an array the caller owns (`exec`'s
 * rest parameter). On a throw (BigInt, Symbol) the array is partly converted; discard it.
 */
export function toEngineValuesInPlace(values: SqlBindingValue[]): EngineValue[] {
  for (let i = 0; i < values.length; i++) values[i] = toEngineValue(values[i]);
  return values as EngineValue[];
}
