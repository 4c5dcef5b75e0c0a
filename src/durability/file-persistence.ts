/**
 * The Node file-system persistence: one directory per object.
 *
 * ```
 * <dir>/log-<firstSeq:16>.seg                      commit log segments (frames, see record-codec.ts)
 * <dir>/snap-<seq:16>-<timeMs:16>-<crc32:8>.sqlite database images (plain SQLite files)
 * <dir>/meta                                       small metadata: crc32le + bytes
 * <dir>/*.tmp                                      unfinished writes; ignored and deleted on load
 * ```
 *
 * Durability points (docs/durability.md has the full story):
 * - append: write the frames at the segment's confirmed end, then `fdatasync`; a new segment's
 *   directory entry is fsynced too. Only then does the append resolve.
 * - snapshot and meta: write a temp file, `fsync` it, rename it into place, `fsync` the directory.
 * - load: a torn or corrupt tail of the last segment is truncated and fsynced before anything is
 *   appended after it, so a later crash can never expose the old bytes again.
 *
 * Node modules are loaded with `import()` inside {@link openFilePersistence}, so bundles for the
 * browser never pull them in.
 *
 * @packageDocumentation
 */
import type { FileHandle } from "node:fs/promises";
import { ActorStoreError, toError } from "../errors";
import type { CommitRecord } from "./commit-record";
import { crc32 } from "./crc32";
import {
  asPlainBytes,
  concat,
  isErrno,
  META_NAME,
  SEGMENT_RE,
  SNAPSHOT_RE,
  segmentName,
  snapshotName,
  TMP_SUFFIX,
  writeAll,
} from "./file-layout";
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
} from "./persistence";
import { decodeRecords, encodeRecords } from "./record-codec";
import { planPrune } from "./retention";

type Fs = typeof import("node:fs/promises");
type Path = typeof import("node:path");

/** Options of {@link openFilePersistence}. */
export interface OpenFilePersistenceOptions {
  /**
   * A segment is closed and a new one started once it holds at least this many bytes. Smaller
   * segments let retention free space sooner; larger ones mean fewer files. Default 8 MiB.
   */
  segmentBytes?: number;
  /**
   * Skips every `fsync`/`fdatasync` (appends resolve once the OS has the bytes).
   *
   * **Warning:** weakens durability: a power loss or kernel crash can lose confirmed writes or leave
   * a snapshot or the metadata empty. A process crash alone is still survived. For tests and
   * throwaway data only.
   */
  allowUnsyncedWrites?: boolean;
}

/** Sizes and I/O counts of a file adapter. */
export interface FilePersistenceStats extends PersistenceStats {
  /** Log segment files. */
  segments: number;
  /** Write + flush rounds of the log: several concurrent appends share one (group commit). */
  logFlushes: number;
  /** Appends that resolved. */
  appends: number;
}

/** A {@link PersistenceAdapter} over a directory, with stats. */
export interface FilePersistence extends PersistenceAdapter {
  /** The object's directory (absolute). */
  readonly directory: string;
  /** What the directory holds and how many flushes the log took. */
  stats(): FilePersistenceStats;
}

const DEFAULT_SEGMENT_BYTES = 8 * 1024 * 1024;
interface Segment {
  name: string;
  firstSeq: number;
  /** The last seq in the segment (`firstSeq - 1` while empty). */
  lastSeq: number;
  /** Bytes known to be valid and durable; appends write here. */
  bytes: number;
}

interface StoredSnapshot extends SnapshotInfo {
  name: string;
  crc: number;
}

interface PendingAppend {
  frames: Uint8Array;
  firstSeq: number;
  lastSeq: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Which adapter currently owns each directory in this process. Loading a directory fences off any
 * older adapter of it, whose writes then reject instead of interleaving with the new owner's.
 */
const owners = new Map<string, FileAdapter>();

class FileAdapter implements FilePersistence {
  readonly directory: string;
  readonly #fs: Fs;
  readonly #path: Path;
  readonly #segmentBytes: number;
  readonly #sync: boolean;

