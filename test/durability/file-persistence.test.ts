import { appendFile, cp, mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { type FilePersistence, openFilePersistence } from "../../src/durability/file-persistence";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import {
  isFencedError,
  type LoadResult,
  loadWithRecords,
  type PersistenceAdapter,
} from "../../src/durability/persistence";
import { encodeRecord } from "../../src/durability/record-codec";
import { describeAdapterContract, kvRecord, range } from "./adapter-contract";
import { commitRecord } from "./arbitraries";

const root = await mkdtemp(join(tmpdir(), "actorstore-durability-"));
let counter = 0;
const freshDir = (): string => join(root, `object-${++counter}`);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describeAdapterContract("file", async () => {
  const dir = freshDir();
  let adapter: PersistenceAdapter = await openFilePersistence(dir, { segmentBytes: 256 });
  return {
    adapter,
    async reopen() {
      await adapter.close();
      adapter = await openFilePersistence(dir, { segmentBytes: 256 });
      return adapter;
    },
  };
});

async function loaded(dir: string, segmentBytes = 1 << 20): Promise<FilePersistence> {
  const adapter = await openFilePersistence(dir, { segmentBytes });
  await adapter.load();
  return adapter;
}

const segmentsOf = async (dir: string): Promise<string[]> =>
  (await readdir(dir)).filter((n) => n.endsWith(".seg")).sort();

describe("FilePersistence: segments", () => {
  it("append: rolls to a new segment named by its first seq once the size limit is reached", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir, 100);
    for (const seq of range(1, 20)) await adapter.append([kvRecord(seq)]);
    const names = await segmentsOf(dir);
    expect(names.length).toBeGreaterThan(3);
    expect(names[0]).toBe("log-0000000000000001.seg");
    expect(adapter.stats()).toMatchObject({ records: 20, segments: names.length });
    await adapter.close();
    const again = await loaded(dir, 100);
    expect((await again.readRecords(0, 20)).map((r) => r.seq)).toEqual(range(1, 20));
    await again.close();
  });

  it("append: concurrent appends share flushes (group commit)", async () => {
    const adapter = await loaded(freshDir());
    await Promise.all(range(1, 64).map((seq) => adapter.append([kvRecord(seq)])));
    const { logFlushes, appends } = adapter.stats();
    expect(appends).toBe(64);
    expect(logFlushes).toBeLessThan(64);
    await adapter.close();
  });

  it("prune: deletes whole old segments and old snapshots, never the newest segment nor the fallback snapshot", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir, 100);
    for (const seq of range(1, 40)) {
      await adapter.append([kvRecord(seq)]);
      if (seq % 10 === 0) await adapter.writeSnapshot({ seq, timeMs: seq }, new Uint8Array([seq]));
    }
    const before = await segmentsOf(dir);
    await adapter.prune(40);
    const after = await segmentsOf(dir);
    expect(after.length).toBeLessThan(before.length);
    expect(after).toContain(before[before.length - 1]);
    // The snapshot before the newest and the log after it stay: the fallback if seq 40's image rots.
    expect((await readdir(dir)).filter((n) => n.startsWith("snap-"))).toHaveLength(2);
    await adapter.close();
    const again = await loaded(dir, 100);
    const result = await loadWithRecords(again);
    expect(result.snapshots.map((s) => s.seq)).toEqual([30, 40]);
    expect(result.records.map((r) => r.seq)).toEqual(range(31, 40));
    await again.append([kvRecord(41)]);
    await again.close();
  });
});

