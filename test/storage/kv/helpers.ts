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
