/**
 * A snapshot file's name is part of what its checksum covers (snapshot-name-crc.ts): a file
 * renamed to another seq or time, or moved from another place in the history, must never open
 * as the state of the seq its new name gives. Files older versions wrote (whose name CRC covers
 * the bytes alone) still open.
 */
import { mkdtemp, readdir, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { crc32 } from "../../src/durability/crc32";
import { snapshotName } from "../../src/durability/file-layout";
import { type FilePersistence, openFilePersistence } from "../../src/durability/file-persistence";
import { parseIdentity } from "../../src/durability/object-identity";
import { kvRecord, range } from "./adapter-contract";
import { contents, unbindLog } from "./directory-files";
import { everyImageOffThread } from "./off-thread";

const root = await mkdtemp(join(tmpdir(), "actorstore-renamed-"));
let counter = 0;
const freshDir = (): string => join(root, `object-${++counter}`);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function loaded(dir: string): Promise<FilePersistence> {
  const adapter = await openFilePersistence(dir, { segmentBytes: 1 << 20 });
  await adapter.load();
  return adapter;
}

const snapshotFiles = async (dir: string): Promise<string[]> =>
  (await readdir(dir)).filter((n) => n.startsWith("snap-")).sort();

/** The name `name` would have with another seq (and time), the rest kept. */
function renamed(name: string, seq: number, timeMs?: number): string {
  const parts = name.split("-");
  parts[1] = String(seq).padStart(16, "0");
  if (timeMs !== undefined) parts[2] = String(timeMs).padStart(16, "0");
  return parts.join("-");
}

const image = (n: number) => new Uint8Array(1000).fill(n);

describe("snapshot files renamed", () => {
  it("a full image renamed to a later seq is skipped as damaged: the open replays the log instead of taking it for that seq", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append(range(1, 6).map((s) => kvRecord(s)));
    await adapter.writeSnapshot({ seq: 3, timeMs: 3000 }, image(3));
    await adapter.close();
    const [name] = await snapshotFiles(dir);
    await rename(join(dir, name as string), join(dir, renamed(name as string, 5)));

    const again = await openFilePersistence(dir);
    const result = await again.load();
    // The renamed file is not the state of seq 5: the history is rebuilt from the log alone.
    expect(result.snapshots).toEqual([]);
    expect(result.lastSeq).toBe(6);
    await again.close();
  });

  it("a full image renamed to another time of its seq is skipped too", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append(range(1, 6).map((s) => kvRecord(s)));
    await adapter.writeSnapshot({ seq: 3, timeMs: 3000 }, image(3));
    await adapter.close();
    const [name] = await snapshotFiles(dir);
    await rename(join(dir, name as string), join(dir, renamed(name as string, 3, 9000)));
    const again = await openFilePersistence(dir);
    expect((await again.load()).snapshots).toEqual([]);
    await again.close();
  });

  it("with the log before it pruned, a renamed image is ERR_CORRUPT naming it, and nothing changes", async () => {
    const dir = freshDir();
    const adapter = await openFilePersistence(dir, { segmentBytes: 64 });
    await adapter.load();
    for (const s of range(1, 12)) await adapter.append([kvRecord(s)]);
    await adapter.writeSnapshot({ seq: 4, timeMs: 4000 }, image(4));
    await adapter.writeSnapshot({ seq: 8, timeMs: 8000 }, image(8));
    await adapter.prune(8);
    await adapter.close();
    const names = await snapshotFiles(dir);
    expect(names).toHaveLength(2);
    // The newest image taken away, and the older one renamed into its place.
    await rm(join(dir, names[1] as string));
    const moved = renamed(names[0] as string, 8, 8000);
    await rename(join(dir, names[0] as string), join(dir, moved));
    const before = await contents(dir);
    const again = await openFilePersistence(dir);
    const error = await again.load().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "ERR_CORRUPT" });
    expect(String((error as Error).message)).toContain(moved);
    expect(String((error as Error).message)).toContain("renamed");
    expect(await contents(dir)).toEqual(before);
  });

  it("readSnapshot of a renamed older image is ERR_CORRUPT, never the other seq's image", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append(range(1, 9).map((s) => kvRecord(s)));
    await adapter.writeSnapshot({ seq: 2, timeMs: 2000 }, image(2));
    await adapter.writeSnapshot({ seq: 8, timeMs: 8000 }, image(8));
    await adapter.close();
    const names = await snapshotFiles(dir);
    // seq 2's image swapped in for seq 5 (a name no snapshot had).
    await rename(join(dir, names[0] as string), join(dir, renamed(names[0] as string, 5)));
    const again = await openFilePersistence(dir);
    // Older snapshots are checked when read (a restore's base), not at load.
    await again.load();
    await expect(again.readSnapshot(5)).rejects.toMatchObject({ code: "ERR_CORRUPT" });
    expect(await again.readSnapshot(8)).toEqual(image(8));
    await again.close();
  });

  it("a delta renamed to another time is skipped as damaged, and the open falls back to its base", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append(range(1, 6).map((s) => kvRecord(s)));
    await adapter.writeSnapshot({ seq: 2, timeMs: 2000 }, image(2));
    const chunk = new Uint8Array(100).fill(7);
    expect(
      await adapter.writeSnapshotDelta(
        { seq: 4, timeMs: 4000 },
        { baseSeq: 2, byteLength: 1000, chunkBytes: 100, chunks: [{ index: 3, bytes: chunk }] },
      ),
    ).toBe(true);
    await adapter.close();
    const delta = (await snapshotFiles(dir)).find((n) => n.endsWith(".delta")) as string;
    await rename(join(dir, delta), join(dir, renamed(delta, 4, 4500)));
    const again = await openFilePersistence(dir);
    const result = await again.load();
    expect(result.snapshots.map((s) => s.seq)).toEqual([2]);
    await again.close();
  });

  it("an image an older version wrote (its name's CRC over the bytes alone) still opens", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append(range(1, 4).map((s) => kvRecord(s)));
    await adapter.close();
    // A directory of a version before identities (object-identity.ts), whose files all lack one.
    await unbindLog(dir);
    for (const name of (await readdir(dir)).filter((n) => n.startsWith("ident-"))) await rm(join(dir, name));
    const bytes = image(3);
    await writeFile(join(dir, snapshotName(3, 3000, crc32(bytes))), bytes);
    const again = await openFilePersistence(dir);
    const result = await again.load();
    expect(result.snapshots).toEqual([{ seq: 3, timeMs: 3000, bytes: 1000 }]);
    expect(await again.readSnapshot(3)).toEqual(bytes);
    await again.close();
  });

  it("the name's CRC written is not the CRC of the bytes alone (so the check has something to catch)", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append([kvRecord(1)]);
    await adapter.writeSnapshot({ seq: 1, timeMs: 1000 }, image(1));
    await adapter.close();
    const [name] = await snapshotFiles(dir);
    expect(name).not.toBe(snapshotName(1, 1000, crc32(image(1))));
  });
});

