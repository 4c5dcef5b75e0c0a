/**
 * Recovery is exact whatever connection state a write depended on. Each scenario sets some
 * per-connection state (a pragma, or the counters behind `changes()`, `total_changes()`,
 * `last_insert_rowid()`), lets a snapshot fall between that and a write that depends on it (or rolls
 * the setting's savepoint back), and then checks the full logical dump after a restart, after
 * `abort()` with unconfirmed work pending, and after restoring a bookmark and undoing the restore.
 *
 * Before the log carried connection state, a snapshot image (which holds none) followed by replay
 * on a fresh connection lost it, and the object silently came back different.
 */
import { describe, expect, test } from "vitest";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import type { PersistenceAdapter } from "../../src/durability/persistence";
import type { SqlEngineFactory } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";
import { dumpStorage } from "./dump";

interface Scenario {
  name: string;
  /** Run (each statement its own commit) before the snapshot. */
  setup: string[];
  /** Run after the snapshot; the result depends on the connection state `setup` left. */
  write: string[];
  /** Something the live state must show, so the scenario is known to exercise the setting. */
  live: (rows: (sql: string) => unknown[][]) => void;
  /** Reads run after the snapshot, before the write (they can change connection state too). */
  afterSnapshot?: string[];
  /** Run `setup`'s last statement inside a savepoint that is rolled back (the setting stays). */
  rolledBack?: boolean;
  /**
   * Make the batch's key-value write before the dependent write instead of after it: it reaches the
   * database before the statement runs (as on the platform), which changes `changes()`.
   */
  kvFirst?: boolean;
}

