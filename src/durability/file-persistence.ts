/**
 * The Node file-system persistence: one directory per object.
 *
 * ```
 * <dir>/log-<firstSeq:16>.seg                      commit log segments (frames, see record-codec.ts)
 * <dir>/snap-<seq:16>-<timeMs:16>-<crc32:8>.sqlite database images (plain SQLite files)
 * <dir>/snap-<seq:16>-<timeMs:16>-<crc32:8>-<baseSeq:16>.delta
 *                                                  incremental snapshots (snapshot-delta.ts)
 * <dir>/meta                                       small metadata: crc32le + bytes
 * <dir>/lock-<generation:16>                       the directory lock (directory-lock.ts)
 * <dir>/*.tmp                                      unfinished writes; ignored, deleted by a writer's load
 * ```
 *
 * Durability points (docs/durability.md has the full story):
 * - append: write the frames at the segment's confirmed end, durably (the segment is opened with
 *   `O_DSYNC` where the platform has it, else each write is followed by `fdatasync`); a new
 *   segment's directory entry is fsynced too. Only then does the append resolve.
 * - snapshot and meta: write a temp file, `fsync` it, rename it into place, `fsync` the directory
 *   (a snapshot through snapshot-files.ts, which also reads it back).
 * - load: takes the directory lock (one writer per directory), then reads the directory
 *   (directory-scan.ts); a torn tail of the last segment is truncated and fsynced before anything
 *   is appended after it, so a later crash can never expose the old bytes again. Corruption is
 *   never cut: it fails with `ERR_CORRUPT`.
 *
 * Node modules are loaded with `import()` inside {@link openFilePersistence}, so bundles for the
 * browser never pull them in.
 *
 * @packageDocumentation
 */
import type { FileHandle } from "node:fs/promises";
import { ActorStoreError } from "../errors";
import type { CommitRecord } from "./commit-record";
import { createOffThreadCrc, type OffThreadCrc } from "./crc-off-thread";
import { type NativeCrc32, useNativeCrc32 } from "./crc32";
import { DirectoryLock, type LockEnv, syncLockFs } from "./directory-lock";
import { type DirectoryScan, type Segment, scanDirectory } from "./directory-scan";
import { DirectoryIo, loadNodeModules } from "./file-io";
import {
  asPlainBytes,
  deltaName,
  fileOnPath,
  headName,
  isErrno,
  META_NAME,
  segmentName,
  snapshotName,
  writeAll,
} from "./file-layout";
import { SegmentReader } from "./file-log-reader";
import { decodeMeta, encodeMeta } from "./file-meta";
import type { FilePersistence, FilePersistenceStats, OpenFilePersistenceOptions } from "./file-persistence-types";
import { GroupCommitQueue, type GroupWrite } from "./group-commit";
import { handOverImage } from "./image-handover";
import { bindLog } from "./log-binding";
import { adoptIdentity, type ObjectIdentity, parseIdentity } from "./object-identity";
import {
  type CommitTimes,
  checkRange,
  checkSnapshotSeq,
  collectRecords,
  fencedError,
  type LoadResult,
  type VersionedMeta,
} from "./persistence";
import { checkPersistenceArguments, FILE_PERSISTENCE_OPTIONS } from "./persistence-options";
import { planPrune, thinnableSeqs } from "./retention";
import { chainOf, deletableInChains, deltaFits, encodeDelta, fallbackSeq, type SnapshotDelta } from "./snapshot-delta";
import { SnapshotFiles } from "./snapshot-files";

export type { FilePersistence, FilePersistenceStats, OpenFilePersistenceOptions } from "./file-persistence-types";

const DEFAULT_SEGMENT_BYTES = 8 * 1024 * 1024;
/** Whether Node's native CRC-32 was looked for (once per process). */
let nativeCrcTried = false;

class FileAdapter implements FilePersistence {
  readonly directory: string;
  readonly #io: DirectoryIo;
  readonly #reader: SegmentReader;
  readonly #lockEnv: LockEnv;
  readonly #segmentBytes: number;
  readonly #readOnly: boolean;
  /** Terminal: another holder took the directory's lock (a newer generation exists). */
  #fenced: Error | null = null;
  /** The generation of the lock the last load took (kept after close, like every adapter's epoch). */
  #epoch: number | undefined;
  /** The directory lock, held from the first load until close (writers only). */
  #lock: DirectoryLock | null = null;
  /** Checks a large newest snapshot's CRC on another thread while load() checks the log. */
  readonly #offThreadCrc: OffThreadCrc | undefined;

