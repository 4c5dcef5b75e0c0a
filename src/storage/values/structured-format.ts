/**
 * The structured codec's stored format: tags, binary-view kinds, error constructors, and the small
 * helpers the encoder and decoder share. The numbers here are part of the stored format: never
 * renumber them. See structured-codec.ts for the format's description.
 */
import { dataCloneError } from "../../errors";
import { platformBody } from "./web-objects";

/** One-byte tags of the format. Values are part of the stored format: never renumber. */
export const Tag = {
  UNDEFINED: 1,
  NULL: 2,
  TRUE: 3,
  FALSE: 4,
  INT: 5,
  DOUBLE: 6,
  STRING_UTF8: 7,
  STRING_UTF16: 8,
  BIGINT: 9,
  REF: 10,
  OBJECT: 11,
  /** length, then `length` elements (each may be HOLE), then extra named properties. */
  ARRAY_DENSE: 12,
  /** length, then every own enumerable property as key/value pairs (for mostly-empty arrays). */
  ARRAY_SPARSE: 13,
  HOLE: 14,
  MAP: 15,
  SET: 16,
  DATE: 17,
  REGEXP: 18,
  BOXED_TRUE: 19,
  BOXED_FALSE: 20,
  BOXED_NUMBER: 21,
  BOXED_STRING: 22,
  BOXED_BIGINT: 23,
  ARRAY_BUFFER: 24,
  VIEW: 25,
  ERROR: 26,
  /**
   * A resizable ArrayBuffer: its current bytes (as ARRAY_BUFFER), then varint maxByteLength. Views
   * over it refer to it as to any buffer. Older versions never wrote it (they stored such a buffer
   * as a fixed-length ARRAY_BUFFER).
   */
  RESIZABLE_ARRAY_BUFFER: 27,
  /**
   * A length-tracking view of a resizable buffer (made without a length: it follows the buffer's
   * size): as VIEW, without the byte length. Older versions never wrote it.
   */
  VIEW_TRACKING: 28,
  /**
   * A `DOMException`: its name and message (strings), then 1 and its stack (a string) or 0, as the
   * platform stores one (it reads back as a `DOMException`). Older versions never wrote it (they
   * stored one as a class instance, `{}`).
   */
  DOM_EXCEPTION: 29,
  /**
   * A `Headers`: varint count, then that many name and value strings, as its iteration gives them
   * (lower-case names in order, `set-cookie` one entry per value, other repeated names joined with
   * ", "), as the platform stores one (it reads back as a `Headers`). Older versions never wrote it
   * (they stored one as a class instance, `{}`).
   */
  HEADERS: 30,
  /**
   * A `Request` without a body: its URL, method, redirect and cache modes (strings), then its
   * headers as HEADERS writes them (without the tag), what the platform keeps of one. Older
   * versions never wrote it (they stored one as a class instance, `{}`).
   */
  REQUEST: 31,
  /**
   * A `Response` without a body: varint status, status text (a string), then its headers as
   * HEADERS writes them (without the tag), what the platform keeps of one. Older versions never
   * wrote it (they stored one as a class instance, `{}`).
   */
  RESPONSE: 32,
  /**
   * A `Headers` that cannot be changed (a `fetch()` response's, `Response.redirect()`'s), written as
   * HEADERS: the platform keeps a Headers's guard, so it reads back immutable. Older versions wrote
   * one as HEADERS (read back changeable).
   */
  HEADERS_IMMUTABLE: 33,
} as const;

/** View kinds, in the stored format. `undefined` constructors are absent in this runtime. */
export const VIEW_KINDS = [
  ["Int8Array", 1],
  ["Uint8Array", 2],
  ["Uint8ClampedArray", 3],
  ["Int16Array", 4],
  ["Uint16Array", 5],
  ["Int32Array", 6],
  ["Uint32Array", 7],
  ["Float32Array", 8],
  ["Float64Array", 9],
  ["BigInt64Array", 10],
  ["BigUint64Array", 11],
  ["DataView", 12],
  ["Float16Array", 13],
] as const;

