/**
 * Snapshot writes paced against the log's flushes (file-io.ts `WritePacing`, group-commit.ts
 * `writeSettled`): the temp file is written in slices, each flushed before the next, each write and
 * flush started only after the pacing's turn; the file on disk is the same as written whole; a
 * crash between slices leaves only a temp file, which the next open drops, keeping every confirmed
 * commit; the turn waits for the log's write in flight and never for the ones after it.
 */
import { cpSync } from "node:fs";
import * as fs from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { DirectoryIo, snapshotSliceBytes, type WritePacing } from "../../src/durability/file-io";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { GroupCommitQueue } from "../../src/durability/group-commit";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { nextTurn } from "../../src/util/clock";

const root = await fs.mkdtemp(path.join(tmpdir(), "actorstore-pacing-"));
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

type Op =
  | { kind: "turn" }
  | { kind: "write"; bytes: number }
  | { kind: "datasync" }
  | { kind: "sync" }
  | { kind: "close" };

/**
 * The real `node:fs/promises`, with every handle's writes and flushes recorded in `ops`;
 * `failWriteAt` makes that write (0-based) throw instead, as if the process died there.
 */
function recordingFs(ops: Op[], failWriteAt = -1): typeof fs {
  let writes = 0;
  const wrap = (handle: fs.FileHandle): fs.FileHandle => {
    const write = (bytes: number) => {
      if (writes++ === failWriteAt) throw new Error("crashed mid-snapshot");
      ops.push({ kind: "write", bytes });
    };
    const wrapped = {
      writev: async (buffers: Uint8Array[], position: number) => {
        write(buffers.reduce((n, b) => n + b.length, 0));
        return handle.writev(buffers, position);
      },
      write: async (data: Uint8Array, offset: number, length: number, position: number) => {
        write(length);
        return handle.write(data, offset, length, position);
      },
      datasync: async () => {
        ops.push({ kind: "datasync" });
        return handle.datasync();
      },
      sync: async () => {
        ops.push({ kind: "sync" });
        return handle.sync();
      },
      close: async () => {
        ops.push({ kind: "close" });
        return handle.close();
      },
    };
    return wrapped as unknown as fs.FileHandle;
  };
  return { ...fs, open: async (file: string, flags?: string) => wrap(await fs.open(file, flags)) } as typeof fs;
}

const pacingOf = (ops: Op[], sliceBytes: number, turn: () => Promise<void> = async () => {}): WritePacing => ({
  sliceBytes,
  turn: async () => {
    ops.push({ kind: "turn" });
    await turn();
  },
});

const bytesOf = (length: number, seed: number) => Uint8Array.from({ length }, (_, i) => (seed * 7 + i * 13) & 0xff);

let dirs = 0;
const newDir = async () => {
  const dir = path.join(root, `d${dirs++}`);
  await fs.mkdir(dir);
  return dir;
};

