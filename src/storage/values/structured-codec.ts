/**
 * The portable "structured" codec: the structured clone algorithm written to a compact binary
 * format, with no `node:` imports, so it runs in browsers as well as Node.
 *
 * ## Why not structured-clone-es's `serialize` plus a binary wrapper
 *
 * The package (v2.0.1, a dependency) was the starting point: its model, one walk over the graph
 * that gives every object an index on first sight and writes a back-reference on every later
 * sight, is the model used here. Its `serialize` output cannot be stored as is, though; it loses:
 * - `-0`: primitives are deduplicated through a `Map`, which treats `-0` and `0` as one key;
 * - holes in sparse arrays (it iterates with `for…of`, turning holes into `undefined`);
 * - compactness and shape of binary data: typed arrays become arrays of numbers (a 100 KB
 *   `Uint8Array` becomes ~400 KB of JSON), views lose `byteOffset` and the buffer they share, a
 *   `DataView` keeps its whole buffer but not its window, and `ArrayBuffer`s lose identity
 *   (its deserializer records them under the wrong key);
 * - Error subclasses (`Object.prototype.toString` says `Error` for all of them), `stack`, `cause`;
 * - invalid dates (`toISOString()` throws), and boxed Symbols silently become `{}`.
 * Fixing those around it needs a pre-pass and a post-pass over the whole graph, each as costly as
 * the walk itself, followed by a third pass to turn its records into bytes. One walk that writes
 * bytes directly is simpler and faster, so this module implements the walk itself and does not import
 * structured-clone-es at run time.
 *
 * ## Format (after the {@link STRUCTURED_CODEC_TAG} byte): one value, written as
 * - a one-byte tag ({@link Tag}) followed by the tag's payload;
 * - lengths and counts as unsigned LEB128 varints; integers in int32 range as zigzag varints,
 *   every other number (including `-0`, `NaN`, `±Infinity`) as a little-endian float64;
 * - strings as UTF-8, or as UTF-16 code units when they hold a lone surrogate (UTF-8 cannot);
 * - every object gets the next id (0, 1, 2…) the first time it is written; later occurrences are
 *   `REF id`, which preserves shared references and cycles;
 * - binary data as raw bytes: a view writes its `ArrayBuffer` (or a reference to it) and then its
 *   kind, `byteOffset` and length, as V8 does, so views sharing a buffer still share it. A resizable
 *   buffer also writes its `maxByteLength` (RESIZABLE_ARRAY_BUFFER), a length-tracking view of one
 *   no length (VIEW_TRACKING); a view past the end of a shrunk buffer is refused, as V8 refuses it.
 * - a `DOMException` as its name, message and stack (DOM_EXCEPTION), as the platform stores one.
 * - a `Headers` as its entries (HEADERS, or HEADERS_IMMUTABLE for one that cannot be changed), a bodyless `Request` as its URL, method, redirect and
 *   cache modes and headers (REQUEST), a bodyless `Response` as its status, status text and
 *   headers (RESPONSE): what the platform keeps of them (see web-objects.ts).
 *
 * What round-trips, and what becomes what, follows workerd (V8's serializer), so both codecs give
 * the same results: see docs/values.md.
 *
 * @packageDocumentation
 */
import { ActorStoreError } from "../../errors";
import { isStackOverflow } from "../../util/stack-overflow";
import type { ValueCodec } from "./codec";
import { Decoder, plainString } from "./structured-decoder";
import { Encoder } from "./structured-encoder";
import { STRUCTURED_CODEC_TAG } from "./tags";

/** Reused between calls: allocating and growing a fresh buffer per value costs more than encoding it. */
const sharedEncoder = new Encoder(4096);

/**
 * The portable codec: structured clone semantics in a compact binary format of actorstore's own
 * (first byte {@link STRUCTURED_CODEC_TAG}), with no dependency on `node:v8`.
 *
 * @example
 * ```ts
 * const bytes = structuredCodec.encode(new Map([[1, new Uint8Array([1, 2])]]));
 * structuredCodec.decode(bytes); // Map(1) { 1 => Uint8Array(2) [1, 2] }
 * ```
 */
export const structuredCodec: ValueCodec = {
  name: "structured",
  encode(value: unknown): Uint8Array {
    if (sharedEncoder.busy) return new Encoder(256).encode(value);
    sharedEncoder.busy = true;
    try {
      return sharedEncoder.encode(value);
    } finally {
      sharedEncoder.busy = false;
    }
  },
  decode(bytes: Uint8Array): unknown {
    if (bytes[0] !== STRUCTURED_CODEC_TAG) {
      throw new ActorStoreError(
        "ERR_DESERIALIZATION",
        `Stored value was not written by the structured codec (first byte ${bytes[0] ?? "missing"}); read it with decodeStoredValue().`,
      );
    }
    return decodeStructuredRange(bytes, 0, bytes.byteLength);
  },
};

/**
 * Decodes the structured value at `bytes[start, end)` (whose first byte is
 * {@link STRUCTURED_CODEC_TAG}) without reading outside that range, into fresh objects that share
 * no memory with `bytes`.
 */
export function decodeStructuredRange(bytes: Uint8Array, start: number, end: number): unknown {
  const text = plainString(bytes, start, end);
  if (text !== undefined) return text;
  try {
    return new Decoder(bytes, start, end).decode();
  } catch (error) {
    // Running out of stack (a deeply nested value read from deep in the caller's stack) says nothing
    // about the bytes: reporting it as corruption would invite deleting a value that is fine.
    if (error instanceof ActorStoreError || isStackOverflow(error)) throw error;
    throw new ActorStoreError("ERR_DESERIALIZATION", `Stored value is corrupt (structured codec): ${String(error)}.`, {
      cause: error,
    });
  }
}
