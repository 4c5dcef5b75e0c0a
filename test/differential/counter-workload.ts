/**
 * Random mixed SQL workloads for comparing the row counters with workerd: one schema with the
 * statement kinds whose counting differs most (foreign-key actions, triggers, upserts, RETURNING,
 * seeks, index builds, INSERT … SELECT, DDL, table-valued pragmas), random statements over it.
 */
import fc from "fast-check";
import type { Op, SqlReadMode } from "./ops";

/** The schema every workload starts from. */
export const COUNTER_SCHEMA: readonly string[] = [
  "PRAGMA foreign_keys = ON",
  "CREATE TABLE p (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER)",
  "CREATE TABLE c (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES p(id) ON DELETE CASCADE ON UPDATE CASCADE, v TEXT)",
  "CREATE INDEX c_pid ON c(pid)",
  "CREATE TABLE w (k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID",
  "CREATE TABLE log (id INTEGER PRIMARY KEY, what TEXT)",
  "CREATE TRIGGER p_log AFTER INSERT ON p BEGIN INSERT INTO log (what) VALUES ('p ' || new.id); END",
  "CREATE TABLE q (a, b)",
  // Wide rows, so that an index on q(b) spans several pages (its build splits them).
  "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 120) " +
    "INSERT INTO q SELECT i % 13, printf('%090d', i * 7) FROM c",
  // A rowid seek in a sub-program on a key of any type (q.a holds every type: KEY_LITERALS).
  "CREATE TRIGGER q_seek AFTER INSERT ON q BEGIN UPDATE p SET n = n WHERE id = new.a; END",
];

/**
 * Keys of every type for the rowid seeks and range seeks on keys computed at run time (joins onto
 * `p.id` through `q.a`): integers, whole and fractional reals, texts that read as integers or as
 * other numbers or as none, NULL, a blob, and out-of-range numbers.
 */
const KEY_LITERALS = [
  "1",
  "3",
  "12",
  "2.0",
  "9.0",
  "2.5",
  "'2'",
  "'5'",
  "' 3 '",
  "'4.0'",
  "'1e0'",
  "'2.5'",
  "'x'",
  "''",
  "NULL",
  "x'01'",
  "1e300",
  "'9223372036854775808'",
];

const small = fc.integer({ min: 0, max: 9 });
const nameArb = small.map((i) => `n${i}`);

/** One statement shape: its template (for grouping results) and an instance. */
export interface CounterStatement {
  readonly shape: string;
  readonly query: string;
  readonly bindings: readonly (number | string)[];
}

function s(shape: string, bindings: readonly (number | string)[] = []): CounterStatement {
  return { shape, query: shape, bindings };
}

