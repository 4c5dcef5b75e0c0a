/**
 * Grammar-based differential fuzzing of the SQL API: programs of random statements
 * (`sql-fuzz-grammar.ts`) run by one object class (`sql-fuzz-object.ts`) on real workerd (through
 * Miniflare) and in an ObjectContext here; every request's outcome (each step's value or error
 * class and message, each cursor action's result, the row counters) and then the durable state
 * (schema, rows of every user table, key-value pairs, read by a new request after whatever commit
 * or reset the program caused) must be the same.
 *
 * CI runs a fixed seed and a bounded number of programs. Longer local runs:
 * `SQL_FUZZ_RUNS=2000 SQL_FUZZ_SEED=$RANDOM npx vitest run test/differential/sql-fuzz.differential.test.ts`
 * (`SQL_FUZZ_SECONDS` bounds the time, default 60 s per 100 runs).
 */
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import { classFromSource, type Outcome, objectWorker, ourSide, startMiniflare, workerdSide } from "./same-source";
import { fuzzProgramArb } from "./sql-fuzz-grammar";
import { type FuzzStep, fuzzRunPath, SQL_FUZZ_SOURCE } from "./sql-fuzz-object";
import { DEFAULT_COMPATIBILITY_DATE } from "./workerd";

const SEED = Number(process.env.SQL_FUZZ_SEED ?? 20_261_128);
const NUM_RUNS = Number(process.env.SQL_FUZZ_RUNS ?? 30);
const SECONDS = Number(process.env.SQL_FUZZ_SECONDS ?? Math.max(60, (NUM_RUNS / 100) * 60));

let mf: Miniflare;
const objectClass = classFromSource(SQL_FUZZ_SOURCE, "SqlFuzzObject");

beforeAll(async () => {
  mf = await startMiniflare([objectWorker("fuzz", SQL_FUZZ_SOURCE, "SqlFuzzObject", DEFAULT_COMPATIBILITY_DATE)]);
});

afterAll(async () => {
  await mf?.dispose();
});

/** What each request of `program`, then a `/dump`, gives on workerd and here. */
async function runFuzzProgram(
  program: readonly (readonly FuzzStep[])[],
): Promise<{ workerd: Outcome[]; ours: Outcome[] }> {
  const name = randomUUID();
  const theirs = await workerdSide(mf, "fuzz", name);
  const context = await ObjectContext.create(objectClass, { id: name });
  const mine = ourSide(context);
  const workerd: Outcome[] = [];
  const ours: Outcome[] = [];
  try {
    for (const path of [...program.map(fuzzRunPath), "/dump"]) {
      workerd.push(await theirs.request(path));
      ours.push(await mine.request(path));
    }
  } finally {
    await context.close();
  }
  return { workerd, ours };
}

describe("sql fuzz: harness", () => {
  it("both sides run a program and dump the state it left", async () => {
    const { workerd, ours } = await runFuzzProgram([
      [
        {
          k: "exec",
          sql: "CREATE TABLE t (a); INSERT INTO t VALUES (1), (2) RETURNING a",
          plan: ["next", "counters", "toArray"],
        },
        { k: "kvPut", key: "k", value: "v" },
      ],
    ]);
    expect(workerd).toEqual([
      {
        ok: true,
        status: 200,
        body: [{ a: [{ v: { done: false, value: { a: 1 } } }, { v: [4, 2] }, { v: [{ a: 2 }] }] }, { v: { $u: 1 } }],
      },
      {
        ok: true,
        status: 200,
        body: {
          schema: expect.arrayContaining([{ type: "table", name: "t", tbl_name: "t", sql: "CREATE TABLE t (a)" }]),
          tables: { t: ["[1]", "[2]"] },
          kv: [["k", "v"]],
        },
      },
    ]);
    expect(ours).toEqual(workerd);
  });
});

/** Each statement in an exec of its own, read with toArray. */
const execs = (...sql: string[]): FuzzStep[] => sql.map((q) => ({ k: "exec", sql: q, plan: ["toArray"] }));