describe("FilePersistence: torn and corrupt tails", () => {
  it("load: a log cut inside its last frame loses only that frame, and the cut is made durable", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append(range(1, 3).map((s) => kvRecord(s)));
    await adapter.close();
    const seg = join(dir, "log-0000000000000001.seg");
    const full = (await stat(seg)).size;
    const lastFrame = encodeRecord(kvRecord(3)).length;
    for (const cut of [1, 2, lastFrame - 1]) {
      // The directory copied whole (its frames are bound to its identity file, log-binding.ts).
      const copy = freshDir();
      await cp(dir, copy, { recursive: true, filter: (from) => !/^lock-/.test(basename(from)) });
      await writeFile(join(copy, "log-0000000000000001.seg"), (await readFile(seg)).subarray(0, full - cut));
      const again = await openFilePersistence(copy);
      const result = await loadWithRecords(again);
      expect(result.records.map((r) => r.seq)).toEqual([1, 2]);
      expect(result.truncatedBytes).toBe(lastFrame - cut);
      expect((await stat(join(copy, "log-0000000000000001.seg"))).size).toBe(full - lastFrame);
      // The next append continues at seq 3, after the valid data, and survives another reopen.
      await again.append([kvRecord(3, { kv: [] })]);
      await again.close();
      const third = await openFilePersistence(copy);
      expect((await loadWithRecords(third)).records.map((r) => r.seq)).toEqual([1, 2, 3]);
      await third.close();
    }
  });

  it("load: garbage after the last frame is cut off", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append([kvRecord(1)]);
    await adapter.close();
    await appendFile(join(dir, "log-0000000000000001.seg"), new Uint8Array([7, 1, 2, 3]));
    const again = await openFilePersistence(dir);
    const result = await again.load();
    expect(result).toMatchObject({ truncatedBytes: 4, lastSeq: 1 });
    await again.close();
  });

  it("load: a flipped bit in the newest segment is never taken for a torn write: every record, or ERR_CORRUPT", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(commitRecord(1), { minLength: 1, maxLength: 5 }),
        fc.nat(),
        fc.nat(7),
        async (raw, at, bit) => {
          const records: CommitRecord[] = raw.map((r, i) => ({ ...r, seq: i + 1, restoreToSeq: undefined }));
          for (const r of records) delete r.restoreToSeq;
          const dir = freshDir();
          const adapter = await loaded(dir);
          await adapter.append(records);
          await adapter.close();
          const seg = join(dir, "log-0000000000000001.seg");
          const bytes = await readFile(seg);
          const i = at % bytes.length;
          bytes[i] = (bytes[i] as number) ^ (1 << bit);
          await writeFile(seg, bytes);
          const again = await openFilePersistence(dir);
          const outcome = await again.load().then(
            (result) => result,
            (error: unknown) => error,
          );
          await again.close();
          // A flip cannot make a frame incomplete: the file must be refused, and left as it was.
          expect(outcome).toMatchObject({ code: "ERR_CORRUPT" });
          expect(String((outcome as Error).message)).toContain("log-0000000000000001.seg");
          expect(new Uint8Array(await readFile(seg))).toEqual(new Uint8Array(bytes));
          await rm(dir, { recursive: true, force: true });
        },
      ),
      { numRuns: 60 },
    );
  });

  it("load: damage in an older segment followed by newer segments is ERR_CORRUPT, not silent loss", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir, 50);
    for (const seq of range(1, 10)) await adapter.append([kvRecord(seq)]);
    await adapter.close();
    const first = join(dir, (await segmentsOf(dir))[0] as string);
    const bytes = await readFile(first);
    bytes[3] = (bytes[3] as number) ^ 0xff;
    await writeFile(first, bytes);
    const again = await openFilePersistence(dir);
    await expect(again.load()).rejects.toMatchObject({ code: "ERR_CORRUPT" });
    await again.close();
  });

  it("load: an empty newest segment (crash right after creating it) is removed", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append([kvRecord(1)]);
    await adapter.close();
    await writeFile(join(dir, "log-0000000000000002.seg"), new Uint8Array(0));
    const again = await openFilePersistence(dir);
    expect((await again.load()).lastSeq).toBe(1);
    expect(await segmentsOf(dir)).toEqual(["log-0000000000000001.seg"]);
    await again.append([kvRecord(2)]);
    await again.close();
  });
});

