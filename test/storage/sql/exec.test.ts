import { describe, expect, test } from "vitest";
import { createMemoryPersistence, ObjectStorage } from "../../../src/index";
import {
  type CachedStatement,
  COMPILED_CACHE_MAX_COST,
  COMPILED_STATEMENT_BASE_COST,
  compiledCost,
  NOT_COMPILED,
  StatementCache,
  uncompiledStatement,
} from "../../../src/storage/sql/statement-cache";
import { errorOf, type RecordingEngine, setup } from "./helpers";

/** The statements `engine` compiled that are still compiled (not freed). */
function compiledStatements(engine: RecordingEngine): string[] {
  return engine.statements.filter((s) => s.ref.deref()?.freed === false).map((s) => s.sql);
}

describe("exec: values and bindings", () => {
  test("types: INTEGER/REAL → number, TEXT → string, BLOB → ArrayBuffer, NULL → null", async () => {
    const { sql } = await setup();
    const row = sql.exec("SELECT 1 AS i, 1.5 AS r, 'x' AS t, x'0102' AS b, NULL AS n, 9007199254740993 AS big").one();
    expect(row.i).toBe(1);
    expect(row.r).toBe(1.5);
    expect(row.t).toBe("x");
    expect(row.b).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(row.b as ArrayBuffer)]).toEqual([1, 2]);
    expect(row.n).toBeNull();
    expect(row.big).toBe(9007199254740992);
  });

  test("bindings: numbers bind as REAL, NaN as NULL, booleans and objects as their string form", async () => {
    const { sql } = await setup();
    const types = sql
      .exec(
        "SELECT typeof(?) AS a, typeof(?) AS b, ? AS c, ? AS d, ? AS e, ? AS f, typeof(?) AS g",
        5,
        Number.NaN,
        true,
        { x: 1 },
        [1, 2],
        undefined,
        null,
      )
      .one();
    expect(types).toEqual({ a: "real", b: "null", c: "true", d: "[object Object]", e: "1,2", f: null, g: "null" });
    sql.exec("CREATE TABLE t(i INTEGER, s TEXT)");
    sql.exec("INSERT INTO t VALUES (?, ?)", 5, 5);
    expect(sql.exec("SELECT i, s, typeof(i) AS ti FROM t").one()).toEqual({ i: 5, s: "5.0", ti: "integer" });
    expect(sql.exec("SELECT ? AS inf", Number.POSITIVE_INFINITY).one().inf).toBe(Number.POSITIVE_INFINITY);
  });

  test("bindings: ArrayBuffer, TypedArray and DataView bind as BLOB (copied)", async () => {
    const { sql } = await setup();
    const bytes = new Uint8Array([1, 2, 3, 4]);
    const row = sql
      .exec(
        "SELECT typeof(?) AS a, hex(?) AS b, hex(?) AS c",
        bytes.buffer,
        new Uint8Array(bytes.buffer, 1, 2),
        new DataView(bytes.buffer, 2),
      )
      .one();
    expect(row).toEqual({ a: "blob", b: "0203", c: "0304" });
  });

  test("bindings: a SharedArrayBuffer binds as BLOB and a detached or shrunk buffer as an empty BLOB, as on the platform", async () => {
    const { sql } = await setup();
    const shared = new SharedArrayBuffer(3);
    new Uint8Array(shared).set([7, 8, 9]);
    sql.exec("CREATE TABLE t (x)");
    sql.exec("INSERT INTO t VALUES (?)", shared);
    new Uint8Array(shared)[0] = 1; // the row holds a copy
    const stored = sql.exec("SELECT typeof(x) AS ty, hex(x) AS h FROM t").one();
    expect(stored).toEqual({ ty: "blob", h: "070809" });
    expect(sql.exec("SELECT hex(?) AS h", new Uint16Array(shared, 0, 1)).one().h).toBe("0108");
    const detach = (buffer: ArrayBuffer) => structuredClone(buffer, { transfer: [buffer] });
    const buffer = new ArrayBuffer(4);
    const bytes = new Uint8Array(buffer, 1);
    const view = new DataView(buffer, 1, 2);
    detach(buffer);
    const empty = { ty: "blob", n: 0 };
    for (const value of [buffer, bytes, view]) {
      expect(sql.exec("SELECT typeof(?1) AS ty, length(?1) AS n", value).one()).toEqual(empty);
    }
    // Resizable buffers (ES2024) are not in the compile target's library; Node has them.
    type Resizable = ArrayBuffer & { resize(length: number): void };
    const Resizable = ArrayBuffer as unknown as new (length: number, options: { maxByteLength: number }) => Resizable;
    const resizable = new Resizable(8, { maxByteLength: 8 });
    const tail = new DataView(resizable, 4, 4);
    resizable.resize(2);
    expect(sql.exec("SELECT typeof(?1) AS ty, length(?1) AS n", tail).one()).toEqual(empty);
  });

  test("bindings: BigInt and Symbol are refused with the platform's TypeErrors", async () => {
    const { sql } = await setup();
    expect(errorOf(() => sql.exec("SELECT ?", 1n))).toBe("TypeError: Cannot convert a BigInt value to a number");
    expect(errorOf(() => sql.exec("SELECT ?", Symbol("s")))).toBe(
      "TypeError: Cannot convert a Symbol value to a string",
    );
  });

  test("bindings: a wrong count fails; ?NNN and :name bind positionally", async () => {
    const { sql } = await setup();
    expect(errorOf(() => sql.exec("SELECT ?, ?", 1))).toBe("Error: Wrong number of parameter bindings for SQL query.");
    expect(errorOf(() => sql.exec("SELECT 1", 1))).toBe("Error: Wrong number of parameter bindings for SQL query.");
    expect(sql.exec("SELECT ?2 AS b, ?1 AS a", "x", "y").one()).toEqual({ b: "y", a: "x" });
    expect(sql.exec("SELECT :a AS a, :b AS b, :a AS c", 1, 2).one()).toEqual({ a: 1, b: 2, c: 1 });
  });

  test("exec: a missing query is refused like the platform's JSG type check; any other value becomes a string", async () => {
    const { sql } = await setup();
    const exec = sql.exec.bind(sql) as (...args: unknown[]) => { toArray(): unknown[] };
    expect(errorOf(() => exec())).toBe(
      "TypeError: Failed to execute 'exec' on 'SqlStorage': parameter 1 is not of type 'JsString'.",
    );
    // As workerd answers (compared through Miniflare); until 2026-11-27 each was the TypeError above.
    expect(exec(new String("SELECT 9 AS n")).toArray()).toEqual([{ n: 9 }]);
    expect(exec(["SELECT ? AS n"], 8).toArray()).toEqual([{ n: 8 }]);
    expect(exec({ toString: () => "SELECT 7 AS n" }).toArray()).toEqual([{ n: 7 }]);
    expect(errorOf(() => exec(undefined))).toBe('Error: near "undefined": syntax error at offset 0: SQLITE_ERROR');
    expect(errorOf(() => exec(5))).toBe('Error: near "5": syntax error at offset 0: SQLITE_ERROR');
    expect(errorOf(() => exec(Symbol("q")))).toBe("TypeError: Cannot convert a Symbol value to a string");
    const boom = {
      toString() {
        throw new RangeError("boom");
      },
    };
    expect(errorOf(() => exec(boom))).toBe("RangeError: boom");
  });
});