describe("snapshot files renamed, checked on a worker", () => {
  const offThread = everyImageOffThread(join(root, "worker"));

  it("the worker's verdict takes the name's seq and time into account", async () => {
    const dir = join(root, "worker");
    const adapter = await loaded(dir);
    await adapter.append(range(1, 3).map((s) => kvRecord(s)));
    await adapter.writeSnapshot({ seq: 3, timeMs: 3000 }, image(3));
    await adapter.close();
    const [name] = await snapshotFiles(dir);
    const crc = Number.parseInt((name as string).split("-")[3] as string, 16);
    // The directory's identity, which the name's CRC covers too (object-identity.ts).
    const identity = parseIdentity((await readdir(dir)).find((n) => n.startsWith("ident-")) ?? "");
    expect(identity).toBeDefined();
    const check = async (seq: number, timeMs: number) =>
      (await offThread().readAndCheck(join(dir, name as string), 1000, crc, { seq, timeMs, identity }))?.matches;
    expect(await check(3, 3000)).toBe(true);
    expect(await check(2, 3000)).toBe(false);
    expect(await check(3, 3001)).toBe(false);

    // And through an open: the renamed newest image is skipped, the log replayed.
    await rename(join(dir, name as string), join(dir, renamed(name as string, 2)));
    const again = await openFilePersistence(dir);
    expect((await again.load()).snapshots).toEqual([]);
    await again.close();
  });
});
