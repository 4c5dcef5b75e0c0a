/**
 * `ObjectStorage`: the private, transactional, strongly consistent storage of one stateful object,
 * with the platform's `DurableObjectStorage` API.
 */

import { thinsSnapshots } from "../durability/delegating-persistence";
import { openFilePersistence } from "../durability/file-persistence";
import { createMemoryPersistence } from "../durability/memory-persistence";
import type { PersistenceAdapter } from "../durability/persistence";
import { DEFAULT_RETENTION_WINDOW_MS } from "../durability/retention";
import type { SqlEngineFactory } from "../engine/engine";
import { loadSqlJsEngine, type SqlJsLoadOptions } from "../engine/sqljs";
import { ActorStoreError } from "../errors";
import { resolveLimits, type StorageLimits } from "../limits";
import { type AsyncScope, loadAsyncScope } from "../util/async-scope";
import { type Clock, systemClock } from "../util/clock";
import { Mutex } from "../util/mutex";
import { likePlatformPrototype } from "../util/platform-prototype";
import { checkAlarmTime, toAlarmTime, toPlatformDate } from "./alarm-time";
import { argumentTypeError, checkClosure } from "./argument-types";
import { convertDeleteCall, convertGetCall, convertPutCall, type KeyCall, type PutCall } from "./call-arguments";
import { explainDirectoryError } from "./directory-errors";
import { KvOperations } from "./kv-operations";
import { checkStorageOptions } from "./open-options";
import {
  GET_ALARM_OPTIONS,
  LIST_OPTIONS,
  PUT_OPTIONS,
  readOptions,
  SET_ALARM_OPTIONS,
  TRANSACTION_OPTIONS,
} from "./option-dictionaries";
import type { Backend, GetAlarmOptions, GetOptions, ListOptions, PutOptions, SetAlarmOptions } from "./options";
import { openWithPendingRestore, PointInTimeRecovery } from "./point-in-time-recovery";
import { DEFAULT_SNAPSHOT_LOG_CAP_BYTES } from "./snapshots";
import { SqlStorage } from "./sql/sql-storage";
import type { StorageCore } from "./storage-core";
import type { StorageHost } from "./storage-host";
import { SyncKvStorage } from "./sync-kv";
import { finishTransaction, missingKeyError, ObjectTransaction, type TransactionTarget } from "./transaction";
import type { Codecs } from "./value-io";
import { loadV8Codec, structuredCodec, type ValueCodec } from "./values/codec";

/** Options of {@link ObjectStorage.open}. */
export interface ObjectStorageOptions {
  /** `"sqlite"` (default): key-value, SQL and point-in-time recovery. `"kv"`: key-value only. */
  backend?: Backend;
  /**
   * Where the commit log and snapshots go. Default: in memory (survives `abort()` and resets within
   * the process, not a process exit). See also {@link ObjectStorageOptions.directory}.
   */
  persistence?: PersistenceAdapter;
  /** Shortcut for file persistence in this directory (Node only): survives crashes. */
  directory?: string;
  /** The clock (inject a `FakeClock` in tests). Default: the system clock. */
  clock?: Clock;
  /** Limits; default the storage interface's (2,048-byte keys, 131,072-byte values, 128 keys per call). */
  limits?: Partial<StorageLimits>;
  /**
   * The codec new values are written with: `"structured"` (default: portable, and faster on small
   * values, see docs/values.md) or `"v8"` (Node only: V8's format, byte-compatible with workerd's
   * stored values). Values always say which codec wrote them, so both stay readable.
   */
  codec?: "v8" | "structured";
  /**
   * Soft limit of the read cache in bytes (clean entries are evicted above it). Default 4 MiB:
   * workerd uses 16 MiB because a miss there is a network round trip; here a miss is a SQLite
   * read of a few microseconds, so a smaller cache keeps memory close to the data's own size.
   */
  cacheSoftLimitBytes?: number;
  /**
   * `deleteAll()` also deletes the alarm (the platform's newer behaviour, compat flag
   * `delete_all_deletes_alarm`). Default `false`: the alarm survives, as the storage interface says.
   */
  deleteAllDeletesAlarm?: boolean;
  /** Point-in-time recovery window in ms. Default 30 days. */
  retentionMs?: number;
  /**
   * Snapshot after this many commits since the last snapshot (default 10,000), or once the log has
   * grown by half the database's size (at least 8 MiB) or by `snapshotLogCapBytes`, whichever comes
   * first.
   */
  snapshotEveryRecords?: number;
  /**
   * The most log (changed bytes: keys, values, SQL text and bindings) written since the newest
   * snapshot before the next one is due, whatever the database's size: it bounds the replay of an
   * open (default 64 MiB, {@link DEFAULT_SNAPSHOT_LOG_CAP_BYTES}, where the persistence adapter
   * thins snapshots: the file and in-memory adapters; no cap by default over adapters that keep
   * every snapshot, such as S3 and IndexedDB). Below 128 MiB of database the half-the-database rule
   * comes first. Snapshots this close together are thinned inside the retention window to half the
   * database of log apart (docs/durability.md, *When snapshots are taken*). A positive integer.
   */
  snapshotLogCapBytes?: number;
  /** How to load sql.js (browsers: `locateFile` for the WASM file). */
  sqlJs?: SqlJsLoadOptions;
  /**
   * The most bytes this object's database may hold (default 1 GiB; see docs/sql.md). A write
   * beyond it fails with `database or disk is full: SQLITE_FULL` and breaks the object, as the
   * platform's limit does. Ignored when `engineFactory` is given.
   */
  maxDatabaseSize?: number;
  /** A ready engine factory (advanced: tests, custom builds). */
  engineFactory?: SqlEngineFactory;
}

