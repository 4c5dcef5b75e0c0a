/**
 * What crosses the boundary between a caller and an object, by the platform's rules: arguments and
 * results are structured-cloned (the callee never shares an object with the caller), and an error
 * thrown by the object is rethrown to the caller as a new error of the same built-in class with the
 * same message (its other properties stay behind).
 *
 * Differences from the platform, documented in docs/hosting.md: the platform passes functions and
 * `RpcTarget`s by reference (the callee gets a stub that calls back); here they fail with the
 * `DataCloneError` that `structuredClone` gives them. `Request`, `Response`, `Headers` and streams,
 * which the platform transfers, are passed as they are. An `ActorStoreError` keeps its code.
 */
import { ActorStoreError } from "../errors";

/** Types the platform transfers rather than clones; passed through unchanged. */
const TRANSFERRED: ReadonlyArray<abstract new (...args: never[]) => unknown> = [
  Request,
  Response,
  Headers,
  ReadableStream,
  WritableStream,
];

/** Built-in value types that `structuredClone` copies faithfully on its own. */
function isCloneableLeaf(value: object): boolean {
  return (
    value instanceof Date ||
    value instanceof RegExp ||
    value instanceof ArrayBuffer ||
    ArrayBuffer.isView(value) ||
    value instanceof Error ||
    value instanceof Boolean ||
    value instanceof Number ||
    value instanceof String ||
    (typeof BigInt !== "undefined" && Object.prototype.toString.call(value) === "[object BigInt]")
  );
}

function dataCloneError(message: string): DOMException {
  return new DOMException(message, "DataCloneError");
}

/**
 * Clones `value` as a call across the boundary would, or throws the platform's `DataCloneError`
 * (a `DOMException`): `"Symbol(x) could not be cloned."`, `"() => 1 could not be cloned."`, or
 * `Could not serialize object of type "K". This type does not support serialization.` for an
 * instance of a class of the user's own.
 */
export function cloneAcross<T>(value: T): T {
  return cloneValue(value, new Map()) as T;
}

function cloneValue(value: unknown, seen: Map<object, unknown>): unknown {
  if (typeof value === "symbol" || typeof value === "function") {
    // structuredClone gives the exact text the platform gives ("Symbol(x) could not be cloned.").
    structuredClone(value);
    throw dataCloneError(`${String(value)} could not be cloned.`);
  }
  if (typeof value !== "object" || value === null) return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  for (const type of TRANSFERRED) if (value instanceof type) return value;
  if (isCloneableLeaf(value)) {
    const copy = structuredClone(value);
    seen.set(value, copy);
    return copy;
  }
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array(value.length);
    seen.set(value, copy);
    for (let i = 0; i < value.length; i++) if (i in value) copy[i] = cloneValue(value[i], seen);
    return copy;
  }
  if (value instanceof Map) {
    const copy = new Map<unknown, unknown>();
    seen.set(value, copy);
    for (const [k, v] of value) copy.set(cloneValue(k, seen), cloneValue(v, seen));
    return copy;
  }
  if (value instanceof Set) {
    const copy = new Set<unknown>();
    seen.set(value, copy);
    for (const v of value) copy.add(cloneValue(v, seen));
    return copy;
  }
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto !== Object.prototype && proto !== null) {
    const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    throw dataCloneError(
      `Could not serialize object of type "${typeof name === "string" && name !== "" ? name : "Object"}". This type does not support serialization.`,
    );
  }
  const copy: Record<string, unknown> = {};
  seen.set(value, copy);
  for (const key of Object.keys(value)) copy[key] = cloneValue((value as Record<string, unknown>)[key], seen);
  return copy;
}

/** The built-in error classes an error keeps across the boundary (others arrive as `Error`). */
export const ERROR_CLASSES: Readonly<Record<string, new (message?: string) => Error>> = {
  Error,
  EvalError,
  RangeError,
  ReferenceError,
  SyntaxError,
  TypeError,
  URIError,
};

/**
 * The error the caller sees for `thrown`: a new error of the same built-in class with the same
 * message, or a `DOMException` with the same name and message. Anything that is not an error
 * (a thrown string, say) arrives as a clone of itself, as the platform delivers it. An
 * `ActorStoreError` arrives as an `ActorStoreError` with the same code and message.
 */
export function errorAcross(thrown: unknown): unknown {
  if (thrown instanceof ActorStoreError) return new ActorStoreError(thrown.code, thrown.message);
  if (thrown instanceof DOMException) return new DOMException(thrown.message, thrown.name);
  if (thrown instanceof Error) {
    const Class = ERROR_CLASSES[thrown.name] ?? Error;
    const copy = new Class(thrown.message);
    if (thrown.stack !== undefined) copy.stack = thrown.stack;
    return copy;
  }
  try {
    return cloneAcross(thrown);
  } catch {
    return new Error(String(thrown));
  }
}
