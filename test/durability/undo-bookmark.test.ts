/**
 * The bookmark `onNextSessionRestoreBookmark()` returns names "the point in time immediately before
 * the recovery takes place" (the platform's words), which is still in the future when it is returned:
 * writes the session confirms after the request, up to its end, belong to it. Restoring it undoes the
 * restore without losing them. Also: `getBookmarkForTime(now)` names the current state even after the
 * clock stepped back. Time comes from a FakeClock.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { formatBookmark, parseBookmark } from "../../src/durability/bookmarks";
import { crc32 } from "../../src/durability/crc32";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import type { PersistenceAdapter } from "../../src/durability/persistence";
import { ActorStoreError } from "../../src/errors";
import { coreOf, ObjectStorage, type ObjectStorageOptions } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Ends the session as abort() does and opens the next one over the same persistence. */
async function restart(storage: ObjectStorage, options: ObjectStorageOptions): Promise<ObjectStorage> {
  storage.abort();
  await coreOf(storage).settled();
  return ObjectStorage.open(options);
}

async function dump(storage: ObjectStorage): Promise<Record<string, unknown>> {
  return Object.fromEntries(await storage.list());
}

const adapters: [string, () => Promise<PersistenceAdapter>][] = [
  ["memory", async () => createMemoryPersistence()],
  [
    "file",
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "actorstore-undo-"));
      dirs.push(dir);
      return openFilePersistence(dir);
    },
  ],
];

describe.each(adapters)("the undo bookmark (%s adapter)", (_name, persistence) => {
  test("writes confirmed after the request and before the session ends are part of the undone state", async () => {
    // Regression: the undo bookmark named the state at the request, so undoing the restore silently
    // dropped every write confirmed between the request and abort() (here one made while the
    // request's own durable write was in flight, and one after it).
    const clock = new FakeClock();
    const options = { clock, persistence: await persistence() };
    let storage = await ObjectStorage.open(options);
    await storage.put("a", 1);
    const target = await storage.getCurrentBookmark();
    await clock.advance(1000);
    await storage.put("a", 2);
    const requested = storage.onNextSessionRestoreBookmark(target);
    await storage.put("during", 3);
    const undo = await requested;
    await clock.advance(1000);
    await storage.put("after", 4);
    storage.sql.exec("CREATE TABLE t(x)");
    storage.sql.exec("INSERT INTO t VALUES (5)");
    await storage.sync();
    const confirmed = await dump(storage);
    expect(confirmed).toEqual({ a: 2, during: 3, after: 4 });

    storage = await restart(storage, options);
    expect(await dump(storage)).toEqual({ a: 1 });
    await clock.advance(1000);
    const redo = await storage.onNextSessionRestoreBookmark(undo);
    storage = await restart(storage, options);
    expect(await dump(storage)).toEqual(confirmed);
    expect(storage.sql.exec("SELECT x FROM t").toArray()).toEqual([{ x: 5 }]);

    // And the undo of the undo is the restored state again.
    await storage.onNextSessionRestoreBookmark(redo);
    storage = await restart(storage, options);
    expect(await dump(storage)).toEqual({ a: 1 });
    storage.abort();
  });

  test("an undo bookmark keeps naming the state before its own restore after later restores", async () => {
    const clock = new FakeClock();
    const options = { clock, persistence: await persistence() };
    let storage = await ObjectStorage.open(options);
    const empty = await storage.getCurrentBookmark();
    await storage.put("a", 1);
    const undo1 = await storage.onNextSessionRestoreBookmark(empty);
    await storage.put("b", 2);
    await storage.sync();
    storage = await restart(storage, options);
    expect(await dump(storage)).toEqual({});
    await storage.put("c", 3);
    const undo2 = await storage.onNextSessionRestoreBookmark(empty);
    await storage.put("d", 4);
    await storage.sync();
    storage = await restart(storage, options);
    expect(await dump(storage)).toEqual({});

    await storage.onNextSessionRestoreBookmark(undo1);
    storage = await restart(storage, options);
    expect(await dump(storage)).toEqual({ a: 1, b: 2 });
    await storage.onNextSessionRestoreBookmark(undo2);
    storage = await restart(storage, options);
    expect(await dump(storage)).toEqual({ c: 3, d: 4 });
    storage.abort();
  });

  test("restoring an undo bookmark whose restore has not happened yet cancels that restore", async () => {
    // The state "immediately before the recovery" is then the end of this session: the next
    // session starts from everything this one confirmed.
    const clock = new FakeClock();
    const options = { clock, persistence: await persistence() };
    let storage = await ObjectStorage.open(options);
    await storage.put("a", 1);
    const target = await storage.getCurrentBookmark();
    await storage.put("a", 2);
    const undo = await storage.onNextSessionRestoreBookmark(target);
    await storage.put("b", 3);
    await storage.onNextSessionRestoreBookmark(undo);
    await storage.put("c", 4);
    await storage.sync();
    storage = await restart(storage, options);
    expect(await dump(storage)).toEqual({ a: 2, b: 3, c: 4 });
    expect(await coreOf(storage).settings.persistence.readMeta()).toBeNull();
    storage.abort();
  });

  test("an undo bookmark is checked like any other: another object's is refused", async () => {
    const clock = new FakeClock();
    const mine = { clock, persistence: await persistence() };
    let storage = await ObjectStorage.open(mine);
    await storage.put("a", 1);
    const other = await ObjectStorage.open({ clock: new FakeClock(Date.UTC(2020, 0, 1)) });
    await other.put("x", 1);
    const foreign = await other.onNextSessionRestoreBookmark(await other.getCurrentBookmark());
    const refused = await storage.onNextSessionRestoreBookmark(foreign).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ActorStoreError);
    expect((refused as ActorStoreError).code).toBe("ERR_BOOKMARK");
    expect((refused as Error).message).toMatch(/was not made by this object/);
    storage = await restart(storage, mine);
    expect(await dump(storage)).toEqual({ a: 1 });
    other.abort();
    storage.abort();
  });
});

