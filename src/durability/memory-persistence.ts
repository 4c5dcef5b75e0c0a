/**
 * The default persistence: everything in memory. It survives `abort()` and resets of an object
 * within the process (pass the same instance again and `load()` returns what was committed), but
 * not the process itself.
 *
 * Records are kept as the objects appended (no encode/decode on the commit path, which is what the
 * benchmarks measure), while {@link MemoryPersistence.stats} counts the bytes the same log would
 * take in the file format, so size numbers stay honest.
 *
 * @packageDocumentation
 */
import { ActorStoreError } from "../errors";
import type { CommitRecord } from "./commit-record";
import {
  checkAppendOrder,
  checkRange,
  checkSnapshotSeq,
  type LoadResult,
  missingSnapshot,
  type PersistenceAdapter,
  type PersistenceStats,
  type SnapshotInfo,
  snapshotTimeMs,
  type VersionedMeta,
} from "./persistence";
import { encodedRecordSize } from "./record-codec";
import { planPrune } from "./retention";

interface StoredSnapshot {
  info: SnapshotInfo;
  image: Uint8Array;
}

/**
 * An in-memory {@link PersistenceAdapter}. Appends resolve on the next microtask: there is nothing
 * to flush.
 *
 * **Warning:** nothing survives the process. Use `openFilePersistence()` for crash durability.
 *
 * @example
 * ```ts
 * const persistence = createMemoryPersistence();
 * const storage = await ObjectStorage.open({ persistence });
 * storage.abort();
 * const again = await ObjectStorage.open({ persistence }); // sees every confirmed write
 * ```
 */
export class MemoryPersistence implements PersistenceAdapter {
  /** Records after the prune point, in seq order. */
  #records: CommitRecord[] = [];
  /**
   * Encoded sizes are counted only when `stats()` asks: computing them on every append cost about
   * a tenth of a small commit, for a number only diagnostics read.
   */
  #snapshots: StoredSnapshot[] = [];
  #meta: Uint8Array | null = null;
  #metaVersion = 0;
  #lastSeq = 0;
  #open = false;
  #epoch = 0;

  /** Counts loads: one holder at a time in one process, so a load is a new epoch and fences nothing. */
  get epoch(): number {
    return this.#epoch;
  }

  async load(): Promise<LoadResult> {
    this.#open = true;
    this.#epoch++;
    const oldest = this.#snapshots[0]?.info.seq ?? 0;
    let i = 0;
    while (i < this.#records.length && (this.#records[i] as CommitRecord).seq <= oldest) i++;
    return {
      snapshots: this.#snapshots.map((s) => ({ ...s.info })),
      records: this.#records.slice(i),
      truncatedBytes: 0,
      lastSeq: this.#lastSeq,
    };
  }

  async append(records: readonly CommitRecord[]): Promise<void> {
    this.#checkOpen("append");
    this.#lastSeq = checkAppendOrder(records, this.#lastSeq);
    for (const record of records) {
      this.#records.push(record);
    }
  }

  async writeSnapshot(info: { seq: number; timeMs: number }, image: Uint8Array): Promise<void> {
    this.#checkOpen("writeSnapshot");
    checkSnapshotSeq(info.seq, this.#lastSeq);
    // Copy: the caller's buffer may be reused, and a snapshot must not change after it is taken.
    const stored: StoredSnapshot = {
      info: { seq: info.seq, timeMs: snapshotTimeMs(info.timeMs), bytes: image.length },
      image: image.slice(),
    };
    this.#snapshots = this.#snapshots.filter((s) => s.info.seq !== info.seq);
    this.#snapshots.push(stored);
    this.#snapshots.sort((a, b) => a.info.seq - b.info.seq);
  }

  async readSnapshot(seq: number): Promise<Uint8Array> {
    const found = this.#snapshots.find((s) => s.info.seq === seq);
    if (found === undefined) throw missingSnapshot(seq);
    return found.image.slice();
  }

  async readRecords(fromSeq: number, toSeq: number): Promise<CommitRecord[]> {
    checkRange(fromSeq, toSeq, this.#records[0]?.seq ?? this.#lastSeq + 1, this.#lastSeq);
    if (toSeq <= fromSeq) return [];
    const first = (this.#records[0] as CommitRecord).seq;
    return this.#records.slice(fromSeq + 1 - first, toSeq + 1 - first);
  }

  async prune(keepFromSeq: number): Promise<void> {
    const plan = planPrune(
      this.#snapshots.map((s) => s.info),
      keepFromSeq,
    );
    const doomed = new Set(plan.deleteSnapshots);
    this.#snapshots = this.#snapshots.filter((s) => !doomed.has(s.info.seq));
    let n = 0;
    while (n < this.#records.length && (this.#records[n] as CommitRecord).seq <= plan.dropRecordsThrough) {
      n++;
    }
    if (n > 0) {
      this.#records.splice(0, n);
    }
  }

  async readMeta(): Promise<Uint8Array | null> {
    return this.#meta === null ? null : this.#meta.slice();
  }

  async writeMeta(bytes: Uint8Array | null): Promise<void> {
    this.#meta = bytes === null ? null : bytes.slice();
    this.#metaVersion++;
  }

  async readMetaVersion(): Promise<VersionedMeta> {
    return { bytes: await this.readMeta(), version: this.#metaVersion };
  }

  async writeMetaIf(expectedVersion: number, bytes: Uint8Array | null): Promise<boolean> {
    if (expectedVersion !== this.#metaVersion) return false;
    await this.writeMeta(bytes);
    return true;
  }

  async close(): Promise<void> {
    this.#open = false;
  }

  /** What the adapter holds, counted in file-format bytes. */
  stats(): PersistenceStats {
    let snapshotBytes = 0;
    for (const s of this.#snapshots) snapshotBytes += s.image.length;
    return {
      records: this.#records.length,
      logBytes: this.#records.reduce((sum, r) => sum + encodedRecordSize(r), 0),
      snapshots: this.#snapshots.length,
      snapshotBytes,
    };
  }

  #checkOpen(method: string): void {
    if (!this.#open)
      throw new ActorStoreError(
        "ERR_CLOSED",
        `Cannot call ${method}() before load(): load (or reload) the persistence first.`,
      );
  }
}

/**
 * Creates an empty in-memory adapter.
 *
 * @example
 * ```ts
 * const persistence = createMemoryPersistence();
 * await persistence.load();
 * ```
 */
export function createMemoryPersistence(): MemoryPersistence {
  return new MemoryPersistence();
}
