/**
 * list() decodes a row that is neither cached nor going into the cache straight from sql.js's heap,
 * without copying its bytes first. These check that nothing it answers shares that memory: every
 * kind of value either codec writes, binary values of sizes around SQLite's pages, overflow pages
 * and the paged file's chunks, compared with what get() answers (which decodes a copy), and still
 * intact after later writes reuse the heap.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { WasmHeap } from "../../../src/engine/sqljs";
import { FILE_CHUNK_BYTES } from "../../../src/engine/sqljs-paged-file";
import { coreOf, type ObjectStorage } from "../../../src/storage/object-storage";
import { openStorage } from "./harness";

/** One value of every kind the codecs write (fresh objects on every call). */
function everyKind(): Record<string, unknown> {
  const shared = new ArrayBuffer(16);
  new Uint8Array(shared).set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
  const cyclic: { self?: unknown; n: number } = { n: 1 };
  cyclic.self = cyclic;
  const sparse: unknown[] = [1];
  sparse[9] = "ten";
  const error = new TypeError("bad", { cause: { why: [1] } });
  return {
    "k-ascii": "v".repeat(100),
    "k-short": "abc",
    "k-unicode": "héllo 😀\u0000".repeat(20),
    "k-lone": "a\uD800b",
    "k-empty": "",
    "k-int": -12345,
    "k-double": Math.PI,
    "k-negzero": -0,
    "k-nan": Number.NaN,
    "k-bigint": -(2n ** 100n),
    "k-true": true,
    "k-null": null,
    "k-undefined": { u: undefined },
    "k-date": new Date(1_767_225_600_123),
    "k-regexp": /a[b-c]+/giu,
    "k-map": new Map<unknown, unknown>([
      ["z", 1],
      [{ k: 1 }, [2]],
    ]),
    "k-set": new Set([1, "two", { three: 3 }]),
    "k-object": { nested: { deep: [1, { deeper: "x".repeat(70) }] } },
    "k-sparse": sparse,
    "k-cyclic": cyclic,
    "k-arraybuffer": shared.slice(0, 12),
    "k-views": { a: new Uint8Array(shared, 2, 4), b: new Float64Array(shared, 8, 1), c: new DataView(shared, 1, 3) },
    "k-int32": new Int32Array([1, -2, 3]),
    "k-bigint64": new BigInt64Array([-(2n ** 60n)]),
    "k-boxed": [Object(1), Object("s"), Object(false), Object(5n)],
    "k-error": error,
  };
}

/** Every ArrayBuffer reachable from `value` (through objects, arrays, maps, sets and views). */
function buffersIn(value: unknown, out: ArrayBuffer[] = [], seen = new Set<unknown>()): ArrayBuffer[] {
  if (typeof value !== "object" || value === null || seen.has(value)) return out;
  seen.add(value);
  if (value instanceof ArrayBuffer) out.push(value);
  else if (ArrayBuffer.isView(value)) out.push(value.buffer as ArrayBuffer);
  else if (value instanceof Map) for (const [k, v] of value) buffersIn(v, buffersIn(k, out, seen), seen);
  else if (value instanceof Set) for (const v of value) buffersIn(v, out, seen);
  else for (const v of Object.values(value)) buffersIn(v, out, seen);
  return out;
}

function heapBuffer(storage: ObjectStorage): ArrayBufferLike {
  return (coreOf(storage).engine as unknown as { heap: WasmHeap }).heap.bytes.buffer;
}

/** A byte pattern that differs at every offset of a page, so a misplaced read shows. */
function pattern(length: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + (i >>> 8) + seed) & 0xff;
  return bytes;
}

/** The first index where `a` and `b` differ (the shorter length when one is a prefix), or -1. */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

