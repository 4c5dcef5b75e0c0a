/**
 * Persistence in a browser: one IndexedDB database per object. It survives page reloads, tab and
 * browser restarts (as long as the browser keeps the origin's storage), and is the browser's
 * counterpart of `openFilePersistence`.
 *
 * ```
 * records    key seq → one commit-log frame (record-codec.ts: length, payload, CRC-32)
 * snapshots  key seq → { seq, timeMs, bytes, crc } (listed on load without reading any image)
 * images     key seq → the SQLite image of that snapshot
 * meta       key "meta" → the metadata bytes
 * ```
 *
 * Durability: every change is one IndexedDB transaction opened with `durability: "strict"` (the
 * browser flushes it to disk before reporting completion), and a call resolves only on the
 * transaction's `complete` event. Appends run one transaction at a time; appends queued meanwhile share
 * the next one (group commit), so the stored log never has a gap.
 *
 * Beside it: `indexeddb-open.ts` (how it opens the database), `indexeddb-ranges.ts` (the seq key
 * ranges it reads and deletes with) and `indexeddb-frames.ts` (the checks of the frames, snapshot
 * entries and images it reads back).
 *
 * @packageDocumentation
 */
import { ActorStoreError, toError } from "../errors";
import { type Clock, systemClock } from "../util/clock";
import type { CommitRecord } from "./commit-record";
import { crc32 } from "./crc32";
import { describeIndexedDbError } from "./indexeddb-errors";
import {
  badSnapshotInfo,
  checkFrame,
  damagedLog,
  firstKeyProblem,
  imageMatches,
  lostLogEnd,
  recordsOfFrames,
  rowBytes,
  type StoredSnapshotInfo,
  show,
} from "./indexeddb-frames";
import { openObjectDatabase, STORES } from "./indexeddb-open";
import { type IndexedDbKeyRangeLike, SeqRanges } from "./indexeddb-ranges";
import {
  checkAppendOrder,
  checkRange,
  checkSnapshotSeq,
  collectRecords,
  fencedError,
  type LoadResult,
  missingSnapshot,
  type PersistenceAdapter,
  type PersistenceStats,
  STREAM_CHUNK_RECORDS,
  snapshotTimeMs,
  type VersionedMeta,
} from "./persistence";
import { checkPersistenceArguments, INDEXEDDB_PERSISTENCE_OPTIONS } from "./persistence-options";
import { encodeRecord } from "./record-codec";
import { planPrune } from "./retention";

/**
 * An IndexedDB factory: the DOM's `IDBFactory` (the global `indexedDB`) or another implementation
 * of it, such as the `fake-indexeddb` package's. Typed by the one member the adapter checks, so that
 * the public types compile in a project without the DOM library (Node, workers).
 */
export interface IndexedDbFactoryLike {
  open(name: string, version?: number): unknown;
}

export type { IndexedDbKeyRangeLike } from "./indexeddb-ranges";

/** Options of {@link openIndexedDbPersistence}. */
export interface IndexedDbPersistenceOptions {
  /**
   * The IndexedDB factory to use. Default: the global `indexedDB`. Pass another (for example one
   * from the `fake-indexeddb` package) to run the adapter where there is no global one.
   */
  indexedDB?: IndexedDbFactoryLike;
  /** The `IDBKeyRange` that goes with {@link IndexedDbPersistenceOptions.indexedDB}. Default: the global one. */
  IDBKeyRange?: IndexedDbKeyRangeLike;
  /**
   * How long `load()` waits for the browser to open the database before it gives up with
   * `ERR_LOCKED`, in ms. Default: 10,000. An open waits, with no event at all, while another
   * connection of the origin blocks a `deleteDatabase()` or a version upgrade queued before it (a
   * tab or worker whose connection does not close); without a bound it would wait forever.
   */
  openTimeoutMs?: number;
  /** The clock that times {@link IndexedDbPersistenceOptions.openTimeoutMs}. Default: the system clock. */
  clock?: Clock;
}

