/**
 * The in-memory persistence bounds the history it keeps by bytes (`maxHistoryBytes`): memory stays
 * bounded however many writes an object makes (counted in bytes held, never timed), the newest state
 * stays exactly recoverable, recent bookmarks still restore exactly, and a bookmark or time before
 * what is kept fails with an error that names the option and where to keep longer history.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseBookmark } from "../../src/durability/bookmarks";
import { DelegatingPersistence } from "../../src/durability/delegating-persistence";
import {
  createMemoryPersistence,
  DEFAULT_MAX_HISTORY_BYTES,
  type MemoryPersistence,
  recordHeldBytes,
} from "../../src/durability/memory-persistence";
import { encodedRecordSize } from "../../src/durability/record-codec";
import type { SqlEngineFactory } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { ActorStoreError } from "../../src/errors";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock, nextTurn } from "../../src/util/clock";
import { commitRecord } from "./arbitraries";
import { dumpStorage } from "./dump";

let factory: SqlEngineFactory | undefined;

async function open(
  persistence: MemoryPersistence | DelegatingPersistence,
  clock: FakeClock,
  snapshotEveryRecords = 50,
) {
  factory ??= await loadSqlJsEngine();
  return ObjectStorage.open({ persistence, clock, engineFactory: factory, snapshotEveryRecords });
}

async function restart(
  storage: ObjectStorage,
  persistence: MemoryPersistence | DelegatingPersistence,
  clock: FakeClock,
) {
  storage.abort();
  await coreOf(storage).settled();
  return open(persistence, clock);
}

/** The rejection of `p`. */
async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Error) return e;
  }
  throw new Error("expected a rejection");
}

function expectHistoryError(error: Error): void {
  expect(error).toBeInstanceOf(ActorStoreError);
  expect((error as ActorStoreError).code).toBe("ERR_BOOKMARK");
  expect(error.message).toContain("maxHistoryBytes");
  expect(error.message).toContain("directory");
  expect(error.message).toContain("bucket");
}

/** Writes `n` batches (a key-value put and a SQL insert each) and returns the largest bytes held seen. */
async function churn(storage: ObjectStorage, persistence: MemoryPersistence, clock: FakeClock, n: number) {
  let most = 0;
  storage.sql.exec("CREATE TABLE IF NOT EXISTS t(k, v)");
  for (let i = 0; i < n; i++) {
    storage.kv.put(`k${i % 20}`, "v".repeat(100) + i);
    storage.sql.exec("INSERT INTO t VALUES (?, ?)", i, "x".repeat(50));
    if (i % 10 === 9) storage.sql.exec("DELETE FROM t WHERE k < ?", i - 40);
    await storage.sync();
    await clock.advance(10);
    if (i % 25 === 0) await nextTurn(); // let pruning after snapshots run
    most = Math.max(most, persistence.heldBytes());
  }
  await coreOf(storage).settled();
  return most;
}

