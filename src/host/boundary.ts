/**
 * What crosses the boundary between a caller and an object, by the platform's rules: arguments and
 * results are structured-cloned (the callee never shares an object with the caller), and an error
 * thrown by the object is rethrown to the caller as a new error of the same built-in class with the
 * same message (its other properties stay behind).
 *
 * Functions and `RpcTarget`s pass by reference where the caller gives a reference hook (see
 * rpc-references.ts); without one (a cluster's wire) they fail with the `DataCloneError` that
 * `structuredClone` gives them. `Request`, `Response`, `Headers` and streams, which the platform
 * transfers, are passed as they are. An `ActorStoreError` keeps its code.
 */
import { ActorStoreError, describeThrown } from "../errors";

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

/** Built-in types V8's serializer refuses with its own message. */
const UNCLONEABLE_BUILTINS: ReadonlyArray<abstract new (...args: never[]) => unknown> = [
  Promise,
  WeakMap,
  WeakSet,
  WeakRef,
  FinalizationRegistry,
];

function dataCloneError(message: string): DOMException {
  return new DOMException(message, "DataCloneError");
}

/** What a {@link ReferenceHook} returns for a value it does not pass by reference. */
export const NOT_A_REFERENCE: unique symbol = Symbol("not a reference");

/**
 * Gives what crosses in place of a value passed by reference (a function, a stub, any other object
 * that is not plain data), or {@link NOT_A_REFERENCE} to clone it as usual.
 */
export type ReferenceHook = (value: object) => unknown;

/** Objects that cross as the platform's type named here fails to (a host's stubs: "DurableObject"). */
const UNSERIALIZABLE = new WeakMap<object, string>();

/**
 * Marks `value` as one that cannot cross, with the type name the platform's `DataCloneError` gives
 * it (`Could not serialize object of type "DurableObject". …` for a stub of an object).
 */
export function markUnserializable(value: object, typeName: string): void {
  UNSERIALIZABLE.set(value, typeName);
}

/** How the platform describes values of its own types when they are thrown (a stub: "#<RpcStub>"). */
const DESCRIPTIONS = new WeakMap<object, string>();

/**
 * Marks `value` to be described as `text` when it is thrown across the boundary (the message of the
 * `Error` the caller gets), as V8 describes an object of the platform's class.
 */
export function markDescription(value: object, text: string): void {
  DESCRIPTIONS.set(value, text);
}

/**
 * Clones `value` as a call across the boundary would, or throws the platform's `DataCloneError`
 * (a `DOMException`): `"Symbol(x) could not be cloned."`, `"() => 1 could not be cloned."`, or
 * `Could not serialize object of type "K". This type does not support serialization.` for an
 * instance of a class of the user's own (`"Object"` for an object without a prototype). An array
 * crosses with its holes and its other own properties, at the cost of what it holds. With `references`, functions and the objects the hook
 * takes cross as what it gives for them instead.
 */
export function cloneAcross<T>(value: T, references?: ReferenceHook): T {
  return cloneValue(value, new Map(), references) as T;
}

/**
 * Clones an object's result (or a property it read) for its caller. A value that cannot be cloned
 * fails with the `DataCloneError` of {@link cloneAcross}, marked `remote: true`: on the platform the
 * object's side fails to send it.
 */
export function cloneResult<T>(value: T): T {
  try {
    return cloneAcross(value);
  } catch (e) {
    if (e instanceof DOMException) markCrossing(e, { remote: true });
    throw e;
  }
}

