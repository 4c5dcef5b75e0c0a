/**
 * How `exec` bindings become SQLite values, as on the platform (workerd binds a
 * `Maybe<OneOf<bytes, String, double>>`): numbers bind as REAL (`NaN` as NULL), strings as TEXT,
 * `null`/`undefined` as NULL, ArrayBuffer and views as BLOB, and everything else through its
 * string form; a BigInt or a Symbol is refused with the platform's TypeError.
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
      if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
      if (ArrayBuffer.isView(value)) {
        return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
      }
      return String(value);
    default:
      // booleans and functions: their string form, like any other object
      return String(value);
  }
}

/**
 * Converts every binding of one `exec` call, in place: pass an array the caller owns (`exec`'s
 * rest parameter). On a throw (BigInt, Symbol) the array is partly converted; discard it.
 */
export function toEngineValuesInPlace(values: SqlBindingValue[]): EngineValue[] {
  for (let i = 0; i < values.length; i++) values[i] = toEngineValue(values[i]);
  return values as EngineValue[];
}
