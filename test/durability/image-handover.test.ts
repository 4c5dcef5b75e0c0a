/**
 * Opening from a snapshot without copying the image (image-handover.ts): an image the adapter
 * keeps (the in-memory adapter's, which point-in-time recovery reopens) is lent and must never be
 * changed by the engine that reads it in place; an image the adapter hands over is taken; any other
 * image is copied, as before.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { DelegatingPersistence } from "../../src/durability/delegating-persistence";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { handOverWrittenImage, LEND_SNAPSHOT, readSnapshotToOpen } from "../../src/durability/image-handover";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import type { PersistenceAdapter } from "../../src/durability/persistence";
import type { SqlJsEngine } from "../../src/engine/sqljs-engine";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { kvRecord } from "./adapter-contract";
import { dumpStorage } from "./dump";

const NO_AUTOMATIC_SNAPSHOTS = 1_000_000_000;
const value = (i: number, tag: string) => `${tag}:${i}:`.padEnd(900 + (i % 300), String.fromCharCode(97 + (i % 26)));

/** Puts 1,500 keys and 2,000 rows (several chunks of the paged file), then a snapshot. */
async function fillAndSnapshot(persistence: PersistenceAdapter): Promise<void> {
  const storage = await ObjectStorage.open({ persistence, snapshotEveryRecords: NO_AUTOMATIC_SNAPSHOTS });
  for (let i = 0; i < 1500; i += 100) {
    const entries: Record<string, string> = {};
    for (let j = i; j < i + 100; j++) entries[`k${j}`] = value(j, "a");
    await storage.put(entries);
  }
  storage.sql.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  storage.sql.exec(
    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000) INSERT INTO t SELECT i, hex(randomblob(200)) FROM c",
  );
  await storage.sync();
  await coreOf(storage).snapshot();
  await storage.close();
}

/** The newest snapshot's seq, read by a fresh load of `persistence`. */
async function newestSnapshot(persistence: PersistenceAdapter): Promise<number> {
  const loaded = await persistence.load();
  return loaded.snapshots[loaded.snapshots.length - 1]?.seq ?? 0;
}