describe("FilePersistence: names it did not write", () => {
  it("load: a directory named like a segment, a snapshot or a temp file is neither read nor removed", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append([kvRecord(1)]);
    await adapter.writeSnapshot({ seq: 1, timeMs: 5 }, new Uint8Array([1]));
    await adapter.close();
    const foreign = [
      "log-0000000000000099.seg",
      "snap-0000000000000099-0000000000000000-00000000.sqlite",
      "snap-0000000000000099-0000000000000000-00000000-0000000000000001.delta",
      "x.tmp",
    ];
    for (const name of foreign) await mkdir(join(dir, name, "inside"), { recursive: true });
    const again = await openFilePersistence(dir);
    const result = await again.load();
    expect(result.lastSeq).toBe(1);
    expect(result.snapshots).toEqual([{ seq: 1, timeMs: 5, bytes: 1 }]);
    await again.append([kvRecord(2)]);
    await again.close();
    for (const name of foreign) expect((await stat(join(dir, name, "inside"))).isDirectory()).toBe(true);
  });

  it("load: a segment or snapshot name past 2^53 - 1 is ERR_CORRUPT naming the file, and nothing changes", async () => {
    for (const name of [
      "log-9007199254740993.seg",
      "snap-9999999999999999-0000000000000000-00000000.sqlite",
      "snap-0000000000000001-9999999999999999-00000000.sqlite",
      "snap-0000000000000002-0000000000000000-00000000-9999999999999999.delta",
    ]) {
      const dir = freshDir();
      const adapter = await loaded(dir);
      await adapter.append([kvRecord(1)]);
      await adapter.close();
      await writeFile(join(dir, name), new Uint8Array(0));
      const before = (await readdir(dir)).sort();
      const again = await openFilePersistence(dir);
      const error = await again.load().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: "ERR_CORRUPT" });
      expect((error as Error).message).toContain(name);
      expect((error as Error).message).toMatch(/move it out of the directory\.$/);
      expect((await readdir(dir)).filter((n) => !n.startsWith("lock-")).sort()).toEqual(
        before.filter((n) => !n.startsWith("lock-")),
      );
      await again.close();
    }
  });
});

describe("FilePersistence: snapshots and metadata", () => {
  it("load: a leftover temp file from an interrupted snapshot is ignored and removed", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append([kvRecord(1)]);
    await adapter.writeSnapshot({ seq: 1, timeMs: 5 }, new Uint8Array([1]));
    await adapter.close();
    const tmp = "snap-0000000000000001-0000000000000009-00000000.sqlite.tmp";
    await writeFile(join(dir, tmp), new Uint8Array([9, 9, 9]));
    await writeFile(join(dir, "meta.tmp"), new Uint8Array([1]));
    const again = await openFilePersistence(dir);
    const result = await again.load();
    expect(result.snapshots).toEqual([{ seq: 1, timeMs: 5, bytes: 1 }]);
    expect(await again.readMeta()).toBeNull();
    expect((await readdir(dir)).some((n) => n.endsWith(".tmp"))).toBe(false);
    await again.close();
  });

  it("readSnapshot: a damaged image is ERR_CORRUPT", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    await adapter.append([kvRecord(1)]);
    await adapter.writeSnapshot({ seq: 1, timeMs: 5 }, new Uint8Array([1, 2, 3, 4]));
    const name = (await readdir(dir)).find((n) => n.startsWith("snap-")) as string;
    await truncate(join(dir, name), 2);
    await expect(adapter.readSnapshot(1)).rejects.toMatchObject({ code: "ERR_CORRUPT" });
    await adapter.close();
  });

  it("readMeta: a damaged meta file is ERR_CORRUPT", async () => {
    const dir = freshDir();
    const adapter = await loaded(dir);
    expect(await adapter.writeMetaIf(0, new TextEncoder().encode('{"restoreToSeq":3}'))).toBe(true);
    await appendFile(join(dir, "meta"), "x");
    await expect(adapter.readMeta()).rejects.toMatchObject({ code: "ERR_CORRUPT" });
    await adapter.close();
  });
});

