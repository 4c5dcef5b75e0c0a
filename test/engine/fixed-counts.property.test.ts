/**
 * Fixed counts (engine/sqljs-program-paths.ts, engine/sqljs-row-counters.ts) against the rewritten
 * copy they stand in for: the same random statements run on two engines with the same schema, one
 * counting as the engine chooses, the other counting every statement by its rewritten copy. Every
 * statement must end the same way (rows, error), and every statement that completes must count
 * the same rows read and written; the databases must end equal. The shapes cover what may count
 * differently from a plain insert: triggers, foreign keys (on and off), UPSERT and ON CONFLICT,
 * OR IGNORE/REPLACE/FAIL, REPLACE INTO, RETURNING, INSERT … SELECT, DEFAULT VALUES, multi-row
 * VALUES, unique, partial and expression indexes, WITHOUT ROWID, AUTOINCREMENT, generated columns,
 * CHECK and NOT NULL constraints; statements stay compiled while the schema changes under them
 * (a trigger or an index added or dropped), so a statement counted one way may have to be counted
 * the other way after SQLite recompiles it.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { EngineStatement, EngineValue, SqlEngine } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { countedByRewrite, type SqlJsStatement } from "../../src/engine/sqljs-statement";

const SCHEMA = `
  CREATE TABLE t1 (id INTEGER PRIMARY KEY, a TEXT, b INTEGER);
  CREATE TABLE t2 (a, b, c);
  CREATE INDEX t2_a ON t2 (a);
  CREATE UNIQUE INDEX t2_b ON t2 (b);
  CREATE TABLE t3 (k TEXT PRIMARY KEY, a, b) WITHOUT ROWID;
  CREATE INDEX t3_a ON t3 (a);
  CREATE TABLE t4 (id INTEGER PRIMARY KEY, a NOT NULL DEFAULT 'd', b CHECK (b IS NULL OR b > 0),
    g AS (a || 'x'), s AS (b * 2) STORED);
  CREATE TABLE t5 (a, b);
  CREATE INDEX t5_p ON t5 (a) WHERE b > 0;
  CREATE INDEX t5_e ON t5 (lower(a));
  CREATE TABLE t6 (id INTEGER PRIMARY KEY AUTOINCREMENT, a, b);
  CREATE TABLE t7 (id INTEGER PRIMARY KEY ON CONFLICT REPLACE, a UNIQUE ON CONFLICT IGNORE, b);
  CREATE TABLE p (id INTEGER PRIMARY KEY, a, b);
  CREATE TABLE c (id INTEGER PRIMARY KEY, a REFERENCES p (id) ON DELETE CASCADE, b);
  CREATE TABLE tr (a, b);
  CREATE TABLE trlog (x);
  CREATE TRIGGER tr_log AFTER INSERT ON tr BEGIN INSERT INTO trlog VALUES (new.a); END;
  INSERT INTO p VALUES (1, 'p1', 1), (2, 'p2', 2);
`;

/** Each table's key column (the one rows are found by) and the other two. */
const TABLES: Record<string, [key: string, a: string, b: string]> = {
  t1: ["id", "a", "b"],
  t2: ["rowid", "a", "b"],
  t3: ["k", "a", "b"],
  t4: ["id", "a", "b"],
  t5: ["rowid", "a", "b"],
  t6: ["id", "a", "b"],
  t7: ["id", "a", "b"],
  p: ["id", "a", "b"],
  c: ["id", "a", "b"],
  tr: ["rowid", "a", "b"],
};
const TABLE_NAMES = Object.keys(TABLES);

const valueArb: fc.Arbitrary<EngineValue> = fc.oneof(
  fc.integer({ min: -1, max: 5 }),
  fc.constantFrom<EngineValue>(null, 2.5, "3", "x", "P1", new Uint8Array([1, 2])),
);

/** A statement: its text and its bindings (one per `?`). */
interface Statement {
  readonly sql: string;
  readonly values: EngineValue[];
}

const place = (n: number) => Array.from({ length: n }, () => "?").join(", ");

