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
 * Beside it: `indexeddb-ranges.ts` (the seq key ranges it reads and deletes with) and
 * `indexeddb-frames.ts` (the checks of the frames, snapshot entries and images it reads back).
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
  imageMatches,
  recordsOfFrames,
  StoredLogCheck,
  type StoredSnapshotInfo,
  show,
} from "./indexeddb-frames";
import { type IndexedDbKeyRangeLike, pagedRows, SeqRanges } from "./indexeddb-ranges";
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
const STORES = [RECORDS, SNAPSHOTS, IMAGES, META];
/** The version the adapter opens its databases with (it creates the stores above at it). */
const DATABASE_VERSION = 1;
/** Keys in the META store beside the metadata itself: the writer epoch and the metadata's version. */
const EPOCH_KEY = "epoch";
const VERSION_KEY = "meta-version";
/** Rows read at a time when the log is checked or streamed. */
const STREAM_PAGE = STREAM_CHUNK_RECORDS;

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
   * The stored size of each record from `#firstSeq` on (index 0 is `#firstSeq`), and their sum:
   * known from load's check of every frame and from each append and prune, so `stats()` reads
   * nothing.
   */
  #recordBytes: number[] = [];
  #logBytes = 0;
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
    // The records are checked a page at a time and dropped: streamRecords reads them again when
    // the storage opens, so the log is never in memory at once.
    const frameAt = pagedRows(keys, STREAM_PAGE, (from, to) => this.#frames(from, to));
    const check = new StoredLogCheck(this.#name, (snapshots[0]?.seq ?? 0) + 1);
    for (let i = 0; i < keys.length; i++) check.add(keys[i] as IDBValidKey, await frameAt(i));
    const { bad, sizes, truncatedBytes } = check;
    if (bad !== undefined) {
      // A damaged tail with nothing valid after it: cut it off durably, as the file adapter does.
      // Fenced like every write: a newer holder may have cut it already and written there since.
      const doomed = keys.slice(bad.at);
      await this.#write("load", [RECORDS], (cut) => cut.objectStore(RECORDS).delete(this.#ranges.spanning(doomed)));
    }
    const validKeys = (bad === undefined ? keys : keys.slice(0, bad.at)) as number[];
    const lastRecord = validKeys.at(-1) ?? 0;
    this.#snapshots = snapshots;
    this.#lastSeq = Math.max(lastRecord, snapshots.at(-1)?.seq ?? 0);
    this.#durableSeq = this.#lastSeq;
    this.#firstSeq = validKeys[0] ?? this.#lastSeq + 1;
    this.#recordBytes = sizes.slice(0, validKeys.length);
    this.#logBytes = this.#recordBytes.reduce((n, b) => n + b, 0);
    this.#open = true;
    return {
      snapshots: snapshots.map(({ seq, timeMs, bytes }) => ({ seq, timeMs, bytes })),
      truncatedBytes,
      lastSeq: this.#lastSeq,
      epoch: this.#epoch,
    };
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

  /** A page of {@link STREAM_PAGE} rows at a time, each page its own read transaction. */
  async *streamRecords(fromSeq: number, toSeq: number): AsyncIterable<readonly CommitRecord[]> {
    // Queued behind earlier writes, like every other call.
    await this.#enqueue(async () => checkRange(fromSeq, toSeq, this.#firstSeq, this.#lastSeq));
    for (let from = fromSeq; from < toSeq; from += STREAM_PAGE) {
      const to = Math.min(toSeq, from + STREAM_PAGE);
      const frames = await this.#enqueue(() => this.#frames(from + 1, to));
      yield recordsOfFrames(this.#name, frames, from, to);
    }
  }

  /** The stored frames of seqs `from..to` (inclusive), in one read transaction. */
  async #frames(from: IDBValidKey, to: IDBValidKey): Promise<unknown[]> {
    const txn = this.#connection("streamRecords").transaction([RECORDS], "readonly");
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
      for (const bytes of dropped) this.#logBytes -= bytes;
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
   * write called before it. Counted as the adapter loads, appends and prunes: nothing is read.
   */
  async stats(): Promise<PersistenceStats & { appends: number; logFlushes: number }> {
    return this.#enqueue(async () => {
      this.#connection("stats");
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
    let db: IDBDatabase;
    try {
      db = await this.#openWithin(this.#openTimeoutMs);
    } catch (error) {
      // IndexedDB's VersionError: the database exists with a higher version than this adapter's.
      if ((error as { name?: unknown } | null)?.name === "VersionError")
        throw new ActorStoreError(
          "ERR_CORRUPT",
          `IndexedDB database "${this.#name}" cannot be opened as an object's persistence: its version is newer than ${DATABASE_VERSION}, the one this adapter creates (a newer actorstore wrote it, or it belongs to other code of the origin). Open it with the version that wrote it, or use another name.`,
          { cause: error },
        );
      throw error;
    }
    const missing = STORES.filter((store) => !db.objectStoreNames.contains(store));
    if (missing.length > 0) {
      db.close();
      throw new ActorStoreError(
        "ERR_CORRUPT",
        `IndexedDB database "${this.#name}" is not one this adapter created: it has no ${missing.join(", ")} store${missing.length > 1 ? "s" : ""} (it belongs to other code of the origin). Use another name for the object (one database per object).`,
      );
    }
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

  /**
   * Opens the database (creating its stores at {@link DATABASE_VERSION}), or rejects with
   * `ERR_LOCKED` once `timeoutMs` passed without the browser opening it. An open queued behind a
   * `deleteDatabase()` or an upgrade that another connection blocks gets no event until that
   * connection closes; given up, it is not left to open later: a connection it still gets is closed
   * at once, and an upgrade it still gets is aborted, so an abandoned open neither holds the
   * database (blocking the next delete or upgrade in turn) nor creates it.
   */
  #openWithin(timeoutMs: number): Promise<IDBDatabase> {
    const open = this.#factory.open(this.#name, DATABASE_VERSION);
    return new Promise<IDBDatabase>((resolve, reject) => {
      let settled = false;
      let blocked = false;
      const timer = this.#clock.setTimer(() => {
        if (settled) return;
        settled = true;
        reject(
          new ActorStoreError(
            "ERR_LOCKED",
            `Opening IndexedDB database "${this.#name}" did not complete within ${timeoutMs} ms: ${
              blocked
                ? "other connections to it (other tabs or workers of this site) did not close for its upgrade"
                : "another connection of this site blocks it (a deleteDatabase() or version upgrade of it from another tab or worker waits for a connection that does not close)"
            }. Close the other tabs of this site that use it (or reload them), then open again.`,
          ),
        );
      }, timeoutMs);
      const settle = () => {
        settled = true;
        this.#clock.clearTimer(timer);
      };
      open.onupgradeneeded = () => {
        if (settled) {
          open.transaction?.abort();
          return;
        }
        for (const store of STORES)
          if (!open.result.objectStoreNames.contains(store)) open.result.createObjectStore(store);
      };
      open.onblocked = () => {
        blocked = true;
      };
      open.onsuccess = () => {
        if (settled) {
          open.result.close();
          return;
        }
        settle();
        resolve(open.result);
      };
      open.onerror = (event) => {
        // An upgrade aborted after the open was given up is expected: not an unhandled error.
        if (settled) {
          event.preventDefault();
          return;
        }
        settle();
        reject(open.error ?? new Error("IndexedDB open failed"));
      };
    });
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
