/**
 * rowsRead / rowsWritten against workerd, statement by statement: the table in docs/sql.md ("rowsRead /
 * rowsWritten"). Each case states what workerd counts and what ObjectStorage counts; both are
 * checked, so the documented differences cannot drift silently, and where they agree the
 * agreement is checked too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Op, OpResult } from "./ops";
import { runOnSubject } from "./subject";
import { startWorkerd, type WorkerdHandle } from "./workerd";

/** [rowsRead, rowsWritten] on workerd and on ObjectStorage; one pair when they agree. */
type Counts = readonly [number, number];
interface Case {
  readonly query: string;
  readonly bindings?: readonly (number | string | null)[];
  /** How the cursor is read (default: `toArray`). */
  readonly read?: "toArray" | "next";
  readonly workerd: Counts;
  readonly ours?: Counts;
}

const SETUP = [
  "CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER, y TEXT)",
  "CREATE INDEX ty ON t(y)",
  "CREATE TABLE t2 (id INTEGER PRIMARY KEY, x INTEGER, y TEXT)",
  "CREATE TABLE u (a INTEGER, b TEXT, PRIMARY KEY (a)) WITHOUT ROWID",
  "CREATE TABLE p (id INTEGER PRIMARY KEY)",
  "CREATE TABLE c (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES p(id) ON DELETE CASCADE)",
  "CREATE TABLE r (id INTEGER PRIMARY KEY, name TEXT)",
  "CREATE TABLE q (a, b)",
  "CREATE TABLE empty (a)",
  "CREATE TABLE g (id INTEGER PRIMARY KEY, v TEXT)",
  "CREATE TABLE glog (what TEXT)",
  "CREATE TRIGGER g_log AFTER INSERT ON g BEGIN INSERT INTO glog VALUES (new.v); END",
  "CREATE TABLE pp (id INTEGER PRIMARY KEY)",
  "CREATE TABLE cc (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES pp(id) ON DELETE CASCADE ON UPDATE CASCADE)",
  "CREATE INDEX cc_pid ON cc(pid)",
];

