/**
 * The point-in-time recovery property, shared by pitr.property.test.ts and the (uncommitted)
 * pending-bugs file: random mixed key-value + SQL workloads (with SQL whose results are not
 * deterministic), bookmarks taken at random points with a full logical dump at each, then restores
 * to those bookmarks in random order — undoing restores too — must reproduce each dump exactly.
 * Before any restore, reopening (pure replay, or snapshot + replay) must give the live database's
 * dump: replay of `random()`, `randomblob()`, `'now'` and rowid choice is exact.
 */
import fc from "fast-check";
import { expect } from "vitest";
import { parseBookmark } from "../../src/durability/bookmarks";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import type { PersistenceAdapter } from "../../src/durability/persistence";
import type { SqlEngineFactory } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { ActorStoreError } from "../../src/errors";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";
import { dumpStorage, type StorageDump } from "./dump";

type Binding = number | string | null | Uint8Array;

interface SqlOp {
  sql: string;
  bindings: Binding[];
}

type KvOp =
  | { k: "put"; key: string; value: unknown }
  | { k: "delete"; key: string }
  | { k: "sql"; op: SqlOp }
  | { k: "setAlarm"; inMs: number }
  | { k: "deleteAlarm" };

type Step =
  | KvOp
  | { k: "deleteAll" }
  | { k: "txn"; ops: KvOp[]; rollback: boolean }
  | { k: "txnSync"; ops: KvOp[]; rollback: boolean }
  | { k: "advance"; ms: number }
  | { k: "sync" }
  | { k: "bookmark" }
  | { k: "snapshot" };

// The schema the workload plays with: AUTOINCREMENT, WITHOUT ROWID, and a plain rowid table.
const CREATE = [
  "CREATE TABLE IF NOT EXISTS auto(id INTEGER PRIMARY KEY AUTOINCREMENT, v, r INTEGER, ts TEXT DEFAULT CURRENT_TIMESTAMP)",
  "CREATE TABLE IF NOT EXISTS norowid(k TEXT PRIMARY KEY, v BLOB, n INTEGER) WITHOUT ROWID",
  "CREATE TABLE IF NOT EXISTS plain(x, y)",
  "CREATE INDEX IF NOT EXISTS plain_y ON plain(y)",
];

const binding: fc.Arbitrary<Binding> = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 8 }),
  fc.constant(null),
  fc.uint8Array({ maxLength: 6 }),
);
const small = fc.integer({ min: 0, max: 9 });
const key = fc.constantFrom("a", "b", "c", "d", "e", "long/key/ü", "");

const sqlOps: Array<fc.Arbitrary<SqlOp>> = [
  fc.constantFrom(...CREATE).map((sql) => ({ sql, bindings: [] })),
  fc.constantFrom(...CREATE).map((sql) => ({ sql, bindings: [] })),
  binding.map((v) => ({ sql: "INSERT INTO auto(v, r) VALUES (?, random())", bindings: [v] })),
  binding.map((v) => ({
    sql: "INSERT INTO auto(v, r, ts) VALUES (?, abs(random()) % 7, datetime('now'))",
    bindings: [v],
  })),
  fc
    .tuple(fc.string({ maxLength: 3 }), small)
    .map(([k, n]) => ({ sql: "INSERT OR REPLACE INTO norowid VALUES (?, randomblob(?), random())", bindings: [k, n] })),
  binding.map((v) => ({ sql: "INSERT INTO plain VALUES (CURRENT_TIMESTAMP, ?)", bindings: [v] })),
  binding.map((v) => ({ sql: "INSERT INTO plain VALUES (strftime('%Y-%m-%d %H:%M:%f', 'now'), ?)", bindings: [v] })),
  small.map((n) => ({ sql: "UPDATE auto SET r = random(), v = randomblob(4) WHERE id % 3 = ?", bindings: [n % 3] })),
  fc.constant({
    sql: "UPDATE plain SET y = julianday('now') WHERE rowid IN (SELECT rowid FROM plain LIMIT 2)",
    bindings: [],
  }),
  small.map((n) => ({ sql: "DELETE FROM auto WHERE id = ?", bindings: [n] })),
  fc.constant({
    sql: "DELETE FROM plain WHERE rowid IN (SELECT rowid FROM plain ORDER BY random() LIMIT 1)",
    bindings: [],
  }),
  fc.string({ maxLength: 3 }).map((k) => ({ sql: "DELETE FROM norowid WHERE k >= ?", bindings: [k] })),
  fc.constant({ sql: "INSERT INTO auto(v, r) SELECT y, random() FROM plain LIMIT 3", bindings: [] }),
  fc.constant({ sql: "DROP TABLE IF EXISTS plain", bindings: [] }),
  // Schema changes: columns added and dropped, tables renamed, triggers, views, indexes, full text.
  fc
    .constantFrom(
      "ALTER TABLE auto ADD COLUMN extra DEFAULT 7",
      "ALTER TABLE auto DROP COLUMN extra",
      "ALTER TABLE plain RENAME TO plain_renamed",
      "ALTER TABLE plain_renamed RENAME TO plain",
      "ALTER TABLE plain RENAME COLUMN y TO why",
      "CREATE TRIGGER IF NOT EXISTS auto_log AFTER INSERT ON auto BEGIN INSERT INTO plain(x, y) VALUES ('trigger', new.id); END",
      "DROP TRIGGER IF EXISTS auto_log",
      "CREATE VIEW IF NOT EXISTS auto_view AS SELECT id, v FROM auto",
      "DROP VIEW IF EXISTS auto_view",
      "DROP INDEX IF EXISTS plain_y",
      "CREATE VIRTUAL TABLE IF NOT EXISTS ft USING fts5(body)",
      "INSERT INTO ft(body) SELECT quote(v) FROM auto LIMIT 2",
      "DROP TABLE IF EXISTS ft",
    )
    .map((sql) => ({ sql, bindings: [] })),
  // Fails (constraint) after it has changed nothing: a failing statement is part of history too.
  fc.constant({ sql: "INSERT INTO norowid VALUES (NULL, NULL, NULL)", bindings: [] }),
];