const SCENARIOS: Scenario[] = [
  {
    name: "case_sensitive_like",
    setup: [
      "CREATE TABLE w(x)",
      "INSERT INTO w VALUES ('apple'), ('Avocado'), ('banana')",
      "PRAGMA case_sensitive_like = ON",
    ],
    write: ["DELETE FROM w WHERE x LIKE 'a%'"],
    live: (rows) => expect(rows("SELECT x FROM w ORDER BY x")).toEqual([["Avocado"], ["banana"]]),
  },
  {
    name: "recursive_triggers",
    setup: [
      "CREATE TABLE r(n)",
      "CREATE TRIGGER r_more AFTER INSERT ON r WHEN new.n < 5 BEGIN INSERT INTO r VALUES (new.n + 1); END",
      "PRAGMA recursive_triggers = ON",
    ],
    write: ["INSERT INTO r VALUES (1)"],
    live: (rows) => expect(rows("SELECT count(*) FROM r")).toEqual([[5]]),
  },
  {
    name: "reverse_unordered_selects",
    setup: [
      "CREATE TABLE u(x)",
      "INSERT INTO u VALUES (1), (2), (3)",
      "CREATE TABLE picked(x)",
      "PRAGMA reverse_unordered_selects = ON",
    ],
    write: ["INSERT INTO picked SELECT x FROM u LIMIT 1"],
    live: (rows) => expect(rows("SELECT x FROM picked")).toEqual([[3]]),
  },
  {
    name: "legacy_alter_table",
    setup: [
      "CREATE TABLE a(x)",
      "CREATE TABLE other(y)",
      "CREATE TRIGGER a_copy AFTER INSERT ON other BEGIN INSERT INTO a VALUES (new.y); END",
      "PRAGMA legacy_alter_table = ON",
    ],
    write: ["ALTER TABLE a RENAME TO b"],
    // In legacy mode the trigger body keeps naming `a`.
    live: (rows) =>
      expect(String(rows("SELECT sql FROM sqlite_schema WHERE name = 'a_copy'")[0]?.[0])).toContain("INTO a "),
  },
  {
    name: "ignore_check_constraints",
    setup: ["CREATE TABLE c(x CHECK (x > 0))", "PRAGMA ignore_check_constraints = ON"],
    write: ["INSERT INTO c VALUES (-1)"],
    live: (rows) => expect(rows("SELECT x FROM c")).toEqual([[-1]]),
  },
  {
    name: "foreign_keys and defer_foreign_keys",
    setup: [
      "CREATE TABLE p(id INTEGER PRIMARY KEY)",
      "CREATE TABLE ch(pid REFERENCES p(id))",
      // Takes effect when SQLite compiles it before the batch's transaction began, not inside it.
      "PRAGMA foreign_keys = OFF",
      "PRAGMA defer_foreign_keys = ON",
    ],
    write: ["INSERT INTO ch VALUES (99)", "INSERT INTO p VALUES (1)", "INSERT INTO ch VALUES (1)"],
    live: (rows) => expect(rows("SELECT pid FROM ch WHERE pid = 1")).toEqual([[1]]),
  },
  {
    name: "changes()",
    // The first run sees the alarm's write before it (1 change, as on the platform: setAlarm is a
    // statement there); the second, after the snapshot, the 3 changes made before it.
    setup: [
      "CREATE TABLE t(x)",
      "CREATE TABLE log(v)",
      "INSERT INTO log VALUES (changes())",
      "INSERT INTO t VALUES (1), (2), (3)",
    ],
    write: ["INSERT INTO log VALUES (changes())"],
    live: (rows) => expect(rows("SELECT v FROM log ORDER BY rowid")).toEqual([[1], [3]]),
  },
  {
    name: "changes() after a key-value write",
    // The platform writes the key at the call, so the statement after it sees one change.
    setup: [
      "CREATE TABLE t(x)",
      "CREATE TABLE log(v)",
      "INSERT INTO log VALUES (changes())",
      "INSERT INTO t VALUES (1), (2), (3)",
    ],
    write: ["INSERT INTO log VALUES (changes())"],
    kvFirst: true,
    live: (rows) => expect(rows("SELECT v FROM log ORDER BY rowid")).toEqual([[1], [1]]),
  },
  {
    name: "total_changes()",
    setup: ["CREATE TABLE t(x)", "CREATE TABLE log(v)", "INSERT INTO t VALUES (1), (2), (3)"],
    write: ["INSERT INTO log VALUES (total_changes())"],
    live: (rows) => expect(Number(rows("SELECT v FROM log")[0]?.[0])).toBeGreaterThanOrEqual(3),
  },
  {
    name: "last_insert_rowid()",
    setup: ["CREATE TABLE t(x)", "CREATE TABLE log(v)", "INSERT INTO t(rowid, x) VALUES (9007199254740993, 1)"],
    write: ["INSERT INTO log VALUES (last_insert_rowid())"],
    live: (rows) => expect(rows("SELECT quote(v) FROM log")).toEqual([["9007199254740993"]]),
  },
  {
    // Optimize analyzes only tables this connection used (here: read after the snapshot's
    // connection state was lost), so replay on a fresh connection analyzed nothing.
    name: "PRAGMA optimize",
    setup: [
      "CREATE TABLE big(a, b)",
      "CREATE INDEX big_a ON big(a)",
      "INSERT INTO big SELECT value % 37, value FROM (WITH RECURSIVE c(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM c WHERE value < 300) SELECT value FROM c)",
      "PRAGMA optimize",
      "INSERT INTO big SELECT value % 37, value FROM (WITH RECURSIVE c(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM c WHERE value < 30000) SELECT value FROM c)",
    ],
    afterSnapshot: ["SELECT count(*) FROM big WHERE a = 5"],
    write: ["PRAGMA optimize"],
    live: (rows) => expect(rows("SELECT stat FROM sqlite_stat1 WHERE idx = 'big_a'")).toEqual([["30300 667"]]),
  },
  {
    name: "a setting whose savepoint was rolled back",
    setup: [
      "CREATE TABLE r(n)",
      "CREATE TRIGGER r_more AFTER INSERT ON r WHEN new.n < 5 BEGIN INSERT INTO r VALUES (new.n + 1); END",
      "PRAGMA recursive_triggers = ON",
    ],
    rolledBack: true,
    write: ["INSERT INTO r VALUES (1)"],
    live: (rows) => expect(rows("SELECT count(*) FROM r")).toEqual([[5]]),
  },
];

