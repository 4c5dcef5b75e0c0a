/**
 * The page-at-a-time image copy (sqljs-image-copy.ts): stepped between transactions that change
 * the database, it ends holding exactly the committed state of the turn of its last step, also
 * when the database outgrows the room the copy started with; closing the engine mid-copy is safe.
 */
import { describe, expect, test } from "vitest";
import type { SqlEngine } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";

const factory = await loadSqlJsEngine();

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

describe("image copy in steps", () => {
  test.each([
    ["writes to pages already copied and not yet copied", 20, 1],
    ["the database outgrows the copy's room", 20, 4000],
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
});