describe("sql fuzz: what it found, compared with workerd", () => {
  it("the internal tables' CREATE statements read back from sqlite_master as workerd's, white space included", async () => {
    const { workerd, ours } = await runFuzzProgram([
      [{ k: "kvPut", key: "k", value: 1 }, ...execs("SELECT name, sql FROM sqlite_master WHERE name = '_cf_KV'")],
    ]);
    expect(JSON.stringify(workerd)).toContain("key TEXT PRIMARY KEY,\\n");
    expect(ours).toEqual(workerd);
  });

  it("CREATE TRIGGER fails with SQLite's error where SQLite checks before the authorizer (another schema, no table, a system table)", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "CREATE TABLE t (a)",
        "CREATE TRIGGER tr AFTER INSERT ON nosuch.t BEGIN SELECT 1; END",
        "CREATE TRIGGER main.tr AFTER INSERT ON temp.t BEGIN SELECT 1; END",
        "CREATE TRIGGER IF NOT EXISTS [tr] AFTER INSERT ON 'nosuch'._cf_KV BEGIN SELECT 1; END",
        "CREATE TRIGGER _cf_tr AFTER INSERT ON nosuch.t BEGIN SELECT 1; END",
        "CREATE TEMP TRIGGER tr AFTER INSERT ON nosuch.t BEGIN SELECT 1; END",
        "CREATE TRIGGER temp.tr AFTER INSERT ON missing BEGIN SELECT 1; END",
        "CREATE TRIGGER tr AFTER INSERT ON main._cf_KV BEGIN SELECT 1; END",
        "CREATE TRIGGER tr AFTER INSERT ON temp.sqlite_master BEGIN SELECT 1; END",
        "CREATE TRIGGER temp.tr AFTER INSERT ON t BEGIN SELECT 1; END",
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END",
        'CREATE TRIGGER "TR" AFTER INSERT ON t BEGIN SELECT 1; END',
        'CREATE VIEW main."v" AS SELECT * FROM nosuch.t',
      ),
      [
        { k: "kvPut", key: "k", value: 1 },
        ...execs("CREATE TRIGGER tr2 AFTER INSERT ON main._cf_KV BEGIN SELECT 1; END"),
      ],
    ]);
    // Not only refusals: SQLite's own messages, with the name token's offset.
    expect(JSON.stringify(workerd)).toContain("trigger tr cannot reference objects in database nosuch at offset 15");
    expect(ours).toEqual(workerd);
  });

  it("DROP or ALTER of an internal name that names nothing is SQLite's 'no such …', or nothing with IF EXISTS", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "DROP TABLE IF EXISTS _cf_KV",
        "DROP TABLE IF EXISTS _cf_x",
        "DROP TABLE _cf_x",
        "DROP VIEW _CF_v",
        'DROP INDEX IF EXISTS "_cf_i"',
        "DROP TRIGGER IF EXISTS [_CF_kv]",
        "DROP TRIGGER _cf_tr",
        "ALTER TABLE _cf_KV ADD COLUMN a2 DEFAULT 1",
        "ALTER TABLE _cf_x RENAME TO y",
      ),
      [
        { k: "kvPut", key: "k", value: 1 },
        ...execs(
          "DROP TABLE IF EXISTS _cf_KV",
          "DROP VIEW _cf_KV",
          "DROP TABLE sqlite_x",
          "ALTER TABLE _cf_KV ADD COLUMN a2",
        ),
      ],
      // The temp schema's table, unqualified: found in temp, so refused before SQLite's 'may not be dropped'.
      execs(
        "DROP VIEW IF EXISTS 'sqlite_temp_master'",
        "DROP TABLE sqlite_temp_master",
        "DROP TABLE IF EXISTS sqlite_temp_schema",
        "DROP VIEW sqlite_master",
        "DROP TABLE main.sqlite_temp_master",
        "DROP INDEX sqlite_temp_master",
      ),
    ]);
    expect(JSON.stringify(workerd)).toContain("no such view: _CF_v");
    expect(ours).toEqual(workerd);
  });
});