export type ViewConstructor = new (buffer: ArrayBuffer, byteOffset: number, length: number) => ArrayBufferView;

export const VIEW_KIND_BY_NAME = new Map<string, number>(VIEW_KINDS);
export const VIEW_BY_KIND = new Map<number, { ctor: ViewConstructor; bytesPerElement: number }>();
for (const [name, kind] of VIEW_KINDS) {
  const ctor = (globalThis as Record<string, unknown>)[name];
  if (typeof ctor === "function") {
    const bytesPerElement = (ctor as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1;
    VIEW_BY_KIND.set(kind, { ctor: ctor as ViewConstructor, bytesPerElement });
  }
}

/**
 * `%TypedArray%.prototype[Symbol.toStringTag]` is a brand-checking getter: it returns the kind of a
 * real typed array and `undefined` for anything else (a DataView), whatever the prototype chain or
 * an own `Symbol.toStringTag` claims.
 */
export const typedArrayKindOf = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype) as object,
  Symbol.toStringTag,
)?.get as ((this: unknown) => string | undefined) | undefined;

/** The error constructors V8 (and so workerd) recreates by name; any other name becomes `Error`. */
export const ERROR_CONSTRUCTORS = new Map<string, ErrorConstructor>([
  ["Error", Error],
  ["EvalError", EvalError],
  ["RangeError", RangeError],
  ["ReferenceError", ReferenceError],
  ["SyntaxError", SyntaxError],
  ["TypeError", TypeError],
  ["URIError", URIError],
]);
export const ERROR_NAMES = [...ERROR_CONSTRUCTORS.keys()];

/**
 * Built-ins the platform refuses to clone. V8 throws `#<Name> could not be cloned.` for them; without
 * this list they would look like objects with no own properties and silently become `{}`.
 */
export const UNCLONEABLE_TAGS = new Set([
  "WeakMap",
  "WeakSet",
  "WeakRef",
  "FinalizationRegistry",
  "Promise",
  "SharedArrayBuffer",
  "Generator",
  "AsyncGenerator",
]);

/**
 * The web platform's classes whose instances workerd refuses to store (checked through Miniflare),
 * by the brand `Object.prototype.toString` shows, with the text of the platform's `DataCloneError`
 * where it is not the generic `Could not serialize object of type "URL". This type does not support
 * serialization.` (which names the instance's own class: a subclass `MyURL` is named). Without this
 * they would be stored as what a class instance becomes, a plain object of their own enumerable
 * properties: `{}`, the URL, the Blob's bytes, the key lost without a word. `Request` and `Response`
 * are refused only with a body: the platform stores one without (docs/values.md, `Headers` too;
 * the encoder writes those with their own tags).
 */
const PLATFORM_REFUSALS: ReadonlyMap<string, string | undefined> = new Map([
  ...[
    "Blob",
    "File",
    "URL",
    "URLSearchParams",
    "FormData",
    "AbortController",
    "TextEncoder",
    "TextDecoder",
    "TransformStream",
    "ReadableStreamDefaultReader",
    "ReadableStreamBYOBReader",
    "WritableStreamDefaultWriter",
    "CompressionStream",
    "DecompressionStream",
    "TextEncoderStream",
    "TextDecoderStream",
    "ByteLengthQueuingStrategy",
    "CountQueuingStrategy",
    "EventTarget",
    "Event",
    "CustomEvent",
    "MessageChannel",
    "MessagePort",
    "Crypto",
    "SubtleCrypto",
    "CryptoKey",
    "Performance",
  ].map((brand): [string, undefined] => [brand, undefined]),
  ["AbortSignal", "AbortSignal serialization is not enabled."],
  ["ReadableStream", "ReadableStream can only be serialized for RPC."],
  ["WritableStream", "WritableStream can only be serialized for RPC."],
  ["Request", "ReadableStream can only be serialized for RPC."],
  ["Response", "ReadableStream can only be serialized for RPC."],
]);

