/**
 * list() takes a row's value from the read cache when the cache holds its key (the cached bytes,
 * and the cached decoded value when it is a primitive) instead of copying and decoding the row
 * again. These check that the shortcut is invisible: the same values whether or not the cache holds
 * the keys, fresh copies of objects on every call, a plain Map, and undecodable data failing the
 * call as it does without the cache.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { ActorStoreError } from "../../../src/errors";
import { coreOf, type ObjectStorage } from "../../../src/storage/object-storage";
import type { ListOptions } from "../../../src/storage/options";
import { BACKENDS, openStorage } from "./harness";

/** What the rejection of `p` says (class, code, message), to compare two failures. */
async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    const code = e instanceof ActorStoreError ? e.code : "";
    return `${(e as Error).constructor.name} ${code} ${(e as Error).message}`;
  }
  throw new Error("expected a rejection");
}

describe.each(BACKENDS)("list() served from the read cache (%s backend)", (backend) => {
  let storage: ObjectStorage;
  afterEach(async () => {
    await storage?.close();
  });

  it("gives the same entries with the keys cached, evicted, or read with noCache", async () => {
    storage = await openStorage({ backend });
    const values: Record<string, unknown> = {
      a: "text",
      b: 42,
      c: { nested: [1, 2, { deep: true }] },
      d: null,
      e: new Map([[1, new Set(["x"])]]),
      f: new Uint8Array([1, 2, 3]),
      g: 12345678901234567890n,
      h: new Date(5),
    };
    await storage.put(values);
    await storage.sync();
    coreOf(storage).cache.clear();
    const cold = await storage.list();
    expect(coreOf(storage).cache.size).toBe(Object.keys(values).length); // the listing cached them
    const warm = await storage.list();
    const again = await storage.list();
    const uncached = await storage.list({ noCache: true });
    coreOf(storage).cache.clear();
    const afterClear = await storage.list({ noCache: true });
    for (const m of [cold, warm, again, uncached, afterClear]) {
      expect([...m.keys()]).toEqual(Object.keys(values));
      expect(m).toEqual(new Map(Object.entries(values)));
    }
  });

  it("lists a long range whose first rows are not cached and whose later ones are", async () => {
    storage = await openStorage({ backend });
    const entries: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) entries[`k${String(i).padStart(3, "0")}`] = i % 3 === 0 ? { i } : `v${i}`;
    await storage.put(entries);
    await storage.sync();
    coreOf(storage).cache.clear();
    await storage.list({ start: "k040" }); // caches k040…k099 only
    const listed = await storage.list();
    expect(listed).toEqual(new Map(Object.entries(entries)));
    expect(await storage.list({ reverse: true, limit: 70 })).toEqual(
      new Map(Object.entries(entries).reverse().slice(0, 70)),
    );
  });

  it("hands out a fresh copy of an object value each time: mutating one changes no later read", async () => {
    storage = await openStorage({ backend });
    await storage.put("k", { list: [1], bytes: new Uint8Array([7]) });
    await storage.sync();
    await storage.list(); // now cached
    const first = (await storage.list()).get("k") as { list: number[]; bytes: Uint8Array };
    first.list.push(2);
    first.bytes[0] = 99;
    const second = (await storage.list()).get("k") as { list: number[]; bytes: Uint8Array };
    expect(second).not.toBe(first);
    expect(second.bytes.buffer).not.toBe(first.bytes.buffer);
    expect(second).toEqual({ list: [1], bytes: new Uint8Array([7]) });
    expect(await storage.get("k")).toEqual({ list: [1], bytes: new Uint8Array([7]) });
    expect((await storage.get(["k"])).get("k")).toEqual({ list: [1], bytes: new Uint8Array([7]) });
  });

  it("answers a plain Map whose every way of reading gives the same values", async () => {
    storage = await openStorage({ backend });
    await storage.put({ x: "one", y: { two: 2 }, z: 3 });
    await storage.sync();
    await storage.list();
    const m = await storage.list<unknown>();
    expect(Object.getPrototypeOf(m)).toBe(Map.prototype);
    const viaForEach: Array<[string, unknown]> = [];
    m.forEach((v, k) => {
      viaForEach.push([k, v]);
    });
    const expected = [
      ["x", "one"],
      ["y", { two: 2 }],
      ["z", 3],
    ];
    expect([...m]).toEqual(expected);
    expect([...m.entries()]).toEqual(expected);
    expect(viaForEach).toEqual(expected);
    expect([...m.keys()].map((k) => m.get(k))).toEqual(expected.map((e) => e[1]));
    expect([...m.values()]).toEqual(expected.map((e) => e[1]));
    expect(structuredClone(m)).toEqual(new Map(expected as Array<[string, unknown]>));
  });

  it("sees a committed overwrite and a buffered one, never the value cached before", async () => {
    storage = await openStorage({ backend });
    await storage.put({ a: "old", b: 1 });
    await storage.sync();
    await storage.list();
    await storage.list(); // the decoded primitives are now cached too
    void storage.put("a", "buffered");
    expect((await storage.list()).get("a")).toBe("buffered");
    await storage.sync();
    expect((await storage.list()).get("a")).toBe("buffered");
    await storage.put("b", { now: "object" });
    await storage.sync();
    expect(await storage.list()).toEqual(
      new Map<string, unknown>([
        ["a", "buffered"],
        ["b", { now: "object" }],
      ]),
    );
    await storage.delete("a");
    await storage.sync();
    expect([...(await storage.list()).keys()]).toEqual(["b"]);
  });

  it("agrees with a listing of the cold store after random writes, with a cache that fits some entries", async () => {
    const key = fc.constantFrom("a", "b", "c", "d", "e", "f", "g", "h");
    const value = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.integer(),
      fc.record({ n: fc.integer() }),
      fc.constant(null),
    );
    const op = fc.oneof(
      fc.record({ put: key, value }),
      fc.record({ del: key }),
      fc.record({
        list: fc.record({
          start: fc.option(key, { nil: undefined }),
          limit: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
          reverse: fc.boolean(),
        }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), fc.integer({ min: 0, max: 2000 }), async (ops, cacheBytes) => {
        const s = await openStorage({ backend, cacheSoftLimitBytes: cacheBytes });
        try {
          for (const o of ops) {
            if ("put" in o) await s.put(o.put, o.value);
            else if ("del" in o) await s.delete(o.del);
            else {
              const options: ListOptions = {};
              if (o.list.start !== undefined) options.start = o.list.start;
              if (o.list.limit !== undefined) options.limit = o.list.limit;
              options.reverse = o.list.reverse;
              await s.sync();
              const listed = await s.list(options);
              coreOf(s).cache.clear();
              expect([...(await s.list({ ...options, noCache: true }))]).toEqual([...listed]);
            }
          }
        } finally {
          await s.close();
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe("list() over a value that cannot be decoded", () => {
  let storage: ObjectStorage;
  afterEach(async () => {
    await storage?.close();
  });

  /** A storage holding `ok` and a row `bad` whose bytes no codec wrote (planted in the engine). */
  async function withBadRow(): Promise<ObjectStorage> {
    storage = await openStorage();
    await storage.put({ ok: "fine", zz: "after" });
    await storage.sync();
    coreOf(storage).engine.query("INSERT INTO _cf_KV VALUES (?, ?)", ["bad", new Uint8Array([0x7a, 0x01])]);
    coreOf(storage).cache.clear();
    return storage;
  }

  it("fails the call with the error get() gives, whether or not the bytes are cached", async () => {
    await withBadRow();
    const fromEngine = await failure(storage.list());
    expect(fromEngine).toMatch(/ActorStoreError ERR_DESERIALIZATION Stored value starts with unknown byte 0x7a/);
    // get() caches the bytes before it fails to decode them: the listing now takes them from there.
    const fromGet = await failure(storage.get("bad"));
    expect(coreOf(storage).cache.peek("bad")?.bytes).toEqual(new Uint8Array([0x7a, 0x01]));
    expect(await failure(storage.list())).toBe(fromGet);
    expect(fromGet).toBe(fromEngine);
    expect(await failure(storage.list({ noCache: true }))).toBe(fromEngine);
    // Ranges without the bad row still list, and a failed listing cached nothing wrong.
    expect([...(await storage.list({ start: "c" }))]).toEqual([
      ["ok", "fine"],
      ["zz", "after"],
    ]);
    expect([...(await storage.list({ end: "bad" }))]).toEqual([]);
    expect(await failure(storage.list({ prefix: "b" }))).toBe(fromEngine);
  });

  it("fails again on every later call: no decoded value is remembered for it", async () => {
    await withBadRow();
    for (let i = 0; i < 3; i++) {
      expect(await failure(storage.list({ limit: 2 }))).toMatch(/ERR_DESERIALIZATION/);
    }
    await storage.put("bad", "repaired");
    await storage.sync();
    expect([...(await storage.list())]).toEqual([
      ["bad", "repaired"],
      ["ok", "fine"],
      ["zz", "after"],
    ]);
  });
});