describe("sql fuzz: which error wins when a statement breaks two rules, compared with workerd", () => {
  it("a refused function against an unknown column or function: SQLite's resolution order, the last error of one expression", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "CREATE TABLE t1 (a, b, c)",
        "SELECT sqlite_version(), nosuch FROM t1",
        "SELECT nosuch, sqlite_version() FROM t1",
        "SELECT sqlite_version() + nosuch FROM t1",
        "SELECT sqlite_version() FROM t1 WHERE nosuch",
        "SELECT nosuch FROM (SELECT sqlite_version())",
        "SELECT sqlite_version(), (SELECT nosuch)",
        "SELECT sqlite_version(), nosuchfn()",
        "SELECT sqlite_version(nosuch)",
        "SELECT sqlite_version(1), nosuch",
        "SELECT median(nosuch), 1",
        "SELECT a FROM t1 ORDER BY sqlite_version(), nosuch",
        "UPDATE t1 SET x = sqlite_version()",
        "UPDATE t1 SET a = sqlite_version() WHERE nosuch",
        "INSERT INTO t1 VALUES (sqlite_version(), nosuch, 1)",
        "INSERT INTO t1 SELECT sqlite_version(), nosuch, 1",
        "INSERT INTO t1 (a) VALUES (1) RETURNING sqlite_version(), nosuch",
        "CREATE INDEX i ON t1 (sqlite_version(), nosuch)",
      ),
    ]);
    expect(JSON.stringify(workerd)).toContain("not authorized to use function: sqlite_version at offset 27");
    expect(ours).toEqual(workerd);
  });

  it("INSERT and DELETE of an internal table are refused before anything else is resolved, an UPDATE after its first assignment", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs("INSERT INTO _cf_KV VALUES (nosuch, 1)", "DELETE FROM _cf_KV WHERE nosuch"),
      [
        { k: "kvPut", key: "k", value: 1 },
        ...execs(
          "INSERT INTO _cf_KV VALUES (nosuch, 1)",
          "INSERT INTO main._CF_KV (nosuch) VALUES (1)",
          "INSERT INTO _cf_KV VALUES (1)",
          "REPLACE INTO _cf_KV SELECT nosuch",
          "WITH x AS (SELECT nosuch) INSERT INTO _cf_KV SELECT * FROM x",
          "INSERT INTO _cf_KV VALUES ('a', 1) RETURNING nosuch",
          "DELETE FROM _cf_KV WHERE sqlite_version() AND nosuch",
          "DELETE FROM _cf_KV RETURNING nosuch",
          "INSERT INTO temp._cf_KV VALUES (nosuch, 1)",
          "UPDATE _cf_KV SET value = 1 WHERE nosuch",
          "UPDATE _cf_KV SET value = 1, nosuch = 2",
          "UPDATE _cf_KV SET nosuch = 2, value = 1",
          "UPDATE _cf_KV SET value = nosuch WHERE 1",
          "UPDATE _cf_KV SET value = sqlite_version()",
          "UPDATE _cf_KV SET value = 1, key = sqlite_version()",
          "UPDATE _cf_KV SET value = abs(sqlite_version()) WHERE nosuch",
        ),
      ],
      // The temp schema's table: the platform refuses writing temp before SQLite calls it read-only.
      execs(
        "INSERT INTO sqlite_temp_master VALUES (1, 2, 3, 4, 5)",
        "INSERT INTO temp.sqlite_master VALUES (1, 2, 3, 4, 5)",
        "REPLACE INTO sqlite_temp_schema (nosuch) VALUES (1)",
        "INSERT INTO temp.sqlite_temp_master DEFAULT VALUES",
        "INSERT INTO main.sqlite_temp_master VALUES (1, 2, 3, 4, 5)",
        "INSERT INTO sqlite_master VALUES (1, 2, 3, 4, 5)",
        "UPDATE sqlite_temp_master SET name = 1",
        "DELETE FROM temp.sqlite_master",
      ),
    ]);
    expect(JSON.stringify(workerd[1])).toContain("not authorized: SQLITE_AUTH");
    expect(ours).toEqual(workerd);
  });

  it("ALTER TABLE of an internal table: SQLite's checks of RENAME TO, DROP COLUMN and an added name come first; ANALYZE/REINDEX of nothing", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs("ANALYZE _cf_KV", "REINDEX _cf_KV", "REINDEX sqlite_autoindex__cf_KV_1", "ANALYZE main._cf_x"),
      [
        { k: "kvPut", key: "k", value: 1 },
        ...execs(
          "CREATE TABLE t1 (a)",
          "ALTER TABLE _cf_KV RENAME TO t1",
          "ALTER TABLE _cf_KV RENAME TO x",
          'ALTER TABLE "_cf_KV" RENAME TO "sqlite_q"',
          "ALTER TABLE t1 RENAME TO _CF_kv",
          "ALTER TABLE _cf_KV DROP COLUMN key",
          "ALTER TABLE _cf_KV DROP COLUMN value",
          "ALTER TABLE main._cf_KV DROP nosuch",
          'ALTER TABLE t1 DROP "nosuch"',
          "ALTER TABLE _cf_KV ADD COLUMN value",
          "ALTER TABLE _cf_KV ADD COLUMN x PRIMARY KEY",
          "ALTER TABLE _cf_KV RENAME COLUMN value TO key",
          "ALTER TABLE _cf_KV RENAME nosuch TO v",
        ),
      ],
    ]);
    expect(JSON.stringify(workerd)).toContain("cannot drop PRIMARY KEY column");
    expect(ours).toEqual(workerd);
  });
});

