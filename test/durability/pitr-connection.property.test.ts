/**
 * Recovery is exact whatever connection state the object used, as a property: random workloads mix
 * every allowed pragma that changes what a write does (case_sensitive_like, foreign_keys,
 * defer_foreign_keys, ignore_check_constraints, legacy_alter_table, recursive_triggers,
 * reverse_unordered_selects) and every allowed function that reads connection state (changes(),
 * total_changes(), last_insert_rowid()) with ordinary key-value, SQL and alarm writes, savepoints
 * rolled back, deleteAll(), and snapshots forced at random points between statements. After every
 * restart, every abort() with unconfirmed work pending, and every restore of a random earlier
 * bookmark (and its undo), the full logical dump (schema, every row, every key-value pair, the
 * alarm) must equal the confirmed state.
 *
 * (The other allowed pragmas only read, except `optimize`, whose ANALYZE writes statistics: it is
 * in the workload too.)
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import type { PersistenceAdapter } from "../../src/durability/persistence";
import type { SqlEngineFactory } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";
import { dumpStorage, type StorageDump } from "./dump";

const SETTINGS = [
  "case_sensitive_like",
  "foreign_keys",
  "defer_foreign_keys",
  "ignore_check_constraints",
  "legacy_alter_table",
  "recursive_triggers",
  "reverse_unordered_selects",
];

const SCHEMA = [
  "CREATE TABLE IF NOT EXISTS w(x)",
  "CREATE TABLE IF NOT EXISTS c(x CHECK (x > 0))",
  "CREATE TABLE IF NOT EXISTS p(id INTEGER PRIMARY KEY)",
  "CREATE TABLE IF NOT EXISTS ch(pid REFERENCES p(id) ON DELETE CASCADE)",
  "CREATE TABLE IF NOT EXISTS r(n)",
  "CREATE TRIGGER IF NOT EXISTS r_more AFTER INSERT ON r WHEN new.n < 4 BEGIN INSERT INTO r VALUES (new.n + 1); END",
  "CREATE TABLE IF NOT EXISTS log(v)",
  "CREATE TABLE IF NOT EXISTS a(x)",
  "CREATE TRIGGER IF NOT EXISTS log_copy AFTER INSERT ON log BEGIN INSERT INTO a VALUES (new.v); END",
  "CREATE INDEX IF NOT EXISTS w_x ON w(x)",
];

type Binding = string | number | null;
interface SqlOp {
  sql: string;
  bindings: readonly Binding[];
}

const word = fc.constantFrom("apple", "Apple", "Avocado", "Banana", "b%", "A_");
const pragma: fc.Arbitrary<SqlOp> = fc
  .tuple(fc.constantFrom(...SETTINGS), fc.constantFrom("ON", "OFF", "1", "0", "true", "no"))
  .map(([name, v]) => ({ sql: `PRAGMA ${name} = ${v}`, bindings: [] }));
/** Writes whose effect depends on a setting (picked more often). */
const dependent: fc.Arbitrary<SqlOp> = fc.oneof(
  word.map((x) => ({ sql: "DELETE FROM w WHERE x LIKE ?", bindings: [`${x.slice(0, 1)}%`] })),
  fc.constant({ sql: "UPDATE w SET x = x || '!' WHERE x LIKE 'a%'", bindings: [] }),
  fc.integer({ min: -2, max: 1 }).map((n) => ({ sql: "INSERT INTO c VALUES (?)", bindings: [n] })),
  fc.constant({ sql: "INSERT INTO r VALUES (1)", bindings: [] }),
  fc.constant({ sql: "INSERT INTO log SELECT x FROM w LIMIT 1", bindings: [] }),
  fc.constantFrom("changes()", "total_changes()", "last_insert_rowid()").map((f) => ({
    sql: `INSERT INTO log VALUES (${f})`,
    bindings: [],
  })),
);
const write: fc.Arbitrary<SqlOp> = fc.oneof(
  dependent,
  dependent,
  word.map((x) => ({ sql: "INSERT INTO w VALUES (?)", bindings: [x] })),
  word.map((x) => ({ sql: "INSERT INTO w VALUES (?)", bindings: [x] })),
  fc.integer({ min: 1, max: 4 }).map((n) => ({ sql: "INSERT OR IGNORE INTO p VALUES (?)", bindings: [n] })),
  // Only rows whose parent exists: a deferred violation would fail the commit and reset the object
  // (as on the platform), which is not a recovery question. Deletes cascade when foreign_keys is on.
  fc.integer({ min: 1, max: 6 }).map((n) => ({
    sql: "INSERT INTO ch SELECT ?1 WHERE EXISTS (SELECT 1 FROM p WHERE id = ?1)",
    bindings: [n],
  })),
  fc.integer({ min: 1, max: 4 }).map((n) => ({ sql: "DELETE FROM p WHERE id = ?", bindings: [n] })),
  fc.constant({ sql: "INSERT INTO r VALUES (1)", bindings: [] }),
  fc.constantFrom("changes()", "total_changes()", "last_insert_rowid()").map((f) => ({
    sql: `INSERT INTO log VALUES (${f})`,
    bindings: [],
  })),
  fc.constant({
    sql: "UPDATE log SET v = changes() + total_changes() * 1000 WHERE rowid = last_insert_rowid()",
    bindings: [],
  }),
  fc.constant({ sql: "INSERT INTO log SELECT x FROM w LIMIT 1", bindings: [] }),
  fc.constant({ sql: "DELETE FROM w WHERE rowid IN (SELECT rowid FROM w LIMIT 1)", bindings: [] }),
  fc.constant({ sql: "INSERT INTO w(rowid, x) VALUES (abs(random()) % 1000000 + 2, random())", bindings: [] }),
  fc.constantFrom("ALTER TABLE a RENAME TO a2", "ALTER TABLE a2 RENAME TO a").map((sql) => ({ sql, bindings: [] })),
  fc.constant({ sql: "PRAGMA optimize", bindings: [] }),
);
const sqlOp: fc.Arbitrary<SqlOp> = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom(...SCHEMA).map((sql) => ({ sql, bindings: [] })) },
  { weight: 4, arbitrary: pragma },
  { weight: 8, arbitrary: write },
);

