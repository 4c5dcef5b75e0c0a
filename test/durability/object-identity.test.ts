/**
 * Snapshot files copied from another object's directory under their own name (same seq and time)
 * must never open as a state this object held: every snapshot name's CRC covers the directory's
 * identity (object-identity.ts), so such a file is refused exactly as a damaged one (skipped for an
 * older snapshot and the log, or ERR_CORRUPT naming it). Directories an older version wrote (no
 * identity) still open and adopt one; their files stay accepted up to the seq it was adopted at.
 */
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runInspect } from "../../src/cli/inspect-commands";
import { crc32 } from "../../src/durability/crc32";
import { snapshotName } from "../../src/durability/file-layout";
import { type FilePersistence, openFilePersistence } from "../../src/durability/file-persistence";
import { parseIdentity } from "../../src/durability/object-identity";
import { nameCrcOf } from "../../src/durability/snapshot-name-crc";
import { kvRecord, range } from "./adapter-contract";
import { contents, unbindLog } from "./directory-files";
import { everyImageOffThread } from "./off-thread";

const root = await mkdtemp(join(tmpdir(), "actorstore-identity-"));
let counter = 0;
const freshDir = (): string => join(root, `object-${++counter}`);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function loaded(dir: string, segmentBytes = 1 << 20): Promise<FilePersistence> {
  const adapter = await openFilePersistence(dir, { segmentBytes });
  await adapter.load();
  return adapter;
}
const named = async (dir: string, prefix: string): Promise<string[]> =>
  (await readdir(dir)).filter((n) => n.startsWith(prefix)).sort();
const image = (n: number) => new Uint8Array(1000).fill(n);
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error & { code?: string },
  );

/** Two objects with the same commits and a snapshot of each at `seq` (same time), of different images. */
async function twoObjects(seq: number, commits: number): Promise<{ a: string; b: string }> {
  const a = freshDir();
  const b = freshDir();
  for (const [dir, fill] of [
    [a, 1],
    [b, 2],
  ] as const) {
    const adapter = await loaded(dir);
    await adapter.append(range(1, commits).map((s) => kvRecord(s)));
    await adapter.writeSnapshot({ seq, timeMs: seq * 1000 }, image(fill));
    await adapter.close();
  }
  return { a, b };
}

/** Replaces `dir`'s snapshot files with `from`'s under their own names. */
async function copySnapshotsInto(from: string, dir: string): Promise<string[]> {
  for (const name of await named(dir, "snap-")) await rm(join(dir, name));
  const copied = await named(from, "snap-");
  for (const name of copied) await copyFile(join(from, name), join(dir, name));
  return copied;
}

/** Makes `dir` look like a directory a version before identities wrote: no identity file, plain log frames. */
async function asOlderVersion(dir: string): Promise<void> {
  await unbindLog(dir);
  for (const name of await named(dir, "ident-")) await rm(join(dir, name));
}

