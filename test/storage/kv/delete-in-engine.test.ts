/**
 * delete() of a key the cache does not know deletes the row in SQLite at once (one statement answers
 * whether it existed and deletes it) and the commit skips it. These check that this shortcut keeps
 * every guarantee of a buffered delete: rollbacks restore the row, later writes in the same batch
 * win, the log replays to the same state, and a failed commit leaves nothing half-applied.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FaultyPersistence } from "../../../src/durability/faulty-persistence";
import { createMemoryPersistence } from "../../../src/durability/memory-persistence";
import { coreOf, ObjectStorage } from "../../../src/storage/object-storage";
import { BACKENDS, openRecorded } from "./harness";

describe.each(BACKENDS)("delete() of keys the cache does not know (%s backend)", (backend) => {
  let storage: ObjectStorage;
  afterEach(async () => {
    await storage?.close();
  });

  /** A storage whose keys a, b, c are stored and not cached. */
  async function stored(options = {}) {
    const opened = await openRecorded({ backend, ...options });
    storage = opened.storage;
    await storage.put({ a: 1, b: 2, c: 3 });
    await storage.sync();
    coreOf(storage).cache.clear();
    return opened;
  }

  it("answers from SQLite, deletes there once, and the batch commits the deletion", async () => {
    const { log } = await stored();
    const before = log.appends.length;
    expect(await storage.delete("a")).toBe(true);
    expect(await storage.delete("a")).toBe(false);
    expect(await storage.delete("zz")).toBe(false);
    expect(await storage.delete(["b", "b", "zz"])).toBe(1);
    await storage.sync();
    expect(log.kvWrites.slice(before)).toEqual([
      [
        ["a", false],
        ["b", false],
      ],
    ]);
    expect([...(await storage.list()).keys()]).toEqual(["c"]);
  });

  it("a rolled-back transaction brings the deleted row back", async () => {
    await stored();
    await expect(
      storage.transaction(async (txn) => {
        expect(await txn.delete("a")).toBe(true);
        expect(await txn.get("a")).toBeUndefined();
        throw new Error("undo");
      }),
    ).rejects.toThrow("undo");
    expect(await storage.get("a")).toBe(1);
    coreOf(storage).cache.clear();
    expect(await storage.get("a")).toBe(1);
  });

  it("a nested transaction's deletion joins the outer one and goes with its rollback", async () => {
    await stored();
    let innerDone = false;
    await storage.transaction(async (outer) => {
      await storage.transaction(async (inner) => {
        expect(await inner.delete("b")).toBe(true);
      });
      innerDone = true;
      expect(await outer.get("b")).toBeUndefined();
      outer.rollback();
    });
    expect(innerDone).toBe(true);
    coreOf(storage).cache.clear();
    expect(await storage.get("b")).toBe(2);
  });

  it("a put after the deletion wins; a delete after that put deletes again", async () => {
    const { log } = await stored();
    void storage.delete("a");
    void storage.put("a", "again");
    await storage.sync();
    coreOf(storage).cache.clear();
    expect(await storage.get("a")).toBe("again");
    void storage.delete("c");
    void storage.put("c", "back");
    void storage.delete("c");
    await storage.sync();
    coreOf(storage).cache.clear();
    expect(await storage.get("c")).toBeUndefined();
    // the log replays to the same state
    const persistence = log;
    await storage.close();
    storage = await ObjectStorage.open({ backend, persistence });
    expect(Object.fromEntries(await storage.list())).toEqual({ a: "again", b: 2 });
  });

  it("a commit that fails after a deletion leaves the row, and the storage resets", async () => {
    const faulty = new FaultyPersistence(createMemoryPersistence());
    storage = await ObjectStorage.open({ backend, persistence: faulty });
    await storage.put({ a: 1, b: 2 });
    await storage.sync();
    coreOf(storage).cache.clear();
    faulty.failNextAppend();
    void storage.put("b", 20);
    const deleted = storage.delete("a");
    await expect(deleted).resolves.toBe(true);
    await expect(storage.sync()).rejects.toThrow();
    await storage.close().catch(() => {});
    storage = await ObjectStorage.open({ backend, persistence: faulty });
    expect(Object.fromEntries(await storage.list())).toEqual({ a: 1, b: 2 });
  });

  it("a lookup that finds nothing leaves no transaction open (a snapshot can still be taken)", async () => {
    await stored();
    expect(await storage.delete("nothing")).toBe(false);
    await storage.sync();
    expect(() => coreOf(storage).engine.exportBytes()).not.toThrow();
  });
});
