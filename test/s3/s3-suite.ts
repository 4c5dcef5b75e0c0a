/**
 * What every S3 store must show, run against the fake and against Ceph: the adapter contract, and
 * fencing (one writer per object) with the invariants: no gaps, epochs only increase, every
 * confirmed commit present, nothing confirmed after a newer claim.
 */
import { describe, expect, it } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { isFencedError, loadWithRecords } from "../../src/durability/persistence";
import { s3Persistence } from "../../src/s3/index";
import { ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";
import { describeAdapterContract, kvRecord, range } from "../durability/adapter-contract";
import { freshPrefix, optionsFor, type S3Target } from "./s3-harness";

/** Rejection of `p`, or a failure when it resolves. */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
}

export function describeS3Suite(name: string, target: () => S3Target): void {
  describeAdapterContract(name, async () => {
    const t = target();
    const prefix = freshPrefix("contract");
    let adapter = s3Persistence(optionsFor(t, prefix));
    return {
      adapter,
      async reopen() {
        await adapter.close();
        adapter = s3Persistence(optionsFor(t, prefix));
        return adapter;
      },
    };
  });

  describe(`${name}: one writer per object`, () => {
    it("a second open fences the first: its later calls, load included, reject with ERR_FENCED", async () => {
      const t = target();
      const prefix = freshPrefix("fence");
      const a = s3Persistence(optionsFor(t, prefix));
      await a.load();
      await a.append(range(1, 3).map((s) => kvRecord(s)));
      const b = s3Persistence(optionsFor(t, prefix));
      const loaded = await loadWithRecords(b);
      expect(loaded.records.map((r) => r.seq)).toEqual([1, 2, 3]);
      expect(b.epoch).toBeGreaterThan(a.epoch as number);
      const appendError = await rejection(a.append([kvRecord(4)]));
      expect(isFencedError(appendError)).toBe(true);
      expect((appendError as { code?: string }).code).toBe("ERR_FENCED");
      expect(isFencedError(await rejection(a.append([kvRecord(5)])))).toBe(true);
      expect(isFencedError(await rejection(a.writeSnapshot({ seq: 3, timeMs: 0 }, new Uint8Array(1))))).toBe(true);
      expect(isFencedError(await rejection(a.writeMetaIf(0, new Uint8Array([1]))))).toBe(true);
      expect(isFencedError(await rejection(a.load()))).toBe(true);
      await b.append([kvRecord(4)]);
      const c = s3Persistence(optionsFor(t, prefix));
      expect((await loadWithRecords(c)).records.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    });

    it("a fenced holder's compaction (its manifest landed before it learned of the newer claim) never makes the object unopenable", async () => {
      const t = target();
      const prefix = freshPrefix("zombie-compact");
      const a = s3Persistence(optionsFor(t, prefix));
      await a.load();
      for (const s of range(1, 3)) await a.append([kvRecord(s)]);
      const b = s3Persistence(optionsFor(t, prefix));
      await b.load();
      // a does not know yet: it folds its log and writes the next manifest, then sees b's claim.
      expect(isFencedError(await rejection(a.compact()))).toBe(true);
      await b.append([kvRecord(4)]);
      await b.append([kvRecord(5)]);
      await b.compact();
      expect((await b.readRecords(0, 5)).map((r) => r.seq)).toEqual(range(1, 5));
      const c = s3Persistence(optionsFor(t, prefix));
      expect((await loadWithRecords(c)).records.map((r) => r.seq)).toEqual(range(1, 5));
      await c.append([kvRecord(6)]);
      await c.append([kvRecord(7)]);
      await c.compact();
      const d = s3Persistence(optionsFor(t, prefix, { readOnly: true }));
      expect((await loadWithRecords(d)).records.map((r) => r.seq)).toEqual(range(1, 7));
    });

    it("a fenced holder's metadata write (a restore request) is refused and never takes effect", async () => {
      const t = target();
      const prefix = freshPrefix("zombie-meta");
      const a = s3Persistence(optionsFor(t, prefix));
      await a.load();
      await a.append([kvRecord(1)]);
      const b = s3Persistence(optionsFor(t, prefix));
      await b.load();
      const before = await b.readMetaVersion();
      // a does not know yet: its compare-and-swap on the version it last saw, and on the newest.
      expect(isFencedError(await rejection(a.writeMetaIf(0, new Uint8Array([9]))))).toBe(true);
      expect(await b.readMetaVersion()).toEqual(before);
      const c = s3Persistence(optionsFor(t, prefix));
      await c.load();
      const seen = await c.readMetaVersion();
      expect(seen.bytes).toBeNull();
      expect(isFencedError(await rejection(b.writeMetaIf(seen.version, new Uint8Array([8]))))).toBe(true);
      expect(await c.writeMetaIf(seen.version, new Uint8Array([7]))).toBe(true);
      const d = s3Persistence(optionsFor(t, prefix, { readOnly: true }));
      await d.load();
      expect(await d.readMeta()).toEqual(new Uint8Array([7]));
    });

    it("a restore requested by a holder that was taken over never undoes what the new holder confirmed", async () => {
      const t = target();
      const prefix = freshPrefix("zombie-restore");
      const clock = new FakeClock();
      const open = () => ObjectStorage.open({ clock, persistence: s3Persistence(optionsFor(t, prefix)) });
      const a = await open();
      await a.put("k", "one");
      await a.sync();
      const bookmark = await a.getCurrentBookmark();
      await clock.advance(60_000);
      await a.put("k", "two");
      await a.sync();
      const b = await open();
      expect(isFencedError(await rejection(a.onNextSessionRestoreBookmark(bookmark)))).toBe(true);
      await b.put("k", "three");
      await b.sync();
      await b.close();
      const c = await open();
      expect(await c.get("k")).toBe("three");
      await c.close();
    });

    it("appends queued when the newer claim lands all fail, and none is found afterwards that was not written", async () => {
      const t = target();
      const prefix = freshPrefix("pending");
      const a = s3Persistence(optionsFor(t, prefix));
      await a.load();
      await a.append([kvRecord(1)]);
      const pending = range(2, 30).map((s) => a.append([kvRecord(s)]).then(() => s));
      const b = s3Persistence(optionsFor(t, prefix));
      const claimed = loadWithRecords(b);
      const outcomes = await Promise.allSettled(pending);
      const loaded = await claimed;
      const confirmed = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
      for (const o of outcomes) if (o.status === "rejected") expect(isFencedError(o.reason)).toBe(true);
      // Confirmed appends are a prefix, and every one of them is in the new holder's log.
      expect(confirmed).toEqual(range(2, 1 + confirmed.length));
      const seqs = loaded.records.map((r) => r.seq);
      expect(seqs).toEqual(range(1, seqs.length));
      for (const s of confirmed) expect(seqs).toContain(s);
      // Once a fails, nothing after it is confirmed.
      expect(isFencedError(await rejection(a.append([kvRecord(loaded.lastSeq + 1)])))).toBe(true);
    });

    it("two writers racing for one object: exactly one order of epochs, no gaps, every confirmed commit present", async () => {
      const t = target();
      const prefix = freshPrefix("race");
      const writers = Array.from({ length: 3 }, () => s3Persistence(optionsFor(t, prefix)));
      const confirmed: Array<[number, string]> = [];
      await Promise.all(
        writers.map(async (w, i) => {
          let loaded: { lastSeq: number };
          try {
            loaded = await loadWithRecords(w);
          } catch (e) {
            expect(isFencedError(e)).toBe(true);
            return;
          }
          let next = loaded.lastSeq + 1;
          for (let k = 0; k < 15; k++) {
            const record: CommitRecord = { ...kvRecord(next), kv: [{ key: `w${i}`, value: new Uint8Array([k]) }] };
            try {
              await w.append([record]);
            } catch (e) {
              expect(isFencedError(e)).toBe(true);
              return;
            }
            confirmed.push([next, `w${i}:${k}`]);
            next++;
          }
        }),
      );
      const check = s3Persistence(optionsFor(t, prefix));
      const loaded = await loadWithRecords(check);
      const seqs = loaded.records.map((r) => r.seq);
      expect(seqs).toEqual(range(1, seqs.length));
      expect(new Set(confirmed.map(([seq]) => seq)).size).toBe(confirmed.length);
      for (const [seq, tag] of confirmed) {
        const r = loaded.records.find((x) => x.seq === seq) as CommitRecord;
        const [w, k] = tag.split(":");
        expect(r.kv[0]?.key).toBe(w);
        expect(r.kv[0]?.value).toEqual(new Uint8Array([Number(k)]));
      }
      const epochs = writers.map((w) => w.epoch ?? 0).filter((e) => e > 0);
      expect(new Set(epochs).size).toBe(epochs.length);
    });

    it("the object storage over S3: PITR, bookmarks and getBookmarkForTime work over the bucket", async () => {
      const t = target();
      const prefix = freshPrefix("pitr");
      const clock = new FakeClock();
      const open = () => ObjectStorage.open({ clock, persistence: s3Persistence(optionsFor(t, prefix)) });
      let storage = await open();
      storage.sql.exec("CREATE TABLE t(v)");
      storage.sql.exec("INSERT INTO t VALUES ('one')");
      await storage.put("k", "old");
      await storage.sync();
      const bookmark = await storage.getCurrentBookmark();
      const atOld = clock.now();
      await clock.advance(60_000);
      storage.sql.exec("INSERT INTO t VALUES ('two')");
      await storage.put("k", "new");
      await storage.sync();
      expect(await storage.getBookmarkForTime(atOld)).toBe(bookmark);
      await storage.onNextSessionRestoreBookmark(bookmark);
      await storage.close();
      storage = await open();
      expect(await storage.get("k")).toBe("old");
      expect(storage.sql.exec("SELECT v FROM t").toArray()).toEqual([{ v: "one" }]);
      await storage.close();
    });
  });
}