const insertArb: fc.Arbitrary<Statement> = fc
  .record({
    table: fc.constantFrom(...TABLE_NAMES),
    verb: fc.constantFrom(
      "INSERT",
      "INSERT",
      "INSERT",
      "INSERT OR IGNORE",
      "INSERT OR REPLACE",
      "INSERT OR FAIL",
      "REPLACE",
    ),
    columns: fc.subarray([0, 1, 2], { minLength: 1 }),
    rows: fc.integer({ min: 1, max: 2 }),
    tail: fc.constantFrom(
      "",
      "",
      "",
      " ON CONFLICT DO NOTHING",
      " ON CONFLICT (KEY) DO UPDATE SET B = excluded.B",
      " RETURNING *",
    ),
    values: fc.array(valueArb, { minLength: 6, maxLength: 6 }),
  })
  .map(({ table, verb, columns, rows, tail, values }) => {
    const names = TABLES[table] as [string, string, string];
    const cols = columns.map((i) => names[i] as string);
    // rowid is no column to insert into by name in every table: name it only where it is one.
    const listed = cols.filter((c) => c !== "rowid");
    const list = listed.length === 0 ? [names[1]] : listed;
    const tuples = Array.from({ length: rows }, () => `(${place(list.length)})`).join(", ");
    const conflict = tail
      .replace("KEY", names[0] === "rowid" ? names[1] : names[0])
      .replace("B", names[2])
      .replace("B", names[2]);
    return {
      sql: `${verb} INTO ${table} (${list.join(", ")}) VALUES ${tuples}${conflict}`,
      values: values.slice(0, rows * list.length),
    };
  });

const otherArb: fc.Arbitrary<Statement> = fc.oneof(
  fc.constantFrom(...TABLE_NAMES).map((table) => ({ sql: `INSERT INTO ${table} DEFAULT VALUES`, values: [] })),
  fc
    .record({ table: fc.constantFrom(...TABLE_NAMES), from: fc.constantFrom(...TABLE_NAMES) })
    .map(({ table, from }) => ({
      sql: `INSERT INTO ${table} (${(TABLES[table] as string[])[1]}) SELECT ${(TABLES[from] as string[])[1]} FROM ${from} LIMIT 2`,
      values: [],
    })),
  fc.record({ table: fc.constantFrom(...TABLE_NAMES), v: valueArb, k: valueArb }).map(({ table, v, k }) => {
    const [key, , b] = TABLES[table] as [string, string, string];
    return { sql: `UPDATE ${table} SET ${b} = ? WHERE ${key} = ?`, values: [v, k] };
  }),
  fc.record({ table: fc.constantFrom(...TABLE_NAMES), k: valueArb }).map(({ table, k }) => {
    const [key] = TABLES[table] as [string, string, string];
    return { sql: `DELETE FROM ${table} WHERE ${key} = ?`, values: [k] };
  }),
  fc.record({ table: fc.constantFrom(...TABLE_NAMES), k: valueArb }).map(({ table, k }) => {
    const [key] = TABLES[table] as [string, string, string];
    return { sql: `SELECT * FROM ${table} WHERE ${key} = ?`, values: [k] };
  }),
  // Schema changes under the compiled statements: SQLite recompiles them at their next step.
  fc.constantFrom<Statement>(
    {
      sql: "CREATE TRIGGER IF NOT EXISTS t1_log AFTER INSERT ON t1 BEGIN INSERT INTO trlog VALUES (new.a); END",
      values: [],
    },
    { sql: "DROP TRIGGER IF EXISTS t1_log", values: [] },
    { sql: "CREATE INDEX IF NOT EXISTS t1_b ON t1 (b)", values: [] },
    { sql: "DROP INDEX IF EXISTS t1_b", values: [] },
    { sql: "CREATE INDEX IF NOT EXISTS t3_b ON t3 (b) WHERE b > 2", values: [] },
    { sql: "DROP INDEX IF EXISTS t3_b", values: [] },
    { sql: "PRAGMA foreign_keys = ON", values: [] },
    { sql: "PRAGMA foreign_keys = OFF", values: [] },
  ),
);

const workloadArb = fc.record({
  foreignKeys: fc.boolean(),
  statements: fc.array(fc.oneof({ weight: 3, arbitrary: insertArb }, { weight: 2, arbitrary: otherArb }), {
    minLength: 5,
    maxLength: 40,
  }),
});

/** How one statement ended on one engine. */
interface Outcome {
  rows?: EngineValue[][];
  read?: number;
  written?: number;
  error?: string;
}

/** One engine with its compiled statements (kept across the workload, as a statement cache keeps them). */
class Subject {
  readonly statements = new Map<string, EngineStatement>();
  constructor(
    readonly engine: SqlEngine,
    readonly rewriteAll: boolean,
  ) {}

  run({ sql, values }: Statement): Outcome {
    let s = this.statements.get(sql);
    try {
      if (s === undefined) {
        s = this.engine.prepare(sql);
        if (this.rewriteAll) countedByRewrite(s);
        this.statements.set(sql, s);
      }
    } catch (e) {
      return { error: (e as Error).message };
    }
    try {
      s.bind(values, "integer");
      s.startCounting(!/^\s*(INSERT|REPLACE|UPDATE|DELETE|CREATE|DROP|PRAGMA)/i.test(sql));
      const rows: EngineValue[][] = [];
      while (s.step()) rows.push(s.row());
      const { read, written } = s.rowCounts();
      return { rows, read, written };
    } catch (e) {
      return { error: (e as Error).message };
    } finally {
      s.reset();
    }
  }