describe("in-memory persistence: history bounded by bytes", () => {
  test("bytes held stay under maxHistoryBytes however many writes are made", async () => {
    const clock = new FakeClock();
    const bound = 256 * 1024;
    const persistence = createMemoryPersistence({ maxHistoryBytes: bound });
    const storage = await open(persistence, clock);
    const most = await churn(storage, persistence, clock, 3000);
    // What the newest state alone needs is kept whatever the bound: the newest snapshot plus at most
    // one snapshot interval of records. Beyond that, the bound holds at every point of the run.
    const stats = persistence.stats();
    const newestImage = stats.snapshotBytes / stats.snapshots;
    expect(most).toBeLessThanOrEqual(bound + newestImage + 50 * 600);
    expect(persistence.heldBytes()).toBeLessThanOrEqual(bound);
    // An independent count: the records and images actually held, in file-format bytes.
    expect(stats.logBytes + stats.snapshotBytes).toBeLessThanOrEqual(bound);
    expect(stats.records).toBeLessThan(3000);
    // The same run without a bound keeps far more: the bound is what made the difference.
    const unbounded = createMemoryPersistence({ maxHistoryBytes: Number.POSITIVE_INFINITY });
    const other = await open(unbounded, new FakeClock());
    await churn(other, unbounded, new FakeClock(), 3000);
    expect(unbounded.heldBytes()).toBeGreaterThan(4 * bound);
    expect(unbounded.stats().records).toBeGreaterThanOrEqual(3000);
    other.abort();
    // The newest state is still exactly recoverable.
    const live = await dumpStorage(storage);
    const again = await restart(storage, persistence, clock);
    expect(await dumpStorage(again)).toEqual(live);
    again.abort();
  }, 120_000);

  test("held bytes count every record at least at its encoded size", () => {
    for (const record of fc.sample(commitRecord(), 1000))
      expect(recordHeldBytes(record)).toBeGreaterThanOrEqual(encodedRecordSize(record));
  });

  test("a bookmark inside the bound restores exactly; one before it fails naming the option", async () => {
    const clock = new FakeClock();
    const persistence = createMemoryPersistence({ maxHistoryBytes: 128 * 1024 });
    let storage = await open(persistence, clock);
    const first = await storage.getCurrentBookmark();
    const firstTime = clock.now();
    await churn(storage, persistence, clock, 1500);
    const kept = persistence.keptHistory();
    expect(kept).toBeDefined();
    expect(kept?.fromSeq).toBeGreaterThan(parseBookmark(first).seq);

    // Too old for the bound (though well inside the 30-day retention window).
    expectHistoryError(await rejection(storage.onNextSessionRestoreBookmark(first)));
    expectHistoryError(await rejection(storage.getBookmarkForTime(firstTime)));
    // A refused request changes nothing.
    const live = await dumpStorage(storage);
    storage = await restart(storage, persistence, clock);
    expect(await dumpStorage(storage)).toEqual(live);

    // A recent bookmark restores exactly, and the restore can be undone.
    const recent = await storage.getCurrentBookmark();
    const atRecent = await dumpStorage(storage);
    await storage.put("after", 1);
    storage.sql.exec("DELETE FROM t");
    await storage.sync();
    const later = await dumpStorage(storage);
    const undo = await storage.onNextSessionRestoreBookmark(recent);
    storage = await restart(storage, persistence, clock);
    expect(await dumpStorage(storage)).toEqual(atRecent);
    await storage.onNextSessionRestoreBookmark(undo);
    storage = await restart(storage, persistence, clock);
    expect(await dumpStorage(storage)).toEqual(later);
    storage.abort();
  }, 120_000);

  test("a restore whose history the bound drops before the next session is cancelled, not misapplied", async () => {
    const clock = new FakeClock();
    const persistence = createMemoryPersistence({ maxHistoryBytes: 64 * 1024 });
    let storage = await open(persistence, clock);
    await churn(storage, persistence, clock, 100);
    const bookmark = await storage.getCurrentBookmark();
    await storage.onNextSessionRestoreBookmark(bookmark);
    // The same session writes on; the bound drops the bookmark's history.
    await churn(storage, persistence, clock, 800);
    expect(persistence.keptHistory()?.fromSeq).toBeGreaterThan(parseBookmark(bookmark).seq);
    const live = await dumpStorage(storage);
    storage.abort();
    await coreOf(storage).settled();
    const error = await rejection(open(persistence, clock));
    expectHistoryError(error);
    expect(error.message).toContain("could not be applied and was cancelled");
    storage = await open(persistence, clock);
    expect(await dumpStorage(storage)).toEqual(live);
    storage.abort();
  }, 120_000);

  test("a wrapped in-memory adapter reports the bound the same way", async () => {
    const clock = new FakeClock();
    const inner = createMemoryPersistence({ maxHistoryBytes: 64 * 1024 });
    const persistence = new DelegatingPersistence(inner);
    const storage = await open(persistence, clock);
    const first = await storage.getCurrentBookmark();
    await churn(storage, inner, clock, 800);
    expectHistoryError(await rejection(storage.onNextSessionRestoreBookmark(first)));
    storage.abort();
  }, 120_000);

  test("maxHistoryBytes: a sensible default, and bad values are refused", () => {
    expect(createMemoryPersistence().maxHistoryBytes).toBe(DEFAULT_MAX_HISTORY_BYTES);
    expect(DEFAULT_MAX_HISTORY_BYTES).toBe(64 * 1024 * 1024);
    for (const bad of [0, -1, Number.NaN, "1" as unknown as number]) {
      expect(() => createMemoryPersistence({ maxHistoryBytes: bad })).toThrow(
        /option "maxHistoryBytes" must be a number ≥ 1 \(bytes\) or Infinity/,
      );
    }
    expect(createMemoryPersistence({ maxHistoryBytes: Number.POSITIVE_INFINITY }).keptHistory()).toBeUndefined();
  });
});
