/**
 * The PersistenceAdapter contract as one suite, run against every adapter (memory, file, IndexedDB,
 * S3 against a fake and against Ceph), so the
 * default in-memory adapter cannot drift from the durable one.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { DelegatingPersistence } from "../../src/durability/delegating-persistence";
import {
  loadWithRecords,
  type PersistenceAdapter,
  STREAM_CHUNK_RECORDS,
  streamCommitTimes,
  updateMeta,
} from "../../src/durability/persistence";
import { ObjectStorage } from "../../src/storage/object-storage";

/** A fresh adapter, and a way to get the adapter a restarted object would use for the same data. */
export interface AdapterHarness {
  adapter: PersistenceAdapter;
  /** Closes `adapter` and returns one over the same data (the same instance for memory). */
  reopen(): Promise<PersistenceAdapter>;
}

const T0 = 1_767_225_600_000;

/** A small key-value record. */
export function kvRecord(seq: number, extra: Partial<CommitRecord> = {}): CommitRecord {
  return {
    seq,
    timeMs: T0 + seq * 1000,
    reset: false,
    sql: [],
    kv: [{ key: `key:${seq}`, value: new TextEncoder().encode(`value ${seq}`) }],
    ...extra,
  };
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/**
 * Counts what an adapter's stream handed out and what the reader actually used: a record counts as
 * applied when its SQL is read (replay reads it; buffering a chunk does not).
 */
class StreamWatcher extends DelegatingPersistence {
  yielded = 0;
  applied = 0;
  /** The most records yielded but not yet applied, at any moment a chunk was handed out. */
  maxOutstanding = 0;

  override async *streamRecords(fromSeq: number, toSeq: number): AsyncIterable<readonly CommitRecord[]> {
    for await (const chunk of this.inner.streamRecords(fromSeq, toSeq)) {
      const watched = chunk.map((r) => this.#watch(r));
      this.yielded += watched.length;
      this.maxOutstanding = Math.max(this.maxOutstanding, this.yielded - this.applied);
      yield watched;
    }
  }

  #watch(record: CommitRecord): CommitRecord {
    let used = false;
    const copy = { ...record };
    Object.defineProperty(copy, "sql", {
      enumerable: true,
      get: () => {
        if (!used) {
          used = true;
          this.applied++;
        }
        return record.sql;
      },
    });
    return copy;
  }
}

export function describeAdapterContract(name: string, createHarness: () => Promise<AdapterHarness>): void {
  describe(`${name}: PersistenceAdapter contract`, () => {
    // Every adapter a test opened (and each one a reopen gave) is closed after the test: a file
    // adapter's descriptors are released by close(), not left to the garbage collector.
    let opened: PersistenceAdapter[] = [];
    const create = async (): Promise<AdapterHarness> => {
      const h = await createHarness();
      opened.push(h.adapter);
      return {
        adapter: h.adapter,
        reopen: async () => {
          const again = await h.reopen();
          opened.push(again);
          return again;
        },
      };
    };
    afterEach(async () => {
      const all = [...new Set(opened)];
      opened = [];
      // A test may have closed some already, or been fenced: closing is clean-up here, not a check.
      for (const adapter of all) await adapter.close().catch(() => undefined);
    });

    it("load: an empty store has no snapshots, records or meta", async () => {
      const { adapter } = await create();
      // An adapter that fences also reports the epoch this load claimed.
      const { epoch, ...loaded } = await adapter.load();
      expect(loaded).toEqual({ snapshots: [], truncatedBytes: 0, lastSeq: 0 });
      if (epoch !== undefined) expect(epoch).toBe(adapter.epoch);
      expect((await loadWithRecords(adapter)).records).toEqual([]);
      expect(await adapter.readMeta()).toBeNull();
    });

    it("append: rejects before load()", async () => {
      const { adapter } = await create();
      await expect(adapter.append([kvRecord(1)])).rejects.toMatchObject({ code: "ERR_CLOSED" });
    });

    it("append: records survive a reopen, in order", async () => {
      const h = await create();
      await h.adapter.load();
      await h.adapter.append([kvRecord(1)]);
      await h.adapter.append([kvRecord(2), kvRecord(3)]);
      const again = await h.reopen();
      const loaded = await loadWithRecords(again);
      expect(loaded.records).toEqual([kvRecord(1), kvRecord(2), kvRecord(3)]);
      expect(loaded.lastSeq).toBe(3);
      await again.append([kvRecord(4)]);
      expect((await again.readRecords(0, 4)).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    });

    it("append: concurrent calls keep call order", async () => {
      const h = await create();
      await h.adapter.load();
      await Promise.all(range(1, 50).map((seq) => h.adapter.append([kvRecord(seq)])));
      const loaded = await loadWithRecords(await h.reopen());
      expect(loaded.records.map((r) => r.seq)).toEqual(range(1, 50));
    });

    it("append: a gap or a repeat is rejected without breaking later appends", async () => {
      const h = await create();
      await h.adapter.load();
      await h.adapter.append([kvRecord(1)]);
      await expect(h.adapter.append([kvRecord(3)])).rejects.toThrow(/expected the record with seq 2/);
      await expect(h.adapter.append([kvRecord(1)])).rejects.toThrow(RangeError);
      await h.adapter.append([kvRecord(2)]);
      expect((await (await h.reopen()).load()).lastSeq).toBe(2);
    });

    it("append: an empty batch resolves and stores nothing", async () => {
      const h = await create();
      await h.adapter.load();
      await h.adapter.append([]);
      expect((await h.adapter.load()).lastSeq).toBe(0);
    });

    it("writeSnapshot: images round-trip and load lists them oldest first", async () => {
      const h = await create();
      await h.adapter.load();
      await h.adapter.append(range(1, 5).map((s) => kvRecord(s)));
      await h.adapter.writeSnapshot({ seq: 4, timeMs: T0 + 4000 }, new Uint8Array([4, 4, 4]));
      await h.adapter.writeSnapshot({ seq: 2, timeMs: T0 + 2000 }, new Uint8Array([2, 2]));
      const again = await h.reopen();
      const loaded = await loadWithRecords(again);
      expect(loaded.snapshots).toEqual([
        { seq: 2, timeMs: T0 + 2000, bytes: 2 },
        { seq: 4, timeMs: T0 + 4000, bytes: 3 },
      ]);
      // Records after the oldest snapshot only.
      expect(loaded.records.map((r) => r.seq)).toEqual([3, 4, 5]);
      expect(await again.readSnapshot(4)).toEqual(new Uint8Array([4, 4, 4]));
      expect(await again.readSnapshot(2)).toEqual(new Uint8Array([2, 2]));
    });

    it("writeSnapshot: a second image of the same seq replaces the first", async () => {
      const h = await create();
      await h.adapter.load();
      await h.adapter.append([kvRecord(1)]);
      await h.adapter.writeSnapshot({ seq: 1, timeMs: T0 }, new Uint8Array([1]));
      await h.adapter.writeSnapshot({ seq: 1, timeMs: T0 }, new Uint8Array([9, 9]));
      const again = await h.reopen();
      expect((await again.load()).snapshots).toEqual([{ seq: 1, timeMs: T0, bytes: 2 }]);
      expect(await again.readSnapshot(1)).toEqual(new Uint8Array([9, 9]));
    });

    it("writeSnapshot: the caller may reuse its buffer afterwards", async () => {
      const h = await create();
      await h.adapter.load();
      await h.adapter.append([kvRecord(1)]);
      const image = new Uint8Array([1, 2, 3]);
      await h.adapter.writeSnapshot({ seq: 1, timeMs: T0 }, image);
      image.fill(0);
      expect(await h.adapter.readSnapshot(1)).toEqual(new Uint8Array([1, 2, 3]));
    });

    it("writeSnapshot: rejects a seq that was never appended", async () => {
      const h = await create();
      await h.adapter.load();
      await h.adapter.append([kvRecord(1)]);
      await expect(h.adapter.writeSnapshot({ seq: 2, timeMs: T0 }, new Uint8Array(1))).rejects.toThrow(
        /log ends at seq 1/,
      );
    });

    it("writeSnapshot: waits for appends queued before it", async () => {
      const h = await create();
      await h.adapter.load();
      const appended = h.adapter.append([kvRecord(1)]);
      await h.adapter.writeSnapshot({ seq: 1, timeMs: T0 }, new Uint8Array([1]));
      await appended;
    });

    it("readSnapshot: a missing snapshot rejects with ERR_CORRUPT", async () => {
      const h = await create();
      await h.adapter.load();
      await expect(h.adapter.readSnapshot(7)).rejects.toMatchObject({ code: "ERR_CORRUPT" });
    });

    it("readRecords: returns fromSeq < seq <= toSeq", async () => {
      const h = await create();
      await h.adapter.load();
      await h.adapter.append(range(1, 10).map((s) => kvRecord(s)));
      expect((await h.adapter.readRecords(3, 7)).map((r) => r.seq)).toEqual([4, 5, 6, 7]);
      expect(await h.adapter.readRecords(5, 5)).toEqual([]);
      expect(await h.adapter.readRecords(0, 1)).toEqual([kvRecord(1)]);
      await expect(h.adapter.readRecords(8, 11)).rejects.toMatchObject({ code: "ERR_BOOKMARK" });
      await expect(h.adapter.readRecords(5, 3)).rejects.toThrow(RangeError);
    });

    it("prune: keeps the newest snapshot at or before keepFromSeq, later snapshots and records after it", async () => {
      const h = await create();
      await h.adapter.load();
      for (const seq of range(1, 30)) {
        await h.adapter.append([kvRecord(seq)]);
        if (seq % 10 === 0) await h.adapter.writeSnapshot({ seq, timeMs: T0 + seq * 1000 }, new Uint8Array([seq]));
      }
      await h.adapter.prune(25);
      const again = await h.reopen();
      const loaded = await loadWithRecords(again);
      expect(loaded.snapshots.map((s) => s.seq)).toEqual([20, 30]);
      expect(loaded.records.map((r) => r.seq)).toEqual(range(21, 30));
      expect(loaded.lastSeq).toBe(30);
      expect((await again.readRecords(20, 30)).map((r) => r.seq)).toEqual(range(21, 30));
      await expect(again.readSnapshot(10)).rejects.toMatchObject({ code: "ERR_CORRUPT" });
      await again.append([kvRecord(31)]);
    });

    it("thinSnapshots (optional): deletes what is asked but the oldest and the two newest, keeps every record", async () => {
      const h = await create();
      await h.adapter.load();
      if (h.adapter.thinSnapshots === undefined) return;
      for (const seq of range(1, 50)) {
        await h.adapter.append([kvRecord(seq)]);
        if (seq % 10 === 0) await h.adapter.writeSnapshot({ seq, timeMs: T0 + seq * 1000 }, new Uint8Array([seq]));
      }
      expect(await h.adapter.thinSnapshots([10, 20, 40, 50, 77])).toEqual([20]);
      const again = await h.reopen();
      const loaded = await loadWithRecords(again);
      expect(loaded.snapshots.map((s) => s.seq)).toEqual([10, 30, 40, 50]);
      expect(loaded.records.map((r) => r.seq)).toEqual(range(11, 50));
      expect(await again.readSnapshot(30)).toEqual(new Uint8Array([30]));
      await expect(again.readSnapshot(20)).rejects.toMatchObject({ code: "ERR_CORRUPT" });
      await again.append([kvRecord(51)]);
    });

    it("prune: without a snapshot old enough nothing is deleted", async () => {
      const h = await create();
      await h.adapter.load();
      await h.adapter.append(range(1, 10).map((s) => kvRecord(s)));
      await h.adapter.writeSnapshot({ seq: 8, timeMs: T0 }, new Uint8Array([8]));
      await h.adapter.prune(5);
      expect((await h.adapter.readRecords(0, 10)).length).toBe(10);
      expect((await h.adapter.load()).snapshots.map((s) => s.seq)).toEqual([8]);
    });

    it("writeMetaIf: stores, replaces and deletes the metadata durably, each write a compare-and-swap", async () => {
      const h = await create();
      await h.adapter.load();
      expect(await h.adapter.writeMetaIf(0, new Uint8Array([1, 2, 3]))).toBe(true);
      let again = await h.reopen();
      await again.load();
      expect(await again.readMeta()).toEqual(new Uint8Array([1, 2, 3]));
      const v1 = await again.readMetaVersion();
      expect(v1.version).toBeGreaterThan(0);
      expect(await again.writeMetaIf(v1.version, new Uint8Array([4]))).toBe(true);
      expect(await again.readMeta()).toEqual(new Uint8Array([4]));
      // A writer that read version v1 and lost the race changes nothing.
      expect(await again.writeMetaIf(v1.version, new Uint8Array([5]))).toBe(false);
      expect(await again.readMeta()).toEqual(new Uint8Array([4]));
      // updateMeta retries on what won: it sees [4].
      const seen: Array<Uint8Array | null> = [];
      expect(
        await updateMeta(again, (current) => {
          seen.push(current);
          return null;
        }),
      ).toBe(true);
      expect(seen).toEqual([new Uint8Array([4])]);
      const deleted = await again.readMetaVersion();
      expect(deleted.bytes).toBeNull();
      // A deletion moves the version on: a writer holding an older version can never match again.
      expect(deleted.version).toBeGreaterThan(v1.version + 1);
      expect(await again.writeMetaIf(0, new Uint8Array([6]))).toBe(false);
      again = await h.reopen();
      await again.load();
      expect(await again.readMeta()).toBeNull();
      expect((await again.readMetaVersion()).version).toBe(deleted.version);
    });

    it("writeMetaIf: concurrent compare-and-swaps on one version: exactly one wins", async () => {
      const h = await create();
      await h.adapter.load();
      const { version } = await h.adapter.readMetaVersion();
      const results = await Promise.all([1, 2, 3, 4].map((n) => h.adapter.writeMetaIf(version, new Uint8Array([n]))));
      expect(results.filter((r) => r)).toHaveLength(1);
      const winner = results.indexOf(true) + 1;
      expect(await h.adapter.readMeta()).toEqual(new Uint8Array([winner]));
    });

    it("load: records of every kind round-trip (SQL, reset, restore, alarm)", async () => {
      const h = await create();
      await h.adapter.load();
      const records: CommitRecord[] = [
        kvRecord(1, { alarm: T0 + 60_000 }),
        kvRecord(2, {
          kv: [{ key: "gone", value: null }],
          sql: [{ sql: "INSERT INTO t VALUES (?, ?, ?)", bindings: [1, "x", new Uint8Array([0])], nowMs: T0 + 2001 }],
        }),
        kvRecord(3, { reset: true, kv: [], alarm: null }),
        kvRecord(4, { restoreToSeq: 1, kv: [] }),
      ];
      await h.adapter.append(records);
      expect((await loadWithRecords(await h.reopen())).records).toEqual(records);
    });

    it("epoch: every load claims a higher epoch, and reports it", async () => {
      const h = await create();
      const loaded = await h.adapter.load();
      const first = h.adapter.epoch as number;
      expect(Number.isSafeInteger(first) && first > 0).toBe(true);
      expect(loaded.epoch).toBe(first);
      const again = await h.reopen();
      const reloaded = await again.load();
      expect(again.epoch).toBeGreaterThan(first);
      expect(reloaded.epoch).toBe(again.epoch);
    });

    it("recovery streams the log: opening a long log never holds more than one chunk of records not yet applied", async () => {
      const h = await create();
      await h.adapter.load();
      const n = 3 * STREAM_CHUNK_RECORDS + 500;
      const at = (seq: number, sql: string, bindings: number[]): CommitRecord => ({
        seq,
        timeMs: T0 + seq,
        reset: false,
        kv: [],
        sql: [{ sql, bindings, nowMs: T0 + seq }],
      });
      const records = [
        at(1, "CREATE TABLE t(n INTEGER)", []),
        ...range(2, n).map((seq) => at(seq, "INSERT INTO t VALUES (?)", [seq])),
      ];
      for (let i = 0; i < n; i += 700) await h.adapter.append(records.slice(i, i + 700));
      const watcher = new StreamWatcher(await h.reopen());
      const storage = await ObjectStorage.open({ persistence: watcher });
      try {
        // Every record was streamed and replayed once, and at no point did the reader hold more
        // than one chunk it had not applied yet (buffering the log first would hold all of it).
        expect(watcher.yielded).toBe(n);
        expect(watcher.applied).toBe(n);
        expect(watcher.maxOutstanding).toBeGreaterThan(0);
        expect(watcher.maxOutstanding).toBeLessThanOrEqual(STREAM_CHUNK_RECORDS);
        const row = storage.sql.exec("SELECT count(*) AS c, sum(n) AS s FROM t").one();
        expect(row).toEqual({ c: n - 1, s: (n * (n + 1)) / 2 - 1 });
      } finally {
        await storage.close();
      }
    });

    it("streamCommitTimes: the commit times of exactly the records streamRecords yields, before and after a reopen", async () => {
      const h = await create();
      await h.adapter.load();
      const timeOf = (seq: number) => T0 + seq * 1000 + (seq % 3 === 0 ? 0.5 : 0);
      const record = (seq: number) => kvRecord(seq, { timeMs: timeOf(seq) });
      await h.adapter.append(range(1, 20).map(record));
      const times = async (adapter: PersistenceAdapter, from: number, to: number) => {
        const out: [number, number][] = [];
        for await (const chunk of streamCommitTimes(adapter, from, to))
          for (let i = 0; i < chunk.timesMs.length; i++) out.push([chunk.firstSeq + i, chunk.timesMs[i] as number]);
        return out;
      };
      const expected = (from: number, to: number) => range(from + 1, to).map((seq) => [seq, timeOf(seq)]);
      expect(await times(h.adapter, 0, 20)).toEqual(expected(0, 20));
      const again = await h.reopen();
      await again.load();
      // What the load read, then a part of it, then past records appended after the load.
      expect(await times(again, 0, 20)).toEqual(expected(0, 20));
      expect(await times(again, 5, 12)).toEqual(expected(5, 12));
      await again.append(range(21, 30).map(record));
      expect(await times(again, 3, 30)).toEqual(expected(3, 30));
      expect(await times(again, 30, 30)).toEqual([]);
      await expect(times(again, 25, 31)).rejects.toMatchObject({ code: "ERR_BOOKMARK" });
    });

    it("streamRecords: yields exactly what readRecords returns, in chunks, in order", async () => {
      const h = await create();
      await h.adapter.load();
      await h.adapter.append(range(1, 7).map((s) => kvRecord(s)));
      await h.adapter.append(range(8, 40).map((s) => kvRecord(s)));
      const seen: number[] = [];
      for await (const chunk of h.adapter.streamRecords(3, 37)) seen.push(...chunk.map((r) => r.seq));
      expect(seen).toEqual(range(4, 37));
      const all: CommitRecord[] = [];
      for await (const chunk of h.adapter.streamRecords(0, 40)) all.push(...chunk);
      expect(all).toEqual(await h.adapter.readRecords(0, 40));
      const empty: CommitRecord[] = [];
      for await (const chunk of h.adapter.streamRecords(40, 40)) empty.push(...chunk);
      expect(empty).toEqual([]);
      await expect(
        (async () => {
          for await (const _ of h.adapter.streamRecords(30, 41)) {
            // drain
          }
        })(),
      ).rejects.toMatchObject({ code: "ERR_BOOKMARK" });
    });
  });
}