describe("DirectoryIo.writeFileAtomic with pacing", () => {
  it("writes the same file as unpaced, in slices of at most sliceBytes, each after a turn and flushed before the next", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 500, max: 4000 }),
        async (lengths, sliceBytes) => {
          const parts = lengths.map((n, i) => bytesOf(n, i));
          const total = lengths.reduce((a, b) => a + b, 0);
          const ops: Op[] = [];
          const dir = await newDir();
          const io = new DirectoryIo(dir, recordingFs(ops), path, true);
          await io.writeFileAtomic("snap", parts, pacingOf(ops, sliceBytes));
          const written = new Uint8Array(await fs.readFile(path.join(dir, "snap")));
          const expected = new Uint8Array(total);
          let at = 0;
          for (const p of parts) {
            expected.set(p, at);
            at += p.length;
          }
          expect(written).toEqual(expected);
          expect(await fs.readdir(dir)).toEqual(["snap"]); // the temp file was renamed

          const writes = ops.filter((o) => o.kind === "write");
          const slices = Math.ceil(total / sliceBytes);
          expect(writes.length).toBe(slices);
          for (const [i, w] of writes.entries())
            expect(w.bytes).toBe(i < slices - 1 ? sliceBytes : total - sliceBytes * (slices - 1));
          // Every write and every flush between slices comes right after a turn; one flush per
          // slice but the last, whose flush is the file's fsync before the rename.
          const datasyncs = ops.filter((o) => o.kind === "datasync").length;
          expect(datasyncs).toBe(Math.max(0, slices - 1));
          for (const [i, op] of ops.entries())
            if (op.kind === "write" || op.kind === "datasync") expect(ops[i - 1]).toEqual({ kind: "turn" });
          const order = ops.filter((o) => o.kind !== "turn").map((o) => o.kind);
          const expectedOrder = [
            ...Array.from({ length: Math.max(0, slices - 1) }, () => ["write", "datasync"]).flat(),
          ];
          if (slices > 0) expectedOrder.push("write");
          // The temp file's fsync, then the directory's (after the rename).
          expect(order).toEqual([...expectedOrder, "sync", "close", "sync", "close"]);
        },
      ),
      { numRuns: 15 },
    );
  }, 120_000);

  it("starts no write and no flush while the turn is held", async () => {
    const ops: Op[] = [];
    const dir = await newDir();
    const asked: Array<{ release: () => void }> = [];
    let wake: (() => void) | undefined;
    const turn = () =>
      new Promise<void>((release) => {
        asked.push({ release });
        wake?.();
      });
    const io = new DirectoryIo(dir, recordingFs(ops), path, true);
    const done = io.writeFileAtomic("snap", [bytesOf(10, 1), bytesOf(10, 2)], pacingOf(ops, 8, turn));
    for (let step = 1; step <= 5; step++) {
      if (asked.length < step) await new Promise<void>((r) => (wake = r));
      // Held: however many turns pass, nothing is written or flushed after the turn asked for.
      for (let i = 0; i < 20; i++) await nextTurn();
      expect(asked.length).toBe(step);
      expect(ops[ops.length - 1]).toEqual({ kind: "turn" });
      asked[step - 1]?.release();
    }
    await done;
    // 20 bytes in slices of 8: write, flush, write, flush, write (5 turns), then the file's fsync.
    expect(ops.filter((o) => o.kind !== "turn").map((o) => o.kind)).toEqual([
      "write",
      "datasync",
      "write",
      "datasync",
      "write",
      "sync",
      "close",
      "sync", // the directory's, after the rename
      "close",
    ]);
  });

  it("ignores pacing where flushes are off (nothing to pace)", async () => {
    const ops: Op[] = [];
    const dir = await newDir();
    const io = new DirectoryIo(dir, recordingFs(ops), path, false);
    await io.writeFileAtomic("snap", [bytesOf(100, 1)], pacingOf(ops, 8));
    expect(ops.map((o) => o.kind)).toEqual(["write", "close"]);
    expect(new Uint8Array(await fs.readFile(path.join(dir, "snap")))).toEqual(bytesOf(100, 1));
  });

  it("a crash between slices leaves only a temp file with a prefix of the image, never the snapshot's name", async () => {
    for (const failAt of [0, 1, 3]) {
      const ops: Op[] = [];
      const dir = await newDir();
      const io = new DirectoryIo(dir, recordingFs(ops, failAt), path, true);
      const image = bytesOf(40, 3);
      await expect(io.writeFileAtomic("snap", [image], pacingOf(ops, 8))).rejects.toThrow("crashed mid-snapshot");
      expect(await fs.readdir(dir)).toEqual(["snap.tmp"]);
      const partial = new Uint8Array(await fs.readFile(path.join(dir, "snap.tmp")));
      expect(partial).toEqual(image.subarray(0, 8 * failAt));
    }
  });
});

describe("snapshotSliceBytes", () => {
  it("1 MiB up to 256 MiB images, then a 256th of the image, at most 8 MiB", () => {
    const MiB = 1024 * 1024;
    expect(snapshotSliceBytes(0)).toBe(MiB);
    expect(snapshotSliceBytes(40 * MiB)).toBe(MiB);
    expect(snapshotSliceBytes(256 * MiB)).toBe(MiB);
    expect(snapshotSliceBytes(256 * MiB + 1)).toBe(MiB + 1);
    expect(snapshotSliceBytes(1000 * MiB)).toBe(Math.ceil((1000 * MiB) / 256));
    expect(snapshotSliceBytes(2048 * MiB)).toBe(8 * MiB);
    expect(snapshotSliceBytes(100_000 * MiB)).toBe(8 * MiB);
  });
});

describe("GroupCommitQueue.writeSettled", () => {
  it("resolves at once when no write is in flight, else when the one in flight settles (even failed), not later ones", async () => {
    const releases: Array<(ok: boolean) => void> = [];
    const q = new GroupCommitQueue({
      write: () =>
        new Promise<void>((resolve, reject) => releases.push((ok) => (ok ? resolve() : reject(new Error("disk"))))),
      failed: (cause) => cause,
    });
    let settled = false;
    await q.writeSettled(); // idle
    const rec = (seq: number) => ({ seq, timeMs: seq, reset: false, sql: [], kv: [] });
    const first = q.append([rec(1)]);
    const waiting = q.writeSettled().then(() => (settled = true));
    const second = q.append([rec(2)]); // queued behind the first write
    for (let i = 0; i < 10; i++) await nextTurn();
    expect(settled).toBe(false);
    releases[0]?.(true);
    await first;
    await waiting;
    expect(settled).toBe(true);
    // The second append's write is now in flight: a new wait waits for it, and a failed write ends it too.
    await nextTurn();
    expect(releases.length).toBe(2);
    let settledAgain = false;
    const again = q.writeSettled().then(() => (settledAgain = true));
    for (let i = 0; i < 10; i++) await nextTurn();
    expect(settledAgain).toBe(false);
    releases[1]?.(false);
    await expect(second).rejects.toThrow("disk");
    await again;
    expect(settledAgain).toBe(true);
  });
});

