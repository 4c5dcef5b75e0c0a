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
 *   kind, `byteOffset` and length, as V8 does, so views sharing a buffer still share it.
 *
 * What round-trips, and what becomes what, follows workerd (V8's serializer), so both codecs give
 * the same results: see docs/values.md.
 *
 * @packageDocumentation
 */

import { ActorStoreError, dataCloneError } from "../../errors";
import type { ValueCodec } from "./codec";
import { STRUCTURED_CODEC_TAG } from "./tags";

/** One-byte tags of the format. Values are part of the stored format: never renumber. */
const Tag = {
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
} as const;

/** View kinds, in the stored format. `undefined` constructors are absent in this runtime. */
const VIEW_KINDS = [
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

type ViewConstructor = new (buffer: ArrayBuffer, byteOffset: number, length: number) => ArrayBufferView;

const VIEW_KIND_BY_NAME = new Map<string, number>(VIEW_KINDS);
const VIEW_BY_KIND = new Map<number, { ctor: ViewConstructor; bytesPerElement: number }>();
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
const typedArrayKindOf = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype) as object,
  Symbol.toStringTag,
)?.get as ((this: unknown) => string | undefined) | undefined;

/** The error constructors V8 (and so workerd) recreates by name; any other name becomes `Error`. */
const ERROR_CONSTRUCTORS = new Map<string, ErrorConstructor>([
  ["Error", Error],
  ["EvalError", EvalError],
  ["RangeError", RangeError],
  ["ReferenceError", ReferenceError],
  ["SyntaxError", SyntaxError],
  ["TypeError", TypeError],
  ["URIError", URIError],
]);
const ERROR_NAMES = [...ERROR_CONSTRUCTORS.keys()];

/**
 * Built-ins the platform refuses to clone. V8 throws `#<Name> could not be cloned.` for them; without
 * this list they would look like objects with no own properties and silently become `{}`.
 */
const UNCLONEABLE_TAGS = new Set([
  "WeakMap",
  "WeakSet",
  "WeakRef",
  "FinalizationRegistry",
  "Promise",
  "SharedArrayBuffer",
  "Generator",
  "AsyncGenerator",
]);

const objectToString = Object.prototype.toString;
const functionToString = Function.prototype.toString;
const hasOwn = Object.prototype.hasOwnProperty;

/** `String.prototype.isWellFormed` is ES2024; the regex is the fallback for older runtimes. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const isWellFormed: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === "function"
    ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** Below this many UTF-16 units a hand-written UTF-8 loop beats TextEncoder/TextDecoder calls. */
const SHORT_STRING = 64;
/** The shared output buffer is kept between calls up to this size, and reallocated above it. */
const KEEP_BUFFER_BYTES = 1 << 20;

/** Is `key` (a string from `Object.keys`) an array index? */
function isIndexKey(key: string): boolean {
  const first = key.charCodeAt(0);
  if (first < 48 || first > 57) return false;
  if (first === 48) return key.length === 1;
  const n = Number(key);
  return Number.isInteger(n) && n < 4294967295 && String(n) === key;
}

/** Sets an own data property, also for `__proto__`, which plain assignment would treat as the prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

function uncloneable(what: string): Error {
  return dataCloneError(`${what} could not be cloned.`);
}

/** The constructor name V8 prints in `#<Name> could not be cloned.` */
function describeObject(value: object, fallback: string): string {
  const ctor = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor;
  return `#<${typeof ctor?.name === "string" && ctor.name !== "" ? ctor.name : fallback}>`;
}

/** Node's `Buffer`, when present: its pooled slices must not drag the 8 KiB pool into storage. */
const nodeBuffer = (globalThis as { Buffer?: { isBuffer(value: unknown): boolean } }).Buffer;

class Encoder {
  #bytes: Uint8Array;
  #view: DataView;
  #pos = 0;
  #ids = new Map<object, number>();
  /** True while an encode runs, so a re-entrant encode (from a getter) gets its own encoder. */
  busy = false;

  constructor(initialBytes: number) {
    this.#bytes = new Uint8Array(initialBytes);
    this.#view = new DataView(this.#bytes.buffer);
  }