/** The default of {@link IndexedDbPersistenceOptions.openTimeoutMs}. */
export const INDEXEDDB_OPEN_TIMEOUT_MS = 10_000;

const RECORDS = "records";
const SNAPSHOTS = "snapshots";
const IMAGES = "images";
const META = "meta";
/** Keys in the META store beside the metadata itself: the writer epoch and the metadata's version. */
const EPOCH_KEY = "epoch";
const VERSION_KEY = "meta-version";
/** Rows read at a time when the log is checked or streamed. */
const STREAM_PAGE = STREAM_CHUNK_RECORDS;
/** The size kept for a record no read has measured yet (see `IndexedDbPersistence.stats`). */
const UNMEASURED = -1;

interface PendingAppend {
  frames: Uint8Array[];
  firstSeq: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** Resolves with a request's result, or rejects with its error. */
function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error("IndexedDB request failed"));
  });
}

/**
 * Resolves once a transaction has completed (durably, for "strict" ones); rejects if it aborts.
 * A request that fails inside it (a put refused for quota, as Firefox reports it; a read error)
 * aborts it, as IndexedDB does by default: its error event is not cancelled, since a cancelled one
 * would let the transaction commit without that request's write and the call would be confirmed.
 * The promise counts as handled, so a caller that sees a request fail first (and awaits no further)
 * leaves no unhandled rejection.
 */
function completion(txn: IDBTransaction): Promise<void> {
  const done = new Promise<void>((resolve, reject) => {
    txn.oncomplete = () => resolve();
    txn.onabort = () => reject(txn.error ?? new Error("IndexedDB transaction aborted"));
  });
  done.catch(() => undefined);
  return done;
}

/**
 * A {@link PersistenceAdapter} over one IndexedDB database. Create it with
 * {@link openIndexedDbPersistence}.
 *
 * One writer per database name: each `load()` claims a new epoch in a transaction, and every write
 * transaction first checks that no newer claim exists (in the same transaction, so the check and
 * the write are atomic); a tab whose object was opened by another tab is fenced (`ERR_FENCED`).
 */
export class IndexedDbPersistence implements PersistenceAdapter {
  readonly #name: string;
  readonly #factory: IDBFactory;
  readonly #ranges: SeqRanges;
  readonly #openTimeoutMs: number;
  readonly #clock: Clock;
  #db: IDBDatabase | null = null;
  #open = false;
  #lastSeq = 0;
  /** The last seq whose log transaction completed (durable); `#lastSeq` also counts queued appends. */
  #durableSeq = 0;
  /** The first seq still stored (lastSeq + 1 when the log is empty). */
  #firstSeq = 1;
  /**
   * The stored size of each record from `#firstSeq` on (index 0 is `#firstSeq`), and the sum of
   * those known: measured by every read of a record (load reads only the log's last rows, streaming
   * the rest) and each append, so that `stats()` after an open reads nothing. {@link UNMEASURED}
   * until then; `#unmeasured` counts those.
   */
  #recordBytes: number[] = [];
  #logBytes = 0;
  #unmeasured = 0;
  #snapshots: StoredSnapshotInfo[] = [];
  /** Set when a write failed; every later append rejects until load(). */
  #failure: Error | null = null;
  /** Every I/O operation, in call order. */
  #chain: Promise<void> = Promise.resolve();
  /** Appends waiting for the next log transaction (it has not started yet). */
  #pending: PendingAppend[] | null = null;
  #appends = 0;
  #flushes = 0;
  #epoch: number | undefined;
  /** Terminal: another connection claimed a newer epoch. */
  #fenced: Error | null = null;
  /** Why the connection was closed under the adapter (until the next one opens), for ERR_CLOSED. */
  #dropped: string | null = null;