describe("sql fuzz: a schema written in another case, compared with workerd", () => {
  it("a FROM item qualified MAIN. or TEMP. of which no column is read is refused; one whose columns are read is not", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "CREATE TABLE t1 (a, b, c); CREATE TABLE t2 (a INTEGER PRIMARY KEY, b TEXT, c); INSERT INTO t1 VALUES (1, 2, 3)",
        "SELECT count(*) AS n FROM MAIN.t1",
        'SELECT 1 FROM MAIN."T1"',
        'SELECT count(*) FROM "MAIN".t1',
        "SELECT count(*) FROM [Main].t1",
        'SELECT count(*) FROM "main".t1',
        "SELECT rowid FROM MAIN.t1",
        "SELECT a FROM MAIN.t2",
        "SELECT b FROM MAIN.t2",
        "SELECT * FROM MAIN.t1",
        "SELECT count(a) FROM MAIN.t1",
        "SELECT count(*) FROM MAIN.t1 WHERE a > 0",
        "SELECT EXISTS (SELECT 1 FROM MAIN.t1)",
        "SELECT a FROM t1 WHERE a IN (SELECT 1 FROM MAIN.t2)",
        "WITH c AS (SELECT 1 FROM MAIN.t1) SELECT * FROM c",
        "SELECT 1 FROM MAIN.t1 AS x JOIN t2 USING (a)",
        "SELECT count(*) FROM TEMP.sqlite_master",
        "SELECT count(*) FROM temp.sqlite_master",
        "SELECT count(*) FROM MAIN.sqlite_master",
        "EXPLAIN SELECT count(*) FROM MAIN.t1",
        "DELETE FROM MAIN.t1 WHERE 0",
        "CREATE VIEW v AS SELECT count(*) AS n FROM MAIN.t1",
        "SELECT * FROM v",
      ),
    ]);
    expect(JSON.stringify(workerd[0])).toContain("not authorized: SQLITE_AUTH");
    expect(ours).toEqual(workerd);
  });
});

