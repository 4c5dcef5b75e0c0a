import { describe, expect, it } from "vitest";
import type { ValueCodec } from "../../../src/storage/values/codec";
import { loadV8Codec, STRUCTURED_CODEC_TAG, structuredCodec, V8_CODEC_TAG } from "../../../src/storage/values/codec";
import { expectSameValue } from "./deep-equal";

const v8Codec = await loadV8Codec();
if (v8Codec === undefined) throw new Error("node:v8 should load under Node.js");
const codecs: ValueCodec[] = [structuredCodec, v8Codec];

function roundTrip(codec: ValueCodec, value: unknown): unknown {
  return codec.decode(codec.encode(value));
}

class CustomError extends Error {
  override name = "CustomError";
}

class Point {
  x = 1;
  y = 2;
  get length(): number {
    return 3;
  }
  method(): number {
    return 4;
  }
}

/** `[test name, value, expected result]`; expected defaults to the value itself. */
type Case = [name: string, make: () => unknown, expected?: () => unknown];

const cases: Case[] = [
  ["primitives", () => [undefined, null, true, false, 0, 1, -1, 2 ** 31, -(2 ** 31) - 1, 0.5, 1e308, 5e-324, "", "x"]],
  ["NaN, -0 and ±Infinity", () => [Number.NaN, -0, 0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]],
  [
    "strings (non-ASCII, astral, lone surrogates, long)",
    () => [
      "é",
      "e\u0301",
      "\uFFFF",
      "😀",
      "\uD800",
      "a\uDC00b",
      "x".repeat(70_000),
      `${"é".repeat(100)}😀`,
      `${"a".repeat(99)}\uD83D`,
    ],
  ],
  ["BigInt", () => [0n, 1n, -1n, 2n ** 64n, -(2n ** 200n) + 7n, 12345678901234567890n]],
  ["plain objects", () => ({ a: 1, b: { c: "d" }, 2: "index key", "": "empty key", ["__proto__"]: { own: true } })],
  [
    "undefined inside containers",
    () => ({ a: undefined, list: [undefined, 1], map: new Map([[undefined, undefined]]) }),
  ],
  [
    "sparse arrays",
    () => {
      // biome-ignore lint/suspicious/noSparseArray: holes are the point
      const holey: unknown[] = [1, , 3, , undefined];
      const mostlyEmpty: unknown[] = [];
      mostlyEmpty[100_000] = "far";
      mostlyEmpty[3] = "near";
      const trailing: unknown[] = [1];
      trailing.length = 5;
      return [holey, mostlyEmpty, trailing, new Array(3)];
    },
  ],
  ["arrays with named properties", () => Object.assign([1, 2], { named: "yes", nested: { x: 1 } })],
  [
    "Map and Set",
    () => [
      new Map<unknown, unknown>([
        [{ k: 1 }, [1]],
        ["s", new Set([1, "1", -0])],
        [Number.NaN, null],
      ]),
      new Set(),
    ],
  ],
  ["Date", () => [new Date(0), new Date(8.64e15), new Date(-1), new Date(Number.NaN)]],
  ["RegExp", () => [/a+b/gi, /[\u{1F600}]/u, /x/dimsy, /a\/b/]],
  ["boxed primitives", () => [Object(true), Object(false), Object(-0), Object(Number.NaN), Object("str"), Object(5n)]],
  ["ArrayBuffer", () => [new ArrayBuffer(0), new Uint8Array([1, 2, 3, 255]).buffer]],
  [
    "every typed array and DataView",
    () => [
      new Int8Array([-128, 127]),
      new Uint8Array([0, 255]),
      new Uint8ClampedArray([0, 255]),
      new Int16Array([-32768, 32767]),
      new Uint16Array([65535]),
      new Int32Array([-(2 ** 31)]),
      new Uint32Array([2 ** 32 - 1]),
      new Float32Array([Number.NaN, -0, 1.5]),
      new Float64Array([Number.NaN, -0, Number.POSITIVE_INFINITY]),
      new BigInt64Array([-(2n ** 63n)]),
      new BigUint64Array([2n ** 64n - 1n]),
      new DataView(new Uint8Array([9, 8, 7, 6]).buffer, 1, 2),
    ],
  ],
  [
    "views sharing one buffer (offsets and identity kept)",
    () => {
      const buffer = new ArrayBuffer(32);
      new Uint8Array(buffer).fill(7, 8, 16);
      return {
        whole: new Float64Array(buffer),
        part: new Uint8Array(buffer, 8, 8),
        dv: new DataView(buffer, 4),
        buffer,
      };
    },
  ],
  [
    "Error and its subclasses",
    () => [
      new Error("plain"),
      new EvalError("e"),
      new RangeError("r"),
      new ReferenceError("f"),
      new SyntaxError("s"),
      new TypeError("t"),
      new URIError("u"),
      new Error(),
      new Error("with cause", { cause: { why: [1, 2] } }),
    ],
  ],
  [
    "Error subclass names it does not know become Error, as on the platform",
    () => [new CustomError("c"), new AggregateError([1], "agg")],
    () => [new Error("c"), new Error("agg")],
  ],
  [
    "class instances as plain objects with own enumerable properties",
    () => {
      const point = new Point();
      Object.defineProperty(point, "hidden", { value: 1, enumerable: false });
      return point;
    },
    () => ({ x: 1, y: 2 }),
  ],
  [
    "strings that start with a byte-order mark (U+FEFF is a character, not a marker to drop), short and long",
    () => ["\uFEFF", "\uFEFFé", `\uFEFF${"x".repeat(70)}`, `\uFEFF${"é".repeat(70)}`, "\uFEFF\uFEFF"],
  ],
  [
    "shared references",
    () => {
      const shared = { s: 1 };
      const date = new Date(5);
      return { a: shared, b: shared, list: [shared, date, date], map: new Map([[shared, shared]]) };
    },
  ],
  [
    "cycles",
    () => {
      const object: Record<string, unknown> = { name: "root" };
      const array: unknown[] = [object];
      const map = new Map<unknown, unknown>([["array", array]]);
      const set = new Set<unknown>([map]);
      object.self = object;
      object.array = array;
      array.push(array, set);
      map.set(map, set);
      const error = new Error("cause points back up", { cause: object });
      object.error = error;
      return { object, error };
    },
  ],
];