/** A running transaction, as its closure's async context sees it. */
interface TransactionFrame {
  readonly storage: ObjectStorage;
  /** The nested transactions its closure starts run one at a time. */
  readonly children: Mutex;
}

/** Set by ObjectStorage's static block: reads the private core (see {@link coreOf}). */
let coreOfStorage: (storage: ObjectStorage) => StorageCore;

/** The read cache's default soft limit: 4 MiB (see {@link ObjectStorageOptions.cacheSoftLimitBytes}). */
export const DEFAULT_CACHE_SOFT_LIMIT_BYTES = 4 * 1024 * 1024;

/** 30 days, the storage interface's point-in-time recovery window (the retention policy's default). */
export const DEFAULT_RETENTION_MS = DEFAULT_RETENTION_WINDOW_MS;

export { DEFAULT_SNAPSHOT_LOG_CAP_BYTES };

/**
 * The storage of one stateful object: key-value API, SQL API (`backend: "sqlite"`), point-in-time
 * recovery and a single alarm, type-compatible with the platform's `DurableObjectStorage`.
 *
 * @example
 * ```ts
 * import { ObjectStorage } from "actorstore";
 * const storage = await ObjectStorage.open();          // in memory, SQLite backend
 * await storage.put("count", 1);
 * storage.sql.exec("CREATE TABLE IF NOT EXISTS t(x)");
 * console.log(await storage.get("count"));           // 1
 * ```
 */
export class ObjectStorage {
  readonly #core: StorageCore;
  readonly #ops: KvOperations;
  readonly #backend: Backend;
  readonly #codecs: Codecs;
  readonly #pitr: PointInTimeRecovery;
  /** The synchronous key-value API (`backend: "sqlite"` only; on `"kv"` its calls throw). */
  readonly kv: SyncKvStorage;
  /** The SQL API (`backend: "sqlite"` only; on `"kv"` its calls throw an error naming the option). */
  readonly sql: SqlStorage;
  /** Serializes transactions: concurrent ones never interleave. */
  readonly #transactions = new Mutex();
  /** Marks the async context of a running transaction closure (nested calls skip the queue). */
  readonly #scope: AsyncScope<TransactionFrame> | undefined;
  #activeTransactions = 0;

  static {
    likePlatformPrototype(this.prototype, "DurableObjectStorage");
    // The one escape hatch to the internals, kept off the public surface (see coreOf).
    coreOfStorage = (storage) => storage.#core;
  }

