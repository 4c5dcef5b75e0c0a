/**
 * The web platform's objects in the v8 codec, as workerd's serializer writes them: V8 host objects
 * (tag `\`, then workerd's serialization tag as a varint and the object's own fields). V8 hands an
 * embedder only objects with internal fields, and Node's `DOMException`, `Headers`, `Request` and
 * `Response` are plain JavaScript objects, which V8 would write as a class instance, `{}`: so a
 * value holding one is walked first, and written as a copy in which each such object is a stand-in
 * that V8 does hand over (see {@link withStandIns}).
 *
 * The formats (workerd's `Headers::serialize`, `Request::serialize`, `Response::serialize` and
 * `DOMException::serialize`, checked against the bytes Miniflare stores):
 * - Headers (tag 4): varint guard (0 immutable, 1 request, 2 response, 3 none; all but 3 cannot be
 *   changed), varint count, then per value a varint common-name id (0: the name follows as a
 *   length-delimited string) and the value, length-delimited (varint byte count, UTF-8 bytes);
 * - Request (tag 5): the URL, length-delimited, then an initializer object (method unless GET,
 *   headers as a Headers, body null, redirect when "manual", cache when given, other fields undefined);
 * - Response (tag 6): the body (null here), then an initializer object (status unless 200, statusText
 *   when given, headers as a Headers, other fields undefined); status 0 is `Response.error()`;
 * - DOMException (tag 8): name, message and stack, length-delimited (tag 7, an older form: the
 *   name, then an object with its message and stack, is read too);
 * - an error under workerd's `enhanced_error_serialization` flag (tag 10), read only: see
 *   v8-native-errors.ts.
 */

import { ActorStoreError, dataCloneError } from "../../errors";
import { isProxy } from "./proxy";
import { describeObject, hasOwn, objectToString, platformObjectRefusal } from "./structured-format";
import { NATIVE_ERROR_TAG, readNativeError } from "./v8-native-errors";
import {
  type HeaderEntries,
  headerEntries,
  headersFrom,
  immutableHeadersFrom,
  isImmutableHeaders,
  platformBody,
  platformGetter,
  requestFrom,
  requestParts,
  requestSignalRefusal,
  responseFrom,
  responseParts,
  webObjectKind,
} from "./web-objects";

/** workerd's serialization tags (`SerializationTag` in worker-interface.capnp). */
const HostTag = { HEADERS: 4, REQUEST: 5, RESPONSE: 6, DOM_EXCEPTION_V1: 7, DOM_EXCEPTION: 8 } as const;

/** workerd's host objects that have no counterpart here, by serialization tag (`SerializationTag`). */
const UNREADABLE_HOST_OBJECTS: Readonly<Record<number, string>> = {
  1: "an RPC stub",
  2: "a WritableStream",
  3: "a ReadableStream",
  9: "an AbortSignal",
  11: "a service binding (Fetcher)",
  12: "a Durable Object class",
};

/** workerd's common header names, by id (1-based; `COMMON_HEADERS` in api/headers.c++). */
const COMMON_HEADER_NAMES = [
  "accept-charset",
  "accept-encoding",
  "accept-language",
  "accept-ranges",
  "accept",
  "access-control-allow-origin",
  "age",
  "allow",
  "authorization",
  "cache-control",
  "content-disposition",
  "content-encoding",
  "content-language",
  "content-length",
  "content-location",
  "content-range",
  "content-type",
  "cookie",
  "date",
  "etag",
  "expect",
  "expires",
  "from",
  "host",
  "if-match",
  "if-modified-since",
  "if-none-match",
  "if-range",
  "if-unmodified-since",
  "last-modified",
  "link",
  "location",
  "max-forwards",
  "proxy-authenticate",
  "proxy-authorization",
  "range",
  "referer",
  "refresh",
  "retry-after",
  "server",
  "set-cookie",
  "strict-transport-security",
  "transfer-encoding",
  "user-agent",
  "vary",
  "via",
  "www-authenticate",
];
const COMMON_HEADER_IDS = new Map(COMMON_HEADER_NAMES.map((name, index) => [name, index + 1]));

/** Headers guard values in workerd's format. */
const GUARD_IMMUTABLE = 0;
const GUARD_NONE = 3;

