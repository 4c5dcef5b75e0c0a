/**
 * Random SQL workloads give the same rows through SqlStorage as through a second, fresh sql.js
 * database fed the same statements (with numbers bound as REAL, as the facade binds them).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { EngineValue } from "../../../src/engine/engine";
import { loadSqlJsEngine } from "../../../src/engine/sqljs";
import { setup } from "./helpers";

type Op = { sql: string; bindings: (number | string | null | Uint8Array)[] };

const value = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, min: -1e6, max: 1e6 }),
  fc.string({ maxLength: 8 }),
  fc.constant(null),
  fc.uint8Array({ maxLength: 4 }),
);
const column = fc.constantFrom("b", "c", "d");
const comparison = fc.constantFrom("=", "<", ">", "<=", ">=", "!=");

const op: fc.Arbitrary<Op> = fc.oneof(
  fc
    .tuple(value, value, value)
    .map(([b, c, d]) => ({ sql: "INSERT INTO t(b, c, d) VALUES (?, ?, ?)", bindings: [b, c, d] })),
  fc
    .tuple(fc.integer({ min: 1, max: 30 }), value)
    .map(([a, b]) => ({ sql: "INSERT OR REPLACE INTO t(a, b) VALUES (?, ?)", bindings: [a, b] })),
  fc.tuple(column, value, column, comparison, value).map(([set, v, where, cmp, w]) => ({
    sql: `UPDATE t SET ${set} = ? WHERE ${where} ${cmp} ?`,
    bindings: [v, w],
  })),
  fc
    .tuple(column, comparison, value)
    .map(([where, cmp, w]) => ({ sql: `DELETE FROM t WHERE ${where} ${cmp} ?`, bindings: [w] })),
  fc.tuple(column, comparison, value).map(([where, cmp, w]) => ({
    sql: `SELECT a, b, c, d, typeof(b) AS tb FROM t WHERE ${where} ${cmp} ? ORDER BY a`,
    bindings: [w],
  })),
  fc.constantFrom<Op>(
    { sql: "SELECT count(*) AS n, sum(a) AS s, group_concat(b) AS g FROM t", bindings: [] },
    { sql: "SELECT b, count(*) AS n FROM t GROUP BY b ORDER BY b", bindings: [] },
    { sql: "SELECT * FROM t ORDER BY a DESC LIMIT 3", bindings: [] },
    { sql: "UPDATE t SET c = c * 2 RETURNING a, c", bindings: [] },
    { sql: "DELETE FROM t WHERE a % 3 = 0 RETURNING a", bindings: [] },
  ),
);

const normalize = (v: unknown): unknown =>
  v instanceof ArrayBuffer ? [...new Uint8Array(v)] : v instanceof Uint8Array ? [...v] : v;

describe("differential: SqlStorage vs raw sql.js", () => {
  test("random workloads give the same rows and the same failures", async () => {
    const factory = await loadSqlJsEngine();
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const { sql } = await setup();
        const raw = factory.open();
        const schema = "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL, d)";
        sql.exec(schema);
        raw.exec(schema);
        for (const { sql: q, bindings } of ops) {
          let ours: unknown;
          let theirs: unknown;
          try {
            ours = sql
              .exec(q, ...bindings)
              .raw()
              .toArray()
              .map((r) => r.map(normalize));
          } catch (e) {
            ours = `error: ${(e as Error).message.split(":")[0]}`;
          }
          try {
            const s = raw.prepare(q);
            s.bind(bindings as EngineValue[], "real");
            const rows: unknown[] = [];
            while (s.step()) rows.push(s.row().map(normalize));
            s.free();
            theirs = rows;
          } catch (e) {
            theirs = `error: ${(e as Error).message.split(":")[0]}`;
          }
          expect(ours).toEqual(theirs);
        }
        raw.close();
      }),
      { numRuns: 40 },
    );
  });
});
