/** `pragma_*` table-valued functions as on the platform (issue 15), on the real storage core. */
import { describe, expect, test } from "vitest";
import { ObjectStorage } from "../../../src/index";

const NA = "not authorized: SQLITE_AUTH";

function errorOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

async function open(): Promise<ObjectStorage> {
  const storage = await ObjectStorage.open();
  await storage.put("k", 1);
  await storage.sync();
  storage.sql.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, p REFERENCES t(id))");
  storage.sql.exec("CREATE INDEX t_name ON t (name)");
  return storage;
}

describe("pragma_* table-valued functions", () => {
  test("the reading pragmas work as functions, in any case", async () => {
    const { sql } = await open();
    expect(sql.exec("SELECT name, type, pk FROM pragma_table_info('t') ORDER BY cid").toArray()).toEqual([
      { name: "id", type: "INTEGER", pk: 1 },
      { name: "name", type: "TEXT", pk: 0 },
      { name: "p", type: "", pk: 0 },
    ]);
    expect(sql.exec("SELECT count(*) AS n FROM PRAGMA_TABLE_XINFO('t')").one().n).toBe(3);
    expect(sql.exec("SELECT name FROM pragma_index_list('t') ORDER BY name").toArray().length).toBe(2);
    expect(sql.exec("SELECT name FROM pragma_index_info('t_name')").toArray()).toEqual([{ name: "name" }]);
    expect(sql.exec("SELECT count(*) AS n FROM pragma_index_xinfo('t_name')").one().n).toBe(2);
    expect(sql.exec('SELECT "table", "from", "to" FROM pragma_foreign_key_list(\'t\')').toArray()).toEqual([
      { table: "t", from: "p", to: "id" },
    ]);
    expect(sql.exec("SELECT * FROM pragma_foreign_key_check").toArray()).toEqual([]);
    expect(sql.exec("SELECT * FROM pragma_quick_check").toArray()).toEqual([{ quick_check: "ok" }]);
    expect(typeof sql.exec("SELECT * FROM pragma_data_version").one().data_version).toBe("number");
    // The join idiom, with internal tables filtered out as on the platform.
    expect(
      sql
        .exec(
          "SELECT m.name AS tbl, c.name AS col FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table' AND m.name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY 1, c.cid",
        )
        .toArray(),
    ).toEqual([
      { tbl: "t", col: "id" },
      { tbl: "t", col: "name" },
      { tbl: "t", col: "p" },
    ]);
  });

  test("internal objects: listed by table_list as on the platform, refused by name", async () => {
    const { sql } = await open();
    const names = sql.exec("SELECT name FROM pragma_table_list WHERE schema = 'main' ORDER BY name").toArray();
    expect(names.map((r) => r.name)).toEqual(expect.arrayContaining(["_cf_KV", "t"]));
    for (const q of [
      "SELECT * FROM pragma_table_info('_cf_KV')",
      'SELECT * FROM pragma_table_info("_CF_KV")',
      "SELECT * FROM pragma_index_list('_cf_kv')",
      "SELECT * FROM pragma_foreign_key_list('_Cf_METADATA')",
      "SELECT * FROM pragma_table_info('t', 'temp')",
      "SELECT * FROM pragma_table_info()",
    ]) {
      expect(
        errorOf(() => sql.exec(q).toArray()),
        q,
      ).toBe(NA);
    }
  });

  test("pragmas that write or are off the allow-list stay refused as functions", async () => {
    const { sql } = await open();
    for (const q of [
      "SELECT * FROM pragma_foreign_keys(0)",
      "SELECT * FROM pragma_query_only",
      "SELECT * FROM pragma_writable_schema",
      "SELECT * FROM pragma_hard_heap_limit(1024)",
      "SELECT * FROM pragma_page_count",
      "SELECT * FROM pragma_function_list",
      "SELECT * FROM pragma_optimize",
      "SELECT * FROM pragma_integrity_check",
      "SELECT * FROM t, pragma_database_list",
    ]) {
      expect(
        errorOf(() => sql.exec(q).toArray()),
        q,
      ).toMatch(/^(?:not authorized|too many arguments on pragma_\w+)/);
    }
    expect(sql.exec("SELECT 'a' LIKE 'A' AS x").one().x).toBe(1);
    expect(sql.exec("SELECT * FROM pragma_foreign_keys").one().foreign_keys).toBe(1);
    expect(sql.exec("SELECT * FROM pragma_recursive_triggers").one().recursive_triggers).toBe(0);
  });

  test("ALTER TABLE … ADD COLUMN … CHECK (…) works (SQLite runs pragma_quick_check itself)", async () => {
    const { sql } = await open();
    sql.exec("INSERT INTO t (name) VALUES ('a')");
    sql.exec("ALTER TABLE t ADD COLUMN n INTEGER CHECK (n IS NULL OR n > 0)");
    expect(errorOf(() => sql.exec("INSERT INTO t (name, n) VALUES ('b', -1)"))).toMatch(/^CHECK constraint failed/);
    sql.exec("INSERT INTO t (name, n) VALUES ('c', 5)");
    expect(sql.exec("SELECT name, n FROM t ORDER BY id").toArray()).toEqual([
      { name: "a", n: null },
      { name: "c", n: 5 },
    ]);
  });
});
