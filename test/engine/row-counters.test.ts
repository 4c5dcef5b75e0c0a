import { beforeEach, describe, expect, test } from "vitest";
import type { EngineStatement, EngineValue, SqlEngine } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";

let engine: SqlEngine;

beforeEach(async () => {
  engine = (await loadSqlJsEngine()).open();
  engine.exec(`
    PRAGMA foreign_keys = ON;
    CREATE TABLE p (id INTEGER PRIMARY KEY, name TEXT UNIQUE);
    CREATE TABLE c (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES p(id) ON DELETE CASCADE ON UPDATE CASCADE);
    CREATE INDEX c_pid ON c(pid);
    CREATE TABLE log (what TEXT);
    CREATE TRIGGER p_log AFTER INSERT ON p BEGIN INSERT INTO log VALUES (new.name); END;
    INSERT INTO p VALUES (1, 'a'), (2, 'b'), (3, 'c');
    INSERT INTO c VALUES (1, 1), (2, 1), (3, 2);
  `);
});

/** Runs `s` once with `values`: its rows, and the counts when `counted`. */
function run(s: EngineStatement, values: EngineValue[], counted: boolean) {
  s.bind(values, "real");
  if (counted) s.startCounting(true);
  const rows: EngineValue[][] = [];
  while (s.step()) rows.push(s.row());
  const counts = s.rowCounts();
  s.reset();
  return { rows, read: counts.read, written: counts.written };
}

describe("exact row counters (SQLite counts in a rewritten program)", () => {
  test("a counted statement returns what an uncounted one does, and counts by the platform's rules", () => {
    const cases: [string, EngineValue[], number, number][] = [
      // [sql, bindings, read, written]
      ["SELECT * FROM p", [], 3, 0],
      ["SELECT * FROM p WHERE id = ?", [2], 1, 0],
      ["SELECT * FROM p WHERE id = ?", [2.5], 0, 0],
      ["SELECT * FROM p WHERE id = ?", ["2"], 1, 0],
      ["SELECT * FROM p WHERE id = ?", [null], 0, 0],
      ["SELECT * FROM p WHERE id = ?", [9], 1, 0],
      ["SELECT * FROM p WHERE name = ?", ["b"], 1, 0],
      ["SELECT * FROM p WHERE name = ?", ["zz"], 0, 0],
      ["SELECT * FROM p ORDER BY name DESC", [], 3, 0], // the unique index backwards: Last, two Prev
      ["SELECT * FROM log ORDER BY what DESC", [], 6, 0], // scan (Rewind, 2 Next), sort (SorterSort, 2 SorterNext)
      ["SELECT * FROM p ORDER BY id || name", [], 6, 0],
      ["SELECT * FROM p JOIN c ON c.pid = p.id", [], 6, 0], // scan c (Rewind, 2 Next), a rowid seek per row
      ["SELECT * FROM pragma_table_info('p')", [], 2, 0],
    ];
    for (const [sql, values, read, written] of cases) {
      const plain = engine.prepare(sql);
      const counted = engine.prepare(sql);
      const a = run(plain, values, false);
      const b = run(counted, values, true);
      expect({ sql, values, rows: b.rows, read: b.read, written: b.written }).toEqual({
        sql,
        values,
        rows: a.rows,
        read,
        written,
      });
      plain.free();
      counted.free();
    }
  });

  test("writes: triggers and foreign-key cascades are counted inside their sub-programs", () => {
    const insert = engine.prepare("INSERT INTO p VALUES (?, ?)");
    // The row (table + unique index) and the trigger's insert; the rowid lookup is a read.
    expect(run(insert, [4, "d"], true)).toMatchObject({ read: 1, written: 3 });
    insert.free();
    const update = engine.prepare("UPDATE p SET id = 10 WHERE id = 1");
    const counts = run(update, [], true);
    expect(counts.written).toBeGreaterThan(2); // p's row and index, plus the two children moved
    expect(engine.query("SELECT pid FROM c ORDER BY id")).toEqual([[10], [10], [2]]);
    update.free();
    const del = engine.prepare("DELETE FROM p WHERE id = 10");
    expect(run(del, [], true).written).toBe(3); // p's row and its two children
    expect(engine.query("SELECT count(*) FROM c")).toEqual([[1]]);
    del.free();
  });

  test("each run counts from zero; a statement never asked to count runs unchanged", () => {
    const s = engine.prepare("SELECT * FROM p WHERE id = ?");
    expect(run(s, [1], true).read).toBe(1);
    expect(run(s, [1], true).read).toBe(1);
    expect(run(s, [1.5], true).read).toBe(0);
    const never = engine.prepare("SELECT * FROM p");
    expect(run(never, [], false)).toEqual({
      rows: [
        [1, "a"],
        [2, "b"],
        [3, "c"],
      ],
      read: 0,
      written: 0,
    });
    s.free();
    never.free();
  });

  test("EXPLAIN lists the statement's own program, not the counting copy", () => {
    const sql = "EXPLAIN SELECT * FROM p WHERE id = ?";
    const plain = engine.query(sql);
    const s = engine.prepare(sql);
    expect(run(s, [1], true).rows).toEqual(plain);
    s.free();
  });

  test("a read SQLite recompiles inside its first step runs again, counted; a write keeps its one run", () => {
    const s = engine.prepare("SELECT * FROM p WHERE id = ?");
    expect(run(s, [1], true).read).toBe(1);
    engine.exec("CREATE TABLE other (x)"); // expires every compiled statement
    expect(run(s, [1], true)).toMatchObject({ rows: [[1, "a"]], read: 1 });
    expect(run(s, [2], true)).toMatchObject({ rows: [[2, "b"]], read: 1 });
    s.free();
    // A LIKE pattern as a parameter: SQLite recompiles at each new binding, using its value.
    const like = engine.prepare("SELECT name FROM p WHERE name LIKE ? ORDER BY name");
    expect(run(like, ["b%"], true)).toMatchObject({ rows: [["b"]] });
    const counted = run(like, ["%"], true);
    expect(counted).toMatchObject({ rows: [["a"], ["b"], ["c"]], read: 3 });
    like.free();
    const write = engine.prepare("UPDATE p SET name = name || '!' WHERE name LIKE ?");
    write.bind(["a%"], "real");
    write.startCounting(false);
    expect(write.step()).toBe(false);
    expect(engine.query("SELECT name FROM p ORDER BY id")).toEqual([["a!"], ["b"], ["c"]]);
    write.free();
    engine.close();
  });
});