/**
 * Rows of 20–300 KB (random bytes, replayed exactly): the database spans many of the engine's
 * 256 KiB chunks, so an incremental snapshot holds some chunks and not others.
 */
const BIG_ROWS: Array<fc.Arbitrary<SqlOp>> = [
  fc.integer({ min: 20_000, max: 300_000 }).map((n) => ({
    sql: "INSERT INTO plain VALUES (randomblob(?), 'big')",
    bindings: [n],
  })),
  fc.integer({ min: 1, max: 50_000 }).map((n) => ({
    sql: "UPDATE plain SET x = randomblob(?) WHERE rowid = (SELECT min(rowid) FROM plain WHERE y = 'big')",
    bindings: [n],
  })),
];

/**
 * Takes the largest rowid, after which SQLite picks new rowids at random (`sqlite3_randomness`, not
 * the `random()` function): part of the workload only with `rowidOverflow` (a known replay bug,
 * see pending-bugs.test.ts).
 */
const MAX_ROWID: SqlOp = {
  sql: "INSERT OR IGNORE INTO plain(rowid, x, y) VALUES (9223372036854775807, 'max', 0)",
  bindings: [],
};

const value: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 10 }),
  fc.uint8Array({ maxLength: 8 }),
  fc.record({ n: fc.integer(), s: fc.string({ maxLength: 4 }) }),
  fc.constant(null),
);

