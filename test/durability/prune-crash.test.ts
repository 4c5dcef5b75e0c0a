/**
 * The file adapter's prune against crashes and against files lost from outside. The file system
 * calls a prune makes are recorded in order, so that a crash can be replayed after every one of
 * them: a process crash keeps every call made before it, a power loss may also undo any removal
 * made since the last directory fsync. Every such directory must open with every state the prune
 * keeps. A log segment deleted from outside, on the other hand, must never pass for an
 * interrupted prune: the snapshot it strands is reported (ERR_CORRUPT naming it), never deleted.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";

/** `rm <path>` and `syncdir <path>` of every call while `recording`. */
const events: string[] = [];
let recording = false;
vi.mock("node:fs/promises", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs/promises")>();
  const rm: typeof fs.rm = async (...args) => {
    await fs.rm(...args);
    if (recording) events.push(`rm ${String(args[0])}`);
  };
  const open: typeof fs.open = async (...args) => {
    const handle = await fs.open(...args);
    const path = String(args[0]);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      await sync();
      if (recording && (await fs.stat(path)).isDirectory()) events.push(`syncdir ${path}`);
    };
    return handle;
  };
  return { ...fs, default: { ...fs, open, rm }, open, rm };
});

const { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } = await import("node:fs/promises");
const { tmpdir } = await import("node:os");
const { openFilePersistence } = await import("../../src/durability/file-persistence");
const { runInspect } = await import("../../src/cli/inspect-commands");
const { kvRecord, range } = await import("./adapter-contract");
type FilePersistence = Awaited<ReturnType<typeof openFilePersistence>>;

const root = await mkdtemp(join(tmpdir(), "actorstore-prune-crash-"));
let counter = 0;
const freshDir = () => join(root, `d-${++counter}`);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const IMAGE_BYTES = 4096;
const CHUNK = 256;
/** Each state's image: every fifth rewrites one chunk, so deltas between snapshots stay small. */
function imagesUpTo(last: number): Map<number, Uint8Array> {
  const images = new Map<number, Uint8Array>();
  let image = new Uint8Array(IMAGE_BYTES);
  for (let seq = 0; seq <= last; seq++) {
    image = image.slice();
    if (seq % 5 === 0) image.fill(seq + 1, ((seq * 7) % 16) * CHUNK, ((seq * 7) % 16) * CHUNK + CHUNK);
    images.set(seq, image);
  }
  return images;
}

function deltaOf(images: Map<number, Uint8Array>, baseSeq: number, seq: number) {
  const base = images.get(baseSeq) as Uint8Array;
  const image = images.get(seq) as Uint8Array;
  const chunks: { index: number; bytes: Uint8Array }[] = [];
  for (let index = 0; index * CHUNK < IMAGE_BYTES; index++) {
    const bytes = image.subarray(index * CHUNK, index * CHUNK + CHUNK);
    if (bytes.some((b, i) => b !== base[index * CHUNK + i])) chunks.push({ index, bytes: bytes.slice() });
  }
  return { baseSeq, byteLength: IMAGE_BYTES, chunkBytes: CHUNK, chunks };
}

/**
 * 40 commits over small segments; full images at 0, 15, 30, 35; deltas at 5 (on 0), 10 (on 5) and
 * 20 (on 15).
 */
async function history(dir: string): Promise<{ adapter: FilePersistence; images: Map<number, Uint8Array> }> {
  const images = imagesUpTo(40);
  const adapter = await openFilePersistence(dir, { segmentBytes: 120 });
  await adapter.load();
  const full = (seq: number) => adapter.writeSnapshot({ seq, timeMs: seq }, images.get(seq) as Uint8Array);
  await full(0);
  for (const seq of range(1, 40)) {
    await adapter.append([kvRecord(seq)]);
    if (seq === 5 || seq === 10 || seq === 20) {
      const base = seq === 20 ? 15 : seq - 5;
      expect(await adapter.writeSnapshotDelta({ seq, timeMs: seq }, deltaOf(images, base, seq))).toBe(true);
    }
    if (seq === 15 || seq === 30 || seq === 35) await full(seq);
  }
  return { adapter, images };
}

