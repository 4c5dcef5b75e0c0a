/**
 * A tagged JSON encoding for values that cross the Node ⇄ workerd boundary in differential tests.
 *
 * Plain JSON loses exactly the things storage must round-trip (Map order, Set, Date, `undefined`,
 * NaN, -0, ±Infinity, BigInt, binary data, Error subclasses, sparse arrays, cycles), so every value
 * is encoded as a tree of plain JSON where anything JSON cannot say is an object tagged with `$`.
 *
 * The encoding is canonical: two values encode to deep-equal JSON exactly when a transcript
 * should consider them the same. That lets the suites compare the *encoded* transcripts of both
 * sides with `toEqual`, which makes every difference (a -0, a Map order, a hole) visible in the diff.
 *
 * **Why a factory:** the worker script that runs inside workerd embeds this function's source
 * (`createTranscriptCodec.toString()`), so it must not reference anything outside its own body.
 *
 * @example
 * ```ts
 * const codec = createTranscriptCodec();
 * const json = JSON.stringify(codec.encode(new Map([["b", -0]])));
 * codec.decode(JSON.parse(json)); // Map { "b" => -0 }
 * ```
 */

/** The JSON shape of an encoded value: plain JSON plus `$`-tagged objects. */
export type Encoded = null | boolean | number | string | Encoded[] | { readonly [key: string]: Encoded };

/** The encoder and decoder pair returned by {@link createTranscriptCodec}. */
export interface TranscriptCodec {
  encode(value: unknown): Encoded;
  decode(encoded: Encoded): unknown;
}

/** Names of the typed-array (and DataView) constructors the codec knows. */
export const VIEW_TYPES = [
  "Int8Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "Int16Array",
  "Uint16Array",
  "Int32Array",
  "Uint32Array",
  "Float32Array",
  "Float64Array",
  "BigInt64Array",
  "BigUint64Array",
  "DataView",
] as const;

/**
 * Builds the codec. Self-contained on purpose (see the module comment).
 */