/**
 * The platform's `DataCloneError` for an instance of one of its web platform classes (see
 * {@link PLATFORM_REFUSALS}) whose brand is `brand`, or `undefined` when `value` is not one (an
 * object that only claims the brand with its own `Symbol.toStringTag` is not).
 */
export function platformObjectRefusal(value: object, brand: string): Error | undefined {
  // Some of Node's classes show no brand of their own ("[object Object]", as a class of the user's).
  if (brand === "Object") {
    for (const untagged of UNTAGGED_PLATFORM_CLASSES) {
      const refusal = refusalAs(value, untagged);
      if (refusal !== undefined) return refusal;
    }
    return undefined;
  }
  return PLATFORM_REFUSALS.has(brand) ? refusalAs(value, brand) : undefined;
}

/** Node's classes among {@link PLATFORM_REFUSALS} whose instances have the brand `Object`. */
const UNTAGGED_PLATFORM_CLASSES = ["TextEncoderStream", "TextDecoderStream", "MessageChannel"];

/** The refusal of `value` as an instance of the global class `className`, if it is one. */
function refusalAs(value: object, className: string): Error | undefined {
  const platformClass = (globalThis as Record<string, unknown>)[className];
  if (typeof platformClass !== "function" || !(value instanceof platformClass)) return undefined;
  if ((className === "Request" || className === "Response") && platformBody(value as Request, className) === null) {
    return undefined;
  }
  const own = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  const name = typeof own === "string" && own !== "" ? own : className;
  return dataCloneError(
    PLATFORM_REFUSALS.get(className) ??
      `Could not serialize object of type "${name}". This type does not support serialization.`,
  );
}

export const objectToString = Object.prototype.toString;
export const functionToString = Function.prototype.toString;
export const hasOwn = Object.prototype.hasOwnProperty;

export { isWellFormed } from "../../util/utf8";

export const utf8Encoder = new TextEncoder();

/** Below this many UTF-16 units a hand-written UTF-8 loop beats TextEncoder/TextDecoder calls. */
export const SHORT_STRING = 64;
/** The shared output buffer is kept between calls up to this size, and reallocated above it. */
export const KEEP_BUFFER_BYTES = 1 << 20;

/** Is `key` (a string from `Object.keys`) an array index? */
export function isIndexKey(key: string): boolean {
  const first = key.charCodeAt(0);
  if (first < 48 || first > 57) return false;
  if (first === 48) return key.length === 1;
  const n = Number(key);
  return Number.isInteger(n) && n < 4294967295 && String(n) === key;
}

/** Sets an own data property, also for `__proto__`, which plain assignment would treat as the prototype. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

export function uncloneable(what: string): Error {
  return dataCloneError(`${what} could not be cloned.`);
}

/**
 * Whether an ArrayBuffer was detached (transferred): V8 refuses to clone it, see
 * {@link detachedArrayBuffer}. A detached buffer has no bytes, and no view can be made over it.
 */
export function isDetached(buffer: ArrayBufferLike): boolean {
  if (buffer.byteLength !== 0) return false;
  try {
    new Uint8Array(buffer);
    return false;
  } catch {
    return true;
  }
}

const resizableGetter = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "resizable")?.get;
const maxByteLengthGetter = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "maxByteLength")?.get;

/**
 * The `maxByteLength` of a resizable ArrayBuffer, `undefined` for a fixed-length one (and in a
 * runtime without resizable buffers). Read through `ArrayBuffer.prototype`'s brand-checking
 * getters, so an own property or a subclass's getter cannot make a buffer look otherwise.
 */
export function resizableMaxByteLength(buffer: ArrayBufferLike): number | undefined {
  if (resizableGetter === undefined || maxByteLengthGetter === undefined) return undefined;
  if (!(resizableGetter.call(buffer) as boolean)) return undefined;
  return maxByteLengthGetter.call(buffer) as number;
}

