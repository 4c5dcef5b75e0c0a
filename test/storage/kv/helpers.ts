/**
 * Pure helpers shared by the key-value tests (no storage imports, so the unit tests of keys, cache
 * and table can run on their own).
 */

const encoder = new TextEncoder();

/** The platform's full ordering vector (workerd-semantics §1, probed): UTF-8 byte order. */
export const PLATFORM_ORDER: readonly string[] = ["", "Z", "a", "a\u0000b", "ab", "abc", "b", "c", "é", "\uFFFF", "😀"];

/** Byte-wise comparison of UTF-8 encodings: the reference the implementation must agree with. */
export function utf8Compare(a: string, b: string): number {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = (x[i] as number) - (y[i] as number);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/**
 * The bytes the platform stores for a string (the reference, written independently of the code
 * under test): each code point as UTF-8, a lone surrogate counting as a code point of its own
 * value (three bytes, `ED A0 80` for U+D800), as V8 writes it.
 */
export function wtf8Bytes(s: string): number[] {
  const out: number[] = [];
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return out;
}

/** Byte-wise comparison of {@link wtf8Bytes}: the platform's key order for any string. */
export function wtf8Compare(a: string, b: string): number {
  const x = wtf8Bytes(a);
  const y = wtf8Bytes(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = (x[i] as number) - (y[i] as number);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** How the platform hands a stored key back: its bytes decoded as UTF-8 (each byte of a lone surrogate a U+FFFD). */
export function platformReadBack(s: string): string {
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array(wtf8Bytes(s)));
}

/**
 * Strings with lone surrogates among other characters: single UTF-16 units of every kind (lone
 * high and low surrogates included, and pairs when two meet), whole astral characters, U+FFFD.
 */
export const UNIT_STRING_CHARS = [
  "\uD800",
  "\uDBFF",
  "\uDC00",
  "\uDFFF",
  "\uD83D",
  "\uDE00",
  "\uFFFD",
  "\uD7FF",
  "\uE000",
  "\uFFFF",
  "😀",
  "\u{10FFFF}",
  "a",
  "b",
  "\u0000",
] as const;

export { type Trigger, triggerPromise } from "../../helpers/trigger";

/** Resolves on a later macrotask (after the storage's scheduled commit, which was queued first). */
export function macrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Outcome of a call: its value or the class and message of its error, for comparing with a model. */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: string };

/** Describes an error by class and message (what the tests compare). */
export function describeError(e: unknown): string {
  if (e instanceof Error) return `${e.constructor.name}: ${e.message}`;
  return `thrown ${String(e)}`;
}

/** Settles `p` into an {@link Outcome}. */
export async function outcome(p: Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: true, value: await p };
  } catch (e) {
    return { ok: false, error: describeError(e) };
  }
}
