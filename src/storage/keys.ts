/**
 * Keys: conversion, size, UTF-8 ordering, and compiling list() options into a key range,
 * with the platform's checks in the platform's order.
 */
import type { StorageLimits } from "../limits";
import { toWellFormed, utf8Length } from "../util/utf8";
import type { SyncKvListOptions } from "./options";

const encoder = new TextEncoder();

export { utf8Length } from "../util/utf8";

/**
 * Compares two strings by their UTF-8 encoding (= Unicode code point order), which is the
 * platform's key order. JS's `<` compares UTF-16 code units, which differs exactly when one side
 * has a surrogate (U+D800–DFFF) and the other a unit in U+E000–FFFF: `"\uFFFF" < "😀"` in UTF-8.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      // Move surrogates above U+E000–U+FFFF so the order matches code points.
      x = x < 0xe000 ? x + 0x2000 : x - 0x800;
      y = y < 0xe000 ? y + 0x2000 : y - 0x800;
    }
    return x - y;
  }
  return a.length - b.length;
}

/**
 * Converts a key the way the platform does: `String(key)`, then to well-formed Unicode (the
 * platform stores keys as UTF-8, which cannot hold a lone surrogate: it becomes U+FFFD).
 */
export function toKey(key: unknown): string {
  // String(symbol) would give "Symbol(x)"; the platform converts keys as a template literal does,
  // which throws for a symbol: "Cannot convert a Symbol value to a string".
  const s = typeof key === "string" ? key : `${key as string}`;
  return toWellFormed(s);
}

/** Throws the platform's RangeError when a key is over the limit. */
export function checkKeySize(key: string, limits: StorageLimits): void {
  // Fast path: even at 3 bytes per unit the key cannot exceed the limit.
  if (key.length * 3 <= limits.maxKeyBytes) return;
  const size = utf8Length(key);
  if (size > limits.maxKeyBytes) {
    throw new RangeError(`Keys cannot be larger than ${limits.maxKeyBytes} bytes. A key of size ${size} was provided.`);
  }
}

/** Throws the platform's RangeError when a multi-key call has too many keys. */
export function checkKeyCount(count: number, limits: StorageLimits): void {
  if (count > limits.maxKeysPerCall) {
    throw new RangeError(
      `Maximum number of key value pairs is ${limits.maxKeysPerCall}. ${count} pairs were provided.`,
    );
  }
}

/** The options of `list()` that shape the range (the synchronous `kv.list()` takes exactly these). */
export type ListRangeOptions = SyncKvListOptions;

/** A compiled key range: `start <= key < end` (`end` undefined = unbounded), ordered, limited. */
export interface KeyRange {
  start: string;
  end: string | undefined;
  reverse: boolean;
  limit: number | undefined;
  /** True when the range is provably empty: no storage access needed. */
  empty: boolean;
}

/**
 * ToInt32 as WebIDL `long` does it, with the platform's range check, which looks at the number
 * before it is truncated (2147483647.5 is out of range). ToNumber, like the platform's, refuses a
 * BigInt and a Symbol.
 */
function toInt32(value: unknown): number {
  const n = +(value as number);
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 0 : n > 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  if (n > 2147483647 || n < -2147483648) {
    throw new TypeError("Value out of range. Must be between -2147483648 and 2147483647 (inclusive).");
  }
  return Math.trunc(n);
}

/**
 * Compiles list() options into a key range, with the platform's checks in its order:
 * start+startAfter, then limit, then prefix clamping, then the empty-range short cut.
 */
export function compileListOptions(options: ListRangeOptions | undefined): KeyRange {
  const o = options ?? {};
  // WebIDL converts `limit` to a 32-bit int while reading the options, before any other check.
  const limitInt = o.limit === undefined ? undefined : toInt32(o.limit);
  if (o.start !== undefined && o.startAfter !== undefined) {
    throw new TypeError("list() cannot be called with both start and startAfter values.");
  }
  let start = o.start !== undefined ? toKey(o.start) : "";
  // The platform turns startAfter into an inclusive start of startAfter + "\0".
  if (o.startAfter !== undefined) start = `${toKey(o.startAfter)}\u0000`;
  let end = o.end !== undefined ? toKey(o.end) : undefined;
  let limit: number | undefined;
  if (limitInt !== undefined) {
    const n = limitInt;
    if (!(n > 0) || n === Number.POSITIVE_INFINITY) throw new TypeError("List limit must be positive.");
    limit = n;
  }
  const reverse = Boolean(o.reverse);
  if (o.prefix !== undefined) {
    const prefix = toKey(o.prefix);
    if (prefix.length > 0) {
      if (compareKeys(start, prefix) < 0) start = prefix;
      const successor = prefixSuccessor(prefix);
      if (successor !== undefined && (end === undefined || compareKeys(successor, end) < 0)) end = successor;
    }
  }
  const empty = end !== undefined && compareKeys(end, start) <= 0;
  return { start, end, reverse, limit, empty };
}

/**
 * The smallest string greater than every string with this prefix, in UTF-8 order: strip trailing
 * U+10FFFF code points (the UTF-8 analogue of 0xFF bytes), then increment the last code point.
 * `undefined` means unbounded.
 */
export function prefixSuccessor(prefix: string): string | undefined {
  const points = Array.from(prefix);
  while (points.length > 0 && points[points.length - 1] === "\u{10FFFF}") points.pop();
  const last = points.pop();
  if (last === undefined) return undefined;
  let cp = (last.codePointAt(0) ?? 0) + 1;
  if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xe000; // skip the surrogate range, which UTF-8 cannot hold
  return points.join("") + String.fromCodePoint(cp);
}

/** UTF-8 encoding of a key (for sizes that must be exact). */
export function encodeKey(key: string): Uint8Array {
  return encoder.encode(key);
}

/** Whether `key` is in `[range.start, range.end)` (`end` undefined = unbounded). */
export function inRange(key: string, range: { start: string; end: string | undefined }): boolean {
  return compareKeys(key, range.start) >= 0 && (range.end === undefined || compareKeys(key, range.end) < 0);
}