/** Run in order, after SETUP: each sees the effects of the ones before. */
const CASES: readonly Case[] = [
  { query: "CREATE TABLE k (v INTEGER UNIQUE)", workerd: [1, 3] },
  {
    query: `INSERT INTO t VALUES ${Array.from({ length: 10 }, (_, i) => `(${i}, ${i * 10}, 'v${i}')`).join(", ")}`,
    workerd: [10, 20],
  },
  { query: "SELECT * FROM t", workerd: [10, 0] },
  { query: "SELECT * FROM t LIMIT 3", workerd: [3, 0] },
  { query: "SELECT * FROM t WHERE id = 5", workerd: [1, 0] },
  { query: "SELECT * FROM t WHERE id > 5", workerd: [4, 0] },
  { query: "SELECT count(*) FROM t", workerd: [10, 0] },
  { query: "SELECT * FROM t ORDER BY y", workerd: [10, 0] },
  { query: "SELECT * FROM t WHERE x = 50", workerd: [10, 0] },
  { query: "SELECT * FROM t WHERE x > 50", workerd: [10, 0] },
  { query: "SELECT * FROM t ORDER BY x", workerd: [20, 0] },
  { query: "SELECT sum(x) FROM t", workerd: [10, 0] },
  { query: "SELECT * FROM t WHERE y = 'v3'", workerd: [2, 0] },
  { query: "SELECT * FROM t a JOIN t b ON a.id = b.id", workerd: [20, 0] },
  { query: "UPDATE t SET x = x + 1 WHERE x > 50", workerd: [10, 4] },
  { query: "DELETE FROM t WHERE x < 20", workerd: [10, 2] },
  { query: "INSERT INTO t2 SELECT * FROM t", workerd: [16, 8] },
  { query: "UPDATE t SET y = 'z' || id WHERE id > 6", workerd: [3, 6] },
  { query: "UPDATE t SET x = 0 WHERE id > 6", workerd: [3, 3] },
  { query: "UPDATE t SET id = id + 100 WHERE id = 9", workerd: [3, 2] },
  { query: "UPDATE t SET y = 'z' WHERE id = 1", workerd: [1, 0] },
  { query: "INSERT INTO t VALUES (200, 5, 'q')", workerd: [1, 2] },
  { query: "INSERT INTO t (x, y) VALUES (1, 'a'), (2, 'b')", workerd: [0, 4] },
  { query: "INSERT OR REPLACE INTO t VALUES (200, 6, 'r')", workerd: [1, 2] },
  { query: "INSERT INTO t VALUES (201, 1, 'u') ON CONFLICT DO NOTHING", workerd: [1, 0] },
  { query: "INSERT INTO t VALUES (201, 1, 'u') ON CONFLICT(id) DO UPDATE SET y = 'w'", workerd: [1, 2] },
  { query: "INSERT INTO u VALUES (1, 'a'), (2, 'b')", workerd: [0, 2] },
  { query: "UPDATE u SET b = 'c' WHERE a = 1", workerd: [1, 1] },
  { query: "DELETE FROM u WHERE a = 2", workerd: [1, 1] },
  { query: "INSERT INTO p VALUES (1)", workerd: [1, 1] },
  { query: "INSERT INTO c VALUES (1, 1), (2, 1)", workerd: [4, 2] },
  { query: "DELETE FROM p WHERE id = 1", workerd: [9, 3] },
  { query: "DELETE FROM t", workerd: [0, 11] },
  { query: "INSERT INTO r(name) VALUES ('x'), ('y') RETURNING id", workerd: [4, 2] },
  { query: "INSERT INTO r(name) VALUES ('z') RETURNING id", workerd: [1, 1] },
  { query: "INSERT INTO r VALUES (10, 'a'), (11, 'b'), (12, 'c') RETURNING id", workerd: [9, 3] },
  { query: "INSERT INTO q VALUES (1, 2) RETURNING *", workerd: [1, 1] },
  { query: "INSERT INTO q VALUES (1, 2), (3, 4) RETURNING *", workerd: [4, 2] },
  { query: "UPDATE r SET name = 'w' WHERE id > 10 RETURNING id", workerd: [8, 2] },
  { query: "DELETE FROM r WHERE id < 3 RETURNING id", workerd: [7, 2] },
  { query: "SELECT * FROM empty", workerd: [1, 0] },
  { query: "SELECT * FROM r WHERE id = 999", workerd: [1, 0] },
  { query: "SELECT * FROM r WHERE name = 'nope'", workerd: [4, 0] },
  { query: "SELECT * FROM r WHERE id IN (1, 10, 11)", workerd: [6, 0] },
  { query: "SELECT (SELECT count(*) FROM q) AS n", workerd: [3, 0] },
  { query: "SELECT * FROM r ORDER BY name LIMIT 2", workerd: [8, 0] },
  { query: "SELECT DISTINCT name FROM r", workerd: [4, 0] },
  { query: "SELECT name, count(*) FROM r GROUP BY name", workerd: [8, 0] },
  // Rowid lookups whose key is no integer: the platform's seek gives up before it counts.
  { query: "SELECT * FROM r WHERE id = ?", bindings: [10.5], workerd: [0, 0] },
  { query: "SELECT * FROM r WHERE id = ?", bindings: [null], workerd: [0, 0] },
  { query: "SELECT * FROM r WHERE id = ?", bindings: ["x"], workerd: [0, 0] },
  { query: "SELECT * FROM r WHERE id = ?", bindings: ["11"], workerd: [1, 0] },
  { query: "SELECT * FROM r WHERE id = ?", bindings: [11], workerd: [1, 0] },
  { query: "SELECT * FROM r WHERE id = 1.5", workerd: [0, 0] },
  { query: "SELECT * FROM r WHERE id > ?", bindings: [null], workerd: [0, 0] },
  { query: "SELECT * FROM r WHERE id < ?", bindings: ["x"], workerd: [4, 0] },
  { query: "SELECT * FROM r WHERE id > ?", bindings: [10.5], workerd: [2, 0] },
  // INSERT OR IGNORE / DO NOTHING skipping rows of several, and firing a trigger.
  { query: "INSERT OR IGNORE INTO g VALUES (1, 'a'), (1, 'b'), (2, 'c')", workerd: [6, 4] },
  { query: "INSERT INTO g VALUES (2, 'x'), (3, 'y') ON CONFLICT DO NOTHING", workerd: [4, 2] },
  { query: "INSERT OR IGNORE INTO g (v) VALUES ('d')", workerd: [0, 2] },
  // Foreign-key actions: cascades over several child rows.
  { query: "INSERT INTO pp VALUES (1), (2)", workerd: [2, 2] },
  { query: "INSERT INTO cc VALUES (1, 1), (2, 1), (3, 2)", workerd: [6, 6] },
  { query: "UPDATE pp SET id = 10 WHERE id = 1", workerd: [17, 5] },
  { query: "DELETE FROM pp WHERE id = 10", workerd: [9, 3] },
  { query: "DELETE FROM pp", workerd: [6, 2] },
  // Upserts' update path and REPLACE's deletion of the conflicting row (by rowid and by a unique index).
  { query: "INSERT INTO k VALUES (1), (2)", workerd: [0, 4] },
  { query: "INSERT INTO k VALUES (1) ON CONFLICT(v) DO UPDATE SET v = 3", workerd: [1, 2] },
  { query: "INSERT OR REPLACE INTO k VALUES (2)", workerd: [1, 2] },
  { query: "INSERT OR REPLACE INTO g VALUES (2, 'r'), (2, 's')", workerd: [4, 4] },
  { query: "REPLACE INTO r VALUES (10, 'b')", workerd: [1, 1] },
  // Joins and IN lists.
  { query: "SELECT * FROM r a JOIN r b ON a.name = b.name", workerd: [17, 0] },
  { query: "SELECT * FROM r a LEFT JOIN g b ON b.id = a.id", workerd: [8, 0] },
  { query: "SELECT * FROM r WHERE name IN ('a', 'b', 'w')", workerd: [4, 0] },
  { query: "SELECT * FROM r WHERE id IN (SELECT id FROM g)", workerd: [8, 0] },
  { query: "SELECT * FROM r WHERE id IN (?, ?)", bindings: [10, 12], workerd: [4, 0] },
  // Pragma functions read partly, filtered, sorted.
  { query: "SELECT name FROM pragma_table_info('t')", read: "next", workerd: [2, 0] },
  { query: "SELECT name FROM pragma_table_info('t') WHERE name = 'x'", workerd: [3, 0] },
  { query: "SELECT name FROM pragma_table_info('t') ORDER BY name", workerd: [6, 0] },
  // Schema changes on populated tables.
  { query: "ALTER TABLE r ADD COLUMN extra DEFAULT 0", workerd: [19, 1] },
  { query: "ALTER TABLE g RENAME TO g2", workerd: [86, 16] },
  { query: "ALTER TABLE r RENAME COLUMN extra TO more", workerd: [134, 30] },
  { query: "ALTER TABLE r DROP COLUMN more", workerd: [110, 21] },
  { query: "DROP INDEX ty", workerd: [18, 0] },
  { query: "DROP TABLE g2", workerd: [32, 0] },
  // Reads whose plan SQLite recompiles for the bound value inside the first step (run again, counted).
  { query: "SELECT * FROM r WHERE name LIKE ?", bindings: ["b%"], workerd: [4, 0] },
  { query: "SELECT id FROM r WHERE name = ? ORDER BY rowid", bindings: ["b"], workerd: [4, 0] },
];

