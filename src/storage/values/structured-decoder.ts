/** Reading a value back from the structured codec's format. */
import { ActorStoreError } from "../../errors";
import { asciiString, decodeUtf8 } from "../../util/utf8";
import { ERROR_CONSTRUCTORS, ERROR_NAMES, setOwn, Tag, VIEW_BY_KIND } from "./structured-format";
import { type HeaderEntries, headersFrom, immutableHeadersFrom, requestFrom, responseFrom } from "./web-objects";

/**
 * The value at `bytes[start, end)` when it is one string in UTF-8 form, the most common stored
 * value, read without a decoder object; `undefined` for anything else, including corrupt bytes,
 * which the {@link Decoder} then reads (and reports) as always.
 */
export function plainString(bytes: Uint8Array, start: number, end: number): string | undefined {
  if (bytes[start + 1] !== Tag.STRING_UTF8) return undefined;
  let pos = start + 2;
  let length = 0;
  let scale = 1;
  // The length's varint (the encoder pads it to the width of 3 bytes per character).
  for (let i = 0; i < 5 && pos < end; i++) {
    const b = bytes[pos++] as number;
    length += (b & 0x7f) * scale;
    if (b < 0x80) return pos + length === end ? utf8Text(bytes, pos, end) : undefined;
    scale *= 0x80;
  }
  return undefined;
}

/**
 * The string whose UTF-8 is `bytes[start, end)`: short ASCII (most keys) built in place, without a
 * decoder call, as the engine reads text (util/utf8.ts).
 */
function utf8Text(bytes: Uint8Array, start: number, end: number): string {
  return asciiString(bytes, start, end - start) ?? decodeUtf8(bytes, start, end);
}

/**
 * Gives a decoded error its original stack, or none: never the decoder's own call site, which
 * constructing it recorded.
 */
function setStack(error: Error, stack: string | undefined): void {
  if (stack === undefined) delete (error as { stack?: string }).stack;
  else Object.defineProperty(error, "stack", { value: stack, writable: true, configurable: true, enumerable: false });
}

/**
 * Decodes one stored value: `bytes[start, end)` (by default all of `bytes`). Every read is checked
 * against `end`, so a value inside a larger buffer never reads past itself.
 */
export class Decoder {
  readonly #bytes: Uint8Array;
  readonly #end: number;
  /** Created on the first float read: most small values have none, and the allocation shows. */
  #view: DataView | undefined;
  #pos: number;
  readonly #objects: unknown[] = [];

  constructor(bytes: Uint8Array, start = 0, end = bytes.byteLength) {
    this.#bytes = bytes;
    this.#pos = start + 1;
    this.#end = end;
  }

  decode(): unknown {
    const value = this.#read();
    if (this.#pos !== this.#end) this.#fail("trailing bytes after the value");
    return value;
  }

  #fail(why: string): never {
    throw new ActorStoreError("ERR_DESERIALIZATION", `Stored value is corrupt (structured codec): ${why}.`);
  }