describe("sql fuzz: error offsets, compared with workerd", () => {
  it("an UPDATE that assigns an unknown column: no offset (SQLite names it with %s), but one for the name in a value", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "CREATE TABLE t (a, b)",
        "UPDATE t SET x = 5",
        "UPDATE t SET a = 1, x = (SELECT 1) WHERE a = 1",
        "UPDATE t SET x = x + 1",
        "UPDATE t SET a = x",
        "UPDATE t SET a = 1 WHERE x = 2",
        "UPDATE t AS z SET b = 1, zz = z.a",
        "UPDATE t SET x = 1;UPDATE t SET x = 1 WHERE a > 1",
      ),
    ]);
    expect(JSON.stringify(workerd)).toContain('"no such column: x: SQLITE_ERROR"');
    expect(ours).toEqual(workerd);
  });

  it("a name written several times: the offset of the one SQLite fails on (rowid in RETURNING of a table without one)", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "CREATE TABLE t1 (a, b); CREATE TABLE w (a PRIMARY KEY, b) WITHOUT ROWID",
        "INSERT INTO w (a) SELECT a FROM t1 WHERE rowid % 2 = 0 RETURNING rowid, a",
        "INSERT INTO w (a, b) SELECT rowid, b FROM t1 RETURNING rowid",
        "SELECT rowid FROM t1 UNION SELECT rowid FROM w",
        "SELECT t1.rowid, w.rowid FROM t1, w",
      ),
    ]);
    expect(JSON.stringify(workerd)).toContain("no such column: rowid at offset 65");
    expect(ours).toEqual(workerd);
  });
});

describe("sql fuzz: what the extended grammar found, compared with workerd", () => {
  it("a pragma_* call refused by its literal argument fails when the statement runs, after its bindings are counted and after the statements before it ran", async () => {
    const { workerd, ours } = await runFuzzProgram([
      [
        ...execs("CREATE TABLE t1 (a)"),
        { k: "exec", sql: "SELECT * FROM pragma_table_info('_cf_KV') WHERE 1 AND ?1 IS NOT ?2", args: [], plan: [] },
        { k: "exec", sql: "SELECT * FROM pragma_table_info('_cf_KV') WHERE ?1 IS NULL", args: [1], plan: [] },
        ...execs(
          "INSERT INTO t1 VALUES (1); SELECT * FROM pragma_table_info('_cf_KV')",
          "INSERT INTO t1 VALUES (2); SELECT * FROM pragma_index_list('_cf_KV'); INSERT INTO t1 VALUES (3)",
          "SELECT a FROM t1",
        ),
      ],
    ]);
    expect(JSON.stringify(workerd)).toContain("Wrong number of parameter bindings for SQL query.");
    expect(ours).toEqual(workerd);
  });

  it("misuse of an aggregate in VALUES: the offset of the call, as workerd's SQLite records it", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "CREATE TABLE t1 (a, b)",
        "INSERT INTO t1 (a, b) VALUES (count(*), 1), (1, 1)",
        "SELECT max(a) FROM t1 WHERE count(*) > 0",
      ),
    ]);
    expect(JSON.stringify(workerd)).toContain("misuse of aggregate: count() at offset 30");
    expect(ours).toEqual(workerd);
  });
});

