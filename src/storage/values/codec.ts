/**
 * How values are stored: the {@link ValueCodec} interface, the two codecs behind it, reading a stored
 * value whichever codec wrote it, and the default codec. See docs/values.md.
 *
 * @packageDocumentation
 */

import { ActorStoreError } from "../../errors";
import { decodeStructuredRange, structuredCodec } from "./structured-codec";
import { STRUCTURED_CODEC_TAG, V8_CODEC_TAG } from "./tags";

export { structuredCodec } from "./structured-codec";
export { STRUCTURED_CODEC_TAG, V8_CODEC_TAG } from "./tags";
export { createV8Codec, loadV8Codec } from "./v8-codec";

/**
 * Turns values into bytes and back with structured clone semantics (what workerd's storage accepts).
 *
 * @example
 * ```ts
 * const codec = await defaultCodec();
 * const bytes = codec.encode({ when: new Date(), tags: new Set(["a"]) });
 * const copy = decodeStoredValue(bytes, { v8: await loadV8Codec() });
 * ```
 */
export interface ValueCodec {
  /** Which format this codec writes; also the first byte of its output ({@link V8_CODEC_TAG}, {@link STRUCTURED_CODEC_TAG}). */
  readonly name: "structured" | "v8";
  /**
   * Serializes `value`. Throws the platform's `DataCloneError` (`"() => 1 could not be cloned."`) on a
   * function, a symbol or another uncloneable value anywhere inside it; keeps no state between calls.
   */
  encode(value: unknown): Uint8Array;
  /** Deserializes bytes this codec wrote, into a fresh copy on every call. */
  decode(bytes: Uint8Array): unknown;
}

/**
 * Reads a stored value written by either codec, dispatching on its first byte.
 *
 * @param codecs - the V8 codec, if loaded (from {@link loadV8Codec}); needed only for values that
 *   start with {@link V8_CODEC_TAG}.
 * @throws ActorStoreError `ERR_DESERIALIZATION` if the value is corrupt, has an unknown first byte,
 *   or was written by the V8 codec and `codecs.v8` is missing.
 * @example
 * ```ts
 * const value = decodeStoredValue(row.value, { v8: await loadV8Codec() });
 * ```
 */
export function decodeStoredValue(bytes: Uint8Array, codecs: { v8?: ValueCodec | undefined }): unknown {
  return decodeStoredRange(bytes, 0, bytes.byteLength, codecs);
}

/**
 * As {@link decodeStoredValue}, for the value at `bytes[start, end)` inside a larger buffer: nothing
 * outside the range is read, and the value shares no memory with `bytes`.
 *
 * @internal
 */
export function decodeStoredRange(
  bytes: Uint8Array,
  start: number,
  end: number,
  codecs: { v8?: ValueCodec | undefined },
): unknown {
  const first = start < end ? bytes[start] : undefined;
  if (first === STRUCTURED_CODEC_TAG) return decodeStructuredRange(bytes, start, end);
  if (first === V8_CODEC_TAG) {
    if (codecs.v8 === undefined) {
      throw new ActorStoreError(
        "ERR_DESERIALIZATION",
        "This value was stored in V8's format (by workerd or by actorstore's v8 codec) and node:v8 is not available here: read it under Node.js, where actorstore loads node:v8 itself, or rewrite it there with the structured codec (codec: \"structured\").",
      );
    }
    return codecs.v8.decode(start === 0 && end === bytes.byteLength ? bytes : bytes.subarray(start, end));
  }
  throw new ActorStoreError(
    "ERR_DESERIALIZATION",
    first === undefined
      ? "Stored value is empty: it was not written by actorstore; delete or rewrite the key."
      : `Stored value starts with unknown byte 0x${first.toString(16).padStart(2, "0")}: it was not written by actorstore (or by a newer version); delete or rewrite the key.`,
  );
}

let chosen: Promise<ValueCodec> | undefined;

/**
 * The codec new values are written with: the portable {@link structuredCodec}, chosen by measurement.
 *
 * `npx tsx bench/codec.ts` (Node 20.20, 2 vCPUs shared with other jobs, median of 9 interleaved
 * rounds; encode + decode round trips per second, structured / v8, range over several runs):
 *
 * | value              | structured / v8 | bytes (structured, v8) |
 * | ------------------ | --------------- | ---------------------- |
 * | small object       | 1.5×–3.1×       | 42, 44                 |
 * | 40-char string     | 0.5×–2.8×, mostly ≥ 1.3× | 42, 43                 |
 * | 1 KB object        | 0.7×–1.0×       | 619, 674               |
 * | 100 KB Uint8Array  | 0.9×–1.6×       | 100,011, 100,013       |
 *
 * The structured codec wins clearly where most stored values are (small ones), because crossing
 * into `node:v8` and allocating its Buffer costs more than encoding a small value in JS; it is at
 * most ~30% slower on mid-sized objects, even on raw bytes, slightly smaller everywhere, and gives
 * identical bytes in browsers. The v8 codec stays available ({@link loadV8Codec}) for bytes that
 * workerd itself can read; values written by either codec are always readable
 * ({@link decodeStoredValue}). Details in docs/values.md.
 *
 * @example
 * ```ts
 * const codec = await defaultCodec(); // structuredCodec
 * const bytes = codec.encode(value);
 * ```
 */
export function defaultCodec(): Promise<ValueCodec> {
  // A promise (not the codec) so the choice can depend on an async load again if measurements change.
  chosen ??= Promise.resolve(structuredCodec);
  return chosen;
}
