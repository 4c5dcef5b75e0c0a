import { afterEach, describe, expect, it } from "vitest";
import { createMemoryPersistence } from "../../../src/durability/memory-persistence";
import type { ObjectStorage } from "../../../src/storage/object-storage";
import { coreOf } from "../../../src/storage/object-storage";
import { BACKENDS, keysOf, openStorage } from "./harness";
import { PLATFORM_ORDER } from "./helpers";

const KEY_COUNT_129 = "Maximum number of key value pairs is 128. 129 pairs were provided.";
const KEY_2049 = "Keys cannot be larger than 2048 bytes. A key of size 2049 was provided.";
const PUT_UNDEFINED = "put() called with undefined value.";
const PUT_BAD_OPTIONS =
  "put() may only be called with a single key-value pair and optional options as put(key, value, options) or with multiple key-value pairs and optional options as put(entries, options)";

/** Keys `k000`…`kNNN`. */
const manyKeys = (n: number): string[] => Array.from({ length: n }, (_, i) => `k${String(i).padStart(3, "0")}`);

/** Calls a storage method with arguments its types do not allow (the platform converts or rejects them). */
type Loose = {
  get(key: unknown, options?: unknown): Promise<unknown>;
  put(key: unknown, value?: unknown, options?: unknown): Promise<void>;
  delete(key: unknown, options?: unknown): Promise<unknown>;
};
const loose = (s: ObjectStorage): Loose => s as unknown as Loose;

/** Asserts a call returned a promise (no synchronous throw) that rejects with exactly `error`. */
async function expectRejects(call: () => Promise<unknown>, error: Error): Promise<void> {
  let p: Promise<unknown> | undefined;
  expect(() => {
    p = call();
  }).not.toThrow();
  expect(p).toBeInstanceOf(Promise);
  await expect(p).rejects.toThrow(error);
  await p?.catch((e: unknown) => {
    expect((e as Error).constructor).toBe(error.constructor);
  });
}

