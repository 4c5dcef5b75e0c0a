/**
 * The one interface between an object's storage and wherever its history is kept. Writes through a
 * {@link PersistenceAdapter} are the only I/O the storage core does: an append that resolves means
 * the batch survives a crash, and {@link PersistenceAdapter.load} plus
 * {@link PersistenceAdapter.streamRecords} are the single source of truth on (re)open. Opening
 * streams the log a chunk at a time, so a long log is never in memory at once.
 *
 * Two adapters ship: `createMemoryPersistence()` (the default; survives `abort()` within the
 * process) and `openFilePersistence(dir)` (Node; survives process crashes).
 *
 * @packageDocumentation
 */
import { ActorStoreError } from "../errors";
import type { CommitRecord } from "./commit-record";
import type { SnapshotDelta } from "./snapshot-delta";

/**
 * The most records one chunk of {@link PersistenceAdapter.streamRecords} holds: opening an object
 * holds at most one chunk of the log at a time.
 */
export const STREAM_CHUNK_RECORDS = 1024;

/** A stored full-database image. */
export interface SnapshotInfo {
  /** The image is the state right after commit `seq` (0 = the empty database). */
  seq: number;
  /**
   * The commit time of `seq` (ms since epoch), so retention can reason about snapshots. Stored as
   * whole, non-negative ms (see {@link snapshotTimeMs}).
   */
  timeMs: number;
  /** Size of the image in bytes. */
  bytes: number;
  /**
   * Set when the snapshot is stored as a delta (see {@link PersistenceAdapter.writeSnapshotDelta}):
   * the seq of the snapshot it applies to. Reading it still gives the whole image.
   */
  baseSeq?: number;
}

/** What {@link PersistenceAdapter.load} found. */
export interface LoadResult {
  /** Every stored snapshot, oldest first (so the newest is last). */
  snapshots: SnapshotInfo[];
  /** Bytes of torn or corrupt log tail that were found and durably cut off (0 normally). */
  truncatedBytes: number;
  /**
   * The highest seq stored (the last record's, or the newest snapshot's if that is later; 0 when
   * empty). The next append must be `lastSeq + 1`. The records themselves are not part of the
   * result: stream them with {@link PersistenceAdapter.streamRecords} (or {@link streamHistory}).
   */
  lastSeq: number;
  /**
   * The writer epoch this load claimed (see {@link PersistenceAdapter.epoch}); absent for a
   * read-only load.
   */
  epoch?: number;
}

/** The metadata blob with the version a conditional update compares against. */
export interface VersionedMeta {
  /** The metadata, `null` when none. */
  bytes: Uint8Array | null;
  /** Increases with every update; 0 when the metadata was never written. */
  version: number;
}

/**
 * Where one object's commit log, snapshots and metadata live.
 *
 * Lifecycle: call {@link PersistenceAdapter.load} first, and again to reopen (after `abort()`, a
 * reset, a failed append or {@link PersistenceAdapter.close}); it discards in-process state and
 * re-reads what is durable. Do not call `load` while other calls are in flight.
 *
 * @example
 * ```ts
 * const persistence = await openFilePersistence("./data/counter");
 * const { snapshots, lastSeq } = await persistence.load();
 * const base = snapshots[snapshots.length - 1]?.seq ?? 0;
 * // … restore the newest snapshot, then replay the records after it, a chunk at a time:
 * for await (const chunk of persistence.streamRecords(base, lastSeq)) replay(chunk);
 * await persistence.append([{ seq: lastSeq + 1, timeMs: clock.now(), reset: false, sql: [], kv }]);
 * ```
 */
