/**
 * A statement that names a schema: SQLite resolves it before the platform's authorizer sees the
 * statement, so a schema it does not know fails with SQLite's `unknown database <name as
 * written>` at the name's offset (PRAGMA, CREATE, ANALYZE, REINDEX, VACUUM), and an object that
 * is not there (any in a schema SQLite does not know; anything in temp but its schema table) fails
 * with `no such table: s.x` or, with IF EXISTS, does nothing. Only what exists, or what would be
 * created in temp, reaches the authorizer, which refuses it. Compared through Miniflare.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Op } from "./ops";
import { runOnSubject } from "./subject";
import { startWorkerd, type WorkerdHandle } from "./workerd";

let workerd: WorkerdHandle;
beforeAll(async () => {
  workerd = await startWorkerd();
});
afterAll(async () => {
  await workerd?.dispose();
});

/** The statements on one object, then what the main and temp schemas hold. */
async function expectSameAsWorkerd(queries: readonly string[]): Promise<void> {
  const ops: Op[] = [
    { op: "sql", query: "CREATE TABLE t (a)" },
    { op: "put", key: "k", value: 1 },
    ...queries.map((query): Op => ({ op: "sql", query, read: "toArray" })),
    { op: "sql", query: "SELECT type, name FROM sqlite_master ORDER BY name", read: "toArray" },
    { op: "sql", query: "SELECT type, name FROM temp.sqlite_master ORDER BY name", read: "toArray" },
  ];
  const expected = await workerd.run(ops);
  const actual = await runOnSubject(ops);
  const paired = (results: readonly unknown[]) => results.map((r, i) => [ops[i], r]);
  expect(paired(actual)).toEqual(paired(expected));
}

describe("sql differential: schema names SQLite does not know, or that hold nothing", () => {
  it("PRAGMA: unknown database, at the schema's offset, however it is spelled or placed", async () => {
    await expectSameAsWorkerd([
      "PRAGMA nosuch.x = 1",
      "PRAGMA nosuch.user_version",
      "PRAGMA nosuch.table_info(t)",
      "PRAGMA NoSuch.writable_schema = 1",
      "PRAGMA nosuch.x = -1",
      "/* c */ PRAGMA [nosuch].x",
      "PRAGMA `nosuch`.user_version",
      "PRAGMA 'nosuch'.user_version",
      'PRAGMA "nosuch".table_info(t)',
      "PRAGMA  nosuch . x",
      "PRAGMA é.x",
      "PRAGMA _cf_x.x",
      "EXPLAIN PRAGMA nosuch.x",
      "EXPLAIN QUERY PLAN PRAGMA nosuch.x",
      "SELECT 1;   PRAGMA nosuch.x",
      "PRAGMA nosuch.x; SELECT 1",
      // Parse errors still come first; temp and main are known (temp is refused).
      "PRAGMA nosuch.x = x'01'",
      "PRAGMA nosuch.x(",
      "PRAGMA temp.user_version",
      "PRAGMA TEMP.table_info(t)",
      "PRAGMA main.table_info(t)",
    ]);
  });

  it("CREATE, ANALYZE, REINDEX, VACUUM: unknown database; TEMP qualified by another schema: SQLite's error", async () => {
    await expectSameAsWorkerd([
      "CREATE TABLE nosuch.x (a)",
      "CREATE TABLE IF NOT EXISTS nosuch.x (a)",
      "CREATE TABLE nosuch._cf_KV (a)",
      "CREATE TABLE _cf_x.y (a)",
      "CREATE TABLE nosuch.x (a",
      "CREATE TABLE nosuch.x AS SELECT 1",
      "CREATE INDEX nosuch.i ON t(a)",
      "CREATE UNIQUE INDEX nosuch.i ON t(a)",
      "CREATE INDEX i ON nosuch.t(a)",
      "CREATE VIEW IF NOT EXISTS nosuch.v AS SELECT 1",
      "CREATE TRIGGER nosuch.tr AFTER INSERT ON t BEGIN SELECT 1; END",
      "CREATE VIRTUAL TABLE nosuch.v USING fts5(a)",
      "EXPLAIN CREATE TABLE nosuch.x (a)",
      "CREATE TEMP TABLE nosuch.x (a)",
      "CREATE TEMP TABLE main.x (a)",
      "CREATE TEMP VIEW nosuch.v AS SELECT 1",
      "CREATE TEMP TRIGGER nosuch.tr AFTER INSERT ON t BEGIN SELECT 1; END",
      "CREATE TEMP TABLE temp.x (a)",
      "CREATE TABLE temp.x (a)",
      "ANALYZE nosuch.x",
      "REINDEX nosuch.x",
      "VACUUM nosuch",
      "VACUUM nosuch INTO 'x.db'",
    ]);
  });

  it("DROP and ALTER of what is not there: SQLite's error, or nothing with IF EXISTS; ANALYZE temp is refused", async () => {
    await expectSameAsWorkerd([
      "DROP TABLE nosuch.x",
      "DROP TABLE IF EXISTS nosuch.x",
      "DROP TABLE nosuch._cf_KV",
      "DROP INDEX nosuch.x",
      "DROP VIEW nosuch.x",
      "DROP TRIGGER nosuch.x",
      "DROP TABLE temp.x",
      "DROP TABLE IF EXISTS temp.x",
      "DROP TABLE TEMP._cf_KV",
      "DROP INDEX temp.sqlite_autoindex__cf_KV_1",
      "DROP TABLE temp.sqlite_master",
      "DROP TABLE temp.sqlite_temp_schema",
      "DROP TABLE IF EXISTS temp.sqlite_master",
      "ALTER TABLE nosuch.x ADD COLUMN b",
      "ALTER TABLE nosuch._cf_KV RENAME TO x",
      "ALTER TABLE temp.t ADD COLUMN b",
      "ALTER TABLE temp.sqlite_master RENAME TO x",
      "ALTER TABLE t RENAME TO nosuch.y",
      "ANALYZE temp",
      'ANALYZE "TEMP"',
      "ANALYZE temp.sqlite_master",
      "ANALYZE temp.nosuch",
      "ANALYZE main",
    ]);
  });
});
