/**
 * The point-in-time recovery API of ObjectStorage: getCurrentBookmark, getBookmarkForTime,
 * onNextSessionRestoreBookmark, retention pruning, and the "kv" backend's refusal. Time comes from a
 * FakeClock; nothing here waits on real time.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, test } from "vitest";
import { parseBookmark } from "../../src/durability/bookmarks";
import { DelegatingPersistence } from "../../src/durability/delegating-persistence";
import { FaultyPersistence } from "../../src/durability/faulty-persistence";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { createMemoryPersistence, type MemoryPersistence } from "../../src/durability/memory-persistence";
import { ActorStoreError } from "../../src/errors";
import { coreOf, ObjectStorage, type ObjectStorageOptions } from "../../src/storage/object-storage";
import { FakeClock, nextTurn } from "../../src/util/clock";

const SHAPE = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "actorstore-bookmarks-"));
  dirs.push(dir);
  return dir;
}

/** The rejection of `p` (fails the test if it resolves). */
async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Error) return e;
    throw new Error(`rejected with a non-Error: ${String(e)}`);
  }
  throw new Error("expected a rejection, but the promise resolved");
}

async function expectBookmarkError(p: Promise<unknown>, message: RegExp): Promise<void> {
  const error = await rejection(p);
  expect(error).toBeInstanceOf(ActorStoreError);
  expect((error as ActorStoreError).code).toBe("ERR_BOOKMARK");
  expect(error.message).toMatch(message);
}

/** Ends the session as abort() does and opens the next one over the same persistence. */
async function restart(storage: ObjectStorage, options: ObjectStorageOptions): Promise<ObjectStorage> {
  storage.abort();
  await coreOf(storage).settled();
  return ObjectStorage.open(options);
}

/** Lets background work (a prune started after a snapshot) finish. */
async function settle(storage: ObjectStorage): Promise<void> {
  await coreOf(storage).settled();
  for (let i = 0; i < 5; i++) await nextTurn();
}

const seqOf = (bookmark: string): number => parseBookmark(bookmark).seq;

describe("getCurrentBookmark", () => {
  test("getCurrentBookmark: platform shape, lowercase hex, fixed width", async () => {
    const clock = new FakeClock();
    const storage = await ObjectStorage.open({ clock });
    const bookmarks = [await storage.getCurrentBookmark()];
    for (let i = 0; i < 20; i++) {
      await storage.put(`k${i}`, "x".repeat(i));
      await clock.advance(12_345_678);
      bookmarks.push(await storage.getCurrentBookmark());
    }
    for (const b of bookmarks) {
      expect(b).toMatch(SHAPE);
      expect(b).toHaveLength(8 + 1 + 8 + 1 + 8 + 1 + 32);
    }
    // A new object's first bookmark names its empty database, created at open.
    expect(parseBookmark(bookmarks[0] as string)).toEqual({
      seq: 0,
      timeMs: new FakeClock().now(),
      epoch: 0,
      beforeNextRestore: false,
    });
    expect(parseBookmark(bookmarks[1] as string).timeMs).toBe(new FakeClock().now());
  });

  test("getCurrentBookmark: resolves only once the writes issued before it are durable", async () => {
    const faulty = new FaultyPersistence(createMemoryPersistence());
    const storage = await ObjectStorage.open({ persistence: faulty, clock: new FakeClock() });
    const release = faulty.holdAppends();
    void storage.put("a", 1);
    storage.sql.exec("CREATE TABLE t(x)");
    let resolved: string | undefined;
    const pending = storage.getCurrentBookmark().then((b) => {
      resolved = b;
      return b;
    });
    for (let i = 0; i < 5; i++) await nextTurn();
    expect(faulty.appendCalls).toBe(1); // the batch reached the adapter …
    expect(resolved).toBeUndefined(); // … but is not durable yet
    release();
    expect(seqOf(await pending)).toBe(1);
  });

  test("getCurrentBookmark: adds no write", async () => {
    const faulty = new FaultyPersistence(createMemoryPersistence());
    const storage = await ObjectStorage.open({ persistence: faulty, clock: new FakeClock() });
    await storage.put("a", 1);
    const first = await storage.getCurrentBookmark();
    const calls = faulty.appendCalls;
    const again = await Promise.all([storage.getCurrentBookmark(), storage.getCurrentBookmark()]);
    await storage.sync();
    expect(again).toEqual([first, first]);
    expect(faulty.appendCalls).toBe(calls);
    expect(coreOf(storage).lastSeq).toBe(1);
  });

  test("getCurrentBookmark: string order is commit order, across hex digit boundaries", async () => {
    const clock = new FakeClock();
    const storage = await ObjectStorage.open({ clock, snapshotEveryRecords: 50 });
    const taken: string[] = [];
    for (let i = 0; i < 260; i++) {
      await storage.put("n", i);
      if (i % 3 === 0) storage.sql.exec("SELECT 1");
      if (i % 7 === 0) await clock.advance(999);
      taken.push(await storage.getCurrentBookmark());
    }
    expect(taken.map(seqOf)).toEqual(taken.map((_, i) => i + 1));
    expect([...taken].reverse().sort()).toEqual(taken);
    for (let i = 1; i < taken.length; i++) expect((taken[i - 1] as string) < (taken[i] as string)).toBe(true);
  });
});