describe("FilePersistence: ownership", () => {
  it("load: a second adapter on the same directory is refused with ERR_LOCKED until the first closes", async () => {
    const dir = freshDir();
    const first = await loaded(dir);
    await first.append([kvRecord(1)]);
    const second = await openFilePersistence(dir);
    await expect(second.load()).rejects.toMatchObject({
      code: "ERR_LOCKED",
      message: expect.stringContaining(`process ${process.pid} on host`),
    });
    // The refused adapter cannot write, and the holder is undisturbed.
    await expect(second.append([kvRecord(2)])).rejects.toMatchObject({ code: "ERR_CLOSED" });
    await first.append([kvRecord(2)]);
    expect(await first.holdsLock()).toBe(true);
    await first.close();
    expect(await first.holdsLock()).toBe(false);
    expect((await second.load()).lastSeq).toBe(2);
    await second.append([kvRecord(3)]);
    await second.close();
  });

  it("readOnly: every write rejects with ERR_CLOSED, as a read-only S3 adapter's does, and nothing changes", async () => {
    const dir = freshDir();
    const writer = await loaded(dir);
    await writer.append([kvRecord(1)]);
    await writer.close();
    const reader = await openFilePersistence(dir, { readOnly: true });
    expect((await reader.load()).lastSeq).toBe(1);
    const before = (await readdir(dir)).sort();
    const refused = { code: "ERR_CLOSED", message: expect.stringContaining("was opened with readOnly: true") };
    await expect(reader.append([kvRecord(2)])).rejects.toMatchObject(refused);
    await expect(reader.writeSnapshot({ seq: 1, timeMs: 0 }, new Uint8Array(8))).rejects.toMatchObject(refused);
    await expect(reader.writeMetaIf(0, new Uint8Array(1))).rejects.toMatchObject(refused);
    await expect(reader.prune(1)).rejects.toMatchObject(refused);
    expect((await readdir(dir)).sort()).toEqual(before);
    await reader.close();
  });

  it("openFilePersistence: rejects a bad segment size", async () => {
    await expect(openFilePersistence(freshDir(), { segmentBytes: 0 })).rejects.toMatchObject({
      code: "ERR_INVALID_OPTION",
    });
  });
});

describe("FilePersistence: parity with MemoryPersistence", () => {
  type Op =
    | { kind: "append"; count: number }
    | { kind: "snapshot" }
    | { kind: "prune"; back: number }
    | { kind: "reopen" }
    | { kind: "read"; from: number; to: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 5, arbitrary: fc.integer({ min: 1, max: 4 }).map((count) => ({ kind: "append" as const, count })) },
    { weight: 1, arbitrary: fc.constant({ kind: "snapshot" as const }) },
    { weight: 1, arbitrary: fc.nat(10).map((back) => ({ kind: "prune" as const, back })) },
    { weight: 1, arbitrary: fc.constant({ kind: "reopen" as const }) },
    { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.nat()).map(([from, to]) => ({ kind: "read" as const, from, to })) },
  );

  it("random histories: load() and readRecords() agree", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
        const dir = freshDir();
        const memory = createMemoryPersistence();
        let file: FilePersistence = await openFilePersistence(dir, { segmentBytes: 120 });
        let seq = 0;
        let base = 0;
        type WithRecords = LoadResult & { records: CommitRecord[] };
        // Each adapter claims its own epochs (the lock's generation, a count of loads): not compared.
        const withoutEpoch = ({ epoch: _, ...rest }: WithRecords) => rest;
        expect(withoutEpoch(await loadWithRecords(file))).toEqual(withoutEpoch(await loadWithRecords(memory)));
        // The file adapter also keeps the snapshot before the newest (its fallback) and the log after
        // it; past that, both must hold exactly the same.
        const sameAs = async (fileLoad: WithRecords, memoryLoad: WithRecords) => {
          const from = memoryLoad.snapshots[0]?.seq ?? 0;
          expect({
            ...withoutEpoch(fileLoad),
            snapshots: fileLoad.snapshots.filter((x) => x.seq >= from),
            records: fileLoad.records.filter((r) => r.seq > from),
          }).toEqual(withoutEpoch(memoryLoad));
          expect(fileLoad.snapshots.length).toBeLessThanOrEqual(memoryLoad.snapshots.length + 1);
        };
        for (const o of ops) {
          if (o.kind === "append") {
            const batch = range(seq + 1, seq + o.count).map((s) => kvRecord(s));
            seq += o.count;
            await Promise.all([memory.append(batch), file.append(batch)]);
          } else if (o.kind === "snapshot") {
            const image = new Uint8Array([seq & 0xff, 1]);
            await Promise.all([
              memory.writeSnapshot({ seq, timeMs: seq }, image),
              file.writeSnapshot({ seq, timeMs: seq }, image),
            ]);
          } else if (o.kind === "prune") {
            const keep = Math.max(0, seq - o.back);
            await Promise.all([memory.prune(keep), file.prune(keep)]);
            const m = await loadWithRecords(memory);
            base = Math.max(base, m.snapshots[0]?.seq ?? 0);
          } else if (o.kind === "reopen") {
            await file.close();
            file = await openFilePersistence(dir, { segmentBytes: 120 });
            await sameAs(await loadWithRecords(file), { ...(await loadWithRecords(memory)), truncatedBytes: 0 });
          } else if (seq > base) {
            // Reads inside what both must keep (the file adapter may keep more: whole segments).
            const from = base + (o.from % (seq - base));
            const to = from + (o.to % (seq - from + 1));
            expect(await file.readRecords(from, to)).toEqual(await memory.readRecords(from, to));
          }
        }
        await sameAs(await loadWithRecords(file), await loadWithRecords(memory));
        await file.close();
        await rm(dir, { recursive: true, force: true });
      }),
      { numRuns: 30 },
    );
  });
});