describe.each(BACKENDS)("key-value API (%s backend)", (backend) => {
  let storage: ObjectStorage;
  const open = async (options = {}) => {
    storage = await openStorage({ backend, ...options });
    return storage;
  };
  afterEach(async () => {
    await storage?.close();
  });

  describe("get", () => {
    it("get: returns undefined for a missing key and the value for a stored one", async () => {
      await open();
      expect(await storage.get("missing")).toBeUndefined();
      await storage.put("k", { n: 1 });
      expect(await storage.get("k")).toEqual({ n: 1 });
    });

    it("get(keys): returns a Map in UTF-8 key order, whatever the order asked", async () => {
      await open();
      for (const k of PLATFORM_ORDER) await storage.put(k, k.length);
      const asked = [...PLATFORM_ORDER].reverse();
      const got = await storage.get(asked);
      expect(keysOf(got)).toEqual(PLATFORM_ORDER);
      expect(got.get("😀")).toBe(2);
    });

    it("get(keys): omits missing keys and collapses duplicates", async () => {
      await open();
      await storage.put({ a: 1, b: 2 });
      const got = await storage.get(["b", "nope", "a", "b", "a"]);
      expect([...got]).toEqual([
        ["a", 1],
        ["b", 2],
      ]);
      expect(await storage.get([])).toEqual(new Map());
    });

    it("get(keys): accepts 128 keys and rejects 129 with the platform's RangeError", async () => {
      await open();
      await storage.put("k000", 0);
      expect((await storage.get(manyKeys(128))).size).toBe(1);
      await expectRejects(() => storage.get(manyKeys(129)), new RangeError(KEY_COUNT_129));
    });

    it("get: accepts a 2048-byte key and rejects 2049 bytes (also counted in multi-byte characters)", async () => {
      await open();
      expect(await storage.get("x".repeat(2048))).toBeUndefined();
      await expectRejects(() => storage.get("x".repeat(2049)), new RangeError(KEY_2049));
      expect(await storage.get("é".repeat(1024))).toBeUndefined();
      await expectRejects(() => storage.get(`${"é".repeat(1024)}x`), new RangeError(KEY_2049));
      await expectRejects(() => storage.get(["a", "x".repeat(2049)]), new RangeError(KEY_2049));
    });

    it("get: converts non-string keys with String()", async () => {
      await open();
      await storage.put("123", "number key");
      await storage.put("null", "null key");
      expect(await loose(storage).get(123)).toBe("number key");
      expect(await loose(storage).get(null)).toBe("null key");
      expect(keysOf((await loose(storage).get([123, "null"])) as Map<string, unknown>)).toEqual(["123", "null"]);
    });

    it("get: ignores unknown options and accepts allowConcurrency/noCache", async () => {
      await open();
      await storage.put("k", 1);
      expect(await storage.get("k", { allowConcurrency: true, noCache: true })).toBe(1);
      expect(await loose(storage).get("k", { bogus: 1 })).toBe(1);
    });
  });

  describe("keys", () => {
    it("keys: a key with a lone surrogate is a key of its own (put, put(entries), get, delete); list hands it back as its bytes read as UTF-8", async () => {
      await open();
      await storage.put({ "\uD800": 1, "\uE000": 2, "\uFFFD": 4 });
      await storage.put("x\uDC00", 3);
      const buffered = [...(await storage.list())];
      const got = [...(await storage.get(["\uD800", "\uE000", "x\uDC00", "\uFFFD"]))];
      await storage.sync();
      coreOf(storage).cache.clear();
      const flushed = [...(await storage.list())];
      // Key order is the stored bytes' (ED A0 80 < EE 80 80 < EF BF BD); each lone surrogate reads back as 3 U+FFFD.
      expect(flushed).toEqual([
        ["x\uFFFD\uFFFD\uFFFD", 3],
        ["\uFFFD\uFFFD\uFFFD", 1],
        ["\uE000", 2],
        ["\uFFFD", 4],
      ]);
      expect(got).toEqual(flushed);
      expect(buffered).toEqual(flushed);
      expect(await storage.get("\uD800")).toBe(1);
      expect(await storage.get("\uFFFD\uFFFD\uFFFD")).toBeUndefined();
      expect(await storage.delete("\uDBFF")).toBe(false);
      expect(await storage.delete("\uD800")).toBe(true);
      expect(await storage.get("\uFFFD")).toBe(4);
    });
  });

  describe("put", () => {
    it("put: overwrites an existing value", async () => {
      await open();
      await storage.put("k", 1);
      await storage.put("k", 2);
      expect(await storage.get("k")).toBe(2);
    });

    it("put: the empty key is a valid key", async () => {
      await open();
      await storage.put("", "empty");
      expect(await storage.get("")).toBe("empty");
      expect(keysOf(await storage.list())).toEqual([""]);
      expect(await storage.delete("")).toBe(true);
    });

    it("put: converts non-string keys with String()", async () => {
      await open();
      await loose(storage).put(42, "v");
      await loose(storage).put(undefined, "u");
      expect(await storage.get("42")).toBe("v");
      expect(await storage.get("undefined")).toBe("u");
    });

    it("put: rejects an undefined value (also a missing one) without writing", async () => {
      await open();
      await storage.put("k", 1);
      await expectRejects(() => storage.put("k", undefined), new TypeError(PUT_UNDEFINED));
      await expectRejects(() => loose(storage).put("k"), new TypeError(PUT_UNDEFINED));
      expect(await storage.get("k")).toBe(1);
    });

    it("put: null is a value, not a deletion", async () => {
      await open();
      await storage.put("k", null);
      expect(await storage.get("k")).toBeNull();
      expect(keysOf(await storage.list())).toEqual(["k"]);
    });

    it("put(entries): writes every entry and silently drops undefined fields", async () => {
      await open();
      await storage.put("b", "old");
      await storage.put({ a: 1, b: undefined, c: 3 });
      expect([...(await storage.list())]).toEqual([
        ["a", 1],
        ["b", "old"],
        ["c", 3],
      ]);
      await storage.put({});
      expect((await storage.list()).size).toBe(3);
    });

    it("put(entries): accepts 128 entries and rejects 129 without writing any", async () => {
      await open();
      await storage.put(Object.fromEntries(manyKeys(128).map((k) => [k, 1])));
      expect((await storage.list()).size).toBe(128);
      await storage.deleteAll();
      await expectRejects(
        () => storage.put(Object.fromEntries(manyKeys(129).map((k) => [k, 1]))),
        new RangeError(KEY_COUNT_129),
      );
      expect((await storage.list()).size).toBe(0);
    });

    it("put(entries): undefined fields do not count against the 128-key limit", async () => {
      await open();
      const entries: Record<string, unknown> = Object.fromEntries(manyKeys(128).map((k) => [k, 1]));
      entries.extra = undefined;
      await storage.put(entries);
      expect((await storage.list()).size).toBe(128);
    });

    it("put(entries): one bad entry (key size, value, clone error) rejects and writes nothing", async () => {
      await open();
      await expectRejects(() => storage.put({ a: 1, ["x".repeat(2049)]: 2 }), new RangeError(KEY_2049));
      await expect(storage.put({ a: 1, f: () => 1 })).rejects.toMatchObject({ name: "DataCloneError" });
      await expect(storage.put({ a: 1, big: "x".repeat(200_000) })).rejects.toThrow(RangeError);
      expect(await storage.list()).toEqual(new Map());
    });

    it("put(entries, options): rejects options that are not an object", async () => {
      await open();
      await expectRejects(() => loose(storage).put({ a: 1 }, 5), new TypeError(PUT_BAD_OPTIONS));
      await expectRejects(() => loose(storage).put({ a: 1 }, "opts"), new TypeError(PUT_BAD_OPTIONS));
      expect(await storage.get("a")).toBeUndefined();
      await storage.put({ a: 1 }, { allowUnconfirmed: true, noCache: true });
      expect(await storage.get("a")).toBe(1);
    });

    it("put(entries, options): null and a function are options, as the platform converts them", async () => {
      await open();
      await loose(storage).put({ a: 1 }, null);
      await loose(storage).put({ b: 2 }, () => 0);
      expect(await storage.get(["a", "b"])).toEqual(
        new Map([
          ["a", 1],
          ["b", 2],
        ]),
      );
    });

    it("put: the arguments are checked in the platform's order (key, options, value, clone, key size, value size)", async () => {
      await open();
      const big = "x".repeat(2049);
      const options3 = new TypeError(
        "Failed to execute 'put' on 'DurableObjectStorage': parameter 3 is not of type 'PutOptions'.",
      );
      const symbol = new TypeError("Cannot convert a Symbol value to a string");
      await expectRejects(() => loose(storage).put(Symbol("k"), () => 1), symbol);
      await expectRejects(() => loose(storage).put(Symbol("k"), undefined), symbol);
      await expectRejects(() => loose(storage).put(Symbol("k"), 1, 5), symbol);
      await expectRejects(() => loose(storage).put("k", undefined, 5), options3);
      await expectRejects(() => loose(storage).put("k", () => 1, "opts"), options3);
      await expectRejects(() => loose(storage).put({ a: 1 }, undefined, 5), options3);
      await expectRejects(() => loose(storage).put({ a: 1 }, null, true), options3);
      await expect(storage.put(big, () => 1)).rejects.toMatchObject({ name: "DataCloneError" });
      await expectRejects(() => storage.put(big, "v".repeat(140_000)), new RangeError(KEY_2049));
      await expectRejects(() => storage.put({ [big]: "v".repeat(140_000) }), new RangeError(KEY_2049));
      expect(await storage.list()).toEqual(new Map());
    });

    it("put: accepts a 2048-byte key and rejects 2049 bytes without writing", async () => {
      await open();
      await storage.put("x".repeat(2048), 1);
      await storage.put("😀".repeat(512), 1);
      await expectRejects(() => storage.put("x".repeat(2049), 1), new RangeError(KEY_2049));
      await expectRejects(
        () => storage.put(`${"😀".repeat(512)}é`, 1),
        new RangeError("Keys cannot be larger than 2048 bytes. A key of size 2050 was provided."),
      );
      expect((await storage.list()).size).toBe(2);
    });

    it("put: a failed put in the middle of a turn does not disturb the writes around it", async () => {
      await open();
      const first = storage.put("a", 1);
      const bad = storage.put("b", undefined);
      const last = storage.put("c", 3);
      await first;
      await expect(bad).rejects.toThrow(PUT_UNDEFINED);
      await last;
      await storage.sync();
      expect(keysOf(await storage.list())).toEqual(["a", "c"]);
    });
  });

  describe("delete", () => {
    it("delete: returns whether the key existed", async () => {
      await open();
      await storage.put("a", 1);
      expect(await storage.delete("a")).toBe(true);
      expect(await storage.delete("a")).toBe(false);
      expect(await storage.delete("never")).toBe(false);
      expect(await storage.get("a")).toBeUndefined();
    });

    it("delete(keys): counts keys that existed, duplicates once", async () => {
      await open();
      await storage.put({ a: 1, ab: 2, b: 3 });
      expect(await storage.delete(["a", "ab", "nope", "a"])).toBe(2);
      expect(keysOf(await storage.list())).toEqual(["b"]);
      expect(await storage.delete([])).toBe(0);
    });

    it("delete: sees writes not yet flushed (un-awaited put then delete)", async () => {
      await open();
      void storage.put("a", 1);
      expect(await storage.delete("a")).toBe(true);
      void storage.put("b", 1);
      void storage.delete("b");
      expect(await storage.delete("b")).toBe(false);
      void storage.put("c", 1);
      expect(await storage.delete(["c", "c", "d"])).toBe(1);
      void storage.delete("e");
      void storage.put("e", 1);
      expect(await storage.delete("e")).toBe(true);
    });

    it("delete(keys): accepts 128 keys and rejects 129 without deleting", async () => {
      await open();
      await storage.put("k000", 1);
      await expectRejects(() => storage.delete(manyKeys(129)), new RangeError(KEY_COUNT_129));
      expect(await storage.get("k000")).toBe(1);
      expect(await storage.delete(manyKeys(128))).toBe(1);
    });

    it("delete: rejects a 2049-byte key, single or among many, without deleting", async () => {
      await open();
      await storage.put("a", 1);
      await expectRejects(() => storage.delete("x".repeat(2049)), new RangeError(KEY_2049));
      await expectRejects(() => storage.delete(["a", "x".repeat(2049)]), new RangeError(KEY_2049));
      expect(await storage.get("a")).toBe(1);
    });

    it("delete: converts non-string keys with String()", async () => {
      await open();
      await storage.put("7", 1);
      expect(await loose(storage).delete(7)).toBe(true);
    });
  });

  describe("limits", () => {
    it("limits: are configurable per storage and named in the messages", async () => {
      await open({ limits: { maxKeyBytes: 8, maxValueBytes: 100, maxKeysPerCall: 2 } });
      await storage.put("12345678", 1);
      await expectRejects(
        () => storage.put("123456789", 1),
        new RangeError("Keys cannot be larger than 8 bytes. A key of size 9 was provided."),
      );
      await expectRejects(
        () => storage.get(["a", "b", "c"]),
        new RangeError("Maximum number of key value pairs is 2. 3 pairs were provided."),
      );
      await expectRejects(
        () => storage.delete(["a", "b", "c"]),
        new RangeError("Maximum number of key value pairs is 2. 3 pairs were provided."),
      );
      await expectRejects(
        () => storage.put({ a: 1, b: 2, c: 3 }),
        new RangeError("Maximum number of key value pairs is 2. 3 pairs were provided."),
      );
      await expect(storage.put("v", "x".repeat(500))).rejects.toThrow(
        /^Values cannot be larger than 100 bytes\. A value of size \d+ was provided\.$/,
      );
      expect(keysOf(await storage.list())).toEqual(["12345678"]);
    });

    it("limits: nonsense limits are refused when opening", async () => {
      await expect(openStorage({ backend, limits: { maxKeyBytes: 0 } })).rejects.toThrow(
        /^ObjectStorage\.open\(\): option "limits\.maxKeyBytes" must be an integer ≥ 1 \(bytes\); got 0\.$/,
      );
      await expect(openStorage({ backend, limits: { maxKeyBytes: 0 } })).rejects.toThrow(TypeError);
      await expect(openStorage({ backend, limits: { maxKeysPerCall: 1.5 } })).rejects.toThrow(TypeError);
      storage = await open();
    });
  });

  describe("closed storage", () => {
    it("close: every later call rejects (never throws) with ERR_CLOSED", async () => {
      await open();
      await storage.put("a", 1);
      await storage.close();
      const calls: Array<() => Promise<unknown>> = [
        () => storage.get("a"),
        () => storage.get(["a"]),
        () => storage.put("a", 2),
        () => storage.put({ a: 2 }),
        () => storage.delete("a"),
        () => storage.delete(["a"]),
        () => storage.list(),
        () => storage.deleteAll(),
        () => storage.transaction(async () => 1),
      ];
      for (const call of calls) {
        let p: Promise<unknown> | undefined;
        expect(() => {
          p = call();
        }, String(call)).not.toThrow();
        await expect(p, String(call)).rejects.toMatchObject({ code: "ERR_CLOSED" });
      }
    });
  });

  describe("options", () => {
    it("options: an argument that is not an object, null or undefined is refused with the platform's TypeError", async () => {
      await open();
      await storage.put("k", 1);
      await storage.setAlarm(Date.now() + 60_000);
      const notOfType = (method: string, position: number, type: string) =>
        new TypeError(
          `Failed to execute '${method}' on 'DurableObjectStorage': parameter ${position} is not of type '${type}'.`,
        );
      const s = storage as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      for (const bad of [5, "opts", true, 0n, Symbol("o")]) {
        await expectRejects(() => s.get?.("k", bad) as Promise<unknown>, notOfType("get", 2, "GetOptions"));
        await expectRejects(() => s.get?.(["k"], bad) as Promise<unknown>, notOfType("get", 2, "GetOptions"));
        await expectRejects(() => s.put?.("k", 2, bad) as Promise<unknown>, notOfType("put", 3, "PutOptions"));
        await expectRejects(() => s.delete?.("k", bad) as Promise<unknown>, notOfType("delete", 2, "PutOptions"));
        await expectRejects(() => s.deleteAll?.(bad) as Promise<unknown>, notOfType("deleteAll", 1, "PutOptions"));
        await expectRejects(() => s.list?.(bad) as Promise<unknown>, notOfType("list", 1, "ListOptions"));
        await expectRejects(() => s.getAlarm?.(bad) as Promise<unknown>, notOfType("getAlarm", 1, "GetAlarmOptions"));
        await expectRejects(
          () => s.setAlarm?.(Date.now() + 1000, bad) as Promise<unknown>,
          notOfType("setAlarm", 2, "SetAlarmOptions"),
        );
        await expectRejects(
          () => s.deleteAlarm?.(bad) as Promise<unknown>,
          notOfType("deleteAlarm", 1, "SetAlarmOptions"),
        );
        await expectRejects(
          () => s.transaction?.(async () => 1, bad) as Promise<unknown>,
          notOfType("transaction", 2, "TransactionOptions"),
        );
      }
      // The key converts first; a bad time before bad options, bad options before a time <= 0.
      await expectRejects(
        () => s.get?.(Symbol("k"), 5) as Promise<unknown>,
        new TypeError("Cannot convert a Symbol value to a string"),
      );
      await expectRejects(
        () => s.delete?.([1, Symbol("k")], 5) as Promise<unknown>,
        new TypeError("Cannot convert a Symbol value to a string"),
      );
      await expectRejects(() => s.setAlarm?.("soon", 5) as Promise<unknown>, notOfType("setAlarm", 1, "date"));
      await expectRejects(() => s.setAlarm?.(-1, 5) as Promise<unknown>, notOfType("setAlarm", 2, "SetAlarmOptions"));
      // Objects of any kind (arrays, functions, dates) and null are options; nothing changed above.
      for (const ok of [null, undefined, [], () => 0, new Date(0)]) {
        expect(await s.get?.("k", ok)).toBe(1);
        expect(await s.list?.(ok)).toEqual(new Map([["k", 1]]));
      }
      expect(await storage.getAlarm()).not.toBeNull();
    });

    it("transaction: a closure that is not a function rejects with the platform's TypeError", async () => {
      await open();
      const s = storage as unknown as { transaction(closure: unknown): Promise<unknown> };
      for (const bad of [undefined, null, 5, "f"]) {
        await expectRejects(
          () => s.transaction(bad),
          new TypeError(
            "Failed to execute 'transaction' on 'DurableObjectStorage': parameter 1 is not of type 'function'.",
          ),
        );
      }
    });
  });

  describe("validation", () => {
    it("validation: every failing call rejects instead of throwing, and leaves the data as it was", async () => {
      await open();
      await storage.put({ a: 1, b: 2 });
      const before = [...(await storage.list())];
      const calls: Array<() => Promise<unknown>> = [
        () => storage.get("x".repeat(2049)),
        () => storage.get(manyKeys(129)),
        () => storage.put("a", undefined),
        () => storage.put("x".repeat(2049), 1),
        () => storage.put("a", () => 1),
        () => storage.put("a", Symbol("s")),
        () => storage.put("a", "x".repeat(200_000)),
        () => storage.put(Object.fromEntries(manyKeys(129).map((k) => [k, 1]))),
        () => loose(storage).put({ a: 5 }, 5),
        () => storage.delete("x".repeat(2049)),
        () => storage.delete(manyKeys(129)),
        () => storage.list({ start: "a", startAfter: "a" }),
        () => storage.list({ limit: 0 }),
        () => storage.list({ limit: 2 ** 31 }),
      ];
      for (const call of calls) {
        let p: Promise<unknown> | undefined;
        expect(() => {
          p = call();
        }, String(call)).not.toThrow();
        await expect(p, String(call)).rejects.toBeDefined();
      }
      await storage.sync();
      expect([...(await storage.list())]).toEqual(before);
    });
  });

  describe("deleteAll", () => {
    it("deleteAll: removes every key and resolves to undefined", async () => {
      await open();
      await storage.put({ a: 1, b: 2, "😀": 3 });
      expect(await storage.deleteAll()).toBeUndefined();
      expect(await storage.list()).toEqual(new Map());
      expect(await storage.get("a")).toBeUndefined();
      await storage.put("c", 1);
      expect(keysOf(await storage.list())).toEqual(["c"]);
    });

    it("deleteAll: put(a); deleteAll(); put(b) in one turn leaves only b", async () => {
      await open();
      void storage.put("a", 1);
      void storage.deleteAll();
      void storage.put("b", 2);
      await storage.sync();
      expect([...(await storage.list())]).toEqual([["b", 2]]);
    });

    it("deleteAll: the alarm survives by default", async () => {
      await open();
      const at = Date.now() + 3_600_000;
      await storage.setAlarm(at);
      await storage.put("a", 1);
      await storage.deleteAll();
      expect(await storage.getAlarm()).toBe(at);
      await storage.sync();
      expect(await storage.getAlarm()).toBe(at);
    });

    it("deleteAll: with deleteAllDeletesAlarm the alarm goes too", async () => {
      await open({ deleteAllDeletesAlarm: true });
      await storage.setAlarm(Date.now() + 3_600_000);
      await storage.deleteAll();
      expect(await storage.getAlarm()).toBeNull();
      await storage.sync();
      expect(await storage.getAlarm()).toBeNull();
    });

    it("deleteAll: what survives (later writes, the alarm unless configured) survives a reopen too", async () => {
      for (const deleteAllDeletesAlarm of [false, true]) {
        const persistence = createMemoryPersistence();
        const first = await openStorage({ backend, persistence, deleteAllDeletesAlarm });
        const at = Date.now() + 3_600_000;
        await first.setAlarm(at);
        await first.put("a", 1);
        await first.sync();
        void first.deleteAll();
        void first.put("b", 2);
        await first.close();
        storage = await openStorage({ backend, persistence, deleteAllDeletesAlarm });
        expect([...(await storage.list())]).toEqual([["b", 2]]);
        expect(await storage.getAlarm()).toBe(deleteAllDeletesAlarm ? null : at);
        await storage.close();
      }
    });

    it("deleteAll: on an empty storage is a no-op that still resolves", async () => {
      await open();
      await storage.deleteAll();
      await storage.deleteAll();
      expect(await storage.list()).toEqual(new Map());
    });
  });
});

