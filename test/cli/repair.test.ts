/**
 * `actorstore-inspect <dir> repair`: the only command that changes a damaged directory. It copies
 * every file it changes first, says what it did, refuses while the object is open, and afterwards
 * the directory opens with every commit before the damage.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runInspect } from "../../src/cli/inspect-commands";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { ObjectStorage } from "../../src/index";
import { kvRecord } from "../durability/adapter-contract";

const root = await mkdtemp(join(tmpdir(), "actorstore-repair-"));
let counter = 0;

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function inspectCli(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runInspect(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

/** An object with `n` commits (key k<i> each) in small segments, a snapshot every `snapshotEveryRecords` commits. */
async function objectWith(n: number, snapshotEveryRecords?: number): Promise<string> {
  const dir = join(root, `d-${++counter}`);
  const storage = await ObjectStorage.open({
    persistence: await openFilePersistence(dir, { segmentBytes: 400 }),
    ...(snapshotEveryRecords === undefined ? {} : { snapshotEveryRecords }),
  });
  for (let i = 0; i < n; i++) {
    await storage.put(`k${String(i).padStart(3, "0")}`, i);
    await storage.sync();
  }
  await storage.close();
  return dir;
}

const segments = async (dir: string) => (await readdir(dir)).filter((n) => n.endsWith(".seg")).sort();
const openError = (dir: string) =>
  ObjectStorage.open({ directory: dir }).then(
    async (s) => {
      await s.close();
      return undefined;
    },
    (e: unknown) => e as Error,
  );