describe("getBookmarkForTime", () => {
  /** Commits at t0 + 1 s, + 2 s, + 3 s (seqs 1, 2, 3), then the clock stands at t0 + 10 s. */
  async function threeCommits(options: ObjectStorageOptions = {}) {
    const clock = new FakeClock();
    const t0 = clock.now();
    const storage = await ObjectStorage.open({ clock, ...options });
    for (let i = 1; i <= 3; i++) {
      await clock.advance(1000);
      await storage.put("n", i);
      await storage.sync();
    }
    await clock.advance(7000);
    return { clock, t0, storage };
  }

  test("getBookmarkForTime: names the last commit at or before the time", async () => {
    const { clock, t0, storage } = await threeCommits();
    expect(seqOf(await storage.getBookmarkForTime(t0))).toBe(0);
    expect(seqOf(await storage.getBookmarkForTime(t0 + 999))).toBe(0);
    expect(seqOf(await storage.getBookmarkForTime(t0 + 1000))).toBe(1);
    expect(seqOf(await storage.getBookmarkForTime(t0 + 1500))).toBe(1);
    expect(seqOf(await storage.getBookmarkForTime(new Date(t0 + 2000)))).toBe(2);
    expect(seqOf(await storage.getBookmarkForTime(t0 + 2999))).toBe(2);
    expect(seqOf(await storage.getBookmarkForTime(t0 + 3000))).toBe(3);
    // Exactly now is inside the window.
    expect(await storage.getBookmarkForTime(clock.now())).toBe(await storage.getCurrentBookmark());
    expect(parseBookmark(await storage.getBookmarkForTime(t0 + 2500)).timeMs).toBe(t0 + 2000);
  });

  test("getBookmarkForTime: waits for writes issued before it", async () => {
    const { clock, storage } = await threeCommits();
    void storage.put("n", 4);
    expect(seqOf(await storage.getBookmarkForTime(clock.now()))).toBe(4);
  });

  test("getBookmarkForTime: the default window is 30 days, both edges inside", async () => {
    const { clock, t0, storage } = await threeCommits();
    await clock.advance(30 * DAY_MS - 10_000 + 1000); // now = t0 + 1 s + 30 days
    expect(seqOf(await storage.getBookmarkForTime(clock.now() - 30 * DAY_MS))).toBe(1);
    expect(seqOf(await storage.getBookmarkForTime(t0 + 1000))).toBe(1);
    await expectBookmarkError(
      storage.getBookmarkForTime(clock.now() - 30 * DAY_MS - 1),
      /older than the retention window of 30 days/,
    );
    await expectBookmarkError(storage.getBookmarkForTime(new Date(t0)), /older than the retention window/);
  });

  test("getBookmarkForTime: a configured window", async () => {
    const { clock, storage } = await threeCommits({ retentionMs: HOUR_MS });
    await clock.advance(HOUR_MS - 9000); // now = t0 + 1 h + 1 s
    expect(seqOf(await storage.getBookmarkForTime(clock.now() - HOUR_MS))).toBe(1);
    await expectBookmarkError(
      storage.getBookmarkForTime(clock.now() - HOUR_MS - 1),
      /older than the retention window of 3600000 ms/,
    );
  });

  test("getBookmarkForTime: the future is refused", async () => {
    const { clock, storage } = await threeCommits();
    await expectBookmarkError(storage.getBookmarkForTime(clock.now() + 1), /in the future/);
    await expectBookmarkError(storage.getBookmarkForTime(new Date(clock.now() + DAY_MS)), /in the future/);
  });

  test("getBookmarkForTime: an invalid date rejects like the platform", async () => {
    const { storage } = await threeCommits();
    const message = "The value cannot be converted because it is not a valid Date.";
    for (const bad of [new Date(Number.NaN), Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = await rejection(storage.getBookmarkForTime(bad));
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toBe(message);
    }
    const fromString = await rejection(storage.getBookmarkForTime("yesterday" as unknown as number));
    expect(fromString).toBeInstanceOf(TypeError);
  });

  test("getBookmarkForTime: what is not a number or a Date, and dates the platform's date type cannot hold, reject with its TypeErrors", async () => {
    // Regression: every non-number said "not a valid Date" (workerd: "parameter 1 is not of type
    // 'date'"), and times past 2262 or before 1677 were ERR_BOOKMARK (workerd: its range TypeErrors).
    // Checked against workerd (Miniflare); its own message says 2189 although the limit is 2262.
    const { storage, clock } = await threeCommits();
    const notDate =
      "Failed to execute 'getBookmarkForTime' on 'DurableObjectStorage': parameter 1 is not of type 'date'.";
    const call = storage.getBookmarkForTime as (...args: unknown[]) => Promise<string>;
    for (const args of [
      [],
      [undefined],
      [null],
      ["2026-01-01"],
      ["5"],
      [true],
      [{}],
      [{ valueOf: () => 5 }],
      [1n],
      [Symbol("t")],
    ]) {
      const error = await rejection(call.apply(storage, args));
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toBe(notDate);
    }
    for (const [time, message] of [
      [9_223_372_036_854.775, "This API doesn't support dates after 2189."],
      [new Date(8.64e15), "This API doesn't support dates after 2189."],
      [1e20, "This API doesn't support dates after 2189."],
      [-9_223_372_036_855, "This API doesn't support dates before 1687."],
      [Number.NEGATIVE_INFINITY, "The value cannot be converted because it is not a valid Date."],
    ] as const) {
      const error = await rejection(storage.getBookmarkForTime(time));
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toBe(message);
    }
    // A Date of another realm is a Date; an object made from Date.prototype is not.
    const foreign = runInNewContext(`new Date(${clock.now()})`) as Date;
    expect(await storage.getBookmarkForTime(foreign)).toBe(await storage.getCurrentBookmark());
    const fake = await rejection(call.call(storage, Object.create(Date.prototype)));
    expect(fake.message).toBe(notDate);
    // Inside the type's range, the window decides.
    await expectBookmarkError(storage.getBookmarkForTime(9_223_372_036_854.7), /in the future/);
    await expectBookmarkError(storage.getBookmarkForTime(-1), /older than the retention window/);
  });
});

describe("onNextSessionRestoreBookmark", () => {
  test("onNextSessionRestoreBookmark: malformed bookmarks reject with ERR_BOOKMARK", async () => {
    const storage = await ObjectStorage.open({ clock: new FakeClock() });
    await storage.put("a", 1);
    const good = await storage.getCurrentBookmark();
    const flipped = `${good.slice(0, -1)}${good.endsWith("0") ? "1" : "0"}`;
    for (const bad of ["", "nope", good.toUpperCase(), good.slice(1), `${good}0`, flipped]) {
      await expectBookmarkError(storage.onNextSessionRestoreBookmark(bad), /Invalid bookmark/);
    }
    expect(await coreOf(storage).settings.persistence.readMeta()).toBeNull();
  });

  test("onNextSessionRestoreBookmark: the argument converts to a string as on the platform; only a missing one is a TypeError", async () => {
    // Regression: every non-string was a TypeError of our own. workerd (checked through Miniflare)
    // converts the argument with ToString (42 → "42", undefined → "undefined"), so those are invalid
    // bookmarks; a missing argument is its "parameter 1 is not of type 'string'"; a Symbol or a
    // throwing toString() fails the conversion with its own error.
    const storage = await ObjectStorage.open({ clock: new FakeClock() });
    await storage.put("a", 1);
    const call = storage.onNextSessionRestoreBookmark as (...args: unknown[]) => Promise<string>;
    const missing = await rejection(call.call(storage));
    expect(missing).toBeInstanceOf(TypeError);
    expect(missing.message).toBe(
      "Failed to execute 'onNextSessionRestoreBookmark' on 'DurableObjectStorage': parameter 1 is not of type 'string'.",
    );
    for (const [value, shown] of [
      [42, '"42"'],
      [undefined, '"undefined"'],
      [null, '"null"'],
      [{}, '"[object Object]"'],
    ] as const) {
      const error = await rejection(call.call(storage, value));
      expect(error).toBeInstanceOf(ActorStoreError);
      expect(error.message).toContain(`Invalid bookmark ${shown}`);
    }
    const symbol = await rejection(call.call(storage, Symbol("b")));
    expect(symbol).toBeInstanceOf(TypeError);
    expect(symbol.message).toBe("Cannot convert a Symbol value to a string");
    const boom = new RangeError("boom");
    expect(
      await rejection(
        call.call(storage, {
          toString: () => {
            throw boom;
          },
        }),
      ),
    ).toBe(boom);
    // A bookmark object with a toString() returning a bookmark is that bookmark.
    const bookmark = await storage.getCurrentBookmark();
    const undo = await call.call(storage, { toString: () => bookmark });
    expect(parseBookmark(undo)).toEqual({ ...parseBookmark(bookmark), beforeNextRestore: true });
    expect(await coreOf(storage).settings.persistence.readMeta()).not.toBeNull();
  });

  test("onNextSessionRestoreBookmark: a bookmark from this object's future rejects", async () => {
    const other = await ObjectStorage.open({ clock: new FakeClock() });
    for (let i = 0; i < 5; i++) {
      await other.put("n", i);
      await other.sync();
    }
    const ahead = await other.getCurrentBookmark();
    const storage = await ObjectStorage.open({ clock: new FakeClock() });
    await storage.put("a", 1);
    await expectBookmarkError(storage.onNextSessionRestoreBookmark(ahead), /has not reached yet/);
  });

  test("onNextSessionRestoreBookmark: a bookmark of another object is refused, even when this object has reached its seq", async () => {
    // Regression: only the seq was checked, so another object's bookmark for commit 1 restored this
    // object to its own commit 1, a state the caller never named.
    const clock = new FakeClock();
    const options = { clock, persistence: createMemoryPersistence(), snapshotEveryRecords: 2 };
    let storage = await ObjectStorage.open(options);
    const own: string[] = [await storage.getCurrentBookmark()];
    for (let i = 0; i < 4; i++) {
      await clock.advance(1000);
      await storage.put("v", i);
      await storage.sync();
      own.push(await storage.getCurrentBookmark());
    }
    const other = await ObjectStorage.open({ clock: new FakeClock(clock.now() - 60_000) });
    await other.put("w", 1);
    const foreign = await other.getCurrentBookmark();
    expect(seqOf(foreign)).toBe(1);
    await expectBookmarkError(storage.onNextSessionRestoreBookmark(foreign), /not made by this object/);
    expect(await coreOf(storage).settings.persistence.readMeta()).toBeNull();
    // The object's own bookmarks still restore after a restart (the timeline is rebuilt from
    // snapshots and the log) and after a restore (a new commit).
    storage = await restart(storage, options);
    await storage.onNextSessionRestoreBookmark(own[2] as string);
    storage = await restart(storage, options);
    expect(await storage.get("v")).toBe(1);
    for (const bookmark of own) await storage.onNextSessionRestoreBookmark(bookmark);
    storage = await restart(storage, options);
    expect(await storage.get("v")).toBe(3);
  });

  test("onNextSessionRestoreBookmark: restores SQL, key-value data and the alarm on the next session", async () => {
    const clock = new FakeClock();
    const options = { clock, persistence: createMemoryPersistence() };
    let storage = await ObjectStorage.open(options);
    storage.sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, v)");
    storage.sql.exec("INSERT INTO t(v) VALUES ('one')");
    await storage.put("k", "old");
    await storage.setAlarm(clock.now() + 60_000);
    const bookmark = await storage.getCurrentBookmark();
    const alarm = await storage.getAlarm();
    await clock.advance(1000);
    storage.sql.exec("INSERT INTO t(v) VALUES ('two')");
    storage.sql.exec("CREATE TABLE later(x)");
    await storage.put({ k: "new", other: 2 });
    await storage.deleteAlarm();
    const undo = await storage.onNextSessionRestoreBookmark(bookmark);
    // Nothing changes in this session.
    expect(await storage.get("k")).toBe("new");
    storage = await restart(storage, options);
    expect([...(await storage.list())]).toEqual([["k", "old"]]);
    expect(await storage.getAlarm()).toBe(alarm);
    expect(storage.sql.exec("SELECT id, v FROM t").toArray()).toEqual([{ id: 1, v: "one" }]);
    expect(() => storage.sql.exec("SELECT * FROM later")).toThrow(/no such table/);
    // AUTOINCREMENT's counter was restored too: the next id is 2 again.
    storage.sql.exec("INSERT INTO t(v) VALUES ('again')");
    expect(storage.sql.exec("SELECT max(id) AS id FROM t").one().id).toBe(2);
    await storage.sync();
    expect(undo > bookmark).toBe(true);
  });

  test("onNextSessionRestoreBookmark: returns the bookmark that undoes the restore", async () => {
    const clock = new FakeClock();
    const options = { clock, persistence: createMemoryPersistence() };
    let storage = await ObjectStorage.open(options);
    await storage.put("v", 1);
    const one = await storage.getCurrentBookmark();
    await storage.put("v", 2);
    const current = await storage.getCurrentBookmark();
    const undo = await storage.onNextSessionRestoreBookmark(one);
    // The state immediately before the restore: the current one, and whatever this session still
    // confirms (undo-bookmark.test.ts).
    expect(parseBookmark(undo)).toEqual({ ...parseBookmark(current), beforeNextRestore: true });
    storage = await restart(storage, options);
    expect(await storage.get("v")).toBe(1);
    await storage.onNextSessionRestoreBookmark(undo);
    storage = await restart(storage, options);
    expect(await storage.get("v")).toBe(2);
  });

  test("onNextSessionRestoreBookmark: the restore is a new commit; later bookmarks sort after it", async () => {
    const clock = new FakeClock();
    const options = { clock, persistence: createMemoryPersistence() };
    let storage = await ObjectStorage.open(options);
    await storage.put("v", 1);
    const one = await storage.getCurrentBookmark();
    await storage.put("v", 2);
    const undo = await storage.onNextSessionRestoreBookmark(one);
    await clock.advance(5000);
    storage = await restart(storage, options);
    const afterRestore = await storage.getCurrentBookmark();
    expect(seqOf(afterRestore)).toBe(seqOf(undo) + 1);
    expect(parseBookmark(afterRestore).timeMs).toBe(clock.now());
    expect([afterRestore, one, undo].sort()).toEqual([one, undo, afterRestore]);
    await storage.put("v", 3);
    const later = await storage.getCurrentBookmark();
    expect(later > afterRestore).toBe(true);
    const records = (await (options.persistence as MemoryPersistence).readRecords(0, seqOf(afterRestore))).at(-1);
    expect(records?.restoreToSeq).toBe(seqOf(one));
  });

  test("onNextSessionRestoreBookmark: of two requests in flight at once, the later call wins", async () => {
    // Regression: both read the metadata's version, the later call's write landed first, and the
    // earlier call's compare-and-swap then failed, read again and overwrote it, so the earlier
    // request was applied. A slow first write (a disk's fsync) is enough.
    class SlowFirstMetaWrite extends DelegatingPersistence {
      writes = 0;
      override async writeMetaIf(expectedVersion: number, bytes: Uint8Array | null): Promise<boolean> {
        if (this.writes++ === 0) for (let i = 0; i < 50; i++) await nextTurn();
        return super.writeMetaIf(expectedVersion, bytes);
      }
    }
    const clock = new FakeClock();
    const persistence = new SlowFirstMetaWrite(createMemoryPersistence());
    const options = { clock, persistence };
    let storage = await ObjectStorage.open(options);
    await storage.put("v", 1);
    const one = await storage.getCurrentBookmark();
    await storage.put("v", 2);
    const two = await storage.getCurrentBookmark();
    await storage.put("v", 3);
    const current = await storage.getCurrentBookmark();
    const undos = await Promise.all([
      storage.onNextSessionRestoreBookmark(one),
      storage.onNextSessionRestoreBookmark(two),
    ]);
    const undoOfCurrent = { ...parseBookmark(current), beforeNextRestore: true };
    expect(undos.map(parseBookmark)).toEqual([undoOfCurrent, undoOfCurrent]);
    storage = await restart(storage, options);
    expect(await storage.get("v")).toBe(2);
  });

  test("onNextSessionRestoreBookmark: the request is durable and survives a process restart (file adapter)", async () => {
    const directory = await tempDir();
    const clock = new FakeClock();
    const first = await ObjectStorage.open({ directory, clock });
    first.sql.exec("CREATE TABLE t(x)");
    first.sql.exec("INSERT INTO t VALUES (random())");
    await first.put("a", 1);
    const bookmark = await first.getCurrentBookmark();
    const rows = first.sql.exec("SELECT x FROM t").toArray();
    await first.put("b", 2);
    first.sql.exec("DELETE FROM t");
    await first.sync();
    await first.onNextSessionRestoreBookmark(bookmark);
    // No close(), no abort(): the process "dies" here. What a crash leaves on disk is a copy of the
    // directory as it is now (this process still holds the original's lock); a new storage over it
    // (a new process would do the same) applies the request.
    const crashed = await tempDir();
    await cp(directory, crashed, { recursive: true });
    const second = await ObjectStorage.open({ directory: crashed, clock });
    expect([...(await second.list())]).toEqual([["a", 1]]);
    expect(second.sql.exec("SELECT x FROM t").toArray()).toEqual(rows);
    expect(await coreOf(second).settings.persistence.readMeta()).toBeNull();
    await second.close();
    // Applied once: a third session does not restore again.
    const third = await ObjectStorage.open({ directory: crashed, clock });
    await third.put("c", 3);
    await third.close();
    const fourth = await ObjectStorage.open({ directory: crashed, clock });
    expect([...(await fourth.list())]).toEqual([
      ["a", 1],
      ["c", 3],
    ]);
    await fourth.close();
    await first.close();
  });

  test("onNextSessionRestoreBookmark: a bookmark older than every snapshot restores its state, not an empty database", async () => {
    // Regression: the restore used load()'s records, which start after the oldest snapshot, and so
    // found nothing to replay for an older target.
    const clock = new FakeClock();
    const options = { clock, persistence: createMemoryPersistence(), snapshotEveryRecords: 3 };
    let storage = await ObjectStorage.open(options);
    await storage.put("a", 1);
    storage.sql.exec("CREATE TABLE t(x)");
    storage.sql.exec("INSERT INTO t VALUES (randomblob(8))");
    const early = await storage.getCurrentBookmark();
    const rows = storage.sql.exec("SELECT x FROM t").toArray();
    for (let i = 0; i < 4; i++) {
      await storage.put("n", i);
      await storage.sync();
    }
    await settle(storage);
    expect(coreOf(storage).snapshots.at(-1)?.seq).toBeGreaterThan(seqOf(early));
    await storage.onNextSessionRestoreBookmark(early);
    storage = await restart(storage, options);
    expect([...(await storage.list())]).toEqual([["a", 1]]);
    expect(storage.sql.exec("SELECT x FROM t").toArray()).toEqual(rows);
  });

  test("onNextSessionRestoreBookmark: a read error while the next session opens keeps the request for the open after it", async () => {
    // Regression: any failure of that open cancelled the request, so one transient read error (a
    // disk's EIO, a lost connection to a bucket) lost a restore the caller had been told was recorded.
    class FailingReads extends DelegatingPersistence {
      failures = 0;
      override async *streamRecords(fromSeq: number, toSeq: number) {
        if (this.failures-- > 0) throw Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" });
        yield* super.streamRecords(fromSeq, toSeq);
      }
    }
    const clock = new FakeClock();
    const persistence = new FailingReads(createMemoryPersistence());
    const options = { clock, persistence };
    let storage = await ObjectStorage.open(options);
    await storage.put("a", 1);
    const bookmark = await storage.getCurrentBookmark();
    await storage.put("b", 2);
    await storage.onNextSessionRestoreBookmark(bookmark);
    storage.abort();
    await coreOf(storage).settled();
    persistence.failures = 1;
    const error = await rejection(ObjectStorage.open(options));
    // The read error itself, not a cancelled restore.
    expect(error).toMatchObject({ message: "EIO: i/o error, read", code: "EIO" });
    expect(await persistence.readMeta()).not.toBeNull();
    storage = await ObjectStorage.open(options);
    expect([...(await storage.list())]).toEqual([["a", 1]]);
    expect(await persistence.readMeta()).toBeNull();
    storage.abort();
  });

  test("onNextSessionRestoreBookmark: when the applied request cannot be cleared, the open fails and lets go of the directory", async () => {
    // Regression: the open rejected but left its storage open, holding the directory's lock, so
    // every later open in the process failed with ERR_LOCKED and nothing could close it.
    const directory = await tempDir();
    const first = await ObjectStorage.open({ directory });
    await first.put("a", 1);
    const bookmark = await first.getCurrentBookmark();
    await first.put("b", 2);
    await first.onNextSessionRestoreBookmark(bookmark);
    await first.close();
    const faulty = new FaultyPersistence(await openFilePersistence(directory)).failMetaWrites();
    const error = await rejection(ObjectStorage.open({ persistence: faulty }));
    expect(error.message).toContain("writeMetaIf");
    // The request is still there and is applied (again) by the next open.
    const next = await ObjectStorage.open({ directory });
    expect([...(await next.list())]).toEqual([["a", 1]]);
    expect(await coreOf(next).settings.persistence.readMeta()).toBeNull();
    await next.close();
  });
});