const names = async (dir: string) => (await readdir(dir)).filter((n) => !n.startsWith("lock-")).sort();

async function copyDir(from: string, to: string): Promise<void> {
  await mkdir(to);
  for (const entry of await readdir(from, { withFileTypes: true }))
    if (entry.isFile()) await copyFile(join(from, entry.name), join(to, entry.name));
}

/** Every subset of `items`. */
function subsets<T>(items: readonly T[]): T[][] {
  return items.reduce<T[][]>((all, item) => all.concat(all.map((s) => [...s, item])), [[]]);
}

describe("file prune: crashes", () => {
  it("a crash after any step of a prune (process crash or power loss) opens with every state the prune keeps", async () => {
    const dir = freshDir();
    const { adapter, images } = await history(dir);
    const before = freshDir();
    await copyDir(dir, before);
    events.length = 0;
    recording = true;
    // The fallback is 30 (the snapshot before the newest): the base is the delta at 20, on 15.
    await adapter.prune(22);
    recording = false;
    await adapter.close();
    const after = await names(dir);
    const removed = (await names(before)).filter((n) => !after.includes(n));
    expect(removed.filter((n) => n.startsWith("snap-")).length).toBe(3); // 0, 5 and 10; 15 stays for 20
    expect(removed.filter((n) => n.endsWith(".seg")).length).toBeGreaterThan(2);

    const steps = events.map((e) => {
      const [kind, path] = e.split(" ") as [string, string];
      return { kind, name: path.slice(path.lastIndexOf("/") + 1), dir: path === dir };
    });
    expect(steps.filter((s) => s.kind === "rm").map((s) => s.name)).toEqual(removed.slice().sort(byPruneOrder));
    const kept = [15, 20, 30, 35];
    let states = 0;
    for (let k = 0; k <= steps.length; k++) {
      const done = steps.slice(0, k);
      const lastSync = done.map((s) => s.kind === "syncdir" && s.dir).lastIndexOf(true);
      const durable = done.slice(0, lastSync + 1).filter((s) => s.kind === "rm");
      const pending = done.slice(lastSync + 1).filter((s) => s.kind === "rm");
      // A power loss may undo any removal the directory has not been fsynced since.
      for (const undone of subsets(pending)) {
        const crashed = freshDir();
        await copyDir(before, crashed);
        for (const s of [...durable, ...pending.filter((p) => !undone.includes(p))]) await rm(join(crashed, s.name));
        const what = `crash after step ${k} (${done.map((s) => `${s.kind} ${s.name}`).join(", ")}), undone: ${undone.map((s) => s.name).join(", ")}`;
        const reopened = await openFilePersistence(crashed);
        const loaded = await reopened.load().catch((error: unknown) => {
          throw new Error(`${what}: ${String(error)}`);
        });
        expect(loaded.lastSeq, what).toBe(40);
        for (const seq of kept)
          expect(await reopened.readSnapshot(seq), `${what}: snapshot ${seq}`).toEqual(images.get(seq));
        expect(
          (await reopened.readRecords(20, 40)).map((r) => r.seq),
          what,
        ).toEqual(range(21, 40));
        await reopened.close();
        states++;
      }
    }
    expect(states).toBeGreaterThan(steps.length);
  });

  it("prune's file system calls: snapshots (a delta before its base) before segments (oldest first), each removal fsynced before the next", async () => {
    const dir = freshDir();
    const { adapter } = await history(dir);
    events.length = 0;
    recording = true;
    await adapter.prune(22);
    recording = false;
    await adapter.close();
    const calls = events.map((e) => e.replace(`${dir}/`, "").replace(dir, "<dir>"));
    const rms = calls.filter((c) => c.startsWith("rm "));
    expect(rms.length).toBeGreaterThan(4);
    for (const [i, c] of calls.entries())
      if (c.startsWith("rm ")) expect(calls[i + 1], `${c} is made durable before the next call`).toBe("syncdir <dir>");
    const snaps = rms.filter((c) => c.includes("snap-"));
    const segs = rms.filter((c) => c.includes(".seg"));
    expect(snaps).toEqual([...snaps].sort().reverse()); // newest first: the delta at 10, at 5, then 0
    expect(segs).toEqual([...segs].sort()); // oldest first
    expect(rms.indexOf(segs[0] as string)).toBe(snaps.length); // every snapshot before any segment
  });
});

