/**
 * The storage core counts what each commit record holds while it builds it (held-bytes.ts), so the
 * in-memory persistence need not walk the record again. That count must be exactly what counting
 * the finished record gives, whatever the batch did to its entries after logging them: connection
 * inputs (`changes()` and the like) read while a statement ran, settings read after a pragma, a
 * savepoint rolled back (its entries gone, a settings entry in their place), `deleteAll()`, a
 * session mark after a snapshot, key-value writes.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { DelegatingPersistence } from "../../src/durability/delegating-persistence";
import { notedHeldBytes, recordHeldBytes } from "../../src/durability/held-bytes";
import { createMemoryPersistence, type MemoryPersistence } from "../../src/durability/memory-persistence";
import type { SqlEngineFactory } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock, nextTurn } from "../../src/util/clock";

/** Records each appended record with the count handed over with it and its count from scratch. */
class CheckingPersistence extends DelegatingPersistence<MemoryPersistence> {
  readonly seen: Array<{ record: CommitRecord; noted: number | undefined; counted: number }> = [];
  override append(records: readonly CommitRecord[]): Promise<void> {
    for (const r of records) this.seen.push({ record: r, noted: notedHeldBytes(r), counted: recordHeldBytes(r) });
    return super.append(records);
  }
}

type Op =
  | { kind: "insert"; value: string | number | Uint8Array | null }
  | { kind: "inputs" }
  | { kind: "pragma"; on: boolean }
  | { kind: "rolledBack"; pragma: boolean; inputs: boolean }
  | { kind: "put"; key: string; value: string }
  | { kind: "delete"; key: string }
  | { kind: "deleteAll" }
  | { kind: "commit" };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("insert" as const),
    value: fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.double({ noNaN: true }),
      fc.uint8Array({ maxLength: 40 }),
      fc.constant(null),
    ),
  }),
  fc.constant({ kind: "inputs" as const }),
  fc.record({ kind: fc.constant("pragma" as const), on: fc.boolean() }),
  fc.record({ kind: fc.constant("rolledBack" as const), pragma: fc.boolean(), inputs: fc.boolean() }),
  fc.record({
    kind: fc.constant("put" as const),
    key: fc.string({ maxLength: 8 }),
    value: fc.string({ maxLength: 30 }),
  }),
  fc.record({ kind: fc.constant("delete" as const), key: fc.string({ maxLength: 8 }) }),
  fc.constant({ kind: "deleteAll" as const }),
  fc.constant({ kind: "commit" as const }),
);

let factory: SqlEngineFactory | undefined;

async function run(ops: readonly Op[]): Promise<CheckingPersistence> {
  factory ??= await loadSqlJsEngine();
  const persistence = new CheckingPersistence(createMemoryPersistence());
  // A snapshot every few records: the record after one carries a session mark.
  const storage = await ObjectStorage.open({
    persistence,
    clock: new FakeClock(1_700_000_000_000),
    engineFactory: factory,
    snapshotEveryRecords: 3,
  });
  const table = () => storage.sql.exec("CREATE TABLE IF NOT EXISTS t (v)");
  table();
  for (const o of ops) {
    switch (o.kind) {
      case "insert":
        storage.sql.exec("INSERT INTO t (v) VALUES (?)", o.value instanceof Uint8Array ? o.value.buffer : o.value);
        break;
      case "inputs":
        storage.sql.exec(
          "INSERT INTO t (v) VALUES (changes() || ',' || total_changes() || ',' || last_insert_rowid())",
        );
        break;
      case "pragma":
        storage.sql.exec(`PRAGMA recursive_triggers = ${o.on ? "ON" : "OFF"}`);
        break;
      case "rolledBack":
        expect(() =>
          storage.transactionSync(() => {
            storage.sql.exec("INSERT INTO t (v) VALUES ('gone')");
            if (o.inputs) storage.sql.exec("INSERT INTO t (v) VALUES (changes() + last_insert_rowid())");
            if (o.pragma) storage.sql.exec("PRAGMA case_sensitive_like = ON");
            throw new Error("roll back");
          }),
        ).toThrow("roll back");
        break;
      case "put":
        await storage.put(o.key, o.value);
        break;
      case "delete":
        await storage.delete(o.key);
        break;
      case "deleteAll":
        await storage.deleteAll();
        table();
        break;
      case "commit":
        await nextTurn();
        break;
    }
  }
  await storage.sync();
  await storage.close();
  return persistence;
}

describe("held bytes counted while a batch is built", () => {
  test("equal the finished record's count, for every record of random batches", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        const persistence = await run(ops);
        expect(persistence.seen.length).toBeGreaterThan(0);
        for (const r of persistence.seen) {
          expect(r.noted, `record ${r.record.seq}`).toBeDefined();
          expect(r.noted, `record ${r.record.seq}`).toBe(r.counted);
        }
        // The adapter holds what the records count (and no snapshot image was dropped).
        const inner = persistence.inner;
        expect(inner.heldBytes()).toBeGreaterThan(0);
      }),
      { numRuns: 60 },
    );
  });

  test("a batch whose entries gained inputs and settings after they were logged", async () => {
    const persistence = await run([
      { kind: "inputs" },
      { kind: "pragma", on: true },
      { kind: "rolledBack", pragma: true, inputs: true },
      { kind: "inputs" },
      { kind: "commit" },
    ]);
    const [only] = persistence.seen;
    if (only === undefined) throw new Error("nothing was committed");
    // The entries did gain both after they were logged, and the session mark of a first record.
    expect(only.record.sql.some((w) => (w.inputs?.length ?? 0) > 0)).toBe(true);
    expect(only.record.sql.some((w) => w.settings !== undefined)).toBe(true);
    expect(only.record.session).toBeDefined();
    expect(only.noted).toBeDefined();
    expect(only.noted).toBe(only.counted);
  });
});