/** What the codec's serializer offers {@link writeWebObject} (a `node:v8` Serializer). */
export interface HostWriter {
  /** The stand-in of a web platform object: one per object, so that V8 keeps shared ones shared. */
  standIn(webObject: object): object;
  writeUint32(value: number): void;
  writeRawBytes(bytes: Uint8Array): void;
  writeValue(value: unknown): void;
}

/** What the codec's deserializer offers {@link readWebObject} (a `node:v8` Deserializer). */
export interface HostReader {
  readUint32(): number;
  readRawBytes(length: number): Uint8Array;
  readValue(): unknown;
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** Is `value` one of the web platform's objects the platform writes as a host object (or refuses)? */
function isWebObject(value: object): boolean {
  const brand = objectToString.call(value).slice(8, -1);
  if (brand === "DOMException" && typeof DOMException === "function" && value instanceof DOMException) return true;
  return webObjectKind(value) !== undefined || platformObjectRefusal(value, brand) !== undefined;
}

/**
 * Whether `root` holds a web platform object anywhere V8 would reach: an iterative walk (no stack
 * limit of its own) over what V8 writes of each object. A proxy is not entered (V8 refuses it
 * without running its traps).
 */
function holdsWebObject(root: unknown): boolean {
  const seen = new Set<object>();
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== "object" || value === null || seen.has(value)) continue;
    seen.add(value);
    if (isProxy(value)) continue;
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null && !Array.isArray(value)) {
      if (ArrayBuffer.isView(value)) continue;
      const brand = objectToString.call(value).slice(8, -1);
      if (brand === "Map") {
        for (const [k, v] of value as Map<unknown, unknown>) pending.push(k, v);
        continue;
      }
      if (brand === "Set") {
        for (const v of value as Set<unknown>) pending.push(v);
        continue;
      }
      if (brand === "Error") {
        const cause = Object.getOwnPropertyDescriptor(value, "cause");
        if (cause !== undefined && "value" in cause) pending.push(cause.value);
        continue;
      }
      if (LEAF_BRANDS.has(brand)) continue;
      if (isWebObject(value)) return true;
    }
    for (const key of Object.keys(value)) pending.push((value as Record<string, unknown>)[key]);
  }
  return false;
}

/** Brands V8 writes without looking at their properties. */
const LEAF_BRANDS = new Set([
  "Date",
  "RegExp",
  "ArrayBuffer",
  "SharedArrayBuffer",
  "Boolean",
  "Number",
  "String",
  "BigInt",
  "Symbol",
]);

/**
 * `value` as V8 should write it: unchanged when it holds no web platform object, else a copy in
 * which each web platform object is its stand-in (`writer.standIn`). The copy is what V8 would write of the original: plain objects (also for class instances
 * and null-prototype objects) of own enumerable properties, arrays with their holes, length and
 * named properties, Maps and Sets in order, errors with their prototype, message, stack and cause;
 * everything else (dates, buffers, views, functions, proxies…) is kept as it is, for V8 to write or
 * refuse where it meets it.
 */
export function withStandIns(value: unknown, writer: Pick<HostWriter, "standIn">): unknown {
  if (typeof value !== "object" || value === null || !holdsWebObject(value)) return value;
  const copies = new Map<object, unknown>();
  const copy = (input: unknown): unknown => {
    if (typeof input !== "object" || input === null) return input;
    const done = copies.get(input);
    if (done !== undefined || copies.has(input)) return done;
    if (isProxy(input)) return input;
    const proto: unknown = Object.getPrototypeOf(input);
    const plain = proto === Object.prototype || proto === null;
    if (!plain && !Array.isArray(input)) {
      if (ArrayBuffer.isView(input)) return input;
      const brand = objectToString.call(input).slice(8, -1);
      if (brand === "Map") {
        const map = new Map<unknown, unknown>();
        copies.set(input, map);
        for (const [k, v] of input as Map<unknown, unknown>) map.set(copy(k), copy(v));
        return map;
      }
      if (brand === "Set") {
        const set = new Set<unknown>();
        copies.set(input, set);
        for (const v of input as Set<unknown>) set.add(copy(v));
        return set;
      }
      if (brand === "Error") return copyError(input as Error, copies, copy);
      if (LEAF_BRANDS.has(brand)) return input;
      if (isWebObject(input)) {
        const made = writer.standIn(input);
        copies.set(input, made);
        return made;
      }
    }
    const keys = Object.keys(input);
    const target = (Array.isArray(input) ? new Array<unknown>(input.length) : {}) as Record<string, unknown>;
    copies.set(input, target);
    for (const key of keys) {
      const v = copy((input as Record<string, unknown>)[key]);
      if (key === "__proto__") {
        Object.defineProperty(target, key, { value: v, writable: true, enumerable: true, configurable: true });
      } else {
        target[key] = v;
      }
    }
    return target;
  };
  return copy(value);
}

