/**
 * The internal tables are created at the call that first needs them, as on the platform (`_cf_KV`
 * with the first key-value write, `_cf_METADATA` with the first alarm), as logged writes of the
 * batch: SQL sees them at once, a rolled-back savepoint takes them away, and replay creates them at
 * the same point among the batch's SQL writes, so `sqlite_schema` comes back row for row (rowids
 * and root pages included). The same behaviours are compared with workerd in
 * `test/differential/cursor-end.differential.test.ts`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { coreOf, ObjectStorage } from "../../../src/storage/object-storage";
import { openRecorded, type RecordingPersistence } from "./harness";

/** `sqlite_schema` as stored: rowid, name and root page, in rowid order. */
function schemaRows(storage: ObjectStorage): unknown[][] {
  return coreOf(storage).engine.query("SELECT rowid, name, rootpage FROM sqlite_schema ORDER BY rowid");
}

describe("internal tables", () => {
  let storage: ObjectStorage | undefined;
  afterEach(async () => {
    await storage?.close();
  });

  async function reopen(log: RecordingPersistence): Promise<ObjectStorage> {
    await storage?.close();
    storage = await ObjectStorage.open({ backend: "sqlite", persistence: log });
    return storage;
  }

  it("are made at the call, between the batch's SQL writes, and replay makes them at the same place", async () => {
    const opened = await openRecorded();
    storage = opened.storage;
    const s = storage;
    s.sql.exec("CREATE TABLE a (x)");
    await s.setAlarm(4_102_444_800_000);
    s.sql.exec("CREATE TABLE b (x)");
    await s.put("k", 1);
    s.sql.exec("CREATE TABLE c (x)");
    // Seen at once, in the batch that made them, before it commits.
    expect(
      s.sql
        .exec("SELECT name FROM sqlite_schema")
        .toArray()
        .map((r) => r.name),
    ).toEqual(["a", "_cf_METADATA", "b", "_cf_KV", "c"]);
    await s.sync();
    const live = schemaRows(s);
    expect(await (await reopen(opened.log)).get("k")).toBe(1);
    expect(await storage?.getAlarm()).toBe(4_102_444_800_000);
    expect(schemaRows(storage as ObjectStorage)).toEqual(live);
  });

  it("an alarm set and cleared in one batch leaves _cf_METADATA (as on the platform), also after replay", async () => {
    const opened = await openRecorded();
    storage = opened.storage;
    await storage.setAlarm(4_102_444_800_000);
    await storage.deleteAlarm();
    await storage.sync();
    const live = schemaRows(storage);
    expect(live.map((r) => r[1])).toEqual(["_cf_METADATA"]);
    expect(await (await reopen(opened.log)).getAlarm()).toBeNull();
    expect(schemaRows(storage as ObjectStorage)).toEqual(live);
  });

  it("a rolled-back savepoint takes the tables it made with it; clearing an alarm never set makes nothing", async () => {
    const opened = await openRecorded();
    storage = opened.storage;
    const s = storage;
    expect(() =>
      s.transactionSync(() => {
        s.kv.put("k", 1);
        void s.setAlarm(4_102_444_800_000);
        expect(schemaRows(s).map((r) => r[1])).toEqual(["_cf_KV", "_cf_METADATA"]);
        throw new Error("undo");
      }),
    ).toThrow("undo");
    await s.deleteAlarm();
    expect(schemaRows(s)).toEqual([]);
    await s.sync();
    expect(opened.log.appends.flat().flatMap((r) => r.sql)).toEqual([]);
    expect(schemaRows(await reopen(opened.log))).toEqual([]);
  });
});