  #byte(): number {
    if (this.#pos >= this.#end) this.#fail("unexpected end of data");
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
    if (this.#pos + 8 > this.#end) this.#fail("unexpected end of data");
    this.#view ??= new DataView(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.byteLength);
    const n = this.#view.getFloat64(this.#pos, true);
    this.#pos += 8;
    return n;
  }

  #take(length: number): Uint8Array {
    const start = this.#pos;
    if (start + length > this.#end) this.#fail("unexpected end of data");
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
    if (end > this.#end) this.#fail("unexpected end of data");
    this.#pos = end;
    return utf8Text(this.#bytes, start, end);
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
          if (this.#pos < this.#end && this.#bytes[this.#pos] === Tag.HOLE) {
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
      case Tag.RESIZABLE_ARRAY_BUFFER:
        return this.#resizableArrayBuffer();
      case Tag.VIEW:
        return this.#arrayBufferView(false);
      case Tag.VIEW_TRACKING:
        return this.#arrayBufferView(true);
      case Tag.ERROR:
        return this.#error();
      case Tag.DOM_EXCEPTION:
        return this.#domException();
      case Tag.HEADERS: {
        const entries = this.#headerEntries();
        return this.#register(this.#web("Headers", () => headersFrom(entries)));
      }
      case Tag.HEADERS_IMMUTABLE: {
        const entries = this.#headerEntries();
        return this.#register(this.#web("Headers", () => immutableHeadersFrom(entries)));
      }
      case Tag.REQUEST:
        return this.#register(this.#request());
      case Tag.RESPONSE:
        return this.#register(this.#response());
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

  #resizableArrayBuffer(): ArrayBuffer {
    // Registered before its maxByteLength is read, at the id the encoder gave it.
    const id = this.#objects.length;
    this.#objects.push(undefined);
    const bytes = this.#take(this.#varint());
    const maxByteLength = this.#varint();
    if (maxByteLength < bytes.byteLength) this.#fail("resizable ArrayBuffer longer than its maxByteLength");
    const Resizable = ArrayBuffer as unknown as new (length: number, options: { maxByteLength: number }) => ArrayBuffer;
    let buffer: ArrayBuffer;
    try {
      buffer = new Resizable(bytes.byteLength, { maxByteLength });
    } catch {
      return this.#fail("resizable ArrayBuffer not supported by this runtime or too large");
    }
    new Uint8Array(buffer).set(bytes);
    this.#objects[id] = buffer;
    return buffer;
  }

  #arrayBufferView(tracking: boolean): ArrayBufferView {
    // Reserve the view's id before reading its buffer, matching the encoder's numbering.
    const id = this.#objects.length;
    this.#objects.push(undefined);
    const kind = VIEW_BY_KIND.get(this.#byte());
    if (kind === undefined) this.#fail("typed array kind not supported by this runtime");
    const buffer = this.#read();
    if (!(buffer instanceof ArrayBuffer)) this.#fail("view without an ArrayBuffer");
    const byteOffset = this.#varint();
    let view: ArrayBufferView;
    if (tracking) {
      // Made without a length, so it follows the buffer's size, as the view that was stored did.
      if (!(buffer as { resizable?: boolean }).resizable) this.#fail("length-tracking view of a fixed-length buffer");
      if (byteOffset > buffer.byteLength || byteOffset % kind.bytesPerElement !== 0)
        this.#fail("view outside its buffer");
      view = new (kind.ctor as unknown as new (buffer: ArrayBuffer, byteOffset: number) => ArrayBufferView)(
        buffer,
        byteOffset,
      );
    } else {
      const byteLength = this.#varint();
      if (byteOffset + byteLength > buffer.byteLength || byteLength % kind.bytesPerElement !== 0) {
        this.#fail("view outside its buffer");
      }
      view = new kind.ctor(buffer, byteOffset, byteLength / kind.bytesPerElement);
    }
    this.#objects[id] = view;
    return view;
  }

  #headerEntries(): HeaderEntries {
    const count = this.#varint();
    const entries: HeaderEntries = [];
    for (let i = 0; i < count; i++) entries.push([this.#string(), this.#string()]);
    return entries;
  }

  #request(): Request {
    const url = this.#string();
    const method = this.#string();
    const redirect = this.#string();
    const cache = this.#string();
    const headers = this.#headerEntries();
    return this.#web("Request", () => requestFrom({ url, method, redirect, cache, headers }));
  }

  #response(): Response {
    const status = this.#varint();
    const statusText = this.#string();
    const headers = this.#headerEntries();
    return this.#web("Response", () => responseFrom({ status, statusText, headers }));
  }

  /**
   * `make()`, or a corrupt-value error if the runtime has no `className` or its constructor refuses
   * the stored parts (named by the error's class only: its message may quote a URL or a header).
   */
  #web<T>(className: string, make: () => T): T {
    if (typeof (globalThis as Record<string, unknown>)[className] !== "function") {
      this.#fail(`${className} not supported by this runtime`);
    }
    try {
      return make();
    } catch (error) {
      return this.#fail(
        `its ${className} could not be made again (${error instanceof Error ? error.name : typeof error})`,
      );
    }
  }

  #domException(): DOMException {
    const name = this.#string();
    const message = this.#string();
    if (typeof DOMException !== "function") this.#fail("DOMException not supported by this runtime");
    const exception = this.#register(new DOMException(message, name));
    setStack(exception, this.#varint() === 1 ? this.#string() : undefined);
    return exception;
  }

  #error(): Error {
    const ctor = ERROR_CONSTRUCTORS.get(ERROR_NAMES[this.#varint()] ?? "Error") ?? Error;
    const flags = this.#varint();
    const error = flags & 1 ? new ctor(this.#string()) : new ctor();
    this.#register(error);
    setStack(error, flags & 2 ? this.#string() : undefined);
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