type Op =
  | { k: "sql"; op: SqlOp }
  | { k: "put"; key: string; value: number }
  | { k: "delete"; key: string }
  | { k: "alarm"; inMs: number | null };

type Step =
  | Op
  | { k: "txnSync"; ops: Op[]; rollback: boolean }
  | { k: "sync" }
  | { k: "snapshot" }
  | { k: "bookmark" }
  | { k: "restart" }
  | { k: "abortPending"; ops: Op[] }
  | { k: "deleteAll" }
  | { k: "schema" }
  | { k: "advance"; ms: number };

const key = fc.constantFrom("a", "b", "c");
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: sqlOp.map((o) => ({ k: "sql" as const, op: o })) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant("put" as const), key, value: fc.integer() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("delete" as const), key }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("alarm" as const),
      inMs: fc.option(fc.integer({ min: 1, max: 1e6 }), { nil: null }),
    }),
  },
);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 12, arbitrary: op },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("txnSync" as const),
      ops: fc.array(op, { maxLength: 4 }),
      rollback: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.constant({ k: "sync" as const }) },
  { weight: 6, arbitrary: fc.constant({ k: "snapshot" as const }) },
  { weight: 2, arbitrary: fc.constant({ k: "bookmark" as const }) },
  { weight: 1, arbitrary: fc.constant({ k: "restart" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("abortPending" as const),
      ops: fc.array(op, { minLength: 1, maxLength: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ k: "deleteAll" as const }) },
  { weight: 1, arbitrary: fc.constant({ k: "schema" as const }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("advance" as const), ms: fc.integer({ min: 1, max: 5000 }) }) },
);
const restorePlan = fc.array(fc.record({ pick: fc.nat(), undo: fc.boolean() }), { minLength: 1, maxLength: 4 });

let factory: SqlEngineFactory | undefined;

interface World {
  persistence: PersistenceAdapter;
  clock: FakeClock;
  snapshotEveryRecords: number;
  storage: ObjectStorage;
}

async function open(w: Omit<World, "storage">): Promise<ObjectStorage> {
  factory ??= await loadSqlJsEngine();
  return ObjectStorage.open({
    persistence: w.persistence,
    clock: w.clock,
    engineFactory: factory,
    snapshotEveryRecords: w.snapshotEveryRecords,
  });
}