  encode(value: unknown): Uint8Array {
    this.#pos = 0;
    this.#ids.clear();
    try {
      this.#ensure(1);
      this.#bytes[this.#pos++] = STRUCTURED_CODEC_TAG;
      this.#write(value);
      return this.#bytes.slice(0, this.#pos);
    } finally {
      // Drop references to the caller's objects, and a buffer grown for one huge value.
      this.#ids.clear();
      if (this.#bytes.byteLength > KEEP_BUFFER_BYTES) {
        this.#bytes = new Uint8Array(256);
        this.#view = new DataView(this.#bytes.buffer);
      }
    }
  }

  #ensure(extra: number): void {
    const needed = this.#pos + extra;
    if (needed <= this.#bytes.byteLength) return;
    let size = this.#bytes.byteLength * 2;
    while (size < needed) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#bytes.subarray(0, this.#pos));
    this.#bytes = next;
    this.#view = new DataView(next.buffer);
  }

  #tag(tag: number): void {
    this.#ensure(1);
    this.#bytes[this.#pos++] = tag;
  }

  #varint(n: number): void {
    this.#ensure(8);
    const bytes = this.#bytes;
    while (n >= 0x80) {
      bytes[this.#pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    bytes[this.#pos++] = n;
  }

  #double(n: number): void {
    this.#ensure(8);
    this.#view.setFloat64(this.#pos, n, true);
    this.#pos += 8;
  }

  #rawBytes(source: Uint8Array): void {
    this.#varint(source.byteLength);
    this.#ensure(source.byteLength);
    this.#bytes.set(source, this.#pos);
    this.#pos += source.byteLength;
  }

  #string(s: string): void {
    const length = s.length;
    if (length < SHORT_STRING) {
      if (this.#shortUtf8(s)) return;
    } else if (isWellFormed(s)) {
      // Reserve the varint width of the worst case (3 bytes per unit) and pad the actual length to
      // that width (LEB128 allows `0x80` continuation padding), so the bytes never have to move.
      const max = length * 3;
      const width = max < 0x80 ? 1 : max < 0x4000 ? 2 : max < 0x200000 ? 3 : max < 0x10000000 ? 4 : 5;
      this.#ensure(1 + width + max);
      this.#bytes[this.#pos++] = Tag.STRING_UTF8;
      const start = this.#pos;
      const { written } = utf8Encoder.encodeInto(s, this.#bytes.subarray(start + width));
      let n = written;
      for (let i = 0; i < width - 1; i++) {
        this.#bytes[start + i] = (n & 0x7f) | 0x80;
        n >>>= 7;
      }
      this.#bytes[start + width - 1] = n;
      this.#pos = start + width + written;
      return;
    }
    // A lone surrogate has no UTF-8 form: keep the UTF-16 code units.
    this.#tag(Tag.STRING_UTF16);
    this.#varint(length);
    this.#ensure(length * 2);
    const bytes = this.#bytes;
    let pos = this.#pos;
    for (let i = 0; i < length; i++) {
      const unit = s.charCodeAt(i);
      bytes[pos++] = unit & 0xff;
      bytes[pos++] = unit >>> 8;
    }
    this.#pos = pos;
  }

  /** UTF-8 by hand for short strings; false (nothing written) on a lone surrogate. */
  #shortUtf8(s: string): boolean {
    const length = s.length;
    // length < 64, so at most 189 bytes: a two-byte length is always enough, padded when small.
    this.#ensure(3 + length * 3);
    const bytes = this.#bytes;
    const start = this.#pos + 1;
    const wide = length * 3 >= 0x80;
    let pos = start + (wide ? 2 : 1);
    for (let i = 0; i < length; i++) {
      let c = s.charCodeAt(i);
      if (c < 0x80) {
        bytes[pos++] = c;
      } else if (c < 0x800) {
        bytes[pos++] = 0xc0 | (c >>> 6);
        bytes[pos++] = 0x80 | (c & 0x3f);
      } else if (c >= 0xd800 && c <= 0xdfff) {
        const next = s.charCodeAt(i + 1);
        if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return false;
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
        bytes[pos++] = 0xf0 | (c >>> 18);
        bytes[pos++] = 0x80 | ((c >>> 12) & 0x3f);
        bytes[pos++] = 0x80 | ((c >>> 6) & 0x3f);
        bytes[pos++] = 0x80 | (c & 0x3f);
      } else {
        bytes[pos++] = 0xe0 | (c >>> 12);
        bytes[pos++] = 0x80 | ((c >>> 6) & 0x3f);
        bytes[pos++] = 0x80 | (c & 0x3f);
      }
    }
    const written = pos - start - (wide ? 2 : 1);
    bytes[start - 1] = Tag.STRING_UTF8;
    if (wide) {
      bytes[start] = (written & 0x7f) | 0x80;
      bytes[start + 1] = written >>> 7;
    } else {
      bytes[start] = written;
    }
    this.#pos = pos;
    return true;
  }

  #number(n: number): void {
    if (Number.isInteger(n) && n >= -0x80000000 && n <= 0x7fffffff && !Object.is(n, -0)) {
      this.#tag(Tag.INT);
      this.#varint(n >= 0 ? n * 2 : -n * 2 - 1);
    } else {
      this.#tag(Tag.DOUBLE);
      this.#double(n);
    }
  }

  /** Magnitude as little-endian 32-bit words, after a sign byte: compact and exact at any size. */
  #bigint(n: bigint): void {
    const negative = n < 0n;
    let magnitude = negative ? -n : n;
    const words: number[] = [];
    while (magnitude > 0n) {
      words.push(Number(magnitude & 0xffffffffn));
      magnitude >>= 32n;
    }
    this.#tag(negative ? 1 : 0); // the sign byte
    this.#varint(words.length);
    this.#ensure(words.length * 4);
    for (const word of words) {
      this.#view.setUint32(this.#pos, word, true);
      this.#pos += 4;
    }
  }

  #write(value: unknown): void {
    switch (typeof value) {
      case "undefined":
        this.#tag(Tag.UNDEFINED);
        return;
      case "boolean":
        this.#tag(value ? Tag.TRUE : Tag.FALSE);
        return;
      case "number":
        this.#number(value);
        return;
      case "string":
        this.#string(value);
        return;
      case "bigint":
        this.#tag(Tag.BIGINT);
        this.#bigint(value);
        return;
      case "symbol":
        throw uncloneable(String(value));
      case "function":
        throw uncloneable(functionToString.call(value));
      default:
        if (value === null) {
          this.#tag(Tag.NULL);
          return;
        }
        this.#object(value as object);
        return;
    }
  }

  #object(value: object): void {
    const seen = this.#ids.get(value);
    if (seen !== undefined) {
      this.#tag(Tag.REF);
      this.#varint(seen);
      return;
    }
    this.#ids.set(value, this.#ids.size);
    const proto: unknown = Object.getPrototypeOf(value);
    // Plain objects first: the common case, and not fooled by an own Symbol.toStringTag.
    if (proto === Object.prototype || proto === null) {
      this.#plainObject(value as Record<string, unknown>);
      return;
    }
    if (Array.isArray(value)) {
      this.#array(value);
      return;
    }
    if (ArrayBuffer.isView(value)) {
      this.#arrayBufferView(value);
      return;
    }
    const brand = objectToString.call(value).slice(8, -1);
    switch (brand) {
      case "Date":
        this.#tag(Tag.DATE);
        this.#double(Date.prototype.getTime.call(value));
        return;
      case "RegExp": {
        const regexp = value as RegExp;
        this.#tag(Tag.REGEXP);
        this.#string(regexp.source);
        this.#string(regexp.flags);
        return;
      }
      case "Map": {
        const map = value as Map<unknown, unknown>;
        this.#tag(Tag.MAP);
        this.#varint(map.size);
        for (const [k, v] of map) {
          this.#write(k);
          this.#write(v);
        }
        return;
      }
      case "Set": {
        const set = value as Set<unknown>;
        this.#tag(Tag.SET);
        this.#varint(set.size);
        for (const v of set) this.#write(v);
        return;
      }
      case "ArrayBuffer":
        this.#tag(Tag.ARRAY_BUFFER);
        this.#rawBytes(new Uint8Array(value as ArrayBuffer));
        return;
      case "Error":
        this.#error(value as Error);
        return;
      case "Boolean":
        this.#tag(Boolean.prototype.valueOf.call(value) ? Tag.BOXED_TRUE : Tag.BOXED_FALSE);
        return;
      case "Number":
        this.#tag(Tag.BOXED_NUMBER);
        this.#double(Number.prototype.valueOf.call(value));
        return;
      case "String":
        this.#tag(Tag.BOXED_STRING);
        this.#string(String.prototype.valueOf.call(value));
        return;
      case "BigInt":
        this.#tag(Tag.BOXED_BIGINT);
        this.#bigint(BigInt.prototype.valueOf.call(value));
        return;
      case "Symbol":
        // V8's own wording for a boxed Symbol, so both codecs throw the same text.
        throw uncloneable("[object Symbol]");
      default:
        if (UNCLONEABLE_TAGS.has(brand)) throw uncloneable(describeObject(value, brand));
        // Class instances: own enumerable properties only, as workerd's treatClassInstancesAsPlainObjects.
        this.#plainObject(value as Record<string, unknown>);
        return;
    }
  }

  #plainObject(value: Record<string, unknown>): void {
    const keys = Object.keys(value);
    this.#tag(Tag.OBJECT);
    this.#varint(keys.length);
    for (const key of keys) {
      this.#string(key);
      this.#write(value[key]);
    }
  }

  #array(value: unknown[]): void {
    const length = value.length;
    const keys = Object.keys(value);
    // Own keys list indices first, in order: if there are `length` keys and the last one is the
    // last index, every index is present and there is no named property.
    if (keys.length === length && (length === 0 || keys[length - 1] === String(length - 1))) {
      this.#tag(Tag.ARRAY_DENSE);
      this.#varint(length);
      for (let i = 0; i < length; i++) this.#write(value[i]);
      this.#varint(0);
      return;
    }
    let indexCount = 0;
    while (indexCount < keys.length && isIndexKey(keys[indexCount] as string)) indexCount++;
    const record = value as unknown as Record<string, unknown>;
    if (indexCount * 2 < length) {
      // Mostly holes (`a = []; a[1e6] = 1`): write only what is there.
      this.#tag(Tag.ARRAY_SPARSE);
      this.#varint(length);
      this.#varint(keys.length);
      for (const key of keys) {
        this.#string(key);
        this.#write(record[key]);
      }
      return;
    }
    this.#tag(Tag.ARRAY_DENSE);
    this.#varint(length);
    for (let i = 0; i < length; i++) {
      if (hasOwn.call(value, i)) this.#write(value[i]);
      else this.#tag(Tag.HOLE);
    }
    this.#varint(keys.length - indexCount);
    for (let i = indexCount; i < keys.length; i++) {
      const key = keys[i] as string;
      this.#string(key);
      this.#write(record[key]);
    }
  }

  #arrayBufferView(view: ArrayBufferView): void {
    const kindName = typedArrayKindOf?.call(view) ?? "DataView";
    const kind = VIEW_KIND_BY_NAME.get(kindName);
    if (kind === undefined) throw uncloneable(describeObject(view, kindName));
    this.#tag(Tag.VIEW);
    this.#tag(kind);
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    if (nodeBuffer?.isBuffer(view) && view.byteLength !== view.buffer.byteLength) {
      // A small Node Buffer is a window on a shared 8 KiB pool of unrelated data: store only its
      // own bytes (read back as a Uint8Array, as on the platform, which has no Buffer type).
      this.#tag(Tag.ARRAY_BUFFER);
      this.#ids.set({}, this.#ids.size); // keeps ids in step with the decoder, which registers the buffer
      this.#rawBytes(bytes);
      this.#varint(0);
    } else {
      // The buffer first (or a reference to it), so views that share a buffer still share it.
      this.#object(view.buffer);
      this.#varint(view.byteOffset);
    }
    this.#varint(view.byteLength);
  }

  #error(error: Error): void {
    // What V8's WriteJSError keeps (and so what workerd stores): the name (only the standard
    // constructors survive), an own data `message`, a string `stack` and an own data `cause`.
    const name = String(error.name);
    const message = Object.getOwnPropertyDescriptor(error, "message");
    const stack: unknown = error.stack;
    const cause = Object.getOwnPropertyDescriptor(error, "cause");
    this.#tag(Tag.ERROR);
    this.#varint(Math.max(0, ERROR_NAMES.indexOf(name)));
    const hasMessage = message !== undefined && "value" in message;
    const hasCause = cause !== undefined && "value" in cause;
    this.#varint((hasMessage ? 1 : 0) | (typeof stack === "string" ? 2 : 0) | (hasCause ? 4 : 0));
    if (hasMessage) this.#string(String(message.value));
    if (typeof stack === "string") this.#string(stack);
    if (hasCause) this.#write(cause.value);
  }
}