const typedArrayAt = (Object.getPrototypeOf(Uint8Array.prototype) as { at?: (i: number) => unknown }).at;

/**
 * Whether a view over a resizable buffer that shrank lies (partly) past its end. Its `byteOffset`
 * and `byteLength` then read 0 (a typed array) or throw (a DataView); V8 refuses to clone it, see
 * {@link outOfBoundsView}. Only a view over a resizable buffer can be out of bounds.
 */
export function isOutOfBounds(view: ArrayBufferView, isDataView: boolean): boolean {
  try {
    if (isDataView) void view.byteOffset;
    // %TypedArray%.prototype.at validates the array first: it throws for one out of bounds.
    else if (view.byteLength === 0 && typedArrayAt !== undefined) typedArrayAt.call(view, 0);
    return false;
  } catch {
    return true;
  }
}

const byteLengthGetter = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength")?.get;
const resizeMethod = (ArrayBuffer.prototype as { resize?: (byteLength: number) => void }).resize;

/** `ArrayBuffer.prototype`'s own `resize`, whatever the buffer's own properties say. */
function resize(buffer: ArrayBufferLike, byteLength: number): void {
  resizeMethod?.call(buffer, byteLength);
}

/**
 * Whether a view of a resizable buffer (in bounds) is length-tracking, made without a length so
 * that it follows the buffer's size, as V8 stores it (the platform reads it back tracking). JS
 * cannot ask a view; the buffer is resized by one element and back, which changes the length of a
 * tracking view only, and leaves the buffer's size and bytes as they were. Grown where there is room
 * (the new bytes are dropped again); otherwise shrunk, with the bytes it drops put back after, where
 * a fixed view that reaches into them goes out of bounds and a tracking one does not. A view that
 * ends an element or more before the buffer's end is fixed, and is told without a resize. Left as
 * fixed: an empty tracking view at the very end of a buffer at its maximum size (no resize tells it).
 */
export function isLengthTracking(view: ArrayBufferView, isDataView: boolean, bytesPerElement: number): boolean {
  const buffer = view.buffer;
  const length = byteLengthGetter?.call(buffer) as number;
  const max = resizableMaxByteLength(buffer);
  if (max === undefined || resizeMethod === undefined) return false;
  if (length - (view.byteOffset + view.byteLength) >= bytesPerElement) return false;
  if (length + bytesPerElement <= max) {
    const before = view.byteLength;
    resize(buffer, length + bytesPerElement);
    const grew = view.byteLength !== before;
    resize(buffer, length);
    return grew;
  }
  if (length < bytesPerElement || view.byteOffset > length - bytesPerElement) return false;
  const dropped = new Uint8Array(buffer, length - bytesPerElement, bytesPerElement).slice();
  resize(buffer, length - bytesPerElement);
  const tracking = !isOutOfBounds(view, isDataView);
  resize(buffer, length);
  new Uint8Array(buffer, length - bytesPerElement, bytesPerElement).set(dropped);
  return tracking;
}

/**
 * V8's refusal of a view that is out of bounds ({@link isOutOfBounds}), as workerd words it: a
 * DataView is named, a typed array is `[object Object]`.
 */
export function outOfBoundsView(view: ArrayBufferView, isDataView: boolean): Error {
  return uncloneable(isDataView ? describeObject(view, "DataView") : "[object Object]");
}

/** V8's refusal of a detached ArrayBuffer, or of a view over one. */
export function detachedArrayBuffer(): Error {
  return dataCloneError("An ArrayBuffer is detached and could not be cloned.");
}

/** The constructor name V8 prints in `#<Name> could not be cloned.` */
export function describeObject(value: object, fallback: string): string {
  const ctor = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor;
  return `#<${typeof ctor?.name === "string" && ctor.name !== "" ? ctor.name : fallback}>`;
}

/** Node's `Buffer`, when present: its pooled slices must not drag the 8 KiB pool into storage. */
export const nodeBuffer = (globalThis as { Buffer?: { isBuffer(value: unknown): boolean } }).Buffer;