function runOp(world: World, o: Op): void {
  const s = world.storage;
  switch (o.k) {
    case "sql":
      try {
        s.sql.exec(o.op.sql, ...o.op.bindings).toArray();
      } catch {
        // constraint failures, missing tables: part of the history
      }
      return;
    case "put":
      s.kv.put(o.key, o.value);
      return;
    case "delete":
      s.kv.delete(o.key);
      return;
    case "alarm":
      void (o.inMs === null ? s.deleteAlarm() : s.setAlarm(world.clock.now() + o.inMs));
      return;
  }
}

/** Ends the session as abort() does, opens the next one, and checks it holds `expected`. */
async function restartAndCheck(world: World, expected: StorageDump): Promise<void> {
  world.storage.abort();
  await coreOf(world.storage).settled();
  world.storage = await open(world);
  expect(await dumpStorage(world.storage)).toEqual(expected);
}

async function runStep(world: World, s: Step, bookmarks: Array<[string, StorageDump]>): Promise<void> {
  const storage = world.storage;
  switch (s.k) {
    case "txnSync":
      try {
        storage.transactionSync(() => {
          for (const o of s.ops) runOp(world, o);
          if (s.rollback) throw new Error("roll back");
        });
      } catch (e) {
        if (!(e instanceof Error) || e.message !== "roll back") throw e;
      }
      return;
    case "sync":
      await storage.sync();
      return;
    case "snapshot":
      await storage.sync();
      // A batch that only opened a transaction (and rolled it all back) ends at the end of the
      // turn, on a timer; end it now rather than race that timer (a snapshot needs no open one).
      coreOf(storage).commitNow();
      await coreOf(storage).snapshot();
      return;
    case "bookmark":
      await storage.sync();
      bookmarks.push([await storage.getCurrentBookmark(), await dumpStorage(storage)]);
      return;
    case "restart": {
      await storage.sync();
      await restartAndCheck(world, await dumpStorage(storage));
      return;
    }
    case "abortPending": {
      await storage.sync();
      const confirmed = await dumpStorage(storage);
      for (const o of s.ops) runOp(world, o);
      await restartAndCheck(world, confirmed);
      return;
    }
    case "deleteAll":
      await storage.deleteAll();
      return;
    case "schema":
      for (const sql of SCHEMA) runOp(world, { k: "sql", op: { sql, bindings: [] } });
      await storage.sync();
      return;
    case "advance":
      await world.clock.advance(s.ms);
      return;
    default:
      runOp(world, s);
  }
}

describe("recovery with connection state (property)", () => {
  test("restart, abort() and restore (and undo) reproduce the confirmed dump exactly", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 40 }),
        restorePlan,
        fc.constantFrom(1, 2, 3, 7, 1_000_000_000),
        async (steps, plan, snapshotEveryRecords) => {
          const base = { persistence: createMemoryPersistence(), clock: new FakeClock(), snapshotEveryRecords };
          const world: World = { ...base, storage: await open(base) };
          try {
            const bookmarks: Array<[string, StorageDump]> = [];
            await runStep(world, { k: "schema" }, bookmarks);
            for (const s of steps) await runStep(world, s, bookmarks);
            await runStep(world, { k: "bookmark" }, bookmarks);
            await runStep(world, { k: "restart" }, bookmarks);
            for (const { pick, undo } of plan) {
              const [bookmark, expected] = bookmarks[pick % bookmarks.length] as [string, StorageDump];
              await world.storage.sync();
              const before = await dumpStorage(world.storage);
              const undoBookmark = await world.storage.onNextSessionRestoreBookmark(bookmark);
              await restartAndCheck(world, expected);
              bookmarks.push([undoBookmark, before]);
              if (undo) {
                await world.storage.onNextSessionRestoreBookmark(undoBookmark);
                await restartAndCheck(world, before);
              }
              // Writes on top of the restored state, some depending on connection state.
              runOp(world, { k: "sql", op: { sql: "INSERT INTO log VALUES (total_changes())", bindings: [] } });
              runOp(world, { k: "sql", op: { sql: "PRAGMA recursive_triggers = ON", bindings: [] } });
              runOp(world, { k: "sql", op: { sql: "INSERT INTO r VALUES (1)", bindings: [] } });
              await runStep(world, { k: "snapshot" }, bookmarks);
              await runStep(world, { k: "restart" }, bookmarks);
            }
          } finally {
            world.storage.abort();
            await coreOf(world.storage).settled();
          }
        },
      ),
      { numRuns: 80 },
    );
  }, 300_000);
});