class Decoder {
  readonly #bytes: Uint8Array;
  /** Created on the first float read: most small values have none, and the allocation shows. */
  #view: DataView | undefined;
  #pos: number;
  readonly #objects: unknown[] = [];

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    this.#pos = 1;
  }

  decode(): unknown {
    const value = this.#read();
    if (this.#pos !== this.#bytes.byteLength) this.#fail("trailing bytes after the value");
    return value;
  }

  #fail(why: string): never {
    throw new ActorStoreError("ERR_DESERIALIZATION", `Stored value is corrupt (structured codec): ${why}.`);
  }

  #byte(): number {
    const b = this.#bytes[this.#pos++];
    if (b === undefined) this.#fail("unexpected end of data");
    return b;
  }

  #varint(): number {
    let result = 0;
    let scale = 1;
    for (;;) {
      const b = this.#byte();
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 0x80;
      if (scale > 2 ** 56) this.#fail("varint too long");
    }
  }

  #double(): number {
    if (this.#pos + 8 > this.#bytes.byteLength) this.#fail("unexpected end of data");
    this.#view ??= new DataView(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.byteLength);
    const n = this.#view.getFloat64(this.#pos, true);
    this.#pos += 8;
    return n;
  }

  #take(length: number): Uint8Array {
    const start = this.#pos;
    if (start + length > this.#bytes.byteLength) this.#fail("unexpected end of data");
    this.#pos = start + length;
    return this.#bytes.subarray(start, start + length);
  }

  #string(): string {
    const tag = this.#byte();
    if (tag === Tag.STRING_UTF8) return this.#utf8();
    if (tag === Tag.STRING_UTF16) return this.#utf16();
    return this.#fail(`expected a string, found tag ${tag}`);
  }

  #utf8(): string {
    const length = this.#varint();
    const start = this.#pos;
    const end = start + length;
    if (end > this.#bytes.byteLength) this.#fail("unexpected end of data");
    this.#pos = end;
    if (length < SHORT_STRING) {
      // ASCII is by far the common case for keys: build it in place, without a subarray or a
      // TextDecoder call, which cost more than the whole loop for short strings.
      const bytes = this.#bytes;
      let s = "";
      for (let i = start; i < end; i++) {
        const b = bytes[i] as number;
        if (b >= 0x80) return utf8Decoder.decode(bytes.subarray(start, end));
        s += String.fromCharCode(b);
      }
      return s;
    }
    return utf8Decoder.decode(this.#bytes.subarray(start, end));
  }

  #utf16(): string {
    const length = this.#varint();
    const bytes = this.#take(length * 2);
    // Not TextDecoder("utf-16le"): it replaces lone surrogates, which are why this form exists.
    const units = new Uint16Array(length);
    for (let i = 0; i < length; i++) units[i] = (bytes[2 * i] as number) | ((bytes[2 * i + 1] as number) << 8);
    let s = "";
    for (let i = 0; i < length; i += 8192) {
      s += String.fromCharCode.apply(null, units.subarray(i, i + 8192) as unknown as number[]);
    }
    return s;
  }

  #bigint(): bigint {
    const negative = this.#byte() === 1;
    const count = this.#varint();
    const words = this.#take(count * 4);
    const view = new DataView(words.buffer, words.byteOffset, words.byteLength);
    let n = 0n;
    for (let i = count - 1; i >= 0; i--) n = (n << 32n) | BigInt(view.getUint32(i * 4, true));
    return negative ? -n : n;
  }

  #register<T>(value: T): T {
    this.#objects.push(value);
    return value;
  }

  #read(): unknown {
    const tag = this.#byte();
    switch (tag) {
      case Tag.UNDEFINED:
        return undefined;
      case Tag.NULL:
        return null;
      case Tag.TRUE:
        return true;
      case Tag.FALSE:
        return false;
      case Tag.INT: {
        const z = this.#varint();
        return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
      }
      case Tag.DOUBLE:
        return this.#double();
      case Tag.STRING_UTF8:
        return this.#utf8();
      case Tag.STRING_UTF16:
        return this.#utf16();
      case Tag.BIGINT:
        return this.#bigint();
      case Tag.REF: {
        const id = this.#varint();
        if (id >= this.#objects.length) this.#fail(`reference to unknown object ${id}`);
        return this.#objects[id];
      }
      case Tag.OBJECT: {
        const object = this.#register<Record<string, unknown>>({});
        this.#properties(object, this.#varint());
        return object;
      }
      case Tag.ARRAY_DENSE: {
        const array = this.#register<unknown[]>([]);
        const length = this.#varint();
        for (let i = 0; i < length; i++) {
          if (this.#bytes[this.#pos] === Tag.HOLE) {
            this.#pos++;
            array.length = i + 1; // grows the array without creating the element: a hole
          } else {
            array.push(this.#read());
          }
        }
        this.#properties(array as unknown as Record<string, unknown>, this.#varint());
        return array;
      }
      case Tag.ARRAY_SPARSE: {
        const array = this.#register<unknown[]>([]);
        array.length = this.#varint();
        this.#properties(array as unknown as Record<string, unknown>, this.#varint());
        return array;
      }
      case Tag.MAP: {
        const map = this.#register(new Map<unknown, unknown>());
        const size = this.#varint();
        for (let i = 0; i < size; i++) {
          const key = this.#read();
          map.set(key, this.#read());
        }
        return map;
      }
      case Tag.SET: {
        const set = this.#register(new Set<unknown>());
        const size = this.#varint();
        for (let i = 0; i < size; i++) set.add(this.#read());
        return set;
      }
      case Tag.DATE:
        return this.#register(new Date(this.#double()));
      case Tag.REGEXP: {
        const source = this.#string();
        return this.#register(new RegExp(source, this.#string()));
      }
      case Tag.BOXED_TRUE:
      case Tag.BOXED_FALSE:
        return this.#register(Object(tag === Tag.BOXED_TRUE));
      case Tag.BOXED_NUMBER:
        return this.#register(Object(this.#double()));
      case Tag.BOXED_STRING:
        return this.#register(Object(this.#string()));
      case Tag.BOXED_BIGINT:
        return this.#register(Object(this.#bigint()));
      case Tag.ARRAY_BUFFER:
        // slice() copies, so every decode hands out a fresh buffer that does not alias `bytes`.
        return this.#register(this.#take(this.#varint()).slice().buffer);
      case Tag.VIEW:
        return this.#arrayBufferView();
      case Tag.ERROR:
        return this.#error();
      default:
        return this.#fail(`unknown tag ${tag}`);
    }
  }

  #properties(target: Record<string, unknown>, count: number): void {
    for (let i = 0; i < count; i++) {
      const key = this.#string();
      setOwn(target, key, this.#read());
    }
  }

  #arrayBufferView(): ArrayBufferView {
    // Reserve the view's id before reading its buffer, matching the encoder's numbering.
    const id = this.#objects.length;
    this.#objects.push(undefined);
    const kind = VIEW_BY_KIND.get(this.#byte());
    if (kind === undefined) this.#fail("typed array kind not supported by this runtime");
    const buffer = this.#read();
    if (!(buffer instanceof ArrayBuffer)) this.#fail("view without an ArrayBuffer");
    const byteOffset = this.#varint();
    const byteLength = this.#varint();
    if (byteOffset + byteLength > buffer.byteLength || byteLength % kind.bytesPerElement !== 0) {
      this.#fail("view outside its buffer");
    }
    const view = new kind.ctor(buffer, byteOffset, byteLength / kind.bytesPerElement);
    this.#objects[id] = view;
    return view;
  }

  #error(): Error {
    const ctor = ERROR_CONSTRUCTORS.get(ERROR_NAMES[this.#varint()] ?? "Error") ?? Error;
    const flags = this.#varint();
    const error = flags & 1 ? new ctor(this.#string()) : new ctor();
    this.#register(error);
    // The stack is the original one (or none), never the decoder's own call site.
    if (flags & 2) {
      Object.defineProperty(error, "stack", {
        value: this.#string(),
        writable: true,
        configurable: true,
        enumerable: false,
      });
    } else {
      delete (error as { stack?: string }).stack;
    }
    if (flags & 4) {
      Object.defineProperty(error, "cause", {
        value: this.#read(),
        writable: true,
        configurable: true,
        enumerable: false,
      });
    }
    return error;
  }
}

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
    try {
      return new Decoder(bytes).decode();
    } catch (error) {
      if (error instanceof ActorStoreError) throw error;
      throw new ActorStoreError(
        "ERR_DESERIALIZATION",
        `Stored value is corrupt (structured codec): ${String(error)}.`,
        {
          cause: error,
        },
      );
    }
  },
};