  #loaded = false;
  #segments: Segment[] = [];
  #snapshots: StoredSnapshot[] = [];
  /** The open handle of the last segment, if appends have touched it since load. */
  #active: FileHandle | null = null;
  /** Highest seq accepted by append (queued or durable) and highest durable seq. */
  #acceptedSeq = 0;
  #durableSeq = 0;
  #failure: Error | null = null;
  #queue: PendingAppend[] = [];
  #draining: Promise<void> | null = null;
  /** Woken after every write round of the drain loop (and when it stops); see #settledThrough. */
  #roundWaiters: Array<() => void> = [];
  /** Serializes snapshot, prune and meta writes so they never race over the same files. */
  #maintenance: Promise<unknown> = Promise.resolve();
  #dirSyncWorks = true;
  #logFlushes = 0;
  #appends = 0;

  constructor(directory: string, fs: Fs, path: Path, options: OpenFilePersistenceOptions) {
    this.directory = directory;
    this.#fs = fs;
    this.#path = path;
    const segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    if (!(Number.isSafeInteger(segmentBytes) && segmentBytes > 0))
      throw new ActorStoreError(
        "ERR_INVALID_OPTION",
        `segmentBytes must be a positive integer; got ${String(options.segmentBytes)}.`,
      );
    this.#segmentBytes = segmentBytes;
    this.#sync = options.allowUnsyncedWrites !== true;
  }

  // -- load --------------------------------------------------------------------------------------

