/**
 * Rebuilding a database from what a persistence adapter holds: the newest snapshot at or before
 * the target, then the log records after it, in order. Used to open an object (newest state) and
 * to restore one (a bookmark's state).
 */
import type { CommitRecord } from "../durability/commit-record";
import type { LoadResult } from "../durability/persistence";
import type { SqlEngine } from "../engine/engine";
import { SplitMix64 } from "../util/prng";
import { applyConnectionDefaults } from "./connection-defaults";
import { KvTable } from "./kv-table";
import { applyRecord, ReplayStatements } from "./replay";
import type { CoreSettings } from "./storage-core";

type Loaded = Pick<LoadResult, "snapshots" | "records">;

/**
 * Rebuilds the database as of `targetSeq` (or the newest state): the newest snapshot at or before
 * it, then the records after that snapshot, in order. A record that is itself a restore is applied
 * by rebuilding the state it names (recursively) and continuing from there.
 */
export async function buildState(
  settings: CoreSettings,
  loaded: Loaded,
  targetSeq: number | undefined,
): Promise<{ engine: SqlEngine; lastSeq: number; lastTimeMs: number }> {
  const snapshots = loaded.snapshots.filter((s) => targetSeq === undefined || s.seq <= targetSeq);
  const base = snapshots[snapshots.length - 1];
  let engine: SqlEngine;
  let lastSeq = 0;
  let lastTimeMs = 0;
  if (base !== undefined) {
    engine = settings.engineFactory.open(await settings.persistence.readSnapshot(base.seq));
    lastSeq = base.seq;
    lastTimeMs = base.timeMs;
  } else {
    engine = settings.engineFactory.open();
  }
  applyConnectionDefaults(engine);
  let records = loaded.records.filter((r) => r.seq > lastSeq && (targetSeq === undefined || r.seq <= targetSeq));
  if (records.length > 0 && (records[0] as CommitRecord).seq !== lastSeq + 1) {
    // The loaded window does not reach back far enough: read the gap from the adapter.
    const upTo = targetSeq ?? (loaded.records[loaded.records.length - 1] as CommitRecord).seq;
    records = await settings.persistence.readRecords(lastSeq, upTo);
  }
  const prng = new SplitMix64();
  engine.setRandomSource(prng);
  let kv = new KvTable(engine);
  let statements = new ReplayStatements(engine);
  for (const record of records) {
    if (record.restoreToSeq !== undefined) {
      statements.dispose();
      kv.dispose();
      engine.close();
      const all = await settings.persistence.readRecords(0, record.restoreToSeq);
      const older = await buildState(
        settings,
        { ...loaded, records: all.length > 0 ? all : loaded.records },
        record.restoreToSeq,
      );
      engine = older.engine;
      engine.setRandomSource(prng);
      applyConnectionDefaults(engine);
      kv = new KvTable(engine);
      statements = new ReplayStatements(engine);
    } else {
      if (record.reset) {
        statements.dispose();
        kv.dispose();
        engine.close();
        engine = settings.engineFactory.open();
        engine.setRandomSource(prng);
        applyConnectionDefaults(engine);
        kv = new KvTable(engine);
        statements = new ReplayStatements(engine);
      }
      applyRecord(engine, kv, prng, statements, record);
    }
    lastSeq = record.seq;
    lastTimeMs = record.timeMs;
  }
  statements.dispose();
  kv.dispose();
  return { engine, lastSeq, lastTimeMs };
}