describe("actorstore-inspect repair", () => {
  it("corruption in the newest segment: cuts there, keeps a copy, and the directory opens with what came before", async () => {
    const dir = await objectWith(30);
    const newest = (await segments(dir)).at(-1) as string;
    const original = await readFile(join(dir, newest));
    const damaged = Buffer.from(original);
    damaged[10] = (damaged[10] as number) ^ 0x04; // inside the first frame; valid frames follow
    await writeFile(join(dir, newest), damaged);
    const refused = await openError(dir);
    expect(refused).toMatchObject({ code: "ERR_CORRUPT" });
    expect(refused?.message).toContain(`${newest} is damaged at byte 0`);
    expect(refused?.message).toContain("actorstore-inspect");

    const run = await inspectCli(dir, "repair");
    expect(run.code, run.err.join("\n")).toBe(0);
    const said = run.out.join("\n");
    expect(said).toContain(`${newest}`);
    expect(said).toMatch(/copies of every file changed or removed are in .*repair-/);
    // The copy is the damaged file as it was.
    const backup = (await readdir(dir)).find((n) => n.startsWith("repair-")) as string;
    expect(await readFile(join(dir, backup, newest))).toEqual(damaged);

    const storage = await ObjectStorage.open({ directory: dir });
    const keys = [...(await storage.list()).keys()];
    await storage.close();
    // Every commit before the damaged segment survives; the ones in it are gone, and were reported.
    const firstLost = Number(newest.slice(4, 20));
    expect(keys).toEqual(Array.from({ length: firstLost - 1 }, (_, i) => `k${String(i).padStart(3, "0")}`));
  });

  it("corruption after the first commits of the newest segment: says which commits it dropped, never that none were", async () => {
    const dir = await objectWith(30);
    const newest = (await segments(dir)).at(-1) as string;
    const bytes = await readFile(join(dir, newest));
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] as number) ^ 0x04; // a whole frame, valid frames after it
    await writeFile(join(dir, newest), bytes);
    const run = await inspectCli(dir, "repair");
    expect(run.code, run.err.join("\n")).toBe(0);
    const storage = await ObjectStorage.open({ directory: dir });
    const kept = (await storage.list()).size;
    await storage.close();
    expect(kept).toBeGreaterThanOrEqual(Number(newest.slice(4, 20)));
    expect(kept).toBeLessThan(30);
    const said = run.out.join("\n");
    expect(said).not.toContain("no commit was dropped");
    expect(said).toContain(`dropped every commit after seq ${kept} from the log`);
  });

  it("corruption in an old segment: the log after a later snapshot is kept, so no commit after it is lost", async () => {
    const dir = await objectWith(65, 10);
    const all = await segments(dir);
    expect(all.length).toBeGreaterThan(3);
    const oldest = all[0] as string;
    const bytes = await readFile(join(dir, oldest));
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] as number) ^ 0x04;
    await writeFile(join(dir, oldest), bytes);
    expect(await openError(dir)).toMatchObject({ code: "ERR_CORRUPT" });
    const firstSeqOf = (name: string) => Number(name.slice(4, 20));
    // Where the log can start again: the first later segment holding the commit right after a
    // snapshot (every 10 commits here), whether it starts there or the snapshot falls inside it.
    const snapshotsAt = [10, 20, 30, 40, 50, 60];
    const lastSeqOf = (i: number) => (i + 1 < all.length ? firstSeqOf(all[i + 1] as string) - 1 : 65);
    const at = all.findIndex(
      (n, i) => i > 0 && snapshotsAt.some((s) => firstSeqOf(n) <= s + 1 && s + 1 <= lastSeqOf(i)),
    );
    expect(at).toBeGreaterThan(0);
    const holder = all[at] as string;
    const snapshotSeq = snapshotsAt.find((s) => firstSeqOf(holder) <= s + 1 && s + 1 <= lastSeqOf(at)) as number;
    const run = await inspectCli(dir, "repair");
    expect(run.code, run.err.join("\n")).toBe(0);
    // Every commit is there: a snapshot bridges the hole and the log after it is kept.
    const storage = await ObjectStorage.open({ directory: dir });
    expect([...(await storage.list()).keys()]).toEqual(
      Array.from({ length: 65 }, (_, i) => `k${String(i).padStart(3, "0")}`),
    );
    await storage.close();
    const after = await segments(dir);
    const restart = `log-${String(snapshotSeq + 1).padStart(16, "0")}.seg`;
    expect(after).toEqual([oldest, restart, ...all.slice(at + 1)]);
    const said = run.out.join("\n");
    expect(said).toContain(
      holder === restart
        ? `kept ${restart} and the segments after it: the log starts again there, after the snapshot of seq ${snapshotSeq}`
        : `kept the commits after seq ${snapshotSeq} of ${holder} as ${restart} and the segments after it`,
    );
    expect(said).toContain(`the snapshot of seq ${snapshotSeq} still holds their result`);
    for (const removed of all.slice(1, at)) expect(said).toContain(`removed ${removed}`);
  });

  it("a snapshot inside a later segment: the commits after it are kept as a segment of their own, and a repair interrupted there settles the same way", async () => {
    const dir = join(root, `d-${++counter}`);
    const adapter = await openFilePersistence(dir, { segmentBytes: 200 });
    await adapter.load();
    for (let seq = 1; seq <= 30; seq++) await adapter.append([kvRecord(seq)]);
    // The older snapshot makes the damaged first segment needed; the log after seq 18 is what counts.
    await adapter.writeSnapshot({ seq: 2, timeMs: 2_000 }, new Uint8Array(1000).fill(2));
    await adapter.writeSnapshot({ seq: 18, timeMs: 18_000 }, new Uint8Array(1000).fill(18));
    await adapter.close();
    // Segments of 200 bytes hold 7 or 8 commits: the snapshot's seq is inside the third.
    const all = await segments(dir);
    expect(all.slice(0, 4)).toEqual([
      "log-0000000000000001.seg",
      "log-0000000000000009.seg",
      "log-0000000000000016.seg",
      "log-0000000000000023.seg",
    ]);
    const oldest = join(dir, all[0] as string);
    const bytes = await readFile(oldest);
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] as number) ^ 0x04;
    await writeFile(oldest, bytes);

    const commitsAfterSnapshot = async () => {
      const reopened = await openFilePersistence(dir);
      const loaded = await reopened.load();
      const seqs: number[] = [];
      for await (const chunk of reopened.streamRecords(18, loaded.lastSeq)) seqs.push(...chunk.map((r) => r.seq));
      await reopened.close();
      return { lastSeq: loaded.lastSeq, seqs };
    };
    const run = await inspectCli(dir, "repair");
    expect(run.code, run.err.join("\n")).toBe(0);
    const said = run.out.join("\n");
    expect(said).toContain("removed log-0000000000000009.seg (its commits come after the damage)");
    expect(said).toContain(
      "kept the commits after seq 18 of log-0000000000000016.seg as log-0000000000000019.seg and the segments after it",
    );
    expect(said).toContain("the snapshot of seq 18 still holds their result");
    const repaired = await segments(dir);
    expect(repaired).toEqual(["log-0000000000000001.seg", "log-0000000000000019.seg", ...all.slice(3)]);
    expect(await commitsAfterSnapshot()).toEqual({ lastSeq: 30, seqs: Array.from({ length: 12 }, (_, i) => 19 + i) });

    // Interrupted after the new segment was durable, before the original went: both are there.
    const copies = (await readdir(dir)).find((n) => n.startsWith("repair-")) as string;
    await writeFile(
      join(dir, "log-0000000000000016.seg"),
      await readFile(join(dir, copies, "log-0000000000000016.seg")),
    );
    expect(await openError(dir)).toMatchObject({ code: "ERR_CORRUPT" });
    const again = await inspectCli(dir, "repair");
    expect(again.code, again.err.join("\n")).toBe(0);
    expect(await segments(dir)).toEqual(repaired);
    expect(await commitsAfterSnapshot()).toEqual({ lastSeq: 30, seqs: Array.from({ length: 12 }, (_, i) => 19 + i) });
  });

  it("a damaged lock file: removed (a copy kept), and every commit is there", async () => {
    const dir = await objectWith(5);
    const lock = (await readdir(dir)).find((n) => n.startsWith("lock-")) as string;
    await writeFile(join(dir, lock), "garbage");
    const refused = await openError(dir);
    expect(refused).toMatchObject({ code: "ERR_CORRUPT" });
    expect(refused?.message).toContain(`The lock file ${lock}`);
    const run = await inspectCli(dir, "repair");
    expect(run.code).toBe(0);
    expect(run.out.join("\n")).toContain(`removed ${lock} (a damaged lock file)`);
    expect(run.out.join("\n")).toContain("no commit was dropped");
    const storage = await ObjectStorage.open({ directory: dir });
    expect((await storage.list()).size).toBe(5);
    await storage.close();
  });

  it("a damaged newest snapshot: moved aside and reported; the data is whole", async () => {
    const dir = join(root, `d-${++counter}`);
    const storage = await ObjectStorage.open({ directory: dir, snapshotEveryRecords: 5 });
    for (let i = 0; i < 12; i++) {
      await storage.put(`k${i}`, i);
      await storage.sync();
    }
    await storage.close();
    const newest = (await readdir(dir))
      .filter((n) => n.startsWith("snap-"))
      .sort()
      .at(-1) as string;
    const bytes = await readFile(join(dir, newest));
    bytes[100] = (bytes[100] as number) ^ 1;
    await writeFile(join(dir, newest), bytes);
    const run = await inspectCli(dir, "repair");
    expect(run.code).toBe(0);
    expect(run.out.join("\n")).toContain(`removed ${newest} (a snapshot that fails its checksum`);
    expect(await readdir(dir)).not.toContain(newest);
    const again = await ObjectStorage.open({ directory: dir });
    expect((await again.list()).size).toBe(12);
    await again.close();
  });

  it("refuses while the object is open, and changes nothing", async () => {
    const dir = await objectWith(3);
    const live = await ObjectStorage.open({ directory: dir });
    const before = (await readdir(dir)).filter((n) => !n.startsWith("lock-")).sort();
    const run = await inspectCli(dir, "repair");
    expect(run.code).toBe(1);
    expect(run.err.join("\n")).toContain(`is open in process ${process.pid}`);
    expect((await readdir(dir)).filter((n) => !n.startsWith("lock-")).sort()).toEqual(before);
    await live.close();
  });

  it("a healthy directory: nothing to repair, nothing written", async () => {
    const dir = await objectWith(3);
    const run = await inspectCli(dir, "repair");
    expect(run).toMatchObject({ code: 0, out: ["nothing to repair: the directory opens as it is"] });
    expect((await readdir(dir)).some((n) => n.startsWith("repair-"))).toBe(false);
  });
});
