/**
 * Whether a snapshot is copied a few pages per turn or exported in one go is decided by the size of
 * the database at that moment, not by the size of the previous snapshot: a database that grew from a
 * small snapshot past the stepped-copy threshold (one statement can add tens of megabytes) must not
 * be exported whole on the event loop.
 */
import { describe, expect, test } from "vitest";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import type { SqlEngine, SqlEngineFactory } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { COPY_IN_TURNS_FROM_BYTES } from "../../src/storage/snapshots";
import { dumpStorage } from "./dump";

/** An engine factory whose engines count whole exports and stepped copies. */
function counting(base: SqlEngineFactory) {
  const calls = { exportBytes: 0, beginImageCopy: 0 };
  const factory: SqlEngineFactory = {
    ...base,
    open(bytes?: Uint8Array): SqlEngine {
      const engine = base.open(bytes);
      return new Proxy(engine, {
        get(target, name) {
          const value: unknown = Reflect.get(target, name);
          if (typeof value !== "function") return value;
          if (name === "exportBytes" || name === "beginImageCopy") {
            return (...args: unknown[]) => {
              calls[name]++;
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          }
          return (value as (...a: unknown[]) => unknown).bind(target);
        },
      });
    },
  };
  return { factory, calls };
}

/** A storage that snapshots every third record, on engines that count their image copies. */
async function openCounted() {
  const { factory, calls } = counting(await loadSqlJsEngine());
  const persistence = createMemoryPersistence();
  const storage = await ObjectStorage.open({ persistence, engineFactory: factory, snapshotEveryRecords: 3 });
  const core = coreOf(storage);
  await core.settled();
  return { factory, calls, persistence, storage, core, exportsAtOpen: calls.exportBytes };
}

describe("the stepped snapshot copy is chosen by the database's current size", () => {
  test("a database grown by one statement past the threshold since a small snapshot is copied in turns", async () => {
    const { factory, calls, persistence, storage, core, exportsAtOpen } = await openCounted();
    const rows = Math.ceil((COPY_IN_TURNS_FROM_BYTES * 1.25) / 1_000_000);
    // One logged record of a few dozen bytes of text that adds ~20 MB of pages.
    storage.sql.exec(
      `CREATE TABLE big (b BLOB); INSERT INTO big WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows}) SELECT zeroblob(1000000) FROM n`,
    );
    await storage.sync();
    await storage.put("a", 1);
    await storage.sync();
    expect(calls.beginImageCopy).toBe(0);
    await storage.put("b", 2);
    await storage.sync(); // the third record since the first snapshot: one is due now
    await core.settled();
    expect(calls.beginImageCopy).toBeGreaterThan(0);
    expect(calls.exportBytes).toBe(exportsAtOpen);
    const expected = await dumpStorage(storage);
    await storage.close();
    const snapshots = (await persistence.load()).snapshots;
    expect(snapshots[snapshots.length - 1]?.bytes ?? 0).toBeGreaterThan(COPY_IN_TURNS_FROM_BYTES);
    const again = await ObjectStorage.open({ persistence, engineFactory: factory });
    expect(await dumpStorage(again)).toEqual(expected);
    await again.close();
  }, 60_000);

  test("a database still under the threshold is exported in one go", async () => {
    const { calls, storage, core, exportsAtOpen } = await openCounted();
    for (let i = 0; i < 3; i++) {
      await storage.put(`k${i}`, "v".repeat(1000));
      await storage.sync();
    }
    await core.settled();
    expect(calls.exportBytes).toBe(exportsAtOpen + 1);
    expect(calls.beginImageCopy).toBe(0);
    await storage.close();
  });
});