  /** @internal Use {@link openIndexedDbPersistence}. */
  constructor(
    name: string,
    factory: IndexedDbFactoryLike,
    range: IndexedDbKeyRangeLike,
    timing: { openTimeoutMs?: number; clock?: Clock } = {},
  ) {
    this.#name = name;
    this.#factory = factory as IDBFactory;
    this.#ranges = new SeqRanges(range);
    this.#openTimeoutMs = timing.openTimeoutMs ?? INDEXEDDB_OPEN_TIMEOUT_MS;
    this.#clock = timing.clock ?? systemClock;
  }

  /** The IndexedDB database name. */
  get name(): string {
    return this.#name;
  }

  /** The epoch the last load claimed. */
  get epoch(): number | undefined {
    return this.#epoch;
  }

  async load(): Promise<LoadResult> {
    if (this.#fenced !== null) throw this.#fenced;
    this.#open = false;
    this.#failure = null;
    this.#pending = null;
    await this.#chain.catch(() => undefined);
    this.#chain = Promise.resolve();
    const db = await this.#database();
    this.#epoch = await this.#claim(db);
    const txn = db.transaction(STORES, "readonly");
    const done = completion(txn);
    const [infos, infoKeys, keys] = await Promise.all([
      request(txn.objectStore(SNAPSHOTS).getAll() as IDBRequest<unknown[]>),
      request(txn.objectStore(SNAPSHOTS).getAllKeys()),
      request(txn.objectStore(RECORDS).getAllKeys()),
    ]);
    await done;
    // Listed without reading an image, so an entry is checked here: one that is not what
    // writeSnapshot stores would name a state it does not hold.
    for (let i = 0; i < infos.length; i++) {
      const why = badSnapshotInfo(infos[i], infoKeys[i] as IDBValidKey);
      if (why !== undefined)
        throw new ActorStoreError(
          "ERR_CORRUPT",
          `The persisted data in IndexedDB database "${this.#name}" is damaged: the entry of snapshot ${show(infoKeys[i])} is not one this adapter wrote (${why}). Delete the database (or restore it from an export) to start again.`,
        );
    }
    const snapshots = (infos as StoredSnapshotInfo[]).sort((a, b) => a.seq - b.seq);
    // The records are not read here, only their keys and the last rows: each record is checked
    // where it is read anyway, as streamRecords yields it (opening the storage streams the whole
    // log), so a reopen reads each stored record once. What a load must know without reading the
    // log is where it ends: the last row that is a valid record, after which any rows are a
    // damaged tail, cut off here as the file adapter cuts one.
    const tail = await this.#checkTail(keys, (snapshots[0]?.seq ?? 0) + 1);
    // Snapshots are only of durable commits and prunes keep every record after the base: records
    // that end before the newest snapshot lost their last ones (checked before anything is cut).
    const newest = snapshots.at(-1)?.seq ?? 0;
    const logEnd = tail.valid > 0 ? (keys[tail.valid - 1] as number) : newest;
    if (newest > logEnd) throw lostLogEnd(this.#name, newest, logEnd, tail.valid < keys.length);
    if (tail.valid < keys.length) {
      // Fenced like every write: a newer holder may have cut it already and written there since.
      const doomed = keys.slice(tail.valid);
      await this.#write("load", [RECORDS], (cut) => cut.objectStore(RECORDS).delete(this.#ranges.spanning(doomed)));
    }
    const validKeys = keys.slice(0, tail.valid) as number[];
    const lastRecord = validKeys.at(-1) ?? 0;
    this.#snapshots = snapshots;
    this.#lastSeq = Math.max(lastRecord, snapshots.at(-1)?.seq ?? 0);
    this.#durableSeq = this.#lastSeq;
    this.#firstSeq = validKeys[0] ?? this.#lastSeq + 1;
    this.#recordBytes = tail.sizes;
    this.#unmeasured = tail.sizes.reduce((n, b) => (b === UNMEASURED ? n + 1 : n), 0);
    this.#logBytes = tail.sizes.reduce((n, b) => (b === UNMEASURED ? n : n + b), 0);
    const truncatedBytes = tail.truncatedBytes;
    this.#open = true;
    return {
      snapshots: snapshots.map(({ seq, timeMs, bytes }) => ({ seq, timeMs, bytes })),
      truncatedBytes,
      lastSeq: this.#lastSeq,
      epoch: this.#epoch,
    };
  }

  /**
   * Finds where the stored log ends, reading as few rows as it can: the keys (`keys`, in order)
   * show where they stop being consecutive seqs (from `firstAllowed`), and from there on no row may
   * be a valid record (`ERR_CORRUPT`: damage, not a tail). Before that, rows are read from the last
   * one back (a page that doubles from one row) until one is a valid record: the rows after it are
   * the damaged tail. Returns how many rows are kept (`valid`), the bytes of the others, and the
   * size of each kept row that was read ({@link UNMEASURED} for the others).
   */
  async #checkTail(
    keys: readonly IDBValidKey[],
    firstAllowed: number,
  ): Promise<{ valid: number; truncatedBytes: number; sizes: number[] }> {
    const problem = firstKeyProblem(keys, firstAllowed);
    const sound = problem?.at ?? keys.length;
    let truncatedBytes = 0;
    for (let i = sound; i < keys.length; i += STREAM_PAGE) {
      const last = Math.min(keys.length, i + STREAM_PAGE) - 1;
      const rows = await this.#frames("load", keys[i] as IDBValidKey, keys[last] as IDBValidKey);
      for (let j = 0; j < rows.length; j++) {
        const key = keys[i + j] as IDBValidKey;
        if ("record" in checkFrame(key, rows[j])) throw damagedLog(this.#name, problem?.why ?? "", key as number);
        truncatedBytes += rowBytes(rows[j]);
      }
    }
    const sizes = new Array<number>(sound).fill(UNMEASURED);
    let valid = sound;
    for (let page = 1; valid > 0; page = Math.min(STREAM_PAGE, page * 2)) {
      const first = Math.max(0, valid - page);
      const rows = await this.#frames("load", keys[first] as IDBValidKey, keys[valid - 1] as IDBValidKey);
      let j = rows.length - 1;
      while (j >= 0 && !("record" in checkFrame(keys[first + j] as IDBValidKey, rows[j]))) {
        truncatedBytes += rowBytes(rows[j]);
        j--;
      }
      if (j >= 0) {
        for (let k = 0; k <= j; k++) sizes[first + k] = rowBytes(rows[k]);
        valid = first + j + 1;
        break;
      }
      valid = first;
    }
    sizes.length = valid;
    return { valid, truncatedBytes, sizes };
  }

  append(records: readonly CommitRecord[]): Promise<void> {
    try {
      this.#checkOpen("append");
      if (this.#failure !== null) throw this.#failedError();
      const lastSeq = checkAppendOrder(records, this.#lastSeq);
      if (records.length === 0) return this.#enqueue(async () => undefined);
      // Encode now: the caller may not change the records afterwards, but encoding early also
      // surfaces an unencodable record before anything is queued.
      const frames = records.map((r) => encodeRecord(r).slice());
      const firstSeq = (records[0] as CommitRecord).seq;
      this.#lastSeq = lastSeq;
      return new Promise<void>((resolve, reject) => {
        if (this.#pending === null) {
          const batch: PendingAppend[] = [];
          this.#pending = batch;
          void this.#enqueue(() => this.#commit(batch));
        }
        this.#pending.push({ frames, firstSeq, resolve, reject });
      });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  async #commit(batch: PendingAppend[]): Promise<void> {
    if (this.#pending === batch) this.#pending = null;
    if (this.#failure !== null) {
      for (const p of batch) p.reject(this.#fenced ?? this.#failedError());
      return;
    }
    try {
      await this.#write("append", [RECORDS], (txn) => {
        const store = txn.objectStore(RECORDS);
        for (const p of batch) for (let i = 0; i < p.frames.length; i++) store.put(p.frames[i], p.firstSeq + i);
      });
      if (this.#firstSeq > (batch[0] as PendingAppend).firstSeq) this.#firstSeq = (batch[0] as PendingAppend).firstSeq;
      for (const p of batch)
        for (const frame of p.frames) {
          this.#recordBytes.push(frame.length);
          this.#logBytes += frame.length;
        }
      const last = batch.at(-1) as PendingAppend;
      this.#durableSeq = last.firstSeq + last.frames.length - 1;
      this.#flushes++;
      this.#appends += batch.length;
      for (const p of batch) p.resolve();
    } catch (e) {
      this.#failure = toError(e);
      for (const p of batch) p.reject(this.#fenced ?? this.#failedError());
    }
  }

  writeSnapshot(info: { seq: number; timeMs: number }, image: Uint8Array): Promise<void> {
    try {
      this.#checkOpen("writeSnapshot");
      checkSnapshotSeq(info.seq, this.#lastSeq);
    } catch (e) {
      return Promise.reject(e);
    }
    // Copy now: the caller may reuse its buffer as soon as this returns.
    const copy = image.slice();
    const stored: StoredSnapshotInfo = {
      seq: info.seq,
      timeMs: snapshotTimeMs(info.timeMs),
      bytes: copy.length,
      crc: crc32(copy),
    };
    return this.#enqueue(async () => {
      // Queued behind the appends called before it: a snapshot is of a durable state only, never
      // of a commit whose log write failed (a load would bring that refused commit back).
      if (this.#failure !== null) throw this.#fenced ?? this.#failedError();
      checkSnapshotSeq(info.seq, this.#durableSeq);
      await this.#write("writeSnapshot", [SNAPSHOTS, IMAGES], (txn) => {
        txn.objectStore(IMAGES).put(copy, stored.seq);
        txn.objectStore(SNAPSHOTS).put(stored, stored.seq);
      });
      this.#snapshots = this.#snapshots.filter((s) => s.seq !== stored.seq).concat(stored);
      this.#snapshots.sort((a, b) => a.seq - b.seq);
    });
  }

  readSnapshot(seq: number): Promise<Uint8Array> {
    return this.#enqueue(async () => {
      const txn = this.#connection("readSnapshot").transaction([SNAPSHOTS, IMAGES], "readonly");
      const [info, image] = await Promise.all([
        request(txn.objectStore(SNAPSHOTS).get(seq) as IDBRequest<StoredSnapshotInfo | undefined>),
        request(txn.objectStore(IMAGES).get(seq) as IDBRequest<unknown>),
      ]);
      if (info === undefined || image === undefined) throw missingSnapshot(seq);
      if (!imageMatches(image, info))
        throw new ActorStoreError(
          "ERR_CORRUPT",
          `The persisted data in IndexedDB database "${this.#name}" is damaged: snapshot ${seq} fails its checksum.`,
        );
      return image;
    });
  }

  readRecords(fromSeq: number, toSeq: number): Promise<CommitRecord[]> {
    return collectRecords(this.streamRecords(fromSeq, toSeq));
  }

  /**
   * A page of {@link STREAM_PAGE} rows at a time, each page its own read transaction, the next one
   * read while the caller handles the last. Each record is checked before its page is yielded (see
   * `recordsOfFrames`): load did not read it.
   */
  async *streamRecords(fromSeq: number, toSeq: number): AsyncIterable<readonly CommitRecord[]> {
    // Queued behind earlier writes, like every other call.
    await this.#enqueue(async () => checkRange(fromSeq, toSeq, this.#firstSeq, this.#lastSeq));
    const read = (from: number) => {
      const page = this.#enqueue(() => this.#measuredFrames(from + 1, Math.min(toSeq, from + STREAM_PAGE)));
      page.catch(() => undefined);
      return page;
    };
    let next = fromSeq < toSeq ? read(fromSeq) : undefined;
    for (let from = fromSeq; from < toSeq; from += STREAM_PAGE) {
      const to = Math.min(toSeq, from + STREAM_PAGE);
      const frames = await (next as Promise<unknown[]>);
      next = to < toSeq ? read(to) : undefined;
      yield recordsOfFrames(this.#name, frames, from, to);
    }
  }

  /** {@link IndexedDbPersistence.#frames} of seqs `from..to`, noting the sizes of those not measured yet. */
  async #measuredFrames(from: number, to: number): Promise<unknown[]> {
    const frames = await this.#frames("streamRecords", from, to);
    if (this.#unmeasured > 0)
      for (let i = 0; i < frames.length; i++) {
        const at = from + i - this.#firstSeq;
        if (at < 0 || at >= this.#recordBytes.length || this.#recordBytes[at] !== UNMEASURED) continue;
        const bytes = rowBytes(frames[i]);
        this.#recordBytes[at] = bytes;
        this.#logBytes += bytes;
        this.#unmeasured--;
      }
    return frames;
  }

  /** The stored frames of seqs `from..to` (inclusive), in one read transaction (for `method`). */
  async #frames(method: string, from: IDBValidKey, to: IDBValidKey): Promise<unknown[]> {
    const txn = this.#connection(method).transaction([RECORDS], "readonly");
    return request(txn.objectStore(RECORDS).getAll(this.#ranges.between(from, to)) as IDBRequest<unknown[]>);
  }

  prune(keepFromSeq: number): Promise<void> {
    return this.#enqueue(async () => {
      const plan = planPrune(this.#snapshots, keepFromSeq);
      if (plan.deleteSnapshots.length === 0 && plan.dropRecordsThrough < this.#firstSeq) return;
      await this.#write("prune", [RECORDS, SNAPSHOTS, IMAGES], (txn) => {
        for (const seq of plan.deleteSnapshots) {
          txn.objectStore(SNAPSHOTS).delete(seq);
          txn.objectStore(IMAGES).delete(seq);
        }
        if (plan.dropRecordsThrough >= this.#firstSeq)
          txn.objectStore(RECORDS).delete(this.#ranges.through(plan.dropRecordsThrough));
      });
      const doomed = new Set(plan.deleteSnapshots);
      this.#snapshots = this.#snapshots.filter((s) => !doomed.has(s.seq));
      const dropped = this.#recordBytes.splice(0, Math.max(0, plan.dropRecordsThrough + 1 - this.#firstSeq));
      for (const bytes of dropped)
        if (bytes === UNMEASURED) this.#unmeasured--;
        else this.#logBytes -= bytes;
      this.#firstSeq = Math.max(this.#firstSeq, plan.dropRecordsThrough + 1);
    });
  }

  async readMeta(): Promise<Uint8Array | null> {
    return (await this.readMetaVersion()).bytes;
  }

  readMetaVersion(): Promise<VersionedMeta> {
    return this.#enqueue(async () => {
      const txn = this.#connection("readMeta").transaction([META], "readonly");
      const [bytes, version] = await Promise.all([
        request(txn.objectStore(META).get(META) as IDBRequest<Uint8Array | undefined>),
        request(txn.objectStore(META).get(VERSION_KEY) as IDBRequest<number | undefined>),
      ]);
      return { bytes: bytes ?? null, version: version ?? 0 };
    });
  }

  writeMetaIf(expectedVersion: number, bytes: Uint8Array | null): Promise<boolean> {
    try {
      this.#checkOpen("writeMetaIf");
    } catch (e) {
      return Promise.reject(e);
    }
    const copy = bytes === null ? null : bytes.slice();
    return this.#enqueue(async () => {
      let written = false;
      // The version is read and written in the same transaction: the compare-and-swap.
      await this.#write("writeMetaIf", [META], (txn) => {
        const store = txn.objectStore(META);
        const current = store.get(VERSION_KEY) as IDBRequest<number | undefined>;
        current.onsuccess = () => {
          if ((current.result ?? 0) !== expectedVersion) return;
          if (copy === null) store.delete(META);
          else store.put(copy, META);
          store.put(expectedVersion + 1, VERSION_KEY);
          written = true;
        };
      });
      return written;
    });
  }

  async close(): Promise<void> {
    this.#open = false;
    await this.#chain.catch(() => undefined);
    this.#db?.close();
    this.#db = null;
    this.#dropped = null;
  }

  /**
   * What the adapter holds (log bytes are the stored frames, as in the file format), after every
   * write called before it. Counted as the adapter reads, appends and prunes: after an open
   * (which streams the log) nothing is read; after a bare `load()`, the records no read has
   * measured yet are read once, a page at a time.
   */
  async stats(): Promise<PersistenceStats & { appends: number; logFlushes: number }> {
    return this.#enqueue(async () => {
      this.#connection("stats");
      for (let at = 0; this.#unmeasured > 0 && at < this.#recordBytes.length; at += STREAM_PAGE)
        if (this.#recordBytes.slice(at, at + STREAM_PAGE).includes(UNMEASURED))
          await this.#measuredFrames(
            this.#firstSeq + at,
            this.#firstSeq + Math.min(this.#recordBytes.length, at + STREAM_PAGE) - 1,
          );
      return {
        records: this.#recordBytes.length,
        logBytes: this.#logBytes,
        snapshots: this.#snapshots.length,
        snapshotBytes: this.#snapshots.reduce((n, s) => n + s.bytes, 0),
        appends: this.#appends,
        logFlushes: this.#flushes,
      };
    });
  }