/**
 * A copy of `error` that V8 writes as it writes the original: the same prototype (V8 takes the name
 * from it), an own `message` only where the original has one, its `stack` as read, and its own `cause`.
 */
function copyError(error: Error, copies: Map<object, unknown>, copy: (value: unknown) => unknown): Error {
  const result = new Error();
  copies.set(error, result);
  Object.setPrototypeOf(result, Object.getPrototypeOf(error) as object | null);
  const message = Object.getOwnPropertyDescriptor(error, "message");
  if (message !== undefined && "value" in message) {
    Object.defineProperty(result, "message", { value: message.value, writable: true, configurable: true });
  }
  const stack: unknown = error.stack;
  Object.defineProperty(result, "stack", { value: stack, writable: true, configurable: true });
  const cause = Object.getOwnPropertyDescriptor(error, "cause");
  if (cause !== undefined && "value" in cause) {
    Object.defineProperty(result, "cause", { value: copy(cause.value), writable: true, configurable: true });
  }
  return result;
}

function writeString(writer: HostWriter, text: string): void {
  const bytes = utf8Encoder.encode(text);
  writer.writeUint32(bytes.byteLength);
  writer.writeRawBytes(bytes);
}

function readString(reader: HostReader): string {
  return utf8Decoder.decode(reader.readRawBytes(reader.readUint32()));
}

/**
 * Writes `value`, a web platform object {@link withStandIns} replaced, as workerd's serializer
 * does, or throws the platform's `DataCloneError` for one it refuses. A Request's or Response's
 * headers are written as their stand-in (the same one wherever that Headers is met).
 */
export function writeWebObject(writer: HostWriter, value: object): void {
  const kind = webObjectKind(value);
  if (kind === "Headers") {
    writer.writeUint32(HostTag.HEADERS);
    const headers = value as Headers;
    writer.writeUint32(isImmutableHeaders(headers) ? GUARD_IMMUTABLE : GUARD_NONE);
    const entries = headerEntries(headers);
    writer.writeUint32(entries.length);
    for (const [name, text] of entries) {
      const id = COMMON_HEADER_IDS.get(name) ?? 0;
      writer.writeUint32(id);
      if (id === 0) writeString(writer, name);
      writeString(writer, text);
    }
    return;
  }
  if (kind === "Request" && platformBody(value as Request, kind) === null) {
    const request = value as Request;
    const refusal = requestSignalRefusal(request);
    if (refusal !== undefined) throw refusal;
    const parts = requestParts(request);
    writer.writeUint32(HostTag.REQUEST);
    writeString(writer, parts.url);
    writer.writeValue({
      method: parts.method === "GET" ? undefined : parts.method,
      headers: writer.standIn(platformGetter(Request.prototype, "headers", request) as Headers),
      body: null,
      redirect: parts.redirect === "follow" ? undefined : parts.redirect,
      fetcher: undefined,
      cf: undefined,
      cache: parts.cache === "default" ? undefined : parts.cache,
      integrity: undefined,
      signal: undefined,
      encodeResponseBody: undefined,
    });
    return;
  }
  if (kind === "Response" && platformBody(value as Response, kind) === null) {
    const response = value as Response;
    const parts = responseParts(response);
    writer.writeUint32(HostTag.RESPONSE);
    writer.writeValue(null);
    writer.writeValue({
      status: parts.status === 200 ? undefined : parts.status,
      statusText: parts.statusText === "" ? undefined : parts.statusText,
      headers: writer.standIn(platformGetter(Response.prototype, "headers", response) as Headers),
      cf: undefined,
      webSocket: undefined,
      encodeBody: undefined,
    });
    return;
  }
  if (typeof DOMException === "function" && value instanceof DOMException) {
    writer.writeUint32(HostTag.DOM_EXCEPTION);
    writeString(writer, String(platformGetter(DOMException.prototype, "name", value)));
    writeString(writer, String(platformGetter(DOMException.prototype, "message", value)));
    const stack: unknown = (value as { stack?: unknown }).stack;
    writeString(writer, typeof stack === "string" ? stack : "");
    return;
  }
  throw (
    platformObjectRefusal(value, objectToString.call(value).slice(8, -1)) ??
    dataCloneError(`${describeObject(value, "Object")} could not be cloned.`)
  );
}

