/**
 * A REAL turned into text has the platform's 15 significant digits (`'0.3'`), but sessions logged
 * before the engine set them ran with sql.js's 17 (`'0.30000000000000004'`) and confirmed what
 * they stored. Replay must run each session's statements with the digits that session ran with,
 * or a restart after an upgrade would silently change confirmed rows. The log's session marks
 * carry the digits; a mark without them (or no mark) is a session of the older engine.
 */
import { describe, expect, test } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { createMemoryPersistence, type MemoryPersistence } from "../../src/durability/memory-persistence";
import { ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";

const NEW = "0.3";
const OLD = "0.30000000000000004";

async function open(persistence: MemoryPersistence, clock: FakeClock, snapshotEveryRecords = 10_000) {
  return ObjectStorage.open({ persistence, clock, snapshotEveryRecords });
}

function rows(storage: ObjectStorage): unknown[] {
  return storage.sql
    .exec("SELECT x FROM t ORDER BY rowid")
    .toArray()
    .map((r) => r.x);
}

/**
 * A copy of `persistence` (its snapshots, all taken before any REAL was stored, and its log) with
 * the log as an engine before the digits were logged would have written it.
 */
async function asOlderEngineLogged(persistence: MemoryPersistence): Promise<MemoryPersistence> {
  const { snapshots, lastSeq } = await persistence.load();
  const older = createMemoryPersistence();
  await older.load();
  for (const s of snapshots) await older.writeSnapshot(s, await persistence.readSnapshot(s.seq));
  const records: CommitRecord[] = (await persistence.readRecords(0, lastSeq)).map((r) => {
    if (r.session === undefined) return r;
    expect(r.session.realTextDigits).toBe(15);
    const { realTextDigits: _, ...mark } = r.session;
    return { ...r, session: mark };
  });
  expect(records.filter((r) => r.session !== undefined).length).toBeGreaterThan(0);
  await older.append(records);
  return older;
}

describe("REAL as text across engine versions", () => {
  test("a session of this engine writes and replays 15 digits", async () => {
    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    let storage = await open(persistence, clock);
    storage.sql.exec("CREATE TABLE t(x TEXT)");
    storage.sql.exec("INSERT INTO t VALUES (CAST(0.1 + 0.2 AS TEXT)), (0.1 + 0.2)");
    await storage.sync();
    expect(rows(storage)).toEqual([NEW, NEW]);
    storage.abort();
    storage = await open(persistence, clock);
    expect(rows(storage)).toEqual([NEW, NEW]);
    storage.abort();
  });

  test("a log of the older engine replays with 17 digits; the next session writes 15; both survive restarts", async () => {
    const clock = new FakeClock();
    const first = createMemoryPersistence();
    const storage = await open(first, clock);
    storage.sql.exec("CREATE TABLE t(x TEXT)");
    storage.sql.exec("INSERT INTO t VALUES (CAST(0.1 + 0.2 AS TEXT))");
    await storage.sync();
    // deleteAll gives a new connection in the same session: it ran with the session's digits too
    await storage.deleteAll();
    storage.sql.exec("CREATE TABLE t(x TEXT)");
    storage.sql.exec("INSERT INTO t VALUES (0.1 + 0.2), (CAST(0.1 + 0.2 AS TEXT) || '')");
    await storage.sync();
    storage.abort();

    const older = await asOlderEngineLogged(first);
    let upgraded = await open(older, clock, 3);
    expect(rows(upgraded)).toEqual([OLD, OLD]);
    upgraded.sql.exec("INSERT INTO t VALUES (0.1 + 0.2)");
    await upgraded.sync();
    expect(rows(upgraded)).toEqual([OLD, OLD, NEW]);
    // more sessions and snapshots in between (every 3 records): each replay keeps each session's digits
    for (let round = 0; round < 3; round++) {
      upgraded.abort();
      upgraded = await open(older, clock, 3);
      expect(rows(upgraded)).toEqual([OLD, OLD, NEW, ...Array<string>(round).fill(NEW)]);
      upgraded.sql.exec("INSERT INTO t VALUES (CAST(0.1 + 0.2 AS TEXT))");
      await upgraded.sync();
    }
    upgraded.abort();
  });

  test("a bookmark restore inside the older engine's history keeps its digits", async () => {
    const clock = new FakeClock();
    const first = createMemoryPersistence();
    const storage = await open(first, clock);
    storage.sql.exec("CREATE TABLE t(x TEXT)");
    storage.sql.exec("INSERT INTO t VALUES (0.1 + 0.2)");
    await storage.sync();
    await clock.advance(1000);
    storage.sql.exec("INSERT INTO t VALUES (0.2 + 0.4)");
    await storage.sync();
    storage.abort();

    const older = await asOlderEngineLogged(first);
    const upgraded = await open(older, clock);
    expect(rows(upgraded)).toEqual([OLD, "0.60000000000000009"]);
    const bookmark = await upgraded.getBookmarkForTime(clock.now() - 500);
    await upgraded.onNextSessionRestoreBookmark(bookmark);
    upgraded.abort();
    const restored = await open(older, clock);
    expect(rows(restored)).toEqual([OLD]);
    restored.abort();
  });
});