describe("sql fuzz: what the extended grammar found (2)", () => {
  it("a function that is not a window function used as one: the offset of its call", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs("CREATE TABLE t1 (a)", "SELECT abs(a) OVER () FROM t1", "SELECT a, upper(a) OVER (ORDER BY a) FROM t1"),
    ]);
    expect(JSON.stringify(workerd)).toContain("abs() may not be used as a window function at offset 7");
    expect(ours).toEqual(workerd);
  });

  it("CREATE TABLE/VIEW/INDEX of a reserved sqlite_ name, and an index's table and name: SQLite's error comes before the refusal", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "CREATE TABLE t1 (a)",
        "CREATE TABLE temp.sqlite_master (a)",
        "CREATE TEMP TABLE sqlite_x (a)",
        "CREATE TABLE sqlite_x (a)",
        "CREATE TABLE IF NOT EXISTS main.SQLITE_y (a)",
        "CREATE VIEW temp.sqlite_v AS SELECT 1",
        "CREATE UNIQUE INDEX sqlite_i ON t1 (a)",
        "CREATE TABLE temp.x (a)",
        "CREATE INDEX _cf_KV ON nosuch (a)",
        "CREATE INDEX temp._cf_i ON t1 (a)",
        "CREATE INDEX temp.sqlite_i ON t1 (a)",
        "CREATE INDEX _cf_i ON sqlite_master (name)",
        "CREATE INDEX t1 ON t1 (a)",
        "CREATE INDEX _cf_i ON t1 (nosuch)",
        "CREATE INDEX _cf_i ON t1 (a)",
        "SELECT name FROM sqlite_master ORDER BY name",
      ),
      [
        { k: "kvPut", key: "k", value: 1 },
        ...execs(
          "CREATE INDEX _cf_KV ON t1 (a)",
          "CREATE INDEX _CF_kv ON t1 (a)",
          "CREATE INDEX sqlite_autoindex__cf_KV_1 ON t1 (a)",
          "CREATE INDEX IF NOT EXISTS _cf_KV ON t1 (a)",
          "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name",
        ),
      ],
    ]);
    expect(JSON.stringify(workerd)).toContain("object name reserved for internal use: sqlite_master");
    expect(ours).toEqual(workerd);
  });
});

describe("sql fuzz: what the extended grammar found (3)", () => {
  it("RENAME COLUMN of a column the table lacks: the offset of its name in this statement, not a later one's", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "CREATE TABLE t1 (b)",
        "ALTER TABLE t1 RENAME COLUMN a TO ax;SELECT * FROM t1 WHERE a > 1",
        "ALTER TABLE t1 DROP COLUMN a; SELECT a FROM t1",
      ),
    ]);
    expect(JSON.stringify(workerd)).toContain('no such column: \\"a\\" at offset 29');
    expect(ours).toEqual(workerd);
  });

  it("DROP TRIGGER of a schema table's name finds no trigger, as SQLite says before any refusal", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "DROP TRIGGER sqlite_temp_master",
        "DROP TRIGGER sqlite_master",
        "DROP TRIGGER IF EXISTS sqlite_schema",
        "DROP TRIGGER main.sqlite_x",
        "CREATE TABLE t1 (a)",
      ),
    ]);
    expect(JSON.stringify(workerd)).toContain("no such trigger: sqlite_temp_master");
    expect(ours).toEqual(workerd);
  });
});

describe("sql fuzz: what the extended grammar found (4)", () => {
  it("a syntax error wins over a refusal SQLite's parser reaches only at the statement's end (an index, a view, DROP, ALTER, REINDEX, ANALYZE), not over one it reaches at a trigger's BEGIN", async () => {
    const { workerd, ours } = await runFuzzProgram([
      [
        { k: "kvPut", key: "k", value: 1 },
        ...execs(
          "CREATE TABLE t1 (a)",
          "CREATE INDEX `_cf_KV` ON temp.[t1] (b)",
          "CREATE INDEX i ON _cf_KV (a) garbage",
          "CREATE INDEX _cf_i ON t1 (a,,)",
          "CREATE INDEX temp.i ON t1 (a) WHERE",
          "CREATE TEMP VIEW v AS SELECT 1 1",
          "CREATE VIEW _cf_v AS SELECT FROM",
          "DROP TABLE _cf_KV garbage",
          "EXPLAIN DROP TABLE _cf_x (",
          "ALTER TABLE _cf_KV ADD COLUMN x y z ,,",
          "ALTER TABLE _cf_KV RENAME COLUMN key TO k2 zz",
          "REINDEX _cf_KV junk",
          "ANALYZE temp junk",
          // Refused at the trigger's BEGIN, or at a table's name: what follows is not parsed.
          "CREATE TRIGGER tr AFTER INSERT ON _cf_KV BEGIN SELEC 1; END",
          "CREATE TEMP TRIGGER tr AFTER INSERT ON t1 BEGIN SELECT 1 END",
          "CREATE TRIGGER tr AFTER INSERT ON _cf_KV WHEN (begin) BEGIN INSERT INTO main.t1 VALUES (1); END",
          "CREATE TRIGGER tr AFTER INSERT ON _cf_KV WHEN ( BEGIN SELECT 1; END",
          "CREATE TRIGGER tr AFTER INSERT ON nosuch.t1 BEGIN SELEC 1; END",
          "CREATE TABLE _cf_x (a,,)",
          // The platform's SQLite looks an ADD COLUMN's table up before it parses the column.
          "ALTER TABLE temp.t1 ADD COLUMN x ,,",
          "ALTER TABLE sqlite_master ADD x ,,",
          "ALTER TABLE _cf_x ADD COLUMN x CHECK (",
          // An internal name in a schema that does not hold it: SQLite's error, found first.
          "REINDEX nosuch._cf_KV;CREATE TABLE t2 (a)",
          "ANALYZE [NoSuch].sqlite_autoindex__cf_KV_1",
          "REINDEX temp._cf_KV",
          "ANALYZE TEMP._cf_METADATA",
        ),
      ],
    ]);
    expect(JSON.stringify(workerd)).toContain('near \\"garbage\\": syntax error at offset 18');
    expect(ours).toEqual(workerd);
  });
});