describe("retention", () => {
  test("retention: old records and snapshots are pruned, what in-window bookmarks need is kept", async () => {
    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    const options = { clock, persistence, retentionMs: HOUR_MS, snapshotEveryRecords: 4 };
    let storage = await ObjectStorage.open(options);
    // One commit every 10 minutes for 3 hours; remember what each time should restore to.
    const states: Array<{ timeMs: number; n: number }> = [];
    for (let n = 1; n <= 18; n++) {
      await clock.advance(10 * 60_000);
      await storage.put("n", n);
      storage.sql.exec("CREATE TABLE IF NOT EXISTS t(x)");
      storage.sql.exec("INSERT INTO t VALUES (?)", n);
      await storage.sync();
      states.push({ timeMs: clock.now(), n });
      await settle(storage);
    }
    const stats = persistence.stats();
    expect(stats.records).toBeLessThan(18);
    const loaded = await persistence.readRecords(coreOf(storage).timeline.firstSeq, coreOf(storage).lastSeq);
    expect(loaded.length).toBe(coreOf(storage).lastSeq - coreOf(storage).timeline.firstSeq);
    // The oldest kept snapshot is at or before the window start; nothing older is kept.
    const windowStart = clock.now() - HOUR_MS;
    const oldest = coreOf(storage).snapshots[0];
    expect(oldest).toBeDefined();
    expect(stats.records).toBe(10);
    expect(oldest?.timeMs).toBeLessThanOrEqual(windowStart);
    // Snapshots at seqs 4, 8, 12, 16; the last prune ran after snapshot 16 (t0 + 160 min), when the
    // window started at t0 + 100 min (seq 10): its base is snapshot 8, so snapshot 4 and the records
    // up to 8 went.
    expect(coreOf(storage).snapshots.map((x) => x.seq)).toEqual([8, 12, 16]);
    expect(stats.snapshots).toBe(coreOf(storage).snapshots.length);
    await expectBookmarkError(persistence.readRecords(0, 1), /pruned/);
    // Times before the window are refused; every time inside it still restores exactly.
    await expectBookmarkError(storage.getBookmarkForTime(windowStart - 1), /older than the retention window/);
    const inWindow = states.filter((s) => s.timeMs >= windowStart);
    expect(inWindow.length).toBeGreaterThanOrEqual(6);
    // Bookmarks first: the restores below are commits at "now" themselves.
    const targets: Array<{ bookmark: string; n: number }> = [];
    for (const { timeMs, n } of [{ timeMs: windowStart, n: 12 }, ...inWindow]) {
      targets.push({ bookmark: await storage.getBookmarkForTime(timeMs), n });
    }
    for (const { bookmark, n } of targets) {
      await storage.onNextSessionRestoreBookmark(bookmark);
      storage = await restart(storage, options);
      expect(await storage.get("n")).toBe(n);
      expect(storage.sql.exec("SELECT count(*) AS c FROM t").one().c).toBe(n);
    }
  });

  test("retention: a pending restore keeps the history it needs until the next session applies it", async () => {
    // Regression: a session that ran on past the window after the request pruned the bookmark's
    // history, so the next open cancelled the accepted request and failed with ERR_BOOKMARK.
    const clock = new FakeClock();
    const options = { clock, persistence: createMemoryPersistence(), retentionMs: HOUR_MS, snapshotEveryRecords: 2 };
    let storage = await ObjectStorage.open(options);
    await storage.put("v", 1);
    const bookmark = await storage.getCurrentBookmark();
    await clock.advance(1000);
    await storage.put("v", 2);
    await storage.onNextSessionRestoreBookmark(bookmark);
    for (let n = 0; n < 8; n++) {
      await clock.advance(HOUR_MS / 2);
      await storage.put("n", n);
      await storage.sync();
    }
    await settle(storage);
    storage = await restart(storage, options);
    expect(await storage.get("v")).toBe(1);
    expect(await storage.get("n")).toBeUndefined();
    // Once applied, the old history is no longer held: the next prune drops it.
    for (let n = 0; n < 4; n++) {
      await clock.advance(HOUR_MS);
      await storage.put("n", n);
      await storage.sync();
    }
    await settle(storage);
    // The window as configured (it said "0 days" for any window shorter than half a day).
    await expectBookmarkError(
      storage.onNextSessionRestoreBookmark(bookmark),
      /older than the history this object keeps \(the retention window is 3600000 ms\)/,
    );
  });

  test("retention: a restore requested while a prune drops its history is refused, not accepted and lost", async () => {
    const clock = new FakeClock();
    // Holds the first prune that drops seq 1 (its base is a snapshot after it) until released.
    let held: (() => void) | undefined;
    let entered = false;
    const persistence = new (class extends DelegatingPersistence {
      override async prune(keepFromSeq: number): Promise<void> {
        if (!entered && keepFromSeq >= 4) {
          entered = true;
          await new Promise<void>((done) => {
            held = done;
          });
        }
        await super.prune(keepFromSeq);
      }
    })(createMemoryPersistence());
    const options = { clock, persistence, retentionMs: HOUR_MS, snapshotEveryRecords: 4 };
    let storage = await ObjectStorage.open(options);
    await storage.put("n", 1);
    const early = await storage.getCurrentBookmark();
    for (let n = 2; !entered; n++) {
      await clock.advance(10 * 60_000);
      await storage.put("n", n);
      await settle(storage);
    }
    let settled = false;
    const request = storage.onNextSessionRestoreBookmark(early).finally(() => {
      settled = true;
    });
    for (let i = 0; i < 10; i++) await nextTurn();
    expect(settled).toBe(false); // it waits for the prune …
    held?.();
    await expectBookmarkError(request, /older than the history this object keeps/); // … and is refused
    storage = await restart(storage, options);
    expect(await storage.get("n")).toBeGreaterThan(1);
    await storage.close();
  });

  test("retention: without a snapshot old enough, nothing is pruned", async () => {
    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    const storage = await ObjectStorage.open({ clock, persistence, retentionMs: HOUR_MS });
    for (let n = 1; n <= 6; n++) {
      await clock.advance(HOUR_MS);
      await storage.put("n", n);
    }
    await settle(storage);
    expect(persistence.stats().records).toBe(6);
  });
});