/** A Headers of workerd's format (after its tag). */
function readHeaders(reader: HostReader): Headers {
  const guard = reader.readUint32();
  if (guard > GUARD_NONE) throw new Error(`unknown Headers guard ${guard}`);
  const count = reader.readUint32();
  const entries: HeaderEntries = [];
  for (let i = 0; i < count; i++) {
    const id = reader.readUint32();
    const name = id === 0 ? readString(reader) : COMMON_HEADER_NAMES[id - 1];
    if (name === undefined) throw new Error(`unknown common header id ${id}`);
    entries.push([name, readString(reader)]);
  }
  // Every guard but "none" keeps the platform's Headers from being changed.
  return guard === GUARD_NONE ? headersFrom(entries) : immutableHeadersFrom(entries);
}

/** The initializer object a Request or Response was written with (its headers a Headers). */
function readInit(reader: HostReader, className: string): Record<string, unknown> & { headers: Headers } {
  const init = reader.readValue();
  if (
    typeof init !== "object" ||
    init === null ||
    !(hasOwn.call(init, "headers") && (init as { headers: unknown }).headers instanceof Headers)
  ) {
    throw new Error(`the ${className} initializer is not an object with headers`);
  }
  return init as Record<string, unknown> & { headers: Headers };
}

function optionalString(value: unknown, fallback: string): string {
  return typeof value === "string" ? value : fallback;
}

/** Reads a host object workerd's serializer wrote (its tag first); throws on one it cannot read. */
export function readWebObject(reader: HostReader): object {
  const tag = reader.readUint32();
  switch (tag) {
    case HostTag.HEADERS:
      return readHeaders(reader);
    case HostTag.REQUEST: {
      const url = readString(reader);
      const init = readInit(reader, "Request");
      return requestFrom({
        url,
        method: optionalString(init.method, "GET"),
        redirect: optionalString(init.redirect, "follow"),
        cache: optionalString(init.cache, "default"),
        headers: headerEntries(init.headers),
      });
    }
    case HostTag.RESPONSE: {
      if (reader.readValue() !== null) throw new Error("a stored Response has a body");
      const init = readInit(reader, "Response");
      return responseFrom({
        status: typeof init.status === "number" ? init.status : 200,
        statusText: optionalString(init.statusText, ""),
        headers: headerEntries(init.headers),
      });
    }
    case HostTag.DOM_EXCEPTION:
    case HostTag.DOM_EXCEPTION_V1: {
      const name = readString(reader);
      let message: string;
      let stack: unknown;
      if (tag === HostTag.DOM_EXCEPTION) {
        message = readString(reader);
        stack = readString(reader);
      } else {
        const error = reader.readValue() as { message?: unknown; stack?: unknown } | null;
        message = String(error?.message ?? "");
        stack = error?.stack;
      }
      const exception = new DOMException(message, name);
      Object.defineProperty(exception, "stack", {
        value: stack,
        writable: true,
        configurable: true,
        enumerable: false,
      });
      return exception;
    }
    case NATIVE_ERROR_TAG:
      return readNativeError(reader);
    default: {
      const kind = UNREADABLE_HOST_OBJECTS[tag];
      if (kind === undefined) throw new Error(`unknown host object tag ${tag}`);
      // Not damage: workerd stored something no JavaScript value here can stand for.
      throw new ActorStoreError(
        "ERR_DESERIALIZATION",
        `Stored value holds ${kind} (workerd's serialization tag ${tag}), which only workerd can read: the value is not damaged, but actorstore cannot read it; rewrite the key without it.`,
      );
    }
  }
}
