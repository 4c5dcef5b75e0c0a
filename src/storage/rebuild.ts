/**
 * Rebuilding a database from what a persistence adapter holds: the newest snapshot at or before
 * the target, then the log records after it, in order. Used to open an object (newest state) and
 * to restore one (a bookmark's state).
 */
import type { CommitRecord } from "../durability/commit-record";
import type { LoadResult, SnapshotInfo } from "../durability/persistence";
import type { SqlEngine } from "../engine/engine";
import { SplitMix64 } from "../util/prng";
import { applyConnectionDefaults } from "./connection-defaults";
import { KvTable } from "./kv-table";
import { ReplayInputs, ReplayStatements, ReplayTransaction } from "./replay";
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
  const base = newestSnapshotAtOrBefore(loaded, targetSeq);
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
  let records = loaded.records.filter((r) => r.seq > lastSeq && (targetSeq === undefined || r.seq <= targetSeq));
  const gap =
    records.length > 0
      ? (records[0] as CommitRecord).seq !== lastSeq + 1
      : targetSeq !== undefined && targetSeq > lastSeq;
  if (gap) {
    // The loaded window does not reach back far enough: read the gap from the adapter (which
    // refuses with a clear error when that history is gone, rather than building another state).
    const upTo = targetSeq ?? (loaded.records[loaded.records.length - 1] as CommitRecord).seq;
    records = await settings.persistence.readRecords(lastSeq, upTo);
  }
  const prng = new SplitMix64();
  let replay = startReplay(engine, prng);
  try {
    for (const record of records) {
      if (record.restoreToSeq !== undefined || record.reset) {
        // The state is replaced: by an older state (a restore), or by an empty database (deleteAll).
        replay.finish();
        engine.close();
        if (record.restoreToSeq !== undefined) {
          const target = record.restoreToSeq;
          const older = newestSnapshotAtOrBefore(loaded, target);
          const olderRecords = await settings.persistence.readRecords(older?.seq ?? 0, target);
          engine = (await buildState(settings, { snapshots: loaded.snapshots, records: olderRecords }, target)).engine;
        } else {
          engine = settings.engineFactory.open();
        }
        replay = startReplay(engine, prng);
      }
      if (record.restoreToSeq === undefined)
        replay.transaction.apply(replay.kv, prng, replay.statements, record, replay.inputs);
      lastSeq = record.seq;
      lastTimeMs = record.timeMs;
    }
    replay.finish();
  } catch (e) {
    replay.abandon();
    engine.close();
    throw e;
  }
  return { engine, lastSeq, lastTimeMs };
}

function newestSnapshotAtOrBefore(loaded: Loaded, targetSeq: number | undefined): SnapshotInfo | undefined {
  let best: SnapshotInfo | undefined;
  for (const s of loaded.snapshots) {
    if ((targetSeq === undefined || s.seq <= targetSeq) && (best === undefined || s.seq > best.seq)) best = s;
  }
  return best;
}

/** Everything replay keeps per engine. */
function startReplay(engine: SqlEngine, prng: SplitMix64) {
  engine.setRandomSource(prng);
  const inputs = new ReplayInputs();
  engine.setConnectionInputs(inputs);
  applyConnectionDefaults(engine);
  const kv = new KvTable(engine);
  const statements = new ReplayStatements(engine);
  const transaction = new ReplayTransaction(engine);
  return {
    kv,
    inputs,
    statements,
    transaction,
    finish(): void {
      transaction.commit();
      statements.dispose();
      kv.dispose();
    },
    abandon(): void {
      transaction.rollback();
      statements.dispose();
      kv.dispose();
    },
  };
}
