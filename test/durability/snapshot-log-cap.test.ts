/**
 * The fixed log cap (`snapshotLogCapBytes`): a snapshot is due once the log since the newest one
 * reaches the cap, whatever the database's size, so an open replays at most that much; and the
 * thinning that keeps the many snapshots this takes from filling the disk never costs a restore
 * inside the retention window its exactness. Time comes from a FakeClock; nothing here sleeps or
 * times anything.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { DelegatingPersistence, thinsSnapshots } from "../../src/durability/delegating-persistence";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { IndexedDbPersistence } from "../../src/durability/indexeddb-persistence";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import type { PersistenceAdapter } from "../../src/durability/persistence";
import { planThinning, type ThinningCandidate, thinnableSeqs } from "../../src/durability/retention";
import type { SqlEngineFactory } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { s3Persistence } from "../../src/s3/s3-persistence";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { DEFAULT_SNAPSHOT_LOG_CAP_BYTES, loggedBytes } from "../../src/storage/snapshots";
import { FakeClock } from "../../src/util/clock";

/** Records every snapshot written and every snapshot thinned. */
class Recording extends DelegatingPersistence {
  readonly written: number[] = [];
  readonly thinned: number[] = [];
  override async writeSnapshot(info: { seq: number; timeMs: number }, image: Uint8Array): Promise<void> {
    await super.writeSnapshot(info, image);
    this.written.push(info.seq);
  }
  /** Sees each thinning request before it reaches the adapter. */
  beforeThin: ((seqs: readonly number[]) => void) | undefined;
  override async thinSnapshots(seqs: readonly number[]): Promise<number[]> {
    this.beforeThin?.(seqs);
    const gone = await super.thinSnapshots(seqs);
    this.thinned.push(...gone);
    return gone;
  }
}

