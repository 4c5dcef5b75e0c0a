/**
 * What only actorstore offers, measured on actorstore alone (issue 5's performance section):
 * recovery of a 10 MB database with 10,000 logged batches after its last snapshot, restore to a
 * bookmark, and log bytes per committed batch against the data the batch changed. Commit
 * throughput with the file adapter is the `put-sync` workload of the side-by-side suite.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PersistenceAdapter } from "../../src/index";
import { createMemoryPersistence, ObjectStorage, openFilePersistence } from "../../src/index";
import { coreOf } from "../../src/storage/object-storage";
import { loadV8Codec, structuredCodec } from "../../src/storage/values/codec";
import { type Summary, summarize } from "./stats";

/** Sizes of the recovery scenario. */
export interface RecoveryOptions {
  /** Fill the database until `sql.databaseSize` reaches this (10 MB in the issue). */
  databaseBytes: number;
  /** Batches committed after the last snapshot (10,000 in the issue). */
  batches: number;
  /** Timed opens per measurement. */
  rounds: number;
  value: unknown;
  log: (line: string) => void;
}

/** Recovery and restore times of one persistence. */
export interface RecoveryResult {
  persistence: "memory" | "file";
  databaseBytes: number;
  keys: number;
  batchesAfterSnapshot: number;
  /** Open = load the newest snapshot + replay every batch after it. */
  recoveryMs: number[];
  recovery: Summary;
  /**
   * Open with a pending restore to the bookmark taken halfway through the batches: the first round
   * rebuilds the current state and then the bookmark's (snapshot + half the batches).
   */
  restoreMs: number[];
  restore: Summary;
}

/** Log bytes of one batch shape. */
export interface LogCostResult {
  shape: string;
  batches: number;
  /** Key bytes + encoded value bytes (KV), or bound values' bytes (SQL), per batch. */
  changedBytesPerBatch: number;
  logBytesPerBatch: number;
  ratio: number;
}

const key = (i: number): string => `key-${String(i).padStart(8, "0")}`;
const ms = (start: number): number => performance.now() - start;

/** Far more than the scenario's batches, so that no snapshot is taken after the explicit one. */
const NO_AUTOMATIC_SNAPSHOTS = 1_000_000_000;

/**
 * Fills a storage to `databaseBytes`, takes a snapshot, then commits `batches` one-put batches.
 * Returns the bookmark taken halfway and the key count.
 */
async function buildHistory(
  storage: ObjectStorage,
  options: RecoveryOptions,
): Promise<{ keys: number; midBookmark: string; databaseBytes: number }> {
  let keys = 0;
  while (storage.sql.databaseSize < options.databaseBytes) {
    for (let b = 0; b < 10_000; b += 128) {
      const entries: Record<string, unknown> = {};
      for (let i = 0; i < 128; i++) entries[key(keys++)] = options.value;
      void storage.put(entries);
    }
    await storage.sync();
  }
  await coreOf(storage).snapshot();
  let midBookmark = "";
  for (let i = 0; i < options.batches; i++) {
    void storage.put(key((i * 7919) % keys), options.value);
    await storage.sync();
    if (i === Math.floor(options.batches / 2) - 1) midBookmark = await storage.getCurrentBookmark();
  }
  return { keys, midBookmark, databaseBytes: storage.sql.databaseSize };
}

/** Checks a reopened storage really holds the data (a fast open that lost it would be no result). */
async function verify(storage: ObjectStorage, keys: number): Promise<void> {
  const last = await storage.get(key(keys - 1));
  if (last === undefined) throw new Error("recovery lost data: the last key is missing.");
}

/** Recovery and restore with the in-memory persistence (replay cost alone). */
async function measureMemory(options: RecoveryOptions): Promise<RecoveryResult> {
  const persistence = createMemoryPersistence();
  const open = (p: PersistenceAdapter) =>
    ObjectStorage.open({ persistence: p, snapshotEveryRecords: NO_AUTOMATIC_SNAPSHOTS });
  let storage = await open(persistence);
  const built = await buildHistory(storage, options);
  storage.abort();
  const recoveryMs: number[] = [];
  for (let r = 0; r < options.rounds; r++) {
    const t0 = performance.now();
    storage = await open(persistence);
    recoveryMs.push(ms(t0));
    await verify(storage, built.keys);
    storage.abort();
  }
  const restoreMs: number[] = [];
  for (let r = 0; r < options.rounds; r++) {
    storage = await open(persistence);
    await storage.onNextSessionRestoreBookmark(built.midBookmark);
    storage.abort();
    const t0 = performance.now();
    storage = await open(persistence);
    restoreMs.push(ms(t0));
    // The restore also writes a snapshot of the restored state in the background: let it finish.
    await coreOf(storage).settled();
    storage.abort();
  }
  return recoveryResult("memory", built, options, recoveryMs, restoreMs);
}

/** The result of one adapter's recovery and restore rounds. */
function recoveryResult(
  persistence: RecoveryResult["persistence"],
  built: { databaseBytes: number; keys: number },
  options: RecoveryOptions,
  recoveryMs: number[],
  restoreMs: number[],
): RecoveryResult {
  return {
    persistence,
    databaseBytes: built.databaseBytes,
    keys: built.keys,
    batchesAfterSnapshot: options.batches,
    recoveryMs,
    recovery: summarize(recoveryMs),
    restoreMs,
    restore: summarize(restoreMs),
  };
}

