/**
 * Identifiers and timestamps for the HTTP models. Both come from injected generators so that every
 * model function stays pure and tests can be deterministic.
 */

/** Produces a fresh identifier each call. */
export type IdGenerator = () => string;

/** Milliseconds since the Unix epoch; injected so that nothing in `api/` reads the host clock. */
export type NowMs = () => number;

const HEX_ID_RE = /^[0-9a-f]{32}$/;

/**
 * Returns a random 32-character lower-case hex identifier (the shape the platform uses for filters,
 * rules and zones), drawn from `globalThis.crypto.getRandomValues`.
 *
 * @example
 * ```ts
 * randomHexId(); // "9f2c…" (32 hex characters)
 * ```
 */
export function randomHexId(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

/**
 * Returns an {@link IdGenerator} that yields `0000…0001`, `0000…0002`, … for reproducible tests and
 * examples.
 *
 * @example
 * ```ts
 * const next = sequentialHexIds();
 * next(); // "00000000000000000000000000000001"
 * ```
 */
export function sequentialHexIds(start = 1): IdGenerator {
  let n = start;
  return () => (n++).toString(16).padStart(32, "0");
}

/**
 * True when `value` is a 32-character lower-case hex identifier.
 *
 * @example
 * ```ts
 * isHexId("372e67954025e0ba6aaa6d586b9e0b59"); // true
 * isHexId("zone"); // false
 * ```
 */
export function isHexId(value: unknown): value is string {
  return typeof value === "string" && HEX_ID_RE.test(value);
}

// Six fractional digits and a literal Z, as in `2022-12-09T23:11:06.010263Z`.
const MICROS_TIMESTAMP_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})Z$/;

/**
 * True when `value` is an ISO 8601 UTC timestamp with exactly six fractional digits and `Z`, and
 * names a real calendar instant (so `2023-02-30…` is rejected).
 *
 * @example
 * ```ts
 * isMicrosecondTimestamp("2022-12-09T23:11:06.010263Z"); // true
 * isMicrosecondTimestamp("2022-12-09T23:11:06Z"); // false
 * ```
 */
export function isMicrosecondTimestamp(value: unknown): value is string {
  if (typeof value !== "string") return false;
  const m = MICROS_TIMESTAMP_RE.exec(value);
  if (m === null) return false;
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 59) return false;
  // Date.UTC normalises overflow (Feb 30 → Mar 2); comparing back catches impossible days.
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/**
 * Formats epoch milliseconds in the platform's timestamp shape. Millisecond clocks cannot know the
 * microseconds, so the last three fractional digits are zeros.
 *
 * @example
 * ```ts
 * formatMicrosecondTimestamp(0); // "1970-01-01T00:00:00.000000Z"
 * ```
 */
export function formatMicrosecondTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