/** A seeded PRNG (mulberry32): the workload is the same on every run. */
class Rng {
  #a: number;
  constructor(seed: number) {
    this.#a = seed >>> 0;
  }
  nextFloat(): number {
    this.#a = (this.#a + 0x6d2b79f5) >>> 0;
    let t = this.#a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}

let factory: SqlEngineFactory | undefined;
const NO_RECORD_RULE = 1_000_000_000;

async function open(persistence: PersistenceAdapter, clock: FakeClock, extra: Record<string, number> = {}) {
  factory ??= await loadSqlJsEngine();
  return ObjectStorage.open({
    persistence,
    clock,
    engineFactory: factory,
    snapshotEveryRecords: NO_RECORD_RULE,
    ...extra,
  });
}

/** Ends the session as a crash would (nothing more is written) and opens the next one. */
async function restart(storage: ObjectStorage, persistence: PersistenceAdapter, clock: FakeClock, extra = {}) {
  storage.abort();
  await coreOf(storage).settled();
  return open(persistence, clock, extra);
}

/** `n` batches of one put each, values of pseudo-random size (1–6 KiB) and content. */
async function writeBatches(storage: ObjectStorage, clock: FakeClock, rng: Rng, n: number) {
  for (let i = 0; i < n; i++) {
    const value = new Uint8Array(1024 + Math.floor(rng.nextFloat() * 5 * 1024));
    for (let j = 0; j < value.length; j += 97) value[j] = Math.floor(rng.nextFloat() * 256);
    await storage.put(`k${Math.floor(rng.nextFloat() * 40)}`, value);
    await storage.sync();
    await clock.advance(1000);
  }
}

/** The log bytes (as the snapshot rule counts them) of the records after `fromSeq`. */
async function logBytesAfter(persistence: PersistenceAdapter, fromSeq: number, toSeq: number): Promise<number[]> {
  const records: CommitRecord[] = await persistence.readRecords(fromSeq, toSeq);
  return records.map(loggedBytes);
}

describe("snapshotLogCapBytes: the log since the newest snapshot is bounded", () => {
  const CAP = 48 * 1024;

  it("a snapshot is taken by the commit that brings the log since the last one to the cap", async () => {
    const clock = new FakeClock();
    const persistence = new Recording(createMemoryPersistence());
    const storage = await open(persistence, clock, { snapshotLogCapBytes: CAP });
    await writeBatches(storage, clock, new Rng(7), 120);
    await coreOf(storage).settled();
    const lastSeq = coreOf(storage).lastSeq;

    // Where the rule says snapshots are due, computed from the log itself.
    const sizes = await logBytesAfter(persistence, 0, lastSeq);
    const expected: number[] = [];
    let since = 0;
    sizes.forEach((bytes, i) => {
      since += bytes;
      if (since >= CAP) {
        expected.push(i + 1);
        since = 0;
      }
    });
    expect(expected.length).toBeGreaterThanOrEqual(5);
    expect(persistence.written).toEqual([0, ...expected]);
    await storage.close();
  });

  it("without the cap the same log takes no snapshot (half the database, at least 8 MiB, comes later)", async () => {
    const clock = new FakeClock();
    const persistence = new Recording(createMemoryPersistence());
    const storage = await open(persistence, clock, { snapshotLogCapBytes: 2 ** 40 });
    await writeBatches(storage, clock, new Rng(7), 120);
    await coreOf(storage).settled();
    expect(persistence.written).toEqual([0]);
    await storage.close();
  });

  it("an open replays less than the cap of log, across sessions, and rebuilds the same state", async () => {
    const clock = new FakeClock();
    const memory = createMemoryPersistence();
    let storage = await open(memory, clock, { snapshotLogCapBytes: CAP });
    const rng = new Rng(11);
    for (let session = 0; session < 6; session++) {
      await writeBatches(storage, clock, rng, 17 + session * 9);
      const live = await storage.list();
      storage = await restart(storage, memory, clock, { snapshotLogCapBytes: CAP });
      expect(await storage.list()).toEqual(live);
      // What the open just replayed: the records after the newest snapshot.
      const core = coreOf(storage);
      const newest = core.snapshots[core.snapshots.length - 1]?.seq ?? 0;
      const replayed = await logBytesAfter(memory, newest, core.lastSeq);
      expect(replayed.reduce((a, b) => a + b, 0)).toBeLessThan(CAP);
    }
    // The whole history was many caps long: the bound is the cap's doing.
    const all = await logBytesAfter(memory, coreOf(storage).timeline.firstSeq, coreOf(storage).lastSeq);
    expect(all.reduce((a, b) => a + b, 0)).toBeGreaterThan(5 * CAP);
    await storage.close();
  });
});

describe("the default cap applies only where snapshots can be thinned", () => {
  const CAP_SET = 123_456;
  /** An adapter that keeps every snapshot: the in-memory one with its thinning hidden. */
  const keepsAll = (): PersistenceAdapter =>
    new Proxy(createMemoryPersistence(), {
      get: (target, property) => {
        if (property === "thinSnapshots") return undefined;
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });

  it("the file and in-memory adapters thin, also behind a wrapper; S3, IndexedDB and a wrapper over an adapter that keeps all do not", async () => {
    const dir = await mkdtemp(join(tmpdir(), "log-cap-thins-"));
    try {
      const file = await openFilePersistence(dir);
      expect(thinsSnapshots(file)).toBe(true);
      await file.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(thinsSnapshots(createMemoryPersistence())).toBe(true);
    expect(thinsSnapshots(new DelegatingPersistence(createMemoryPersistence()))).toBe(true);
    expect(thinsSnapshots(keepsAll())).toBe(false);
    expect(thinsSnapshots(new DelegatingPersistence(keepsAll()))).toBe(false);
    expect(thinsSnapshots(new DelegatingPersistence(new DelegatingPersistence(keepsAll())))).toBe(false);
    // A wrapper with its own thinSnapshots decides for itself.
    expect(thinsSnapshots(new Recording(keepsAll()))).toBe(true);
    expect(thinsSnapshots(Object.create(IndexedDbPersistence.prototype) as PersistenceAdapter)).toBe(false);
    const s3 = s3Persistence({
      endpoint: "http://127.0.0.1:9",
      bucket: "bbb",
      credentials: { accessKeyId: "k", secretAccessKey: "s" },
    });
    expect(thinsSnapshots(s3)).toBe(false);
  });

  it("the cap an open uses: the default where the adapter thins, none where it keeps every snapshot, the option's value either way", async () => {
    const cases: [PersistenceAdapter, Record<string, number>, number][] = [
      [createMemoryPersistence(), {}, DEFAULT_SNAPSHOT_LOG_CAP_BYTES],
      [new DelegatingPersistence(createMemoryPersistence()), {}, DEFAULT_SNAPSHOT_LOG_CAP_BYTES],
      [keepsAll(), {}, Number.POSITIVE_INFINITY],
      [new DelegatingPersistence(keepsAll()), {}, Number.POSITIVE_INFINITY],
      [keepsAll(), { snapshotLogCapBytes: CAP_SET }, CAP_SET],
      [createMemoryPersistence(), { snapshotLogCapBytes: CAP_SET }, CAP_SET],
    ];
    for (const [persistence, extra, cap] of cases) {
      const storage = await open(persistence, new FakeClock(), extra);
      expect(coreOf(storage).settings.snapshotLogCapBytes).toBe(cap);
      await storage.close();
    }
  });
});

describe("thinning inside the retention window", () => {
  it("every bookmark inside the window restores exactly after thinning and pruning", async () => {
    const WINDOW = 60_000;
    const CAP = 24 * 1024;
    const options = { snapshotLogCapBytes: CAP, retentionMs: WINDOW };
    const clock = new FakeClock();
    const persistence = new Recording(createMemoryPersistence());
    let storage = await open(persistence, clock, options);
    const rng = new Rng(23);
    const states: { bookmark: string; timeMs: number; state: Map<string, unknown> }[] = [];
    // Each request spares the base: the newest snapshot at or before the window's start.
    const askedForBase: number[] = [];
    persistence.beforeThin = (seqs) => {
      const core = coreOf(storage);
      const keepFrom = core.timeline.findSeqForTime(clock.now() - WINDOW) ?? core.timeline.firstSeq;
      const base = core.snapshots.filter((x) => x.seq <= keepFrom).at(-1)?.seq ?? core.snapshots[0]?.seq ?? 0;
      askedForBase.push(...seqs.filter((seq) => seq <= base));
    };
    for (let i = 0; i < 150; i++) {
      await writeBatches(storage, clock, rng, 1);
      if (i % 3 === 0) await storage.delete(`k${Math.floor(rng.nextFloat() * 40)}`);
      states.push({ bookmark: await storage.getCurrentBookmark(), timeMs: clock.now(), state: await storage.list() });
      if (i === 70) storage = await restart(storage, persistence, clock, options);
    }
    await coreOf(storage).settled();
    // Thinning ran, and only ever inside what prune keeps: the oldest snapshot held stays.
    expect(persistence.thinned.length).toBeGreaterThan(0);
    const held = coreOf(storage).snapshots.map((s) => s.seq);
    expect(askedForBase).toEqual([]);
    // Fewer snapshots held than were taken inside the window.
    const keepFrom = coreOf(storage).timeline.findSeqForTime(clock.now() - WINDOW) ?? 0;
    expect(held.length).toBeLessThan(persistence.written.filter((seq) => seq >= keepFrom).length);

    const inWindow = states.filter((s) => s.timeMs >= clock.now() - WINDOW);
    expect(inWindow.length).toBeGreaterThan(40);
    // The oldest state in the window, the newest, and a spread in between.
    const picks = inWindow.filter((_, i) => i === 0 || i === inWindow.length - 1 || i % 5 === 2);
    for (const { bookmark, state } of picks) {
      await storage.onNextSessionRestoreBookmark(bookmark);
      storage = await restart(storage, persistence, clock, options);
      expect(await storage.list(), bookmark).toEqual(state);
    }
    await storage.close();
  });
});

describe("thinning with the file adapter", () => {
  it("deletes the thinned snapshot files, and the next session opens and restores exactly from what is left", async () => {
    const dir = await mkdtemp(join(tmpdir(), "actorstore-thin-"));
    try {
      const options = { snapshotLogCapBytes: 24 * 1024 };
      const clock = new FakeClock();
      const file = new Recording(await openFilePersistence(dir));
      let storage = await open(file, clock, options);
      await writeBatches(storage, clock, new Rng(5), 30);
      const middle = { bookmark: await storage.getCurrentBookmark(), state: await storage.list() };
      await writeBatches(storage, clock, new Rng(6), 30);
      await coreOf(storage).settled();
      const live = await storage.list();
      await storage.close();
      expect(file.thinned.length).toBeGreaterThan(0);
      // On disk: none of the thinned snapshots, the first one (seq 0) still, fewer than were written.
      const onDisk = (await readdir(dir))
        .filter((n) => n.startsWith("snap-") && n.endsWith(".sqlite"))
        .map((n) => Number(n.split("-")[1]));
      expect(onDisk.filter((seq) => file.thinned.includes(seq))).toEqual([]);
      expect(onDisk).toContain(0);
      expect(onDisk.length).toBe(file.written.length - file.thinned.length);
      storage = await open(await openFilePersistence(dir), clock, options);
      expect(await storage.list()).toEqual(live);
      await storage.onNextSessionRestoreBookmark(middle.bookmark);
      await storage.close();
      storage = await open(await openFilePersistence(dir), clock, options);
      expect(await storage.list()).toEqual(middle.state);
      await storage.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

const candidates = fc
  .array(
    fc.record({
      gapSeq: fc.integer({ min: 1, max: 50 }),
      gapBytes: fc.integer({ min: 0, max: 4000 }),
      bytes: fc.integer({ min: 1, max: 8000 }),
      known: fc.boolean(),
    }),
    { maxLength: 30 },
  )
  .map((rows) => {
    let seq = 0;
    let at = 0;
    return rows.map((r): ThinningCandidate => {
      seq += r.gapSeq;
      at += r.gapBytes;
      return { seq, bytes: r.bytes, logBytesAt: r.known ? at : undefined };
    });
  });

describe("planThinning", () => {
  it("keeps the base, what is older, the two newest and unknown ones, and leaves kept snapshots no further apart than the spacing", () => {
    fc.assert(
      fc.property(
        candidates,
        fc.integer({ min: 0, max: 1600 }),
        fc.integer({ min: 1, max: 6000 }),
        fc.integer({ min: 1, max: 200 }),
        (snaps, keepFromSeq, floor, maxRecords) => {
          const spacing = { maxLogBytes: (image: number) => Math.max(floor, image / 2), maxRecords };
          const doomed = new Set(planThinning(snaps, keepFromSeq, spacing));
          let baseIndex = 0;
          snaps.forEach((s, i) => {
            if (s.seq <= keepFromSeq) baseIndex = i;
          });
          snaps.forEach((s, i) => {
            const spared = i <= baseIndex || i >= snaps.length - 2 || s.logBytesAt === undefined;
            if (spared) expect(doomed.has(s.seq)).toBe(false);
          });
          // Between two kept snapshots with thinned ones in between, a restore replays at most the spacing.
          const kept = snaps.filter((s) => !doomed.has(s.seq));
          for (let i = 1; i < kept.length; i++) {
            const [p, n] = [kept[i - 1] as ThinningCandidate, kept[i] as ThinningCandidate];
            if (!snaps.some((s) => doomed.has(s.seq) && s.seq > p.seq && s.seq < n.seq)) continue;
            expect((n.logBytesAt as number) - (p.logBytesAt as number)).toBeLessThanOrEqual(
              spacing.maxLogBytes(n.bytes),
            );
            expect(n.seq - p.seq).toBeLessThanOrEqual(maxRecords);
          }
        },
      ),
    );
  });

  it("thins a run of snapshots taken every cap to the spacing", () => {
    // 40 snapshots 1 MiB of log apart, images of 16 MiB: half the image is 8 MiB, so every 8th stays.
    const MiB = 2 ** 20;
    const snaps = Array.from({ length: 40 }, (_, i) => ({ seq: i * 10, bytes: 16 * MiB, logBytesAt: i * MiB }));
    const doomed = planThinning(snaps, 0, { maxLogBytes: (image) => image / 2, maxRecords: 10_000 });
    const kept = snaps.map((s) => s.seq).filter((seq) => !doomed.includes(seq));
    expect(kept).toEqual([0, 80, 160, 240, 320, 380, 390]);
  });

  it("an adapter never thins its oldest snapshot or its two newest", () => {
    expect(thinnableSeqs([0, 5, 9, 12, 20], [0, 5, 9, 12, 20, 33])).toEqual([5, 9]);
    expect(thinnableSeqs([0, 5], [0, 5])).toEqual([]);
  });
});