function cloneValue(value: unknown, seen: Map<object, unknown>, references: ReferenceHook | undefined): unknown {
  if (typeof value === "symbol") {
    // structuredClone gives the exact text the platform gives ("Symbol(x) could not be cloned.").
    structuredClone(value);
    throw dataCloneError(`${String(value)} could not be cloned.`);
  }
  if (typeof value !== "object" && typeof value !== "function") return value;
  if (value === null) return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  const unserializable = UNSERIALIZABLE.get(value);
  if (unserializable !== undefined) {
    throw dataCloneError(
      `Could not serialize object of type "${unserializable}". This type does not support serialization.`,
    );
  }
  if (references !== undefined) {
    const reference = references(value);
    if (reference !== NOT_A_REFERENCE) {
      seen.set(value, reference);
      return reference;
    }
  }
  if (typeof value === "function") {
    structuredClone(value);
    throw dataCloneError(`${String(value)} could not be cloned.`);
  }
  for (const type of TRANSFERRED) if (value instanceof type) return value;
  if (isCloneableLeaf(value)) {
    const copy = structuredClone(value);
    seen.set(value, copy);
    return copy;
  }
  if (Array.isArray(value)) {
    // As V8's serializer: the elements the array has (a sparse one of length 2 ** 32 - 1 costs its
    // elements, not its length) and its other own enumerable properties (`x` of `[1]` with `a.x = 2`,
    // a RegExp match's `index`/`input`/`groups`), in `Object.keys` order.
    const copy: unknown[] = new Array(value.length);
    seen.set(value, copy);
    const keys = Object.keys(value);
    const n = value.length;
    if (keys.length === n && (n === 0 || keys[n - 1] === String(n - 1))) {
      // Dense, no other property: the keys are exactly 0 … n - 1.
      for (let i = 0; i < n; i++) copy[i] = cloneValue(value[i], seen, references);
    } else {
      for (const key of keys)
        setOwn(copy, key, cloneValue((value as unknown as Record<string, unknown>)[key], seen, references));
    }
    return copy;
  }
  if (value instanceof Map) {
    const copy = new Map<unknown, unknown>();
    seen.set(value, copy);
    for (const [k, v] of value) copy.set(cloneValue(k, seen, references), cloneValue(v, seen, references));
    return copy;
  }
  if (value instanceof Set) {
    const copy = new Set<unknown>();
    seen.set(value, copy);
    for (const v of value) copy.add(cloneValue(v, seen, references));
    return copy;
  }
  if (UNCLONEABLE_BUILTINS.some((type) => value instanceof type)) {
    // V8's own refusal, as the platform gives it ("#<Promise> could not be cloned.").
    structuredClone(value);
  }
  const proto = Object.getPrototypeOf(value) as object | null;
  // An object without a prototype is refused too, as workerd's RPC serializer refuses it (as type "Object").
  if (proto !== Object.prototype) {
    const name = (proto as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    throw dataCloneError(
      `Could not serialize object of type "${typeof name === "string" && name !== "" ? name : "Object"}". This type does not support serialization.`,
    );
  }
  const copy: Record<string, unknown> = {};
  seen.set(value, copy);
  for (const key of Object.keys(value))
    setOwn(copy, key, cloneValue((value as Record<string, unknown>)[key], seen, references));
  return copy;
}

/**
 * Sets `key` as an own data property of `target`, as the structured clone creates it: an own
 * `"__proto__"` key stays an own property (an assignment would set the copy's prototype instead).
 */
function setOwn(target: object, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else (target as Record<string, unknown>)[key] = value;
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
 * How an error left the object, as the platform marks it on the caller's copy: `remote` (thrown by
 * the object's code) and/or `durableObjectReset` (the error reset the object: its constructor threw,
 * `ctx.abort()`, a failed `blockConcurrencyWhile`, a failed write).
 */
export interface CrossingFlags {
  readonly remote?: boolean;
  readonly durableObjectReset?: boolean;
  /** The object set `retryable` on the error (a truthy value). */
  readonly retryable?: boolean;
  /** The object set `overloaded` on the error (a truthy value; wins over `retryable`). */
  readonly overloaded?: boolean;
}

/**
 * The flags the platform puts on an error a caller gets from an object (see {@link CrossingFlags}):
 * `retryable` and `overloaded` are kept from the object's error when truthy (only `overloaded` when
 * both are), as `true`.
 */
export function crossingFlags(thrown: unknown, how: { remote: boolean; reset: boolean }): CrossingFlags {
  const flags: { -readonly [K in keyof CrossingFlags]: CrossingFlags[K] } = {};
  if (how.remote) flags.remote = true;
  if (how.reset) flags.durableObjectReset = true;
  if (thrown instanceof Error || thrown instanceof DOMException) {
    const marks = thrown as { retryable?: unknown; overloaded?: unknown };
    if (marks.overloaded) flags.overloaded = true;
    else if (marks.retryable) flags.retryable = true;
  }
  return flags;
}

/** The crossing flags, in the order they are set on an error. */
const CROSSING_FLAG_NAMES = ["remote", "retryable", "overloaded", "durableObjectReset"] as const;

/** Sets the crossing flags on the caller's copy of an error, as own enumerable properties. */
export function markCrossing<T extends Error | DOMException>(copy: T, flags: CrossingFlags): T {
  for (const key of CROSSING_FLAG_NAMES) {
    if (flags[key] === true)
      Object.defineProperty(copy, key, { value: true, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** The crossing flags an error carries (what {@link markCrossing} set), or `undefined` for none. */
export function crossingFlagsOf(error: Error | DOMException): CrossingFlags | undefined {
  const marks = error as { readonly [K in keyof CrossingFlags]?: unknown };
  const flags: { -readonly [K in keyof CrossingFlags]: CrossingFlags[K] } = {};
  for (const key of CROSSING_FLAG_NAMES) if (marks[key] === true) flags[key] = true;
  return Object.keys(flags).length === 0 ? undefined : flags;
}

/** Whether an error named `name` keeps its class across the boundary (a built-in error class). */
export function keepsClass(name: unknown): name is string {
  return typeof name === "string" && (Object.hasOwn(ERROR_CLASSES, name) || name === "AggregateError");
}

/**
 * A new error of the class named `name` (a built-in error class, else `Error`) with `message`. An
 * `AggregateError` keeps its class and message, not its errors, as on the platform.
 */
export function errorOfClass(name: string, message: string): Error {
  if (name === "AggregateError") return new AggregateError([], message);
  const Class = Object.hasOwn(ERROR_CLASSES, name) ? (ERROR_CLASSES[name] as new (m: string) => Error) : Error;
  return new Class(message);
}

/**
 * The message the platform gives an error it rebuilds as a plain `Error`: for an error of a class it
 * does not keep (a class of the user's own, say), `"Name: message"` as `String(error)` spells it; for
 * something thrown that is not an error, the value as V8 describes it (`"plain"`, `"42"`,
 * `"#<Object>"`, `"[object Array]"`).
 */
function plainMessage(thrown: unknown): string {
  if (thrown instanceof Error) {
    const name = typeof thrown.name === "string" ? thrown.name : String(thrown.name);
    const message = typeof thrown.message === "string" ? thrown.message : String(thrown.message);
    if (name === "") return message;
    if (message === "") return name;
    return `${name}: ${message}`;
  }
  const described =
    typeof thrown === "object" || typeof thrown === "function" ? DESCRIPTIONS.get(thrown as object) : undefined;
  return described ?? describeThrown(thrown);
}

/**
 * The error the caller sees for `thrown`, as the platform delivers it: a new error of the same
 * built-in class with the same message (an error of another class is an `Error` whose message is
 * `"Name: message"`), or a `DOMException` with the same name and message; anything thrown that is not
 * an error is an `Error` whose message describes it (`throw "x"` arrives as `Error: x`). Its stack is
 * the caller's; other properties stay behind, but for the platform's marks: `remote: true` when the
 * object's code threw it, `durableObjectReset: true` when it reset the object (`reset`), and a
 * truthy `retryable` or `overloaded` the object set, as `true`. An `ActorStoreError` arrives as an
 * `ActorStoreError` with the same code and message.
 */
export function errorAcross(thrown: unknown, how: { reset?: boolean; fetch?: boolean } = {}): Error | DOMException {
  const reset = how.reset === true;
  // As on the platform, an error that reset the object is not marked remote, except on fetch().
  const flags = crossingFlags(thrown, { remote: !reset || how.fetch === true, reset });
  let copy: Error | DOMException;
  if (thrown instanceof ActorStoreError) copy = new ActorStoreError(thrown.code, thrown.message);
  else if (thrown instanceof DOMException) copy = new DOMException(thrown.message, thrown.name);
  else if (thrown instanceof Error && keepsClass(thrown.name)) copy = errorOfClass(thrown.name, thrown.message);
  else copy = new Error(plainMessage(thrown));
  return markCrossing(copy, flags);
}
