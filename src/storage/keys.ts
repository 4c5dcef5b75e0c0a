/**
 * Keys: conversion, size, UTF-8 ordering, and compiling list() options into a key range,
 * with the platform's checks in the platform's order.
 */
import type { StorageLimits } from "../limits";
import { readBackAsUtf8, utf8Length } from "../util/utf8";
import type { SyncKvListOptions } from "./options";
import { isProxy } from "./values/proxy";

export { utf8Length } from "../util/utf8";

/**
 * Compares two keys by the bytes the platform stores for them: UTF-8, with a lone surrogate written
 * as the three bytes of its own code unit (WTF-8, `writeWtf8` in util/utf8.ts). That is code point
 * order, a lone surrogate counting as its own value (between U+D7FF and U+E000) and a pair as the
 * character it makes (above U+FFFF). JS's `<` compares UTF-16 code units, which differs exactly where
 * the first differing units are both U+D800 or above, the case handled here.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) return unitRank(a, i, x) - unitRank(b, i, y);
    return x - y;
  }
  return a.length - b.length;
}

/**
 * Where the unit `c` (U+D800 or above) at `s[i]` sorts, as the first difference of two keys whose
 * units before `i` are equal: a surrogate that is half of a pair above every BMP unit (as its
 * character is above U+FFFF), in the pair's order; a lone one at its own value, below U+E000.
 */
function unitRank(s: string, i: number, c: number): number {
  if (c > 0xdfff) return c;
  const paired =
    c <= 0xdbff
      ? i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00
      : i > 0 && (s.charCodeAt(i - 1) & 0xfc00) === 0xd800;
  return paired ? c + 0x10000 : c;
}

/**
 * Converts a key the way the platform does: `String(key)`. A lone surrogate stays: the platform
 * stores it as its WTF-8 bytes, so `"a\uD800b"` and `"a\uFFFDb"` are different keys
 * ({@link listedKey} is how it reads back).
 */
export function toKey(key: unknown): string {
  // String(symbol) would give "Symbol(x)"; the platform converts keys as a template literal does,
  // which throws for a symbol: "Cannot convert a Symbol value to a string".
  return typeof key === "string" ? key : `${key as string}`;
}

/**
 * Whether a key argument is an array of keys, as the platform's bindings decide it (V8's IsArray): a
 * Proxy is not one, even of an array (it converts to one key, `String(proxy)`), where the runtime can
 * tell a proxy (not in browsers).
 */
export function isKeyArray(value: unknown): value is readonly unknown[] {
  return typeof value === "object" && value !== null && !isProxy(value) && Array.isArray(value);
}

/**
 * Converts the key argument of `get()` and `delete()` as the platform's bindings do: an array (see
 * {@link isKeyArray}) element by element, reading every index below its length (a hole reads as
 * `undefined`, or what the prototype has there, and converts like any value: `"undefined"`); anything
 * else as one key ({@link toKey}).
 */
export function toKeyArgument(value: unknown): string | string[] {
  if (!isKeyArray(value)) return toKey(value);
  const length = value.length;
  const keys = new Array<string>(length);
  for (let i = 0; i < length; i++) keys[i] = toKey(value[i]);
  return keys;
}

/**
 * The string `list()` and `get([...])` hand back for a stored key, as the platform decodes the key's
 * bytes: the key itself, unless it has a lone surrogate, whose three bytes are not UTF-8 and read
 * back as three U+FFFD (`"a\uD800b"` lists as `"a\uFFFD\uFFFD\uFFFDb"`). Distinct keys can so read
 * back as one string; in a Map they collapse as on the platform (the last in listing order wins).
 * `get("a\uD800b")` still finds the key: only what is handed back changes.
 */
export const listedKey: (key: string) => string = readBackAsUtf8;

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
 * BigInt and a Symbol. NaN is 0; ±Infinity stay, for the caller's own check.
 */
export function toLong(value: unknown): number {
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
  const limitInt = o.limit === undefined ? undefined : toLong(o.limit);
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
 * The smallest key greater than every key with this prefix, in the order of {@link compareKeys}
 * (the platform's successor of the prefix's bytes, for the keys a string can be): strip trailing
 * U+10FFFF code points (the UTF-8 analogue of 0xFF bytes), then increment the last code point, a
 * lone surrogate counting as its own value (U+D7FF → U+D800: a key with a lone surrogate sorts
 * there). `undefined` means unbounded.
 */
export function prefixSuccessor(prefix: string): string | undefined {
  const points = Array.from(prefix);
  while (points.length > 0 && points[points.length - 1] === "\u{10FFFF}") points.pop();
  const last = points.pop();
  if (last === undefined) return undefined;
  let cp = (last.codePointAt(0) ?? 0) + 1;
  const head = points.join("");
  // After a lone high surrogate (U+DBFF → U+DC00), a low one would make a pair with it, which sorts
  // elsewhere; no key has a lone high one followed by a lone low one, so the next key is U+E000.
  if (cp === 0xdc00 && (head.charCodeAt(head.length - 1) & 0xfc00) === 0xd800) cp = 0xe000;
  return head + String.fromCodePoint(cp);
}

/** Whether `key` is in `[range.start, range.end)` (`end` undefined = unbounded). */
export function inRange(key: string, range: { start: string; end: string | undefined }): boolean {
  return compareKeys(key, range.start) >= 0 && (range.end === undefined || compareKeys(key, range.end) < 0);
}