  async load(): Promise<LoadResult> {
    await this.#settle();
    const fs = this.#fs;
    // After a failed append, cut the active segment back to what was confirmed, so a batch whose
    // append rejected is never resurrected by an in-process reload (a crash may still keep it; the
    // contract allows both, this makes the common case deterministic).
    // Only while this adapter still owns the directory: if another adapter loaded it since, the
    // bytes after our confirmed end are that adapter's confirmed commits.
    if (this.#failure !== null && this.#loaded && owners.get(this.directory) === this) {
      const last = this.#segments[this.#segments.length - 1];
      if (last !== undefined) await this.#truncate(last.name, last.bytes).catch(() => undefined);
    }
    await this.#closeActive();
    this.#loaded = false;
    this.#failure = null;
    owners.set(this.directory, this);

    const created = await fs.mkdir(this.directory, { recursive: true });
    // A freshly created directory must itself survive a crash before anything in it can.
    if (created !== undefined) await this.#syncDir(this.#path.dirname(this.directory));

    const segments: Segment[] = [];
    const snapshots: StoredSnapshot[] = [];
    for (const name of await fs.readdir(this.directory)) {
      if (name.endsWith(TMP_SUFFIX)) {
        // An unfinished snapshot or meta write (crash before its rename): never part of the state.
        await fs.rm(this.#file(name), { force: true });
        continue;
      }
      const seg = SEGMENT_RE.exec(name);
      if (seg !== null) {
        const firstSeq = Number(seg[1]);
        segments.push({ name, firstSeq, lastSeq: firstSeq - 1, bytes: 0 });
        continue;
      }
      const snap = SNAPSHOT_RE.exec(name);
      if (snap !== null) {
        const { size } = await fs.stat(this.#file(name));
        snapshots.push({
          name,
          seq: Number(snap[1]),
          timeMs: Number(snap[2]),
          crc: Number.parseInt(snap[3] ?? "", 16),
          bytes: size,
        });
      }
    }
    segments.sort((a, b) => a.firstSeq - b.firstSeq);
    snapshots.sort((a, b) => a.seq - b.seq);

    const oldestSnapshotSeq = snapshots[0]?.seq ?? 0;
    const snapshotSeqs = new Set(snapshots.map((s) => s.seq));
    const records: CommitRecord[] = [];
    let truncatedBytes = 0;
    let previous: Segment | undefined;
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i] as Segment;
      const next = segments[i + 1];
      const isLast = next === undefined;
      if (previous !== undefined && segment.firstSeq !== previous.lastSeq + 1) {
        // A gap is legitimate only when a snapshot covers it (the log was started again after a
        // snapshot newer than its end); otherwise confirmed commits are missing.
        if (!(segment.firstSeq > previous.lastSeq + 1 && snapshotSeqs.has(segment.firstSeq - 1)))
          throw this.#corrupt(
            `log segment ${segment.name} starts at seq ${segment.firstSeq}, but the previous segment ends at seq ${previous.lastSeq}`,
          );
      }
      if (next !== undefined && next.firstSeq - 1 <= oldestSnapshotSeq) {
        // Entirely older than every snapshot: not needed to open or restore; prune will delete it.
        segment.lastSeq = next.firstSeq - 1;
        segment.bytes = (await fs.stat(this.#file(segment.name))).size;
        previous = segment;
        continue;
      }
      const bytes = await fs.readFile(this.#file(segment.name));
      const decoded = decodeRecords(bytes);
      if (decoded.tornTail) {
        if (!isLast)
          throw this.#corrupt(
            `log segment ${segment.name} is damaged at byte ${decoded.validBytes} (${decoded.reason}) and later segments hold newer commits`,
          );
        // The tail of the newest segment: a write that a crash interrupted (or damage we cannot
        // tell from one). Cut it off durably now, before anything is appended after it.
        await this.#truncate(segment.name, decoded.validBytes);
        truncatedBytes += bytes.length - decoded.validBytes;
      }
      let expected = segment.firstSeq;
      for (const record of decoded.records) {
        if (record.seq !== expected)
          throw this.#corrupt(`log segment ${segment.name} holds seq ${record.seq} where seq ${expected} belongs`);
        expected++;
        if (record.seq > oldestSnapshotSeq) records.push(record);
      }
      segment.lastSeq = expected - 1;
      segment.bytes = decoded.validBytes;
      previous = segment;
    }

    // An empty newest segment (a crash right after creating it, or a truncated tail) carries no
    // commits; remove it so the next append starts cleanly.
    const last = segments[segments.length - 1];
    if (last !== undefined && last.bytes === 0) {
      await fs.rm(this.#file(last.name), { force: true });
      await this.#syncDir(this.directory);
      segments.pop();
    }

    // Snapshots older than the log's first record minus one cannot be replayed forward (a prune
    // was interrupted between deleting segments and snapshots): finish that prune.
    const firstLogSeq = segments[0]?.firstSeq;
    const logEnd = segments[segments.length - 1]?.lastSeq ?? 0;
    const lastSeq = Math.max(logEnd, snapshots[snapshots.length - 1]?.seq ?? 0);
    const floor = (firstLogSeq ?? lastSeq + 1) - 1;
    const orphans = snapshots.filter((s, i) => s.seq < floor && i < snapshots.length - 1);
    for (const s of orphans) await fs.rm(this.#file(s.name), { force: true });
    const kept = snapshots.filter((s) => !orphans.includes(s));
    const keptOldest = kept[0]?.seq ?? 0;

    this.#segments = segments;
    this.#snapshots = kept;
    this.#acceptedSeq = lastSeq;
    this.#durableSeq = lastSeq;
    this.#loaded = true;
    return {
      snapshots: kept.map((s) => ({ seq: s.seq, timeMs: s.timeMs, bytes: s.bytes })),
      records: keptOldest === oldestSnapshotSeq ? records : records.filter((r) => r.seq > keptOldest),
      truncatedBytes,
      lastSeq,
    };
  }

  // -- append (group commit) ---------------------------------------------------------------------

  append(records: readonly CommitRecord[]): Promise<void> {
    try {
      this.#checkWritable("append");
      if (this.#failure !== null) throw this.#failedError();
      if (records.length === 0) return this.#settledThrough(this.#acceptedSeq);
      const firstSeq = this.#acceptedSeq + 1;
      const lastSeq = checkAppendOrder(records, this.#acceptedSeq);
      // Encode now, synchronously: the caller may reuse its objects once append returns.
      const frames = encodeRecords(records);
      this.#acceptedSeq = lastSeq;
      return new Promise<void>((resolve, reject) => {
        this.#queue.push({ frames, firstSeq, lastSeq, resolve, reject });
        this.#draining ??= this.#drain();
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Writes queued appends until the queue is empty. Everything queued while one write + flush is in
   * flight goes out together in the next round: that is the group commit, one flush for many.
   */
  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0);
        try {
          if (owners.get(this.directory) !== this) throw this.#supersededError();
          await this.#writeBatch(batch);
        } catch (error) {
          this.#failure = toError(error);
          const failed = this.#failedError();
          // Later appends were encoded against seqs that will never be durable: fail them too.
          for (const p of batch.concat(this.#queue.splice(0))) p.reject(failed);
          return;
        }
        this.#durableSeq = (batch[batch.length - 1] as PendingAppend).lastSeq;
        this.#appends += batch.length;
        for (const p of batch) p.resolve();
        this.#wakeRoundWaiters();
      }
    } finally {
      this.#draining = null;
      this.#wakeRoundWaiters();
    }
  }

  async #writeBatch(batch: PendingAppend[]): Promise<void> {
    const first = batch[0] as PendingAppend;
    let segment = this.#segments[this.#segments.length - 1];
    let created = false;
    if (segment === undefined || segment.bytes >= this.#segmentBytes || segment.lastSeq + 1 !== first.firstSeq) {
      // Roll: the previous segment is complete and already flushed, so it is never written again.
      await this.#closeActive();
      segment = { name: segmentName(first.firstSeq), firstSeq: first.firstSeq, lastSeq: first.firstSeq - 1, bytes: 0 };
      this.#active = await this.#fs.open(this.#file(segment.name), "wx");
      this.#segments.push(segment);
      created = true;
    } else if (this.#active === null) {
      this.#active = await this.#fs.open(this.#file(segment.name), "r+");
    }
    const handle = this.#active as FileHandle;
    const data = batch.length === 1 ? first.frames : concat(batch.map((p) => p.frames));
    // Positional writes at the confirmed end: after a failed write nothing is appended after
    // garbage, and load() can cut the file back to exactly `segment.bytes`.
    await writeAll(handle, data, segment.bytes);
    if (this.#sync) {
      // fdatasync, not fsync: it flushes the data and the size change, which is all a reader needs.
      await handle.datasync();
      // A new segment's directory entry must be durable too, or a crash could drop the whole file
      // whose contents we just flushed.
      if (created) await this.#syncDir(this.directory);
    }
    this.#logFlushes++;
    segment.bytes += data.length;
    segment.lastSeq = (batch[batch.length - 1] as PendingAppend).lastSeq;
  }

  // -- snapshots ---------------------------------------------------------------------------------

  writeSnapshot(info: { seq: number; timeMs: number }, image: Uint8Array): Promise<void> {
    const queued = this.#acceptedSeq;
    return this.#maintain("writeSnapshot", async () => {
      await this.#settledThrough(queued);
      checkSnapshotSeq(info.seq, this.#durableSeq);
      const crc = crc32(image);
      const timeMs = snapshotTimeMs(info.timeMs);
      const name = snapshotName(info.seq, timeMs, crc);
      // Temp file, flushed, then renamed: a crash leaves either no snapshot or a whole one, never a
      // partial image under a real snapshot name. The directory fsync makes the rename durable.
      await this.#writeFileAtomic(name, image);
      const replaced = this.#snapshots.filter((s) => s.seq === info.seq && s.name !== name);
      for (const s of replaced) await this.#fs.rm(this.#file(s.name), { force: true });
      this.#snapshots = this.#snapshots.filter((s) => s.seq !== info.seq);
      this.#snapshots.push({ name, seq: info.seq, timeMs, bytes: image.length, crc });
      this.#snapshots.sort((a, b) => a.seq - b.seq);
    });
  }

  async readSnapshot(seq: number): Promise<Uint8Array> {
    const found = this.#snapshots.find((s) => s.seq === seq);
    if (found === undefined) throw missingSnapshot(seq);
    let bytes: Uint8Array;
    try {
      bytes = asPlainBytes(await this.#fs.readFile(this.#file(found.name)));
    } catch (error) {
      if (isErrno(error, "ENOENT")) throw missingSnapshot(seq);
      throw error;
    }
    if (crc32(bytes) !== found.crc)
      throw this.#corrupt(
        `snapshot ${found.name} fails its checksum; an older snapshot and the log may still reach this state`,
      );
    return bytes;
  }

  // -- reading the log ---------------------------------------------------------------------------

  async readRecords(fromSeq: number, toSeq: number): Promise<CommitRecord[]> {
    await this.#settledThrough(this.#acceptedSeq);
    const firstSeq = this.#segments[0]?.firstSeq ?? this.#durableSeq + 1;
    checkRange(fromSeq, toSeq, firstSeq, this.#durableSeq);
    const out: CommitRecord[] = [];
    for (const segment of this.#segments) {
      if (segment.lastSeq <= fromSeq || segment.firstSeq > toSeq) continue;
      let bytes: Uint8Array;
      try {
        // Only the confirmed prefix: bytes past it may be a write in flight.
        bytes = await this.#readPrefix(segment.name, segment.bytes);
      } catch (error) {
        if (isErrno(error, "ENOENT")) throw prunedError(fromSeq);
        throw error;
      }
      const decoded = decodeRecords(bytes);
      if (decoded.tornTail) throw this.#corrupt(`log segment ${segment.name} changed on disk after it was written`);
      for (const r of decoded.records) if (r.seq > fromSeq && r.seq <= toSeq) out.push(r);
    }
    // A gap bridged by a snapshot can leave records missing inside an otherwise valid range.
    if (out.length !== toSeq - fromSeq || (out.length > 0 && (out[0] as CommitRecord).seq !== fromSeq + 1))
      throw prunedError(fromSeq);
    return out;
  }

  // -- retention ---------------------------------------------------------------------------------

  prune(keepFromSeq: number): Promise<void> {
    return this.#maintain("prune", async () => {
      const plan = planPrune(this.#snapshots, keepFromSeq);
      if (plan.baseSeq === null) return;
      const doomed = new Set(plan.deleteSnapshots);
      // Snapshots first, made durable, then segments: a crash in between leaves extra old segments
      // (harmless), never a snapshot whose following records are gone.
      for (const s of this.#snapshots) if (doomed.has(s.seq)) await this.#fs.rm(this.#file(s.name), { force: true });
      this.#snapshots = this.#snapshots.filter((s) => !doomed.has(s.seq));
      if (doomed.size > 0) await this.#syncDir(this.directory);
      // Whole segments only, oldest first, never the newest (appends go there).
      let removed = 0;
      while (removed < this.#segments.length - 1) {
        const segment = this.#segments[removed] as Segment;
        if (segment.lastSeq > plan.dropRecordsThrough) break;
        await this.#fs.rm(this.#file(segment.name), { force: true });
        removed++;
      }
      if (removed > 0) {
        this.#segments.splice(0, removed);
        await this.#syncDir(this.directory);
      }
    });
  }

  // -- metadata ----------------------------------------------------------------------------------

  async readMeta(): Promise<Uint8Array | null> {
    let bytes: Uint8Array;
    try {
      bytes = asPlainBytes(await this.#fs.readFile(this.#file(META_NAME)));
    } catch (error) {
      if (isErrno(error, "ENOENT")) return null;
      throw error;
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.length < 4 || view.getUint32(0, true) !== crc32(bytes, 4))
      throw this.#corrupt("the meta file fails its checksum");
    return bytes.slice(4);
  }

  writeMeta(bytes: Uint8Array | null): Promise<void> {
    return this.#maintain("writeMeta", async () => {
      if (bytes === null) {
        await this.#fs.rm(this.#file(META_NAME), { force: true });
        await this.#syncDir(this.directory);
        return;
      }
      const framed = new Uint8Array(bytes.length + 4);
      framed.set(bytes, 4);
      new DataView(framed.buffer).setUint32(0, crc32(bytes), true);
      await this.#writeFileAtomic(META_NAME, framed);
    });
  }

  // -- lifecycle ---------------------------------------------------------------------------------

  async close(): Promise<void> {
    await this.#settle();
    await this.#closeActive();
    this.#loaded = false;
    if (owners.get(this.directory) === this) owners.delete(this.directory);
  }

  stats(): FilePersistenceStats {
    let logBytes = 0;
    let records = 0;
    for (const s of this.#segments) {
      logBytes += s.bytes;
      records += s.lastSeq - s.firstSeq + 1;
    }
    let snapshotBytes = 0;
    for (const s of this.#snapshots) snapshotBytes += s.bytes;
    return {
      records,
      logBytes,
      snapshots: this.#snapshots.length,
      snapshotBytes,
      segments: this.#segments.length,
      logFlushes: this.#logFlushes,
      appends: this.#appends,
    };
  }

  // -- helpers -----------------------------------------------------------------------------------

  #file(name: string): string {
    return this.#path.join(this.directory, name);
  }

  #checkWritable(method: string): void {
    if (!this.#loaded)
      throw new ActorStoreError(
        "ERR_CLOSED",
        `Cannot call ${method}() before load(): load (or reload) the persistence first.`,
      );
    if (owners.get(this.directory) !== this) throw this.#supersededError();
  }

  #supersededError(): ActorStoreError {
    return new ActorStoreError(
      "ERR_CLOSED",
      `Another persistence adapter loaded ${this.directory}; this one can no longer write. Use the newest adapter.`,
    );
  }

  #failedError(): ActorStoreError {
    return new ActorStoreError(
      "ERR_WRITE_FAILED",
      `Writing the commit log in ${this.directory} failed (${this.#failure?.message ?? "unknown error"}); call load() to reopen.`,
      { cause: this.#failure },
    );
  }

  #corrupt(what: string): ActorStoreError {
    return new ActorStoreError(
      "ERR_CORRUPT",
      `The persisted data in ${this.directory} is damaged: ${what}. Restore the directory from a backup or move the damaged file away.`,
    );
  }

  /** Runs `fn` after earlier maintenance; a failure rejects this call only. */
  #maintain(method: string, fn: () => Promise<void>): Promise<void> {
    const run = async () => {
      this.#checkWritable(method);
      await fn();
    };
    const result = this.#maintenance.then(run, run);
    this.#maintenance = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every queued append has settled (whatever the outcome). */
  async #idle(): Promise<void> {
    while (this.#draining !== null) await this.#draining;
  }

  /**
   * Resolves once every append up to `seq` has settled (durable, or failed). Not {@link #idle}:
   * under a steady stream of appends the drain loop never ends, so a snapshot or a read that waited
   * for it would starve (seen in the crash test: no snapshot was ever written while the object was
   * busy). Only the appends accepted before the call matter to these callers.
   */
  async #settledThrough(seq: number): Promise<void> {
    while (this.#durableSeq < seq && this.#failure === null && this.#draining !== null) {
      await new Promise<void>((resolve) => this.#roundWaiters.push(resolve));
    }
  }

  #wakeRoundWaiters(): void {
    for (const wake of this.#roundWaiters.splice(0)) wake();
  }

  /** Waits for appends and maintenance in flight. */
  async #settle(): Promise<void> {
    await this.#idle();
    await this.#maintenance;
  }

  async #closeActive(): Promise<void> {
    const handle = this.#active;
    this.#active = null;
    if (handle !== null) await handle.close().catch(() => undefined);
  }

  async #truncate(name: string, length: number): Promise<void> {
    const handle = await this.#fs.open(this.#file(name), "r+");
    try {
      await handle.truncate(length);
      if (this.#sync) await handle.datasync();
    } finally {
      await handle.close();
    }
  }

  async #readPrefix(name: string, length: number): Promise<Uint8Array> {
    const handle = await this.#fs.open(this.#file(name), "r");
    try {
      const out = new Uint8Array(length);
      let at = 0;
      while (at < length) {
        const { bytesRead } = await handle.read(out, at, length - at, at);
        if (bytesRead === 0) break;
        at += bytesRead;
      }
      return at === length ? out : out.subarray(0, at);
    } finally {
      await handle.close();
    }
  }