for (const codec of codecs) {
  describe(`${codec.name} codec`, () => {
    for (const [name, make, expected] of cases) {
      it(`${codec.name}: round-trips ${name}`, () => {
        const value = make();
        expectSameValue(roundTrip(codec, value), expected === undefined ? make() : expected());
        // And the value itself is untouched by encoding.
        expectSameValue(value, make());
      });
    }

    it(`${codec.name}: ${codec.name === "v8" ? "cannot read back" : "round-trips"} an Error whose cause refers to the error itself`, () => {
      const error = new Error("loop");
      error.cause = { back: error };
      const bytes = codec.encode(error);
      if (codec.name === "v8") {
        // V8 (and so workerd) registers an Error only after reading its cause, so a reference from
        // the cause back to the error is unreadable. The structured codec registers it first.
        expect(() => codec.decode(bytes)).toThrow(expect.objectContaining({ code: "ERR_DESERIALIZATION" }));
      } else {
        const copy = codec.decode(bytes) as Error & { cause: { back: unknown } };
        expect(copy.cause.back).toBe(copy);
      }
    });

    it(`${codec.name}: keeps error messages and, when present, stacks`, () => {
      const error = new RangeError("boom");
      const copy = roundTrip(codec, error) as RangeError;
      expect(copy).toBeInstanceOf(RangeError);
      expect(copy.message).toBe("boom");
      expect(copy.stack).toBe(error.stack);
    });

    it(`${codec.name}: returns a fresh copy on every decode`, () => {
      const bytes = codec.encode({ list: [1], bytes: new Uint8Array([1]) });
      const first = codec.decode(bytes) as { list: number[]; bytes: Uint8Array };
      first.list.push(2);
      first.bytes[0] = 9;
      const second = codec.decode(bytes) as { list: number[]; bytes: Uint8Array };
      expect(second.list).toEqual([1]);
      expect(second.bytes[0]).toBe(1);
      expect(second.bytes.buffer).not.toBe(first.bytes.buffer);
    });

    it(`${codec.name}: stores a 100 KB Uint8Array compactly (under 131,072 bytes)`, () => {
      const big = new Uint8Array(100 * 1024).map((_, i) => (i * 31) & 0xff);
      const bytes = codec.encode(big);
      expect(bytes.byteLength).toBeLessThan(131_072);
      expect(bytes.byteLength).toBeLessThan(big.byteLength + 32);
      expectSameValue(codec.decode(bytes), big);
    });

    it(`${codec.name}: stores only a small Node Buffer's own bytes, not its pool`, () => {
      const buffer = Buffer.from("abc");
      expect(buffer.buffer.byteLength).toBeGreaterThan(3); // a pool slice, or this test proves nothing
      const bytes = codec.encode(buffer);
      expect(bytes.byteLength).toBeLessThan(32);
      expectSameValue(codec.decode(bytes), new Uint8Array([97, 98, 99]));
    });

    it(`${codec.name}: rejects malformed bytes with ERR_DESERIALIZATION`, () => {
      const bytes = codec.encode({ a: "some text", b: [1, 2, 3] });
      expect(() => codec.decode(bytes.subarray(0, bytes.byteLength - 3))).toThrow(
        expect.objectContaining({ code: "ERR_DESERIALIZATION" }),
      );
      expect(() => codec.decode(new Uint8Array([0x42]))).toThrow(
        expect.objectContaining({ code: "ERR_DESERIALIZATION" }),
      );
    });
  });
}

