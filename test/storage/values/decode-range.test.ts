/**
 * decodeStoredRange reads a value that sits inside a larger buffer (list() decodes rows straight
 * from sql.js's heap by offset). It must read exactly what decoding a copy of the range reads: the
 * same value, the same error for every truncated value even when valid bytes follow it, and nothing
 * that shares the larger buffer's memory.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeStoredRange,
  decodeStoredValue,
  loadV8Codec,
  STRUCTURED_CODEC_TAG,
  structuredCodec,
} from "../../../src/storage/values/codec";
import { expectSameValue } from "./deep-equal";

const v8Codec = await loadV8Codec();
if (v8Codec === undefined) throw new Error("node:v8 should load under Node.js");
const codecs = { v8: v8Codec };

/** One value with every kind the codecs write, shared references and a cycle. */
function sample(): unknown {
  const buffer = new ArrayBuffer(24);
  new Uint8Array(buffer).set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
  const self: Record<string, unknown> = { when: new Date(1), n: -0, big: -(2n ** 70n), d: Math.PI };
  self.self = self;
  // biome-ignore lint/suspicious/noSparseArray: holes are the point
  const holes = [1, , 3];
  return [
    self,
    new Map<unknown, unknown>([[1n, new Set(["a", "é😀".repeat(30), "a\uD800"])]]),
    holes,
    new TypeError("t", { cause: [1] }),
    { u8: new Uint8Array(buffer, 2, 5), f64: new Float64Array(buffer, 8, 2), dv: new DataView(buffer, 1, 4) },
    buffer.slice(4, 12),
    /x+/giu,
    [Object(1), Object("s"), Object(true), Object(3n)],
    "v".repeat(100),
    "short",
    null,
    undefined,
  ];
}

/** `bytes` at offset `before` of a larger buffer, with `fill` bytes on both sides. */
function embed(bytes: Uint8Array, before: number, after: number, fill: Uint8Array): Uint8Array {
  const out = new Uint8Array(before + bytes.length + after);
  for (let i = 0; i < out.length; i++) out[i] = fill[i % Math.max(1, fill.length)] ?? 0;
  out.set(bytes, before);
  return out;
}

/** The error `f` throws (class, code and message), or "no error". */
function thrown(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return `${(e as Error).constructor.name} ${(e as { code?: string }).code ?? ""} ${(e as Error).message}`;
  }
  return "no error";
}

/** Every ArrayBuffer reachable from `value`. */
function buffersIn(value: unknown, out: ArrayBufferLike[] = [], seen = new Set<unknown>()): ArrayBufferLike[] {
  if (typeof value !== "object" || value === null || seen.has(value)) return out;
  seen.add(value);
  if (value instanceof ArrayBuffer) out.push(value);
  else if (ArrayBuffer.isView(value)) out.push(value.buffer);
  else if (value instanceof Map) for (const [k, v] of value) buffersIn(v, buffersIn(k, out, seen), seen);
  else if (value instanceof Set) for (const v of value) buffersIn(v, out, seen);
  else for (const v of Object.values(value)) buffersIn(v, out, seen);
  return out;
}

describe.each([
  ["structured", structuredCodec],
  ["v8", v8Codec],
] as const)("decodeStoredRange (%s codec)", (_name, codec) => {
  it("reads a value inside a larger buffer as decodeStoredValue reads a copy, sharing none of its memory", () => {
    const bytes = codec.encode(sample());
    const big = embed(bytes, 37, 41, new Uint8Array([0xff, 0x00, 0x5a]));
    const value = decodeStoredRange(big, 37, 37 + bytes.length, codecs);
    expectSameValue(value, decodeStoredValue(bytes, codecs));
    expectSameValue(value, sample());
    for (const buffer of buffersIn(value)) expect(buffer).not.toBe(big.buffer);
  });

  it("fails every truncated value as decoding the truncated copy does, though valid bytes follow it", () => {
    // The sample, and values that are one string (which the structured codec reads on a short path).
    for (const value of [sample(), "v".repeat(100), "short", "é😀".repeat(30), "\uFEFF", ""]) {
      const bytes = codec.encode(value);
      const big = embed(bytes, 5, 0, new Uint8Array([0]));
      for (let k = 0; k < bytes.length; k++) {
        const expected = thrown(() => decodeStoredValue(bytes.slice(0, k), codecs));
        expect(expected).not.toBe("no error");
        expect(thrown(() => decodeStoredRange(big, 5, 5 + k, codecs))).toBe(expected);
      }
    }
  });

  it("fails a value followed by extra bytes inside its range as decoding that copy does", () => {
    for (const value of [sample(), "v".repeat(100), "short", "\uFEFFé"]) {
      const bytes = codec.encode(value);
      for (const extra of [[0], [0x41], [0x41, 0x42, 0x43]]) {
        const longer = new Uint8Array([...bytes, ...extra]);
        const big = embed(longer, 3, 4, new Uint8Array([0x41]));
        const expected = thrown(() => decodeStoredValue(longer, codecs));
        expect(thrown(() => decodeStoredRange(big, 3, 3 + longer.length, codecs))).toBe(expected);
      }
    }
  });

  it("agrees with decodeStoredValue on random values at random offsets", () => {
    fc.assert(
      fc.property(
        fc.anything({
          maxDepth: 3,
          withBigInt: true,
          withDate: true,
          withMap: true,
          withSet: true,
          withTypedArray: true,
          withSparseArray: true,
          withBoxedValues: true,
        }),
        fc.nat(64),
        fc.nat(64),
        fc.uint8Array({ maxLength: 8 }),
        (value, before, after, fill) => {
          const bytes = codec.encode(value);
          const big = embed(bytes, before, after, fill);
          const got = decodeStoredRange(big, before, before + bytes.length, codecs);
          expectSameValue(got, decodeStoredValue(bytes, codecs));
          for (const buffer of buffersIn(got)) expect(buffer).not.toBe(big.buffer);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("decodeStoredRange on bytes no codec wrote", () => {
  it("gives decodeStoredValue's errors for an empty range and an unknown first byte, whatever surrounds them", () => {
    const big = new Uint8Array([STRUCTURED_CODEC_TAG, 0x7a, 0x01, STRUCTURED_CODEC_TAG]);
    expect(thrown(() => decodeStoredRange(big, 1, 1, codecs))).toBe(
      thrown(() => decodeStoredValue(new Uint8Array(0), codecs)),
    );
    expect(thrown(() => decodeStoredRange(big, 1, 3, codecs))).toBe(
      thrown(() => decodeStoredValue(new Uint8Array([0x7a, 0x01]), codecs)),
    );
  });
});
