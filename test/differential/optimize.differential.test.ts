/**
 * `PRAGMA optimize` against workerd: what it lists (`optimize(-1)`), what it counts and what it
 * leaves for the next one, with 0, 1 and 1000 key-value keys, after ANALYZE, after SQLite reloaded
 * its statistics (`ANALYZE sqlite_schema`, `ANALYZE` of one table, an optimize that analyzed a user
 * table), after the key-value table grew tenfold, and in a new session (workerd: `abort()`; here
 * also a restart from the log, with and without a snapshot, and a restored bookmark).
 *
 * workerd keeps the internal tables' rows in `sqlite_stat1`; ObjectStorage keeps the one that
 * optimize's choice depends on out of it (storage/sql/internal-statistics.ts), so every case also
 * checks that user SQL reads no internal row there.
 */
import { randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import type { PersistenceAdapter } from "../../src/durability/persistence";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";
import type { Op } from "./ops";
import { classFromSource, objectWorker, ourSide, startMiniflare, workerdSide } from "./same-source";
import { runOnSubject } from "./subject";
import { DEFAULT_COMPATIBILITY_DATE, startWorkerd, type WorkerdHandle } from "./workerd";

const puts = (from: number, to: number): Op[] =>
  Array.from({ length: to - from }, (_, i): Op => ({ op: "put", key: `k${from + i}`, value: from + i }));
const sql = (query: string): Op => ({ op: "sql", query, read: "toArray" });
/** Every form of optimize, listing first (it analyzes nothing), then the ones that run. */
const OPTIMIZE = [sql("PRAGMA optimize(-1)"), sql("PRAGMA optimize"), sql("PRAGMA optimize(-1)")];
const OPTIMIZE_ALL = [sql("PRAGMA optimize(-1)"), sql("PRAGMA optimize=0x10002"), sql("PRAGMA optimize(-1)")];
const COUNTS = sql("SELECT changes() AS c, total_changes() AS t, last_insert_rowid() AS r");
const TABLE = [sql("CREATE TABLE a (x PRIMARY KEY)"), sql("INSERT INTO a VALUES (1), (2), (3)")];

const CASES: Record<string, readonly Op[]> = {
  "a new object": [...OPTIMIZE, ...OPTIMIZE_ALL],
  "0 keys, a table, after ANALYZE": [...TABLE, sql("ANALYZE"), ...OPTIMIZE, ...OPTIMIZE_ALL],
  "1 key, after ANALYZE": [...puts(0, 1), sql("ANALYZE"), ...OPTIMIZE, ...OPTIMIZE_ALL],
  "1000 keys, after ANALYZE": [...puts(0, 1000), sql("ANALYZE"), ...OPTIMIZE, ...OPTIMIZE_ALL],
  "1000 keys, never analyzed": [...puts(0, 1000), ...OPTIMIZE, ...OPTIMIZE_ALL],
  "1 key, after ANALYZE and a reload (ANALYZE sqlite_schema)": [
    ...puts(0, 1),
    sql("ANALYZE"),
    sql("ANALYZE sqlite_schema"),
    ...OPTIMIZE,
  ],
  "1000 keys, after ANALYZE and a reload (ANALYZE sqlite_schema)": [
    ...puts(0, 1000),
    sql("ANALYZE"),
    sql("ANALYZE sqlite_schema"),
    ...OPTIMIZE_ALL,
    ...OPTIMIZE,
  ],
  "after ANALYZE, then ANALYZE of a user table (a reload)": [
    ...puts(0, 3),
    ...TABLE,
    sql("ANALYZE"),
    sql("ANALYZE a"),
    ...OPTIMIZE,
  ],
  "only a user table analyzed: optimize analyzes the key-value table": [
    ...puts(0, 3),
    ...TABLE,
    sql("ANALYZE a"),
    ...OPTIMIZE,
    sql("ANALYZE sqlite_schema"),
    ...OPTIMIZE,
  ],
  "the key-value table grew tenfold after ANALYZE (then a reload)": [
    ...puts(0, 10),
    sql("ANALYZE"),
    ...puts(10, 200),
    sql("ANALYZE sqlite_schema"),
    ...OPTIMIZE_ALL,
    sql("ANALYZE sqlite_schema"),
    ...OPTIMIZE_ALL,
  ],
  "the key-value table emptied after ANALYZE": [
    ...puts(0, 20),
    sql("ANALYZE"),
    { op: "deleteAll" },
    ...puts(0, 1),
    sql("ANALYZE"),
    sql("ANALYZE sqlite_schema"),
    ...OPTIMIZE,
  ],
  "changes(), total_changes() and last_insert_rowid() around them": [
    ...puts(0, 30),
    ...TABLE,
    sql("ANALYZE"),
    COUNTS,
    sql("INSERT INTO a VALUES (4)"),
    sql("ANALYZE a"),
    COUNTS,
    sql("ANALYZE sqlite_schema"),
    COUNTS,
    sql("PRAGMA optimize"),
    COUNTS,
    ...puts(30, 400),
    sql("PRAGMA optimize=0x10002"),
    COUNTS,
  ],
  "an optimize that analyzed a user table reloads the statistics": [
    ...puts(0, 3),
    ...TABLE,
    sql("ANALYZE"),
    ...[10, 100, 1000].map((n) => sql(`INSERT INTO a SELECT x + ${n} FROM a`)),
    sql("PRAGMA optimize=0x10002"),
    ...OPTIMIZE,
  ],
};

let workerd: WorkerdHandle;

beforeAll(async () => {
  workerd = await startWorkerd();
});

afterAll(async () => {
  await workerd.dispose();
});

describe("PRAGMA optimize, against workerd", () => {
  for (const [name, ops] of Object.entries(CASES)) {
    it(`${name}: results, rows and counters as on workerd; no internal row in sqlite_stat1`, async () => {
      const theirs = await workerd.run(ops);
      const stat = sql("SELECT count(*) AS n FROM sqlite_stat1 WHERE tbl LIKE '\\_cf\\_%' ESCAPE '\\'");
      const ours = await runOnSubject([...ops, stat]);
      expect(ours.slice(0, ops.length)).toEqual(theirs);
      expect(JSON.stringify(ours.at(-1))).toMatch(/\["n",0\]|no such table: sqlite_stat1/);
    });
  }
});

const SOURCE = `
class OptimizeProbe {
  constructor(ctx) {
    this.ctx = ctx;
  }
  async fetch(request) {
    const sql = this.ctx.storage.sql;
    const run = (query) => {
      const cursor = sql.exec(query);
      return { rows: cursor.toArray(), read: cursor.rowsRead, written: cursor.rowsWritten };
    };
    switch (new URL(request.url).pathname) {
      case "/setup":
        for (let i = 0; i < 30; i++) await this.ctx.storage.put("k" + i, i);
        sql.exec("CREATE TABLE IF NOT EXISTS a (x PRIMARY KEY)");
        sql.exec("INSERT INTO a VALUES (random())");
        return Response.json(run("ANALYZE"));
      case "/grow":
        for (let i = 30; i < 400; i++) await this.ctx.storage.put("k" + i, i);
        return Response.json(null);
      case "/optimize":
        return Response.json([run("PRAGMA optimize(-1)"), run("PRAGMA optimize"), run("PRAGMA optimize(-1)")]);
      case "/optimize-all":
        return Response.json([run("PRAGMA optimize(-1)"), run("PRAGMA optimize=0x10002"), run("PRAGMA optimize(-1)")]);
      case "/abort":
        this.ctx.abort();
        return Response.json(null);
    }
    return new Response("unknown path", { status: 404 });
  }
}`;

const SESSIONS = [
  "/setup",
  "/abort",
  "/optimize",
  "/grow",
  "/abort",
  "/optimize",
  "/optimize-all",
  "/abort",
  "/optimize-all",
];

describe("PRAGMA optimize in a new session, against workerd", () => {
  let mf: Miniflare;

  beforeAll(async () => {
    mf = await startMiniflare([objectWorker("optimize", SOURCE, "OptimizeProbe", DEFAULT_COMPATIBILITY_DATE)]);
  });

  afterAll(async () => {
    await mf.dispose();
  });

  it("after abort(), optimize lists, analyzes and counts as on workerd's new connection", async () => {
    const theirSide = await workerdSide(mf, "optimize", randomUUID());
    const context = await ObjectContext.create(classFromSource(SOURCE, "OptimizeProbe"), { id: randomUUID() });
    const ourSideOf = ourSide(context);
    const theirs = [];
    const seen = [];
    for (const path of SESSIONS) {
      theirs.push({ path, outcome: await theirSide.request(path) });
      seen.push({ path, outcome: await ourSideOf.request(path) });
    }
    expect(seen).toEqual(theirs);
  });

  it("after a restart from the log (with and without a snapshot) and a restored bookmark, as after workerd's abort()", async () => {
    const theirSide = await workerdSide(mf, "optimize", randomUUID());
    await theirSide.request("/setup");
    await theirSide.request("/abort");
    const expected = await theirSide.request("/optimize");
    expect(expected.ok).toBe(true);

    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    const engineFactory = await loadSqlJsEngine();
    const open = (p: PersistenceAdapter) => ObjectStorage.open({ persistence: p, clock, engineFactory });
    const restart = async (storage: ObjectStorage) => {
      storage.abort();
      await coreOf(storage).settled();
      return open(persistence);
    };
    const run = (storage: ObjectStorage, query: string) => {
      const cursor = storage.sql.exec(query);
      return { rows: cursor.toArray(), read: cursor.rowsRead, written: cursor.rowsWritten };
    };
    const optimize = async (storage: ObjectStorage) => {
      const out = [
        run(storage, "PRAGMA optimize(-1)"),
        run(storage, "PRAGMA optimize"),
        run(storage, "PRAGMA optimize(-1)"),
      ];
      await storage.sync();
      return { ok: true, status: 200, body: JSON.parse(JSON.stringify(out)) as unknown };
    };
    let storage = await open(persistence);
    for (let i = 0; i < 30; i++) await storage.put(`k${i}`, i);
    storage.sql.exec("CREATE TABLE IF NOT EXISTS a (x PRIMARY KEY)");
    storage.sql.exec("INSERT INTO a VALUES (random())");
    run(storage, "ANALYZE");
    await storage.sync();
    const bookmark = await storage.getCurrentBookmark();
    storage = await restart(storage); // replays the log
    const afterReplay = await optimize(storage);
    await coreOf(storage).snapshot();
    storage = await restart(storage); // opens the snapshot
    const afterSnapshot = await optimize(storage);
    await storage.onNextSessionRestoreBookmark(bookmark);
    storage = await restart(storage);
    const afterRestore = await optimize(storage);
    expect({ afterReplay, afterSnapshot, afterRestore }).toEqual({
      afterReplay: expected,
      afterSnapshot: expected,
      afterRestore: expected,
    });
  });
});