let factory: SqlEngineFactory | undefined;

async function open(persistence: PersistenceAdapter, clock: FakeClock): Promise<ObjectStorage> {
  factory ??= await loadSqlJsEngine();
  return ObjectStorage.open({ persistence, clock, engineFactory: factory });
}

/** Ends the session as abort() does and opens the next one. */
async function restart(storage: ObjectStorage, persistence: PersistenceAdapter, clock: FakeClock) {
  storage.abort();
  await coreOf(storage).settled();
  return open(persistence, clock);
}

function run(storage: ObjectStorage, sql: string): void {
  try {
    storage.sql.exec(sql).toArray();
  } catch {
    // a failing write is part of the history too
  }
}

/** Sets the scenario up, takes a snapshot, runs its write; returns the storage and its live dump. */
async function play(s: Scenario, persistence: PersistenceAdapter, clock: FakeClock) {
  const storage = await open(persistence, clock);
  await storage.put("kv", { n: 1 });
  await storage.setAlarm(clock.now() + 60_000);
  for (const [i, sql] of s.setup.entries()) {
    if (s.rolledBack && i === s.setup.length - 1) {
      expect(() =>
        storage.transactionSync(() => {
          run(storage, sql);
          throw new Error("roll back");
        }),
      ).toThrow("roll back");
    } else run(storage, sql);
    await storage.sync();
  }
  if (!s.rolledBack) await coreOf(storage).snapshot();
  for (const sql of s.afterSnapshot ?? []) storage.sql.exec(sql).toArray();
  // A key-value write in the same batch as the dependent write.
  if (s.kvFirst) storage.kv.put("after", 2);
  for (const sql of s.write) run(storage, sql);
  if (!s.kvFirst) storage.kv.put("after", 2);
  await storage.sync();
  s.live((sql) => coreOf(storage).engine.query(sql));
  return { storage, live: await dumpStorage(storage) };
}

describe.each(SCENARIOS)("recovery is exact with $name", (s) => {
  test("after a restart", async () => {
    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    const { storage, live } = await play(s, persistence, clock);
    const again = await restart(storage, persistence, clock);
    expect(await dumpStorage(again)).toEqual(live);
    // A second restart replays from the same log (and the snapshot) again.
    await coreOf(again).snapshot();
    expect(await dumpStorage(await restart(again, persistence, clock))).toEqual(live);
  });

  test("after abort() with unconfirmed work pending", async () => {
    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    const { storage, live } = await play(s, persistence, clock);
    storage.kv.put("pending", 1);
    run(storage, "CREATE TABLE pending(x)");
    storage.abort();
    await coreOf(storage).settled();
    const again = await open(persistence, clock);
    expect(await dumpStorage(again)).toEqual(live);
  });

  test("after restoring a bookmark and undoing the restore", async () => {
    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    const { storage, live } = await play(s, persistence, clock);
    const bookmark = await storage.getCurrentBookmark();
    await clock.advance(1000);
    // Later history that changes everything (and takes a snapshot of it).
    await storage.deleteAll();
    run(storage, "CREATE TABLE later(x)");
    await storage.put("later", true);
    await storage.sync();
    await coreOf(storage).snapshot();
    const later = await dumpStorage(storage);
    const undo = await storage.onNextSessionRestoreBookmark(bookmark);
    let current = await restart(storage, persistence, clock);
    expect(await dumpStorage(current)).toEqual(live);
    await current.onNextSessionRestoreBookmark(undo);
    current = await restart(current, persistence, clock);
    expect(await dumpStorage(current)).toEqual(later);
    // And once more back to the bookmark, now through a log that holds restores.
    await current.onNextSessionRestoreBookmark(bookmark);
    current = await restart(current, persistence, clock);
    expect(await dumpStorage(current)).toEqual(live);
  });
});