describe("codec tags", () => {
  it("structured: output starts with its own tag, never 0xFF", () => {
    for (const value of [null, 1, "s", { a: 1 }, new Uint8Array(3)]) {
      expect(structuredCodec.encode(value)[0]).toBe(STRUCTURED_CODEC_TAG);
    }
    expect(STRUCTURED_CODEC_TAG).not.toBe(0xff);
  });

  it("v8: output starts with V8's header FF 0F (version 15), as workerd stores it", () => {
    const bytes = v8Codec.encode({ a: 1 });
    expect([...bytes.subarray(0, 2)]).toEqual([V8_CODEC_TAG, 0x0f]);
  });

  it("v8: writes typed arrays natively (workerd-readable), not as Node host objects", () => {
    // ff 0f, then 'B' (ArrayBuffer) 03 01 02 03, then 'V' (view) 'B' (Uint8Array) offset 0, length 3.
    const bytes = v8Codec.encode(new Uint8Array([1, 2, 3]));
    expect(Buffer.from(bytes).toString("hex")).toBe("ff0f42030102035642000300");
  });

  it("v8: reads bytes written by workerd", () => {
    // `{ a: 1 }` as workerd stores it: header, 'o', "a" (one-byte string), Smi 1, '{' with 1 property.
    expectSameValue(v8Codec.decode(Uint8Array.from([0xff, 0x0f, 0x6f, 0x22, 0x01, 0x61, 0x49, 0x02, 0x7b, 0x01])), {
      a: 1,
    });
  });
});

