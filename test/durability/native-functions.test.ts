/**
 * The engine runs SQLite's own math functions, as the platform does (`log(100)` is 2), but
 * sessions logged before it left out sql.js's legacy extension functions ran with those
 * (`log(100)` 4.605…, `ceil(0.5)` an INTEGER) and confirmed what they stored. Replay must run each
 * session with the functions it ran with, or a restart after the upgrade would silently change
 * confirmed rows. A session mark says so (`nativeFunctions`); a mark without it (or no mark) is a
 * session with the legacy functions.
 *
 * The older engine is a factory whose every connection is given the legacy set: its live sessions
 * run with it and log marks without the bit, as sql.js initialized with its defaults does.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { createMemoryPersistence, type MemoryPersistence } from "../../src/durability/memory-persistence";
import type { SqlEngineFactory } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { ActorStoreError } from "../../src/errors";
import { ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";

const LEGACY = [Math.log(100), 1, "integer", Number.NEGATIVE_INFINITY];
const NATIVE = [Math.log10(100), 1, "real", null];
const ROW = "log(100), ceil(0.5), typeof(ceil(0.5)), log(0)";

/** Every connection with sql.js's legacy functions: the engine before this change. */
async function legacyFactory(): Promise<SqlEngineFactory> {
  const factory = await loadSqlJsEngine();
  return {
    open(bytes, use) {
      const engine = factory.open(bytes, use);
      engine.setLegacyFunctions(true);
      return engine;
    },
  };
}

async function open(
  persistence: MemoryPersistence,
  clock: FakeClock,
  options: { engineFactory?: SqlEngineFactory; snapshotEveryRecords?: number } = {},
) {
  return ObjectStorage.open({ persistence, clock, snapshotEveryRecords: 10_000, ...options });
}

/** The rows of t: what each session stored, as `[log(100), ceil(0.5), typeof, log(0)]`. */
function rows(storage: ObjectStorage): unknown[][] {
  return storage.sql
    .exec("SELECT a, b, c, d FROM t ORDER BY rowid")
    .raw()
    .toArray()
    .map((r) => [...r]);
}

async function insert(storage: ObjectStorage): Promise<void> {
  storage.sql.exec(`INSERT INTO t SELECT ${ROW}`);
  await storage.sync();
}

async function marks(persistence: MemoryPersistence): Promise<CommitRecord["session"][]> {
  const { lastSeq } = await persistence.load();
  return (await persistence.readRecords(0, lastSeq)).flatMap((r) => (r.session === undefined ? [] : [r.session]));
}

let warn: { mock: { calls: unknown[][] } };
beforeEach(() => {
  warn = vi.spyOn(console, "warn");
});
afterEach(() => {
  // sql.js's deprecation line never reaches the console: not live, not while replaying
  const lines = warn.mock.calls.filter((c) => String(c[0]).includes("legacy function"));
  vi.restoreAllMocks();
  expect(lines).toEqual([]);
});

/** An object whose sessions run with the legacy functions, as an older engine ran them, with table t. */
async function olderEngineObject(persistence: MemoryPersistence, clock: FakeClock): Promise<ObjectStorage> {
  const older = await open(persistence, clock, { engineFactory: await legacyFactory() });
  older.sql.exec("CREATE TABLE t(a, b, c, d)");
  return older;
}

