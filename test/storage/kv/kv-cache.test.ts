import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KvCache } from "../../../src/storage/kv-cache";

const bytes = (n: number): Uint8Array => new Uint8Array(n);

describe("KvCache", () => {
  it("get: returns what set stored, including null for a key known to be absent", () => {
    const cache = new KvCache(1 << 20);
    const v = Uint8Array.of(1, 2, 3);
    cache.set("a", v);
    cache.set("gone", null);
    expect(cache.get("a")?.bytes).toBe(v);
    expect(cache.get("gone")?.bytes).toBeNull();
    expect(cache.get("unknown")).toBeUndefined();
    expect(cache.size).toBe(2);
  });

  it("set: replacing an entry re-charges its size instead of adding to it", () => {
    const cache = new KvCache(1 << 20);
    cache.set("a", bytes(100));
    const once = cache.bytes;
    cache.set("a", bytes(100));
    expect(cache.bytes).toBe(once);
    cache.set("a", bytes(10));
    expect(cache.bytes).toBe(once - 90);
    expect(cache.size).toBe(1);
  });

  it("set: keeps a primitive alongside the bytes", () => {
    const cache = new KvCache(1 << 20);
    cache.set("n", bytes(3), { value: 42 });
    expect(cache.get("n")?.primitive).toEqual({ value: 42 });
    cache.set("n", bytes(3));
    expect(cache.get("n")?.primitive).toBeUndefined();
  });

  it("set: evicts least recently used entries once over the soft limit", () => {
    const cache = new KvCache(1000);
    for (const k of ["a", "b", "c", "d"]) cache.set(k, bytes(200));
    // Each entry costs its 200 bytes plus bookkeeping, so five cannot all stay under 1000.
    cache.set("e", bytes(200));
    expect(cache.bytes).toBeLessThanOrEqual(1000);
    expect(cache.get("e")).toBeDefined();
    expect(cache.get("a")).toBeUndefined();
  });

  it("get: marks an entry recently used, so it outlives older ones", () => {
    // Room for three 250-byte entries with their per-entry overhead, not four.
    const cache = new KvCache(1300);
    cache.set("a", bytes(250));
    cache.set("b", bytes(250));
    cache.set("c", bytes(250));
    expect(cache.get("a")).toBeDefined(); // now "b" is the oldest
    cache.set("d", bytes(250));
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBeDefined();
    expect(cache.get("d")).toBeDefined();
  });

  it("peek: returns the entry without marking it recently used", () => {
    const cache = new KvCache(1300);
    cache.set("a", bytes(250));
    cache.set("b", bytes(250));
    cache.set("c", bytes(250));
    expect(cache.peek("a")?.bytes?.byteLength).toBe(250); // "a" stays the oldest
    cache.set("d", bytes(250)); // evicts from the oldest end, "a" first
    expect(cache.peek("a")).toBeUndefined();
    expect(cache.peek("c")).toBeDefined();
    expect(cache.peek("d")).toBeDefined();
  });

  it("set: an entry bigger than the whole limit is not kept, and the cache stays within it", () => {
    const cache = new KvCache(100);
    cache.set("small", bytes(1));
    cache.set("huge", bytes(1000));
    expect(cache.bytes).toBeLessThanOrEqual(100);
    expect(cache.get("huge")).toBeUndefined();
  });

  it("set: charges something for tiny and absent entries, so many of them still count", () => {
    const cache = new KvCache(10_000);
    for (let i = 0; i < 1000; i++) cache.set(`k${i}`, null);
    expect(cache.bytes).toBeLessThanOrEqual(10_000);
    expect(cache.size).toBeLessThan(1000);
  });

  it("delete: forgets an entry and its bytes; deleting an unknown key is a no-op", () => {
    const cache = new KvCache(1 << 20);
    cache.set("a", bytes(10));
    cache.delete("a");
    cache.delete("never");
    expect(cache.get("a")).toBeUndefined();
    expect(cache.bytes).toBe(0);
    expect(cache.size).toBe(0);
  });

  it("clear: drops every entry", () => {
    const cache = new KvCache(1 << 20);
    cache.set("a", bytes(10));
    cache.set("b", null);
    cache.clear();
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
    expect(cache.get("a")).toBeUndefined();
  });

  it("trim: evicts down to a given target, oldest first", () => {
    const cache = new KvCache(1 << 20);
    for (const k of ["a", "b", "c"]) cache.set(k, bytes(100));
    const perEntry = cache.bytes / 3;
    cache.trim(perEntry);
    expect(cache.size).toBe(1);
    expect(cache.get("c")).toBeDefined();
    cache.trim(0);
    expect(cache.size).toBe(0);
  });

  it("setSoftLimit: lowering the limit trims at once", () => {
    const cache = new KvCache(1 << 20);
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, bytes(100));
    cache.setSoftLimit(500);
    expect(cache.bytes).toBeLessThanOrEqual(500);
    expect(cache.get("k9")).toBeDefined();
    expect(cache.get("k0")).toBeUndefined();
  });

  it("KvCache: bytes always equals the sum of live entries' sizes and stays within the limit (random ops)", () => {
    const op = fc.oneof(
      fc.record({ t: fc.constant("set" as const), k: fc.integer({ min: 0, max: 9 }), n: fc.nat(400) }),
      fc.record({ t: fc.constant("setNull" as const), k: fc.integer({ min: 0, max: 9 }) }),
      fc.record({ t: fc.constant("get" as const), k: fc.integer({ min: 0, max: 9 }) }),
      fc.record({ t: fc.constant("delete" as const), k: fc.integer({ min: 0, max: 9 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 2000 }), fc.array(op, { maxLength: 60 }), (limit, ops) => {
        const cache = new KvCache(limit);
        for (const o of ops) {
          const key = `k${o.k}`;
          if (o.t === "set") cache.set(key, bytes(o.n));
          else if (o.t === "setNull") cache.set(key, null);
          else if (o.t === "get") cache.get(key);
          else cache.delete(key);
          expect(cache.bytes).toBeLessThanOrEqual(limit);
          expect(cache.bytes).toBeGreaterThanOrEqual(0);
        }
        let sum = 0;
        for (let i = 0; i < 10; i++) {
          const e = cache.get(`k${i}`);
          if (e !== undefined) sum += e.size;
        }
        expect(cache.bytes).toBe(sum);
      }),
    );
  });
});