  /** Runs `op` after every operation called before it. */
  #enqueue<T>(op: () => Promise<T>): Promise<T> {
    const result = this.#chain.then(op);
    this.#chain = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /**
   * One durable read-write transaction, fenced: it first reads the newest claimed epoch and aborts
   * (fencing this adapter for good) when it is newer than ours, so nothing is written after a newer
   * claim.
   */
  async #write(method: string, stores: string[], fill: (txn: IDBTransaction) => void): Promise<void> {
    if (this.#fenced !== null) throw this.#fenced;
    const scope = stores.includes(META) ? stores : [...stores, META];
    const txn = this.#connection(method).transaction(scope, "readwrite", { durability: "strict" });
    const done = completion(txn);
    const claimed = txn.objectStore(META).get(EPOCH_KEY) as IDBRequest<number | undefined>;
    claimed.onsuccess = () => {
      const newest = claimed.result ?? 0;
      if (newest > (this.#epoch ?? 0)) {
        this.#fenced ??= fencedError(`IndexedDB database "${this.#name}"`, this.#epoch ?? 0, newest);
        txn.abort();
        return;
      }
      fill(txn);
    };
    try {
      await done;
    } catch (error) {
      if (this.#fenced !== null) throw this.#fenced;
      // An append's failure is reported by #failedError (its appends are refused until load()).
      if (method === "append") throw error;
      throw new ActorStoreError(
        "ERR_WRITE_FAILED",
        `The ${method}() write to IndexedDB database "${this.#name}" failed (${describeIndexedDbError(error)}); nothing of it was stored.`,
        { cause: error },
      );
    }
  }

  /** Claims the next epoch (in one transaction, so two loads never claim the same one). */
  async #claim(db: IDBDatabase): Promise<number> {
    const txn = db.transaction([META], "readwrite", { durability: "strict" });
    const done = completion(txn);
    const store = txn.objectStore(META);
    const current = store.get(EPOCH_KEY) as IDBRequest<number | undefined>;
    let epoch = 0;
    current.onsuccess = () => {
      epoch = (current.result ?? 0) + 1;
      store.put(epoch, EPOCH_KEY);
    };
    try {
      await done;
    } catch (error) {
      throw new ActorStoreError(
        "ERR_WRITE_FAILED",
        `Opening IndexedDB database "${this.#name}" failed: the browser refused the small write that claims it for this writer (${describeIndexedDbError(error)}).`,
        { cause: error },
      );
    }
    return epoch;
  }

  #connection(method: string): IDBDatabase {
    if (this.#db === null) throw this.#closedError(method);
    return this.#db;
  }

  /** Why `method` cannot run: not loaded yet, or the connection was closed under the adapter. */
  #closedError(method: string): ActorStoreError {
    return new ActorStoreError(
      "ERR_CLOSED",
      this.#dropped === null
        ? `Cannot call ${method}() before load(): load (or reload) the persistence first.`
        : `Cannot call ${method}(): IndexedDB database "${this.#name}" was closed under this adapter, because ${this.#dropped}. Load (or reload) the persistence to open it again${this.#dropped.startsWith("another") ? " (a deleted database opens empty)" : ""}.`,
    );
  }

