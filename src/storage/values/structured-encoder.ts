import { copyPooled } from "../../util/byte-pool";
import { describeProxy, isProxy } from "./proxy";
import {
  describeObject,
  detachedArrayBuffer,
  ERROR_NAMES,
  functionToString,
  hasOwn,
  isDetached,
  isIndexKey,
  isLengthTracking,
  isOutOfBounds,
  isWellFormed,
  KEEP_BUFFER_BYTES,
  nodeBuffer,
  objectToString,
  outOfBoundsView,
  platformObjectRefusal,
  resizableMaxByteLength,
  SHORT_STRING,
  Tag,
  typedArrayKindOf,
  UNCLONEABLE_TAGS,
  uncloneable,
  utf8Encoder,
  VIEW_BY_KIND,
  VIEW_KIND_BY_NAME,
} from "./structured-format";
import { STRUCTURED_CODEC_TAG } from "./tags";
import {
  type HeaderEntries,
  headerEntries,
  isImmutableHeaders,
  platformBody,
  requestParts,
  requestSignalRefusal,
  responseParts,
  webObjectKind,
} from "./web-objects";

/** Offsets below which {@link Encoder} keeps a view of its buffer's tail. */
const TAIL_VIEWS = 64;

/** Encodes one value at a time into a reusable buffer. */
export class Encoder {
  #bytes: Uint8Array;
  #view: DataView;
  #pos = 0;
  #ids = new Map<object, number>();
  /**
   * Views of `#bytes` from offsets below {@link TAIL_VIEWS} on, made once per buffer: a string's
   * UTF-8 is encoded into the buffer's tail, and a new view for every string was most of the
   * garbage an encode made (a top-level string always starts at the same offset).
   */
  #tails: Array<Uint8Array | undefined> = new Array<Uint8Array | undefined>(TAIL_VIEWS).fill(undefined);
  /** True while an encode runs, so a re-entrant encode (from a getter) gets its own encoder. */
  busy = false;

  constructor(initialBytes: number) {
    this.#bytes = new Uint8Array(initialBytes);
    this.#view = new DataView(this.#bytes.buffer);
  }

