/** The SQL facade through the real storage core (`ObjectStorage`). */
import { describe, expect, test } from "vitest";
import { ObjectStorage } from "../../../src/index";
import { errorOf } from "./helpers";

describe("storage.sql through ObjectStorage", () => {
  test("exec: tables, bindings, cursors", async () => {
    const storage = await ObjectStorage.open();
    const { sql } = storage;
    sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)");
    sql.exec("INSERT INTO t(name) VALUES (?), (?)", "a", "b");
    expect(sql.exec("SELECT name FROM t ORDER BY id").toArray()).toEqual([{ name: "a" }, { name: "b" }]);
    expect(sql.databaseSize % 4096).toBe(0);
  });

  test("_cf_KV written by the key-value API stays out of reach", async () => {
    const storage = await ObjectStorage.open();
    await storage.put("secret", 42);
    await storage.sync();
    expect(errorOf(() => storage.sql.exec("SELECT * FROM _cf_KV"))).toBe(
      "Error: access to _cf_KV.key is prohibited: SQLITE_AUTH",
    );
    expect(errorOf(() => storage.sql.exec("DELETE FROM _cf_KV"))).toBe("Error: not authorized: SQLITE_AUTH");
    expect(await storage.get("secret")).toBe(42);
  });

  test("deleteAll cancels unfinished cursors", async () => {
    const storage = await ObjectStorage.open();
    storage.sql.exec("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)");
    const cursor = storage.sql.exec("SELECT x FROM t");
    await storage.deleteAll();
    expect(errorOf(() => cursor.next())).toBe("Error: SQLite query was canceled because the database was deleted.");
    expect(errorOf(() => storage.sql.exec("SELECT * FROM t"))).toBe("Error: no such table: t: SQLITE_ERROR");
  });

  test("transactionSync rolls SQL back on throw", async () => {
    const storage = await ObjectStorage.open();
    storage.sql.exec("CREATE TABLE t(x)");
    expect(() =>
      storage.transactionSync(() => {
        storage.sql.exec("INSERT INTO t VALUES (1)");
        throw new Error("undo");
      }),
    ).toThrow("undo");
    expect(storage.sql.exec("SELECT count(*) AS n FROM t").one().n).toBe(0);
  });

  test("backend kv: sql names the option to change", async () => {
    const storage = await ObjectStorage.open({ backend: "kv" });
    expect(errorOf(() => storage.sql.exec("SELECT 1"))).toMatch(/backend: "sqlite"/);
  });
});