  private constructor(
    core: StorageCore,
    backend: Backend,
    codecs: Codecs,
    retentionMs: number,
    scope: AsyncScope<TransactionFrame> | undefined,
  ) {
    this.#scope = scope;
    this.#core = core;
    this.#backend = backend;
    this.#codecs = codecs;
    this.#ops = new KvOperations(core, codecs, core.settings.limits);
    this.#pitr = new PointInTimeRecovery(core, retentionMs);
    // Own properties, as the platform's (Object.keys(ctx.storage) is ["kv", "sql"] there too). The
    // core's SQL side is the SQL host itself (no wrapper: its getters are on every exec's path).
    this.kv = new SyncKvStorage(this.#ops, core, backend === "sqlite");
    this.sql = new SqlStorage(core.sqlHost, { enabled: backend === "sqlite" });
  }

  /**
   * Opens (or recovers) an object's storage.
   *
   * @example
   * ```ts
   * const storage = await ObjectStorage.open({ backend: "sqlite", directory: "./data/room-1" });
   * ```
   */
  static async open(options: ObjectStorageOptions = {}): Promise<ObjectStorage> {
    checkStorageOptions("ObjectStorage.open()", options);
    const backend = options.backend ?? "sqlite";
    const [engineFactory, v8, scope] = await Promise.all([
      options.engineFactory ??
        loadSqlJsEngine(
          options.maxDatabaseSize === undefined
            ? options.sqlJs
            : { ...options.sqlJs, maxDatabaseSize: options.maxDatabaseSize },
        ),
      loadV8Codec(),
      loadAsyncScope<TransactionFrame>(),
    ]);
    // The portable structured codec is the default: measured faster than V8's serializer on the
    // small values most objects store (docs/values.md); "v8" writes workerd's byte format.
    const write: ValueCodec = options.codec === "v8" && v8 !== undefined ? v8 : structuredCodec;
    if (options.codec === "v8" && v8 === undefined) {
      throw new ActorStoreError(
        "ERR_INVALID_OPTION",
        'codec "v8" needs node:v8, which this runtime does not have; use codec: "structured".',
      );
    }
    const directory = options.directory;
    const persistence =
      options.persistence ??
      (directory !== undefined ? await openFilePersistence(directory) : createMemoryPersistence());
    const core = await openWithPendingRestore({
      engineFactory,
      persistence,
      clock: options.clock ?? systemClock,
      limits: resolveLimits(options.limits),
      cacheSoftLimitBytes: options.cacheSoftLimitBytes ?? DEFAULT_CACHE_SOFT_LIMIT_BYTES,
      deleteAllDeletesAlarm: options.deleteAllDeletesAlarm ?? false,
      snapshotEveryRecords: options.snapshotEveryRecords ?? 10_000,
      snapshotEveryBytes: 8 * 1024 * 1024,
      // By default the cap applies only where thinning can delete the extra snapshots it takes:
      // over an adapter that keeps every snapshot of the window, it would multiply what is kept.
      snapshotLogCapBytes:
        options.snapshotLogCapBytes ??
        (thinsSnapshots(persistence) ? DEFAULT_SNAPSHOT_LOG_CAP_BYTES : Number.POSITIVE_INFINITY),
    }).catch((e: unknown) => {
      // The file adapter knows its directory as an absolute path (what fs errors name).
      const where = (persistence as { directory?: unknown }).directory;
      throw explainDirectoryError(e, typeof where === "string" ? where : directory);
    });
    const storage = new ObjectStorage(core, backend, { write, v8 }, options.retentionMs ?? DEFAULT_RETENTION_MS, scope);
    return storage;
  }

  // ------------------------------------------------------------------ key-value

  /** Reads a key (or several keys, as a Map in UTF-8 key order). */
  get<T = unknown>(key: string, options?: GetOptions): Promise<T | undefined>;
  get<T = unknown>(keys: string[], options?: GetOptions): Promise<Map<string, T>>;
  get(keyOrKeys: string | string[], options?: GetOptions): Promise<unknown> {
    // biome-ignore lint/complexity/noArguments: tells "no argument" from an explicit undefined without a rest array on the hot path
    if (arguments.length === 0) return Promise.reject(missingKeyError("get", "DurableObjectStorage"));
    return attempt(() => this.#get(convertGetCall(keyOrKeys, options, "DurableObjectStorage")));
  }

  /** Writes a key (or up to 128 entries at once). */
  put<T>(key: string, value: T, options?: PutOptions): Promise<void>;
  put<T>(entries: Record<string, T>, options?: PutOptions): Promise<void>;
  put(keyOrEntries: unknown, valueOrOptions?: unknown, options?: PutOptions): Promise<void> {
    // As attempt(), without a closure per call (put is the hottest write).
    try {
      this.#put(convertPutCall(keyOrEntries, valueOrOptions, options, "DurableObjectStorage"));
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Deletes a key (→ whether it existed) or several (→ how many existed). */
  delete(key: string, options?: PutOptions): Promise<boolean>;
  delete(keys: string[], options?: PutOptions): Promise<number>;
  delete(keyOrKeys: string | string[], options?: PutOptions): Promise<boolean | number> {
    // biome-ignore lint/complexity/noArguments: tells "no argument" from an explicit undefined without a rest array on the hot path
    if (arguments.length === 0) return Promise.reject(missingKeyError("delete", "DurableObjectStorage"));
    return attempt(() => this.#delete(convertDeleteCall(keyOrKeys, options, "DurableObjectStorage")));
  }

  /**
   * Deletes all key-value data; on `"sqlite"` the whole database, SQL tables included. The alarm
   * survives unless `deleteAllDeletesAlarm` was set.
   */
  deleteAll(options?: PutOptions): Promise<void> {
    return attempt(() => {
      readOptions(options, PUT_OPTIONS, "deleteAll", "DurableObjectStorage", 1);
      this.#core.deleteAll();
    });
  }

  /** Lists entries in UTF-8 key order (see {@link ListOptions}). */
  list<T = unknown>(options?: ListOptions): Promise<Map<string, T>> {
    return attempt(() => this.#list(readOptions(options, LIST_OPTIONS, "list", "DurableObjectStorage", 1))) as Promise<
      Map<string, T>
    >;
  }

  /**
   * Runs `closure` as one serializable transaction: its reads see its writes, a throw or rejection
   * rolls everything back (key-value, SQL and alarm) and is rethrown.
   */
  transaction<T>(closure: (txn: ObjectTransaction) => Promise<T>): Promise<T> {
    try {
      checkClosure(closure, "transaction");
      // The platform's transaction() takes options as parameter 2 (none of them public): they are
      // converted and checked as there, and have no effect.
      // biome-ignore lint/complexity/noArguments: checked without adding a parameter the platform's type does not have
      readOptions(arguments[1], TRANSACTION_OPTIONS, "transaction", "DurableObjectStorage", 2);
    } catch (e) {
      return Promise.reject(e);
    }
    const run = async () => {
      this.#activeTransactions++;
      try {
        return await (this.#scope
          ? this.#scope.run({ storage: this, children: new Mutex() }, () => this.#transaction(closure))
          : this.#transaction(closure));
      } finally {
        this.#activeTransactions--;
      }
    };
    // A transaction started inside another's closure is nested: it runs as a savepoint, after the
    // nested transactions its closure started before it have settled (siblings run one at a time,
    // as on the platform, where each takes its parent's lock: run side by side, a failing one
    // would roll back the savepoint of a sibling that succeeded). Without async context tracking
    // (browsers) any transaction started while one runs is treated as nested, at once.
    const frame = this.#scope?.get();
    const parent = frame?.storage === this ? frame : undefined;
    const nested = this.#activeTransactions > 0 && (this.#scope === undefined || parent !== undefined);
    const queued = !nested
      ? () => this.#transactions.run(run)
      : parent !== undefined
        ? () => parent.children.run(run)
        : run;
    const host = this.#core.host;
    return host !== undefined ? host.criticalSection(queued) : queued();
  }

  /** Resolves when every write issued so far (including `allowUnconfirmed` ones) is durable. */
  sync(): Promise<void> {
    return this.#core.sync();
  }

  // ------------------------------------------------------------------ alarm

  /** The alarm time in ms since the epoch, or `null`. */
  getAlarm(options?: GetAlarmOptions): Promise<number | null> {
    return attempt(() => {
      readOptions(options, GET_ALARM_OPTIONS, "getAlarm", "DurableObjectStorage", 1);
      return this.#getAlarm();
    });
  }

  /** Sets the object's single alarm (ms granularity; a past time means "as soon as possible"). */
  setAlarm(scheduledTime: number | Date, options?: SetAlarmOptions): Promise<void> {
    return attempt(() => {
      const ms = toAlarmTime(scheduledTime, "DurableObjectStorage");
      const converted = readOptions(options, SET_ALARM_OPTIONS, "setAlarm", "DurableObjectStorage", 2);
      checkAlarmTime(ms);
      this.#setAlarm(ms, converted);
    });
  }

  /** Deletes the alarm, if any. */
  deleteAlarm(options?: SetAlarmOptions): Promise<void> {
    return attempt(() =>
      this.#deleteAlarm(readOptions(options, SET_ALARM_OPTIONS, "deleteAlarm", "DurableObjectStorage", 1)),
    );
  }

  // ------------------------------------------------------------------ SQL

  /** Runs `closure` synchronously in a savepoint: returns its value, or rolls back and rethrows. */
  transactionSync<T>(closure: () => T): T {
    checkClosure(closure, "transactionSync");
    this.#requireSqlite("transactionSync()");
    return this.#core.transactionSync(closure);
  }

  // ------------------------------------------------------------------ point-in-time recovery

  /** A bookmark naming the current state (after the writes issued before this call commit). */
  getCurrentBookmark(): Promise<string> {
    return attempt(() => {
      this.#requireSqlite("getCurrentBookmark()");
      this.#core.assertUsable();
      return this.#pitr.currentBookmark();
    });
  }

  /** The bookmark of the state at (approximately) `timestamp`, within the retention window. */
  getBookmarkForTime(timestamp: number | Date): Promise<string> {
    return attempt(() => {
      // The platform's binding converts the argument before the call (its TypeErrors come first).
      const ms = toPlatformDate(timestamp, "getBookmarkForTime");
      this.#requireSqlite("getBookmarkForTime()");
      this.#core.assertUsable();
      return this.#pitr.bookmarkForTime(ms);
    });
  }

  /**
   * Asks for the whole database to be restored to `bookmark` when the object next starts
   * (after `abort()` or a restart). Returns a bookmark of the state immediately before the
   * restore, which undoes it: as on the platform, that point is still in the future, so writes
   * this session confirms after the request belong to it.
   */
  onNextSessionRestoreBookmark(bookmark: string): Promise<string> {
    // biome-ignore lint/complexity/noArguments: tells "no argument" from an explicit undefined, as get() does
    const given = arguments.length > 0;
    return attempt(() => {
      // As the platform's binding: a missing argument is a TypeError, anything else becomes a string
      // (42 → "42", an invalid bookmark), and a Symbol or a throwing toString() fails the conversion.
      if (!given) throw argumentTypeError("onNextSessionRestoreBookmark", "DurableObjectStorage", 1, "string");
      const text = `${bookmark as unknown as string}`;
      this.#requireSqlite("onNextSessionRestoreBookmark()");
      // A closed or reset storage no longer speaks for the object: its request must not reach the
      // persistence, where the next session would apply it.
      this.#core.assertUsable();
      return this.#pitr.requestRestore(text);
    });
  }

  // ------------------------------------------------------------------ lifecycle (actorstore)

  /**
   * Commits what is pending, waits for it to be durable, and releases the database; rejects with
   * the write-failure error (after releasing it) when what it committed did not become durable,
   * as `sync()` would. Every call
   * made once it has begun fails with `ERR_CLOSED`; a `transaction()` still open is rolled back
   * (its closure's next call or its end fails with `ERR_CLOSED`). Calling it again returns the
   * same promise.
   */
  close(): Promise<void> {
    return this.#core.close();
  }

  /**
   * Drops everything not yet committed and stops this storage (what `abort()` and a reset do).
   * Reopen with the same persistence to continue from the last confirmed state.
   */
  abort(reason: Error = new Error("Application called abort() to reset Durable Object.")): void {
    this.#core.abort(reason);
  }

  /** The backend this storage was opened with. */
  get backend(): Backend {
    return this.#backend;
  }

  /** The codec new values are written with. */
  get codec(): "v8" | "structured" {
    return this.#codecs.write.name;
  }

  // ------------------------------------------------------------------ internals

  // The calls below take converted arguments (call-arguments.ts, option-dictionaries.ts): the
  // public methods and the transaction's convert them once, in the platform's order.

  #get(call: KeyCall<GetOptions>): unknown {
    const noCache = call.options?.noCache === true;
    const keys = call.keys;
    return typeof keys === "string" ? this.#ops.getOne(keys, noCache) : this.#ops.getMany(keys, noCache);
  }

  #put(call: PutCall): void {
    const allowUnconfirmed = call.options?.allowUnconfirmed === true;
    const noCache = call.options?.noCache === true;
    if ("entries" in call) this.#ops.putMany(call.entries, allowUnconfirmed, noCache);
    else this.#ops.putOne(call.key, call.value, allowUnconfirmed, noCache);
  }

  #delete(call: KeyCall<PutOptions>): boolean | number {
    const allowUnconfirmed = call.options?.allowUnconfirmed === true;
    const keys = call.keys;
    return typeof keys === "string"
      ? this.#ops.deleteOne(keys, allowUnconfirmed)
      : this.#ops.deleteMany(keys, allowUnconfirmed);
  }

  #list(options: ListOptions | undefined): Map<string, unknown> {
    return this.#ops.list(options);
  }

  #getAlarm(): number | null {
    this.#core.assertUsable();
    return this.#core.alarmView();
  }

  /** Sets the alarm at `ms` (converted and checked by {@link toAlarmTime} and {@link checkAlarmTime}). */
  #setAlarm(ms: number, options: SetAlarmOptions | undefined): void {
    const host = this.#core.host;
    if (host !== undefined && !host.hasAlarmHandler()) {
      throw new TypeError("Your Durable Object class must have an alarm() handler in order to call setAlarm()");
    }
    this.#core.assertUsable();
    // A time in the past means "as soon as possible": the platform clamps it to now.
    this.#core.writeAlarm(Math.max(ms, this.#core.now()), options?.allowUnconfirmed === true);
  }

  #deleteAlarm(options: SetAlarmOptions | undefined): void {
    this.#core.assertUsable();
    this.#core.writeAlarm(null, options?.allowUnconfirmed === true);
  }