  /** `#bytes` from `start` to its end (a cached view for small offsets). */
  #tail(start: number): Uint8Array {
    if (start >= TAIL_VIEWS) return this.#bytes.subarray(start);
    let view = this.#tails[start];
    if (view === undefined) {
      view = this.#bytes.subarray(start);
      this.#tails[start] = view;
    }
    return view;
  }

  /** Makes `bytes` the buffer (its views of the old one are dropped). */
  #setBuffer(bytes: Uint8Array): void {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer);
    this.#tails.fill(undefined);
  }

  encode(value: unknown): Uint8Array {
    this.#pos = 0;
    try {
      this.#ensure(1);
      this.#bytes[this.#pos++] = STRUCTURED_CODEC_TAG;
      this.#write(value);
      return copyPooled(this.#bytes, this.#pos);
    } finally {
      // Drop references to the caller's objects, and a buffer grown for one huge value. (Only
      // when used: clearing a Map allocates a new table even when it is empty.)
      if (this.#ids.size > 0) this.#ids.clear();
      if (this.#bytes.byteLength > KEEP_BUFFER_BYTES) this.#setBuffer(new Uint8Array(256));
    }
  }

  #ensure(extra: number): void {
    const needed = this.#pos + extra;
    if (needed <= this.#bytes.byteLength) return;
    let size = this.#bytes.byteLength * 2;
    while (size < needed) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#bytes.subarray(0, this.#pos));
    this.#setBuffer(next);
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
      const { written } = utf8Encoder.encodeInto(s, this.#tail(start + width));
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
        // A proxy of a function is named as V8 names it (its target's source; "null" once revoked).
        throw uncloneable(isProxy(value) ? describeProxy(value) : functionToString.call(value));
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
    // Before anything reads the object: a proxy's traps must not run (V8 refuses it untouched).
    if (isProxy(value)) throw uncloneable(describeProxy(value));
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
        // A method of its own: a local here would enlarge this frame, which every nesting level pays.
        this.#arrayBuffer(value as ArrayBuffer);
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
        // A method of its own, as #arrayBuffer: its locals would enlarge this frame.
        this.#otherObject(value, brand);
        return;
    }
  }

  /**
   * An object of no brand written above: a DOMException, a Headers, a bodyless Request or
   * Response, refused, or a class instance.
   */
  #otherObject(value: object, brand: string): void {
    if (brand === "DOMException" && typeof DOMException === "function" && value instanceof DOMException) {
      this.#tag(Tag.DOM_EXCEPTION);
      this.#string(String(value.name));
      this.#string(String(value.message));
      const stack: unknown = (value as { stack?: unknown }).stack;
      this.#varint(typeof stack === "string" ? 1 : 0);
      if (typeof stack === "string") this.#string(stack);
      return;
    }
    if (UNCLONEABLE_TAGS.has(brand)) throw uncloneable(describeObject(value, brand));
    if (this.#webObject(value)) return;
    const refusal = platformObjectRefusal(value, brand);
    if (refusal !== undefined) throw refusal;
    // Class instances: own enumerable properties only, as workerd's treatClassInstancesAsPlainObjects.
    this.#plainObject(value as Record<string, unknown>);
  }

  /** Writes `value` if it is a Headers, or a Request or Response without a body; else false. */
  #webObject(value: object): boolean {
    const kind = webObjectKind(value);
    if (kind === "Headers") {
      this.#tag(isImmutableHeaders(value as Headers) ? Tag.HEADERS_IMMUTABLE : Tag.HEADERS);
      this.#headerEntries(headerEntries(value as Headers));
      return true;
    }
    // One with a body is refused below, as the platform refuses it.
    if (kind === undefined || platformBody(value as Request | Response, kind) !== null) return false;
    if (kind === "Request") {
      const refusal = requestSignalRefusal(value as Request);
      if (refusal !== undefined) throw refusal;
      const parts = requestParts(value as Request);
      this.#tag(Tag.REQUEST);
      this.#string(parts.url);
      this.#string(parts.method);
      this.#string(parts.redirect);
      this.#string(parts.cache);
      this.#headerEntries(parts.headers);
    } else {
      const parts = responseParts(value as Response);
      this.#tag(Tag.RESPONSE);
      this.#varint(parts.status);
      this.#string(parts.statusText);
      this.#headerEntries(parts.headers);
    }
    return true;
  }

  #headerEntries(entries: HeaderEntries): void {
    this.#varint(entries.length);
    for (const [name, value] of entries) {
      this.#string(name);
      this.#string(value);
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

  #arrayBuffer(buffer: ArrayBuffer): void {
    if (isDetached(buffer)) throw detachedArrayBuffer();
    // A resizable one keeps its maxByteLength, as V8 (and so the platform) stores it.
    const maxByteLength = resizableMaxByteLength(buffer);
    this.#tag(maxByteLength === undefined ? Tag.ARRAY_BUFFER : Tag.RESIZABLE_ARRAY_BUFFER);
    this.#rawBytes(new Uint8Array(buffer));
    if (maxByteLength !== undefined) this.#varint(maxByteLength);
  }

  #arrayBufferView(view: ArrayBufferView): void {
    const kindName = typedArrayKindOf?.call(view) ?? "DataView";
    const kind = VIEW_KIND_BY_NAME.get(kindName);
    if (kind === undefined) throw uncloneable(describeObject(view, kindName));
    // A view of a SharedArrayBuffer is refused as the buffer itself is, with V8's text (the v8
    // codec's); the checks below would fail on it with a TypeError of their own.
    if (objectToString.call(view.buffer) === "[object SharedArrayBuffer]") {
      throw uncloneable(describeObject(view.buffer, "SharedArrayBuffer"));
    }
    // Before the view's offset is read: a DataView over a detached buffer throws a TypeError there.
    if (isDetached(view.buffer)) throw detachedArrayBuffer();
    // So does one past the end of a resizable buffer that shrank; V8 refuses such a view.
    const isDataView = kindName === "DataView";
    const resizable = resizableMaxByteLength(view.buffer) !== undefined;
    if (resizable && isOutOfBounds(view, isDataView)) throw outOfBoundsView(view, isDataView);
    const pooled = nodeBuffer?.isBuffer(view) === true && view.byteLength !== view.buffer.byteLength;
    const tracking =
      resizable && !pooled && isLengthTracking(view, isDataView, VIEW_BY_KIND.get(kind)?.bytesPerElement ?? 1);
    this.#tag(tracking ? Tag.VIEW_TRACKING : Tag.VIEW);
    this.#tag(kind);
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    if (pooled) {
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
    // A tracking view has no length of its own: it covers its buffer from its offset on.
    if (!tracking) this.#varint(view.byteLength);
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