describe('backend "kv"', () => {
  test('point-in-time recovery: the three calls reject with ERR_BACKEND_UNSUPPORTED naming backend: "sqlite"', async () => {
    const storage = await ObjectStorage.open({ backend: "kv", clock: new FakeClock() });
    await storage.put("a", 1);
    const bookmark = "00000000-00000000-00000000-000000000000000000000001d4c6fab6";
    const calls: Array<[string, Promise<unknown>]> = [
      ["getCurrentBookmark()", storage.getCurrentBookmark()],
      ["getBookmarkForTime()", storage.getBookmarkForTime(new FakeClock().now())],
      ["onNextSessionRestoreBookmark()", storage.onNextSessionRestoreBookmark(bookmark)],
    ];
    for (const [name, call] of calls) {
      const error = await rejection(call);
      expect(error).toBeInstanceOf(ActorStoreError);
      expect((error as ActorStoreError).code).toBe("ERR_BACKEND_UNSUPPORTED");
      expect(error.message).toContain(name);
      expect(error.message).toContain('backend: "sqlite"');
    }
    expect(await storage.get("a")).toBe(1);
  });

  test("a restore requested on the sqlite backend applies when the object next opens, whichever backend opens it", async () => {
    // Regression: a "kv" open ignored the pending request and left it in place, so a later
    // "sqlite" open applied it and threw away everything the "kv" session had confirmed.
    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    let storage = await ObjectStorage.open({ clock, persistence });
    await storage.put("v", 1);
    const bookmark = await storage.getCurrentBookmark();
    await clock.advance(1000);
    await storage.put("v", 2);
    await storage.onNextSessionRestoreBookmark(bookmark);
    storage = await restart(storage, { clock, persistence, backend: "kv" });
    expect(await storage.get("v")).toBe(1);
    await clock.advance(1000);
    await storage.put("w", "written by the kv session");
    await storage.sync();
    storage = await restart(storage, { clock, persistence });
    expect(await storage.get("v")).toBe(1);
    expect(await storage.get("w")).toBe("written by the kv session");
    await storage.close();
  });
});

