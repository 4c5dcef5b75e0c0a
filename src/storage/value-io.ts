/**
 * Values on their way in and out: serialize with the chosen codec and check the size limit on put;
 * read back whichever codec wrote the bytes, as a fresh copy on get.
 */
import { type StorageLimits, VALUE_SIZE_SLACK_BYTES } from "../limits";
import { checkKeySize } from "./keys";
import { decodeStoredRange, decodeStoredValue, type ValueCodec } from "./values/codec";

/**
 * Above this share of the limit, sizes are measured the platform's way (V8's serialized size). V8's
 * form can be several times the structured codec's: 2 bytes a character for a string with one
 * character past U+00FF (UTF-8 takes 1 for its ASCII), 3 bytes for `{}` (2), about 5 for an
 * element of a holey array (1), and ~12 times for a bodyless Response (the platform writes an
 * initializer object with its property names); 16 covers every form with room to spare.
 */
const MEASURE_ABOVE_SHARE = 1 / 16;

/** The codecs a storage writes and reads with. */
export interface Codecs {
  /** The codec new values are written with. */
  write: ValueCodec;
  /** The V8 codec when available (to read values written in V8's format). */
  v8: ValueCodec | undefined;
}

/**
 * Serializes a value for storage and enforces the value size limit (the platform's RangeError).
 * The size of `key` is checked between the two, where the platform checks it: a value that cannot
 * be serialized is reported before an over-long key, an over-long key before an oversized value.
 */
export function encodeValue(value: unknown, key: string, codecs: Codecs, limits: StorageLimits): Uint8Array {
  const bytes = codecs.write.encode(value);
  checkEncodedValue(value, bytes, key, codecs, limits);
  return bytes;
}

/**
 * The limits of one serialized entry, in the platform's order: the key's size, then the value's
 * (see {@link encodeValue}). `put(entries)` serializes every value first, then checks each entry.
 */
export function checkEncodedValue(
  value: unknown,
  bytes: Uint8Array,
  key: string,
  codecs: Codecs,
  limits: StorageLimits,
): void {
  checkKeySize(key, limits);
  const max = limits.maxValueBytes + VALUE_SIZE_SLACK_BYTES;
  if (bytes.byteLength <= max * MEASURE_ABOVE_SHARE) return;
  // Decide (and report) by the size the platform measures: V8's serialized size, which can be
  // smaller than our codec's (UTF-8 text past U+07FF) or several times larger (see above).
  const size =
    codecs.v8 !== undefined && codecs.v8 !== codecs.write ? codecs.v8.encode(value).byteLength : bytes.byteLength;
  if (size > max) {
    throw new RangeError(
      `Values cannot be larger than ${limits.maxValueBytes} bytes. A value of size ${size} was provided.`,
    );
  }
}

/** Reads stored bytes back into a fresh value. */
export function decodeValue(bytes: Uint8Array, codecs: Codecs): unknown {
  return decodeStoredValue(bytes, { v8: codecs.v8 });
}

/**
 * Reads the stored value at `bytes[start, end)` inside a larger buffer (the engine's memory) back
 * into a fresh value that shares no memory with `bytes`.
 */
export function decodeValueRange(bytes: Uint8Array, start: number, end: number, codecs: Codecs): unknown {
  return decodeStoredRange(bytes, start, end, { v8: codecs.v8 });
}

/** Whether a decoded value is immutable and so may be shared between reads. */
export function isPrimitive(value: unknown): boolean {
  return value === null || (typeof value !== "object" && typeof value !== "function");
}