describe("exec: multiple statements", () => {
  test("all run; the cursor covers the last", async () => {
    const { sql } = await setup();
    const c = sql.exec(
      "CREATE TABLE t(x); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); SELECT x FROM t ORDER BY x",
    );
    expect(c.toArray()).toEqual([{ x: 1 }, { x: 2 }]);
    expect(sql.exec("SELECT 1 AS a; SELECT 2 AS b;  \n").one()).toEqual({ b: 2 });
  });

  test("only the last may take bindings; statements before the error stay applied", async () => {
    const { sql } = await setup();
    sql.exec("CREATE TABLE t(x)");
    expect(errorOf(() => sql.exec("INSERT INTO t VALUES (1); INSERT INTO t VALUES (?); SELECT ?", 1, 2))).toBe(
      "Error: When executing multiple SQL statements in a single call, only the last statement can have parameters.",
    );
    expect(sql.exec("SELECT count(*) AS n FROM t").one().n).toBe(1);
    expect(sql.exec("INSERT INTO t VALUES (5); SELECT ? AS v", 7).one()).toEqual({ v: 7 });
  });

  test.each([
    [""],
    [";"],
    [";;"],
    ["  "],
    ["-- just a comment"],
    ["/* c */"],
    ["SELECT 1;;"],
    ["SELECT 1; -- trailing"],
  ])("no statement: %j → SQL code did not contain a statement.", async (q) => {
    const { sql } = await setup();
    expect(errorOf(() => sql.exec(q))).toBe("Error: SQL code did not contain a statement.");
  });

  test("empty statements before a statement are skipped, first or later, and it is judged as itself", async () => {
    // SQLite keeps the `;` in the statement's text; until 2026-11-27 the access check listed
    // `EXPLAIN ;SELECT 1` and every such query failed with an untranslated EngineError.
    const persistence = createMemoryPersistence();
    const storage = await ObjectStorage.open({ persistence });
    const { sql } = storage;
    sql.exec("CREATE TABLE t(x)");
    await storage.put("k", 1);
    expect(sql.exec(";SELECT 1 AS a").one()).toEqual({ a: 1 });
    expect(sql.exec("/* c */ ; ;SELECT ? AS a", 2).one()).toEqual({ a: 2 });
    expect(sql.exec("SELECT 0; ;INSERT INTO t VALUES (1) RETURNING x").toArray()).toEqual([{ x: 1 }]);
    expect(sql.exec("; ;INSERT INTO t VALUES (2); ;SELECT count(*) AS n FROM t").one()).toEqual({ n: 2 });
    // Every rule still applies to the statement after the `;`, with offsets into the whole text.
    expect(errorOf(() => sql.exec(";BEGIN"))).toMatch(/^Error: To execute a transaction/);
    expect(errorOf(() => sql.exec("SELECT 1; ;ATTACH ':memory:' AS x"))).toBe("Error: not authorized: SQLITE_AUTH");
    expect(errorOf(() => sql.exec(";SELECT sqlite_version()"))).toBe(
      "Error: not authorized to use function: sqlite_version at offset 8: SQLITE_ERROR",
    );
    expect(errorOf(() => sql.exec(";CREATE TEMP TABLE x(a)"))).toBe("Error: not authorized: SQLITE_AUTH");
    expect(errorOf(() => sql.exec("; SELECT count(*) FROM _cf_KV"))).toBe("Error: not authorized: SQLITE_AUTH");
    await storage.close();
    const reopened = await ObjectStorage.open({ persistence });
    expect(reopened.sql.exec("SELECT x FROM t ORDER BY x").toArray()).toEqual([{ x: 1 }, { x: 2 }]);
    await reopened.close();
  });

  test("a statement before the last that stopped at a row fails the query's next cached run once, as on the platform", async () => {
    const { storage, sql } = await setup();
    const BUSY = "Error: A SQL prepared statement can only be executed once at a time.";
    const run = (q: string) => sql.exec(q).raw().toArray();
    // workerd steps such a statement once when it compiles the query and leaves it unreset in its
    // statement cache; the next run fails there (and resets it), later runs work.
    expect(run("SELECT 1; SELECT 2")).toEqual([[2]]);
    expect(errorOf(() => run("SELECT 1; SELECT 2"))).toBe(BUSY);
    expect(run("SELECT 1; SELECT 2")).toEqual([[2]]);
    expect(run("SELECT 1; SELECT 2")).toEqual([[2]]);
    // The statements before it ran, those after it did not; each one left at a row fails one run.
    sql.exec("CREATE TABLE t (a)");
    const mixed = "INSERT INTO t VALUES (1); SELECT 1; INSERT INTO t VALUES (2); VALUES (3); SELECT count(*) FROM t";
    expect(run(mixed)).toEqual([[2]]);
    expect(errorOf(() => run(mixed))).toBe(BUSY);
    expect(errorOf(() => run(mixed))).toBe(BUSY);
    expect(run(mixed)).toEqual([[7]]);
    expect(run("SELECT a, count(*) FROM t GROUP BY a ORDER BY a")).toEqual([
      [1, 4],
      [2, 3],
    ]);
    // A write with RETURNING stops at its first row too; statements that end at once never fail.
    const returning = "INSERT INTO t VALUES (5) RETURNING a; SELECT count(*) FROM t WHERE a = 5";
    expect(run(returning)).toEqual([[1]]);
    expect(errorOf(() => run(returning))).toBe(BUSY);
    expect(run(returning)).toEqual([[2]]);
    const ending = "INSERT INTO t VALUES (6); SELECT * FROM t WHERE a > 100; SELECT count(*) FROM t WHERE a = 6";
    for (let i = 1; i <= 3; i++) expect(run(ending)).toEqual([[i]]);
    // The check comes before the last statement's binding count.
    expect(errorOf(() => sql.exec("SELECT 1; SELECT ?"))).toBe(
      "Error: Wrong number of parameter bindings for SQL query.",
    );
    expect(errorOf(() => sql.exec("SELECT 1; SELECT ?", 1))).toBe(BUSY);
    // While a cursor reads the last statement the platform compiles the query anew: that run works,
    // and the cached statement still fails the run after the cursor let go.
    const two = "SELECT 1; SELECT 2 UNION ALL SELECT 3";
    const reading = sql.exec(two);
    reading.next();
    expect(run(two)).toEqual([[2], [3]]);
    reading.toArray();
    expect(errorOf(() => run(two))).toBe(BUSY);
    // deleteAll(): the platform compiles its cached statements again, each on its own, so a query
    // cached before it no longer fails; one first compiled after it does.
    const before = "SELECT 1; SELECT 4";
    expect(run(before)).toEqual([[4]]);
    await storage.deleteAll();
    for (let i = 0; i < 3; i++) expect(run(before)).toEqual([[4]]);
    const after = "SELECT 1; SELECT 5";
    expect(run(after)).toEqual([[5]]);
    expect(errorOf(() => run(after))).toBe(BUSY);
  });

  test("a read before the last left at a row holds its table until the query's next run, as on the platform", async () => {
    const { sql } = await setup();
    const LOCKED = "Error: database table is locked: SQLITE_LOCKED";
    const BUSY = "Error: A SQL prepared statement can only be executed once at a time.";
    const run = (q: string) => sql.exec(q).raw().toArray();
    sql.exec("CREATE TABLE t (a, b)");
    sql.exec("CREATE INDEX tb ON t(b)");
    sql.exec("INSERT INTO t VALUES (1, 1), (2, 2)");
    sql.exec("CREATE TABLE u (a)");
    // workerd leaves `SELECT a FROM t` at its first row in its statement cache: it still reads t.
    const query = "SELECT a FROM t; SELECT count(*) FROM u";
    expect(run(query)).toEqual([[0]]);
    expect(errorOf(() => sql.exec("DROP TABLE t"))).toBe(LOCKED);
    expect(errorOf(() => sql.exec("DROP TABLE u"))).toBe(LOCKED);
    // Other writes to t are not held up.
    sql.exec("INSERT INTO t VALUES (3, 3)");
    // While a cursor reads the last statement, a run of the query is a one-off: the held one stays.
    const reading = sql.exec("SELECT a FROM t; SELECT a FROM t");
    reading.next();
    expect(run("SELECT a FROM t; SELECT a FROM t")).toEqual([[1], [2], [3]]);
    reading.toArray();
    expect(errorOf(() => sql.exec("DROP INDEX tb"))).toBe(LOCKED);
    // The next run fails and resets it; t can be dropped once the other query let go of it too.
    expect(errorOf(() => run(query))).toBe(BUSY);
    expect(errorOf(() => sql.exec("DROP TABLE t"))).toBe(LOCKED);
    expect(errorOf(() => run("SELECT a FROM t; SELECT a FROM t"))).toBe(BUSY);
    sql.exec("DROP TABLE t");
    expect(run("SELECT name FROM sqlite_master")).toEqual([["u"]]);
    // A prelude that reads nothing (no row) holds nothing.
    sql.exec("CREATE TABLE v (a)");
    expect(run("SELECT a FROM v; SELECT 1")).toEqual([[1]]);
    sql.exec("DROP TABLE v");
  });

  test("SQLite's input ends at a NUL; text after it is a remainder with no statement, as on the platform", async () => {
    const { sql } = await setup();
    sql.exec("CREATE TABLE t(x)");
    // The statements before the NUL run (as statements before any error do); the call fails.
    for (const q of [
      "INSERT INTO t VALUES (1)\0 junk",
      "INSERT INTO t VALUES (2);\0",
      "INSERT INTO t VALUES (3); \0x",
    ]) {
      expect(errorOf(() => sql.exec(q))).toBe("Error: SQL code did not contain a statement.");
    }
    expect(errorOf(() => sql.exec("SELECT 1\0; DROP TABLE t"))).toBe("Error: SQL code did not contain a statement.");
    expect(sql.exec("SELECT x FROM t ORDER BY x").toArray()).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }]);
  });
});