describe("a storage that was closed or aborted", () => {
  test("the three calls reject as get() does (ERR_CLOSED, or the abort's error), and a restore asked of it never applies", async () => {
    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    const storage = await ObjectStorage.open({ clock, persistence });
    await storage.put("v", 1);
    const bookmark = await storage.getCurrentBookmark();
    await clock.advance(1000);
    await storage.put("v", 2);
    await storage.close();
    for (const call of [
      () => storage.getCurrentBookmark(),
      () => storage.getBookmarkForTime(clock.now()),
      () => storage.onNextSessionRestoreBookmark(bookmark),
    ]) {
      const error = await rejection(call());
      expect(error, String(call)).toBeInstanceOf(ActorStoreError);
      expect((error as ActorStoreError).code, String(call)).toBe("ERR_CLOSED");
    }
    // The refused request left nothing behind: the next session opens on the last state.
    const next = await ObjectStorage.open({ clock, persistence });
    expect(await next.get("v")).toBe(2);

    const reason = new Error("aborted by the test");
    next.abort(reason);
    await expect(next.getCurrentBookmark()).rejects.toBe(await rejection(next.get("v")));
    await expect(next.onNextSessionRestoreBookmark(bookmark)).rejects.toBeInstanceOf(Error);
    const third = await ObjectStorage.open({ clock, persistence });
    expect(await third.get("v")).toBe(2);
    await third.close();
  });
});
