/**
 * The exact object `next()` returns once a cursor has no more rows (issue 15), compared with
 * workerd: for an empty result, after the last row, for a write, and through `raw()`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Op } from "./ops";
import { maskPendingMismatches } from "./pending-mismatches";
import { runOnSubject } from "./subject";
import { DELETE_ALL_DELETES_ALARM_DATE, startWorkerd, type WorkerdHandle } from "./workerd";

let workerd: WorkerdHandle;

beforeAll(async () => {
  workerd = await startWorkerd();
});

afterAll(async () => {
  await workerd?.dispose();
});

describe("cursor end shape (differential)", () => {
  it("next() at the end is exactly the platform's object", async () => {
    const ops: Op[] = [
      { op: "sql", query: "CREATE TABLE t (a)" },
      { op: "sql", query: "SELECT a FROM t", read: "nextShape" },
      { op: "sql", query: "SELECT a FROM t WHERE a > 5", read: "nextShape" },
      { op: "sql", query: "INSERT INTO t VALUES (1)", read: "nextShape" },
      { op: "sql", query: "SELECT a FROM t", read: "nextShape" },
      { op: "sql", query: "SELECT count(*) AS n FROM t", read: "nextShape" },
      { op: "sql", query: "DELETE FROM t RETURNING a", read: "nextShape" },
    ];
    const expected = await workerd.run(ops);
    expect(expected.every((r) => r.ok)).toBe(true);
    expect(await runOnSubject(ops)).toEqual(expected);
  });
});

describe("a statement before the last left at a row (differential)", () => {
  it("holds its table: DROP TABLE or DROP INDEX of it is locked until the query's next run resets it", async () => {
    const ops: Op[] = [
      { op: "sql", query: "CREATE TABLE t (a, b)" },
      { op: "sql", query: "CREATE INDEX tb ON t(b)" },
      { op: "sql", query: "INSERT INTO t VALUES (1, 1), (2, 2)" },
      { op: "sql", query: "CREATE TABLE u (a)" },
      { op: "sql", query: "SELECT a FROM t; SELECT count(*) AS n FROM u" },
      { op: "sql", query: "DROP TABLE t" },
      { op: "sql", query: "DROP INDEX tb" },
      { op: "sql", query: "DROP TABLE u" },
      { op: "sql", query: "INSERT INTO t VALUES (3, 3)" },
      { op: "sql", query: "SELECT a FROM t; SELECT count(*) AS n FROM u" },
      { op: "sql", query: "DROP TABLE t" },
      { op: "sql", query: "SELECT a FROM t WHERE a > 5; SELECT 1 AS one" },
      { op: "sql", query: "DROP TABLE u" },
      { op: "sql", query: "SELECT name FROM sqlite_master ORDER BY name" },
    ];
    const expected = await workerd.run(ops);
    // The platform's answers this test pins: locked, then free once the held statement was reset.
    expect(expected[5]).toEqual({
      ok: false,
      error: { name: "Error", message: "database table is locked: SQLITE_LOCKED" },
    });
    expect(expected[10]?.ok).toBe(true);
    expect(await runOnSubject(ops)).toEqual(expected);
  });
});

describe("pragmas that report on the database (differential)", () => {
  it("PRAGMA data_version, PRAGMA optimize and pragma_* functions answer as on the platform", async () => {
    const ops: Op[] = [
      // A fresh object: the platform's connection has taken its first read in WAL mode (2, not 1).
      { op: "sql", query: "PRAGMA data_version" },
      { op: "put", key: "k", value: 1 },
      { op: "sql", query: "PRAGMA data_version" },
      { op: "sql", query: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE)" },
      { op: "sql", query: "INSERT INTO t (name) VALUES ('a'), ('b'), ('c')" },
      { op: "sql", query: "PRAGMA data_version" },
      { op: "sql", query: "SELECT * FROM pragma_data_version" },
      { op: "sql", query: "PRAGMA optimize" },
      { op: "sql", query: "SELECT name, type, pk FROM pragma_table_info('t') ORDER BY cid" },
      { op: "sql", query: "SELECT name FROM pragma_index_list('t')" },
      { op: "sql", query: "SELECT * FROM pragma_table_info('_cf_KV')" },
      { op: "sql", query: "SELECT * FROM pragma_foreign_keys" },
      // deleteAll: the platform reopens its database (in WAL mode again).
      { op: "deleteAll" },
      { op: "sql", query: "PRAGMA data_version" },
      { op: "sql", query: "SELECT data_version FROM pragma_data_version" },
    ];
    const expected = await workerd.run(ops);
    expect(maskPendingMismatches(ops, expected, await runOnSubject(ops))).toEqual(expected);
  });

  it("PRAGMA optimize reads its mask as the platform's number parser does (hexadecimal, sign, white space)", async () => {
    const masks = [
      "0x10002",
      "0X2",
      "-0x1",
      "+0x2",
      "'0x2'",
      "'-0x2'",
      "' 2'",
      "' -2'",
      "'2 '",
      "'0x'",
      "'0x-2'",
      "0x7fffffff",
      "0xffffffff",
      "-0x80000000",
      "-0x80000001",
      "2147483648",
      "1e3",
    ];
    const ops: Op[] = [
      { op: "sql", query: "CREATE TABLE t (id INTEGER PRIMARY KEY, v UNIQUE)" },
      { op: "sql", query: "INSERT INTO t (v) VALUES (1), (2), (3)" },
      { op: "sync" },
      ...masks.map((mask): Op => ({ op: "sql", query: `PRAGMA optimize(${mask})` })),
      { op: "sql", query: "PRAGMA optimize = 0x10003" },
    ];
    const expected = await workerd.run(ops);
    expect(expected.filter((r) => !r.ok)).toHaveLength(7);
    expect(maskPendingMismatches(ops, expected, await runOnSubject(ops))).toEqual(expected);
  });

  it("buffered key-value writes are in the database when SQL looks: PRAGMA optimize(-1), databaseSize, changes()", async () => {
    const counts: Op = { op: "sql", query: "SELECT changes() AS c, total_changes() AS t" };
    const ops: Op[] = [
      { op: "put", key: "k", value: 1 },
      // The first batch: the platform's put wrote the row, so the table is not empty.
      { op: "sql", query: "PRAGMA optimize(-1)" },
      counts,
      { op: "put", key: "big", value: "x".repeat(20_000) },
      { op: "databaseSize" },
      {
        op: "transactionSync",
        ops: [{ op: "kvPut", key: "big2", value: "y".repeat(20_000) }, { op: "databaseSize" }, counts],
        throwAtEnd: true,
      },
      { op: "databaseSize" },
      counts,
      { op: "delete", key: "k" },
      counts,
      { op: "put", key: "big", value: "z".repeat(30_000) },
      { op: "sync" },
      { op: "databaseSize" },
      { op: "sql", query: "PRAGMA optimize(-1)" },
      { op: "get", key: "big2" },
    ];
    const expected = await workerd.run(ops);
    expect(expected.slice(0, 5).every((r) => r.ok)).toBe(true);
    expect(maskPendingMismatches(ops, expected, await runOnSubject(ops))).toEqual(expected);
  });

  it("internal tables appear when the platform makes them: _cf_KV on the first write, _cf_METADATA on the first alarm", async () => {
    const schema: Op = { op: "sql", query: "SELECT name FROM sqlite_schema", read: "raw" };
    const ops: Op[] = [
      schema,
      { op: "put", key: "k", value: 1 },
      schema,
      { op: "deleteAlarm" },
      schema,
      { op: "getAlarm" },
      // At the call, in the same batch (before it commits), in the order they were made.
      { op: "setAlarm", time: 4_102_444_800_000 },
      schema,
      { op: "databaseSize" },
      { op: "sync" },
      schema,
      { op: "deleteAlarm" },
      schema,
      { op: "databaseSize" },
      { op: "deleteAll" },
      schema,
    ];
    const expected = await workerd.run(ops);
    expect(expected.every((r) => r.ok)).toBe(true);
    expect(await runOnSubject(ops)).toEqual(expected);
  });

  it("an alarm creates only _cf_METADATA, also when cleared in the same batch, rolled back, or kept by deleteAll", async () => {
    const schema: Op = { op: "sql", query: "SELECT name FROM sqlite_schema", read: "raw" };
    const ops: Op[] = [
      {
        op: "transactionSync",
        ops: [{ op: "sql", query: "CREATE TABLE t (a)" }, { op: "kvPut", key: "x", value: 1 }, schema],
        throwAtEnd: true,
      },
      schema,
      { op: "setAlarm", time: 4_102_444_800_000 },
      { op: "deleteAlarm" },
      { op: "sync" },
      schema,
      { op: "databaseSize" },
      { op: "put", key: "k", value: 1 },
      { op: "sql", query: "CREATE TABLE t (a)" },
      schema,
      { op: "setAlarm", time: 4_102_444_800_000 },
      { op: "deleteAll" },
      schema,
      { op: "databaseSize" },
      { op: "sync" },
      { op: "getAlarm" },
      schema,
    ];
    const expected = await workerd.run(ops);
    expect(expected.slice(1).every((r) => r.ok)).toBe(true);
    expect(await runOnSubject(ops)).toEqual(expected);
  });

  it("deleteAll that deletes the alarm (newer compatibility dates) leaves no _cf_METADATA", async () => {
    const newer = await startWorkerd({ compatibilityDate: DELETE_ALL_DELETES_ALARM_DATE });
    try {
      const schema: Op = { op: "sql", query: "SELECT name FROM sqlite_schema", read: "raw" };
      const ops: Op[] = [
        { op: "setAlarm", time: 4_102_444_800_000 },
        { op: "sync" },
        { op: "deleteAll" },
        schema,
        { op: "databaseSize" },
        { op: "sync" },
        { op: "getAlarm" },
        schema,
      ];
      const expected = await newer.run(ops);
      expect(expected.every((r) => r.ok)).toBe(true);
      expect(await runOnSubject(ops, { deleteAllDeletesAlarm: true })).toEqual(expected);
    } finally {
      await newer.dispose();
    }
  });
});
