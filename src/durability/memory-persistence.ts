/**
 * The default persistence: everything in memory. It survives `abort()` and resets of an object
 * within the process (pass the same instance again and `load()` returns what was committed), but
 * not the process itself.
 *
 * Records are kept as the objects appended (no encode/decode on the commit path, which is what the
 * benchmarks measure), while {@link MemoryPersistence.stats} counts the bytes the same log would
 * take in the file format, so size numbers stay honest.
 *
 * The history it keeps is bounded by bytes ({@link MemoryPersistenceOptions.maxHistoryBytes}): past
 * the bound, the oldest snapshot and the records only it needed are dropped, oldest first. What the
 * newest state needs (the newest snapshot and the records after it) is always kept.
 *
 * @packageDocumentation
 */
import { ActorStoreError } from "../errors";
import type { CommitRecord } from "./commit-record";
import { heldBytesOf } from "./held-bytes";
import { handOverImage, LEND_SNAPSHOT, takeWrittenImage } from "./image-handover";
import {
  checkAppendOrder,
  checkRange,
  checkSnapshotSeq,
  type KeptHistory,
  type LoadResult,
  missingSnapshot,
  type PersistenceAdapter,
  type PersistenceStats,
  type SnapshotInfo,
  STREAM_CHUNK_RECORDS,
  snapshotTimeMs,
  type VersionedMeta,
} from "./persistence";
import { checkPersistenceArguments, MEMORY_PERSISTENCE_OPTIONS } from "./persistence-options";
import { encodedRecordSize } from "./record-codec";
import { planPrune, thinnableSeqs } from "./retention";

interface StoredSnapshot {
  info: SnapshotInfo;
  image: Uint8Array;
}

export { recordHeldBytes } from "./held-bytes";

/** The default {@link MemoryPersistenceOptions.maxHistoryBytes}: 64 MiB. */
export const DEFAULT_MAX_HISTORY_BYTES = 64 * 1024 * 1024;

/** Options of {@link createMemoryPersistence}. */
export interface MemoryPersistenceOptions {
  /**
   * The most bytes of history (log records and snapshot images, as held in memory) to keep.
   * Default {@link DEFAULT_MAX_HISTORY_BYTES} (64 MiB); `Infinity` keeps everything the retention
   * window keeps. Beyond it the oldest history is dropped first, and bookmarks and times before what
   * is left fail with `ERR_BOOKMARK`. The newest snapshot and the log after it are always kept, so
   * a database larger than the bound keeps just those. For longer history keep it in a directory
   * (`ObjectStorage.open({ directory })`) or a bucket.
   */
  maxHistoryBytes?: number;
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
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
  /** `recordHeldBytes` (held-bytes.ts) of each record in `#records`. */
  #recordBytes: number[] = [];
  /** Bytes held: every record's {@link recordHeldBytes} and every snapshot image. */
  #held = 0;
  readonly #maxHistoryBytes: number;
  /** The oldest snapshot once the byte bound dropped older history (`undefined` until it did). */
  #boundFromSeq: number | undefined;

  constructor(options: MemoryPersistenceOptions = {}) {
    checkPersistenceArguments("createMemoryPersistence()", "", undefined, options, MEMORY_PERSISTENCE_OPTIONS);
    this.#maxHistoryBytes = options.maxHistoryBytes ?? DEFAULT_MAX_HISTORY_BYTES;
  }