export interface PersistenceAdapter {
  /**
   * Reads what exists (see {@link LoadResult}): the snapshots and where the log ends, not the
   * records (stream those). A torn or corrupt tail at the end of the log is cut
   * off durably before this resolves, so it can never resurface after a later append. Damage that
   * valid data follows (a bad frame in an older log segment) rejects with `ERR_CORRUPT` instead of
   * silently dropping confirmed commits.
   */
  load(): Promise<LoadResult>;
  /**
   * Appends records in seq order (each exactly one after the previous); resolves once they are
   * durable. Concurrent calls are queued in call order and may share one write + flush (group
   * commit). A failure rejects this call and every later append until {@link PersistenceAdapter.load}
   * is called again; a failed batch may or may not be found by that load, and `load` is the truth.
   *
   * The adapter may keep references to the records (the in-memory one does): do not mutate a
   * record or its byte arrays after passing it here.
   */
  append(records: readonly CommitRecord[]): Promise<void>;
  /**
   * Stores a full database image (a SQLite file) of the state right after commit `seq`. Waits for
   * appends already queued, and rejects if `seq` was never appended. Atomic: a crash leaves either
   * the old set of snapshots or the new one. Replaces an existing snapshot of the same seq.
   */
  writeSnapshot(info: { seq: number; timeMs: number }, image: Uint8Array): Promise<void>;
  /**
   * Optional: {@link PersistenceAdapter.writeSnapshot} of the image that is the concatenation of
   * `parts`, with the same guarantees. The caller keeps the parts unchanged until the returned
   * promise settles, and the adapter keeps no reference to them after that. The storage core uses
   * it to write the engine's own storage of the database without first copying it into one
   * buffer (docs/durability.md, *Snapshots written in place*). A wrapper adapter
   * (`DelegatingPersistence`) does not pass it on, so that a wrapper's `writeSnapshot` sees every
   * snapshot.
   */
  writeSnapshotParts?(info: { seq: number; timeMs: number }, parts: readonly Uint8Array[]): Promise<void>;
  /**
   * Optional: stores the image of the state right after commit `info.seq` as a delta, the chunks
   * that changed since the stored snapshot `delta.baseSeq` (docs/durability.md, *Incremental
   * snapshots*), with the guarantees of {@link PersistenceAdapter.writeSnapshot}. Resolves `true`
   * once it is durable, or `false` having written nothing when the adapter wants a full image
   * instead (the base is not held, or its chain is long enough): the caller then writes one. The
   * caller keeps the chunks unchanged until the promise settles. {@link PersistenceAdapter.readSnapshot}
   * of a delta's seq gives the whole image. A wrapper adapter (`DelegatingPersistence`) does not
   * pass it on.
   */
  writeSnapshotDelta?(info: { seq: number; timeMs: number }, delta: SnapshotDelta): Promise<boolean>;
  /**
   * Reads a snapshot's image (a delta's is its chain's full image with every delta applied);
   * rejects with `ERR_CORRUPT` when it, or a snapshot it is built on, is missing or fails its
   * checksum.
   */
  readSnapshot(seq: number): Promise<Uint8Array>;
  /**
   * Reads records with `fromSeq < seq <= toSeq` into memory (a short range, such as a restore's).
   * Waits for appends already queued; rejects with `ERR_BOOKMARK` if part of the range was pruned
   * or never written.
   */
  readRecords(fromSeq: number, toSeq: number): Promise<CommitRecord[]>;
  /**
   * Streams records with `fromSeq < seq <= toSeq` in seq order, a chunk of at most
   * {@link STREAM_CHUNK_RECORDS} records at a time, so that a long log is never in memory at once:
   * opening an object reads its log through this. Same waiting and errors as {@link PersistenceAdapter.readRecords};
   * a range that turns out to be cut short rejects with `ERR_BOOKMARK` when the reader reaches the
   * missing part (chunks before it were already yielded).
   */
  streamRecords(fromSeq: number, toSeq: number): AsyncIterable<readonly CommitRecord[]>;
  /**
   * Optional: the commit times of the records with `fromSeq < seq <= toSeq`, in order, without
   * decoding the records (opening an object needs only the times of the history before its base
   * snapshot). Same range rules and errors as {@link PersistenceAdapter.streamRecords}. Without it,
   * {@link streamCommitTimes} reads them through `streamRecords`.
   */
  streamCommitTimes?(fromSeq: number, toSeq: number): AsyncIterable<CommitTimes>;
  /**
   * Deletes snapshots and log records no longer needed to reach any state with seq ≥ `keepFromSeq`:
   * it keeps the newest snapshot at or before `keepFromSeq` (the base), every later snapshot and
   * every record after the base. With no such snapshot nothing is deleted. Adapters may keep more
   * (the file adapter deletes whole segments only). See `planPrune` in retention.ts.
   */
  prune(keepFromSeq: number): Promise<void>;
  /**
   * Optional: deletes the snapshots named, keeping every record (each state stays reachable from
   * an older snapshot; a restore only replays further). Resolves with the seqs it deleted. It never
   * deletes the oldest snapshot or the two newest (the open's image and its fallback), whatever is
   * asked. The storage core calls it with `planThinning`'s plan (retention.ts); without it,
   * every snapshot inside the retention window is kept.
   */
  thinSnapshots?(seqs: readonly number[]): Promise<number[]>;
  /** Reads the small metadata blob (for example a pending restore request); `null` when none. */
  readMeta(): Promise<Uint8Array | null>;
  /** Reads the metadata with its version, for {@link PersistenceAdapter.writeMetaIf}. */
  readMetaVersion(): Promise<VersionedMeta>;
  /**
   * Replaces the metadata (`null` deletes it) atomically and durably, only if its version is still
   * `expectedVersion` (a compare-and-swap): resolves `true` when it did, `false` when another write
   * came first (nothing changed then). There is no unconditional write: use {@link updateMeta} for
   * a read-modify-write.
   */
  writeMetaIf(expectedVersion: number, bytes: Uint8Array | null): Promise<boolean>;
  /**
   * Waits for queued appends, then releases resources (file handles). Data stays; calling
   * {@link PersistenceAdapter.load} again reopens the adapter.
   */
  close(): Promise<void>;
  /**
   * Optional: set by an adapter that may keep less history than the retention window asks for
   * (the in-memory adapter bounds it by bytes). Point-in-time recovery refuses bookmarks and
   * times before what it keeps with the error it gives.
   */
  keptHistory?(): KeptHistory | undefined;