describe("FilePersistence: the directory lock is the fence", () => {
  const newestLock = async (dir: string): Promise<string> =>
    (await readdir(dir))
      .filter((n) => /^lock-\d{16}$/.test(n))
      .sort()
      .at(-1) as string;

  it("the epoch is the lock's generation, and each load of the directory takes a newer one", async () => {
    const dir = freshDir();
    const a = await loaded(dir);
    expect(a.epoch).toBe(Number((await newestLock(dir)).slice(5)));
    await a.close();
    const b = await loaded(dir);
    expect(b.epoch).toBeGreaterThan(a.epoch as number);
    await b.close();
  });

  it("a writer whose lock was taken over is fenced: nothing after the newer claim is confirmed, and it stays fenced", async () => {
    const dir = freshDir();
    const a = await loaded(dir);
    await a.append([kvRecord(1), kvRecord(2)]);
    expect(await a.writeMetaIf(0, new Uint8Array([1]))).toBe(true);
    const mine = await newestLock(dir);
    const generation = Number(mine.slice(5));
    // What a process that judged this holder gone would leave: the next generation of the lock.
    await writeFile(join(dir, `lock-${String(generation + 1).padStart(16, "0")}`), await readFile(join(dir, mine)));
    const appendError = await a.append([kvRecord(3)]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isFencedError(appendError)).toBe(true);
    expect(appendError).toMatchObject({ code: "ERR_FENCED" });
    expect((appendError as Error).message).toContain(`epoch ${generation + 1}`);
    for (const call of [
      () => a.append([kvRecord(4)]),
      () => a.writeSnapshot({ seq: 2, timeMs: 0 }, new Uint8Array(1)),
      () => a.writeMetaIf(1, new Uint8Array([2])),
      () => a.prune(0),
      () => a.load(),
    ])
      await expect(call()).rejects.toMatchObject({ code: "ERR_FENCED" });
    // The metadata did not change after the claim either.
    expect(await a.readMeta()).toEqual(new Uint8Array([1]));
    await a.close();
  });

  it("a snapshot or metadata write that lands after a takeover is not confirmed", async () => {
    const dir = freshDir();
    const a = await loaded(dir);
    await a.append([kvRecord(1)]);
    const mine = await newestLock(dir);
    await writeFile(
      join(dir, `lock-${String(Number(mine.slice(5)) + 1).padStart(16, "0")}`),
      await readFile(join(dir, mine)),
    );
    await expect(a.writeSnapshot({ seq: 1, timeMs: 0 }, new Uint8Array([1]))).rejects.toMatchObject({
      code: "ERR_FENCED",
    });
    await expect(a.writeMetaIf(0, new Uint8Array([1]))).rejects.toMatchObject({ code: "ERR_FENCED" });
    await a.close();
  });
});
