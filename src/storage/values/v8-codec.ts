/**
 * The "v8" codec: V8's own serialization format through `node:v8`, byte-compatible with the values
 * workerd stores (header `FF 0F`, version 15).
 *
 * `node:v8` is loaded with a dynamic `import()`, so a browser bundle never needs it: there,
 * {@link loadV8Codec} resolves to `undefined`.
 *
 * @packageDocumentation
 */

import type * as NodeV8 from "node:v8";
import { ActorStoreError, dataCloneError } from "../../errors";
import { isStackOverflow } from "../../util/stack-overflow";
import type { ValueCodec } from "./codec";
import { V8_CODEC_TAG } from "./tags";

/** Node's `Buffer`, when present (see the pool note in {@link createV8Codec}). */
const nodeBuffer = (globalThis as { Buffer?: { isBuffer(value: unknown): boolean } }).Buffer;

/** V8 phrases every refusal as `<what> could not be cloned.`; other errors (a throwing getter) pass through. */
const CLONE_ERROR = / could not be cloned\.$/;

/**
 * Builds the codec over an already-loaded `node:v8`.
 *
 * It uses the base `v8.Serializer`/`v8.Deserializer`, not `v8.serialize()`: Node's `DefaultSerializer`
 * writes typed arrays as Node-specific host objects (tag `0x5C`), which workerd cannot read, while the
 * base classes let V8 write them natively (`B` buffer + `V` view), as workerd does. Class instances
 * already come out as plain objects with own enumerable properties (V8 writes any ordinary object
 * that way, matching workerd's `treatClassInstancesAsPlainObjects`), and Error subclasses keep their
 * standard name because V8 itself records it; so no other fix-up is needed.
 *
 * A small Node `Buffer` is a window on a shared 8 KiB pool, and V8 writes a view's whole backing
 * buffer: a top-level Buffer is therefore copied first, so storing `Buffer.from("abc")` stores 3
 * bytes, not the pool. **Warning:** a Buffer nested inside another value still carries its pool; use
 * the structured codec, or `new Uint8Array(buffer)`, for those.
 *
 * @example
 * ```ts
 * const codec = createV8Codec(await import("node:v8"));
 * codec.encode(new Date(0)); // Uint8Array [0xff, 0x0f, 0x44, …]
 * ```
 */
export function createV8Codec(v8: typeof NodeV8): ValueCodec {
  return {
    name: "v8",
    encode(value: unknown): Uint8Array {
      if (nodeBuffer?.isBuffer(value) && (value as Uint8Array).byteLength !== (value as Uint8Array).buffer.byteLength) {
        value = new Uint8Array(value as Uint8Array);
      }
      const serializer = new v8.Serializer();
      serializer.writeHeader();
      try {
        serializer.writeValue(value);
      } catch (error) {
        // Node throws a plain Error with V8's text; the platform throws a DataCloneError with it.
        if (error instanceof Error && CLONE_ERROR.test(error.message)) throw dataCloneError(error.message);
        throw error;
      }
      const buffer = serializer.releaseBuffer();
      // A plain Uint8Array view of the same memory: callers should not see Node's Buffer type.
      return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    },
    decode(bytes: Uint8Array): unknown {
      if (bytes[0] !== V8_CODEC_TAG) {
        throw new ActorStoreError(
          "ERR_DESERIALIZATION",
          `Stored value was not written by the v8 codec (first byte ${bytes[0] ?? "missing"}); read it with decodeStoredValue().`,
        );
      }
      try {
        // V8 copies array buffers out of `bytes` while reading, so each call returns a fresh value.
        const deserializer = new v8.Deserializer(bytes);
        deserializer.readHeader();
        return deserializer.readValue();
      } catch (error) {
        // Out of stack is not corruption (see decodeStructuredRange).
        if (isStackOverflow(error)) throw error;
        throw new ActorStoreError("ERR_DESERIALIZATION", `Stored value is corrupt (v8 codec): ${String(error)}.`, {
          cause: error,
        });
      }
    },
  };
}

let loading: Promise<ValueCodec | undefined> | undefined;

/**
 * Loads the V8 codec, or resolves to `undefined` where `node:v8` cannot be imported (browsers).
 * The import happens once; later calls share it.
 *
 * @example
 * ```ts
 * const v8 = await loadV8Codec();
 * const bytes = (v8 ?? structuredCodec).encode(value);
 * ```
 */
export function loadV8Codec(): Promise<ValueCodec | undefined> {
  loading ??= import("node:v8").then(
    (v8) => (typeof v8.Serializer === "function" ? createV8Codec(v8) : undefined),
    () => undefined,
  );
  return loading;
}