describe("math functions across engine versions", () => {
  test("a session of this engine stores and replays the platform's values, and marks them native", async () => {
    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    let storage = await open(persistence, clock);
    storage.sql.exec("CREATE TABLE t(a, b, c, d)");
    // many rows through math functions: not one line printed
    storage.sql.exec(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) SELECT sum(log(i) + sin(i) + ceil(i / 3.0)) FROM n",
    );
    await insert(storage);
    expect(rows(storage)).toEqual([NATIVE]);
    storage.abort();
    expect((await marks(persistence)).every((m) => m?.nativeFunctions === true)).toBe(true);
    storage = await open(persistence, clock);
    expect(rows(storage)).toEqual([NATIVE]);
    storage.abort();
  });

  test("an older engine's sessions replay with the legacy functions and later ones natively, in one open; the live session is native", async () => {
    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    const older = await olderEngineObject(persistence, clock);
    await insert(older);
    // deleteAll gives a new connection in the same session: it ran with the session's functions too
    await older.deleteAll();
    older.sql.exec("CREATE TABLE t(a, b, c, d)");
    await insert(older);
    await insert(older);
    expect(rows(older)).toEqual([LEGACY, LEGACY]);
    older.abort();
    expect((await marks(persistence)).some((m) => m !== undefined && m.nativeFunctions === undefined)).toBe(true);
    expect((await marks(persistence)).some((m) => m?.nativeFunctions === true)).toBe(false);

    let upgraded = await open(persistence, clock, { snapshotEveryRecords: 3 });
    expect(rows(upgraded)).toEqual([LEGACY, LEGACY]);
    await insert(upgraded);
    expect(rows(upgraded)).toEqual([LEGACY, LEGACY, NATIVE]);
    // legacy, then native sessions replayed in one open; more sessions and snapshots (every 3 records)
    for (let round = 0; round < 3; round++) {
      upgraded.abort();
      upgraded = await open(persistence, clock, { snapshotEveryRecords: 3 });
      expect(rows(upgraded)).toEqual([LEGACY, LEGACY, NATIVE, ...Array<unknown[]>(round).fill(NATIVE)]);
      await insert(upgraded);
    }
    upgraded.abort();
  });

  test("one open replays legacy, native and legacy sessions again, each with its own functions", async () => {
    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    const legacy = await legacyFactory();
    let storage = await open(persistence, clock, { engineFactory: legacy });
    storage.sql.exec("CREATE TABLE t(a, b, c, d)");
    await insert(storage);
    storage.abort();
    storage = await open(persistence, clock);
    await insert(storage);
    storage.abort();
    // the legacy engine cannot replay the native session: refused, never replayed with other functions
    const refused = await open(persistence, clock, { engineFactory: legacy }).then(
      (s) => {
        s.abort();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ActorStoreError);
    expect((refused as ActorStoreError).code).toBe("ERR_BACKEND_UNSUPPORTED");
    expect((refused as ActorStoreError).message).toContain("useOldExtensionFunctions: false");
    // a log written by a legacy session after a native one (an older process on the same data)
    const { lastSeq } = await persistence.load();
    const records = await persistence.readRecords(0, lastSeq);
    const first = records[0] as CommitRecord;
    const third: CommitRecord = {
      ...(records[lastSeq - 1] as CommitRecord),
      seq: lastSeq + 1,
      timeMs: clock.now(),
      session: { start: true, settings: (first.session as NonNullable<CommitRecord["session"]>).settings },
    };
    expect(third.sql.map((w) => w.sql)).toEqual([`INSERT INTO t SELECT ${ROW}`]);
    await persistence.append([third]);
    storage = await open(persistence, clock);
    expect(rows(storage)).toEqual([LEGACY, NATIVE, LEGACY]);
    await insert(storage);
    expect(rows(storage)).toEqual([LEGACY, NATIVE, LEGACY, NATIVE]);
    storage.abort();
  });

  test("a bookmark restore inside the older engine's history keeps its functions; the restored session is native", async () => {
    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    const older = await olderEngineObject(persistence, clock);
    await insert(older);
    await clock.advance(1000);
    await insert(older);
    older.abort();

    const upgraded = await open(persistence, clock);
    await clock.advance(1000);
    await insert(upgraded);
    expect(rows(upgraded)).toEqual([LEGACY, LEGACY, NATIVE]);
    const bookmark = await upgraded.getBookmarkForTime(clock.now() - 1500);
    await upgraded.onNextSessionRestoreBookmark(bookmark);
    upgraded.abort();
    let restored = await open(persistence, clock);
    expect(rows(restored)).toEqual([LEGACY]);
    await insert(restored);
    expect(rows(restored)).toEqual([LEGACY, NATIVE]);
    restored.abort();
    // the restore record replays the legacy part, then the native session after it
    restored = await open(persistence, clock);
    expect(rows(restored)).toEqual([LEGACY, NATIVE]);
    restored.abort();
  });

  test("sql.js's legacy-only functions are no such function to the object, with or without the legacy set", async () => {
    const clock = new FakeClock();
    for (const engineFactory of [undefined, await legacyFactory()]) {
      const storage = await open(createMemoryPersistence(), clock, engineFactory ? { engineFactory } : {});
      storage.sql.exec("CREATE TABLE t(a, b, c, d)");
      storage.sql.exec("INSERT INTO t VALUES (1, 2, 3, 4)");
      for (const call of ["median(a)", "stdev(a)", "padl('x', 3)", "proper('ab')", "square(2)"]) {
        const name = call.slice(0, call.indexOf("("));
        expect(() => storage.sql.exec(`SELECT ${call} FROM t`).toArray(), call).toThrow(`no such function: ${name}`);
      }
      storage.abort();
    }
  });
});