describe("exec: writes reach the commit log exactly once, for statements not proven read-only", () => {
  test("logged: DML, DDL and pragma writes; not reads", async () => {
    const { writes, sql } = await setup();
    sql.exec("CREATE TABLE t(x)");
    sql.exec("INSERT INTO t VALUES (?)", 1);
    sql.exec("SELECT * FROM t");
    sql.exec("PRAGMA foreign_keys");
    sql.exec("PRAGMA foreign_keys = ON");
    sql.exec("WITH c AS (SELECT 1) SELECT * FROM c");
    sql.exec("UPDATE t SET x = 2 WHERE 0");
    expect((await writes()).map((w) => [w.sql, w.bindings])).toEqual([
      ["CREATE TABLE t(x)", []],
      ["INSERT INTO t VALUES (?)", [1]],
      ["PRAGMA foreign_keys = ON", []],
      ["UPDATE t SET x = 2 WHERE 0", []],
    ]);
  });

  test("a script logs each statement separately", async () => {
    const { writes, sql } = await setup();
    sql.exec("CREATE TABLE t(x); INSERT INTO t VALUES (1); SELECT * FROM t");
    expect((await writes()).map((w) => w.sql)).toEqual(["CREATE TABLE t(x);", "INSERT INTO t VALUES (1);"]);
  });

  test("time: statements see the storage clock's now, reads and writes alike", async () => {
    const { clock, sql } = await setup({ nowMs: Date.UTC(2030, 0, 2, 3, 4, 5) });
    expect(sql.exec("SELECT datetime('now') AS d").one().d).toBe("2030-01-02 03:04:05");
    sql.exec("CREATE TABLE t(d DEFAULT CURRENT_TIMESTAMP, x)");
    sql.exec("INSERT INTO t(x) VALUES (1)");
    expect(sql.exec("SELECT d FROM t").one().d).toBe("2030-01-02 03:04:05");
    await clock.advance(61_000);
    expect(sql.exec("SELECT datetime('now') AS d").one().d).toBe("2030-01-02 03:05:06");
    sql.exec("INSERT INTO t(x) VALUES (2)");
    expect(sql.exec("SELECT d FROM t WHERE x = 2").one().d).toBe("2030-01-02 03:05:06");
  });

  test("transactionSync: the core's savepoint rolls SQL back, and cached verdicts see the old schema", async () => {
    const { storage, sql } = await setup();
    await storage.put("k0", 0); // the internal table exists once the key-value API wrote
    sql.exec("CREATE TABLE u(x); CREATE TRIGGER tr AFTER INSERT ON u BEGIN INSERT INTO _cf_KV VALUES ('k', 1); END");
    expect(errorOf(() => sql.exec("INSERT INTO u VALUES (1)"))).toBe("Error: not authorized: SQLITE_AUTH");
    expect(() =>
      storage.transactionSync(() => {
        sql.exec("DROP TRIGGER tr");
        sql.exec("INSERT INTO u VALUES (1)");
        throw new Error("undo");
      }),
    ).toThrow("undo");
    // the trigger is back: the verdict cached while it was gone must not be reused
    expect(errorOf(() => sql.exec("INSERT INTO u VALUES (1)"))).toBe("Error: not authorized: SQLITE_AUTH");
    expect(sql.exec("SELECT count(*) AS n FROM u").one().n).toBe(0);
  });
});