  async #writeFileAtomic(name: string, data: Uint8Array): Promise<void> {
    const tmp = this.#file(name + TMP_SUFFIX);
    const handle = await this.#fs.open(tmp, "w");
    try {
      await writeAll(handle, data, 0);
      // Full fsync: the file is new, so its size and allocation must be durable before the rename
      // can point at it.
      if (this.#sync) await handle.sync();
    } finally {
      await handle.close();
    }
    await this.#fs.rename(tmp, this.#file(name));
    await this.#syncDir(this.directory);
  }

  /**
   * fsyncs a directory so that creates, renames and deletes in it are durable. Some platforms
   * (Windows) cannot open a directory for syncing; there the rename is as durable as the OS makes it.
   */
  async #syncDir(dir: string): Promise<void> {
    if (!this.#sync || !this.#dirSyncWorks) return;
    let handle: FileHandle;
    try {
      handle = await this.#fs.open(dir, "r");
    } catch (error) {
      if (isErrno(error, "EISDIR") || isErrno(error, "EPERM") || isErrno(error, "EACCES")) {
        this.#dirSyncWorks = false;
        return;
      }
      throw error;
    }
    try {
      await handle.sync();
    } catch (error) {
      if (!(isErrno(error, "EINVAL") || isErrno(error, "EPERM") || isErrno(error, "EBADF"))) throw error;
      this.#dirSyncWorks = false;
    } finally {
      await handle.close();
    }
  }
}

function prunedError(fromSeq: number): ActorStoreError {
  return new ActorStoreError(
    "ERR_BOOKMARK",
    `Cannot read records after seq ${fromSeq}: part of that history is no longer kept (outside the retention window).`,
  );
}

/**
 * Opens (without loading) the file persistence of one object in `directory`, created on first
 * load. Call `load()` before anything else. Loading the same directory with a second adapter in
 * this process fences off the first (its writes reject); separate processes must not share one.
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
  // Loaded here, not at the top of the module, so browser bundles never see node: imports.
  const [fs, path] = await Promise.all([import("node:fs/promises"), import("node:path")]);
  return new FileAdapter(path.resolve(directory), fs, path, options);
}