function counts(result: OpResult | undefined): Counts {
  const text = JSON.stringify(result);
  const read = /"rowsRead",(-?\d+)/.exec(text)?.[1];
  const written = /"rowsWritten",(-?\d+)/.exec(text)?.[1];
  return [Number(read), Number(written)];
}

let workerd: WorkerdHandle;

beforeAll(async () => {
  workerd = await startWorkerd();
});

afterAll(async () => {
  await workerd.dispose();
});

describe("row counters against workerd (docs/sql.md)", () => {
  it("each statement counts as documented, on both", async () => {
    const ops: Op[] = [
      ...SETUP.map((query): Op => ({ op: "sql", query })),
      ...CASES.map(
        (c): Op => ({ op: "sql", query: c.query, bindings: [...(c.bindings ?? [])], read: c.read ?? "toArray" }),
      ),
    ];
    const [theirs, ours] = await Promise.all([workerd.run(ops), runOnSubject(ops)]);
    const seen = CASES.map((c, i) => ({
      query: c.query + (c.bindings ? ` ${JSON.stringify(c.bindings)}` : ""),
      workerd: counts(theirs[SETUP.length + i]),
      ours: counts(ours[SETUP.length + i]),
    }));
    expect(seen).toEqual(
      CASES.map((c) => ({
        query: c.query + (c.bindings ? ` ${JSON.stringify(c.bindings)}` : ""),
        workerd: c.workerd,
        ours: c.ours ?? c.workerd,
      })),
    );
  });
});