  /** The bound on bytes of history held ({@link MemoryPersistenceOptions.maxHistoryBytes}). */
  get maxHistoryBytes(): number {
    return this.#maxHistoryBytes;
  }
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
    return {
      snapshots: this.#snapshots.map((s) => ({ ...s.info })),
      truncatedBytes: 0,
      lastSeq: this.#lastSeq,
      epoch: this.#epoch,
    };
  }

  async append(records: readonly CommitRecord[]): Promise<void> {
    this.#checkOpen("append");
    this.#lastSeq = checkAppendOrder(records, this.#lastSeq);
    for (const record of records) {
      const bytes = heldBytesOf(record);
      this.#records.push(record);
      this.#recordBytes.push(bytes);
      this.#held += bytes;
    }
    if (this.#held > this.#maxHistoryBytes) this.#enforceBound();
  }

  async writeSnapshot(info: { seq: number; timeMs: number }, image: Uint8Array): Promise<void> {
    this.#checkOpen("writeSnapshot");
    checkSnapshotSeq(info.seq, this.#lastSeq);
    // Copy (the caller's buffer may be reused, and a snapshot must not change after it is taken),
    // unless the storage core handed the image over: then it is ours, and copying it cost as much as
    // taking it (a 15 MB image at 100k keys). An image whose buffer is more than twice its size (a
    // copy's room for growth) is copied all the same, so that no large buffer is held for it.
    const keep = takeWrittenImage(this, image) && image.buffer.byteLength <= 2 * image.byteLength;
    const stored: StoredSnapshot = {
      info: { seq: info.seq, timeMs: snapshotTimeMs(info.timeMs), bytes: image.length },
      image: keep ? image : image.slice(),
    };
    for (const s of this.#snapshots) if (s.info.seq === info.seq) this.#held -= s.image.length;
    this.#snapshots = this.#snapshots.filter((s) => s.info.seq !== info.seq);
    this.#snapshots.push(stored);
    this.#held += stored.image.length;
    this.#snapshots.sort((a, b) => a.info.seq - b.info.seq);
    if (this.#held > this.#maxHistoryBytes) this.#enforceBound();
  }

  /**
   * Drops the oldest snapshot, and the records only it needed, while more than the bound is held
   * and a newer snapshot can take its place as the base.
   */
  #enforceBound(): void {
    let dropSnapshots = 0;
    let dropRecords = 0;
    let held = this.#held;
    while (held > this.#maxHistoryBytes && dropSnapshots + 1 < this.#snapshots.length) {
      held -= (this.#snapshots[dropSnapshots] as StoredSnapshot).image.length;
      dropSnapshots++;
      const base = (this.#snapshots[dropSnapshots] as StoredSnapshot).info.seq;
      while (dropRecords < this.#records.length && (this.#records[dropRecords] as CommitRecord).seq <= base) {
        held -= this.#recordBytes[dropRecords] as number;
        dropRecords++;
      }
    }
    if (dropSnapshots === 0) return;
    this.#snapshots.splice(0, dropSnapshots);
    this.#dropRecords(dropRecords);
    this.#held = held;
    this.#boundFromSeq = (this.#snapshots[0] as StoredSnapshot).info.seq;
  }

  #dropRecords(n: number): void {
    if (n === 0) return;
    for (let i = 0; i < n; i++) this.#held -= this.#recordBytes[i] as number;
    this.#records.splice(0, n);
    this.#recordBytes.splice(0, n);
  }

  /** What the byte bound left, once it dropped history (see {@link MemoryPersistenceOptions.maxHistoryBytes}). */
  keptHistory(): KeptHistory | undefined {
    const fromSeq = this.#boundFromSeq;
    if (fromSeq === undefined) return undefined;
    const max = this.#maxHistoryBytes;
    return {
      fromSeq,
      refuse: (what: string) =>
        new ActorStoreError(
          "ERR_BOOKMARK",
          `${what} is older than the history kept in memory: the in-memory persistence keeps at most ${formatBytes(max)} of history (maxHistoryBytes of createMemoryPersistence()), and the oldest state it can still restore is commit ${fromSeq}. Pass a larger maxHistoryBytes, or keep the history in a directory (ObjectStorage.open({ directory })) or a bucket for longer history.`,
        ),
    };
  }

  async readSnapshot(seq: number): Promise<Uint8Array> {
    const found = this.#snapshots.find((s) => s.info.seq === seq);
    if (found === undefined) throw missingSnapshot(seq);
    return handOverImage(this, found.image.slice());
  }

  /**
   * The stored image itself, for opening an engine that copies each part before writing it
   * (image-handover.ts): stored images are copies made by writeSnapshot and never changed.
   * @internal
   */
  async [LEND_SNAPSHOT](seq: number): Promise<Uint8Array> {
    const found = this.#snapshots.find((s) => s.info.seq === seq);
    if (found === undefined) throw missingSnapshot(seq);
    return found.image;
  }

  async readRecords(fromSeq: number, toSeq: number): Promise<CommitRecord[]> {
    return this.#range(fromSeq, toSeq);
  }

  /** The records are in memory already; they are handed out in chunks all the same. */
  async *streamRecords(fromSeq: number, toSeq: number): AsyncIterable<readonly CommitRecord[]> {
    const records = this.#range(fromSeq, toSeq);
    for (let i = 0; i < records.length; i += STREAM_CHUNK_RECORDS) yield records.slice(i, i + STREAM_CHUNK_RECORDS);
  }

  #range(fromSeq: number, toSeq: number): CommitRecord[] {
    const kept = this.keptHistory();
    if (kept !== undefined && toSeq > fromSeq && fromSeq < kept.fromSeq) {
      throw kept.refuse(`The state after commit ${fromSeq}`);
    }
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
    for (const s of this.#snapshots) if (doomed.has(s.info.seq)) this.#held -= s.image.length;
    this.#snapshots = this.#snapshots.filter((s) => !doomed.has(s.info.seq));
    let n = 0;
    while (n < this.#records.length && (this.#records[n] as CommitRecord).seq <= plan.dropRecordsThrough) {
      n++;
    }
    this.#dropRecords(n);
  }

  async thinSnapshots(seqs: readonly number[]): Promise<number[]> {
    this.#checkOpen("thinSnapshots");
    const doomed = new Set(
      thinnableSeqs(
        this.#snapshots.map((s) => s.info.seq),
        seqs,
      ),
    );
    for (const s of this.#snapshots) if (doomed.has(s.info.seq)) this.#held -= s.image.length;
    this.#snapshots = this.#snapshots.filter((s) => !doomed.has(s.info.seq));
    return [...doomed];
  }

  async readMeta(): Promise<Uint8Array | null> {
    return this.#meta === null ? null : this.#meta.slice();
  }

  async readMetaVersion(): Promise<VersionedMeta> {
    return { bytes: await this.readMeta(), version: this.#metaVersion };
  }

  async writeMetaIf(expectedVersion: number, bytes: Uint8Array | null): Promise<boolean> {
    if (expectedVersion !== this.#metaVersion) return false;
    this.#meta = bytes === null ? null : bytes.slice();
    this.#metaVersion++;
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

  /**
   * The bytes of history held in memory, as the bound counts them: every record's estimated size
   * (see {@link recordHeldBytes}) and every snapshot image.
   */
  heldBytes(): number {
    return this.#held;
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
 * const persistence = createMemoryPersistence({ maxHistoryBytes: 16 * 1024 * 1024 });
 * await persistence.load();
 * ```
 */
export function createMemoryPersistence(options: MemoryPersistenceOptions = {}): MemoryPersistence {
  return new MemoryPersistence(options);
}
