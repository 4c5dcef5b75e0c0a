/** Schema changes invalidate cached statements (issue 15), on the real storage core. */
import { describe, expect, test } from "vitest";
import { ObjectStorage } from "../../../src/index";

describe("cached statements follow the schema", () => {
  test("ALTER TABLE … ADD COLUMN: SELECT * returns the new column (objects, raw, columnNames)", async () => {
    const { sql } = await ObjectStorage.open();
    sql.exec("CREATE TABLE t (a)");
    sql.exec("INSERT INTO t VALUES (1)");
    expect(sql.exec("SELECT * FROM t").toArray()).toEqual([{ a: 1 }]);
    sql.exec("ALTER TABLE t ADD COLUMN b DEFAULT 2");
    const cursor = sql.exec("SELECT * FROM t");
    expect(cursor.columnNames).toEqual(["a", "b"]);
    expect(cursor.toArray()).toEqual([{ a: 1, b: 2 }]);
    expect(sql.exec("SELECT * FROM t").raw().toArray()).toEqual([[1, 2]]);
    // A multi-statement query whose first statement changes the schema of the last one.
    expect(sql.exec("ALTER TABLE t ADD COLUMN c DEFAULT 3; SELECT * FROM t").toArray()).toEqual([{ a: 1, b: 2, c: 3 }]);
    sql.exec("ALTER TABLE t DROP COLUMN a");
    expect(sql.exec("SELECT * FROM t").toArray()).toEqual([{ b: 2, c: 3 }]);
  });

  test("a table dropped and created again under the same name", async () => {
    const { sql } = await ObjectStorage.open();
    sql.exec("CREATE TABLE t (a, b)");
    sql.exec("INSERT INTO t VALUES (1, 2)");
    expect(sql.exec("SELECT * FROM t").toArray()).toEqual([{ a: 1, b: 2 }]);
    sql.exec("DROP TABLE t; CREATE TABLE t (x, y, z); INSERT INTO t VALUES (7, 8, 9)");
    expect(sql.exec("SELECT * FROM t").toArray()).toEqual([{ x: 7, y: 8, z: 9 }]);
  });

  test("a rollback that undoes a schema change: SELECT * goes back to the old columns", async () => {
    const storage = await ObjectStorage.open();
    const { sql } = storage;
    sql.exec("CREATE TABLE t (a)");
    sql.exec("INSERT INTO t VALUES (1)");
    expect(sql.exec("SELECT * FROM t").toArray()).toEqual([{ a: 1 }]);
    expect(() =>
      storage.transactionSync(() => {
        sql.exec("ALTER TABLE t ADD COLUMN b");
        expect(sql.exec("SELECT * FROM t").toArray()).toEqual([{ a: 1, b: null }]);
        throw new Error("undo");
      }),
    ).toThrow("undo");
    expect(sql.exec("SELECT * FROM t").toArray()).toEqual([{ a: 1 }]);
    expect(sql.exec("SELECT * FROM t").columnNames).toEqual(["a"]);
  });

  test("a cursor still reading keeps its columns; a new exec of the same SQL sees the new ones", async () => {
    const { sql } = await ObjectStorage.open();
    sql.exec("CREATE TABLE t (a)");
    sql.exec("INSERT INTO t VALUES (1), (2)");
    const reading = sql.exec("SELECT * FROM t");
    expect(reading.next()).toEqual({ done: false, value: { a: 1 } });
    sql.exec("ALTER TABLE t ADD COLUMN b DEFAULT 5");
    expect(sql.exec("SELECT * FROM t").toArray()).toEqual([
      { a: 1, b: 5 },
      { a: 2, b: 5 },
    ]);
    expect(reading.columnNames).toEqual(["a"]);
  });
});