describe("sql fuzz: what the extended grammar found (5)", () => {
  it("one() of a write's RETURNING rows that finds several counts the row it stepped to as read", async () => {
    const { workerd, ours } = await runFuzzProgram([
      [
        ...execs("CREATE TABLE t1 (a, b)"),
        {
          k: "exec",
          sql: "INSERT INTO t1 (a, b) VALUES (1, 1), (2, 1) RETURNING a",
          plan: ["one", "counters", "toArray", "counters"],
        },
        {
          k: "exec",
          sql: "INSERT INTO t1 (a, b) VALUES (1, 1), (2, 1), (3, 1) RETURNING a",
          plan: ["one", "counters"],
        },
        {
          k: "exec",
          sql: "INSERT INTO t1 (a) VALUES (1), (2), (3), (4) RETURNING a",
          plan: ["next", "one", "counters"],
        },
        { k: "exec", sql: "UPDATE t1 SET b = 2 WHERE a < 3 RETURNING b", plan: ["counters", "one", "counters"] },
        { k: "exec", sql: "SELECT a FROM t1", plan: ["one", "counters"] },
      ],
    ]);
    expect(JSON.stringify(workerd[0])).toContain('multiple results."]},{"v":[4,2]}');
    expect(ours).toEqual(workerd);
  });

  it("unknown database: the offset of the schema in this statement, not of a later statement's qualified name", async () => {
    const { workerd, ours } = await runFuzzProgram([
      [
        {
          k: "txSync",
          steps: [
            { k: "exec", sql: "VACUUM nosuch;SELECT * FROM nosuch.t1 WHERE a IS NULL;BEGIN", args: [], plan: [] },
          ],
          throwAtEnd: false,
        },
        ...execs(
          "CREATE TABLE t1 (a)",
          'VACUUM "nosuch"; SELECT * FROM "nosuch".t1',
          "PRAGMA nosuch.user_version; SELECT * FROM nosuch.t1",
          "SELECT * FROM t1;VACUUM nosuch",
        ),
      ],
    ]);
    expect(JSON.stringify(workerd)).toContain("unknown database nosuch at offset 7");
    expect(ours).toEqual(workerd);
  });
});