describe("opening from a snapshot without a copy", () => {
  test("the in-memory adapter lends its stored image: the engine reads it in place and never changes it", async () => {
    const persistence = createMemoryPersistence();
    await fillAndSnapshot(persistence);
    const seq = await newestSnapshot(persistence);
    expect(seq).toBeGreaterThan(0);
    const pristine = await persistence.readSnapshot(seq);
    const lent = await persistence[LEND_SNAPSHOT](seq);
    expect(Buffer.from(lent).equals(pristine)).toBe(true);

    const storage = await ObjectStorage.open({ persistence, snapshotEveryRecords: NO_AUTOMATIC_SNAPSHOTS });
    const file = (coreOf(storage).engine as SqlJsEngine).pagedFile;
    if (file === undefined) throw new Error("expected the engine's file on chunks");
    // Opened from the stored image in place: most chunks are still views of it.
    expect(file.sharedChunks).toBeGreaterThan(2);
    // Writes all over the database: overwrites, deletes, growth, SQL.
    for (let i = 0; i < 1500; i += 7) await storage.put(`k${i}`, value(i, "b"));
    await storage.delete(Array.from({ length: 100 }, (_, i) => `k${i * 3}`));
    for (let i = 2000; i < 2600; i++) void storage.put(`k${i}`, value(i, "c"));
    storage.sql.exec("UPDATE t SET v = 'x' WHERE id % 2 = 0");
    storage.sql.exec("DELETE FROM t WHERE id % 7 = 0");
    await storage.sync();
    const expected = await dumpStorage(storage);
    expect(file.sharedChunks).toBeLessThan(Math.ceil(lent.length / file.chunkBytes));
    await storage.close();

    // The stored image is byte for byte what it was, and the history still rebuilds both states.
    expect(Buffer.from(lent).equals(pristine)).toBe(true);
    expect(Buffer.from(await persistence.readSnapshot(seq)).equals(pristine)).toBe(true);
    const again = await ObjectStorage.open({ persistence, snapshotEveryRecords: NO_AUTOMATIC_SNAPSHOTS });
    expect(await dumpStorage(again)).toEqual(expected);
    await again.close();
    expect(Buffer.from(lent).equals(pristine)).toBe(true);
  });

  test("an image handed over is taken once, only from the adapter that handed it over; anything else is copied", async () => {
    const memory = createMemoryPersistence();
    await fillAndSnapshot(memory);
    const seq = await newestSnapshot(memory);
    expect((await readSnapshotToOpen(memory, seq)).use).toBe("share");
    expect((await readSnapshotToOpen(new DelegatingPersistence(memory), seq)).use).toBe("copy");
    // A wrapper that caches what the adapter handed over returns the same array every time: were
    // it taken, the engine would write into the cache. Copied, each time.
    let cached: Uint8Array | undefined;
    const caching = { readSnapshot: async (n: number) => (cached ??= await memory.readSnapshot(n)) };
    const first = await readSnapshotToOpen(caching, seq);
    const second = await readSnapshotToOpen(caching, seq);
    expect([first.use, second.use]).toEqual(["copy", "copy"]);
    expect(second.image === first.image).toBe(true);
    // Opening through the wrapper leaves its cached image as it was.
    const pristine = cached?.slice() ?? new Uint8Array(0);
    const storage = await ObjectStorage.open({
      persistence: Object.assign(new DelegatingPersistence(memory), { readSnapshot: caching.readSnapshot }),
      snapshotEveryRecords: NO_AUTOMATIC_SNAPSHOTS,
    });
    for (let i = 0; i < 1500; i += 5) await storage.put(`k${i}`, value(i, "d"));
    await storage.close();
    expect(Buffer.from(cached ?? []).equals(pristine)).toBe(true);

    const dir = await mkdtemp(join(tmpdir(), "actorstore-handover-"));
    try {
      const writer = await openFilePersistence(dir, { allowUnsyncedWrites: true });
      await fillAndSnapshot(writer);
      await writer.close();
      const files = await openFilePersistence(dir);
      const fileSeq = await newestSnapshot(files);
      expect(fileSeq).toBeGreaterThan(0);
      // The image load() verified, then a fresh read: each handed over and taken.
      const first = await readSnapshotToOpen(files, fileSeq);
      const second = await readSnapshotToOpen(files, fileSeq);
      expect([first.use, second.use]).toEqual(["take", "take"]);
      expect(first.image === second.image).toBe(false);
      expect(Buffer.from(first.image).equals(second.image)).toBe(true);
      await files.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("writing a snapshot without a copy", () => {
  test("the in-memory adapter keeps an image handed over to it; an unmarked one, one marked for another adapter or one in an oversized buffer is copied", async () => {
    const memory = createMemoryPersistence();
    await memory.load();
    await memory.append([kvRecord(1), kvRecord(2), kvRecord(3), kvRecord(4), kvRecord(5)]);
    const stored = (seq: number) => memory[LEND_SNAPSHOT](seq);

    const handed = handOverWrittenImage(memory, new Uint8Array([1, 2, 3]));
    await memory.writeSnapshot({ seq: 1, timeMs: 0 }, handed);
    expect((await stored(1)) === handed).toBe(true);

    // Unmarked: the caller may reuse its buffer (the adapter contract).
    const unmarked = new Uint8Array([4, 5, 6]);
    await memory.writeSnapshot({ seq: 2, timeMs: 0 }, unmarked);
    unmarked.fill(0);
    expect(await stored(2)).toEqual(new Uint8Array([4, 5, 6]));

    // Marked for a wrapper, which passes it on: the adapter behind it copies.
    const wrapper = new DelegatingPersistence(memory);
    const viaWrapper = handOverWrittenImage(wrapper, new Uint8Array([7, 8, 9]));
    await wrapper.writeSnapshot({ seq: 3, timeMs: 0 }, viaWrapper);
    expect((await stored(3)) === viaWrapper).toBe(false);
    viaWrapper.fill(0);
    expect(await stored(3)).toEqual(new Uint8Array([7, 8, 9]));

    // A small image in a large buffer (a copy's room for growth) is not kept with its buffer.
    const roomy = handOverWrittenImage(memory, new Uint8Array(new ArrayBuffer(64), 0, 8).fill(3));
    await memory.writeSnapshot({ seq: 4, timeMs: 0 }, roomy);
    const kept = await stored(4);
    expect(kept === roomy).toBe(false);
    expect(kept.buffer.byteLength).toBe(8);
    expect(kept).toEqual(new Uint8Array(8).fill(3));

    // The mark is used up: the same array written again, unmarked, is copied.
    await memory.writeSnapshot({ seq: 5, timeMs: 0 }, handed);
    expect((await stored(5)) === handed).toBe(false);
    expect(await stored(5)).toEqual(new Uint8Array([1, 2, 3]));
  });

  test("the storage core hands its images over and never changes one afterwards", async () => {
    const memory = createMemoryPersistence();
    const given: Uint8Array[] = [];
    const write = memory.writeSnapshot.bind(memory);
    memory.writeSnapshot = (info, image) => {
      given.push(image);
      return write(info, image);
    };
    await fillAndSnapshot(memory);
    const seq = await newestSnapshot(memory);
    const image = await memory[LEND_SNAPSHOT](seq);
    // Kept as the core gave it, not a copy.
    expect(image === given[given.length - 1]).toBe(true);
    const pristine = image.slice();
    const storage = await ObjectStorage.open({ persistence: memory, snapshotEveryRecords: NO_AUTOMATIC_SNAPSHOTS });
    const state = await dumpStorage(storage);
    for (let i = 0; i < 1500; i += 3) await storage.put(`k${i}`, value(i, "e"));
    storage.sql.exec("UPDATE t SET v = 'y' WHERE id % 3 = 0");
    await storage.sync();
    await coreOf(storage).snapshot();
    const later = await dumpStorage(storage);
    await storage.close();
    expect(Buffer.from(image).equals(pristine)).toBe(true);
    expect(await newestSnapshot(memory)).toBeGreaterThan(seq);
    // Both states rebuild from what the adapter keeps.
    const again = await ObjectStorage.open({ persistence: memory, snapshotEveryRecords: NO_AUTOMATIC_SNAPSHOTS });
    expect(await dumpStorage(again)).toEqual(later);
    await again.close();
    expect(later).not.toEqual(state);
  });
});
