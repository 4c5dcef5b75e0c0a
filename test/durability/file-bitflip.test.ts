/**
 * Never a silent loss: one flipped bit at a random offset of any file of an object's directory (a
 * log segment, a snapshot, the meta file, the lock file) either leaves every confirmed commit
 * readable or makes the open fail with ERR_CORRUPT, and a refused open changes nothing on disk.
 * Also: a damaged newest snapshot falls back to an older one plus the log; a missing snapshot with
 * a pruned log is ERR_CORRUPT with a sentence that says so.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { ObjectStorage } from "../../src/storage/object-storage";
import { contents, flipBit } from "./directory-files";
import { dumpStorage, type StorageDump } from "./dump";

const root = await mkdtemp(join(tmpdir(), "actorstore-bitflip-"));
const template = join(root, "template");
let counter = 0;
let expected: StorageDump;

const open = async (directory: string) =>
  ObjectStorage.open({
    persistence: await openFilePersistence(directory, { segmentBytes: 1500 }),
    snapshotEveryRecords: 25,
  });

async function copyOfTemplate(): Promise<string> {
  const dir = join(root, `copy-${++counter}`);
  await cp(template, dir, { recursive: true });
  return dir;
}

beforeAll(async () => {
  // Several segments and snapshots, SQL and key-value commits, and a pending restore in meta.
  const storage = await open(template);
  storage.sql.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  for (let i = 0; i < 90; i++) {
    storage.sql.exec("INSERT INTO t (v) VALUES (?)", `row ${i} ${"·".repeat(i % 7)}`);
    await storage.put(`k${i}`, { i, text: "x".repeat(i % 13) });
    if (i % 10 === 0) await storage.delete(`k${i - 5}`);
    await storage.sync();
  }
  await storage.onNextSessionRestoreBookmark(await storage.getCurrentBookmark());
  await storage.close();
  const names = await readdir(template);
  expect(names.filter((n) => n.endsWith(".seg")).length).toBeGreaterThan(2);
  expect(names.filter((n) => n.startsWith("snap-")).length).toBeGreaterThan(2);
  expect(names).toContain("meta");
  expect(names.some((n) => n.startsWith("lock-"))).toBe(true);
  const reference = await open(await copyOfTemplate());
  expected = await dumpStorage(reference);
  await reference.close();
  expect(expected.kv.length).toBeGreaterThan(70);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("file persistence: bit flips", () => {
  it("a flipped bit in any file: every confirmed commit, or ERR_CORRUPT with nothing changed", async () => {
    const names = (await readdir(template)).sort();
    const kinds = {
      segment: names.filter((n) => n.endsWith(".seg")),
      snapshot: names.filter((n) => n.startsWith("snap-")),
      meta: ["meta"],
      lock: names.filter((n) => n.startsWith("lock-")),
    };
    const seen = { ok: 0, corrupt: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...(Object.keys(kinds) as Array<keyof typeof kinds>)),
        fc.nat(),
        fc.nat(),
        fc.nat(7),
        async (kind, which, at, bit) => {
          const files = kinds[kind];
          const name = files[which % files.length] as string;
          const dir = await copyOfTemplate();
          const offset = await flipBit(dir, name, at, bit);
          const before = await contents(dir);
          const where = `${name} byte ${offset} bit ${bit}`;
          let storage: ObjectStorage;
          try {
            storage = await open(dir);
          } catch (error) {
            expect(error, where).toMatchObject({ name: "ActorStoreError", code: "ERR_CORRUPT" });
            // Nothing truncated, deleted or rewritten.
            expect(await contents(dir), where).toEqual(before);
            seen.corrupt++;
            await rm(dir, { recursive: true, force: true });
            return;
          }
          expect(await dumpStorage(storage), where).toEqual(expected);
          await storage.close();
          seen.ok++;
          await rm(dir, { recursive: true, force: true });
        },
      ),
      { numRuns: 100 },
    );
    // Both outcomes happened (an older snapshot's flip is harmless; a log flip never is).
    expect(seen.ok).toBeGreaterThan(0);
    expect(seen.corrupt).toBeGreaterThan(0);
  }, 300_000);

  it("a damaged newest snapshot falls back to the previous snapshot plus the log", async () => {
    const dir = await copyOfTemplate();
    const snaps = (await readdir(dir)).filter((n) => n.startsWith("snap-")).sort();
    const newest = snaps.at(-1) as string;
    const bytes = await readFile(join(dir, newest));
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] as number) ^ 0x10;
    await writeFile(join(dir, newest), bytes);
    const storage = await open(dir);
    expect(await dumpStorage(storage)).toEqual(expected);
    await storage.close();
    // The damaged image is left for a person to look at.
    expect(await readdir(dir)).toContain(newest);
  });

  it("a damaged older snapshot: a restore inside its range is rebuilt from the snapshot before it and the log", async () => {
    // Regression: load() checks only the newest snapshot, and a restore read its own base without
    // a fallback, so one flipped bit in an older snapshot made every bookmark after it (up to the
    // next snapshot) fail with ERR_CORRUPT, and cancelled the request, although the snapshot
    // before it and the log still held those states.
    const dir = join(root, `older-${++counter}`);
    let storage = await open(dir);
    const bookmarks: string[] = [];
    const states: StorageDump[] = [];
    for (let i = 0; i < 60; i++) {
      await storage.put(`k${i}`, i);
      storage.sql.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v)");
      storage.sql.exec("INSERT INTO t (v) VALUES (randomblob(8))");
      await storage.sync();
      bookmarks.push(await storage.getCurrentBookmark());
      states.push(await dumpStorage(storage));
    }
    await storage.close();
    const snaps = (await readdir(dir)).filter((n) => n.startsWith("snap-")).sort();
    // The oldest snapshot, a damaged one, and at least one after it.
    expect(snaps.length).toBeGreaterThanOrEqual(3);
    const damaged = snaps[1] as string;
    const damagedSeq = Number(damaged.slice(5, 21));
    await flipBit(dir, damaged, 4096, 3);
    for (const seq of [damagedSeq, damagedSeq + 3]) {
      storage = await open(dir);
      const undo = await storage.onNextSessionRestoreBookmark(bookmarks[seq - 1] as string);
      await storage.close();
      storage = await open(dir);
      expect(await dumpStorage(storage), `restore to seq ${seq}`).toEqual(states[seq - 1]);
      await storage.onNextSessionRestoreBookmark(undo);
      await storage.close();
      storage = await open(dir);
      await storage.close();
    }
  });

  it("a missing snapshot with a pruned log is ERR_CORRUPT with a sentence, not a RangeError", async () => {
    const dir = await copyOfTemplate();
    const names = (await readdir(dir)).sort();
    // Prune by hand: the first segment goes, and every snapshot with it.
    await rm(join(dir, names.find((n) => n.endsWith(".seg")) as string));
    for (const n of names.filter((x) => x.startsWith("snap-"))) await rm(join(dir, n));
    const before = await contents(dir);
    const error = await open(dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: "ActorStoreError", code: "ERR_CORRUPT" });
    expect((error as Error).message).toMatch(
      /the log starts at commit \d+, but no snapshot holds the state before it \(the log segments before it, or the snapshot that replaced them, are missing\), so no commit can be rebuilt\. Nothing was changed\. Restore the directory from a backup: repair cannot rebuild a state from files that are missing or damaged\.$/,
    );
    expect(await contents(dir)).toEqual(before);
  });
});
