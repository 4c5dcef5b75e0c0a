import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { structuredCodec } from "../../src/storage/values/codec";
import { copyPooled, MAX_POOLED_BYTES, SLAB_BYTES } from "../../src/util/byte-pool";

describe("byte pool", () => {
  test("a copy holds exactly the requested prefix and is independent of its source", () => {
    const source = new Uint8Array([1, 2, 3, 4, 5]);
    const copy = copyPooled(source, 3);
    expect([...copy]).toEqual([1, 2, 3]);
    source[0] = 9;
    expect(copy[0]).toBe(1);
  });

  test("small copies share a slab, 8-byte aligned, and never overlap", () => {
    const copies = Array.from({ length: 200 }, (_, i) => copyPooled(new Uint8Array(i % 40).fill(i), i % 40));
    for (const [i, c] of copies.entries()) {
      expect(c.byteOffset % 8).toBe(0);
      expect(c.buffer.byteLength).toBe(SLAB_BYTES);
      expect(c.every((b) => b === i)).toBe(true);
    }
  });

  test("copies over the pooled maximum get a buffer of their own", () => {
    const big = copyPooled(new Uint8Array(MAX_POOLED_BYTES + 1), MAX_POOLED_BYTES + 1);
    expect(big.byteOffset).toBe(0);
    expect(big.buffer.byteLength).toBe(MAX_POOLED_BYTES + 1);
  });

  test("property: encoded values stay intact while later values are encoded", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.integer(), fc.uint8Array({ maxLength: 2000 })), { maxLength: 60 }),
        (values) => {
          const encoded = values.map((v) => structuredCodec.encode(v));
          expect(encoded.map((b) => structuredCodec.decode(b))).toEqual(values);
        },
      ),
    );
  });
});