describe("resizable ArrayBuffers (as workerd stores them, probed through Miniflare)", () => {
  type Resizable = ArrayBuffer & { resizable: boolean; maxByteLength: number; resize(n: number): void };
  const rab = (length: number, maxByteLength: number, fill: number[] = []): Resizable => {
    const b = new (ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => Resizable)(length, {
      maxByteLength,
    });
    new Uint8Array(b).set(fill);
    return b;
  };
  const shape = (b: ArrayBuffer) => {
    const r = b as Resizable;
    return {
      resizable: r.resizable,
      byteLength: r.byteLength,
      maxByteLength: r.maxByteLength,
      bytes: [...new Uint8Array(b)],
    };
  };

  for (const codec of codecs) {
    it(`${codec.name}: a resizable buffer keeps its maxByteLength, its bytes and its identity among views; it still resizes`, () => {
      const buffer = rab(4, 16, [1, 2, 3, 4]);
      const got = roundTrip(codec, [buffer, new Uint16Array(buffer, 0, 1), new DataView(buffer, 1, 2), rab(0, 0)]) as [
        Resizable,
        Uint16Array,
        DataView,
        Resizable,
      ];
      expect(shape(got[0])).toEqual({ resizable: true, byteLength: 4, maxByteLength: 16, bytes: [1, 2, 3, 4] });
      expect(got[1].buffer).toBe(got[0]);
      expect(got[2].buffer).toBe(got[0]);
      expect([got[1].byteOffset, got[1].length, got[2].byteOffset, got[2].byteLength]).toEqual([0, 1, 1, 2]);
      expect(shape(got[3])).toEqual({ resizable: true, byteLength: 0, maxByteLength: 0, bytes: [] });
      got[0].resize(16);
      expect(got[0].byteLength).toBe(16);
      // A fixed-length view over it stays fixed.
      expect(got[1].length).toBe(1);
    });

    it(`${codec.name}: a length-tracking view comes back tracking and a fixed one fixed; encoding leaves the buffer as it was`, () => {
      const roomy = rab(6, 16, [1, 2, 3, 4, 5, 6]);
      const full = rab(6, 6, [1, 2, 3, 4, 5, 6]);
      const views = {
        tracking: new Uint8Array(roomy, 1),
        trackingData: new DataView(roomy, 2),
        fixedToEnd: new Uint8Array(roomy, 1, 5),
        trackingAtMax: new Uint16Array(full, 2),
        fixedAtMax: new Uint16Array(full, 2, 2),
        trackingDataAtMax: new DataView(full, 5),
        fixedShort: new Uint8Array(full, 0, 3),
      };
      const got = roundTrip(codec, views) as Record<keyof typeof views, ArrayBufferView>;
      // The buffers were resized and put back: same size, same bytes.
      expect([shape(roomy), shape(full)]).toEqual([
        { resizable: true, byteLength: 6, maxByteLength: 16, bytes: [1, 2, 3, 4, 5, 6] },
        { resizable: true, byteLength: 6, maxByteLength: 6, bytes: [1, 2, 3, 4, 5, 6] },
      ]);
      const byteLength = (v: ArrayBufferView): number | "out of bounds" => {
        try {
          return v.byteLength;
        } catch {
          return "out of bounds"; // a DataView past its buffer's end throws
        }
      };
      const lengths = () => Object.fromEntries(Object.entries(got).map(([k, v]) => [k, byteLength(v)]));
      expect(lengths()).toEqual({
        tracking: 5,
        trackingData: 4,
        fixedToEnd: 5,
        trackingAtMax: 4,
        fixedAtMax: 4,
        trackingDataAtMax: 1,
        fixedShort: 3,
      });
      (got.tracking.buffer as Resizable).resize(10);
      (got.trackingAtMax.buffer as Resizable).resize(4);
      expect(lengths()).toEqual({
        tracking: 9,
        trackingData: 8,
        fixedToEnd: 5,
        trackingAtMax: 2,
        fixedAtMax: 0, // out of bounds now, as any fixed view past the end
        trackingDataAtMax: "out of bounds",
        fixedShort: 3,
      });
    });

    it(`${codec.name}: a view past the end of its shrunk resizable buffer is refused with V8's DataCloneError`, () => {
      const typed = rab(8, 8);
      const u16 = new Uint16Array(typed, 4, 2);
      const tracking = new Uint8Array(typed, 4);
      typed.resize(2);
      const viewed = rab(8, 8);
      const dataView = new DataView(viewed, 4, 4);
      viewed.resize(2);
      const refusal = (value: unknown) => {
        try {
          codec.encode(value);
          return "encoded";
        } catch (e) {
          return `${(e as Error).name}: ${(e as Error).message}`;
        }
      };
      expect(refusal([u16])).toBe("DataCloneError: [object Object] could not be cloned.");
      expect(refusal(tracking)).toBe("DataCloneError: [object Object] could not be cloned.");
      expect(refusal({ dataView })).toBe("DataCloneError: #<DataView> could not be cloned.");
      // An empty view inside the bounds is a view like any other.
      const inBounds = rab(8, 8);
      const empty = roundTrip(codec, new Uint8Array(inBounds, 8, 0)) as Uint8Array;
      expect([empty.byteOffset, empty.byteLength, (empty.buffer as Resizable).resizable]).toEqual([8, 0, true]);
    });
  }

  it("structured: a fixed-length ArrayBuffer is written as before (the resizable form is a tag older values never have)", () => {
    const fixed = structuredCodec.encode(new Uint8Array([1, 2, 3]).buffer);
    const resizable = structuredCodec.encode(rab(3, 3, [1, 2, 3]));
    expect(fixed.length).toBe(resizable.length - 1); // the same bytes, plus maxByteLength
    expect(fixed[1]).not.toBe(resizable[1]);
    expect(shape(structuredCodec.decode(fixed) as ArrayBuffer).resizable).toBe(false);
  });
});

