/**
 * One object cannot hurt another, or the process (issue 14 §3): values are capped inside SQLite
 * as on the platform, each database has a size limit, and refused statements never change
 * process-wide state (see sandbox.test.ts for the pragmas).
 */
import { describe, expect, test } from "vitest";
import type { RandomSource } from "../../../src/engine/engine";
import { DEFAULT_MAX_DATABASE_SIZE, ENGINE_LIMITS, loadSqlJsEngine } from "../../../src/engine/sqljs";
import { ObjectStorage } from "../../../src/index";

const TOO_BIG = "string or blob too big: SQLITE_TOOBIG";
const FULL = "database or disk is full: SQLITE_FULL";

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  throw new Error("expected an error");
}

describe("values are capped inside SQLite at 2,200,000 bytes, as on the platform", () => {
  /** Statements that would build a value far beyond the limit (gigabytes, without the cap). */
  const BLOW_UPS = [
    "SELECT randomblob(1e9)",
    "SELECT length(randomblob(2200001))",
    "SELECT randomblob(9e18)",
    "SELECT zeroblob(1e9)",
    "SELECT length(zeroblob(2200001))",
    "SELECT length(replace(hex(zeroblob(1000000)), '0', hex(zeroblob(1000))))",
    "SELECT length(printf('%.*c', 1000000000, 'x'))",
    "SELECT length(format('%2200001d', 1))",
    "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r) SELECT length(s) FROM r",
    "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 3000) SELECT length(group_concat(hex(zeroblob(1000)))) FROM r",
    "SELECT length(concat(hex(zeroblob(600000)), hex(zeroblob(600000))))",
    "SELECT length(upper(hex(zeroblob(1100001))))",
    "SELECT length(char(65) || hex(zeroblob(1100000)))",
    "SELECT length(json_group_array(hex(zeroblob(1000)))) FROM (WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 3000) SELECT i FROM r)",
  ];

  test.each(BLOW_UPS)("%s fails fast with the platform's error", async (sql) => {
    const storage = await ObjectStorage.open();
    expect(errorOf(() => storage.sql.exec(sql).toArray())).toBe(TOO_BIG);
    // The object goes on (TOOBIG is not critical).
    expect(storage.sql.exec("SELECT 1 AS x").one().x).toBe(1);
  });

  test("up to the limit, values are built and stored inside SQL", async () => {
    const storage = await ObjectStorage.open();
    storage.sql.exec("CREATE TABLE big (b)");
    storage.sql.exec("INSERT INTO big VALUES (randomblob(2200000 - 10)), (zeroblob(2000000))");
    expect(storage.sql.exec("SELECT length(b) AS n FROM big ORDER BY n").toArray()).toEqual([
      { n: 2_000_000 },
      { n: 2_199_990 },
    ]);
    // A value stored at the limit cannot grow inside SQL either.
    expect(errorOf(() => storage.sql.exec("UPDATE big SET b = b || randomblob(100)"))).toBe(TOO_BIG);
  });

  test("randomblob(N > limit) never asks the random source for N bytes", async () => {
    const engine = (await loadSqlJsEngine()).open();
    const requested: number[] = [];
    const source: RandomSource = {
      nextInt64: () => 1n,
      nextBytes: (n) => {
        requested.push(n);
        return new Uint8Array(n);
      },
    };
    engine.setRandomSource(source);
    expect(() => engine.query("SELECT randomblob(1e9)")).toThrow(/too big/);
    expect(() => engine.query("SELECT randomblob(2200001)")).toThrow(/too big/);
    expect(engine.query("SELECT length(randomblob(0)), length(randomblob(-5)), length(randomblob('7'))")).toEqual([
      [1, 1, 7],
    ]);
    expect(engine.query("SELECT typeof(randomblob(3))")).toEqual([["blob"]]);
    expect(requested).toEqual([1, 1, 7, 3]);
    expect(ENGINE_LIMITS.length).toBe(2_200_000);
    engine.close();
  });

  test("trigger recursion stops at the platform's depth of 10", async () => {
    const storage = await ObjectStorage.open();
    storage.sql.exec("PRAGMA recursive_triggers = ON");
    storage.sql.exec("CREATE TABLE c (n)");
    storage.sql.exec(
      "CREATE TRIGGER deeper AFTER INSERT ON c WHEN new.n < 50 BEGIN INSERT INTO c VALUES (new.n + 1); END",
    );
    // sql.js's SQLite words it "triggers nested too deep"; older ones "too many levels of trigger recursion".
    expect(errorOf(() => storage.sql.exec("INSERT INTO c VALUES (1)"))).toMatch(
      /^(?:triggers nested too deep|too many levels of trigger recursion): SQLITE_ERROR$/,
    );
    // Six levels are fine (45 → 50).
    storage.sql.exec("INSERT INTO c VALUES (45)");
    expect(storage.sql.exec("SELECT count(*) AS n FROM c WHERE n >= 45").one().n).toBe(6);
  });
});

describe("a database-size limit per object", () => {
  test("a write beyond maxDatabaseSize fails with SQLITE_FULL and breaks only this object", async () => {
    const storage = await ObjectStorage.open({ maxDatabaseSize: 1 << 20 });
    const other = await ObjectStorage.open();
    await storage.put("kept", 1);
    await storage.sync();
    storage.sql.exec("CREATE TABLE fill (b)");
    let error = "";
    for (let i = 0; i < 100 && error === ""; i++) {
      try {
        storage.sql.exec("INSERT INTO fill VALUES (randomblob(100000))");
      } catch (e) {
        error = (e as Error).message;
      }
    }
    expect(error).toBe(FULL);
    // As on the platform, the object is broken: every later call fails with the same error.
    expect(errorOf(() => storage.sql.exec("SELECT 1"))).toBe(FULL);
    await expect(storage.get("kept")).rejects.toThrow(FULL);
    // Another object of the process is untouched and may grow past that size.
    other.sql.exec("CREATE TABLE fill (b)");
    for (let i = 0; i < 15; i++) other.sql.exec("INSERT INTO fill VALUES (randomblob(100000))");
    expect(other.sql.databaseSize).toBeGreaterThan(1 << 20);
    await other.close();
  });

  test("the limit holds for key-value data too, and the default is 1 GiB", async () => {
    expect(DEFAULT_MAX_DATABASE_SIZE).toBe(1 << 30);
    const storage = await ObjectStorage.open({ maxDatabaseSize: 256 * 1024 });
    const big = new Uint8Array(100_000);
    let failure: unknown;
    try {
      for (let i = 0; i < 10; i++) {
        await storage.put(`k${i}`, big);
        await storage.sync();
      }
    } catch (e) {
      failure = e;
    }
    // A key-value write fails when its batch commits: the core resets the object, as it does for
    // any failed write (docs/errors.md), and nothing of the failed batch is kept.
    expect(String(failure)).toMatch(/database or disk is full|storage write caused object to be reset/);
  });

  test("a wrong maxDatabaseSize names the option", async () => {
    for (const bad of [-1, 100, 1.5, Number.NaN]) {
      const e = await ObjectStorage.open({ maxDatabaseSize: bad }).catch((x: unknown) => x);
      // Checked with every other option of open(): a TypeError that names it (docs/errors.md).
      expect(e).toBeInstanceOf(TypeError);
      expect((e as { code?: unknown }).code).toBe("ERR_INVALID_OPTION");
      expect((e as Error).message).toMatch(/option "maxDatabaseSize"/);
    }
  });
});