/**
 * ANALYZE, one fresh object per shape: workerd reads one row more than all the analyzed tables
 * hold, in every shape measured, and so does ObjectStorage (with several tables of which some hold
 * rows it once attributed every table's `Count` to the last table opened on the same cursor).
 */
const ANALYZE_SHAPES: readonly {
  readonly setup: readonly string[];
  readonly analyze?: string;
  readonly workerd: Counts;
}[] = [
  { setup: ["CREATE TABLE a (x)"], workerd: [1, 2] },
  { setup: ["CREATE TABLE a (x)", "INSERT INTO a VALUES (1)"], workerd: [2, 3] },
  { setup: ["CREATE TABLE a (x)", "INSERT INTO a VALUES (1), (2), (3)"], workerd: [4, 3] },
  { setup: ["CREATE TABLE a (x)", "CREATE TABLE b (x)"], workerd: [1, 2] },
  {
    setup: ["CREATE TABLE a (x, y)", "CREATE INDEX ax ON a(x)", "INSERT INTO a VALUES (1, 2), (3, 4)"],
    workerd: [5, 3],
  },
  { setup: ["CREATE TABLE a (x, y)", "CREATE INDEX ax ON a(x)"], workerd: [2, 2] },
  { setup: ["CREATE TABLE a (x)", "INSERT INTO a VALUES (1), (2)", "ANALYZE"], workerd: [2, 1] },
  { setup: ["CREATE TABLE p (id)", "CREATE TABLE c (id)", "INSERT INTO p VALUES (1)"], workerd: [2, 3] },
  { setup: ["CREATE TABLE p (id)", "CREATE TABLE c (id)", "INSERT INTO c VALUES (1)"], workerd: [2, 3] },
  {
    setup: ["CREATE TABLE p (id)", "CREATE TABLE c (id)", "INSERT INTO p VALUES (1), (2)"],
    workerd: [3, 3],
  },
  {
    setup: ["CREATE TABLE p (id)", "CREATE TABLE c (id)", "INSERT INTO c VALUES (1), (2)"],
    workerd: [3, 3],
  },
  {
    setup: ["CREATE TABLE p (id)", "CREATE TABLE c (id)", "INSERT INTO p VALUES (1)", "INSERT INTO c VALUES (1), (2)"],
    workerd: [4, 4],
  },
  {
    setup: ["CREATE TABLE p (id)", "CREATE TABLE c (id)", "CREATE TABLE d (id)", "INSERT INTO p VALUES (1)"],
    workerd: [2, 3],
  },
  {
    setup: ["CREATE TABLE p (id)", "CREATE TABLE c (id)", "CREATE TABLE d (id)", "INSERT INTO d VALUES (1)"],
    workerd: [2, 3],
  },
  {
    setup: [
      "CREATE TABLE p (id, v)",
      "CREATE INDEX pv ON p(v)",
      "CREATE TABLE c (id)",
      "INSERT INTO p VALUES (1, 1), (2, 2)",
      "INSERT INTO c VALUES (1)",
    ],
    workerd: [6, 4],
  },
  {
    setup: ["CREATE TABLE p (id)", "CREATE TABLE c (id)", "INSERT INTO p VALUES (1)", "INSERT INTO c VALUES (1), (2)"],
    analyze: "ANALYZE c",
    workerd: [3, 3],
  },
];

describe("ANALYZE row counters against workerd", () => {
  it("each table shape counts as on workerd", async () => {
    const seen: unknown[] = [];
    for (const shape of ANALYZE_SHAPES) {
      const ops: Op[] = [...shape.setup, shape.analyze ?? "ANALYZE"].map((query): Op => ({ op: "sql", query }));
      const [theirs, ours] = await Promise.all([workerd.run(ops), runOnSubject(ops)]);
      seen.push({ setup: shape.setup, workerd: counts(theirs.at(-1)), ours: counts(ours.at(-1)) });
    }
    expect(seen).toEqual(ANALYZE_SHAPES.map((s) => ({ setup: s.setup, workerd: s.workerd, ours: s.workerd })));
  });
});