describe.each(["structured", "v8"] as const)("list() decoding in place (%s codec)", (codec) => {
  let storage: ObjectStorage;
  afterEach(async () => {
    await storage?.close();
  });

  /** A storage whose read cache is too small to take any listed row, holding `entries`, cache empty. */
  async function storeUncached(entries: Record<string, unknown>): Promise<ObjectStorage> {
    storage = await openStorage({ codec, cacheSoftLimitBytes: 0 });
    for (const [key, value] of Object.entries(entries)) await storage.put(key, value);
    await storage.sync();
    coreOf(storage).cache.clear();
    return storage;
  }

  it("answers every kind of value as get() does, in fresh memory, and intact after the heap is reused", async () => {
    const values = everyKind();
    await storeUncached(values);
    const listed = await storage.list();
    expect(coreOf(storage).cache.size).toBe(0); // every row was decoded in place
    const noCache = await storage.list({ noCache: true });
    expect([...listed.keys()]).toEqual(Object.keys(values).sort());
    const heap = heapBuffer(storage);
    for (const [key, value] of listed) {
      expect(value).toEqual(values[key]);
      expect(noCache.get(key)).toEqual(values[key]);
      expect(await storage.get(key, { noCache: true })).toEqual(value);
      for (const buffer of buffersIn(value)) expect(buffer).not.toBe(heap);
    }
    const views = listed.get("k-views") as { a: Uint8Array; b: Float64Array; c: DataView };
    expect(views.a.buffer.byteLength).toBe(16);
    expect(views.b.buffer).toBe(views.a.buffer);
    expect(views.c.buffer).toBe(views.a.buffer);
    expect((listed.get("k-cyclic") as { self: unknown }).self).toBe(listed.get("k-cyclic"));
    expect(Object.is(listed.get("k-negzero"), -0)).toBe(true);
    expect((listed.get("k-error") as Error).cause).toEqual({ why: [1] });
    // Two listings never share an object, and mutating one changes neither the next nor the store.
    const again = await storage.list();
    expect(again.get("k-object")).not.toBe(listed.get("k-object"));
    (listed.get("k-int32") as Int32Array)[0] = 99;
    (listed.get("k-object") as { nested: unknown }).nested = "changed";
    // Writes and deletes that reuse the heap's pages change nothing already answered.
    for (let i = 0; i < 200; i++) await storage.put(`k-filler-${i}`, pattern(3000, i));
    for (let i = 0; i < 200; i += 2) await storage.delete(`k-filler-${i}`);
    await storage.sync();
    for (const [key, value] of again) expect(value).toEqual(values[key]);
    expect((await storage.list({ prefix: "k-int32" })).get("k-int32")).toEqual(new Int32Array([1, -2, 3]));
  });

  it("reads binary values around page and overflow sizes exactly, across the paged file's chunks", async () => {
    // Up to the platform's 128 KiB value limit; the values together span several of the paged
    // file's chunks, so some of them straddle a chunk boundary of the database file.
    const sizes = [1, 4095, 4096, 4097, 65_535, 65_536, 65_537, 100_000, 131_000, 131_000, 131_000, 131_000];
    const entries: Record<string, unknown> = {};
    for (const [i, size] of sizes.entries()) {
      entries[`bin-${String(i).padStart(2, "0")}`] = pattern(size, i);
      // Small rows between the large ones, so the large ones start at varied offsets of the file.
      entries[`bin-${String(i).padStart(2, "0")}-small`] = `after ${size}`;
    }
    await storeUncached(entries);
    const total = sizes.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(3 * FILE_CHUNK_BYTES);
    const heap = heapBuffer(storage);
    for (const options of [{}, { reverse: true }, { noCache: true }, { start: "bin-05", limit: 4 }]) {
      const listed = await storage.list(options);
      expect(listed.size).toBeGreaterThan(0);
      for (const [key, value] of listed) {
        const expected = entries[key];
        if (!(expected instanceof Uint8Array)) {
          expect(value).toBe(expected);
          continue;
        }
        expect(value).toBeInstanceOf(Uint8Array);
        if (value instanceof Uint8Array) {
          expect(firstDifference(value, expected)).toBe(-1);
          expect(value.buffer).not.toBe(heap);
          expect(value.buffer.byteLength).toBe(value.byteLength);
        }
      }
    }
  });

  it("gives the same answer whether rows are decoded in place, from a copy going into the cache, or cached", async () => {
    const values = everyKind();
    await storeUncached(values);
    const inPlace = await storage.list();
    coreOf(storage).cache.setSoftLimit(1 << 22);
    const intoCache = await storage.list();
    expect(coreOf(storage).cache.size).toBe(Object.keys(values).length);
    const fromCache = await storage.list();
    for (const [key, value] of inPlace) {
      expect(intoCache.get(key)).toEqual(value);
      expect(fromCache.get(key)).toEqual(value);
    }
  });
});
