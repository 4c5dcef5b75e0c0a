import { describe, expect, it } from "vitest";
import type { ValueCodec } from "../../../src/storage/values/codec";
import { loadV8Codec, structuredCodec } from "../../../src/storage/values/codec";

const v8Codec = await loadV8Codec();
if (v8Codec === undefined) throw new Error("node:v8 should load under Node.js");
const codecs: ValueCodec[] = [structuredCodec, v8Codec];

const arrow = () => 1;
function named(a: number): number {
  return a;
}
const symbol = Symbol("x");

/** An ArrayBuffer of `n` bytes, detached (as a transfer leaves it), and `make` of it made before. */
function detached<T>(make: (buffer: ArrayBuffer) => T, n = 8): T {
  const buffer = new ArrayBuffer(n);
  const made = make(buffer);
  structuredClone(buffer, { transfer: [buffer] });
  return made;
}
/** A proxy of `target`, revoked. */
function revoked(target: object): unknown {
  const { proxy, revoke } = Proxy.revocable(target, {});
  revoke();
  return proxy;
}
const DETACHED = "An ArrayBuffer is detached and could not be cloned.";
const SIGNAL = "AbortSignal serialization is not enabled.";

/** `[name, value, message]`: the platform's message is `String(thing) + " could not be cloned."`. */
const cases: [string, unknown, string][] = [
  ["a function", arrow, `${String(arrow)} could not be cloned.`],
  ["a symbol", symbol, "Symbol(x) could not be cloned."],
  ["a function inside an object", { deep: { f: named } }, `${String(named)} could not be cloned.`],
  ["a symbol inside an array", [1, [symbol]], "Symbol(x) could not be cloned."],
  ["a symbol as a Map key", new Map([[symbol, 1]]), "Symbol(x) could not be cloned."],
  ["a function in a Set", new Set([arrow]), `${String(arrow)} could not be cloned.`],
  ["a class (a function)", class Foo {}, `${String(class Foo {})} could not be cloned.`],
  ["a boxed symbol", Object(symbol), "[object Symbol] could not be cloned."],
  ["a WeakMap", new WeakMap(), "#<WeakMap> could not be cloned."],
  ["a Promise", Promise.resolve(1), "#<Promise> could not be cloned."],
  // A transferred buffer, and views over one (workerd refuses them with this message).
  ["a detached ArrayBuffer", detached((b) => b), DETACHED],
  ["a detached empty ArrayBuffer", detached((b) => b, 0), DETACHED],
  ["a typed array over a detached buffer", detached((b) => new Uint16Array(b, 2, 2)), DETACHED],
  ["a DataView over a detached buffer", detached((b) => new DataView(b, 1)), DETACHED],
  ["a detached buffer inside an object", detached((b) => ({ list: [1, b] })), DETACHED],
  // V8 refuses any proxy, even of a cloneable target (checked against workerd in surface.differential).
  // A view of a SharedArrayBuffer is refused as the buffer is (the structured codec failed with a
  // TypeError from ArrayBuffer.prototype.resizable).
  [
    "a typed array over a SharedArrayBuffer",
    new Uint8Array(new SharedArrayBuffer(4)),
    "#<SharedArrayBuffer> could not be cloned.",
  ],
  [
    "a DataView over a SharedArrayBuffer",
    { v: new DataView(new SharedArrayBuffer(4)) },
    "#<SharedArrayBuffer> could not be cloned.",
  ],
  ["a Proxy of an object", new Proxy({ a: 1 }, {}), "#<Object> could not be cloned."],
  ["a Proxy of an array", new Proxy([1], {}), "[object Array] could not be cloned."],
  ["a Proxy inside an object", { inner: new Proxy(new Map(), {}) }, "#<Map> could not be cloned."],
  // A revoked proxy is refused without running a trap, as V8 refuses it (compared through Miniflare:
  // "null could not be cloned." for each). The v8 codec threw a TypeError naming the trap
  // getPrototypeOf at the top level, and the structured codec named a function proxy by Node's
  // "function () { [native code] }" instead of its target's source, as V8 names it.
  ["a revoked Proxy", revoked({ a: 1 }), "null could not be cloned."],
  ["a revoked Proxy of an array", revoked([1]), "null could not be cloned."],
  ["a revoked Proxy of a function", revoked(named), "null could not be cloned."],
  ["a revoked Proxy inside an object", { x: revoked({ a: 1 }) }, "null could not be cloned."],
  ["a Proxy of a function", new Proxy(named, {}), `${String(named)} could not be cloned.`],
  [
    "a Proxy whose traps throw",
    new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error("trap ran");
        },
      },
    ),
    "#<Object> could not be cloned.",
  ],
];

