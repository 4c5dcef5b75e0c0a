/**
 * sql.js registers its legacy extension functions on every connection unless it is initialized
 * without them; they replace SQLite's own math functions with different results (`log(100)` the
 * natural logarithm, `ceil(0.5)` an INTEGER, `sin('abc')` 0) and print a deprecation warning per
 * call. The engine initializes sql.js without them; replay can still give a connection them, for
 * sessions logged with them, and only a new connection loses them again.
 */
import { afterEach, describe, expect, test, vi } from "vitest";
import { EngineError, type SqlEngine } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";

const MATH =
  "SELECT log(100), ceil(0.5), typeof(ceil(0.5)), floor(2.5), typeof(floor(2.5)), sign(2.5), typeof(sign(2.5)), sin('abc'), log(0)";

const open: SqlEngine[] = [];
async function engine(bytes?: Uint8Array): Promise<SqlEngine> {
  const e = (await loadSqlJsEngine()).open(bytes);
  open.push(e);
  return e;
}

afterEach(() => {
  for (const e of open.splice(0)) e.close();
  vi.restoreAllMocks();
});

describe("math functions", () => {
  test("a new connection has SQLite's own math functions, and no legacy-only ones", async () => {
    const e = await engine();
    expect(e.legacyFunctions).toBe(false);
    const [row] = e.query(MATH);
    expect(row).toEqual([Math.log10(100), 1, "real", 2, "real", 1, "integer", null, null]);
    for (const name of ["median", "stdev", "padl", "proper"]) {
      expect(() => e.prepare(`SELECT ${name}(1)`), name).toThrow(EngineError);
      expect(() => e.prepare(`SELECT ${name}(1)`), name).toThrow(`no such function: ${name}`);
    }
  });

  test("setLegacyFunctions(true) gives the connection sql.js's legacy set, silently; false cannot take it back", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const e = await engine();
    e.exec("CREATE TABLE t(x); INSERT INTO t VALUES (100)");
    e.setLegacyFunctions(true);
    expect(e.legacyFunctions).toBe(true);
    const [row] = e.query(MATH);
    expect(row).toEqual([Math.log(100), 1, "integer", 2, "integer", 1, "real", 0, Number.NEGATIVE_INFINITY]);
    expect(e.query("SELECT median(x) FROM t")).toEqual([[100]]);
    // sql.js warns once per call: none of its lines reach the console, other warnings do
    e.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) SELECT sum(log(i)) FROM n");
    expect(warn).not.toHaveBeenCalled();
    console.warn("another warning");
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith("another warning");

    e.setLegacyFunctions(true); // already: nothing
    expect(() => e.setLegacyFunctions(false)).toThrow(RangeError);
    expect(e.legacyFunctions).toBe(true);
    expect(e.query("SELECT log(100)")).toEqual([[Math.log(100)]]);
    // a new connection from its bytes has the data and SQLite's own functions
    const reopened = await engine(e.exportBytes());
    expect(reopened.legacyFunctions).toBe(false);
    expect(reopened.query("SELECT log(x) FROM t")).toEqual([[Math.log10(100)]]);
    e.close();
    // closed: console.warn is what it was before
    expect(console.warn).toBe(warn);
  });

  test("sql.js's warnings are kept quiet only while a connection given the legacy set is open", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const a = await engine();
    const b = await engine();
    a.setLegacyFunctions(true);
    b.setLegacyFunctions(true);
    a.close();
    b.query("SELECT log(2)");
    expect(warn).not.toHaveBeenCalled();
    b.close();
    expect(console.warn).toBe(warn);
    // without any such connection, a line of sql.js's form is the caller's own and goes through
    console.warn("sql.js: legacy function log() is deprecated");
    expect(warn).toHaveBeenCalledTimes(1);
  });
});
