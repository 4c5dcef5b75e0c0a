/**
 * Append failures at random points under ObjectStorage (FaultyPersistence over the in-memory
 * adapter): the storage breaks with the platform's reset message, every later call is refused, and
 * a new session over the inner adapter holds exactly the confirmed batches (plus, when the failure
 * came after the write reached the inner adapter, possibly the failed one, whole).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { FaultyPersistence } from "../../src/durability/faulty-persistence";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock, nextTurn } from "../../src/util/clock";

const WRITE_FAILED = "Internal error in Durable Object storage write caused object to be reset.";

/** Batch `n` writes `n` to two keys and one row, so a half batch would show. */
function writeBatch(storage: ObjectStorage, n: number): void {
  void storage.put({ [`a${n}`]: n, [`b${n}`]: n }).catch(() => {});
  storage.sql.exec("INSERT INTO batches VALUES (?, random())", n);
}

async function batchesIn(storage: ObjectStorage): Promise<number[]> {
  const rows = storage.sql
    .exec<{ n: number }>("SELECT n FROM batches ORDER BY n")
    .toArray()
    .map((r) => r.n);
  const kv = await storage.list<number>();
  // All-or-nothing: every row has both keys, every key has its row.
  expect([...kv.keys()].sort()).toEqual(rows.flatMap((n) => [`a${n}`, `b${n}`]).sort());
  return rows;
}

describe("append failures under ObjectStorage", () => {
  test("FaultyPersistence: a failed append breaks the storage; a reopen shows exactly the confirmed batches", async () => {
    let runsThatBroke = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 20 }),
        fc.constantFrom("before-write" as const, "after-write" as const),
        async (groups, failAt, point) => {
          const clock = new FakeClock();
          const faulty = new FaultyPersistence(createMemoryPersistence());
          const storage = await ObjectStorage.open({ persistence: faulty, clock });
          storage.sql.exec("CREATE TABLE batches(n INTEGER PRIMARY KEY, r INTEGER)");
          await storage.sync();
          faulty.failAppendAt(failAt, { point });
          const confirmed: number[] = [];
          let failed: number[] = [];
          let n = 0;
          let broken = false;
          for (const size of groups) {
            // Several batches in flight at once (separate commits), then wait for all of them.
            const outcomes: Array<Promise<[number, boolean]>> = [];
            for (let i = 0; i < size; i++) {
              const id = ++n;
              try {
                writeBatch(storage, id);
              } catch (e) {
                // Refused once the storage broke: nothing of this batch was written.
                expect((e as Error).message).toBe(WRITE_FAILED);
                broken = true;
                break;
              }
              outcomes.push(
                storage.sync().then(
                  () => [id, true],
                  (e: unknown) => {
                    expect((e as Error).message).toBe(WRITE_FAILED);
                    return [id, false];
                  },
                ),
              );
              await nextTurn();
              await clock.advance(1);
            }
            for (const [id, ok] of await Promise.all(outcomes)) {
              if (ok) confirmed.push(id);
              else failed.push(id);
            }
            if (broken) break;
          }
          if (failed.length > 0 || broken) {
            runsThatBroke++;
            // Broken: every later call is refused with the reset message.
            await expect(storage.put("late", 1)).rejects.toThrow(WRITE_FAILED);
            await expect(storage.sync()).rejects.toThrow(WRITE_FAILED);
            expect(() => storage.sql.exec("SELECT 1")).toThrow(WRITE_FAILED);
          }
          // Confirmations arrive in commit order: what was confirmed is a prefix of the batches.
          expect(confirmed).toEqual(confirmed.map((_, i) => i + 1));
          failed = failed.sort((a, b) => a - b);
          await coreOf(storage).settled();
          storage.abort();
          const reopened = await ObjectStorage.open({ persistence: faulty.inner, clock });
          const present = await batchesIn(reopened);
          if (point === "before-write" || failed.length === 0) expect(present).toEqual(confirmed);
          else {
            // The failing append did reach the inner adapter: that one batch (whole) may be there.
            const extra = present.slice(confirmed.length);
            expect(present.slice(0, confirmed.length)).toEqual(confirmed);
            expect(extra.length === 0 || (extra.length === 1 && extra[0] === failed[0])).toBe(true);
          }
          await reopened.close();
        },
      ),
      { numRuns: 80 },
    );
    // The property is only as good as the failures it saw.
    expect(runsThatBroke).toBeGreaterThan(20);
  });
});
