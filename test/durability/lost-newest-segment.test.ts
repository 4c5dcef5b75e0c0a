/**
 * The log's head marker (`head-<seq>`, docs/durability.md *Lost log segments*): the newest log
 * segment deleted from outside must never pass for a log that simply ends there. Without the
 * marker, an open found the commits up to the previous segment's end (or the newest snapshot) and
 * went on without a word, the later commits lost.
 */
import { mkdtemp, readdir, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runInspect } from "../../src/cli/inspect-commands";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { kvRecord, range } from "./adapter-contract";
import { contents, loadError } from "./directory-files";

const root = await mkdtemp(join(tmpdir(), "actorstore-lost-head-"));
let counter = 0;
const freshDir = (): string => join(root, `object-${++counter}`);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const segments = async (dir: string) => (await readdir(dir)).filter((n) => n.endsWith(".seg")).sort();
const heads = async (dir: string) => (await readdir(dir)).filter((n) => n.startsWith("head-")).sort();

/** Commits 1–`last` one at a time in segments of ~64 bytes (a few frames each), a snapshot at `snapAt`. */
async function written(dir: string, last: number, snapAt?: number): Promise<void> {
  const adapter = await openFilePersistence(dir, { segmentBytes: 64 });
  await adapter.load();
  for (const s of range(1, last)) {
    await adapter.append([kvRecord(s)]);
    if (s === snapAt) await adapter.writeSnapshot({ seq: s, timeMs: s * 1000 }, new Uint8Array(100).fill(s));
  }
  await adapter.close();
}

describe("the newest log segment lost", () => {
  it("every roll leaves one head marker, naming the newest segment", async () => {
    const dir = freshDir();
    await written(dir, 12);
    const segs = await segments(dir);
    expect(segs.length).toBeGreaterThan(2);
    expect(await heads(dir)).toEqual([(segs[segs.length - 1] as string).replace(/^log-(\d{16})\.seg$/, "head-$1")]);
  });

  it("deleted after a snapshot newer than the segment before it: ERR_CORRUPT naming it, nothing changed", async () => {
    const dir = freshDir();
    await written(dir, 12, 11);
    const segs = await segments(dir);
    const newest = segs[segs.length - 1] as string;
    await rm(join(dir, newest));
    const before = await contents(dir);
    for (const readOnly of [false, true]) {
      const error = await loadError(dir, readOnly);
      expect(error, `readOnly: ${readOnly}`).toMatchObject({ code: "ERR_CORRUPT" });
      expect((error as Error).message).toContain(newest);
      expect((error as Error).message).toContain("repair");
      expect(await contents(dir)).toEqual(before);
    }
  });

  it("deleted with no snapshot after the segment before it: ERR_CORRUPT too", async () => {
    const dir = freshDir();
    await written(dir, 12);
    const segs = await segments(dir);
    await rm(join(dir, segs[segs.length - 1] as string));
    expect(await loadError(dir, false)).toMatchObject({ code: "ERR_CORRUPT" });
  });

  it("the only segment deleted under a snapshot: ERR_CORRUPT", async () => {
    const dir = freshDir();
    const adapter = await openFilePersistence(dir);
    await adapter.load();
    await adapter.append(range(1, 5).map((s) => kvRecord(s)));
    await adapter.writeSnapshot({ seq: 3, timeMs: 3000 }, new Uint8Array(10));
    await adapter.close();
    await rm(join(dir, (await segments(dir))[0] as string));
    expect(await loadError(dir, false)).toMatchObject({ code: "ERR_CORRUPT" });
  });

  it("the newest segment emptied (cut to zero bytes, or inside its first frame) is ERR_CORRUPT, never removed as a crash's empty segment", async () => {
    for (const length of [0, 3]) {
      const dir = freshDir();
      await written(dir, 12, 11);
      const segs = await segments(dir);
      const newest = segs[segs.length - 1] as string;
      await truncate(join(dir, newest), length);
      const before = await contents(dir);
      const error = await loadError(dir, false);
      expect(error, `cut to ${length}`).toMatchObject({ code: "ERR_CORRUPT" });
      expect((error as Error).message).toContain(newest);
      expect(await contents(dir)).toEqual(before);
    }
  });

  it("a directory without a marker (an older version's) gets one at its first load, and is checked from then on", async () => {
    const dir = freshDir();
    await written(dir, 12, 11);
    for (const h of await heads(dir)) await rm(join(dir, h));
    const adapter = await openFilePersistence(dir, { segmentBytes: 64 });
    expect((await adapter.load()).lastSeq).toBe(12);
    await adapter.close();
    expect(await heads(dir)).toHaveLength(1);
    const segs = await segments(dir);
    await rm(join(dir, segs[segs.length - 1] as string));
    expect(await loadError(dir, false)).toMatchObject({ code: "ERR_CORRUPT" });
  });

  it("a crash right after a roll (the new segment empty, its marker never written) opens with every commit", async () => {
    const dir = freshDir();
    await written(dir, 12);
    const segs = await segments(dir);
    await writeFile(join(dir, "log-0000000000000013.seg"), new Uint8Array(0));
    const adapter = await openFilePersistence(dir, { segmentBytes: 64 });
    expect((await adapter.load()).lastSeq).toBe(12);
    await adapter.append([kvRecord(13)]);
    await adapter.close();
    expect(await segments(dir)).toEqual([...segs, "log-0000000000000013.seg"]);
    expect(await heads(dir)).toEqual(["head-0000000000000013"]);
  });

  it("repair removes the marker, says which commits are lost, and the rest opens", async () => {
    const dir = freshDir();
    await written(dir, 12, 11);
    const segs = await segments(dir);
    const newest = segs[segs.length - 1] as string;
    const firstLost = Number(/^log-(\d{16})\.seg$/.exec(newest)?.[1]);
    await rm(join(dir, newest));
    const out: string[] = [];
    const code = await runInspect([dir, "repair"], { out: (l) => out.push(l), err: (l) => out.push(l) });
    expect(code, out.join("\n")).toBe(0);
    expect(out.join("\n")).toContain(`the commits from seq ${firstLost} on are lost`);
    expect(out.join("\n")).not.toContain("no commit was dropped");
    const adapter = await openFilePersistence(dir, { segmentBytes: 64 });
    expect((await adapter.load()).lastSeq).toBe(Math.max(11, firstLost - 1));
    await adapter.close();
  });
});