  countedBy(sql: string): string | undefined {
    return (this.statements.get(sql) as SqlJsStatement | undefined)?.countedBy;
  }

  dump(): EngineValue[][][] {
    return [...TABLE_NAMES, "trlog", "sqlite_sequence"].map((t) =>
      this.engine.query(`SELECT * FROM ${t} ORDER BY ${t === "t3" ? "k" : "rowid"}`),
    );
  }

  close(): void {
    for (const s of this.statements.values()) s.free();
    this.engine.close();
  }
}

describe("fixed counts equal the rewritten copy's", () => {
  test("random statements count the same both ways, on a schema that changes under them", async () => {
    const factory = await loadSqlJsEngine();
    let fixed = 0;
    let compared = 0;
    const fixedShapes = new Set<string>();
    fc.assert(
      fc.property(workloadArb, ({ foreignKeys, statements }) => {
        const subjects = [new Subject(factory.open(), false), new Subject(factory.open(), true)] as const;
        try {
          for (const s of subjects) s.engine.exec(`${SCHEMA} PRAGMA foreign_keys = ${foreignKeys ? "ON" : "OFF"};`);
          for (const statement of statements) {
            const [chosen, rewritten] = subjects.map((s) => s.run(statement)) as [Outcome, Outcome];
            expect({ ...statement, ...chosen }).toEqual({ ...statement, ...rewritten });
            expect(subjects[1].countedBy(statement.sql) ?? "rewrite").not.toBe("fixed counts");
            if (chosen.error === undefined) {
              compared++;
              if (subjects[0].countedBy(statement.sql) === "fixed counts") {
                fixed++;
                fixedShapes.add(statement.sql.replace(/\(\?[?, ]*\)/g, "(…)"));
              }
            }
          }
          expect(subjects[0].dump()).toEqual(subjects[1].dump());
        } finally {
          for (const s of subjects) s.close();
        }
      }),
      { seed: 20_261_127, numRuns: 120 },
    );
    // The comparison really covered the fixed counts, over many shapes, and the rewritten copy too.
    expect(fixed).toBeGreaterThan(compared / 10);
    expect(fixed).toBeLessThan(compared);
    expect(fixedShapes.size).toBeGreaterThan(20);
  }, 60_000);
});

describe("which statements have fixed counts", () => {
  const cases: [sql: string, fixed: boolean][] = [
    ["INSERT INTO t1 (id, a) VALUES (?, ?)", true],
    ["INSERT INTO t1 (a, b) VALUES (?, ?)", true],
    ["INSERT INTO t2 (a, b, c) VALUES (?, ?, ?)", true], // two indexes, one unique
    ["INSERT INTO t3 (k, a) VALUES (?, ?)", true], // WITHOUT ROWID
    ["INSERT INTO t4 (a, b) VALUES (?, ?)", true], // NOT NULL, CHECK, generated columns
    ["INSERT INTO t5 (a, b) VALUES (?, ?)", false], // a partial index: written 2 or 3
    ["INSERT INTO t6 (a) VALUES (?)", false], // AUTOINCREMENT reads and writes sqlite_sequence
    ["INSERT INTO tr (a) VALUES (?)", false], // a trigger
    ["INSERT INTO c (a) VALUES (?)", false], // foreign keys are on
    ["INSERT OR IGNORE INTO t1 (id, a) VALUES (?, ?)", false],
    ["INSERT OR REPLACE INTO t2 (a, b) VALUES (?, ?)", false],
    ["INSERT INTO t1 (id, a) VALUES (?, ?) ON CONFLICT DO NOTHING", false],
    ["INSERT INTO t1 (id, a) VALUES (?, ?) RETURNING id", false],
    ["INSERT INTO t1 (a) SELECT a FROM t2", false],
    ["INSERT INTO t1 (a) VALUES (?), (?)", false],
    ["UPDATE t1 SET a = ? WHERE id = ?", false],
    ["DELETE FROM t1 WHERE id = ?", false],
    ["SELECT * FROM t1 WHERE id = ?", false],
  ];
  test.each(cases)("%s: fixed %s", async (sql, fixed) => {
    const engine = (await loadSqlJsEngine()).open();
    engine.exec(`${SCHEMA} PRAGMA foreign_keys = ON;`);
    const s = engine.prepare(sql) as SqlJsStatement;
    s.startCounting(false);
    expect(s.countedBy).toBe(fixed ? "fixed counts" : "rewrite");
    s.free();
    engine.close();
  });
});