  #loaded = false;
  /**
   * From the call of close() until the next load(): new work is refused at once. Work queued before
   * close() runs to its end (close waits for it); work queued later would run while the lock is
   * released, a writer without the lock.
   */
  #closing = false;
  #segments: Segment[] = [];
  /** The log's head markers on disk (`head-<seq>`, file-layout.ts), oldest first; the newest counts. */
  #heads: string[] = [];
  /** The directory's identity, as the last load found or created it (object-identity.ts). */
  #identity: ObjectIdentity | undefined;
  /** Whether the log is bound to the identity (its `logbound-…` marker is durable, log-binding.ts). */
  #logBound = false;
  /** The snapshot files held, written and read (snapshot-files.ts). */
  readonly #snapshots: SnapshotFiles;
  /** The open handle of the last segment, if appends have touched it since load. */
  #active: FileHandle | null = null;
  /** Whether writes to {@link #active} are durable on return (opened with `O_DSYNC`). */
  #activeSynced = false;
  /** Appends, written together while a write + flush is in flight (group commit). */
  readonly #log = new GroupCommitQueue({
    write: (batch) => this.#writeBatch(batch),
    failed: (cause) => this.#fenced ?? this.#failedError(cause),
    written: (batch) => {
      this.#appends += batch.appends;
    },
    // #writeBatch's writes have completed when it resolves, and nothing keeps `data`.
    reuseFrames: true,
  });
  /** Serializes snapshot, prune and meta writes so they never race over the same files. */
  #maintenance: Promise<unknown> = Promise.resolve();
  #logFlushes = 0;
  #appends = 0;

  constructor(
    directory: string,
    env: LockEnv,
    options: OpenFilePersistenceOptions,
    offThreadCrc: OffThreadCrc | undefined,
  ) {
    this.directory = directory;
    this.#offThreadCrc = offThreadCrc;
    this.#lockEnv = env;
    // Checked by openFilePersistence (persistence-options.ts).
    this.#segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    this.#readOnly = options.readOnly === true;
    this.#io = new DirectoryIo(directory, env.fs, env.path, options.allowUnsyncedWrites !== true);
    this.#reader = new SegmentReader(this.#io);
    this.#snapshots = new SnapshotFiles(this.#io, offThreadCrc, () => this.#log.writeSettled());
  }

  // -- load --------------------------------------------------------------------------------------

  /** The directory lock's generation: each writer's load takes a newer one (absent read-only). */
  get epoch(): number | undefined {
    return this.#epoch;
  }

  async load(): Promise<LoadResult> {
    if (this.#fenced !== null) throw this.#fenced;
    await this.#settle();
    if (this.#fenced !== null) throw this.#fenced;
    this.#closing = false;
    // After a failed append, cut the active segment back to what was confirmed, so a batch whose
    // append rejected is never resurrected by an in-process reload (a crash may still keep it; the
    // contract allows both, this makes the common case deterministic). We still hold the lock, so
    // the bytes after our confirmed end are ours.
    if (this.#log.failure !== null && this.#loaded && this.#lock !== null) {
      const last = this.#segments[this.#segments.length - 1];
      if (last !== undefined) await this.#io.truncate(last.name, last.bytes).catch(() => undefined);
    }
    await this.#closeActive();
    this.#loaded = false;
    this.#snapshots.forgetVerified();
    this.#reader.reset(undefined);
    const fs = this.#io.fs;

    let scan: DirectoryScan;
    if (this.#readOnly) {
      // No lock: a live writer may prune or roll files while we list and read; look again then.
      for (let attempt = 1; ; attempt++) {
        try {
          scan = await scanDirectory(this.directory, fs, this.#io.path);
          break;
        } catch (error) {
          if (!isErrno(error, "ENOENT") || attempt >= 5) throw error;
        }
      }
    } else {
      const created = await fs.mkdir(this.directory, { recursive: true }).catch(async (error: unknown) => {
        // mkdir names the whole path; the file in the way is one of its ancestors: name that one.
        if (isErrno(error, "ENOTDIR")) {
          const file = await fileOnPath(this.directory, fs, this.#io.path);
          if (file !== undefined) (error as { path?: string }).path = file;
        }
        throw error;
      });
      // A freshly created directory must itself survive a crash before anything in it can.
      if (created !== undefined) await this.#io.syncDir(this.#io.path.dirname(this.directory));
      this.#lock ??= await DirectoryLock.acquire(this.directory, this.#lockEnv);
      this.#epoch = this.#lock.generation;
      try {
        scan = await scanDirectory(this.directory, fs, this.#io.path, this.#offThreadCrc);
        await this.#applyScan(scan);
        scan = await adoptIdentity(this.#io, scan);
      } catch (error) {
        // Damaged or unreadable: let go of the directory so that a repair (or a person) can act.
        await this.#releaseLock();
        throw error;
      }
    }
    this.#segments = scan.segments;
    this.#identity = scan.identity;
    this.#logBound = scan.logBound.length > 0;
    if (this.#readOnly) this.#heads = scan.heads.map((h) => h.name);
    this.#snapshots.reset(scan);
    this.#reader.reset(scan);
    this.#log.reset(scan.lastSeq, scan.binding);
    this.#loaded = true;
    return {
      snapshots: scan.snapshots.map((s) => ({
        seq: s.seq,
        timeMs: s.timeMs,
        bytes: s.imageBytes,
        ...(s.baseSeq === undefined ? {} : { baseSeq: s.baseSeq }),
      })),
      truncatedBytes: scan.torn === undefined || this.#readOnly ? 0 : scan.torn.fileBytes - scan.torn.validBytes,
      lastSeq: scan.lastSeq,
      ...(this.#epoch === undefined ? {} : { epoch: this.#epoch }),
    };
  }

  /** Makes what a scan found true on disk: cuts a torn tail, removes leftovers. Writers only. */
  async #applyScan(scan: DirectoryScan): Promise<void> {
    const io = this.#io;
    // Unfinished snapshot or meta writes (crash before their rename): never part of the state.
    for (const name of scan.tmpFiles) await io.fs.rm(io.file(name), { force: true });
    // The torn tail of the newest segment is cut durably now, before anything is appended after it.
    if (scan.torn !== undefined) await io.truncate(scan.torn.segment, scan.torn.validBytes);
    // An empty newest segment (a crash right after creating it, or a cut tail) carries no commits.
    if (scan.emptyNewest !== undefined) {
      await io.fs.rm(io.file(scan.emptyNewest), { force: true });
      await io.syncDir(this.directory);
    }
    // A repair's record of a log cut short of the newest snapshot, once the log reaches past it
    // again: kept, it would excuse the same picture if the log were later lost back to that seq.
    for (const name of scan.staleLogCuts) await io.fs.rm(io.file(name), { force: true });
    // Nothing else is removed: a snapshot the log no longer extends is damage (directory-scan.ts).
    // The head marker names the newest segment with commits. A directory that a version before the
    // marker wrote has none; one a session that crashed between a roll and its marker left, or one
    // a version that does not know the marker rolled, has an older one: mark the newest segment,
    // once its bytes and name are durable (a marker is never on disk without them).
    this.#heads = scan.heads.map((h) => h.name);
    const newest = scan.segments[scan.segments.length - 1];
    const marked = scan.heads[scan.heads.length - 1]?.seq ?? 0;
    if (newest !== undefined && newest.firstSeq > marked) {
      await io.truncate(newest.name, newest.bytes);
      await io.syncDir(this.directory);
    }
    if (newest !== undefined) await this.#markHead(newest.firstSeq);
  }

  /**
   * Records that segment `firstSeq` holds durable commits (its head marker), then removes the older
   * markers. Called only once that is true: a marker is never on disk without its segment. Its
   * own durability rides on the next directory fsync (a roll, a snapshot, a prune): a power loss
   * before that leaves an older marker, which only checks less.
   */
  async #markHead(firstSeq: number): Promise<void> {
    const name = headName(firstSeq);
    const io = this.#io;
    if (!this.#heads.includes(name)) {
      await io.fs.writeFile(io.file(name), new Uint8Array(0));
      this.#heads.push(name);
    }
    for (const old of this.#heads.filter((h) => h !== name)) {
      try {
        await io.fs.rm(io.file(old), { force: true });
        this.#heads = this.#heads.filter((h) => h !== old);
      } catch {
        // Left behind, it is older than the new one, which counts: the next roll tries again.
      }
    }
  }

  // -- append (group commit) ---------------------------------------------------------------------

  append(records: readonly CommitRecord[]): Promise<void> {
    try {
      if (this.#closing && this.#fenced === null) throw closedError(this.directory);
      this.#checkWritable("append");
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#log.append(records);
  }

  /** One write + flush of the log: everything queued while the previous one was in flight. */
  async #writeBatch(batch: GroupWrite): Promise<void> {
    if (this.#lock === null) throw closedError(this.directory);
    // The frames are bound to the identity: the directory says so (durably) before the first is written.
    if (!this.#logBound) {
      await bindLog(this.#io, batch.firstSeq - 1);
      this.#logBound = true;
      this.#reader.bindAfter(batch.firstSeq - 1);
    }
    let segment = this.#segments[this.#segments.length - 1];
    let created = false;
    if (segment === undefined || segment.bytes >= this.#segmentBytes || segment.lastSeq + 1 !== batch.firstSeq) {
      // Roll: the previous segment is complete and already flushed, so it is never written again.
      await this.#closeActive();
      segment = { name: segmentName(batch.firstSeq), firstSeq: batch.firstSeq, lastSeq: batch.firstSeq - 1, bytes: 0 };
      ({ handle: this.#active, synced: this.#activeSynced } = await this.#io.openLog(segment.name, true));
      this.#segments.push(segment);
      created = true;
    } else if (this.#active === null) {
      ({ handle: this.#active, synced: this.#activeSynced } = await this.#io.openLog(segment.name, false));
    }
    const handle = this.#active as FileHandle;
    const data = batch.data;
    // Positional writes at the confirmed end: after a failed write nothing is appended after
    // garbage, and load() can cut the file back to exactly `segment.bytes`.
    await writeAll(handle, data, segment.bytes);
    const flush = async () => {
      if (!this.#io.sync) return;
      // fdatasync, not fsync: it flushes the data and the size change, which is all a reader needs.
      // Opened with O_DSYNC, the write itself did that (file-io.ts, `openLog`).
      if (!this.#activeSynced) await handle.datasync();
      // A new segment's directory entry must be durable too, or a crash could drop the whole file
      // whose contents we just flushed.
      if (created) await this.#io.syncDir(this.directory);
    };
    // Confirmed only while no newer holder took the directory's lock (the fence). The bytes are
    // visible to every process from here on (a holder that takes the lock later reads them), so the
    // check runs while they are flushed instead of after (with O_DSYNC they already are: the check
    // is the one wait after the write).
    const [flushed, fenced] = await Promise.allSettled([flush(), this.#checkFence()]);
    if (fenced.status === "rejected") throw fenced.reason;
    if (flushed.status === "rejected") throw flushed.reason;
    this.#logFlushes++;
    segment.bytes += data.length;
    segment.lastSeq = batch.lastSeq;
    // The new segment holds durable commits now (and its name is durable): mark it the log's head.
    if (created) await this.#markHead(segment.firstSeq);
  }

  // -- snapshots ---------------------------------------------------------------------------------

  writeSnapshot(info: { seq: number; timeMs: number }, image: Uint8Array): Promise<void> {
    return this.#writeSnapshot(info, [image]);
  }

  writeSnapshotParts(info: { seq: number; timeMs: number }, parts: readonly Uint8Array[]): Promise<void> {
    return this.#writeSnapshot(info, parts);
  }

  /**
   * A delta is written only on a base this adapter holds, while its chain stays within
   * `deltaFits` (snapshot-delta.ts); else nothing is written and the caller writes a full image.
   */
  writeSnapshotDelta(info: { seq: number; timeMs: number }, delta: SnapshotDelta): Promise<boolean> {
    const queued = this.#log.acceptedSeq;
    return this.#maintain("writeSnapshotDelta", async () => {
      await this.#log.settledThrough(queued);
      this.#checkSnapshotSeq(info.seq);
      const chain = delta.baseSeq < info.seq ? chainOf(this.#snapshots.list, delta.baseSeq) : undefined;
      const base = chain?.[chain.length - 1];
      let changed = 0;
      for (const c of delta.chunks) changed += c.bytes.length;
      if (chain === undefined || base === undefined || !deltaFits(chain, changed, delta.byteLength)) return false;
      const parts = encodeDelta(info.seq, base.crc, delta);
      const written = await this.#snapshots.write(info, parts, (timeMs, crc) =>
        deltaName(info.seq, timeMs, crc, base.seq),
      );
      if (written === undefined) return true;
      await this.#snapshots.held(info.seq, { ...written, baseSeq: base.seq, imageBytes: delta.byteLength });
      return true;
    });
  }

  #writeSnapshot(info: { seq: number; timeMs: number }, parts: readonly Uint8Array[]): Promise<void> {
    const queued = this.#log.acceptedSeq;
    return this.#maintain("writeSnapshot", async () => {
      await this.#log.settledThrough(queued);
      this.#checkSnapshotSeq(info.seq);
      const written = await this.#snapshots.write(info, parts, (timeMs, crc) => snapshotName(info.seq, timeMs, crc));
      if (written !== undefined) await this.#snapshots.held(info.seq, { ...written, imageBytes: written.bytes });
    });
  }

  /**
   * A snapshot's seq must be durable, and not older than the log's start: a snapshot that the log
   * no longer continues from is what lost segments leave, which load() reports as damage.
   */
  #checkSnapshotSeq(seq: number): void {
    checkSnapshotSeq(seq, this.#log.durableSeq);
    const first = this.#segments[0]?.firstSeq ?? this.#log.durableSeq + 1;
    if (seq < first - 1)
      throw new RangeError(
        `writeSnapshot() got seq ${seq}, but the log before seq ${first} was pruned: snapshot a state the log still continues from (seq ${first - 1} or later).`,
      );
  }

  async readSnapshot(seq: number): Promise<Uint8Array> {
    // A fresh buffer of the file's bytes that this adapter keeps no reference to.
    return handOverImage(this, await this.#snapshots.read(seq));
  }

  // -- reading the log ---------------------------------------------------------------------------

  readRecords(fromSeq: number, toSeq: number): Promise<CommitRecord[]> {
    return collectRecords(this.streamRecords(fromSeq, toSeq));
  }

  /** One segment at a time: a chunk is the records of one segment within the range. */
  async *streamRecords(fromSeq: number, toSeq: number): AsyncIterable<readonly CommitRecord[]> {
    if (!(await this.#readableRange(fromSeq, toSeq))) return;
    // A copy: a prune or a roll may change the list while the reader is between chunks.
    yield* this.#reader.records(
      this.#segments.map((s) => ({ ...s })),
      fromSeq,
      toSeq,
    );
  }

  /** The commit times a segment at a time, from what load() read where it can (file-log-reader.ts). */
  async *streamCommitTimes(fromSeq: number, toSeq: number): AsyncIterable<CommitTimes> {
    if (!(await this.#readableRange(fromSeq, toSeq))) return;
    yield* this.#reader.times(
      this.#segments.map((s) => ({ ...s })),
      fromSeq,
      toSeq,
    );
  }

  /** Waits for queued appends and checks the range; `false` when it is empty. */
  async #readableRange(fromSeq: number, toSeq: number): Promise<boolean> {
    await this.#log.settledThrough(this.#log.acceptedSeq);
    const firstSeq = this.#segments[0]?.firstSeq ?? this.#log.durableSeq + 1;
    checkRange(fromSeq, toSeq, firstSeq, this.#log.durableSeq);
    return toSeq > fromSeq;
  }

  // -- retention ---------------------------------------------------------------------------------

  prune(keepFromSeq: number): Promise<void> {
    return this.#maintain("prune", async () => {
      // Keep the snapshot before the newest one and the log after it: if the newest image is
      // damaged later, load() falls back to that one (writeSnapshot verified the newest on write).
      // With deltas, also the snapshot before the newest chain's full image (a damaged full image
      // takes its deltas along): see fallbackSeq in snapshot-delta.ts.
      const snapshots = this.#snapshots.list;
      const fallback = fallbackSeq(snapshots);
      const keep = fallback === undefined ? keepFromSeq : Math.min(keepFromSeq, fallback);
      const plan = planPrune(snapshots, keep);
      if (plan.baseSeq === null) return;
      // Never a base that a kept delta is built on; deltas go before their bases.
      // Snapshots first, made durable, then segments: a crash in between leaves extra old segments
      // (harmless), never a snapshot whose following records are gone. So load() can take a
      // snapshot whose following records are gone for what it is: damage (directory-scan.ts).
      await this.#snapshots.remove(deletableInChains(snapshots, plan.deleteSnapshots));
      // Snapshot files older than the base that this adapter does not hold (a load skipped them as
      // damaged, a write failed after its rename) go too, or they would outlive the log after them.
      await this.#snapshots.removeUnheld(plan.baseSeq);
      // Whole segments only, oldest first, never the newest (appends go there), each removal made
      // durable before the next: whatever a power loss undoes, the log left has no hole.
      while (this.#segments.length > 1) {
        const segment = this.#segments[0] as Segment;
        if (segment.lastSeq > plan.dropRecordsThrough) break;
        await this.#io.fs.rm(this.#io.file(segment.name), { force: true });
        this.#segments.shift();
        await this.#io.syncDir(this.directory);
      }
    });
  }

  thinSnapshots(seqs: readonly number[]): Promise<number[]> {
    return this.#maintain("thinSnapshots", async () => {
      // Never a base that a kept delta is built on; deltas go before their bases.
      const snapshots = this.#snapshots.list;
      const doomed = deletableInChains(
        snapshots,
        thinnableSeqs(
          snapshots.map((s) => s.seq),
          seqs,
        ),
      );
      // Every record stays, so a crash halfway leaves extra snapshots, never a state out of reach.
      await this.#snapshots.remove(doomed);
      return doomed;
    });
  }

  // -- metadata ----------------------------------------------------------------------------------

  async readMeta(): Promise<Uint8Array | null> {
    return (await this.readMetaVersion()).bytes;
  }

  /** The meta file's format is in file-meta.ts. */
  async readMetaVersion(): Promise<VersionedMeta> {
    let bytes: Uint8Array;
    try {
      bytes = asPlainBytes(await this.#io.fs.readFile(this.#io.file(META_NAME)));
    } catch (error) {
      if (isErrno(error, "ENOENT")) return { bytes: null, version: 0 };
      throw error;
    }
    return decodeMeta(bytes, this.directory, await this.#identityNow());
  }

  writeMetaIf(expectedVersion: number, bytes: Uint8Array | null): Promise<boolean> {
    const copy = bytes === null ? null : bytes.slice();
    return this.#maintain("writeMetaIf", async () => {
      // Serialized with every other write of this holder, and no other holder writes (the lock):
      // comparing with what the file says now is the compare-and-swap.
      const { version } = await this.readMetaVersion();
      if (version !== expectedVersion) return false;
      // A deletion is a tombstone with the next version, not a removed file: a version never
      // goes back, so a stale expected version can never match again.
      await this.#io.writeFileAtomic(META_NAME, encodeMeta(version + 1, copy, (await this.#identityNow())?.id));
      return true;
    });
  }

  /** The directory's identity (object-identity.ts): the load's, else (not loaded) as the directory lists it. */
  async #identityNow(): Promise<ObjectIdentity | undefined> {
    if (this.#loaded) return this.#identity;
    const names = await this.#io.fs.readdir(this.directory).catch(() => [] as string[]);
    return names.map(parseIdentity).find((i) => i !== undefined);
  }

  // -- lifecycle ---------------------------------------------------------------------------------

  async close(): Promise<void> {
    this.#closing = true;
    await this.#settle();
    await this.#closeActive();
    this.#loaded = false;
    this.#snapshots.forgetVerified();
    this.#reader.reset(undefined);
    await this.#releaseLock();
  }

  async holdsLock(): Promise<boolean> {
    return this.#lock !== null && (await this.#lock.stillHeld());
  }

  async #releaseLock(): Promise<void> {
    const lock = this.#lock;
    this.#lock = null;
    await lock?.release();
  }

  stats(): FilePersistenceStats {
    let logBytes = 0;
    let records = 0;
    for (const s of this.#segments) {
      logBytes += s.bytes;
      records += s.lastSeq - s.firstSeq + 1;
    }
    let snapshotBytes = 0;
    for (const s of this.#snapshots.list) snapshotBytes += s.bytes;
    return {
      records,
      logBytes,
      snapshots: this.#snapshots.list.length,
      snapshotBytes,
      segments: this.#segments.length,
      logFlushes: this.#logFlushes,
      appends: this.#appends,
    };
  }

  // -- helpers -----------------------------------------------------------------------------------

  #checkWritable(method: string): void {
    if (this.#fenced !== null) throw this.#fenced;
    if (!this.#loaded)
      throw new ActorStoreError(
        "ERR_CLOSED",
        `Cannot call ${method}() before load(): load (or reload) the persistence first.`,
      );
    if (this.#readOnly)
      throw new ActorStoreError(
        "ERR_CLOSED",
        `Cannot ${method}(): ${this.directory} was opened with readOnly: true. Open it without readOnly to change it.`,
      );
    if (this.#lock === null) throw closedError(this.directory);
  }

  #failedError(cause: Error): ActorStoreError {
    return new ActorStoreError(
      "ERR_WRITE_FAILED",
      `Writing the commit log in ${this.directory} failed (${cause.message}); call load() to reopen.`,
      { cause },
    );
  }

  /**
   * Runs `fn` after earlier maintenance; a failure rejects this call only. Its result counts only
   * if no newer holder took the lock meanwhile (checked after it ran).
   */
  #maintain<T>(method: string, fn: () => Promise<T>): Promise<T> {
    if (this.#closing && this.#fenced === null) return Promise.reject(closedError(this.directory));
    const run = async () => {
      this.#checkWritable(method);
      let result: T;
      try {
        result = await fn();
      } catch (error) {
        throw this.#fenced ?? error;
      }
      await this.#checkFence();
      return result;
    };
    const result = this.#maintenance.then(run, run);
    this.#maintenance = result.catch(() => undefined);
    return result;
  }

  /** Fences this writer for good when another holder has taken the directory's lock. */
  async #checkFence(): Promise<void> {
    const lock = this.#lock;
    if (lock === null) return;
    const newer = await lock.newerGeneration();
    if (newer !== undefined) {
      this.#fenced ??= fencedError(this.directory, lock.generation, newer);
      throw this.#fenced;
    }
  }

  /** Waits for appends and maintenance in flight. */
  async #settle(): Promise<void> {
    await this.#log.idle();
    await this.#maintenance;
  }

  async #closeActive(): Promise<void> {
    const handle = this.#active;
    this.#active = null;
    if (handle !== null) await handle.close().catch(() => undefined);
  }
}

function closedError(directory: string): ActorStoreError {
  return new ActorStoreError(
    "ERR_CLOSED",
    `This persistence adapter of ${directory} was closed and no longer holds the directory; call load() to reopen.`,
  );
}

/**
 * Opens (without loading) the file persistence of one object in `directory`, created on first
 * load. Call `load()` before anything else. `load()` takes the directory's lock: while one adapter
 * (of this process or another) has the directory loaded, loading it elsewhere rejects with
 * `ERR_LOCKED` naming the holder; a lock left by a killed process is taken over. `close()` releases
 * it. With `readOnly: true` no lock is taken and nothing is changed.
 *
 * @example
 * ```ts
 * const persistence = await openFilePersistence("./data/objects/counter-1");
 * const storage = await ObjectStorage.open({ persistence });
 * ```
 */
export async function openFilePersistence(
  directory: string,
  options: OpenFilePersistenceOptions = {},
): Promise<FilePersistence> {
  checkPersistenceArguments("openFilePersistence()", "directory", directory, options, FILE_PERSISTENCE_OPTIONS);
  const [fs, path, os, fsSync, zlib] = await loadNodeModules();
  // Snapshot images and large frames are checksummed natively where Node has it (20.15+).
  const nativeCrc = (zlib as { crc32?: unknown }).crc32;
  if (!nativeCrcTried && typeof nativeCrc === "function") useNativeCrc32(nativeCrc as NativeCrc32);
  nativeCrcTried = true;
  const env: LockEnv = { fs, lockFs: syncLockFs(fsSync), path, hostname: os.hostname(), pid: process.pid };
  return new FileAdapter(path.resolve(directory), env, options, await createOffThreadCrc(fs));
}
