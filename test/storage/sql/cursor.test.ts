import { beforeEach, describe, expect, test } from "vitest";
import type { ObjectStorage } from "../../../src/index";
import { SqlStorageCursor } from "../../../src/storage/sql/cursor";
import type { SqlStorage } from "../../../src/storage/sql/sql-storage";
import { errorOf, setup } from "./helpers";

let storage: ObjectStorage;
let sql: SqlStorage;

beforeEach(async () => {
  ({ storage, sql } = await setup());
  sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)");
  sql.exec("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e'), (6, 'f')");
});

describe("cursor", () => {
  test("next: yields rows as objects, then a new {done: true, value: undefined} each time, as workerd", () => {
    const c = sql.exec("SELECT id, name FROM t WHERE id <= 2 ORDER BY id");
    expect(c.next()).toEqual({ done: false, value: { id: 1, name: "a" } });
    expect(c.next()).toEqual({ done: false, value: { id: 2, name: "b" } });
    const end = c.next();
    expect(end).toStrictEqual({ done: true, value: undefined });
    const again = c.next();
    expect(again).toStrictEqual({ done: true, value: undefined });
    expect(again).not.toBe(end);
  });

  test("raw() and [Symbol.iterator]() return the platform's RawIterator and RowIterator, which inherit %IteratorPrototype%", () => {
    const iteratorPrototype: object = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
    const query = "SELECT id FROM t WHERE id <= 3 ORDER BY id";
    const raw = sql.exec(query).raw();
    const rows = sql.exec(query)[Symbol.iterator]();
    for (const [iterator, tag] of [
      [raw, "RawIterator"],
      [rows, "RowIterator"],
    ] as const) {
      expect(Object.prototype.toString.call(iterator)).toBe(`[object ${tag}]`);
      expect(Object.getOwnPropertyNames(iterator)).toEqual([]);
      expect(Object.getPrototypeOf(Object.getPrototypeOf(iterator))).toBe(iteratorPrototype);
      expect(iterator[Symbol.iterator]()).toBe(iterator);
    }
    // So the runtime's iterator helpers work on them, as on workerd (Node 22 and later have them).
    const helpers = iteratorPrototype as { map?: unknown; take?: unknown };
    if (typeof helpers.map === "function" && typeof helpers.take === "function") {
      const mapped = (raw as unknown as { map(f: (r: unknown[]) => unknown): { toArray(): unknown[] } }).map(
        (r) => r[0],
      );
      expect(mapped.toArray()).toEqual([1, 2, 3]);
      const taken = (rows as unknown as { take(n: number): { toArray(): unknown[] } }).take(2);
      expect(taken.toArray()).toEqual([{ id: 1 }, { id: 2 }]);
    }
    // The storage interface's raw iterator has toArray and one, on its prototype.
    expect(sql.exec(query).raw().toArray()).toEqual([[1], [2], [3]]);
    expect(sql.exec("SELECT 7 AS x").raw().one()).toEqual([7]);
    const Raw = Object.getPrototypeOf(raw).constructor as new () => unknown;
    expect(() => new Raw()).toThrow("Illegal constructor");
  });

  test("iteration: for…of works and [Symbol.iterator] returns a new iterator over the same position", () => {
    const c = sql.exec("SELECT id FROM t ORDER BY id");
    c.next();
    const it = c[Symbol.iterator]();
    expect(it).not.toBe(c);
    expect(it.next().value).toEqual({ id: 2 });
    expect([...c].map((r) => r.id)).toEqual([3, 4, 5, 6]);
  });

  test("toArray: returns the remaining rows", () => {
    const c = sql.exec("SELECT id FROM t ORDER BY id");
    c.next();
    expect(c.toArray()).toEqual([{ id: 2 }, { id: 3 }, { id: 4 }, { id: 5 }, { id: 6 }]);
    expect(c.toArray()).toEqual([]);
  });

  test("one: returns the single row, and the platform's errors for none and several", () => {
    expect(sql.exec("SELECT name FROM t WHERE id = 3").one()).toEqual({ name: "c" });
    expect(errorOf(() => sql.exec("SELECT name FROM t WHERE id = 99").one())).toBe(
      "Error: Expected exactly one result from SQL query, but got no results.",
    );
    const c = sql.exec("SELECT name FROM t");
    expect(errorOf(() => c.one())).toBe("Error: Expected exactly one result from SQL query, but got multiple results.");
    // the query was ended
    expect(c.next().done).toBe(true);
  });

  test("raw: arrays sharing the cursor's position, with next, toArray, iteration and one", () => {
    const c = sql.exec("SELECT id, name FROM t ORDER BY id");
    expect(c.next().value).toEqual({ id: 1, name: "a" });
    const raw = c.raw();
    expect(raw.next()).toEqual({ done: false, value: [2, "b"] });
    expect(c.next().value).toEqual({ id: 3, name: "c" });
    for (const row of raw) {
      expect(row).toEqual([4, "d"]);
      break;
    }
    expect(raw.toArray()).toEqual([
      [5, "e"],
      [6, "f"],
    ]);
    expect(raw.next().done).toBe(true);
    expect(sql.exec("SELECT 1, 2").raw().one()).toEqual([1, 2]);
    expect(errorOf(() => sql.exec("SELECT 1 WHERE 0").raw().one())).toMatch(/got no results/);
  });

  test("columnNames: available with zero rows, and duplicates are kept (rows: last wins)", () => {
    expect(sql.exec("SELECT id, name FROM t WHERE 0").columnNames).toEqual(["id", "name"]);
    expect(sql.exec("INSERT INTO t(name) VALUES ('z')").columnNames).toEqual([]);
    const c = sql.exec("SELECT 1 AS x, 2 AS x");
    expect(c.columnNames).toEqual(["x", "x"]);
    const raw = sql.exec("SELECT 1 AS x, 2 AS x").raw().toArray();
    expect(raw).toEqual([[1, 2]]);
    expect(c.one()).toEqual({ x: 2 });
  });

  test("columnNames: each cursor has its own array, the same one on every access", () => {
    const q = "SELECT id, name FROM t WHERE 0";
    const a = sql.exec(q);
    expect(a.columnNames).toBe(a.columnNames);
    a.columnNames.push("changed");
    expect(a.columnNames).toEqual(["id", "name", "changed"]);
    // neither the next cursor over the same (cached) SQL nor its rows see the change
    const b = sql.exec("SELECT id, name FROM t WHERE 0");
    expect(b.columnNames).toEqual(["id", "name"]);
    expect(sql.exec("SELECT id, name FROM t WHERE id = 1").one()).toEqual({ id: 1, name: "a" });
  });

  test("a cursor with buffered RETURNING rows keeps them while the same SQL runs again", () => {
    const q = "INSERT INTO t(name) VALUES (?) RETURNING name";
    const first = sql.exec(q, "x");
    const second = sql.exec(q, "y");
    expect(second.one()).toEqual({ name: "y" });
    expect(first.toArray()).toEqual([{ name: "x" }]);
    // the same counters as a cursor of the same SQL that nothing interleaved with
    const alone = sql.exec(q, "z");
    alone.toArray();
    expect([first.rowsRead, first.rowsWritten]).toEqual([alone.rowsRead, alone.rowsWritten]);
    expect(first.rowsWritten).toBe(1);
  });

  test("a row value over the limit mid-iteration ends the query: no row twice, then done", () => {
    const c = sql.exec("SELECT CASE WHEN id = 3 THEN zeroblob(2200001) ELSE id END AS v FROM t ORDER BY id");
    expect(c.next().value).toEqual({ v: 1 });
    expect(errorOf(() => c.next())).toBe("Error: string or blob too big: SQLITE_TOOBIG");
    expect(c.next()).toEqual({ done: true, value: undefined });
    // the statement went back to the cache in a usable state
    expect(
      sql.exec("SELECT CASE WHEN id = 3 THEN zeroblob(2200001) ELSE id END AS v FROM t ORDER BY id").next(),
    ).toEqual({
      done: false,
      value: { v: 1 },
    });
  });

  test("a statement that can return at most one row is finished once that row is out", () => {
    const c = sql.exec("SELECT name FROM t WHERE id = 3");
    expect(c.next()).toEqual({ done: false, value: { name: "c" } });
    expect(c.next()).toEqual({ done: true, value: undefined });
    expect([c.rowsRead, c.rowsWritten]).toEqual([1, 0]);
    // the statement went back to the cache: the same SQL runs again at once
    expect(sql.exec("SELECT name FROM t WHERE id = 3").one()).toEqual({ name: "c" });
    // a compound SELECT can return several rows without a loop: still stepped ahead
    expect(errorOf(() => sql.exec("SELECT 1 AS x UNION ALL SELECT 2").one())).toBe(
      "Error: Expected exactly one result from SQL query, but got multiple results.",
    );
    expect(sql.exec("SELECT 1 AS x UNION ALL SELECT 2").toArray()).toEqual([{ x: 1 }, { x: 2 }]);
  });

  test("first step: a write without RETURNING is applied even if the cursor is never read", () => {
    sql.exec("INSERT INTO t(name) VALUES ('g')");
    expect(sql.exec("SELECT count(*) AS n FROM t").one()).toEqual({ n: 7 });
  });

  test("RETURNING: all rows are written inside exec and buffered", () => {
    const c = sql.exec("INSERT INTO t(name) VALUES ('x'), ('y') RETURNING id, name");
    expect(sql.exec("SELECT count(*) AS n FROM t").one()).toEqual({ n: 8 });
    expect(c.toArray()).toEqual([
      { id: 7, name: "x" },
      { id: 8, name: "y" },
    ]);
  });

  test("overlapping cursors over the same SQL both work", () => {
    const q = "SELECT id FROM t ORDER BY id";
    const a = sql.exec(q);
    const b = sql.exec(q);
    expect(a.next().value).toEqual({ id: 1 });
    expect(b.next().value).toEqual({ id: 1 });
    expect(a.next().value).toEqual({ id: 2 });
    expect(b.toArray().length).toBe(5);
    expect(a.toArray().length).toBe(4);
  });

  test("deleteAll: operations on an unfinished cursor fail with the platform's message", async () => {
    const c = sql.exec("SELECT id FROM t");
    const done = sql.exec("SELECT id FROM t WHERE id = 1");
    done.next();
    await storage.deleteAll();
    const canceled = "Error: SQLite query was canceled because the database was deleted.";
    expect(errorOf(() => c.next())).toBe(canceled);
    expect(errorOf(() => c.toArray())).toBe(canceled);
    expect(errorOf(() => c.raw().next())).toBe(canceled);
    expect(errorOf(() => c.one())).toBe(canceled);
    expect(errorOf(() => c.rowsRead)).toBe(canceled);
    // a finished cursor keeps its results
    expect(done.next().done).toBe(true);
    expect(done.rowsRead).toBe(1);
    expect(c.columnNames).toEqual(["id"]);
  });

  test("constructor: not constructible by users, as on the platform", () => {
    expect(errorOf(() => new SqlStorageCursor())).toBe("TypeError: Illegal constructor");
    expect(sql.exec("SELECT 1")).toBeInstanceOf(sql.Cursor);
  });
});