describe("the undo bookmark's layout", () => {
  test("it parses, sorts with the state it was requested in, and survives a round trip", () => {
    const fields = { seq: 7, timeMs: 1_700_000_000_000, epoch: 0, beforeNextRestore: true };
    const undo = formatBookmark(fields);
    expect(parseBookmark(undo)).toEqual(fields);
    const plain = formatBookmark({ seq: 7, timeMs: fields.timeMs });
    expect(parseBookmark(plain).beforeNextRestore).toBe(false);
    expect(undo).not.toBe(plain);
    expect(undo.slice(0, 17)).toBe(plain.slice(0, 17));
    expect([formatBookmark({ seq: 8, timeMs: fields.timeMs }), undo].sort()[0]).toBe(undo);
  });

  test("a layout version this version does not know is refused", () => {
    // seq 1, time 5, epoch 0, version 3, with a correct checksum: refused for its version alone.
    const words = new Uint8Array(24);
    const view = new DataView(words.buffer);
    view.setUint32(4, 1);
    view.setUint32(12, 5);
    view.setUint32(20, 3);
    const hex = (i: number) =>
      view
        .getUint32(i * 4)
        .toString(16)
        .padStart(8, "0");
    const crc = crc32(words).toString(16).padStart(8, "0");
    const v3 = `${hex(0)}-${hex(1)}-${hex(2)}-${hex(3)}${hex(4)}${hex(5)}${crc}`;
    expect(() => parseBookmark(v3)).toThrow(/layout version 3; this version of actorstore reads versions 1 and 2/);
  });
});

describe("getBookmarkForTime after the clock stepped back", () => {
  test("the present names the current state, with every commit made since the step", async () => {
    // Regression: commit times are a running maximum, so commits made after the clock stepped back
    // carry the earlier, later time; getBookmarkForTime(now) then named the state before them.
    const clock = new FakeClock();
    const options = { clock, persistence: createMemoryPersistence() };
    let storage = await ObjectStorage.open(options);
    await clock.advance(60_000);
    await storage.put("a", 1);
    await storage.sync();
    clock.set(clock.now() - 30_000);
    await storage.put("b", 2);
    await storage.sync();
    const now = await storage.getBookmarkForTime(clock.now());
    expect(now).toBe(await storage.getCurrentBookmark());
    await storage.onNextSessionRestoreBookmark(now);
    storage = await restart(storage, options);
    expect(await dump(storage)).toEqual({ a: 1, b: 2 });
    storage.abort();
  });
});