for (const codec of codecs) {
  describe(`${codec.name} codec`, () => {
    for (const [name, value, message] of cases) {
      it(`${codec.name}: rejects ${name} with the platform's DataCloneError`, () => {
        let thrown: unknown;
        try {
          codec.encode(value);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(DOMException);
        expect((thrown as DOMException).name).toBe("DataCloneError");
        expect((thrown as DOMException).code).toBe(25);
        expect((thrown as DOMException).message).toBe(message);
      });
    }

    it(`${codec.name}: skips symbol-keyed properties, as structured clone does`, () => {
      expect(codec.decode(codec.encode({ [symbol]: 1, a: 2 }))).toEqual({ a: 2 });
    });

    it(`${codec.name}: keeps working after a rejected value (no partial state)`, () => {
      expect(() => codec.encode({ a: new Uint8Array(10_000), b: arrow })).toThrow("could not be cloned.");
      expect(codec.decode(codec.encode({ a: 1 }))).toEqual({ a: 1 });
    });

    it(`${codec.name}: passes through an error thrown by a getter`, () => {
      const value = {
        get boom(): never {
          throw new Error("getter failed");
        },
      };
      expect(() => codec.encode(value)).toThrow("getter failed");
    });
  });
}

it("structured: a getter that encodes re-entrantly does not corrupt the outer value", () => {
  const inner = { x: "inner" };
  const outer = {
    before: "a".repeat(10),
    get nested() {
      return structuredCodec.encode(inner).byteLength;
    },
    after: "b".repeat(10),
  };
  const copy = structuredCodec.decode(structuredCodec.encode(outer));
  expect(copy).toEqual({
    before: "a".repeat(10),
    nested: structuredCodec.encode(inner).byteLength,
    after: "b".repeat(10),
  });
});

for (const codec of codecs) {
  describe(`${codec.name}: the web platform's objects workerd refuses are refused, not stored as {}`, () => {
    // Compared with workerd in test/differential/kv-arguments.differential.test.ts. They were stored
    // as class instances are, a plain object of their own enumerable properties: `{}` for each.
    const generic = (name: string) =>
      `Could not serialize object of type "${name}". This type does not support serialization.`;
    class MyURL extends URL {}
    const refused: [string, unknown, string][] = [
      ["a URL", new URL("http://example.com/"), generic("URL")],
      ["a URL in a Map", new Map([["u", new URL("http://example.com/")]]), generic("URL")],
      ["a subclass of URL (named as its class)", new MyURL("http://example.com/"), generic("MyURL")],
      ["a Blob", new Blob(["x"]), generic("Blob")],
      ["URLSearchParams", new URLSearchParams("a=1"), generic("URLSearchParams")],
      ["a TextEncoderStream (no brand of its own in Node)", new TextEncoderStream(), generic("TextEncoderStream")],
      ["a MessageChannel (no brand of its own in Node)", new MessageChannel(), generic("MessageChannel")],
      ["an AbortSignal", AbortSignal.abort(), "AbortSignal serialization is not enabled."],
      ["a ReadableStream", new ReadableStream(), "ReadableStream can only be serialized for RPC."],
      ["a Response with a body", new Response("x"), "ReadableStream can only be serialized for RPC."],
      [
        "a URL after a function (what the platform meets first)",
        [arrow, new URL("http://x/")],
        `${String(arrow)} could not be cloned.`,
      ],
      ["a URL nested in an Error's cause", new Error("e", { cause: { u: new URL("http://x/") } }), generic("URL")],
      // workerd refuses a Request made with a signal, even an aborted one (compared through Miniflare).
      ["a Request made with a signal", new Request("http://x/", { signal: new AbortController().signal }), SIGNAL],
      ["a Request made with an aborted signal", new Request("http://x/", { signal: AbortSignal.abort() }), SIGNAL],
      [
        "a Request made with a signal, inside an object",
        { r: new Request("http://x/", { signal: new AbortController().signal }) },
        SIGNAL,
      ],
    ];
    for (const [name, value, message] of refused) {
      it(`${codec.name}: rejects ${name}`, () => {
        let thrown: unknown;
        try {
          codec.encode(value);
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toBeInstanceOf(DOMException);
        expect((thrown as DOMException).name).toBe("DataCloneError");
        expect((thrown as DOMException).message).toBe(message);
      });
    }
    it(`${codec.name}: keeps what the platform stores: Headers, a Request without a body or signal, objects that only claim a brand`, () => {
      const values = [
        new Headers(),
        new Request("http://example.com/"),
        new Request("http://example.com/").clone(),
        new Request(new Request("http://example.com/"), { signal: null }),
        { [Symbol.toStringTag]: "URL", a: 1 },
      ];
      for (const value of values) expect(() => codec.encode(value)).not.toThrow();
    });
  });
}