describe("exec: statement cache", () => {
  const recorded = async () => {
    const { sql, recorders } = await setup({ record: true });
    return { engine: recorders[recorders.length - 1] as RecordingEngine, sql };
  };

  test("repeated SQL neither recompiles nor re-checks (no second EXPLAIN)", async () => {
    const { engine, sql } = await recorded();
    sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v)");
    sql.exec("INSERT INTO t VALUES (1, 'a')");
    const q = "SELECT v FROM t WHERE id = ?";
    sql.exec(q, 1).one();
    const prepared = engine.prepared.length;
    const explains = engine.explains;
    for (let i = 0; i < 100; i++) sql.exec(q, 1).one();
    expect(engine.prepared.length).toBe(prepared);
    expect(engine.explains).toBe(explains);
  });

  test("a schema change re-checks (once), without recompiling", async () => {
    const { engine, sql } = await recorded();
    sql.exec("CREATE TABLE t(x)");
    const q = "SELECT * FROM t";
    sql.exec(q).toArray();
    const explains = engine.explains;
    sql.exec("CREATE TABLE u(y)");
    sql.exec(q).toArray();
    sql.exec(q).toArray();
    expect(engine.explains).toBe(explains + 2); // one for CREATE TABLE u, one for the re-check
  });

  test("multi-statement queries are cached whole", async () => {
    const { engine, sql } = await recorded();
    sql.exec("CREATE TABLE t(x)");
    const q = "INSERT INTO t VALUES (1); SELECT count(*) AS n FROM t";
    sql.exec(q).one();
    const prepared = engine.prepared.length;
    expect(sql.exec(q).one().n).toBe(2);
    expect(engine.prepared.length).toBe(prepared);
  });

  test("the cache is bounded by the size of its SQL text", async () => {
    const { recorders, sql } = await setup({ record: true, statementCacheSize: 40 });
    const engine = recorders[recorders.length - 1] as RecordingEngine;
    const a = "SELECT 1 AS aaaaaaaaaaaaaaa";
    const b = "SELECT 2 AS bbbbbbbbbbbbbbb";
    sql.exec(a).toArray();
    sql.exec(b).toArray(); // evicts a
    const before = engine.prepared.length;
    sql.exec(b).toArray();
    expect(engine.prepared.length).toBe(before);
    sql.exec(a).toArray();
    expect(engine.prepared.length).toBe(before + 1);
  });

  test("the bound counts the SQL text in UTF-8 bytes, as the platform does", async () => {
    const { recorders, sql } = await setup({ record: true, statementCacheSize: 40 });
    const engine = recorders[recorders.length - 1] as RecordingEngine;
    // 18 UTF-16 code units each, 27 UTF-8 bytes: two do not fit in 40 bytes.
    const a = "SELECT 'ééééééééé'";
    const b = "SELECT 'èèèèèèèèè'";
    sql.exec(a).toArray();
    sql.exec(b).toArray(); // evicts a
    const before = engine.prepared.length;
    sql.exec(b).toArray();
    expect(engine.prepared.length).toBe(before);
    sql.exec(a).toArray();
    expect(engine.prepared.length).toBe(before + 1);
  });
});

