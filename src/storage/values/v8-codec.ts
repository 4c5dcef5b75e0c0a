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
import { isProxy } from "./proxy";
import { describeObject } from "./structured-format";
import { V8_CODEC_TAG } from "./tags";
import { type HostReader, type HostWriter, readWebObject, withStandIns, writeWebObject } from "./v8-web-objects";

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
 * standard name because V8 itself records it. The web platform's objects are the exception: workerd
 * writes a `DOMException`, a `Headers` and a bodyless `Request` or `Response` as host objects of its
 * own format and refuses the others (`URL`, `Blob`…), while V8 would write Node's (plain JavaScript)
 * ones as `{}`; a value holding one is written through stand-ins (see v8-web-objects.ts), and such
 * host objects, also in bytes workerd wrote, read back as those objects.
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
  /** V8 hands a host object (one with internal fields, such as a Serializer) to `_writeHostObject`. */
  class WebSerializer extends v8.Serializer implements HostWriter {
    /** Stand-ins by web object, and back; made on the first web object of a value. */
    #standIns: Map<object, object> | undefined;
    #originals: Map<object, object> | undefined;
    standIn(webObject: object): object {
      this.#standIns ??= new Map();
      this.#originals ??= new Map();
      let made = this.#standIns.get(webObject);
      if (made === undefined) {
        made = new v8.Serializer();
        this.#standIns.set(webObject, made);
        this.#originals.set(made, webObject);
      }
      return made;
    }
    _writeHostObject(object: object): void {
      const original = this.#originals?.get(object);
      // Another host object (one of Node's own): refused as the base serializer refuses it.
      if (original === undefined) throw dataCloneError(`${describeObject(object, "Object")} could not be cloned.`);
      writeWebObject(this, original);
    }
  }
  class WebDeserializer extends v8.Deserializer implements HostReader {
    _readHostObject(): object {
      return readWebObject(this);
    }
  }
  return {
    name: "v8",
    encode(value: unknown): Uint8Array {
      // Buffer.isBuffer runs a proxy's getPrototypeOf trap (a revoked one throws a TypeError naming
      // it); V8 refuses any proxy without running its traps, as the platform does.
      if (
        !(((typeof value === "object" && value !== null) || typeof value === "function") && isProxy(value)) &&
        nodeBuffer?.isBuffer(value) &&
        (value as Uint8Array).byteLength !== (value as Uint8Array).buffer.byteLength
      ) {
        value = new Uint8Array(value as Uint8Array);
      }
      // Only an object can hold a web object: a primitive skips the subclass (and the walk).
      const serializer = typeof value === "object" && value !== null ? new WebSerializer() : new v8.Serializer();
      serializer.writeHeader();
      try {
        serializer.writeValue(serializer instanceof WebSerializer ? withStandIns(value, serializer) : value);
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
        return read(new v8.Deserializer(bytes));
      } catch {
        // The base deserializer fails on a host object (a web object); the subclass that reads them
        // costs more on every value, so it is only tried where the base one failed.
      }
      try {
        return read(new WebDeserializer(bytes));
      } catch (error) {
        // Out of stack is not corruption (see decodeStructuredRange), nor is a value of workerd's that
        // has no counterpart here (its own ERR_DESERIALIZATION says so).
        if (isStackOverflow(error) || error instanceof ActorStoreError) throw error;
        throw new ActorStoreError("ERR_DESERIALIZATION", `Stored value is corrupt (v8 codec): ${String(error)}.`, {
          cause: error,
        });
      }
    },
  };
}

function read(deserializer: NodeV8.Deserializer): unknown {
  deserializer.readHeader();
  return deserializer.readValue();
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