for (const codec of codecs) {
  describe(`${codec.name}: a DOMException reads back as a DOMException, as on the platform`, () => {
    // It was written as a class instance, {} (its name, message and code lost); workerd stores it
    // (compared in test/differential/kv-arguments.differential.test.ts).
    it("keeps its name, message, code and stack, inside other values too", () => {
      const original = new DOMException("gone", "NotFoundError");
      const back = roundTrip(codec, { list: [original, original] }) as { list: DOMException[] };
      const [first, second] = back.list;
      expect(first).toBeInstanceOf(DOMException);
      expect(first).toBe(second);
      expect(first?.name).toBe("NotFoundError");
      expect(first?.message).toBe("gone");
      expect(first?.code).toBe(8);
      expect(first?.stack).toBe(original.stack);
    });

    it("an object that only claims the brand stays a plain object", () => {
      const fake = { [Symbol.toStringTag]: "DOMException", name: "x" };
      expect(roundTrip(codec, fake)).toEqual({ name: "x" });
    });
  });

  describe(`${codec.name}: Headers and bodyless Requests and Responses read back as themselves, as on the platform`, () => {
    // They were written as class instances, {} (every header, URL and status lost); workerd stores
    // them (compared in test/differential/kv-arguments.differential.test.ts).
    const headers = () =>
      new Headers([
        ["B-Two", "2"],
        ["a-one", "1"],
        ["Set-Cookie", "c=1"],
        ["set-cookie", "d=2"],
        ["X-Dup", "x"],
        ["x-dup", "y"],
      ]);
    const ENTRIES = [
      ["a-one", "1"],
      ["b-two", "2"],
      ["set-cookie", "c=1"],
      ["set-cookie", "d=2"],
      ["x-dup", "x, y"],
    ];

    it(`${codec.name}: a Headers keeps its entries, set-cookie values one by one, and stays one object where shared`, () => {
      const original = headers();
      const back = roundTrip(codec, { a: original, b: original, empty: new Headers() }) as Record<string, Headers>;
      expect(back.a).toBeInstanceOf(Headers);
      expect(back.a).toBe(back.b);
      expect([...(back.a as Headers)]).toEqual(ENTRIES);
      expect(back.a?.getSetCookie()).toEqual(["c=1", "d=2"]);
      expect(back.a?.get("X-DUP")).toBe("x, y");
      expect([...(back.empty as Headers)]).toEqual([]);
      back.a?.set("x-new", "1"); // changeable, as on the platform
      expect(back.a?.get("x-new")).toBe("1");
    });

    it(`${codec.name}: a Headers that cannot be changed reads back unchangeable, as the platform keeps its guard`, () => {
      // Compared through Miniflare: workerd reads such headers back immutable; they read back changeable.
      const immutable = Response.redirect("http://example.com/x", 302).headers;
      expect(() => immutable.set("x", "1")).toThrow(TypeError);
      const back = roundTrip(codec, {
        immutable,
        empty: Response.error().headers,
        open: new Headers({ a: "1" }),
      }) as Record<string, Headers>;
      expect(back.immutable).toBeInstanceOf(Headers);
      expect([...(back.immutable as Headers)]).toEqual([["location", "http://example.com/x"]]);
      for (const mutate of [
        (h: Headers) => h.set("x", "1"),
        (h: Headers) => h.append("x", "1"),
        (h: Headers) => h.delete("location"),
      ]) {
        expect(() => mutate(back.immutable as Headers)).toThrow(TypeError);
        expect(() => mutate(back.empty as Headers)).toThrow(TypeError);
      }
      expect([...(back.immutable as Headers)]).toEqual([["location", "http://example.com/x"]]);
      back.open?.set("b", "2");
      expect([...(back.open as Headers)]).toEqual([
        ["a", "1"],
        ["b", "2"],
      ]);
      // Stored again, still unchangeable.
      const many = roundTrip(codec, back.immutable) as Headers;
      expect(() => many.append("y", "1")).toThrow(TypeError);
    });

    it(`${codec.name}: a Request without a body keeps its URL, method, headers, redirect and cache`, () => {
      const original = new Request("http://example.com/p?q=1#frag", {
        method: "put",
        headers: headers(),
        redirect: "manual",
        cache: "no-store",
      });
      const back = roundTrip(codec, [original]) as Request[];
      const request = back[0] as Request;
      expect(request).toBeInstanceOf(Request);
      expect(request.url).toBe("http://example.com/p?q=1#frag");
      expect(request.method).toBe("PUT");
      expect(request.redirect).toBe("manual");
      expect(request.cache).toBe("no-store");
      expect(request.body).toBeNull();
      expect([...request.headers]).toEqual(ENTRIES);
      const plain = roundTrip(codec, new Request("https://example.com")) as Request;
      expect([plain.url, plain.method, plain.redirect, plain.cache]).toEqual([
        "https://example.com/",
        "GET",
        "follow",
        "default",
      ]);
    });

    it(`${codec.name}: a Response without a body keeps its status, statusText and headers; Response.error() stays one`, () => {
      const back = roundTrip(
        structuredCodec,
        new Response(null, { status: 404, statusText: "Nope", headers: headers() }),
      );
      expect(back).toBeInstanceOf(Response);
      const response = back as Response;
      expect([response.status, response.statusText, response.body]).toEqual([404, "Nope", null]);
      expect([...response.headers]).toEqual(ENTRIES);
      const redirect = roundTrip(codec, Response.redirect("http://example.com/x", 302)) as Response;
      expect([redirect.status, [...redirect.headers]]).toEqual([302, [["location", "http://example.com/x"]]]);
      const error = roundTrip(codec, Response.error()) as Response;
      expect([error.type, error.status]).toEqual(["error", 0]);
    });

    it(`${codec.name}: a subclass is stored as what it holds; an object that only claims the brand stays a plain object`, () => {
      class Loud extends Headers {
        override entries(): HeadersIterator<[string, string]> {
          throw new Error("not called");
        }
      }
      const back = roundTrip(codec, new Loud({ a: "1" })) as Headers;
      expect(back.constructor).toBe(Headers);
      expect(back.get("a")).toBe("1");
      expect(roundTrip(codec, { [Symbol.toStringTag]: "Headers", a: "1" })).toEqual({ a: "1" });
    });
  });
}