/** Every shape the workloads draw from, with its parameters. */
export const counterStatementArb: fc.Arbitrary<CounterStatement> = fc.oneof(
  // Inserts: plain, conflicting, upserts, RETURNING, INSERT … SELECT, with triggers and foreign keys.
  fc
    .tuple(small, nameArb, small)
    .map(([id, name, n]) => s("INSERT INTO p (id, name, n) VALUES (?, ?, ?)", [id, name, n])),
  fc.tuple(nameArb, small).map(([name, n]) => s("INSERT INTO p (name, n) VALUES (?, ?) RETURNING id", [name, n])),
  fc.tuple(small, nameArb, small).map(([id, name, n]) => s("INSERT OR IGNORE INTO p VALUES (?, ?, ?)", [id, name, n])),
  fc.tuple(small, nameArb, small).map(([id, name, n]) => s("INSERT OR REPLACE INTO p VALUES (?, ?, ?)", [id, name, n])),
  fc
    .tuple(small, nameArb, small)
    .map(([id, name, n]) => s("INSERT INTO p VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET n = n + 1", [id, name, n])),
  fc
    .tuple(small, nameArb, small)
    .map(([id, name, n]) => s("INSERT INTO p VALUES (?, ?, ?) ON CONFLICT DO NOTHING", [id, name, n])),
  fc.tuple(small, nameArb).map(([pid, v]) => s("INSERT INTO c (pid, v) VALUES (?, ?)", [pid, v])),
  fc
    .tuple(small, nameArb)
    .map(([pid, v]) => s("INSERT INTO c (pid, v) VALUES (?, ?), (?, ?) RETURNING *", [pid, v, pid, v])),
  fc
    .tuple(nameArb, small)
    .map(([k, v]) => s("INSERT INTO w VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v", [k, v])),
  fc.tuple(small, small).map(([a, b]) => s("INSERT INTO q VALUES (?, ?)", [a, b])),
  small.map((n) => s("INSERT INTO log (what) SELECT name FROM p WHERE n > ?", [n])),
  fc.constant(s("INSERT INTO q SELECT n, name FROM p")),
  fc.constantFrom(...KEY_LITERALS).map((key) => s(`INSERT INTO q VALUES (${key}, 'key')`)),
  // Reads: seeks by rowid, by unique index, by secondary index; scans, sorts, joins, aggregates, IN, LIMIT.
  small.map((id) => s("SELECT * FROM p WHERE id = ?", [id])),
  nameArb.map((name) => s("SELECT * FROM p WHERE name = ?", [name])),
  small.map((n) => s("SELECT * FROM p WHERE n > ?", [n])),
  small.map((pid) => s("SELECT * FROM c WHERE pid = ?", [pid])),
  fc.tuple(small, small).map(([a, b]) => s("SELECT * FROM c WHERE pid IN (?, ?)", [a, b])),
  nameArb.map((k) => s("SELECT * FROM w WHERE k = ?", [k])),
  fc.constant(s("SELECT * FROM p ORDER BY n")),
  fc.constant(s("SELECT * FROM p ORDER BY name LIMIT 2")),
  fc.constant(s("SELECT count(*) FROM c")),
  fc.constant(s("SELECT max(id) FROM p")),
  fc.constant(s("SELECT n, count(*) FROM p GROUP BY n")),
  fc.constant(s("SELECT DISTINCT v FROM c")),
  fc.constant(s("SELECT p.name, c.v FROM p JOIN c ON c.pid = p.id")),
  fc.constant(s("SELECT * FROM q WHERE a = 1")),
  // Seeks on keys computed at run time, one per row of q.
  fc.constant(s("SELECT p.name, q.a FROM q JOIN p ON p.id = q.a")),
  fc.constant(s("SELECT q.a, p.name FROM q LEFT JOIN p ON p.id = q.a")),
  fc.constant(s("SELECT q.a, p.id FROM q JOIN p ON p.id > q.a")),
  fc.constant(s("SELECT q.a, p.id FROM q JOIN p ON p.id <= q.a ORDER BY q.rowid, p.id DESC")),
  fc.constant(s("SELECT (SELECT name FROM p WHERE id = q.a) FROM q")),
  fc.constant(s("SELECT (SELECT count(*) FROM q) AS n")),
  fc.constant(s("SELECT name FROM pragma_table_info('p')")),
  // Updates and deletes: by key, by scan, with RETURNING (rows or none), with foreign-key cascades.
  small.map((id) => s("UPDATE p SET n = n + 1 WHERE id = ?", [id])),
  small.map((id) => s("UPDATE p SET n = n + 1 WHERE id = ? RETURNING *", [id])),
  small.map((n) => s("UPDATE p SET name = name || 'x' WHERE n = ?", [n])),
  small.map((id) => s("UPDATE p SET id = id + 10 WHERE id = ?", [id])),
  small.map((n) => s("UPDATE c SET v = 'u' WHERE pid = ? RETURNING id", [n])),
  small.map((id) => s("DELETE FROM p WHERE id = ?", [id])),
  small.map((id) => s("DELETE FROM p WHERE id = ? RETURNING name", [id])),
  nameArb.map((v) => s("DELETE FROM c WHERE v = ? RETURNING *", [v])),
  nameArb.map((k) => s("DELETE FROM w WHERE k = ?", [k])),
  fc.constant(s("DELETE FROM log")),
  fc.constant(s("DELETE FROM q WHERE a > 5")),
  // DDL on populated tables.
  fc.constant(s("CREATE INDEX IF NOT EXISTS p_n ON p(n)")),
  fc.constant(s("DROP INDEX IF EXISTS p_n")),
  fc.constant(s("CREATE INDEX IF NOT EXISTS q_a ON q(a)")),
  // Index builds over several pages (each repositions its cursor after every page split).
  fc.constant(
    s(
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 150) " +
        "INSERT INTO q SELECT i % 13, printf('%090d', i) FROM c",
    ),
  ),
  fc.constant(s("CREATE INDEX IF NOT EXISTS q_b ON q(b)")),
  fc.constant(s("DROP INDEX IF EXISTS q_b")),
  fc.constant(s("REINDEX q")),
  fc.constant(s("CREATE TABLE IF NOT EXISTS x (a INTEGER PRIMARY KEY, b UNIQUE)")),
  fc.constant(s("DROP TABLE IF EXISTS x")),
  fc.constant(s("ALTER TABLE q ADD COLUMN c DEFAULT 0")),
);

const readArb: fc.Arbitrary<SqlReadMode> = fc.constantFrom("toArray", "toArray", "toArray", "next");

/** A workload: the schema, then 1–25 random statements. */
export function counterWorkloadArb(): fc.Arbitrary<{ ops: Op[]; shapes: string[] }> {
  return fc.array(fc.tuple(counterStatementArb, readArb), { minLength: 1, maxLength: 25 }).map((steps) => {
    const ops: Op[] = COUNTER_SCHEMA.map((query): Op => ({ op: "sql", query }));
    const shapes = COUNTER_SCHEMA.map(() => "(schema)");
    for (const [st, read] of steps) {
      ops.push({ op: "sql", query: st.query, bindings: [...st.bindings], read });
      shapes.push(`${st.shape} [${read}]`);
    }
    return { ops, shapes };
  });
}