  /**
   * The writer epoch claimed by the last {@link PersistenceAdapter.load} (`undefined` before the
   * first load, and for a read-only adapter, which claims nothing): every new holder's load claims
   * a higher one than any before it (a holder that reloads while it still holds its claim, such as
   * the file adapter with its lock, may keep it), and a claim fences every adapter holding an older
   * epoch. A fenced adapter is finished for good: its pending and later calls, `load()` included,
   * reject with an `ActorStoreError` whose code is `ERR_FENCED` (see {@link isFencedError}), and it
   * never confirms a write made after the newer claim. The S3 adapter claims with a create-only
   * object, the file adapter with its directory lock's generation, the IndexedDB adapter in a
   * transaction, the in-memory adapter counts loads (one holder: nothing to fence).
   */
  readonly epoch: number | undefined;
}

/**
 * A read-modify-write of the metadata through compare-and-swap: `change` gets the current bytes
 * and returns the new ones (`null` deletes, `undefined` leaves them); a write that lost a race is
 * retried on what won. Resolves with whether it wrote.
 *
 * @example
 * ```ts
 * await updateMeta(persistence, () => encode({ restoreToSeq: 42 }));
 * ```
 */
export async function updateMeta(
  adapter: Pick<PersistenceAdapter, "readMetaVersion" | "writeMetaIf">,
  change: (current: Uint8Array | null) => Uint8Array | null | undefined,
): Promise<boolean> {
  for (let attempt = 0; attempt < 64; attempt++) {
    const { bytes, version } = await adapter.readMetaVersion();
    const next = change(bytes);
    if (next === undefined) return false;
    if (await adapter.writeMetaIf(version, next)) return true;
  }
  throw new ActorStoreError(
    "ERR_WRITE_FAILED",
    "The metadata kept changing while this writer tried to update it (64 attempts); another writer is changing it too. Make sure one holder writes an object.",
  );
}

/** What an adapter with its own history bound still keeps (see {@link PersistenceAdapter.keptHistory}). */
export interface KeptHistory {
  /** The oldest restorable seq (states from here on can be rebuilt). */
  fromSeq: number;
  /** The error for a request (`what`, e.g. "Bookmark …") that needs older history. */
  refuse(what: string): ActorStoreError;
}

/**
 * The terminal error of a fenced adapter: another holder claimed the object's data with a newer
 * epoch. `what` says what failed; the message says what to do.
 *
 * @example
 * ```ts
 * if (newerClaimExists) throw fencedError("s3://objects/room-1/", 7, 8);
 * ```
 */
export function fencedError(where: string, epoch: number, newerEpoch?: number, cause?: unknown): ActorStoreError {
  const newer = newerEpoch === undefined ? "a newer epoch" : `epoch ${newerEpoch}`;
  return new ActorStoreError(
    "ERR_FENCED",
    `This writer (epoch ${epoch}) of ${where} was fenced: another holder claimed the object with ${newer}. ` +
      "Its unconfirmed writes are not confirmed and it can no longer write; drop this instance (the new holder owns the object).",
    cause === undefined ? undefined : { cause },
  );
}

/**
 * True when `error`, or an error in its `cause` chain, carries the code `ERR_FENCED`: the object
 * was taken over by a newer holder and must be dropped, not reopened.
 *
 * @example
 * ```ts
 * try { await storage.sync(); } catch (e) { if (isFencedError(e)) dropThisObject(); }
 * ```
 */
