/**
 * A cursor dropped before it finished gives its statement back once V8 collects it, as workerd's
 * does: a one-off copy is freed, a cached statement is reset and serves its text again (and stops
 * holding its table). Before, nothing released it: every half-read cursor over a busy or evicted
 * statement kept a compiled statement (JS and WebAssembly memory) for the life of the storage.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, test } from "vitest";
import { type RecordingEngine, setup } from "./helpers";

// A real garbage collection, so that "released" is observed rather than assumed.
setFlagsFromString("--expose_gc");
const gc = runInNewContext("gc") as () => void;

/** Collects garbage and lets the finalization callbacks it queued run. */
async function collect(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const QUERY = "SELECT id FROM t ORDER BY id";

async function objectWithRows(options: { statementCacheSize?: number } = {}) {
  const s = await setup({ record: true, ...options });
  s.sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY)");
  s.sql.exec("INSERT INTO t VALUES (1), (2), (3), (4)");
  const engine = s.recorders.at(-1) as RecordingEngine;
  return { ...s, engine };
}

describe("cursors dropped unfinished", () => {
  test("one-off copies compiled while a cursor reads are freed once their cursors are collected", async () => {
    const { sql, engine } = await objectWithRows();
    const reading = sql.exec(QUERY);
    expect(reading.next().value).toEqual({ id: 1 });
    const before = engine.statements.length;
    // The same text while `reading` reads: each run is a one-off copy, dropped after one row.
    for (let i = 0; i < 20; i++) expect(sql.exec(QUERY).next().value).toEqual({ id: 1 });
    const copies = engine.statements.slice(before).filter((s) => s.sql === QUERY);
    expect(copies).toHaveLength(20);
    await collect();
    // Nothing keeps a freed statement: none of the 20 may be left (all 20 were).
    expect(copies.filter((s) => s.ref.deref() !== undefined)).toHaveLength(0);
    // The cursor still reading is untouched.
    expect(reading.toArray()).toEqual([{ id: 2 }, { id: 3 }, { id: 4 }]);
  });

  test("a cached statement whose cursor was dropped serves its text again, and stops holding its table", async () => {
    const { sql, engine } = await objectWithRows();
    (() => {
      expect(sql.exec(QUERY).next().value).toEqual({ id: 1 });
    })();
    // Run again while the dropped cursor is not collected yet: a one-off copy, as workerd compiles.
    expect(sql.exec(QUERY).toArray()).toHaveLength(4);
    await collect();
    const compiled = engine.prepared.length;
    expect(sql.exec(QUERY).toArray()).toHaveLength(4);
    expect(engine.prepared.length).toBe(compiled); // the cached statement, not another copy
    // Nothing reads `t` any more (the cached statement stayed at its first row before).
    expect(() => sql.exec("DROP TABLE t")).not.toThrow();
  });

  test("a statement evicted while a dropped cursor reads it is freed once the cursor is collected", async () => {
    // Room for one query: each new text evicts the one before.
    const { sql, engine } = await objectWithRows({ statementCacheSize: 64 });
    const texts = Array.from({ length: 10 }, (_, i) => `SELECT id, ${i} AS n FROM t ORDER BY id`);
    for (const text of texts) expect(sql.exec(text).next().value).toEqual({ id: 1, n: Number(text.split(" ")[2]) });
    const compiled = engine.statements.filter((s) => texts.includes(s.sql));
    expect(compiled).toHaveLength(10);
    await collect();
    // The last one is still cached (its cursor held by the cache until it is wanted); the nine
    // evicted ones were kept forever before.
    expect(compiled.filter((s) => s.ref.deref() !== undefined).length).toBeLessThanOrEqual(1);
  });
});