/**
 * Index builds over one page and over many (with page splits, overflow pages, a UNIQUE, a DESC, a
 * multi-column and a partial index, and REINDEX): the platform's `SeekEnd` counts once when the
 * build starts and again after each insert that rebalanced the index, so the count depends on the
 * B-tree's page splits. Widths 10, 90 and 1500 bytes; 2, 60 and 700 rows.
 */
describe("index builds against workerd", () => {
  it("count as on workerd, whatever the number of page splits", async () => {
    const seen: { width: number; n: number; workerd: Counts[]; ours: Counts[] }[] = [];
    for (const width of [10, 90, 1500]) {
      for (const n of [2, 60, 700]) {
        const ops: Op[] = [
          "CREATE TABLE m (id INTEGER PRIMARY KEY, v TEXT, u)",
          `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${n}) ` +
            `INSERT INTO m SELECT i, printf('%06d', (i * 7919) % ${n}) || substr(hex(zeroblob(${width})), 1, ${width}), i % 5 FROM c`,
          "CREATE INDEX mv ON m(v)",
          "CREATE INDEX mu ON m(u, v)",
          "CREATE UNIQUE INDEX mid ON m(v, id)",
          "CREATE INDEX mvd ON m(v DESC)",
          "CREATE INDEX mp ON m(id) WHERE u = 1",
          "REINDEX",
        ].map((query): Op => ({ op: "sql", query }));
        const [theirs, ours] = await Promise.all([workerd.run(ops), runOnSubject(ops)]);
        const builds = (results: readonly OpResult[]) => results.slice(2).map((r) => counts(r));
        seen.push({ width, n, workerd: builds(theirs), ours: builds(ours) });
      }
    }
    // 700 rows of 90 bytes split the index's pages many times: more than the build's 2 × 700 rows + 2.
    expect(seen.find((s) => s.width === 90 && s.n === 700)?.workerd[0]?.[0]).toBeGreaterThan(1_402);
    const side = (key: "workerd" | "ours") => seen.map((s) => ({ width: s.width, n: s.n, counts: s[key] }));
    expect(side("ours")).toEqual(side("workerd"));
  });
});

/**
 * Writes whose plan SQLite recompiles for their bound values before their first step (a LIKE/GLOB
 * pattern's prefix range; a partial index whose WHERE term a parameter matches), run in order on
 * one object: each statement's counts, rows and errors are the same on both, and so are
 * `changes()`, `total_changes()` and `last_insert_rowid()` after them (docs/sql.md).
 */
const RECOMPILED_WRITES: readonly (string | readonly [string, readonly (string | number)[]])[] = [
  "CREATE TABLE r (id INTEGER PRIMARY KEY, name TEXT)",
  "CREATE INDEX rn ON r(name)",
  "INSERT INTO r VALUES (1, 'a'), (2, 'b'), (3, 'ba'), (4, 'c'), (5, 'bb')",
  ["DELETE FROM r WHERE name LIKE ? RETURNING id", ["b%"]],
  "SELECT changes(), total_changes()",
  "PRAGMA case_sensitive_like = ON",
  "INSERT INTO r VALUES (6, 'b'), (7, 'bc'), (8, 'ba')",
  ["DELETE FROM r WHERE name LIKE ?", ["ba%"]],
  "SELECT changes(), total_changes()",
  ["UPDATE r SET name = name || 'x' WHERE name LIKE ?", ["b%"]],
  "SELECT changes(), total_changes()",
  ["DELETE FROM r WHERE name GLOB ? RETURNING id", ["b*"]],
  ["INSERT INTO r SELECT id + 100, name FROM r WHERE name LIKE ? RETURNING id", ["a%"]],
  "SELECT changes(), total_changes(), last_insert_rowid()",
  ["DELETE FROM r WHERE name LIKE ?", ["zz%"]],
  "SELECT changes(), total_changes()",
  // A write reads in changes() what the statement before it left, also when SQLite recompiles it
  // for its bound pattern (the recompiling step is refused on purpose) and at its first use (the
  // access check lists its program with EXPLAIN, which ends as the write would).
  "UPDATE r SET name = name",
  ["INSERT INTO r SELECT id + 200, changes() FROM r WHERE name LIKE ? LIMIT 1", ["a%"]],
  "SELECT id, name FROM r WHERE id > 200",
  "UPDATE r SET name = name",
  "INSERT INTO r VALUES (300, changes())",
  "UPDATE r SET name = name WHERE id < 100",
  "INSERT INTO r VALUES (301, changes() || '/' || total_changes())",
  "SELECT id, name FROM r WHERE id >= 300",
  "CREATE TABLE pt (id INTEGER PRIMARY KEY, kind TEXT, v INTEGER)",
  "CREATE INDEX pt_v ON pt(v) WHERE kind = 'hot'",
  "INSERT INTO pt VALUES (1, 'hot', 1), (2, 'hot', 3), (3, 'cold', 3), (4, 'hot', 5), (5, 'cold', 7)",
  ["DELETE FROM pt WHERE kind = ? AND v = ?", ["hot", 3]],
  ["UPDATE pt SET v = v + 1 WHERE kind = ? AND v > ? RETURNING id", ["hot", 0]],
  ["UPDATE pt SET v = v + 1 WHERE kind = ? AND v > ?", ["cold", 0]],
  ["INSERT INTO pt VALUES (1, ?, 9)", ["hot"]],
  "SELECT changes(), total_changes(), last_insert_rowid()",
];