describe("object identity", () => {
  it("the first load creates one identity file, and later loads keep it", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    const [first] = await named(dir, "ident-");
    expect(first).toMatch(/^ident-[0-9a-f]{32}$/);
    await adapter.append([kvRecord(1)]);
    await adapter.close();
    const again = await loaded(dir);
    expect(await named(dir, "ident-")).toEqual([first]);
    await again.close();
    // Two objects never share one.
    const otherDir = freshDir();
    const other = await loaded(otherDir);
    await other.close();
    expect(await named(otherDir, "ident-")).not.toEqual([first]);
  });

  it("a full image copied from another object's directory under its own name is skipped: the object's own log is replayed", async () => {
    const { a, b } = await twoObjects(3, 5);
    const [copied] = await copySnapshotsInto(b, a);
    const again = await openFilePersistence(a);
    const result = await again.load();
    // Not the other object's state of seq 3: the history is rebuilt from this object's log.
    expect(result.snapshots).toEqual([]);
    expect(result.lastSeq).toBe(5);
    await expect(again.readSnapshot(3)).rejects.toMatchObject({ code: "ERR_CORRUPT" });
    await again.close();
    expect(await named(a, "snap-")).toEqual([copied]);
  });

  it("checked on a worker, the copied image is refused the same way", async () => {
    const { a, b } = await twoObjects(3, 5);
    await copySnapshotsInto(b, a);
    const [ident] = await named(a, "ident-");
    const [name] = await named(a, "snap-");
    const identity = parseIdentity(ident as string);
    const crc = Number.parseInt((name as string).split("-")[3] as string, 16);
    const verdict = await offThread().readAndCheck(join(a, name as string), 1000, crc, {
      seq: 3,
      timeMs: 3000,
      identity,
    });
    expect(await verdict?.matches).toBe(false);
    // In its own directory it passes.
    const [own] = await named(b, "ident-");
    const ownVerdict = await offThread().readAndCheck(join(b, name as string), 1000, crc, {
      seq: 3,
      timeMs: 3000,
      identity: parseIdentity(own as string),
    });
    expect(await ownVerdict?.matches).toBe(true);
  });
  const offThread = everyImageOffThread(join(root, "worker"));

  it("with the log before it pruned, a copied image is ERR_CORRUPT naming it and saying it may be another object's; nothing changes", async () => {
    const dirs = [freshDir(), freshDir()];
    for (const [i, dir] of dirs.entries()) {
      const adapter = await loaded(dir, 64);
      for (const s of range(1, 12)) await adapter.append([kvRecord(s)]);
      await adapter.writeSnapshot({ seq: 4, timeMs: 4000 }, image(4 + i));
      await adapter.writeSnapshot({ seq: 8, timeMs: 8000 }, image(8 + i));
      await adapter.prune(8);
      await adapter.close();
    }
    const [a, b] = dirs as [string, string];
    const copied = await copySnapshotsInto(b, a);
    const before = await contents(a);
    const error = await failure(openFilePersistence(a).then((p) => p.load()));
    expect(error).toMatchObject({ code: "ERR_CORRUPT" });
    expect(error?.message).toContain(copied[copied.length - 1]);
    expect(error?.message).toContain("copied from another object's directory");
    expect(await contents(a)).toEqual(before);
  });

  it("a delta copied from another object whose base has the same bytes, seq and time is skipped for the own base", async () => {
    const dirs = [freshDir(), freshDir()];
    for (const [i, dir] of dirs.entries()) {
      const adapter = await loaded(dir);
      await adapter.append(range(1, 6).map((s) => kvRecord(s)));
      // The same base image in both (the objects started alike), different changes on it.
      await adapter.writeSnapshot({ seq: 2, timeMs: 2000 }, image(2));
      const written = await adapter.writeSnapshotDelta(
        { seq: 4, timeMs: 4000 },
        {
          baseSeq: 2,
          byteLength: 1000,
          chunkBytes: 100,
          chunks: [{ index: 3, bytes: new Uint8Array(100).fill(7 + i) }],
        },
      );
      expect(written).toBe(true);
      await adapter.close();
    }
    const [a, b] = dirs as [string, string];
    const theirs = (await named(b, "snap-")).find((n) => n.endsWith(".delta")) as string;
    for (const n of (await named(a, "snap-")).filter((x) => x.endsWith(".delta"))) await rm(join(a, n));
    await copyFile(join(b, theirs), join(a, theirs));
    const again = await openFilePersistence(a);
    const result = await again.load();
    expect(result.snapshots.map((s) => s.seq)).toEqual([2]);
    expect(result.lastSeq).toBe(6);
    await again.close();

    // The whole chain copied (base and delta): neither is this object's.
    await copySnapshotsInto(b, a);
    const third = await openFilePersistence(a);
    expect((await third.load()).snapshots).toEqual([]);
    await third.close();
  });

  it("a directory an older version wrote opens, adopts an identity at its newest seq, and keeps its files", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append(range(1, 6).map((s) => kvRecord(s)));
    await adapter.close();
    await asOlderVersion(dir);
    // Snapshots as the older versions named them: the CRC of the bytes, then the bytes and seq and time.
    await writeFile(join(dir, snapshotName(3, 3000, crc32(image(3)))), image(3));
    await writeFile(join(dir, snapshotName(5, 5000, nameCrcOf(crc32(image(5)), 5, 5000))), image(5));
    const again = await loaded(dir);
    const [adopted] = await named(dir, "ident-");
    expect(adopted).toMatch(/^ident-[0-9a-f]{32}-0000000000000006$/);
    expect(await again.readSnapshot(3)).toEqual(image(3));
    expect(await again.readSnapshot(5)).toEqual(image(5));
    // Writes go on, bound to the adopted identity.
    await again.append([kvRecord(7)]);
    await again.writeSnapshot({ seq: 7, timeMs: 7000 }, image(7));
    await again.close();
    const third = await openFilePersistence(dir);
    expect((await third.load()).snapshots.map((s) => s.seq)).toEqual([3, 5, 7]);
    expect(await third.readSnapshot(7)).toEqual(image(7));
    expect(await named(dir, "ident-")).toEqual([adopted]);
    await third.close();
  });

  it("after adopting, a file without the identity newer than the adoption (one copied in) is refused", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append(range(1, 4).map((s) => kvRecord(s)));
    await adapter.close();
    await asOlderVersion(dir);
    const adopting = await loaded(dir);
    await adopting.append(range(5, 8).map((s) => kvRecord(s)));
    await adopting.close();
    // An older version's image of seq 7, copied in from another object's directory.
    await writeFile(join(dir, snapshotName(7, 7000, nameCrcOf(crc32(image(9)), 7, 7000))), image(9));
    const again = await openFilePersistence(dir);
    expect((await again.load()).snapshots).toEqual([]);
    await again.close();
  });

  it("an older version's file copied into a directory this version created is refused", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append(range(1, 4).map((s) => kvRecord(s)));
    await adapter.close();
    await writeFile(join(dir, snapshotName(3, 3000, crc32(image(3)))), image(3));
    await writeFile(join(dir, snapshotName(2, 2000, nameCrcOf(crc32(image(2)), 2, 2000))), image(2));
    const again = await openFilePersistence(dir);
    expect((await again.load()).snapshots).toEqual([]);
    await again.close();
  });

  it("the identity file copied along is ERR_CORRUPT naming both; repair keeps this directory's and moves the copies aside", async () => {
    const { a, b } = await twoObjects(3, 5);
    const [own] = await named(a, "ident-");
    const [theirs] = await named(b, "ident-");
    // More snapshots of a's own, so that a's identity has more files bound to it than b's.
    const more = await loaded(a);
    await more.writeSnapshot({ seq: 4, timeMs: 4000 }, image(44));
    await more.writeSnapshot({ seq: 5, timeMs: 5000 }, image(55));
    await more.close();
    // Their image of seq 3 in place of the own one, and their identity file along with it.
    const [theirImage] = await named(b, "snap-");
    const [ownImage] = await named(a, "snap-0000000000000003");
    await rm(join(a, ownImage as string));
    await copyFile(join(b, theirImage as string), join(a, theirImage as string));
    await copyFile(join(b, theirs as string), join(a, theirs as string));
    const before = await contents(a);
    const error = await failure(openFilePersistence(a).then((p) => p.load()));
    expect(error).toMatchObject({ code: "ERR_CORRUPT" });
    expect(error?.message).toContain(own);
    expect(error?.message).toContain(theirs);
    expect(await contents(a)).toEqual(before);

    const out: string[] = [];
    const code = await runInspect([a, "repair"], { out: (l) => out.push(l), err: (l) => out.push(l) });
    expect(code, out.join("\n")).toBe(0);
    expect(out.join("\n")).toContain(`removed ${theirs} (an identity copied from another object's directory`);
    expect(out.join("\n"), out.join("\n")).toContain(`removed ${theirImage}`);
    expect(await named(a, "ident-")).toEqual([own]);
    const again = await openFilePersistence(a);
    const result = await again.load();
    expect(result.snapshots.map((s) => s.seq)).toEqual([4, 5]);
    expect(await again.readSnapshot(5)).toEqual(image(55));
    await again.close();
    // The copies are kept.
    const folder = (await readdir(a)).find((n) => n.startsWith("repair-")) as string;
    expect((await readdir(join(a, folder))).sort()).toEqual([theirImage, theirs].sort());
    expect(new Uint8Array(await readFile(join(a, folder, theirImage as string)))).toEqual(image(2));
  });

  it("a meta file (a pending restore request) copied from another object's directory is ERR_CORRUPT, not taken as this object's", async () => {
    const { a, b } = await twoObjects(3, 5);
    const other = await loaded(b);
    expect(await other.writeMetaIf(0, new Uint8Array([1, 2, 3]))).toBe(true);
    await other.close();
    await copyFile(join(b, "meta"), join(a, "meta"));
    const adapter = await openFilePersistence(a);
    await adapter.load();
    const error = await failure(adapter.readMetaVersion());
    expect(error).toMatchObject({ code: "ERR_CORRUPT" });
    expect(error?.message).toContain("another object's directory");
    await adapter.close();
    // Its own is read back, also by a repair that leaves it alone.
    const own = await loaded(b);
    expect(await own.readMetaVersion()).toEqual({ bytes: new Uint8Array([1, 2, 3]), version: 1 });
    await own.close();
    const out: string[] = [];
    expect(await runInspect([b, "repair"], { out: (l) => out.push(l), err: (l) => out.push(l) })).toBe(0);
    expect(out.join("\n")).toContain("nothing to repair");
    // Repair removes the copied one (keeping a copy).
    const repaired: string[] = [];
    expect(await runInspect([a, "repair"], { out: (l) => repaired.push(l), err: (l) => repaired.push(l) })).toBe(0);
    expect(repaired.join("\n")).toContain("removed meta");
    const again = await loaded(a);
    expect(await again.readMetaVersion()).toEqual({ bytes: null, version: 0 });
    await again.close();
  });

  it("an older version's meta file stays readable after the identity is adopted, and is bound once rewritten", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append([kvRecord(1)]);
    await adapter.close();
    await asOlderVersion(dir);
    // The meta file as an older version wrote it: the CRC of the rest alone.
    const payload = new Uint8Array([0x41, 0x53, 0x4d, 0x56, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 1, 9, 9]);
    const file = new Uint8Array(4 + payload.length);
    file.set(payload, 4);
    new DataView(file.buffer).setUint32(0, crc32(payload), true);
    await writeFile(join(dir, "meta"), file);
    const again = await loaded(dir);
    expect(await again.readMetaVersion()).toEqual({ bytes: new Uint8Array([9, 9]), version: 1 });
    expect(await again.writeMetaIf(1, new Uint8Array([7]))).toBe(true);
    await again.close();
    const third = await loaded(dir);
    expect(await third.readMetaVersion()).toEqual({ bytes: new Uint8Array([7]), version: 2 });
    await third.close();
    const stored = new Uint8Array(await readFile(join(dir, "meta")));
    expect(new DataView(stored.buffer).getUint32(0, true)).not.toBe(crc32(stored, 4));
  });

  it("a deleted identity file: the open says the log is bound to it and to put it back; once back, every commit opens", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir, 64);
    for (const s of range(1, 12)) await adapter.append([kvRecord(s)]);
    await adapter.writeSnapshot({ seq: 4, timeMs: 4000 }, image(4));
    await adapter.writeSnapshot({ seq: 8, timeMs: 8000 }, image(8));
    await adapter.prune(8);
    await adapter.close();
    const [ident] = await named(dir, "ident-");
    await rm(join(dir, ident as string));
    const before = await contents(dir);
    const error = await failure(openFilePersistence(dir).then((p) => p.load()));
    expect(error).toMatchObject({ code: "ERR_CORRUPT" });
    // The log's frames are bound to it too (log-binding.ts): the open says so before the snapshots.
    expect(error?.message).toContain("the directory has no identity file although logbound-");
    expect(error?.message).toContain("deleted or not copied along");
    expect(error?.message).toContain("Put the identity file back");
    expect(await contents(dir)).toEqual(before);
    // Put back, the directory is whole again: the newest snapshot and the log after it.
    await writeFile(join(dir, ident as string), new Uint8Array(0));
    const reopened = await openFilePersistence(dir, { segmentBytes: 64 });
    const state = await reopened.load();
    expect(await named(dir, "ident-")).toEqual([ident]);
    expect(state.snapshots.map((s) => s.seq)).toEqual([4, 8]);
    expect(state.lastSeq).toBe(12);
    await reopened.close();
  });
});
