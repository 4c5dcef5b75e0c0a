/**
 * A log that ends before the newest snapshot (docs/durability.md, *Lost log segments*). A snapshot
 * is written only of a confirmed commit and the segment holding the newest commit is never removed,
 * so a usable snapshot newer than the log's end means that confirmed commits were lost: the newest
 * segment deleted together with its head marker, or a segment cut short at a frame boundary. Before,
 * the open took the snapshot for the newest state and went on without a word, the commits after it
 * lost, and the next append wrote other commits under their seqs.
 */
import { mkdtemp, readdir, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runInspect } from "../../src/cli/inspect-commands";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { loadWithRecords } from "../../src/durability/persistence";
import { kvRecord, range } from "./adapter-contract";
import { contents, loadError } from "./directory-files";

const root = await mkdtemp(join(tmpdir(), "actorstore-lost-end-"));
let counter = 0;
const freshDir = (): string => join(root, `object-${++counter}`);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const names = async (dir: string) => (await readdir(dir)).sort();
const segments = async (dir: string) => (await names(dir)).filter((n) => n.endsWith(".seg"));
const image = (seq: number) => new Uint8Array(100).fill(seq);

/** Commits 1–`last` one at a time in segments of `segmentBytes`, a snapshot at `snapAt`. */
async function written(dir: string, last: number, snapAt: number, segmentBytes: number): Promise<void> {
  const adapter = await openFilePersistence(dir, { segmentBytes });
  await adapter.load();
  for (const s of range(1, last)) {
    await adapter.append([kvRecord(s)]);
    if (s === snapAt) await adapter.writeSnapshot({ seq: s, timeMs: s * 1000 }, image(s));
  }
  await adapter.close();
}

/** Where each frame of a segment ends (frame = varint length, payload, CRC-32). */
async function frameEnds(path: string): Promise<number[]> {
  const bytes = await readFile(path);
  const ends: number[] = [];
  let at = 0;
  while (at < bytes.length) {
    let length = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = bytes[at++] as number;
      length += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    at += length + 4;
    ends.push(at);
  }
  return ends;
}

/** Both opens (writer and read-only) refuse naming the snapshot and the log's end; nothing changes. */
async function expectRefused(dir: string, snapshotSeq: number, logEnd: number): Promise<void> {
  const before = await contents(dir);
  for (const readOnly of [false, true]) {
    const error = await loadError(dir, readOnly);
    expect(error, `readOnly: ${readOnly}`).toMatchObject({ code: "ERR_CORRUPT" });
    const message = (error as Error).message;
    expect(message).toContain(`holds the state of seq ${snapshotSeq}, but the log ends at seq ${logEnd}`);
    expect(message).toContain("repair");
    expect(await contents(dir)).toEqual(before);
  }
}

describe("the log ends before the newest snapshot", () => {
  it("the newest segment deleted together with its head marker: ERR_CORRUPT, read-only too, nothing changed", async () => {
    const dir = freshDir();
    await written(dir, 12, 11, 64);
    const segs = await segments(dir);
    const newest = segs[segs.length - 1] as string;
    const firstLost = Number(newest.slice(4, 20));
    expect(firstLost).toBeLessThanOrEqual(11);
    await rm(join(dir, newest));
    await rm(join(dir, `head-${newest.slice(4, 20)}`));
    await expectRefused(dir, 11, firstLost - 1);
  });

  it("the only segment deleted with its head marker under a snapshot: ERR_CORRUPT", async () => {
    const dir = freshDir();
    await written(dir, 5, 3, 1 << 20);
    await rm(join(dir, (await segments(dir))[0] as string));
    for (const n of await names(dir)) if (n.startsWith("head-")) await rm(join(dir, n));
    await expectRefused(dir, 3, 0);
  });

  it("the newest segment cut at a frame boundary below a snapshot (a whole confirmed frame gone): ERR_CORRUPT", async () => {
    const dir = freshDir();
    await written(dir, 12, 10, 1 << 20);
    const segment = join(dir, (await segments(dir))[0] as string);
    await truncate(segment, (await frameEnds(segment))[4] as number);
    await expectRefused(dir, 10, 5);
  });

  it("the newest segment cut inside a frame below a snapshot is not a torn tail: ERR_CORRUPT, the file not cut", async () => {
    const dir = freshDir();
    await written(dir, 12, 10, 1 << 20);
    const segment = join(dir, (await segments(dir))[0] as string);
    await truncate(segment, ((await frameEnds(segment))[6] as number) + 3);
    await expectRefused(dir, 10, 7);
  });

  it("a log cut short after the newest snapshot's commit still opens: a torn tail", async () => {
    const dir = freshDir();
    await written(dir, 12, 10, 1 << 20);
    const segment = join(dir, (await segments(dir))[0] as string);
    await truncate(segment, ((await frameEnds(segment))[9] as number) + 3);
    const adapter = await openFilePersistence(dir);
    expect((await adapter.load()).lastSeq).toBe(10);
    await adapter.close();
  });

  it("repair records where the log ends, says what is lost; the object opens from the snapshot and goes on", async () => {
    const dir = freshDir();
    await written(dir, 12, 11, 64);
    const segs = await segments(dir);
    const newest = segs[segs.length - 1] as string;
    const logEnd = Number(newest.slice(4, 20)) - 1;
    await rm(join(dir, newest));
    await rm(join(dir, `head-${newest.slice(4, 20)}`));
    const out: string[] = [];
    const code = await runInspect([dir, "repair"], { out: (l) => out.push(l), err: (l) => out.push(l) });
    expect(code, out.join("\n")).toBe(0);
    const said = out.join("\n");
    expect(said).toContain(`the log ends at seq ${logEnd}, before the snapshot of seq 11`);
    expect(said).toContain("the commits after seq 11 that the missing log held are lost");
    expect(said).not.toContain("no commit was dropped");
    const cut = `logcut-${String(logEnd).padStart(16, "0")}`;
    expect(await names(dir)).toContain(cut);

    const readOnly = await openFilePersistence(dir, { readOnly: true });
    expect((await readOnly.load()).lastSeq).toBe(11);
    await readOnly.close();
    const adapter = await openFilePersistence(dir, { segmentBytes: 64 });
    const loaded = await adapter.load();
    expect(loaded.lastSeq).toBe(11);
    expect(loaded.snapshots.map((s) => s.seq)).toEqual([11]);
    expect(await adapter.readSnapshot(11)).toEqual(image(11));
    await adapter.append([kvRecord(12, { timeMs: 99_000 })]);
    await adapter.close();
    expect(await segments(dir)).toContain("log-0000000000000012.seg");

    // The log reaches past the snapshot again: the next writer's load removes the record.
    const again = await openFilePersistence(dir, { segmentBytes: 64 });
    const reloaded = await loadWithRecords(again);
    expect(reloaded.lastSeq).toBe(12);
    expect(reloaded.records.at(-1)?.timeMs).toBe(99_000);
    await again.close();
    expect(await names(dir)).not.toContain(cut);
  });

  it("a record of a cut for another seq excuses nothing", async () => {
    const dir = freshDir();
    await written(dir, 12, 10, 1 << 20);
    const segment = join(dir, (await segments(dir))[0] as string);
    await truncate(segment, (await frameEnds(segment))[4] as number);
    await writeFile(join(dir, "logcut-0000000000000004"), new Uint8Array(0));
    await expectRefused(dir, 10, 5);
  });
});