describe("structured: a stored web object the runtime cannot make again", () => {
  it("a stored Request whose parts the constructor refuses is a corrupt value, not a crash elsewhere", () => {
    const bytes = structuredCodec.encode(new Request("http://example.com/"));
    const text = new TextDecoder().decode(bytes);
    const bad = new TextEncoder().encode(text.replace("GET", "G T")); // not a valid method token
    expect(() => structuredCodec.decode(bad)).toThrow(/could not be made again \(TypeError\)/);
  });
});

for (const codec of codecs) {
  describe(`${codec.name}: a Request or Response with a body is refused whatever a subclass's body getter says`, () => {
    it(`${codec.name}: refuses one whose overridden body getter claims there is none`, () => {
      class Quiet extends Response {
        override get body(): null {
          return null;
        }
      }
      expect(() => codec.encode({ r: new Quiet("secret") })).toThrow("ReadableStream can only be serialized for RPC.");
    });
  });
}

describe("v8: web objects are written as workerd writes them (host objects), and workerd's bytes read back", () => {
  // Bytes Miniflare's workerd stored for these values (read from its SQLite file). The v8 codec
  // wrote each of these objects as a class instance, {}.
  const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex").toUpperCase();
  const fromHex = (text: string) => Uint8Array.from(Buffer.from(text, "hex"));
  const WORKERD = {
    request:
      "FF0F5C0510687474703A2F2F652E636F6D2F7023666F22066D6574686F642204504F53542207686561646572735C0403010003782D6101312204626F6479302208726564697265637422066D616E75616C2207666574636865725F220263665F2205636163686522086E6F2D73746F72652209696E746567726974795F22067369676E616C5F2212656E636F6465526573706F6E7365426F64795F7B0A",
    response:
      "FF0F5C06306F220673746174757349A806220A7374617475735465787422044E6F70652207686561646572735C0403010003782D620132220263665F2209776562536F636B65745F220A656E636F6465426F64795F7B06",
    redirectHeaders: "FF0F5C040001200D687474703A2F2F652E636F6D2F",
    sharedHeaders:
      "FF0F6F2201725C050D687474703A2F2F652E636F6D2F6F22066D6574686F645F2207686561646572735C04030100016101312204626F647930220872656469726563745F2207666574636865725F220263665F220563616368655F2209696E746567726974795F22067369676E616C5F2212656E636F6465526573706F6E7365426F64795F7B0A2201685E037B02",
    headers: "FF0F5C0403041101782903633D312903643D320001610131",
    domException:
      "FF0F5C080A41626F72744572726F72016D4841626F72744572726F723A206D0A20202020617420646F6D20287363726970742D303A333A343730290A202020206174204F2E666574636820287363726970742D303A343A383729",
  };

  it("writes a Request, a Response, immutable Headers and a shared Headers byte for byte as workerd", () => {
    const request = new Request("http://e.com/p#f", {
      method: "POST",
      headers: { "x-a": "1" },
      redirect: "manual",
      cache: "no-store",
    });
    expect(hex(v8Codec.encode(request))).toBe(WORKERD.request);
    const response = new Response(null, { status: 404, statusText: "Nope", headers: { "x-b": "2" } });
    expect(hex(v8Codec.encode(response))).toBe(WORKERD.response);
    expect(hex(v8Codec.encode(Response.redirect("http://e.com/", 302).headers))).toBe(WORKERD.redirectHeaders);
    const withHeaders = new Request("http://e.com/", { headers: { a: "1" } });
    expect(hex(v8Codec.encode({ r: withHeaders, h: withHeaders.headers }))).toBe(WORKERD.sharedHeaders);
  });

  it("reads workerd's Headers (common and other names), Request, Response and DOMException", () => {
    const headers = v8Codec.decode(fromHex(WORKERD.headers)) as Headers;
    expect(headers).toBeInstanceOf(Headers);
    expect([...headers]).toEqual([
      ["a", "1"],
      ["content-type", "x"],
      ["set-cookie", "c=1"],
      ["set-cookie", "d=2"],
    ]);
    const request = v8Codec.decode(fromHex(WORKERD.request)) as Request;
    expect([request.url, request.method, request.redirect, request.cache, [...request.headers]]).toEqual([
      "http://e.com/p#f",
      "POST",
      "manual",
      "no-store",
      [["x-a", "1"]],
    ]);
    const redirectHeaders = v8Codec.decode(fromHex(WORKERD.redirectHeaders)) as Headers;
    expect([...redirectHeaders]).toEqual([["location", "http://e.com/"]]);
    expect(() => redirectHeaders.set("a", "1")).toThrow(TypeError); // guard 0: immutable
    const response = v8Codec.decode(fromHex(WORKERD.response)) as Response;
    expect([response.status, response.statusText, [...response.headers]]).toEqual([404, "Nope", [["x-b", "2"]]]);
    const shared = v8Codec.decode(fromHex(WORKERD.sharedHeaders)) as { r: Request; h: Headers };
    expect(shared.h).toBeInstanceOf(Headers);
    expect([...shared.h]).toEqual([["a", "1"]]);
    const exception = v8Codec.decode(fromHex(WORKERD.domException)) as DOMException;
    expect(exception).toBeInstanceOf(DOMException);
    expect([exception.name, exception.message, exception.code, exception.stack]).toEqual([
      "AbortError",
      "m",
      20,
      "AbortError: m\n    at dom (script-0:3:470)\n    at O.fetch (script-0:4:87)",
    ]);
  });

  it("a host object of an unknown tag is a corrupt value", () => {
    expect(() => v8Codec.decode(fromHex("FF0F5C63"))).toThrow(/unknown host object tag 99/);
  });

  it("keeps cycles, shared objects, holes and Error causes around the web objects it writes", () => {
    const headers = new Headers({ x: "1" });
    const list: unknown[] = [1];
    list[2] = headers; // a hole at 1
    const value: Record<string, unknown> = { headers, list, map: new Map([[headers, 1]]) };
    value.self = value;
    value.error = new RangeError("r", { cause: value });
    const back = roundTrip(v8Codec, value) as typeof value & { list: unknown[]; map: Map<unknown, unknown> };
    expect(back.self).toBe(back);
    expect(back.headers).toBeInstanceOf(Headers);
    expect(back.list[2]).toBe(back.headers);
    expect(1 in back.list).toBe(false);
    expect(back.map.get(back.headers)).toBe(1);
    expect(back.error).toBeInstanceOf(RangeError);
    expect((back.error as Error).cause).toBe(back);
    expect([...(back.headers as Headers)]).toEqual([["x", "1"]]);
  });
});