  async #transaction<T>(closure: (txn: ObjectTransaction) => Promise<T>): Promise<T> {
    this.#core.assertUsable();
    // An open implicit batch commits first, so the transaction's own commit contains only it.
    this.#core.commitNow();
    const layer = this.#core.openSavepoint("_cf_savepoint");
    let closed = false;
    const target: TransactionTarget = {
      get: (call) => this.#get(call),
      put: (call) => this.#put(call),
      serialize: (call) => this.#ops.serializeOnly(call),
      delete: (call) => this.#delete(call),
      list: (options) => this.#list(options),
      getAlarm: () => this.#getAlarm(),
      setAlarm: (ms, options) => this.#setAlarm(ms, options),
      deleteAlarm: (options) => this.#deleteAlarm(options),
      rollback: () => {
        this.#core.rollbackSavepoint(layer, true);
        closed = true;
      },
      alive: () => closed || this.#core.isSavepointOpen(layer),
      assertUsable: () => this.#core.assertUsable(),
    };
    const txn = new ObjectTransaction(target);
    try {
      const result = await closure(txn);
      if (!closed) this.#core.releaseSavepoint(layer);
      closed = true;
      return result;
    } catch (e) {
      if (!closed) this.#core.rollbackSavepoint(layer);
      closed = true;
      throw e;
    } finally {
      finishTransaction(txn);
      // The transaction commits on its own, now.
      if (!this.#core.inTransaction) this.#core.commitNow();
    }
  }

  #requireSqlite(what: string): void {
    if (this.#backend !== "sqlite") {
      throw new ActorStoreError(
        "ERR_BACKEND_UNSUPPORTED",
        `${what} is only available on the SQLite backend. Open the storage with ObjectStorage.open({ backend: "sqlite" }).`,
      );
    }
  }
}

/**
 * The core of a storage: for the object context, the alarm scheduler, the inspector and tests.
 * Not exported from the package entry: users see only the platform's members.
 * @internal
 */
export function coreOf(storage: ObjectStorage): StorageCore {
  return coreOfStorage(storage);
}

/**
 * Attaches the object context (gates, critical sections, reset on failure) to a storage.
 * @internal
 */
export function attachHost(storage: ObjectStorage, host: StorageHost | undefined): void {
  coreOfStorage(storage).attach(host);
}

/** Runs `fn` and turns its result or its throw into a promise: validation never throws synchronously. */
function attempt<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    return Promise.reject(e);
  }
}