export function createTranscriptCodec(): TranscriptCodec {
  const viewTypes = [
    "Int8Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "Float32Array",
    "Float64Array",
    "BigInt64Array",
    "BigUint64Array",
    "DataView",
  ];

  function toHex(bytes: Uint8Array): string {
    let out = "";
    for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
    return out;
  }

  function fromHex(hex: string): ArrayBuffer {
    const bytes = new Uint8Array(hex.length / 2);
    for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
    return bytes.buffer;
  }

  function encodeNumber(n: number): Encoded {
    if (Number.isNaN(n)) return { $: "num", v: "NaN" };
    if (Object.is(n, -0)) return { $: "num", v: "-0" };
    if (n === Number.POSITIVE_INFINITY) return { $: "num", v: "Infinity" };
    if (n === Number.NEGATIVE_INFINITY) return { $: "num", v: "-Infinity" };
    return n;
  }

  function decodeNumber(v: string): number {
    if (v === "-0") return -0;
    return Number(v);
  }

  function tagOf(value: object): string {
    return Object.prototype.toString.call(value).slice(8, -1);
  }

  function encode(root: unknown): Encoded {
    // Objects get an index in visit order; a second visit becomes a back-reference, so cycles and
    // shared substructure encode canonically.
    const seen = new Map<object, number>();

    function walk(value: unknown): Encoded {
      switch (typeof value) {
        case "undefined":
          return { $: "undef" };
        case "boolean":
        case "string":
          return value;
        case "number":
          return encodeNumber(value);
        case "bigint":
          return { $: "bigint", v: value.toString() };
        case "symbol":
          return { $: "symbol", v: value.description ?? "" };
        case "function":
          return { $: "function", v: String(value) };
      }
      if (value === null) return null;
      const object = value as object;
      const ref = seen.get(object);
      if (ref !== undefined) return { $: "ref", v: ref };
      seen.set(object, seen.size);
      const tag = tagOf(object);
      if (Array.isArray(object)) {
        let dense = true;
        for (let i = 0; i < object.length; i++) {
          if (!(i in object)) {
            dense = false;
            break;
          }
        }
        if (dense) return { $: "array", v: object.map((item: unknown) => walk(item)) };
        const items: Encoded[] = [];
        for (const key of Object.keys(object)) items.push([key, walk((object as unknown[])[Number(key)])]);
        return { $: "sparse", length: object.length, v: items };
      }
      if (object instanceof Map) {
        const entries: Encoded[] = [];
        for (const [k, v] of object) entries.push([walk(k), walk(v)]);
        return { $: "map", v: entries };
      }
      if (object instanceof Set) {
        const items: Encoded[] = [];
        for (const item of object) items.push(walk(item));
        return { $: "set", v: items };
      }
      if (object instanceof Date) return { $: "date", v: encodeNumber(object.getTime()) };
      if (object instanceof RegExp) return { $: "regexp", source: object.source, flags: object.flags };
      if (tag === "ArrayBuffer") return { $: "arraybuffer", v: toHex(new Uint8Array(object as ArrayBuffer)) };
      if (ArrayBuffer.isView(object)) {
        const view = object as ArrayBufferView;
        return {
          $: "view",
          type: tag,
          byteOffset: view.byteOffset,
          byteLength: view.byteLength,
          buffer: toHex(new Uint8Array(view.buffer as ArrayBuffer)),
        };
      }
      if (tag === "Error" || object instanceof Error || tag === "DOMException") {
        const error = object as Error;
        return { $: "error", name: String(error.name), message: String(error.message) };
      }
      if (tag === "Number" || tag === "String" || tag === "Boolean" || tag === "BigInt") {
        return { $: "boxed", type: tag, v: walk((object as { valueOf(): unknown }).valueOf()) };
      }
      const entries: Encoded[] = [];
      for (const key of Object.keys(object)) entries.push([key, walk((object as Record<string, unknown>)[key])]);
      return { $: "object", v: entries };
    }

    return walk(root);
  }

  function decode(root: Encoded): unknown {
    const objects: unknown[] = [];

    function walk(node: Encoded): unknown {
      if (node === null || typeof node !== "object") return node;
      if (Array.isArray(node)) throw new Error("transcript-codec: bare arrays are not part of the encoding");
      const tagged = node as { readonly [key: string]: Encoded };
      const v = tagged.v as Encoded;
      switch (tagged.$) {
        case "undef":
          return undefined;
        case "num":
          return decodeNumber(String(v));
        case "bigint":
          return BigInt(String(v));
        case "symbol":
          return Symbol(String(v));
        case "function":
          // The text of a function cannot be revived portably; a fixed arrow function is enough to
          // provoke (and compare) DataCloneError on both sides.
          return () => 1;
        case "ref":
          return objects[Number(v)];
        case "array": {
          const out: unknown[] = [];
          objects.push(out);
          for (const item of v as Encoded[]) out.push(walk(item));
          return out;
        }
        case "sparse": {
          const out: unknown[] = new Array(Number(tagged.length));
          objects.push(out);
          for (const pair of v as Encoded[][]) out[Number(pair[0])] = walk(pair[1] as Encoded);
          return out;
        }
        case "map": {
          const out = new Map<unknown, unknown>();
          objects.push(out);
          for (const pair of v as Encoded[][]) out.set(walk(pair[0] as Encoded), walk(pair[1] as Encoded));
          return out;
        }
        case "set": {
          const out = new Set<unknown>();
          objects.push(out);
          for (const item of v as Encoded[]) out.add(walk(item));
          return out;
        }
        case "date": {
          const out = new Date(walk(v) as number);
          objects.push(out);
          return out;
        }
        case "regexp": {
          const out = new RegExp(String(tagged.source), String(tagged.flags));
          objects.push(out);
          return out;
        }
        case "arraybuffer": {
          const out = fromHex(String(v));
          objects.push(out);
          return out;
        }
        case "view": {
          const type = String(tagged.type);
          if (!viewTypes.includes(type)) throw new Error(`transcript-codec: unknown view type ${type}`);
          const buffer = fromHex(String(tagged.buffer));
          const Ctor = (globalThis as unknown as Record<string, new (b: ArrayBuffer, o: number, l: number) => object>)[
            type
          ] as new (
            b: ArrayBuffer,
            o: number,
            l: number,
          ) => object;
          const bytesPerElement = (Ctor as unknown as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1;
          const out = new Ctor(buffer, Number(tagged.byteOffset), Number(tagged.byteLength) / bytesPerElement);
          objects.push(out);
          return out;
        }
        case "error": {
          const name = String(tagged.name);
          const Ctor = (globalThis as unknown as Record<string, unknown>)[name];
          const out =
            typeof Ctor === "function" && name.endsWith("Error")
              ? new (Ctor as new (m: string) => Error)(String(tagged.message))
              : Object.assign(new Error(String(tagged.message)), { name });
          objects.push(out);
          return out;
        }
        case "boxed": {
          const out = Object(walk(tagged.v as Encoded)) as object;
          objects.push(out);
          return out;
        }
        case "object": {
          const out: Record<string, unknown> = {};
          objects.push(out);
          for (const pair of v as Encoded[][]) out[String(pair[0])] = walk(pair[1] as Encoded);
          return out;
        }
        default:
          throw new Error(`transcript-codec: unknown tag ${String(tagged.$)}`);
      }
    }

    return walk(root);
  }

  return { encode, decode };
}