/** Recovery and restore from the file adapter (read + decode the log, then replay). */
async function measureFile(options: RecoveryOptions): Promise<RecoveryResult> {
  const directory = await mkdtemp(join(tmpdir(), "actorstore-recovery-"));
  try {
    // Built without fsync (10,000 fsyncs would take minutes and are not what is measured here).
    const unsynced = await openFilePersistence(directory, { allowUnsyncedWrites: true });
    let storage = await ObjectStorage.open({ persistence: unsynced, snapshotEveryRecords: NO_AUTOMATIC_SNAPSHOTS });
    const built = await buildHistory(storage, options);
    await storage.close();
    await unsynced.close();
    // What `ObjectStorage.open({ directory })` does, but holding the adapter to close it after
    // the storage (ObjectStorage.close() does not close an adapter it opened itself).
    let adapter: PersistenceAdapter | undefined;
    const open = async () => {
      adapter = await openFilePersistence(directory);
      return ObjectStorage.open({ persistence: adapter, snapshotEveryRecords: NO_AUTOMATIC_SNAPSHOTS });
    };
    const close = async (s: ObjectStorage) => {
      await s.close();
      await adapter?.close();
    };
    const recoveryMs: number[] = [];
    for (let r = 0; r < options.rounds; r++) {
      const t0 = performance.now();
      storage = await open();
      recoveryMs.push(ms(t0));
      await verify(storage, built.keys);
      await close(storage);
    }
    const restoreMs: number[] = [];
    for (let r = 0; r < options.rounds; r++) {
      storage = await open();
      await storage.onNextSessionRestoreBookmark(built.midBookmark);
      await close(storage);
      const t0 = performance.now();
      storage = await open();
      restoreMs.push(ms(t0));
      await close(storage);
    }
    return recoveryResult("file", built, options, recoveryMs, restoreMs);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** Recovery and restore, with both persistence adapters. */
export async function measureRecovery(options: RecoveryOptions): Promise<RecoveryResult[]> {
  const out: RecoveryResult[] = [];
  for (const measure of [measureMemory, measureFile]) {
    const t0 = performance.now();
    const result = await measure(options);
    options.log(
      `  recovery (${result.persistence}): ${result.recovery.median.toFixed(1)} ms, restore ${result.restore.median.toFixed(1)} ms (${Math.round(ms(t0))} ms)`,
    );
    out.push(result);
  }
  return out;
}

/** One batch shape for the log-size measurement. */
interface BatchShape {
  shape: string;
  /** Issues the batch's writes; returns the bytes of data they change. */
  write(storage: ObjectStorage, batch: number): number;
}

const utf8Length = (s: string): number => new TextEncoder().encode(s).length;

function kvShape(puts: number, value: unknown, label: string, encodedValueBytes: number): BatchShape {
  return {
    shape: `${puts} put${puts === 1 ? "" : "s"} of ${label}`,
    write(storage, batch) {
      let changed = 0;
      for (let i = 0; i < puts; i++) {
        const k = key(batch * puts + i);
        void storage.put(k, value);
        changed += utf8Length(k) + encodedValueBytes;
      }
      return changed;
    },
  };
}

function sqlShape(inserts: number, text: string): BatchShape {
  return {
    shape: `${inserts} SQL INSERT${inserts === 1 ? "" : "s"} of (integer, ${utf8Length(text)}-byte text)`,
    write(storage, batch) {
      for (let i = 0; i < inserts; i++) {
        storage.sql.exec("INSERT INTO log_rows (id, v) VALUES (?, ?)", batch * inserts + i, text);
      }
      // Changed data: the row's values (an 8-byte integer and the text).
      return inserts * (8 + utf8Length(text));
    },
  };
}

/** Log bytes per committed batch for several batch shapes, against the data each batch changed. */
export async function measureLogCost(value: string, batches: number): Promise<LogCostResult[]> {
  const smallObject = { id: 12345, name: "counter", tags: ["a", "b"], active: true, score: 3.5 };
  // Changed data counts values as stored: encoded by the codec this storage writes with.
  const codecProbe = await ObjectStorage.open();
  const codec = codecProbe.codec === "v8" ? await loadV8Codec() : structuredCodec;
  await codecProbe.close();
  if (codec === undefined) throw new Error("log cost: the v8 codec is not available.");
  const stringBytes = codec.encode(value).byteLength;
  const objectBytes = codec.encode(smallObject).byteLength;

  const shapes: BatchShape[] = [
    kvShape(1, value, `a ${value.length}-char string`, stringBytes),
    kvShape(10, value, `a ${value.length}-char string`, stringBytes),
    kvShape(100, value, `a ${value.length}-char string`, stringBytes),
    kvShape(1, smallObject, "a small object", objectBytes),
    sqlShape(1, value),
    sqlShape(10, value),
  ];
  const out: LogCostResult[] = [];
  for (const shape of shapes) {
    const persistence = createMemoryPersistence();
    const storage = await ObjectStorage.open({ persistence });
    storage.sql.exec("CREATE TABLE log_rows (id INTEGER PRIMARY KEY, v TEXT)");
    await storage.sync();
    const before = persistence.stats();
    let changed = 0;
    for (let b = 0; b < batches; b++) {
      changed += shape.write(storage, b);
      await storage.sync();
    }
    const after = persistence.stats();
    const committed = after.records - before.records;
    if (committed !== batches) throw new Error(`log cost: expected ${batches} records, got ${committed}.`);
    const logBytesPerBatch = (after.logBytes - before.logBytes) / batches;
    const changedBytesPerBatch = changed / batches;
    out.push({
      shape: shape.shape,
      batches,
      changedBytesPerBatch,
      logBytesPerBatch,
      ratio: logBytesPerBatch / changedBytesPerBatch,
    });
    await storage.close();
  }
  return out;
}