describe("a paced snapshot under ObjectStorage (file adapter)", () => {
  /**
   * A 12 MB database (a paced snapshot of it takes 12 slices of 1 MiB), batches appended while the
   * snapshot is written; the directory copied as it is at the `crashAt`-th slice write of the
   * snapshot (a process that died there). The copy must open holding every batch confirmed before
   * the crash (and possibly later ones: they may have been written), as a prefix.
   */
  it("a crash between slices: the open drops the temp file and keeps every confirmed commit", async () => {
    for (const crashAt of [1, 5]) {
      const dir = await newDir();
      const crashed = await newDir();
      const storage = await ObjectStorage.open({ persistence: await openFilePersistence(dir) });
      storage.sql.exec(
        "CREATE TABLE big (b BLOB); INSERT INTO big WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12) SELECT zeroblob(1000000) FROM n",
      );
      await storage.sync();
      // Snapshot slices are the only writev calls of the adapter (the log uses write).
      const probe = await fs.open(path.join(root, "probe"), "w");
      const handleProto = Object.getPrototypeOf(probe) as { writev: (...args: unknown[]) => Promise<unknown> };
      await probe.close();
      const writev = handleProto.writev;
      let slices = 0;
      let confirmedAtCrash = -1;
      let confirmed = -1;
      handleProto.writev = function (this: unknown, ...args: unknown[]) {
        if (++slices === crashAt) {
          confirmedAtCrash = confirmed;
          cpSync(dir, crashed, { recursive: true });
        }
        return writev.apply(this, args);
      };
      try {
        const snapshot = coreOf(storage).snapshot();
        for (let n = 0; n < 30; n++) {
          void storage.put(`k${n}`, n);
          await storage.sync();
          confirmed = n;
        }
        await snapshot;
      } finally {
        handleProto.writev = writev;
      }
      await storage.close();
      expect(slices).toBeGreaterThanOrEqual(crashAt);
      const names = await fs.readdir(crashed);
      expect(names.filter((n) => n.endsWith(".sqlite.tmp"))).toHaveLength(1);
      // The crash copy's lock belongs to a process that is gone: the copy is opened as after a crash.
      const reopened = await ObjectStorage.open({ persistence: await openFilePersistence(crashed) });
      const keys = [...(await reopened.list<number>()).keys()].map((k) => Number(k.slice(1))).sort((a, b) => a - b);
      expect(keys).toEqual(Array.from({ length: keys.length }, (_, i) => i));
      expect(keys.length).toBeGreaterThanOrEqual(confirmedAtCrash + 1);
      const rows = reopened.sql.exec<{ n: number }>("SELECT count(*) AS n FROM big").one().n;
      expect(rows).toBe(12);
      await reopened.close();
      expect((await fs.readdir(crashed)).some((n) => n.endsWith(".tmp"))).toBe(false);
    }
  }, 120_000);

  it("a snapshot finishes while appends never stop (a slice waits for one log write, not for the log to go quiet)", async () => {
    const dir = await newDir();
    const storage = await ObjectStorage.open({ persistence: await openFilePersistence(dir) });
    storage.sql.exec(
      "CREATE TABLE big (b BLOB); INSERT INTO big WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6) SELECT zeroblob(1000000) FROM n",
    );
    await storage.sync();
    let done = false;
    const snapshot = coreOf(storage)
      .snapshot()
      .then(() => (done = true));
    // Batches back to back, the next committed while the one before is written, so the log always
    // has a write in flight or queued.
    let n = 0;
    let previous: Promise<void> = Promise.resolve();
    while (!done) {
      for (let i = 0; i < 4; i++) void storage.put(`k${n++}`, n);
      const flushed = storage.sync();
      await previous;
      previous = flushed;
      expect(n).toBeLessThan(40_000); // a starved snapshot would never finish
    }
    await previous;
    await snapshot;
    await storage.close();
    const snaps = (await fs.readdir(dir)).filter((f) => f.startsWith("snap-") && f.endsWith(".sqlite"));
    expect(snaps.length).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