describe("rowsRead / rowsWritten", () => {
  const counts = (c: { rowsRead: number; rowsWritten: number }) => [c.rowsRead, c.rowsWritten];

  test("SELECT * of 6 rows: 1 after exec, 2 after the first next(), 6 at the end", () => {
    const c = sql.exec("SELECT * FROM t");
    expect(counts(c)).toEqual([1, 0]);
    c.next();
    expect(counts(c)).toEqual([2, 0]);
    c.toArray();
    expect(counts(c)).toEqual([6, 0]);
  });

  test("platform examples", () => {
    expect(counts(sql.exec("SELECT * FROM t WHERE id = 2"))).toEqual([1, 0]);
    const count = sql.exec("SELECT count(*) FROM t");
    count.toArray();
    expect(counts(count)).toEqual([6, 0]);
    expect(counts(sql.exec("UPDATE t SET name = 'z'"))).toEqual([6, 6]);
    expect(counts(sql.exec("SELECT 1"))).toEqual([0, 0]);
    expect(counts(sql.exec("CREATE TABLE u(x)"))).toEqual([1, 2]);
    expect(counts(sql.exec("INSERT INTO u VALUES (1), (2), (3)"))).toEqual([0, 3]);
    sql.exec("CREATE INDEX ux ON u(x)");
    expect(counts(sql.exec("INSERT INTO u VALUES (4)"))).toEqual([0, 2]);
    const ret = sql.exec("INSERT INTO t(name) VALUES ('x'), ('y') RETURNING id");
    expect(counts(ret)).toEqual([3, 2]);
    ret.toArray();
    expect(counts(ret)).toEqual([4, 2]);
  });
});
