import { afterEach, describe, expect, it } from "vitest";
import type { ObjectStorage } from "../../../src/storage/object-storage";
import { coreOf } from "../../../src/storage/object-storage";
import { BACKENDS, keysOf, openRecorded, openStorage, type RecordingPersistence } from "./harness";
import { macrotask } from "./helpers";

describe.each(BACKENDS)("cache and implicit batches (%s backend)", (backend) => {
  let storage: ObjectStorage;
  let log: RecordingPersistence;
  const open = async (options = {}) => {
    ({ storage, log } = await openRecorded({ backend, ...options }));
  };
  afterEach(async () => {
    await storage?.close();
  });

  it("get: returns a put value before the batch is flushed", async () => {
    await open();
    void storage.put("k", "v");
    expect(await storage.get("k")).toBe("v");
    expect(await storage.get(["k"])).toEqual(new Map([["k", "v"]]));
    expect(log.appends).toEqual([]);
    await storage.sync();
    expect(log.kvWrites).toEqual([[["k", true]]]);
  });

  it("put: writes issued with no await between them commit as one batch", async () => {
    await open();
    await storage.put("gone", 0);
    await storage.sync();
    const before = log.appends.length;
    void storage.put("a", 1);
    void storage.put({ b: 2, c: 3 });
    void storage.delete("gone");
    void storage.delete("never-existed");
    await storage.sync();
    const batches = log.kvWrites.slice(before);
    expect(batches).toHaveLength(1);
    expect(new Set(batches[0])).toEqual(
      new Set([
        ["a", true],
        ["b", true],
        ["c", true],
        ["gone", false],
      ]),
    );
  });

  it("put: the last write of a key in a batch wins, and only it is logged", async () => {
    await open();
    void storage.put("k", 1);
    void storage.put("k", 2);
    void storage.delete("k");
    void storage.put("k", 3);
    await storage.sync();
    expect(log.appends).toHaveLength(1);
    expect(log.appends[0]?.[0]?.kv).toHaveLength(1);
    expect(await storage.get("k")).toBe(3);
  });

  it("put: awaiting an already-resolved storage promise does not split the batch", async () => {
    await open();
    void storage.put("a1", 1);
    await storage.put("a2", 2);
    await storage.get("a1");
    await Promise.resolve();
    void storage.put("a3", 3);
    await storage.sync();
    expect(log.kvWrites).toEqual([
      [
        ["a1", true],
        ["a2", true],
        ["a3", true],
      ],
    ]);
  });

  it("put: awaiting a macrotask splits the batch", async () => {
    await open();
    void storage.put("a", 1);
    await macrotask();
    void storage.put("b", 2);
    await storage.sync();
    expect(log.kvWrites).toEqual([[["a", true]], [["b", true]]]);
  });

  it("put: awaiting sync() splits the batch", async () => {
    await open();
    void storage.put("a", 1);
    await storage.sync();
    void storage.put("b", 2);
    await storage.sync();
    expect(log.kvWrites).toEqual([[["a", true]], [["b", true]]]);
  });

  it("put: a rejected write inside a batch is not part of it", async () => {
    await open();
    void storage.put("a", 1);
    await expect(storage.put("b", undefined)).rejects.toThrow(TypeError);
    void storage.put("c", 3);
    await storage.sync();
    expect(log.kvWrites).toEqual([
      [
        ["a", true],
        ["c", true],
      ],
    ]);
  });

  it("get: sees the state at the time of the call, not later writes", async () => {
    await open();
    await storage.put("k", 1);
    const first = storage.get("k");
    void storage.put("k", 2);
    const many = storage.get(["k"]);
    void storage.delete("k");
    expect(await first).toBe(1);
    expect(await many).toEqual(new Map([["k", 2]]));
    expect(await storage.get("k")).toBeUndefined();
  });

  it("list: returns the snapshot at the time of the call, not later writes", async () => {
    await open();
    await storage.put({ a: 1, b: 2 });
    await storage.sync();
    const listed = storage.list();
    void storage.put("c", 3);
    void storage.delete("a");
    void storage.put("b", 20);
    expect([...(await listed)]).toEqual([
      ["a", 1],
      ["b", 2],
    ]);
    expect([...(await storage.list())]).toEqual([
      ["b", 20],
      ["c", 3],
    ]);
  });

  it("getAlarm: reports the alarm at the time of the call, not a later setAlarm", async () => {
    await open();
    const at = Date.now() + 60_000;
    const before = storage.getAlarm();
    void storage.setAlarm(at);
    const after = storage.getAlarm();
    void storage.deleteAlarm();
    expect(await before).toBeNull();
    expect(await after).toBe(at);
    expect(await storage.getAlarm()).toBeNull();
  });

  it("delete: the count it reports is the state at the time of the call", async () => {
    await open();
    await storage.put("a", 1);
    const deleted = storage.delete("a");
    void storage.put("a", 2);
    expect(await deleted).toBe(true);
    expect(await storage.get("a")).toBe(2);
  });

  it("sync: resolves only once every pending write, allowUnconfirmed included, has been appended", async () => {
    await open();
    const gate = log.hold();
    void storage.put("a", 1, { allowUnconfirmed: true });
    let synced = false;
    const sync = storage.sync().then(() => {
      synced = true;
    });
    await macrotask();
    await macrotask();
    expect(log.appends).toHaveLength(1); // committed and handed to the adapter…
    expect(log.durableAppends).toBe(0); // …but not durable yet
    expect(synced).toBe(false);
    gate.resolve();
    await sync;
    expect(synced).toBe(true);
    expect(log.durableAppends).toBe(1);
  });

  it("sync: called after the commit but before the append is durable still waits for it", async () => {
    await open();
    const gate = log.hold();
    void storage.put("a", 1);
    await macrotask();
    expect(log.appends).toHaveLength(1);
    let synced = false;
    const sync = storage.sync().then(() => {
      synced = true;
    });
    await macrotask();
    expect(synced).toBe(false);
    gate.resolve();
    await sync;
    expect(log.durableAppends).toBe(1);
  });

  it("sync: waits for every earlier batch, not just the newest", async () => {
    await open();
    const first = log.hold();
    void storage.put("a", 1);
    await macrotask();
    log.release();
    void storage.put("b", 2, { allowUnconfirmed: true });
    let synced = false;
    const sync = storage.sync().then(() => {
      synced = true;
    });
    await macrotask();
    await macrotask();
    expect(synced).toBe(false);
    first.resolve();
    await sync;
    expect(log.durableAppends).toBe(2);
  });

  it("sync: rejects when the batch cannot be made durable, and the storage then refuses work", async () => {
    await open();
    await storage.put("kept", 1);
    await storage.sync();
    log.failNext(new Error("disk on fire"));
    void storage.put("lost", 1);
    const sync = storage.sync();
    await expect(sync).rejects.toThrow("Internal error in Durable Object storage write caused object to be reset.");
    await expect(storage.get("kept")).rejects.toThrow(
      "Internal error in Durable Object storage write caused object to be reset.",
    );
    await expect(storage.put("more", 1)).rejects.toThrow(/caused object to be reset/);
    await storage.close();
    storage = await openStorage({ backend, persistence: log });
    expect(keysOf(await storage.list())).toEqual(["kept"]);
  });

  it("sync: after a transaction resolves, waits until its commit is durable", async () => {
    await open();
    const gate = log.hold();
    await storage.transaction(async (txn) => {
      await txn.put("t", 1, { allowUnconfirmed: true });
    });
    let synced = false;
    const sync = storage.sync().then(() => {
      synced = true;
    });
    await macrotask();
    expect(log.appends).toHaveLength(1);
    expect(synced).toBe(false);
    gate.resolve();
    await sync;
    expect(log.durableAppends).toBe(1);
  });

  it("sync: resolves to undefined when nothing is pending", async () => {
    await open();
    expect(await storage.sync()).toBeUndefined();
    expect(log.appends).toEqual([]);
  });

  it("sync: waits for deletes, deleteAll, alarm changes and unconfirmed writes", async () => {
    await open();
    await storage.put("a", 1);
    await storage.sync();
    for (const write of [
      () => storage.delete("a"),
      () => storage.deleteAll(),
      () => storage.setAlarm(Date.now() + 60_000),
      () => storage.deleteAlarm(),
      () => storage.put("u", 1, { allowUnconfirmed: true }),
      () => storage.delete("u", { allowUnconfirmed: true }),
    ]) {
      const before = log.durableAppends;
      const gate = log.hold();
      void write();
      let synced = false;
      const sync = storage.sync().then(() => {
        synced = true;
      });
      await macrotask();
      expect(synced, String(write)).toBe(false);
      gate.resolve();
      log.release();
      await sync;
      expect(log.durableAppends, String(write)).toBe(before + 1);
    }
  });

  it("cache: stays within cacheSoftLimitBytes without changing any result", async () => {
    const limit = 8 * 1024;
    await open({ cacheSoftLimitBytes: limit });
    const value = (i: number) => ({ i, pad: "p".repeat(300) });
    for (let i = 0; i < 200; i += 50) {
      await storage.put(
        Object.fromEntries(Array.from({ length: 50 }, (_, j) => [`k${String(i + j).padStart(3, "0")}`, value(i + j)])),
      );
    }
    await storage.sync();
    expect(coreOf(storage).cache.bytes).toBeLessThanOrEqual(limit);
    for (let i = 0; i < 200; i += 7) {
      expect(await storage.get(`k${String(i).padStart(3, "0")}`)).toEqual(value(i));
      expect(coreOf(storage).cache.bytes).toBeLessThanOrEqual(limit);
    }
    const all = await storage.list();
    expect(all.size).toBe(200);
    expect(all.get("k199")).toEqual(value(199));
    expect(coreOf(storage).cache.bytes).toBeLessThanOrEqual(limit);
    expect((await storage.get(["k000", "k100", "k199"])).size).toBe(3);
  });

  it("cache: a read served from SQLite after eviction equals the read served from memory", async () => {
    await open({ cacheSoftLimitBytes: 1 });
    await storage.put({ a: 1, b: "two", c: { three: [3] } });
    await storage.sync();
    expect(coreOf(storage).cache.bytes).toBeLessThanOrEqual(1);
    expect(await storage.get(["a", "b", "c"])).toEqual(
      new Map<string, unknown>([
        ["a", 1],
        ["b", "two"],
        ["c", { three: [3] }],
      ]),
    );
  });

  it("noCache: never changes results of get, list, put or delete", async () => {
    await open();
    await storage.put("a", 1, { noCache: true });
    await storage.put({ b: 2 }, { noCache: true });
    expect(await storage.get("a", { noCache: true })).toBe(1);
    await storage.sync();
    expect(await storage.get("a", { noCache: true })).toBe(1);
    expect(await storage.get(["a", "b"], { noCache: true })).toEqual(
      new Map([
        ["a", 1],
        ["b", 2],
      ]),
    );
    expect(keysOf(await storage.list({ noCache: true }))).toEqual(["a", "b"]);
    expect(await storage.delete("a", { noCache: true })).toBe(true);
    expect(await storage.get("a")).toBeUndefined();
    expect(await storage.get("b")).toBe(2);
  });

  it("noCache: a noCache read of an unknown key does not fill the cache", async () => {
    await open();
    await storage.put("k", "v");
    await storage.sync();
    coreOf(storage).cache.clear();
    expect(await storage.get("k", { noCache: true })).toBe("v");
    expect(await storage.get("missing", { noCache: true })).toBeUndefined();
    await storage.list({ noCache: true });
    expect(coreOf(storage).cache.size).toBe(0);
    expect(await storage.get("k")).toBe("v");
    expect(coreOf(storage).cache.size).toBe(1);
  });

  it("noCache: a noCache put is dropped from memory once written, and reads before that see it", async () => {
    await open();
    void storage.put("k", { v: 1 }, { noCache: true });
    void storage.put({ m: 2 }, { noCache: true });
    expect(await storage.get("k")).toEqual({ v: 1 });
    await storage.sync();
    expect(coreOf(storage).cache.get("k")).toBeUndefined();
    expect(coreOf(storage).cache.get("m")).toBeUndefined();
    expect(await storage.get(["k", "m"])).toEqual(
      new Map<string, unknown>([
        ["k", { v: 1 }],
        ["m", 2],
      ]),
    );
  });

  it("list: fills the cache with the listed entries, so later reads of them are served from memory", async () => {
    await open();
    await storage.put({ a: 1, b: 2, c: 3 });
    await storage.sync();
    coreOf(storage).cache.clear();
    await storage.list({ start: "b" });
    expect(coreOf(storage).cache.get("a")).toBeUndefined();
    expect(coreOf(storage).cache.get("b")).toBeDefined();
    expect(coreOf(storage).cache.get("c")).toBeDefined();
  });

  it("transaction: commits on its own, separately from writes issued before it", async () => {
    await open();
    void storage.put("before", 1);
    await storage.transaction(async (txn) => {
      await txn.put("inside", 2);
      await txn.put("inside2", 3);
    });
    await storage.sync();
    expect(log.kvWrites).toEqual([
      [["before", true]],
      [
        ["inside", true],
        ["inside2", true],
      ],
    ]);
  });

  it("reopen: what was synced survives close and reopen over the same persistence", async () => {
    await open();
    await storage.put({ a: 1, "😀": { x: [1] } });
    await storage.delete("a");
    await storage.sync();
    await storage.close();
    storage = await openStorage({ backend, persistence: log });
    expect([...(await storage.list())]).toEqual([["😀", { x: [1] }]]);
  });
});