describe("deleteAll (sqlite backend)", () => {
  it("deleteAll: drops the whole database, SQL tables included", async () => {
    const storage = await openStorage({ backend: "sqlite" });
    storage.sql.exec("CREATE TABLE t (x INTEGER)");
    storage.sql.exec("INSERT INTO t VALUES (1)");
    await storage.put("k", 1);
    await storage.deleteAll();
    const tables = storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 't'").toArray();
    expect(tables).toEqual([]);
    expect(() => storage.sql.exec("SELECT x FROM t")).toThrow(/no such table: t/);
    expect(await storage.get("k")).toBeUndefined();
    await storage.close();
  });
});

describe("storage.kv arguments (sqlite backend)", () => {
  it("kv: a missing key or value, and list options that are not an object, throw the platform's TypeError", async () => {
    const storage = await openStorage({ backend: "sqlite" });
    const kv = storage.kv as unknown as Record<string, (...args: unknown[]) => unknown>;
    const notOfType = (method: string, position: number, type: string) =>
      new TypeError(
        `Failed to execute '${method}' on 'SyncKvStorage': parameter ${position} is not of type '${type}'.`,
      );
    expect(() => kv.get?.()).toThrow(notOfType("get", 1, "string"));
    expect(() => kv.delete?.()).toThrow(notOfType("delete", 1, "string"));
    expect(() => kv.put?.()).toThrow(notOfType("put", 1, "string"));
    expect(() => kv.put?.("k")).toThrow(notOfType("put", 2, "JsValue"));
    expect(() => kv.put?.(Symbol("k"))).toThrow(new TypeError("Cannot convert a Symbol value to a string"));
    const transactionSync = storage.transactionSync.bind(storage) as (closure: unknown) => unknown;
    expect(() => transactionSync(null)).toThrow(
      new TypeError(
        "Failed to execute 'transactionSync' on 'DurableObjectStorage': parameter 1 is not of type 'function'.",
      ),
    );
    for (const bad of [5, "opts", true]) expect(() => kv.list?.(bad)).toThrow(notOfType("list", 1, "ListOptions"));
    expect(await storage.list()).toEqual(new Map());
    // An explicit undefined is a key or a value like any other, as on the platform.
    kv.put?.(undefined, undefined);
    expect(kv.get?.(undefined)).toBeUndefined();
    expect([...storage.kv.list(null as unknown as undefined)]).toEqual([["undefined", undefined]]);
    expect(kv.delete?.(undefined)).toBe(true);
    await storage.close();
  });
});