function workloadArbitraries(sqlOp: fc.Arbitrary<SqlOp>, snapshotSteps: boolean) {
  const kvOp: fc.Arbitrary<KvOp> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ k: fc.constant("put" as const), key, value }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("delete" as const), key }) },
    { weight: 4, arbitrary: fc.record({ k: fc.constant("sql" as const), op: sqlOp }) },
    {
      weight: 1,
      arbitrary: fc.record({ k: fc.constant("setAlarm" as const), inMs: fc.integer({ min: -5, max: 1e6 }) }),
    },
    { weight: 1, arbitrary: fc.constant({ k: "deleteAlarm" as const }) },
  );

  const step: fc.Arbitrary<Step> = fc.oneof(
    { weight: 12, arbitrary: kvOp },
    { weight: 1, arbitrary: fc.constant({ k: "deleteAll" as const }) },
    {
      weight: 2,
      arbitrary: fc.record({
        k: fc.constant("txn" as const),
        ops: fc.array(kvOp, { maxLength: 4 }),
        rollback: fc.boolean(),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        k: fc.constant("txnSync" as const),
        ops: fc.array(kvOp, { maxLength: 4 }),
        rollback: fc.boolean(),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({ k: fc.constant("advance" as const), ms: fc.integer({ min: 1, max: 3_600_000 }) }),
    },
    { weight: 3, arbitrary: fc.constant({ k: "sync" as const }) },
    { weight: 3, arbitrary: fc.constant({ k: "bookmark" as const }) },
    ...(snapshotSteps ? [{ weight: 3, arbitrary: fc.constant({ k: "snapshot" as const }) }] : []),
  );
  return fc.array(step, { minLength: 1, maxLength: 40 });
}

/** One restore to make: which known bookmark (index modulo the list), then undo it or not. */
const restorePlan = fc.array(fc.record({ pick: fc.nat(), undo: fc.boolean(), writeAfter: fc.boolean() }), {
  minLength: 1,
  maxLength: 6,
});

let engineFactory: SqlEngineFactory | undefined;

/** Runs a SQL write the way application code would; SQL errors are part of the workload. */
function runSql(storage: ObjectStorage, op: SqlOp): void {
  try {
    storage.sql.exec(op.sql, ...op.bindings).toArray();
  } catch {
    // no such table, constraint failures: the statement has no effect, live and in replay
  }
}

function runSyncOp(storage: ObjectStorage, clock: FakeClock, op: KvOp): void {
  switch (op.k) {
    case "put":
      storage.kv.put(op.key, op.value);
      return;
    case "delete":
      storage.kv.delete(op.key);
      return;
    case "sql":
      runSql(storage, op.op);
      return;
    case "setAlarm":
      void storage.setAlarm(clock.now() + op.inMs);
      return;
    case "deleteAlarm":
      void storage.deleteAlarm();
      return;
  }
}

async function runAsyncOp(storage: ObjectStorage, clock: FakeClock, op: KvOp): Promise<void> {
  switch (op.k) {
    case "put":
      await storage.put(op.key, op.value);
      return;
    case "delete":
      await storage.delete(op.key);
      return;
    case "sql":
      runSql(storage, op.op);
      return;
    case "setAlarm":
      await storage.setAlarm(clock.now() + op.inMs);
      return;
    case "deleteAlarm":
      await storage.deleteAlarm();
      return;
  }
}

interface World {
  persistence: PersistenceAdapter;
  clock: FakeClock;
  snapshotEveryRecords: number;
  /** A small log cap takes snapshots every few batches, and thinning deletes most of them again. */
  snapshotLogCapBytes: number | undefined;
  storage: ObjectStorage;
}

async function open(world: Omit<World, "storage">): Promise<ObjectStorage> {
  engineFactory ??= await loadSqlJsEngine();
  return ObjectStorage.open({
    persistence: world.persistence,
    clock: world.clock,
    engineFactory,
    snapshotEveryRecords: world.snapshotEveryRecords,
    ...(world.snapshotLogCapBytes === undefined ? {} : { snapshotLogCapBytes: world.snapshotLogCapBytes }),
  });
}

/** Ends the session the way abort() does, and starts the next one over the same persistence. */
async function restart(world: World): Promise<void> {
  world.storage.abort();
  await coreOf(world.storage).settled();
  world.storage = await open(world);
}

async function runStep(world: World, s: Step, bookmarks: Map<string, StorageDump>): Promise<void> {
  const { storage, clock } = world;
  switch (s.k) {
    case "deleteAll":
      await storage.deleteAll();
      return;
    case "txn":
      await storage
        .transaction(async () => {
          for (const op of s.ops) await runAsyncOp(storage, clock, op);
          if (s.rollback) throw new Error("roll back");
        })
        .catch((e: unknown) => {
          if (!(e instanceof Error) || e.message !== "roll back") throw e;
        });
      return;
    case "txnSync":
      try {
        storage.transactionSync(() => {
          for (const op of s.ops) runSyncOp(storage, clock, op);
          if (s.rollback) throw new Error("roll back");
        });
      } catch (e) {
        if (!(e instanceof Error) || e.message !== "roll back") throw e;
      }
      return;
    case "advance":
      await clock.advance(s.ms);
      return;
    case "sync":
      await storage.sync();
      return;
    case "snapshot":
      // A snapshot of the committed state now, between any two steps (after a commit).
      await storage.sync();
      // A batch that only opened a transaction ends on a timer: end it now (as
      // pitr-connection.property.test.ts does), a snapshot needs no open one.
      coreOf(storage).commitNow();
      await coreOf(storage).snapshot();
      return;
    case "bookmark": {
      const bookmark = await storage.getCurrentBookmark();
      bookmarks.set(bookmark, await dumpStorage(storage));
      return;
    }
    default:
      await runAsyncOp(storage, clock, s);
  }
}

/** Options of {@link pitrProperty}. */
export interface PitrPropertyOptions {
  /**
   * `false` tolerates one known bug (reported, see pending-bugs.test.ts): after a session restart
   * the object's timeline starts at its oldest snapshot, so a bookmark older than that snapshot is
   * refused with ERR_BOOKMARK although its history is still kept. A refusal is tolerated only for
   * exactly those bookmarks; every restore that is accepted must still be exact.
   */
  strict: boolean;
  /** Also take the largest rowid (see {@link MAX_ROWID}). */
  rowidOverflow: boolean;
  /** The persistence of each run (default: a new in-memory one). */
  persistence?: () => Promise<PersistenceAdapter>;
  /** Also write rows of 20–300 KB (see {@link BIG_ROWS}). */
  bigRows?: boolean;
  /** Also take snapshots at random points between steps. */
  snapshotSteps?: boolean;
}

/** The property (see the module comment). */
export function pitrProperty(options: PitrPropertyOptions) {
  /** Requests a restore; `null` when refused by the tolerated known bug. */
  async function requestRestore(storage: ObjectStorage, bookmark: string): Promise<string | null> {
    try {
      return await storage.onNextSessionRestoreBookmark(bookmark);
    } catch (e) {
      const tolerated =
        !options.strict &&
        e instanceof ActorStoreError &&
        e.code === "ERR_BOOKMARK" &&
        parseBookmark(bookmark).seq < coreOf(storage).timeline.firstSeq;
      if (tolerated) return null;
      throw e;
    }
  }

  const ops = options.bigRows === true ? [...sqlOps, ...BIG_ROWS] : sqlOps;
  const sqlOp = options.rowidOverflow ? fc.oneof(fc.oneof(...ops), fc.constant(MAX_ROWID)) : fc.oneof(...ops);
  return fc.asyncProperty(
    workloadArbitraries(sqlOp, options.snapshotSteps === true),
    restorePlan,
    fc.constantFrom(1, 3, 1_000_000_000),
    fc.constantFrom(undefined, 256),
    async (steps, plan, snapshotEveryRecords, snapshotLogCapBytes) => {
      const clock = new FakeClock();
      const persistence = options.persistence === undefined ? createMemoryPersistence() : await options.persistence();
      const base = { persistence, clock, snapshotEveryRecords, snapshotLogCapBytes };
      const world: World = { ...base, storage: await open(base) };
      try {
        const bookmarks = new Map<string, StorageDump>();
        bookmarks.set(await world.storage.getCurrentBookmark(), await dumpStorage(world.storage));
        for (const s of steps) await runStep(world, s, bookmarks);
        await runStep(world, { k: "bookmark" }, bookmarks);

        // Replay: a new session (from scratch, or from snapshots plus the log) equals the live state.
        const live = await dumpStorage(world.storage);
        await restart(world);
        expect(await dumpStorage(world.storage)).toEqual(live);

        const entries = [...bookmarks];
        for (const { pick, undo, writeAfter } of plan) {
          const [bookmark, expected] = entries[pick % entries.length] as [string, StorageDump];
          const before = await dumpStorage(world.storage);
          const undoBookmark = await requestRestore(world.storage, bookmark);
          if (undoBookmark === null) continue;
          await restart(world);
          expect(await dumpStorage(world.storage)).toEqual(expected);
          entries.push([undoBookmark, before]);
          if (undo && (await requestRestore(world.storage, undoBookmark)) !== null) {
            await restart(world);
            expect(await dumpStorage(world.storage)).toEqual(before);
          }
          if (writeAfter) {
            // A new branch of history after the restore: its bookmark must be restorable too.
            await world.storage.put("after", pick);
            runSql(world.storage, { sql: CREATE[0] as string, bindings: [] });
            runSql(world.storage, { sql: "INSERT INTO auto(v, r) VALUES (?, random())", bindings: [pick] });
            await clock.advance(1000);
            entries.push([await world.storage.getCurrentBookmark(), await dumpStorage(world.storage)]);
          }
        }
      } finally {
        world.storage.abort();
        await coreOf(world.storage).settled();
        // abort() leaves the adapter open, as a crash would: a file adapter's descriptors are
        // released here, not by the garbage collector.
        await persistence.close();
      }
    },
  );
}