describe("sql fuzz: what the extended grammar found (6)", () => {
  it("a reserved sqlite_ name written as a string in a TEMP CREATE: SQLite's error, found before the refusal", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "CREATE TABLE t1 (a)",
        "CREATE TABLE temp.'sqlite_master' (a)",
        "CREATE TEMP TABLE 'sqlite_x' (a)",
        "CREATE TEMP VIEW 'sqlite_v' AS SELECT 1",
        "CREATE TABLE temp.'x' (a)",
      ),
    ]);
    expect(JSON.stringify(workerd)).toContain("object name reserved for internal use: sqlite_master");
    expect(ours).toEqual(workerd);
  });

  it("ANALYZE of the temp schema table by its unqualified name analyzes temp: refused as ANALYZE temp", async () => {
    const { workerd, ours } = await runFuzzProgram([
      [
        {
          k: "txSync",
          steps: [{ k: "exec", sql: "ANALYZE sqlite_temp_master;CREATE TABLE t1 (a)", args: [], plan: [] }],
          throwAtEnd: false,
        },
        ...execs("ANALYZE SQLITE_TEMP_SCHEMA", 'ANALYZE "sqlite_temp_master"', "ANALYZE sqlite_master", "ANALYZE"),
      ],
    ]);
    expect(JSON.stringify(workerd[0])).toContain("not authorized");
    expect(ours).toEqual(workerd);
  });
  it("DROP of a temp name: a VIEW of the temp schema table reaches the refusal, another sqlite_ name is SQLite's no such table", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "DROP VIEW temp.sqlite_master",
        "DROP TABLE temp.sqlite_sequence",
        "DROP VIEW IF EXISTS temp.sqlite_stat1",
        "DROP TABLE temp.sqlite_temp_master",
        "DROP VIEW TEMP.sqlite_schema",
        "CREATE TABLE t1 (a)",
      ),
    ]);
    expect(JSON.stringify(workerd)).toContain("no such table: temp.sqlite_sequence");
    expect(ours).toEqual(workerd);
  });
});

describe("sql fuzz: pinned engine differences", () => {
  it("a multi-row INSERT OR REPLACE whose later row fails: workerd keeps the rows it replaced before, sql.js undoes the statement (docs/sql.md, 17)", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "CREATE TABLE t2 (a INTEGER PRIMARY KEY, b TEXT); INSERT INTO t2 (b) VALUES ('p'), ('q')",
        "INSERT OR REPLACE INTO t2 (a, b) VALUES (1, 1), ('', 1)",
        "SELECT a, b FROM t2 ORDER BY a",
      ),
    ]);
    const rows = (outcome: Outcome | undefined) => (outcome?.ok ? (outcome.body as unknown[])[2] : outcome);
    const failed = (outcome: Outcome | undefined) => (outcome?.ok ? (outcome.body as unknown[])[1] : outcome);
    expect(failed(workerd[0])).toEqual({ e: ["Error", "datatype mismatch: SQLITE_MISMATCH"] });
    expect(failed(ours[0])).toEqual(failed(workerd[0]));
    expect(JSON.stringify(rows(workerd[0]))).toContain('{"a":1,"b":"1"}');
    expect(JSON.stringify(rows(ours[0]))).toContain('{"a":1,"b":"p"}');
  });

  it("text holding a NUL stored into an INTEGER PRIMARY KEY: workerd's SQLite refuses it, sql.js's reads the digits before the NUL (docs/sql.md, 16)", async () => {
    const { workerd, ours } = await runFuzzProgram([
      execs(
        "CREATE TABLE t (a INTEGER PRIMARY KEY)",
        "INSERT INTO t VALUES ('1' || char(0) || 'x')",
        "SELECT a FROM t",
      ),
    ]);
    const insert = (outcome: Outcome | undefined) => (outcome?.ok ? (outcome.body as unknown[])[1] : outcome);
    expect(insert(workerd[0])).toEqual({ e: ["Error", "datatype mismatch: SQLITE_MISMATCH"] });
    expect(insert(ours[0])).toEqual({ a: [{ v: [] }] });
  });
});

describe("sql fuzz", () => {
  it(
    `random programs: ObjectStorage matches workerd (seed ${SEED}, ${NUM_RUNS} runs)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fuzzProgramArb(), async (program) => {
          const { workerd, ours } = await runFuzzProgram(program);
          expect(ours).toEqual(workerd);
        }),
        { seed: SEED, numRuns: NUM_RUNS, interruptAfterTimeLimit: SECONDS * 1000, markInterruptAsFailure: false },
      );
    },
    (SECONDS + 120) * 1000,
  );
});
