/**
 * The internal tables are created at the call that first needs them, as on the platform (`_cf_KV`
 * with the first key-value write, `_cf_METADATA` with the first alarm), as logged writes of the
 * batch: SQL sees them at once, a rolled-back savepoint takes them away, and replay creates them at
 * the same point among the batch's SQL writes, so `sqlite_schema` comes back row for row (rowids
 * and root pages included). The same behaviours are compared with workerd in
 * `test/differential/cursor-end.differential.test.ts`.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { coreOf, ObjectStorage } from "../../../src/storage/object-storage";
import { openRecorded, type RecordingPersistence } from "./harness";

/** `sqlite_schema` as stored: rowid, name and root page, in rowid order. */
function schemaRows(storage: ObjectStorage): unknown[][] {
  return coreOf(storage).engine.query("SELECT rowid, name, rootpage FROM sqlite_schema ORDER BY rowid");
}

describe("internal tables", () => {
  let storage: ObjectStorage | undefined;
  afterEach(async () => {
    await storage?.close();
  });

  async function reopen(log: RecordingPersistence): Promise<ObjectStorage> {
    await storage?.close();
    storage = await ObjectStorage.open({ backend: "sqlite", persistence: log });
    return storage;
  }

  it("are made at the call, between the batch's SQL writes, and replay makes them at the same place", async () => {
    const opened = await openRecorded();
    storage = opened.storage;
    const s = storage;
    s.sql.exec("CREATE TABLE a (x)");
    await s.setAlarm(4_102_444_800_000);
    s.sql.exec("CREATE TABLE b (x)");
    await s.put("k", 1);
    s.sql.exec("CREATE TABLE c (x)");
    // Seen at once, in the batch that made them, before it commits.
    expect(
      s.sql
        .exec("SELECT name FROM sqlite_schema")
        .toArray()
        .map((r) => r.name),
    ).toEqual(["a", "_cf_METADATA", "b", "_cf_KV", "c"]);
    await s.sync();
    const live = schemaRows(s);
    expect(await (await reopen(opened.log)).get("k")).toBe(1);
    expect(await storage?.getAlarm()).toBe(4_102_444_800_000);
    expect(schemaRows(storage as ObjectStorage)).toEqual(live);
  });

  it("an alarm set and cleared in one batch leaves _cf_METADATA (as on the platform), also after replay", async () => {
    const opened = await openRecorded();
    storage = opened.storage;
    await storage.setAlarm(4_102_444_800_000);
    await storage.deleteAlarm();
    await storage.sync();
    const live = schemaRows(storage);
    expect(live.map((r) => r[1])).toEqual(["_cf_METADATA"]);
    expect(await (await reopen(opened.log)).getAlarm()).toBeNull();
    expect(schemaRows(storage as ObjectStorage)).toEqual(live);
  });

  it("a rolled-back savepoint takes the tables it made with it; clearing an alarm never set makes nothing", async () => {
    const opened = await openRecorded();
    storage = opened.storage;
    const s = storage;
    expect(() =>
      s.transactionSync(() => {
        s.kv.put("k", 1);
        void s.setAlarm(4_102_444_800_000);
        expect(schemaRows(s).map((r) => r[1])).toEqual(["_cf_KV", "_cf_METADATA"]);
        throw new Error("undo");
      }),
    ).toThrow("undo");
    await s.deleteAlarm();
    expect(schemaRows(s)).toEqual([]);
    await s.sync();
    expect(opened.log.appends.flat().flatMap((r) => r.sql)).toEqual([]);
    expect(schemaRows(await reopen(opened.log))).toEqual([]);
  });
});

/** One step of the property below: writes, a SQL statement (which applies the buffer), savepoints, commits. */
type Step =
  | { kind: "put"; key: string; value: number }
  | { kind: "delete"; key: string }
  | { kind: "sql" }
  | { kind: "sync" }
  | { kind: "savepoint"; steps: Step[]; rollback: boolean };

const KEYS = ["a", "b", "c", "d"];

function stepArb(depth: number): fc.Arbitrary<Step> {
  const leaf: fc.Arbitrary<Step>[] = [
    fc.record({
      kind: fc.constant("put" as const),
      key: fc.constantFrom(...KEYS),
      value: fc.integer({ min: 0, max: 9 }),
    }),
    fc.record({ kind: fc.constant("delete" as const), key: fc.constantFrom(...KEYS) }),
    fc.constant({ kind: "sql" as const }),
  ];
  if (depth === 0) return fc.oneof(...leaf);
  const savepoint = fc.record({
    kind: fc.constant("savepoint" as const),
    steps: fc.array(stepArb(depth - 1), { maxLength: 6 }),
    rollback: fc.boolean(),
  });
  return fc.oneof(...leaf, savepoint, fc.constant({ kind: "sync" as const }));
}

describe("buffered key-value writes applied before SQL (property)", () => {
  it("whatever SQL statements, savepoints and rollbacks interleave, reads, the stored rows and replay equal a model", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb(2), { maxLength: 25 }), async (steps) => {
        const { storage: s, log } = await openRecorded();
        try {
          const model = new Map<string, number>();
          const engineKeys = (): string[] => {
            const { engine } = coreOf(s);
            if (engine.query("SELECT 1 FROM sqlite_schema WHERE name = '_cf_KV'").length === 0) return [];
            return engine.query("SELECT key FROM _cf_KV ORDER BY key").map((r) => String(r[0]));
          };
          const stored = (): Map<string, unknown> => {
            const rows = engineKeys();
            coreOf(s).cache.clear();
            return new Map(rows.map((k) => [k, s.kv.get(k)]));
          };
          const run = (step: Step, into: Map<string, number>): void => {
            if (step.kind === "put") {
              s.kv.put(step.key, step.value);
              into.set(step.key, step.value);
            } else if (step.kind === "delete") {
              s.kv.delete(step.key);
              into.delete(step.key);
            } else if (step.kind === "sql") {
              s.sql.exec("SELECT count(*) FROM sqlite_schema").one();
              // What SQL sees: every buffered write is in the database, as on the platform.
              expect(engineKeys()).toEqual([...into.keys()].sort());
            } else if (step.kind === "savepoint") {
              const inner = new Map(into);
              try {
                s.transactionSync(() => {
                  for (const x of step.steps) if (x.kind !== "sync") run(x, inner);
                  if (step.rollback) throw new Error("rollback");
                });
              } catch (e) {
                if (!step.rollback) throw e;
              }
              if (!step.rollback) {
                into.clear();
                for (const [k, v] of inner) into.set(k, v);
              }
            }
          };
          for (const step of steps) {
            if (step.kind === "sync") {
              await s.sync();
              expect(stored()).toEqual(model);
            } else run(step, model);
            for (const k of KEYS) expect(s.kv.get(k)).toBe(model.get(k));
          }
          await s.sync();
          expect(stored()).toEqual(model);
          await s.close();
          const reopened = await ObjectStorage.open({ backend: "sqlite", persistence: log });
          try {
            for (const k of KEYS) expect(await reopened.get(k)).toBe(model.get(k));
          } finally {
            await reopened.close();
          }
        } finally {
          await s.close();
        }
      }),
      { numRuns: 60 },
    );
  });
});