describe("exec: what the compiled statements cost", () => {
  test("the compiled statements are bounded by their memory, not only by their text (1 MiB of short texts held ~400 MB)", async () => {
    const { recorders, sql } = await setup({ record: true, compiledCacheCost: 20 * COMPILED_STATEMENT_BASE_COST });
    const engine = recorders[recorders.length - 1] as RecordingEngine;
    const count = 200;
    for (let i = 0; i < count; i++) expect(sql.exec(`SELECT ${i} AS v`).one().v).toBe(i);
    const compiled = compiledStatements(engine).filter((q) => q.endsWith(" AS v"));
    expect(compiled.length).toBeGreaterThan(0);
    expect(compiled.length).toBeLessThan(20);
    // The most recent ones stay compiled; the oldest run again compiled anew, with their results.
    expect(compiled).toContain(`SELECT ${count - 1} AS v`);
    expect(compiled).not.toContain("SELECT 0 AS v");
    const before = engine.prepared.length;
    expect(sql.exec("SELECT 0 AS v").one().v).toBe(0);
    expect(engine.prepared.slice(before)).toEqual(["SELECT 0 AS v"]);
    // Compiled again and still cached: the next run compiles nothing.
    expect(sql.exec("SELECT 0 AS v").one().v).toBe(0);
    expect(engine.prepared.length).toBe(before + 1);
  });

  test("by default: about 2,700 short statements stay compiled, however many texts are cached", () => {
    const cache = new StatementCache();
    let live = 0;
    const compiledQuery = (sql: string): CachedStatement => {
      live++;
      const statement = { ...NOT_COMPILED, sql, freed: false, free: () => void live-- };
      return { ...uncompiledStatement(sql), statement };
    };
    for (let i = 0; i < 10_000; i++) {
      const sql = `SELECT ${i}`;
      cache.set(sql, [compiledQuery(sql)]);
    }
    // Every text is still cached (the platform's bound), but not every statement compiled.
    expect(cache.size).toBe(10_000);
    const bound = Math.floor(COMPILED_CACHE_MAX_COST / COMPILED_STATEMENT_BASE_COST);
    expect(bound).toBeLessThan(3000);
    expect(cache.compiledSize).toBeLessThanOrEqual(bound);
    expect(live).toBe(cache.compiledSize);
    // A query taken back comes back to be compiled, in its place in the LRU.
    const again = cache.get("SELECT 0");
    expect(again?.statements.map((s) => [s.sql, s.statement === NOT_COMPILED])).toEqual([["SELECT 0", true]]);
    expect([...cache.queries()].at(-1)).toBe("SELECT 0");
  });

  test("the estimate grows with the text: a statement's program does", () => {
    expect(compiledCost(["SELECT 1"])).toBe(COMPILED_STATEMENT_BASE_COST + 12 * 8);
    expect(compiledCost(["SELECT 'é'", "SELECT 2"])).toBe(2 * COMPILED_STATEMENT_BASE_COST + 12 * (11 + 8));
  });

  test("a query compiled again runs as its cached statements did: the platform's cache (its texts) decides", async () => {
    // Only the most recent query stays compiled; every other one is compiled again when it runs.
    const { storage, sql, recorders, writes } = await setup({ record: true, compiledCacheCost: 1 });
    const engine = recorders[recorders.length - 1] as RecordingEngine;
    const BUSY = "Error: A SQL prepared statement can only be executed once at a time.";
    const LOCKED = "Error: database table is locked: SQLITE_LOCKED";
    const run = (q: string) => sql.exec(q).raw().toArray();
    // A query never run before: compiling it makes room.
    let others = 0;
    const other = () => run(`SELECT 'other ${others++}'`);
    // A statement left at a row when its query was compiled keeps its state (and stays compiled).
    const two = "SELECT 1; SELECT 2";
    expect(run(two)).toEqual([[2]]);
    other();
    expect(errorOf(() => run(two))).toBe(BUSY);
    other();
    // From now on it runs as a cached query does (its statement before the last is reset after
    // its step), also when compiled again: it never fails again.
    for (let i = 0; i < 3; i++) {
      const before = engine.prepared.length;
      expect(run(two)).toEqual([[2]]);
      expect(engine.prepared.length).toBeGreaterThan(before);
      other();
    }
    // A cursor still reading keeps its statement, and its table stays held as on the platform.
    sql.exec("CREATE TABLE t (a)");
    sql.exec("INSERT INTO t VALUES (1), (2), (3)");
    const reading = sql.exec("SELECT a FROM t");
    expect(reading.next().value).toEqual({ a: 1 });
    other();
    expect(errorOf(() => sql.exec("DROP TABLE t"))).toBe(LOCKED);
    expect(reading.toArray()).toEqual([{ a: 2 }, { a: 3 }]);
    // A write compiled again is decided and logged again; a schema change shows as for any statement.
    const insert = "INSERT INTO t VALUES (?)";
    sql.exec(insert, 4);
    other();
    sql.exec(insert, 5);
    expect((await writes()).filter((w) => w.sql === insert).map((w) => w.bindings)).toEqual([[4], [5]]);
    const all = "SELECT * FROM t ORDER BY a DESC LIMIT 1";
    expect(sql.exec(all).one()).toEqual({ a: 5 });
    other();
    sql.exec("ALTER TABLE t ADD COLUMN b DEFAULT 'x'");
    expect(sql.exec(all).one()).toEqual({ a: 5, b: "x" });
    // deleteAll(): a query cached before it, compiled or not, no longer fails.
    const kept = "SELECT 1; SELECT 4";
    expect(run(kept)).toEqual([[4]]);
    expect(errorOf(() => run(kept))).toBe(BUSY);
    other();
    const left = "SELECT 1; SELECT 6";
    expect(run(left)).toEqual([[6]]);
    other();
    await storage.deleteAll();
    for (let i = 0; i < 3; i++) {
      expect(run(kept)).toEqual([[4]]);
      expect(run(left)).toEqual([[6]]);
    }
  });

  test("a query compiled again stays in the platform's LRU by its text", async () => {
    // Room for the texts of three queries of 18 bytes; one compiled at a time.
    const { sql } = await setup({ statementCacheSize: 54, compiledCacheCost: 1 });
    const BUSY = "Error: A SQL prepared statement can only be executed once at a time.";
    const run = (q: string) => sql.exec(q).raw().toArray();
    const a = "SELECT 1; SELECT 2";
    const b = "SELECT 3; SELECT 4";
    const c = "SELECT 5; SELECT 6";
    const d = "SELECT 7; SELECT 8";
    for (const q of [a, b, c]) run(q);
    for (const q of [a, b, c]) expect(errorOf(() => run(q))).toBe(BUSY);
    // a, b, c are cached (not all compiled): none fails again.
    for (const q of [a, b, c]) run(q);
    // d evicts a, the least recently used text: a is compiled as new, and fails its next run.
    run(d);
    expect(run(b)).toEqual([[4]]);
    expect(run(a)).toEqual([[2]]);
    expect(errorOf(() => run(a))).toBe(BUSY);
    // a's return evicted c; b (used since) stays.
    expect(run(b)).toEqual([[4]]);
    expect(run(c)).toEqual([[6]]);
    expect(errorOf(() => run(c))).toBe(BUSY);
  });
});

describe("databaseSize", () => {
  test("(page_count - freelist_count) * page_size", async () => {
    const { sql } = await setup();
    const before = sql.databaseSize;
    expect(before % 4096).toBe(0);
    sql.exec("CREATE TABLE t(x)");
    expect(sql.databaseSize).toBe(before + 4096);
  });

  test("backend kv (the facade disabled) names the option to change", async () => {
    const storage = await ObjectStorage.open({ backend: "kv" });
    expect(errorOf(() => storage.sql.exec("SELECT 1"))).toMatch(
      /only available on the SQLite backend.*backend: "sqlite"/,
    );
    expect(errorOf(() => storage.sql.databaseSize)).toMatch(/only available on the SQLite backend/);
    await storage.close();
  });
});
