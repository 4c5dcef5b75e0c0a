/**
 * Keys with lone surrogates against a simple model, through everything that stores a key: the write
 * buffer, the key-value table, the commit log (file adapter), snapshots, replay after a reopen, and a
 * restore to a bookmark. The platform stores a key as WTF-8 (a lone surrogate as the three bytes of
 * its own unit), so the model is a Map keyed by the exact strings: distinct strings stay distinct
 * keys, `get` finds each one, and `list()` hands each key back as its bytes read as UTF-8, in the
 * order of those bytes (distinct keys that read back alike collapse in the Map, the last one winning).
 * Bound SQL text with lone surrogates survives replay with the same bytes (`hex()`).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, test } from "vitest";
import { openFilePersistence } from "../../../src/durability/file-persistence";
import { coreOf, ObjectStorage } from "../../../src/storage/object-storage";
import { FakeClock } from "../../../src/util/clock";
import { platformReadBack, UNIT_STRING_CHARS, wtf8Bytes, wtf8Compare } from "./helpers";

const root = await mkdtemp(join(tmpdir(), "actorstore-surrogates-"));
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Keys from a few units, so that runs write the same key, and keys that read back alike, often. */
const keyArb = fc.string({
  unit: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...UNIT_STRING_CHARS) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
  ),
  maxLength: 3,
});

type Step =
  | { k: "put"; key: string; value: number }
  | { k: "putMany"; keys: string[]; value: number }
  | { k: "delete"; key: string }
  | { k: "deleteMany"; keys: string[] }
  | { k: "sqlText"; text: string }
  | { k: "sync" }
  | { k: "snapshot" }
  | { k: "reopen" }
  | { k: "bookmark" };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ k: fc.constant("put" as const), key: keyArb, value: fc.integer() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("putMany" as const),
      keys: fc.array(keyArb, { maxLength: 4 }),
      value: fc.integer(),
    }),
  },
  { weight: 3, arbitrary: fc.record({ k: fc.constant("delete" as const), key: keyArb }) },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constant("deleteMany" as const), keys: fc.array(keyArb, { maxLength: 4 }) }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant("sqlText" as const), text: keyArb }) },
  { weight: 2, arbitrary: fc.constant<Step>({ k: "sync" }) },
  { weight: 1, arbitrary: fc.constant<Step>({ k: "snapshot" }) },
  { weight: 2, arbitrary: fc.constant<Step>({ k: "reopen" }) },
  { weight: 1, arbitrary: fc.constant<Step>({ k: "bookmark" }) },
);

interface State {
  kv: Map<string, number>;
  /** The `hex()` of each text bound into the SQL table, in insertion order. */
  sqlHex: string[];
}

const copy = (s: State): State => ({ kv: new Map(s.kv), sqlHex: [...s.sqlHex] });

/** `hex()` of the bytes the platform stores for `s` (the reference; see helpers.ts). */
const wtf8Hex = (s: string): string => Buffer.from(wtf8Bytes(s)).toString("hex").toUpperCase();

/** Expects the storage to hold exactly `state`, through every read API. */
async function expectState(storage: ObjectStorage, state: State): Promise<void> {
  const keys = [...state.kv.keys()].sort(wtf8Compare);
  for (const key of keys) expect(await storage.get(key)).toBe(state.kv.get(key));
  const expectedMap = new Map<string, number>();
  for (const key of keys) expectedMap.set(platformReadBack(key), state.kv.get(key) as number);
  expect([...(await storage.list())]).toEqual([...expectedMap]);
  expect([...storage.kv.list()]).toEqual(keys.map((k) => [platformReadBack(k), state.kv.get(k)]));
  const rows = storage.sql.exec("SELECT hex(v) AS h FROM texts ORDER BY rowid").toArray();
  expect(rows.map((r) => r.h)).toEqual(state.sqlHex);
}

describe("keys with lone surrogates (property, file adapter)", () => {
  test("distinct keys stay distinct across the write buffer, the table, the log, snapshots, reopen and restore", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 30 }), fc.nat(), async (steps, pick) => {
        const dir = join(root, `run-${run++}`);
        const clock = new FakeClock(1_767_225_600_000);
        const open = async () =>
          ObjectStorage.open({ persistence: await openFilePersistence(dir), clock, snapshotEveryRecords: 1000 });
        let storage = await open();
        storage.sql.exec("CREATE TABLE texts (v TEXT)");
        const state: State = { kv: new Map(), sqlHex: [] };
        const bookmarks: Array<[string, State]> = [];
        try {
          for (const s of steps) {
            switch (s.k) {
              case "put":
                await storage.put(s.key, s.value);
                state.kv.set(s.key, s.value);
                break;
              case "putMany": {
                const entries: Record<string, number> = {};
                for (const key of s.keys) entries[key] = s.value;
                await storage.put(entries);
                for (const key of Object.keys(entries)) state.kv.set(key, s.value);
                break;
              }
              case "delete":
                expect(await storage.delete(s.key)).toBe(state.kv.delete(s.key));
                break;
              case "deleteMany": {
                let existed = 0;
                for (const key of s.keys) if (state.kv.delete(key)) existed++;
                expect(await storage.delete(s.keys)).toBe(existed);
                break;
              }
              case "sqlText":
                storage.sql.exec("INSERT INTO texts VALUES (?)", s.text);
                state.sqlHex.push(wtf8Hex(s.text));
                break;
              case "sync":
                await storage.sync();
                break;
              case "snapshot":
                await storage.sync();
                coreOf(storage).commitNow();
                await coreOf(storage).snapshot();
                break;
              case "reopen":
                await storage.close();
                storage = await open();
                await expectState(storage, state);
                break;
              case "bookmark":
                bookmarks.push([await storage.getCurrentBookmark(), copy(state)]);
                break;
            }
          }
          await expectState(storage, state);
          await storage.close();
          storage = await open();
          await expectState(storage, state);
          const chosen = bookmarks[pick % Math.max(1, bookmarks.length)];
          if (chosen !== undefined) {
            await storage.onNextSessionRestoreBookmark(chosen[0]);
            await storage.close();
            storage = await open();
            await expectState(storage, chosen[1]);
          }
        } finally {
          await storage.close();
          await rm(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
