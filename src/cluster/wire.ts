/**
 * The forwarding protocol between hosts of a cluster: one HTTP request per stub operation.
 *
 *   POST /actorstore/v1/<namespace>/<id>/call/<method>   body: v8-serialized argument array
 *   POST /actorstore/v1/<namespace>/<id>/get/<property>
 *   <any method> /actorstore/v1/<namespace>/<id>/fetch   the object's request itself, with its URL and
 *                                                        method in x-actorstore-url / x-actorstore-method
 *
 * `x-actorstore-name` carries the id's name (so `ctx.id.name` is the same on every host). A call's
 * answer is a v8-serialized `{ ok: true, value }` or `{ ok: false, error }`; a fetch's answer is the
 * object's response, or status 500 with `x-actorstore-error: 1` and a serialized error. A host that
 * does not own the object (by its own view of the members) answers 421 with `x-actorstore-owner`.
 */
import { deserialize, serialize } from "node:v8";
import { ActorStoreError, type ActorStoreErrorCode } from "../errors";
import { type CrossingFlags, crossingFlagsOf, errorOfClass, markCrossing } from "../host/boundary";

/** The path prefix of forwarded operations. */
export const FORWARD_PREFIX = "/actorstore/v1/";

/** An error as it travels between hosts. */
export interface WireError {
  name: string;
  message: string;
  code?: string;
  /** Something thrown that was not an error, already cloned. */
  value?: unknown;
  thrownValue?: boolean;
  /** The platform's marks on the error (`remote`, `durableObjectReset`, `retryable`, `overloaded`). */
  flags?: CrossingFlags;
}

/** What a call or property read answers. */
export type WireResult = { ok: true; value: unknown } | { ok: false; error: WireError };

/** Serializes a value (already structured-cloned) for the wire. */
export function encode(value: unknown): Uint8Array {
  return serialize(value);
}

/** Reads a value the other host serialized. */
export function decode<T>(bytes: Uint8Array): T {
  return deserialize(bytes) as T;
}

/** An error (or anything thrown) as it travels. */
export function toWireError(thrown: unknown): WireError {
  if (thrown instanceof Error || thrown instanceof DOMException) {
    const flags = crossingFlagsOf(thrown);
    return {
      name: thrown.name,
      message: thrown.message,
      ...(thrown instanceof ActorStoreError ? { code: thrown.code } : {}),
      ...(flags === undefined ? {} : { flags }),
    };
  }
  try {
    serialize(thrown);
    return { name: "Error", message: String(thrown), thrownValue: true, value: thrown };
  } catch {
    return { name: "Error", message: String(thrown) };
  }
}

/** The error (or thrown value) a caller sees for a wire error. */
export function fromWireError(error: WireError): unknown {
  if (error.thrownValue) return error.value;
  const flags = typeof error.flags === "object" && error.flags !== null ? error.flags : {};
  if (error.code !== undefined)
    return markCrossing(new ActorStoreError(error.code as ActorStoreErrorCode, error.message), flags);
  if (error.name === "DataCloneError" || error.name === "AbortError")
    return markCrossing(new DOMException(error.message, error.name), flags);
  return markCrossing(errorOfClass(String(error.name), String(error.message)), flags);
}
