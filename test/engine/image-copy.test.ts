/**
 * The image copy made in steps: from a paged database file, chunk by chunk (sqljs-paged-copy.ts;
 * with the default chunks and with chunks of one page), or with the backup API page by page
 * (sqljs-image-copy.ts; a database whose file is not paged). Stepped between transactions that
 * change the database, it ends holding exactly the committed state of the turn of its last step,
 * also when the database outgrows the room the copy started with, when it is rewritten faster than
 * the copy converges, and when a VACUUM takes the file back mid-copy; closing the engine mid-copy
 * is safe. The paged file's copy also finishes while a writer grows the database faster than a
 * step copies, without pause.
 */
import { describe, expect, test } from "vitest";
import type { SqlEngine, SqlEngineFactory } from "../../src/engine/engine";
import { loadSqlJsEngine, loadSqlJsEngineWithChunks } from "../../src/engine/sqljs";
import type { SqlJsEngine } from "../../src/engine/sqljs-engine";

const defaults = await loadSqlJsEngine();
const onePageChunks = await loadSqlJsEngineWithChunks({}, 4096);
const kinds: [string, SqlEngineFactory, boolean][] = [
  ["paged file", defaults, true],
  ["paged file, one page per chunk", onePageChunks, true],
  // An empty image is never handed to the paged file: the copy uses the backup API.
  ["backup API", { open: (bytes) => defaults.open(bytes ?? new Uint8Array(0)) }, false],
];

function fill(engine: SqlEngine, from: number, count: number, tag: number): void {
  engine.exec("BEGIN");
  const stmt = engine.prepare("INSERT OR REPLACE INTO t VALUES (?, ?)");
  for (let i = from; i < from + count; i++) {
    stmt.bind([i, "x".repeat(200) + String(tag)], "integer");
    while (stmt.step());
    stmt.reset();
  }
  stmt.free();
  engine.exec("COMMIT");
}

const contents = (engine: SqlEngine) => engine.query("SELECT k, v FROM t ORDER BY k");

describe.each(kinds)("image copy in steps (%s)", (_kind, factory, isPaged) => {
  test("the engine's file is paged as expected", () => {
    const engine = factory.open();
    expect((engine as SqlJsEngine).pagedFile !== undefined).toBe(isPaged);
    engine.close();
  });

  test.each([
    ["writes to pages already copied and not yet copied", 20, 1],
    ["the database outgrows the copy's room", 20, 4000],
    ["every turn rewrites more than a step copies", 400, 300],
  ])("%s: the image is the state of the last step", (_name, rounds, growth) => {
    const engine = factory.open();
    engine.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)");
    fill(engine, 0, 3000, 0);
    const copy = engine.beginImageCopy?.();
    if (copy === undefined) throw new Error("the sql.js engine copies images in steps");
    let round = 0;
    let done = false;
    while (!done) {
      done = copy.step(8);
      if (done) break;
      round++;
      // Rewrite rows spread over the file (some pages copied already, some not), and grow it.
      if (round <= rounds) fill(engine, (round * 137) % 3000, 50 + growth, round);
      if (rounds === 400 && round <= rounds) fill(engine, (round * 911) % 3000, 300, round);
    }
    const expected = contents(engine);
    const image = copy.image();
    // Written after the copy finished: must not show in the image.
    fill(engine, 0, 10, 999);
    const reopened = factory.open(image);
    expect(reopened.query("PRAGMA integrity_check")).toEqual([["ok"]]);
    expect(contents(reopened)).toEqual(expected);
    expect(contents(reopened)).not.toEqual(contents(engine));
    reopened.close();
    engine.close();
  });

  test("closing the engine during a copy ends the copy; abandon and step afterwards are harmless", () => {
    const engine = factory.open();
    engine.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)");
    fill(engine, 0, 2000, 0);
    const copy = engine.beginImageCopy?.();
    expect(copy?.step(4)).toBe(false);
    engine.close();
    expect(copy?.step(4)).toBe(false);
    expect(() => copy?.image()).toThrow(/not complete/);
    copy?.abandon();
  });

  test("a VACUUM in the middle of the copy: the image is still the state of the last step", () => {
    const engine = factory.open();
    engine.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)");
    fill(engine, 0, 4000, 0);
    engine.exec("DELETE FROM t WHERE k % 3 = 0");
    const copy = engine.beginImageCopy?.();
    if (copy === undefined) throw new Error("the sql.js engine copies images in steps");
    expect(copy.step(1)).toBe(false);
    engine.exec("VACUUM");
    fill(engine, 5000, 100, 1);
    let done = false;
    for (let round = 0; !done; round++) {
      done = copy.step(1);
      if (!done && round < 5) fill(engine, round * 7, 20, round + 2);
    }
    const expected = contents(engine);
    const reopened = defaults.open(copy.image());
    expect(reopened.query("PRAGMA integrity_check")).toEqual([["ok"]]);
    expect(contents(reopened)).toEqual(expected);
    // The file system owns the file now: the engine no longer offers its chunks.
    expect((engine as SqlJsEngine).pagedFile).toBeUndefined();
    reopened.close();
    engine.close();
  });
});

// Only the paged file's copy promises this: SQLite's backup restarts at the end of a database that
// keeps growing (the backup API serves only a file the file system took back after a VACUUM).
describe.each(kinds.filter(([, , paged]) => paged))(
  "image copy in steps (%s), a writer that never pauses",
  (_kind, factory) => {
    test("a writer that never stops and grows the database faster than a step copies: the copy still finishes, holding the last step's state", () => {
      const engine = factory.open();
      engine.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)");
      fill(engine, 0, 3000, 0);
      const copy = engine.beginImageCopy?.();
      if (copy === undefined) throw new Error("the sql.js engine copies images in steps");
      let next = 3000;
      let rounds = 0;
      // Each round appends about 350 KB and rewrites rows already copied; a step of 8 pages is
      // 32 KiB. A copy that only keeps pace by its own budget falls behind for good.
      while (!copy.step(8)) {
        rounds++;
        expect(rounds).toBeLessThan(60);
        fill(engine, next, 1500, rounds);
        fill(engine, (rounds * 137) % 3000, 50, rounds);
        next += 1500;
      }
      const expected = contents(engine);
      const image = copy.image();
      fill(engine, next, 10, 999);
      const reopened = factory.open(image);
      expect(reopened.query("PRAGMA integrity_check")).toEqual([["ok"]]);
      expect(contents(reopened)).toEqual(expected);
      reopened.close();
      engine.close();
    });
  },
);
