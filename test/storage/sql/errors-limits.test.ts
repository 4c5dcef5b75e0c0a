import { describe, expect, test } from "vitest";
import { errorOf, setup } from "./helpers";

describe("errors: the platform's shape", () => {
  test.each([
    ["SELEC 1", 'Error: near "SELEC": syntax error at offset 0: SQLITE_ERROR'],
    ["SELECT 1 FROM t WHERE WHERE", 'Error: near "WHERE": syntax error at offset 22: SQLITE_ERROR'],
    ["SELECT 'é', 1 +", "Error: incomplete input: SQLITE_ERROR"],
    ["SELECT é FROM t", "Error: no such column: é at offset 7: SQLITE_ERROR"],
    ["SELECT * FROM nosuch", "Error: no such table: nosuch: SQLITE_ERROR"],
    ["SELECT nosuch FROM t", "Error: no such column: nosuch at offset 7: SQLITE_ERROR"],
    ["SELECT t.nosuch FROM t", "Error: no such column: t.nosuch at offset 7: SQLITE_ERROR"],
    ["SELECT abs(1, 2)", "Error: wrong number of arguments to function abs() at offset 7: SQLITE_ERROR"],
    ["SELECT nofn(1)", "Error: no such function: nofn at offset 7: SQLITE_ERROR"],
    ["CREATE TABLE t(x)", "Error: table t already exists at offset 13: SQLITE_ERROR"],
  ])("%s", async (q, message) => {
    const { sql } = await setup();
    sql.exec("CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE, c NOT NULL, d CHECK (d > 0))");
    expect(errorOf(() => sql.exec(q))).toBe(message);
  });

  test("constraint failures carry the extended code", async () => {
    const { sql } = await setup();
    sql.exec(
      "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE, c NOT NULL, d CHECK (d > 0)); CREATE TABLE p(x, y, PRIMARY KEY (x, y)); CREATE TABLE w(k PRIMARY KEY) WITHOUT ROWID",
    );
    sql.exec("INSERT INTO t VALUES (1, 1, 1, 1); INSERT INTO p VALUES (1, 1); INSERT INTO w VALUES (1)");
    const cases: [string, string][] = [
      [
        "INSERT INTO t VALUES (1, 2, 1, 1)",
        "UNIQUE constraint failed: t.a: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_PRIMARYKEY)",
      ],
      [
        "INSERT INTO t VALUES (2, 1, 1, 1)",
        "UNIQUE constraint failed: t.b: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_UNIQUE)",
      ],
      [
        "INSERT INTO p VALUES (1, 1)",
        "UNIQUE constraint failed: p.x, p.y: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_PRIMARYKEY)",
      ],
      [
        "INSERT INTO w VALUES (1)",
        "UNIQUE constraint failed: w.k: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_PRIMARYKEY)",
      ],
      [
        "INSERT INTO t(a, b) VALUES (3, 3)",
        "NOT NULL constraint failed: t.c: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_NOTNULL)",
      ],
      [
        "INSERT INTO t VALUES (4, 4, 4, -1)",
        "CHECK constraint failed: d > 0: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_CHECK)",
      ],
    ];
    for (const [q, message] of cases) expect(errorOf(() => sql.exec(q))).toBe(`Error: ${message}`);
    sql.exec("CREATE TRIGGER r BEFORE INSERT ON w BEGIN SELECT RAISE(ABORT, 'nope'); END");
    expect(errorOf(() => sql.exec("INSERT INTO w VALUES (2)"))).toBe(
      "Error: nope: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_TRIGGER)",
    );
  });

  test("a failed statement does not undo earlier statements", async () => {
    const { sql } = await setup();
    sql.exec("CREATE TABLE t(a PRIMARY KEY)");
    sql.exec("INSERT INTO t VALUES (1)");
    expect(() => sql.exec("INSERT INTO t VALUES (2), (1)")).toThrow(/UNIQUE/);
    expect(sql.exec("SELECT a FROM t").toArray()).toEqual([{ a: 1 }]);
  });

  test("load_extension and VACUUM fail as on the platform", async () => {
    const { sql } = await setup();
    sql.exec("CREATE TABLE t(x)");
    expect(errorOf(() => sql.exec("VACUUM"))).toBe("Error: cannot VACUUM from within a transaction: SQLITE_ERROR");
  });
});