  async #database(): Promise<IDBDatabase> {
    if (this.#db !== null) return this.#db;
    const db = await openObjectDatabase(this.#factory, this.#name, this.#openTimeoutMs, this.#clock);
    this.#db = db;
    this.#dropped = null;
    const drop = (why: string) => {
      if (this.#db !== db) return;
      this.#db = null;
      this.#open = false;
      this.#dropped = why;
    };
    // Another tab deleting or upgrading the database: let it, and reopen on the next load().
    db.onversionchange = () => {
      db.close();
      drop("another connection deleted or upgraded it (another tab, or other code of the origin)");
    };
    // The browser closed the connection itself (site data cleared, a backing-store error): its
    // transactions abort, and the next load() opens a new one instead of failing on the closed one.
    db.onclose = () => drop("the browser closed the connection (site data cleared, or a storage error)");
    return db;
  }

  #checkOpen(method: string): void {
    if (this.#fenced !== null) throw this.#fenced;
    if (!this.#open || this.#db === null) throw this.#closedError(method);
  }

  #failedError(): ActorStoreError {
    return new ActorStoreError(
      "ERR_WRITE_FAILED",
      `Writing the commit log in IndexedDB database "${this.#name}" failed (${describeIndexedDbError(this.#failure)}); call load() to reopen.`,
      { cause: this.#failure },
    );
  }
}

/**
 * Opens (creating if needed) the IndexedDB database `name` as an object's persistence. Use one name per
 * object. Works wherever IndexedDB exists: browsers, web workers, and Node with an `indexedDB` option.
 *
 * @example
 * ```ts
 * const persistence = await openIndexedDbPersistence("actorstore:room-1");
 * const storage = await ObjectStorage.open({ persistence, codec: "structured" });
 * ```
 */
export async function openIndexedDbPersistence(
  name: string,
  options: IndexedDbPersistenceOptions = {},
): Promise<IndexedDbPersistence> {
  checkPersistenceArguments("openIndexedDbPersistence()", "name", name, options, INDEXEDDB_PERSISTENCE_OPTIONS);
  const global = globalThis as { indexedDB?: IndexedDbFactoryLike; IDBKeyRange?: IndexedDbKeyRangeLike };
  const factory = options.indexedDB ?? global.indexedDB;
  const range = options.IDBKeyRange ?? global.IDBKeyRange;
  if (factory === undefined || typeof factory.open !== "function" || typeof range?.bound !== "function")
    throw new ActorStoreError(
      "ERR_INVALID_OPTION",
      "openIndexedDbPersistence() needs IndexedDB, which this runtime does not have: in Node use openFilePersistence(dir), or pass { indexedDB, IDBKeyRange } (for example from the fake-indexeddb package).",
    );
  return new IndexedDbPersistence(name, factory, range, { openTimeoutMs: options.openTimeoutMs, clock: options.clock });
}
