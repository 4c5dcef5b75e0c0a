/**
 * Errors raised by actorstore.
 *
 * Where the platform (workerd) has an error class and message for a condition, actorstore throws
 * exactly that (`TypeError`, `RangeError`, `Error`, `DOMException`) with the platform's text, so code
 * written against the platform keeps working. Everything else is an {@link ActorStoreError} with a
 * stable {@link ActorStoreErrorCode} and a message that says what to do.
 *
 * @packageDocumentation
 */

/** Every code an {@link ActorStoreError} can carry. See docs/errors.md for when each happens. */
export const ACTOR_STORE_ERROR_CODES = [
  /** A feature that the chosen backend does not offer (for example `sql` on `backend: "kv"`). */
  "ERR_BACKEND_UNSUPPORTED",
  /** The storage was closed (or the object reset) and can no longer be used. */
  "ERR_CLOSED",
  /** A write could not be made durable; the object was reset to its last committed state. */
  "ERR_WRITE_FAILED",
  /** The persisted data is damaged beyond what recovery can repair. */
  "ERR_CORRUPT",
  /** A bookmark is malformed, unknown, or outside the retention window. */
  "ERR_BOOKMARK",
  /** An option passed to actorstore itself (not a platform API) is invalid. */
  "ERR_INVALID_OPTION",
  /** A stored value could not be decoded. */
  "ERR_DESERIALIZATION",
  /** A storage directory cannot be used: a file is in the way, or it is not writable. */
  "ERR_DIRECTORY",
  /** Part of the platform API that this version does not implement yet. */
  "ERR_NOT_IMPLEMENTED",
  /** Another process, or another storage of this process, has the directory open (one writer per directory). */
  "ERR_LOCKED",
  /** No host of a cluster can serve the object now (none live, or their views disagree). */
  "ERR_UNAVAILABLE",
  /** Another holder claimed the object's persisted data with a newer epoch; this one must stop. */
  "ERR_FENCED",
] as const;

/** A code carried by {@link ActorStoreError}. */
export type ActorStoreErrorCode = (typeof ACTOR_STORE_ERROR_CODES)[number];

/**
 * The one error type for conditions the platform has no error for.
 *
 * @example
 * ```ts
 * try { storage.sql.exec("SELECT 1"); }
 * catch (e) { if (e instanceof ActorStoreError && e.code === "ERR_BACKEND_UNSUPPORTED") … }
 * ```
 */
export class ActorStoreError extends Error {
  /** A stable, machine-readable code. */
  readonly code: ActorStoreErrorCode;

  constructor(code: ActorStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    Object.setPrototypeOf(this, new.target.prototype);
    this.code = code;
    this.name = "ActorStoreError";
  }
}

/**
 * Builds the platform's `DataCloneError` (a `DOMException` where the runtime has one).
 * @internal
 */
export function dataCloneError(message: string): Error {
  if (typeof DOMException === "function") return new DOMException(message, "DataCloneError");
  const error = new Error(message);
  error.name = "DataCloneError";
  return error;
}

/** Turns any thrown value into an `Error` without losing it. @internal */
export function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/**
 * Something thrown that is not an error, described as V8 (and so the platform) describes it in
 * the `Error` it makes of it: `"plain"`, `"42"`, `"#<Object>"`, `"[object Array]"`. @internal
 */
export function describeThrown(thrown: unknown): string {
  if (typeof thrown === "symbol") return thrown.toString();
  if (typeof thrown === "function") return Function.prototype.toString.call(thrown);
  if (typeof thrown !== "object" || thrown === null) return String(thrown);
  const proto = Object.getPrototypeOf(thrown) as object | null;
  if (proto === null || Array.isArray(thrown) || thrown instanceof Date) return Object.prototype.toString.call(thrown);
  const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
  return `#<${typeof name === "string" && name !== "" ? name : "Object"}>`;
}
