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

  test("a constraint on a hidden arg/schema column reaches no internal table; a computed one is refused", async () => {
    const storage = await open();
    const { sql } = storage;
    const schema = () => sql.exec("SELECT type, name, sql FROM sqlite_master ORDER BY name").toArray();
    const before = schema();
    for (const q of [
      "SELECT * FROM pragma_table_info WHERE arg = '_cf_KV'",
      "SELECT * FROM pragma_table_xinfo WHERE arg = '_cf_METADATA'",
      "SELECT * FROM pragma_foreign_key_list WHERE arg = '_cf_KV'",
      "SELECT * FROM pragma_table_info WHERE arg = lower('_CF_KV')",
      "SELECT * FROM pragma_table_info WHERE arg = ?",
      "SELECT * FROM pragma_table_info WHERE arg = (SELECT '_cf_KV')",
      "SELECT * FROM pragma_table_info WHERE arg = 't' AND schema = ?",
      "SELECT * FROM sqlite_master m JOIN pragma_table_info p ON p.arg = m.name",
      "SELECT * FROM pragma_table_info('t') a, pragma_table_info b WHERE b.arg = a.name",
      "SELECT * FROM pragma_index_list",
      "INSERT INTO t (name) SELECT name FROM pragma_table_info WHERE arg = '_cf_KV'",
    ]) {
      const bindings = q.includes("?") ? ["_cf_KV"] : [];
      expect(
        errorOf(() => sql.exec(q, ...bindings).toArray()),
        q,
      ).toBe(NA);
    }
    expect(schema()).toEqual(before);
    expect(sql.exec("SELECT count(*) AS n FROM t").one().n).toBe(0);
    // In a trigger: the refused statement leaves no row behind (workerd, which refuses while the
    // trigger runs, keeps the row of an INSERT that SQLite judged could not fail part-way).
    sql.exec(
      "CREATE TABLE log (a); CREATE TRIGGER spy AFTER INSERT ON t BEGIN INSERT INTO log SELECT name FROM pragma_table_info WHERE arg = '_cf_KV'; END",
    );
    expect(errorOf(() => sql.exec("INSERT INTO t (name) VALUES ('x')"))).toBe(NA);
    expect(sql.exec("SELECT (SELECT count(*) FROM t) AS t, (SELECT count(*) FROM log) AS log").one()).toEqual({
      t: 0,
      log: 0,
    });
    // Constants that name user tables, and the call form with a computed argument, work.
    expect(sql.exec("SELECT name FROM pragma_table_info WHERE arg = 't' AND schema = 'main'").toArray()).toHaveLength(
      3,
    );
    expect(
      sql.exec("SELECT p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.name = 't'").toArray(),
    ).toHaveLength(3);
    expect(await storage.get("k")).toBe(1);
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
