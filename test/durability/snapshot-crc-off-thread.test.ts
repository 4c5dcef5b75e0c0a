/**
 * The newest snapshot's checksum computed on another thread while the load checks the log
 * (crc-off-thread.ts): the open still never uses an image whose sum differs. A damaged newest
 * snapshot falls back to an older one plus the log, as with the check in line; with nothing to
 * fall back to, the open rejects with ERR_CORRUPT and no storage is ever handed out.
 */
import { cp, mkdtemp, readdir, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { offThreadCrcAnswers, offThreadCrcChecks, setOffThreadCrcFromBytes } from "../../src/durability/crc-off-thread";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { dumpStorage, type StorageDump } from "./dump";

const root = await mkdtemp(join(tmpdir(), "actorstore-crc-thread-"));
const template = join(root, "template");
let counter = 0;
let expected: StorageDump;
let previousThreshold = 0;

const open = async (directory: string) =>
  ObjectStorage.open({
    persistence: await openFilePersistence(directory, { segmentBytes: 4000 }),
    snapshotEveryRecords: 20,
  });

const snapshots = async (dir: string) => (await readdir(dir)).filter((n) => n.startsWith("snap-")).sort();

async function copyOfTemplate(): Promise<string> {
  const dir = join(root, `copy-${++counter}`);
  await cp(template, dir, { recursive: true });
  return dir;
}

/** Flips one bit in the middle of `file`. */
async function flip(file: string): Promise<void> {
  const bytes = await readFile(file);
  const at = Math.floor(bytes.length / 2);
  bytes[at] = (bytes[at] as number) ^ 0x10;
  await writeFile(file, bytes);
}

beforeAll(async () => {
  // Every image is checked on another thread, however small.
  previousThreshold = setOffThreadCrcFromBytes(0);
  const storage = await open(template);
  storage.sql.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  for (let i = 0; i < 70; i++) {
    storage.sql.exec("INSERT INTO t (v) VALUES (?)", `row ${i}`.padEnd(200 + i, "·"));
    await storage.put(`k${i}`, { i, text: "x".repeat(300 + i) });
    await storage.sync();
    // Each due snapshot finishes before the next commits: one still being written when the next is
    // due is skipped, and with every image summed on a worker (written and read back) that made the
    // template hold only two snapshots in some runs.
    if (i % 20 === 19) await coreOf(storage).settled();
  }
  await storage.close();
  expect((await snapshots(template)).length).toBeGreaterThan(2);
  const again = await open(template);
  expected = await dumpStorage(again);
  await again.close();
});

afterAll(async () => {
  setOffThreadCrcFromBytes(previousThreshold);
  await rm(root, { recursive: true, force: true });
});

describe("the newest snapshot's checksum on another thread", () => {
  test("an intact directory opens to the same state, its image checked off the loading thread", async () => {
    const dir = await copyOfTemplate();
    const before = offThreadCrcChecks();
    const answered = offThreadCrcAnswers();
    const storage = await open(dir);
    expect(offThreadCrcChecks()).toBe(before + 1);
    // The worker itself answered: the in-line fallback would hide a worker that cannot start.
    expect(offThreadCrcAnswers()).toBe(answered + 1);
    expect(await dumpStorage(storage)).toEqual(expected);
    await storage.close();
  });

  test("a damaged newest snapshot: the open falls back to an older snapshot and the log, and leaves it on disk", async () => {
    const dir = await copyOfTemplate();
    const names = await snapshots(dir);
    const newest = names[names.length - 1] as string;
    await flip(join(dir, newest));
    const before = offThreadCrcChecks();
    const storage = await open(dir);
    expect(offThreadCrcChecks()).toBe(before + 1);
    expect(await dumpStorage(storage)).toEqual(expected);
    await storage.close();
    expect(await snapshots(dir)).toContain(newest);
  });

  test("a damaged newest snapshot with nothing to fall back to: the open rejects with ERR_CORRUPT", async () => {
    const dir = await copyOfTemplate();
    const names = await snapshots(dir);
    const newest = names[names.length - 1] as string;
    const newestSeq = Number(newest.split("-")[1]);
    // Only the newest snapshot and the log from the segment holding its commit on: as after a prune.
    for (const name of names.slice(0, -1)) await unlink(join(dir, name));
    const segments = (await readdir(dir)).filter((n) => n.endsWith(".seg")).sort();
    const firstSeqs = segments.map((n) => Number(n.slice(4, 20)));
    for (let i = 0; i + 1 < segments.length; i++)
      if ((firstSeqs[i + 1] as number) - 1 < newestSeq) await unlink(join(dir, segments[i] as string));
    // Intact, that directory opens.
    const intact = await open(dir);
    expect(await dumpStorage(intact)).toEqual(expected);
    await intact.close();

    await flip(join(dir, newest));
    const before = offThreadCrcChecks();
    let opened: ObjectStorage | undefined;
    let failure: unknown;
    try {
      opened = await open(dir);
    } catch (error) {
      failure = error;
    }
    expect(opened).toBeUndefined();
    expect(failure).toMatchObject({ code: "ERR_CORRUPT" });
    expect(String((failure as Error).message)).toMatch(/fails its checksum/);
    expect(offThreadCrcChecks()).toBe(before + 1);
  });
});