describe("writes SQLite recompiles for their bound values, against workerd", () => {
  it("count, return and change the same on both", async () => {
    const ops = RECOMPILED_WRITES.map(
      (step): Op =>
        typeof step === "string"
          ? { op: "sql", query: step, read: "toArray" }
          : { op: "sql", query: step[0], bindings: [...step[1]], read: "toArray" },
    );
    const [theirs, ours] = await Promise.all([workerd.run(ops), runOnSubject(ops)]);
    const seen = (results: readonly OpResult[]) =>
      RECOMPILED_WRITES.map((step, i) => ({
        query: typeof step === "string" ? step : step[0],
        counts: counts(results[i]),
        result: JSON.stringify(results[i]),
      }));
    // Each write's counts are real: something read (a scan or a seek ran).
    expect(
      seen(theirs)
        .filter((s) => /^(DELETE|UPDATE)/.test(s.query))
        .every((s) => s.counts[0] > 0),
    ).toBe(true);
    expect(seen(ours)).toEqual(seen(theirs));
  });
});

/**
 * Rowid seeks and rowid range seeks whose key is computed at run time (a join onto the rowid), one
 * key per run: the platform counts a rowid seek whose key reads as an integer, found or not, and
 * gives up before counting on any other (a NULL, a blob, a real or a text that is no integer); a
 * range seek counts with a key that reads as a number. Each run's counts and rows are the same on
 * both.
 */
const RUNTIME_KEYS = [
  "'x'",
  "1",
  "'2'",
  "2.5",
  "NULL",
  "x'01'",
  "2.0",
  "' 2 '",
  "'2.0'",
  "'1e0'",
  "9",
  "-1",
  "'5'",
  "9.0",
  "'2.5'",
  "''",
  "1e300",
];

describe("rowid seeks on keys computed at run time, against workerd", () => {
  it("count and return the same on both, for every type of key", async () => {
    const ops: Op[] = [
      "CREATE TABLE t (id INTEGER PRIMARY KEY, v)",
      "INSERT INTO t VALUES (1, 'a'), (2, 'b')",
      "CREATE TABLE s (k)",
      "CREATE TABLE sr (k REAL)",
      "INSERT INTO sr VALUES (2.0), (2), ('2'), (1.5)",
      "SELECT sr.k, t.v FROM sr JOIN t ON t.id = sr.k",
      "SELECT sr.k, t.v FROM sr LEFT JOIN t ON t.id = sr.k",
      "INSERT INTO s VALUES ('x'), (1), ('2'), (2.5)",
      "SELECT * FROM s JOIN t ON t.id = s.k",
      ...RUNTIME_KEYS.flatMap((key) => [
        "DELETE FROM s",
        `INSERT INTO s VALUES (${key})`,
        "SELECT s.k, t.v FROM s JOIN t ON t.id = s.k",
        "SELECT s.k, t.v FROM s LEFT JOIN t ON t.id = s.k",
        "UPDATE t SET v = v WHERE id = (SELECT k FROM s)",
        "SELECT s.k, t.v FROM s JOIN t ON t.id > s.k",
        "SELECT s.k, t.v FROM s JOIN t ON t.id <= s.k ORDER BY t.id DESC",
      ]),
      // Several keys in one run: 3 rows, and the seeks of '5', 9.0 and 1 (none finds a row but 1).
      "DELETE FROM s",
      "INSERT INTO s VALUES ('5'), (9.0), (1)",
      "SELECT * FROM s JOIN t ON t.id = s.k",
    ].map((query): Op => ({ op: "sql", query, read: "toArray" }));
    const [theirs, ours] = await Promise.all([workerd.run(ops), runOnSubject(ops)]);
    const seen = (results: readonly OpResult[]) =>
      ops.map((op, i) => ({ op, counts: counts(results[i]), result: JSON.stringify(results[i]) }));
    // The first join reads 6 on workerd: 4 rows of s, and 2 seeks of the 4 counted; the last one 6
    // too: 3 rows, and 3 seeks counted of which 2 find nothing.
    expect(counts(theirs[8])).toEqual([6, 0]);
    expect(counts(theirs.at(-1))).toEqual([6, 0]);
    expect(seen(ours)).toEqual(seen(theirs));
  });
});