/** The order prune removes files in: snapshots newest first, then segments oldest first. */
function byPruneOrder(a: string, b: string): number {
  const snap = (n: string) => n.startsWith("snap-");
  if (snap(a) !== snap(b)) return snap(a) ? -1 : 1;
  return snap(a) ? b.localeCompare(a) : a.localeCompare(b);
}

describe("file prune: files lost from outside", () => {
  /** Snapshots 0, 10, 20, 30 (full images) over segments of 3 commits; no prune. */
  async function plain(dir: string): Promise<string[]> {
    const adapter = await openFilePersistence(dir, { segmentBytes: 64 });
    await adapter.load();
    await adapter.writeSnapshot({ seq: 0, timeMs: 1 }, new Uint8Array([0]));
    for (const seq of range(1, 30)) {
      await adapter.append([kvRecord(seq)]);
      if (seq % 10 === 0) await adapter.writeSnapshot({ seq, timeMs: seq }, new Uint8Array([seq]));
    }
    await adapter.close();
    return names(dir);
  }

  it("a deleted oldest segment is ERR_CORRUPT naming the stranded snapshot and where the log starts; nothing is deleted", async () => {
    const dir = freshDir();
    const files = await plain(dir);
    const oldest = files.find((n) => n.endsWith(".seg")) as string;
    await rm(join(dir, oldest));
    const left = await names(dir);
    const snap0 = files.find((n) => n.startsWith("snap-0000000000000000-")) as string;
    for (const readOnly of [false, true]) {
      const adapter = await openFilePersistence(dir, { readOnly });
      const error = await adapter.load().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, `readOnly: ${readOnly}`).toMatchObject({ code: "ERR_CORRUPT" });
      const message = (error as Error).message;
      expect(message).toContain(snap0);
      expect(message).toContain("log-0000000000000004.seg");
      expect(message).toContain("commits 1 to 3 are missing");
      expect(message).toContain("repair");
      await adapter.close();
      expect(await names(dir)).toEqual(left);
    }
  });

  it("repair moves the stranded snapshot into its folder of copies, says what cannot be restored, and keeps every later commit", async () => {
    const dir = freshDir();
    const files = await plain(dir);
    await rm(join(dir, files.find((n) => n.endsWith(".seg")) as string));
    const snap0 = files.find((n) => n.startsWith("snap-0000000000000000-")) as string;
    const original = await readFile(join(dir, snap0));
    const out: string[] = [];
    const code = await runInspect([dir, "repair"], { out: (l) => out.push(l), err: (l) => out.push(l) });
    expect(code, out.join("\n")).toBe(0);
    const text = out.join("\n");
    expect(text).toContain(`removed ${snap0}`);
    expect(text).toContain("commits 1 to 3");
    expect(text).toContain("can no longer be restored");
    expect(text).not.toContain("no commit was dropped");
    const backup = (await readdir(dir)).find((n) => n.startsWith("repair-")) as string;
    expect(await readFile(join(dir, backup, snap0))).toEqual(original);
    // Every segment stays: the commits after the next snapshot are all there.
    expect((await names(dir)).filter((n) => n.endsWith(".seg"))).toEqual(
      files.filter((n) => n.endsWith(".seg")).slice(1),
    );
    const adapter = await openFilePersistence(dir);
    const loaded = await adapter.load();
    expect(loaded.lastSeq).toBe(30);
    expect(loaded.snapshots.map((s) => s.seq)).toEqual([10, 20, 30]);
    expect((await adapter.readRecords(10, 30)).map((r) => r.seq)).toEqual(range(11, 30));
    await adapter.close();
  });

  it("an unusable snapshot older than the log's start (an older version's prune left it) is skipped and kept; the next prune removes it", async () => {
    const dir = freshDir();
    const files = await plain(dir);
    // What an older version leaves: a snapshot its load skipped as damaged, pruned past since.
    const snap0 = files.find((n) => n.startsWith("snap-0000000000000000-")) as string;
    await writeFile(join(dir, snap0), new Uint8Array([0xee]));
    for (const seg of files.filter((n) => n.endsWith(".seg")).slice(0, 2)) await rm(join(dir, seg));
    const adapter = await openFilePersistence(dir, { segmentBytes: 64 });
    const loaded = await adapter.load();
    expect(loaded.snapshots.map((s) => s.seq)).toEqual([10, 20, 30]);
    expect(loaded.lastSeq).toBe(30);
    expect(await names(dir)).toContain(snap0); // load changes nothing
    await adapter.prune(25);
    expect(await names(dir)).not.toContain(snap0);
    await adapter.close();
    const again = await openFilePersistence(dir);
    expect((await again.load()).lastSeq).toBe(30);
    await again.close();
  });

  it("prune removes a snapshot file older than its base that the adapter does not hold, so the log never outlives it", async () => {
    const dir = freshDir();
    const files = await plain(dir);
    const adapter = await openFilePersistence(dir, { segmentBytes: 64 });
    await adapter.load();
    // An intact snapshot file the adapter does not hold (as a write that failed after its rename leaves).
    const snap10 = files.find((n) => n.startsWith("snap-0000000000000010-")) as string;
    const stray = snap10.replace("snap-0000000000000010-", "snap-0000000000000005-");
    await copyFile(join(dir, snap10), join(dir, stray));
    await adapter.prune(25);
    expect(await names(dir)).not.toContain(stray);
    await adapter.close();
    const again = await openFilePersistence(dir);
    expect((await again.load()).snapshots.map((s) => s.seq)).toEqual([20, 30]);
    await again.close();
  });

  it("a prune or thinning asked for while close() runs is refused and deletes nothing (it would run while the lock is released)", async () => {
    const dir = freshDir();
    await plain(dir);
    const adapter = await openFilePersistence(dir, { segmentBytes: 64 });
    await adapter.load();
    const files = await names(dir);
    const closing = adapter.close();
    const prune = adapter.prune(25);
    const thin = adapter.thinSnapshots([10]);
    const append = adapter.append([kvRecord(31)]);
    await closing;
    for (const late of [prune, thin, append]) await expect(late).rejects.toMatchObject({ code: "ERR_CLOSED" });
    expect(await names(dir)).toEqual(files);
    // The next load takes work again.
    await adapter.load();
    expect(await adapter.thinSnapshots([10])).toEqual([10]);
    await adapter.close();
  });

  it("writeSnapshot of a state older than the log's start is refused, writing nothing", async () => {
    const dir = freshDir();
    await plain(dir);
    const adapter = await openFilePersistence(dir, { segmentBytes: 64 });
    await adapter.load();
    await adapter.prune(25);
    const files = await names(dir);
    const first = Number(/^log-(\d+)/.exec(files.find((n) => n.endsWith(".seg")) as string)?.[1]);
    await expect(adapter.writeSnapshot({ seq: first - 2, timeMs: 1 }, new Uint8Array([1]))).rejects.toThrow(RangeError);
    expect(await names(dir)).toEqual(files);
    await adapter.writeSnapshot({ seq: first - 1, timeMs: 1 }, new Uint8Array([1]));
    await adapter.close();
    const again = await openFilePersistence(dir);
    expect((await again.load()).lastSeq).toBe(30);
    await again.close();
  });
});