export function isFencedError(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; depth < 8 && e !== null && typeof e === "object"; depth++) {
    if ((e as { code?: unknown }).code === "ERR_FENCED") return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The commit times of consecutive records: `timesMs[i]` is the time of seq `firstSeq + i`. */
export interface CommitTimes {
  readonly firstSeq: number;
  readonly timesMs: Float64Array;
}

/**
 * Streams the commit times of records `fromSeq < seq <= toSeq` through the adapter's
 * {@link PersistenceAdapter.streamCommitTimes}, or through its records when it has none.
 *
 * @example
 * ```ts
 * for await (const { firstSeq, timesMs } of streamCommitTimes(persistence, 0, lastSeq)) timeline.appendAll(firstSeq, timesMs);
 * ```
 */
export async function* streamCommitTimes(
  adapter: Pick<PersistenceAdapter, "streamRecords" | "streamCommitTimes">,
  fromSeq: number,
  toSeq: number,
): AsyncGenerator<CommitTimes> {
  if (adapter.streamCommitTimes !== undefined) {
    yield* adapter.streamCommitTimes(fromSeq, toSeq);
    return;
  }
  for await (const chunk of adapter.streamRecords(fromSeq, toSeq)) {
    const first = chunk[0];
    if (first === undefined) continue;
    const timesMs = new Float64Array(chunk.length);
    for (let i = 0; i < chunk.length; i++) timesMs[i] = (chunk[i] as CommitRecord).timeMs;
    yield { firstSeq: first.seq, timesMs };
  }
}

/**
 * What {@link streamHistory} yields: a chunk of records, the commit times of a chunk of records
 * (only before `timesThrough`), or a restart of the history at a snapshot.
 */
export type HistoryChunk =
  | { records: readonly CommitRecord[]; times?: undefined; restartAt?: undefined }
  | { records?: undefined; times: CommitTimes; restartAt?: undefined }
  | { records?: undefined; times?: undefined; restartAt: SnapshotInfo };

/**
 * Streams an object's whole retained history: every record after the oldest snapshot (all records
 * when there is none) through `loaded.lastSeq`, in order, a chunk at a time. The log is read one
 * stretch between snapshots at a time; a stretch the log no longer holds in full (records pruned
 * or cut off while a snapshot already covered them) yields `{ restartAt }` with the snapshot that
 * ends it: the history continues from that snapshot. A gap after the newest snapshot is an error
 * (`ERR_BOOKMARK` from the adapter, or `ERR_CORRUPT` here), never skipped. With `timesThrough`,
 * stretches that end at or before that seq yield `{ times }` (commit times only, see
 * {@link streamCommitTimes}) instead of records.
 *
 * @example
 * ```ts
 * const loaded = await persistence.load();
 * for await (const chunk of streamHistory(persistence, loaded))
 *   if (chunk.records !== undefined) for (const r of chunk.records) timeline.append(r);
 * ```
 */
export async function* streamHistory(
  adapter: Pick<PersistenceAdapter, "streamRecords" | "streamCommitTimes">,
  loaded: Pick<LoadResult, "snapshots" | "lastSeq">,
  options: { timesThrough?: number } = {},
): AsyncGenerator<HistoryChunk> {
  const snapshots = loaded.snapshots;
  const timesThrough = options.timesThrough ?? Number.NEGATIVE_INFINITY;
  let at = snapshots[0]?.seq ?? 0;
  for (let i = 1; i <= Math.max(1, snapshots.length); i++) {
    const next = snapshots[i];
    const end = next === undefined ? loaded.lastSeq : next.seq;
    if (end <= at) continue;
    let reached = at;
    try {
      if (end <= timesThrough) {
        // Only the times are wanted here (a stretch before the state being built).
        for await (const times of streamCommitTimes(adapter, at, end)) {
          if (times.timesMs.length === 0) continue;
          if (times.firstSeq !== reached + 1) throw missingRecords(reached, times.firstSeq);
          reached = times.firstSeq + times.timesMs.length - 1;
          yield { times };
        }
      } else
        for await (const chunk of adapter.streamRecords(at, end)) {
          const first = chunk[0];
          if (first !== undefined && first.seq !== reached + 1) throw missingRecords(reached, first.seq);
          reached = chunk[chunk.length - 1]?.seq ?? reached;
          if (chunk.length > 0) yield { records: chunk };
        }
      if (reached !== end) throw missingRecords(reached, end + 1);
    } catch (error) {
      // Inside the history a snapshot bridges what is missing; after the newest one nothing does.
      if (next === undefined || !isMissingRecords(error)) throw error;
      yield { restartAt: next };
    }
    at = end;
  }
}

const gaps = new WeakSet<object>();

function missingRecords(reached: number, found: number): ActorStoreError {
  const error = new ActorStoreError(
    "ERR_CORRUPT",
    `The stored history is incomplete: the log jumps from commit ${reached} to commit ${found}, and no snapshot holds the state in between. The commits after ${reached} cannot be rebuilt; restore the data from a backup.`,
  );
  gaps.add(error);
  return error;
}

/** A stretch the log does not hold in full: pruned or never written (`ERR_BOOKMARK`), or a gap found here. */
function isMissingRecords(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  return gaps.has(error) || (error as { code?: unknown }).code === "ERR_BOOKMARK";
}

/**
 * {@link PersistenceAdapter.load} plus every record of the retained history in memory (see
 * {@link streamHistory}), for tools and tests that want the whole log as one array. The storage
 * itself never does this: it streams.
 *
 * @example
 * ```ts
 * const { snapshots, records } = await loadWithRecords(persistence);
 * ```
 */
export async function loadWithRecords(adapter: PersistenceAdapter): Promise<LoadResult & { records: CommitRecord[] }> {
  const loaded = await adapter.load();
  const records: CommitRecord[] = [];
  for await (const chunk of streamHistory(adapter, loaded))
    if (chunk.records !== undefined) records.push(...chunk.records);
  return { ...loaded, records };
}

/**
 * Implements {@link PersistenceAdapter.readRecords} over the adapter's own stream. @internal
 */
export async function collectRecords(stream: AsyncIterable<readonly CommitRecord[]>): Promise<CommitRecord[]> {
  const out: CommitRecord[] = [];
  for await (const chunk of stream) for (const r of chunk) out.push(r);
  return out;
}

/** Sizes of what an adapter holds, in the bytes the file format would use. */
export interface PersistenceStats {
  /** Records in the log. */
  records: number;
  /** Bytes of the log (frames: length, payload, checksum). */
  logBytes: number;
  /** Stored snapshots. */
  snapshots: number;
  /** Bytes of all snapshot images. */
  snapshotBytes: number;
}

/**
 * Checks that `records` continue the log at `lastSeq + 1` with no gaps and returns the new last
 * seq. Shared by the adapters so they agree on what a bad append is (a caller bug, rejected before
 * any I/O, which does not poison the adapter).
 * @internal
 */
export function checkAppendOrder(records: readonly CommitRecord[], lastSeq: number): number {
  let expected = lastSeq + 1;
  for (const record of records) {
    if (record.seq !== expected)
      throw new RangeError(
        `append() expected the record with seq ${expected} but got seq ${record.seq}: append records in commit order, each once.`,
      );
    expected++;
  }
  return expected - 1;
}

/** Rejects snapshots of commits that were never appended. @internal */
export function checkSnapshotSeq(seq: number, lastSeq: number): void {
  if (!Number.isSafeInteger(seq) || seq < 0 || seq > lastSeq)
    throw new RangeError(
      `writeSnapshot() got seq ${seq}, but the log ends at seq ${lastSeq}: snapshot only states whose commit was appended.`,
    );
}

/** @internal */
export function missingSnapshot(seq: number): ActorStoreError {
  return new ActorStoreError("ERR_CORRUPT", `There is no snapshot for seq ${seq}; it may have been pruned.`);
}

/**
 * Checks that records `fromSeq < seq <= toSeq` lie within `[firstSeq, lastSeq]`. @internal
 */
export function checkRange(fromSeq: number, toSeq: number, firstSeq: number, lastSeq: number): void {
  if (!Number.isSafeInteger(fromSeq) || !Number.isSafeInteger(toSeq) || fromSeq < 0 || toSeq < fromSeq)
    throw new RangeError(`readRecords() needs 0 <= fromSeq <= toSeq; got ${fromSeq}, ${toSeq}.`);
  if (toSeq === fromSeq) return;
  if (toSeq > lastSeq)
    throw new ActorStoreError(
      "ERR_BOOKMARK",
      `Cannot read records up to seq ${toSeq}: the log ends at seq ${lastSeq}.`,
    );
  if (fromSeq + 1 < firstSeq)
    throw new ActorStoreError(
      "ERR_BOOKMARK",
      `Cannot read records from seq ${fromSeq + 1}: the log holds no records before seq ${firstSeq}. That history is not there: pruned (outside the retention window), or lost (log files deleted from outside, or removed by a repair).`,
    );
}

/**
 * The time adapters store for a snapshot: whole, non-negative ms (the file adapter writes it into a
 * file name), so every adapter reports the same value after a reload. @internal
 */
export function snapshotTimeMs(timeMs: number): number {
  return Number.isFinite(timeMs) ? Math.max(0, Math.floor(timeMs)) : 0;
}
