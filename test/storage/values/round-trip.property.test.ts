import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ValueCodec } from "../../../src/storage/values/codec";
import { decodeStoredValue, loadV8Codec, structuredCodec } from "../../../src/storage/values/codec";
import { expectSameValue, findDifference } from "./deep-equal";

const v8Codec = await loadV8Codec();
if (v8Codec === undefined) throw new Error("node:v8 should load under Node.js");

/** Strings fc.string() rarely produces: lone surrogates, astral characters, NUL. */
const oddString = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 12 })
  .map((units) => String.fromCharCode(...units));

const typedArray = fc.oneof(
  fc.int8Array(),
  fc.uint8Array(),
  fc.uint8ClampedArray(),
  fc.int16Array(),
  fc.uint16Array(),
  fc.int32Array(),
  fc.uint32Array(),
  fc.float32Array(),
  fc.float64Array(),
  fc.bigInt64Array(),
  fc.bigUint64Array(),
);

/** A view on part of a larger buffer, so byteOffset and the buffer's full length must survive. */
const windowedView = fc
  .tuple(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.nat(), fc.nat(), fc.boolean())
  .map(([bytes, a, b, dataView]) => {
    const offset = a % bytes.length;
    const length = b % (bytes.length - offset + 1);
    return dataView ? new DataView(bytes.buffer, offset, length) : new Uint8Array(bytes.buffer, offset, length);
  });

const errorValue = fc
  .tuple(
    fc.constantFrom(Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError),
    fc.string(),
    fc.option(fc.oneof(fc.string(), fc.integer()), { nil: undefined }),
  )
  // Causes stay leaves: see the v8 test for why a cause that refers back to its error cannot be read.
  .map(([Ctor, message, cause]) => (cause === undefined ? new Ctor(message) : new Ctor(message, { cause })));

const extraLeaves: fc.Arbitrary<unknown>[] = [
  fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2 ** 31, -(2 ** 31) - 1),
  fc.double(),
  fc.bigInt(),
  oddString,
  fc.date({ noInvalidDate: false }),
  fc.constantFrom(/a/g, /^[\w.]+$/imsu, /x/y, /(?<name>\d+)/d),
  typedArray,
  windowedView,
  fc.uint8Array({ maxLength: 32 }).map((bytes) => bytes.buffer),
  errorValue,
  fc.oneof(fc.boolean(), fc.double(), fc.string(), fc.bigInt()).map((v) => Object(v) as object),
];

const tree = fc.anything({
  maxDepth: 4,
  maxKeys: 5,
  values: [fc.anything({ maxDepth: 0 }), ...extraLeaves],
  withBoxedValues: true,
  withMap: true,
  withSet: true,
  withBigInt: true,
  withDate: true,
  withTypedArray: true,
  withSparseArray: true,
  withNullPrototype: true,
  withObjectString: true,
});

type Container = Record<string, unknown> | unknown[] | Map<unknown, unknown> | Set<unknown>;

function containersOf(root: unknown): Container[] {
  const found: Container[] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown): void => {
    if (typeof value !== "object" || value === null || seen.has(value)) return;
    seen.add(value);
    if (value instanceof Map) {
      found.push(value);
      for (const [k, v] of value) {
        visit(k);
        visit(v);
      }
    } else if (value instanceof Set) {
      found.push(value);
      for (const v of value) visit(v);
    } else if (
      Array.isArray(value) ||
      Object.getPrototypeOf(value) === Object.prototype ||
      Object.getPrototypeOf(value) === null
    ) {
      found.push(value as Container);
      for (const v of Object.values(value)) visit(v);
    }
  };
  visit(root);
  return found;
}

/**
 * Deeply nested structured-cloneable values with shared references and cycles: a tree from
 * fc.anything (plus the types it lacks), then links from containers to other containers, which
 * makes DAGs when the target is elsewhere and cycles when it is an ancestor or itself.
 */
const cloneable = fc
  .tuple(tree, fc.array(fc.tuple(fc.nat(), fc.nat(), fc.string({ maxLength: 3 })), { maxLength: 4 }))
  .map(([root, links]) => {
    const wrapped: unknown[] = [root]; // a container even when the tree is a leaf
    const containers = containersOf(wrapped);
    for (const [from, to, key] of links) {
      const source = containers[from % containers.length];
      const target = containers[to % containers.length];
      if (source instanceof Map) source.set(key, target);
      else if (source instanceof Set) source.add(target);
      else if (Array.isArray(source)) source.push(target);
      else if (source !== undefined && key !== "__proto__") source[`link:${key}`] = target;
    }
    return wrapped;
  });

const codecs: ValueCodec[] = [structuredCodec, v8Codec];

describe("round trip property", () => {
  for (const codec of codecs) {
    it(`${codec.name}: decode(encode(x)) is structurally identical to x for any cloneable x`, () => {
      fc.assert(
        fc.property(cloneable, (value) => {
          expectSameValue(codec.decode(codec.encode(value)), value);
        }),
        { numRuns: 300 },
      );
    });
  }

  it("structured and v8: read back identical values, through decodeStoredValue", () => {
    fc.assert(
      fc.property(cloneable, (value) => {
        const viaStructured = decodeStoredValue(structuredCodec.encode(value), { v8: v8Codec });
        const viaV8 = decodeStoredValue(v8Codec.encode(value), { v8: v8Codec });
        expectSameValue(viaStructured, viaV8);
      }),
      { numRuns: 200 },
    );
  });
});

describe("findDifference", () => {
  it("findDifference: tells apart what the codecs must keep apart", () => {
    const sharedChild = { a: 1 };
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    // biome-ignore lint/suspicious/noSparseArray: a hole versus undefined is the point
    const holey = [1, , 3];
    const pairs: [unknown, unknown][] = [
      [-0, 0],
      [Number.NaN, 0],
      [holey, [1, undefined, 3]],
      [new Uint8Array([1]), new Int8Array([1])],
      [new Uint8Array(new ArrayBuffer(4), 1, 1), new Uint8Array(1)],
      [new RangeError("x"), new TypeError("x")],
      [new Error("x"), new Error("y")],
      [
        [sharedChild, sharedChild],
        [{ a: 1 }, { a: 1 }],
      ],
      [cyclic, { self: { self: {} } }],
      [new Map([[1, 2]]), new Map([[2, 1]])],
      [
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ],
      [new Date(0), new Date(1)],
      [/a/g, /a/i],
      [Object(1), 1],
    ];
    for (const [a, b] of pairs) expect(findDifference(a, b), `${String(a)} vs ${String(b)}`).toBeDefined();
    expect(
      findDifference([Number.NaN, holey, cyclic, Object.create(null)], [Number.NaN, holey, cyclic, {}]),
    ).toBeUndefined();
  });
});