/**
 * The counter corner cases docs/sql.md lists, each recorded on both sides in one fresh object
 * (the last statement's counts), so a fix, or a change on either side, shows here.
 */
const CORNER_CASES: readonly {
  readonly what: string;
  readonly setup: readonly (string | Op)[];
  readonly query: string;
  readonly bindings?: readonly string[];
  readonly workerd: Counts;
  readonly ours: Counts;
}[] = [
  {
    what: "PRAGMA optimize after key-value writes, two ANALYZE runs and a table grown 32 times (a reload of the statistics)",
    setup: [
      { op: "put", key: "k1", value: 1 },
      { op: "put", key: "k2", value: 2 },
      { op: "put", key: "k3", value: 3 },
      "CREATE TABLE a (x)",
      "INSERT INTO a VALUES (1), (2), (3)",
      "ANALYZE",
      { op: "kvPut", key: "k4", value: 4 },
      "ANALYZE",
      "PRAGMA optimize=0x10002",
      ...[10, 100, 1000, 10000, 100000].map((n) => `INSERT INTO a SELECT x + ${n} FROM a`),
      "PRAGMA optimize=0x10002",
    ],
    query: "PRAGMA optimize",
    workerd: [0, 0],
    ours: [0, 0],
  },
];

describe("row counter corner cases against workerd (docs/sql.md, recorded)", () => {
  it("each corner case counts as recorded, on both", async () => {
    const seen: unknown[] = [];
    for (const c of CORNER_CASES) {
      const ops: Op[] = [
        ...c.setup.map((step): Op => (typeof step === "string" ? { op: "sql", query: step } : step)),
        { op: "sql", query: c.query, bindings: [...(c.bindings ?? [])] },
      ];
      const [theirs, ours] = await Promise.all([workerd.run(ops), runOnSubject(ops)]);
      seen.push({ what: c.what, workerd: counts(theirs.at(-1)), ours: counts(ours.at(-1)) });
    }
    expect(seen).toEqual(CORNER_CASES.map((c) => ({ what: c.what, workerd: c.workerd, ours: c.ours })));
  });

  it("PRAGMA optimize does not analyze _cf_KV, whose sqlite_stat1 row user SQL reads on the platform only", async () => {
    const history = CORNER_CASES[0]?.setup ?? [];
    const ops: Op[] = [
      ...history.map((step): Op => (typeof step === "string" ? { op: "sql", query: step } : step)),
      { op: "sql", query: "SELECT tbl FROM sqlite_stat1 ORDER BY tbl", read: "raw" },
      { op: "sql", query: "PRAGMA optimize(-1)", read: "raw" },
    ];
    const [theirs, ours] = await Promise.all([workerd.run(ops), runOnSubject(ops)]);
    // What each side's sqlite_stat1 names, and whether its optimize(-1) would analyze _cf_KV.
    const seen = (results: readonly OpResult[]) => {
      const [stat, plan] = [JSON.stringify(results.at(-2)), JSON.stringify(results.at(-1))];
      return {
        statHasKv: stat.includes("_cf_KV"),
        statHasA: stat.includes('"a"'),
        analyzesKv: /ANALYZE.*_cf_KV/.test(plan),
      };
    };
    expect(seen(theirs)).toEqual({ statHasKv: true, statHasA: true, analyzesKv: false });
    expect(seen(ours)).toEqual({ statHasKv: false, statHasA: true, analyzesKv: false });
  });
});