describe("limits", () => {
  test("statement length: 100,000 bytes", async () => {
    const { sql } = await setup();
    const pad = " ".repeat(100_000 - "SELECT 1".length);
    expect(sql.exec(`SELECT 1${pad}`).one()).toEqual({ 1: 1 });
    expect(errorOf(() => sql.exec(`SELECT 1${pad} `))).toBe("Error: statement too long: SQLITE_TOOBIG");
    // bytes, not characters
    expect(errorOf(() => sql.exec(`SELECT '${"é".repeat(50_000)}'`))).toBe("Error: statement too long: SQLITE_TOOBIG");
  });

  test("variables: 100", async () => {
    const { sql } = await setup();
    const ok = Array.from({ length: 100 }, () => "?").join(",");
    expect(
      sql
        .exec(`SELECT ${ok}`, ...Array.from({ length: 100 }, (_, i) => i))
        .raw()
        .one().length,
    ).toBe(100);
    expect(errorOf(() => sql.exec(`SELECT ${ok},?`))).toBe("Error: too many SQL variables at offset 207: SQLITE_ERROR");
    expect(errorOf(() => sql.exec("SELECT ?101"))).toBe(
      "Error: variable number must be between ?1 and ?100 at offset 7: SQLITE_ERROR",
    );
    expect(errorOf(() => sql.exec("SELECT ?40000"))).toBe(
      "Error: variable number must be between ?1 and ?100 at offset 7: SQLITE_ERROR",
    );
  });

  test("columns: 100 in a table and in a result set", async () => {
    const { sql } = await setup();
    const cols = (n: number) => Array.from({ length: n }, (_, i) => `c${i + 1}`).join(", ");
    sql.exec(`CREATE TABLE ok(${cols(100)})`);
    expect(errorOf(() => sql.exec(`CREATE TABLE big(${cols(101)})`))).toBe(
      "Error: too many columns on big: SQLITE_ERROR",
    );
    expect(errorOf(() => sql.exec(`SELECT ${Array.from({ length: 101 }, (_, i) => i).join(", ")}`))).toBe(
      "Error: too many columns in result set: SQLITE_ERROR",
    );
    expect(errorOf(() => sql.exec("ALTER TABLE ok ADD COLUMN c101"))).toBe(
      "Error: too many columns on sqlite_altertab_ok: SQLITE_ERROR",
    );
  });

  test("values: 2,200,000 bytes in bindings and in rows", async () => {
    const { sql } = await setup();
    expect(errorOf(() => sql.exec("SELECT ?", "x".repeat(2_200_001)))).toBe(
      "Error: string or blob too big: SQLITE_TOOBIG",
    );
    expect(errorOf(() => sql.exec("SELECT ?", new Uint8Array(2_200_001)))).toBe(
      "Error: string or blob too big: SQLITE_TOOBIG",
    );
    expect(errorOf(() => sql.exec("SELECT zeroblob(2200001)"))).toBe("Error: string or blob too big: SQLITE_TOOBIG");
    expect((sql.exec("SELECT zeroblob(2200000) AS z").one().z as ArrayBuffer).byteLength).toBe(2_200_000);
  });

  test("compound SELECT: 5 terms", async () => {
    const { sql } = await setup();
    const terms = (n: number) => Array.from({ length: n }, (_, i) => `SELECT ${i}`).join(" UNION ALL ");
    expect(sql.exec(terms(5)).toArray().length).toBe(5);
    expect(errorOf(() => sql.exec(terms(6)))).toBe("Error: too many terms in compound SELECT: SQLITE_ERROR");
  });

  test("expression depth: 100", async () => {
    const { sql } = await setup();
    expect(sql.exec(`SELECT ${"1+".repeat(98)}1 AS x`).one().x).toBe(99);
    expect(errorOf(() => sql.exec(`SELECT ${"1+".repeat(100)}1`))).toBe(
      "Error: Expression tree is too large (maximum depth 100): SQLITE_ERROR",
    );
  });

  test("function arguments: 127", async () => {
    const { sql } = await setup();
    const args = (n: number) => Array.from({ length: n }, (_, i) => i).join(",");
    expect(sql.exec(`SELECT max(${args(127)}) AS m`).one().m).toBe(126);
    expect(errorOf(() => sql.exec(`SELECT max(${args(128)})`))).toBe(
      "Error: too many arguments on function max at offset 7: SQLITE_ERROR",
    );
  });

  test("LIKE pattern: 50 bytes, literal or bound", async () => {
    const { sql } = await setup();
    expect(sql.exec(`SELECT 'a' LIKE '${"%".repeat(50)}' AS m`).one().m).toBe(1);
    expect(errorOf(() => sql.exec(`SELECT 'a' LIKE '${"%".repeat(51)}'`))).toBe(
      "Error: LIKE or GLOB pattern too complex: SQLITE_ERROR",
    );
    expect(errorOf(() => sql.exec("SELECT 'a' GLOB ?", "*".repeat(51)))).toBe(
      "Error: LIKE or GLOB pattern too complex: SQLITE_ERROR",
    );
  });

  test("limits can be overridden for tests", async () => {
    const { sql } = await setup({ limits: { maxVariables: 2 } });
    expect(errorOf(() => sql.exec("SELECT ?, ?, ?"))).toBe("Error: too many SQL variables at offset 13: SQLITE_ERROR");
  });
});
