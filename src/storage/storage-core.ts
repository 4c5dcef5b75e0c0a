/**
 * The storage core: one database, one write buffer, one commit stream. docs/architecture.md
 * follows a write from `put()` to the commit log and back; in short: writes buffer synchronously
 * (SQL runs at once inside the batch's implicit transaction and is logged), the batch commits at
 * the end of the turn as one {@link CommitRecord} appended to the persistence adapter, its
 * confirmation feeds the output gate, and a failed COMMIT or append breaks the core so the host
 * resets the object over what the adapter holds.
 */
import type { CommitRecord, KvWrite } from "../durability/commit-record";
import type { CommitTimeline } from "../durability/commit-timeline";
import { kvWriteHeldBytes, noteHeldBytes, recordOverheadHeldBytes } from "../durability/held-bytes";
import type { SnapshotInfo } from "../durability/persistence";
import type { SqlEngine } from "../engine/engine";
import { ActorStoreError } from "../errors";
import { scheduleTurnEnd } from "../util/clock";
import { type Deferred, deferred } from "../util/deferred";
import type { BatchSqlLog } from "./batch-sql-log";
import { type CoreOpenOptions, type CoreSettings, commitFailure, WRITE_FAILED_MESSAGE } from "./core-settings";
import { CoreSqlHost } from "./core-sql-host";
import type { KeyRange } from "./keys";
import { KvCache } from "./kv-cache";
import { type ListingSource, listEntries, listValues, type ValueDecoder } from "./kv-listing";
import { KV_SCHEMA, type KvTable, METADATA_SCHEMA } from "./kv-table";
import type { PendingWrites } from "./pending-writes";
import { openState } from "./rebuild";
import { SavepointStack } from "./savepoint-stack";
import { SnapshotSchedule } from "./snapshot-schedule";
import { ensureFirstSnapshot } from "./snapshots";
import type { StorageHost } from "./storage-host";
import { bufferedAlarm, bufferedValue, isApplied } from "./write-layers";

/** The batch being built: everything written since the last commit. */
interface Batch {
  /** The engine has an open implicit transaction (BEGIN ran). */
  began: boolean;
  /** The batch started with deleteAll(): the database was replaced. */
  reset: boolean;
  done: Deferred<void>;
}

/** The storage core. See the module comment for the write path. */
export class StorageCore {
  readonly settings: CoreSettings;
  /** The engine, the hidden tables, the SQL log and the SQL facade's host (core-sql-host.ts). */
  readonly sqlHost: CoreSqlHost;
  readonly cache: KvCache;
  /** The write layers and the savepoints behind them (savepoint-stack.ts). */
  readonly #savepoints: SavepointStack;
  #batch: Batch;
  #commitScheduled = false;
  #lastSeq: number;
  #lastCommitTimeMs: number;
  /** The committed alarm (what the engine holds outside any open batch). */
  #committedAlarm: number | null;
  #lastConfirmation: Promise<void> = Promise.resolve();
  #broken: Error | null = null;
  /** Set once the engine is closed. */
  #closed = false;
  /** Set when close() begins: from then on the core takes no new work. */
  #closing: Promise<void> | null = null;
  #host: StorageHost | undefined;
  /** Buffered writes the engine does not hold yet, and SQL's counters (pending-writes.ts). */
  readonly #pending: PendingWrites;
  /** The batch's SQL statements and connection state, for the commit record (batch-sql-log.ts). */
  readonly #log: BatchSqlLog;
  /** Keys written with `noCache` in the current batch. */
  readonly #noCacheKeys = new Set<string>();
  /** Commit times by seq, for bookmarks and retention. */
  readonly timeline: CommitTimeline;
  /** When snapshots are taken, and the ones taken (snapshot-schedule.ts). */
  readonly #schedule: SnapshotSchedule;

  private constructor(
    settings: CoreSettings,
    engine: SqlEngine,
    lastSeq: number,
    lastTimeMs: number,
    timeline: CommitTimeline,
  ) {
    this.settings = settings;
    this.timeline = timeline;
    this.sqlHost = new CoreSqlHost(settings, engine, {
      assertUsable: () => this.assertUsable(),
      begin: () => this.#begin(),
      nextSeq: () => this.#lastSeq + 1,
      afterWrite: (allowUnconfirmed) => this.#afterWrite(allowUnconfirmed),
      layers: () => this.#savepoints.layers,
      currentAlarm: () => this.currentAlarm(),
      failCommit: (e) => {
        this.#failCommit(e);
        return this.#broken as Error;
      },
      transactionSync: (fn) => this.transactionSync(fn),
      abort: (reason) => this.abort(reason),
    });
    this.#savepoints = new SavepointStack({
      sqlHost: this.sqlHost,
      begin: () => this.#begin(),
      scheduleCommit: () => this.#scheduleCommit(),
      now: () => this.now(),
    });
    this.#pending = this.sqlHost.pending;
    this.#log = this.sqlHost.log;
    this.cache = new KvCache(settings.cacheSoftLimitBytes);
    this.#lastSeq = lastSeq;
    this.#lastCommitTimeMs = lastTimeMs;
    this.#committedAlarm = this.#kv.getAlarm();
    this.#batch = this.#newBatch();
    this.#schedule = new SnapshotSchedule(settings, {
      engine: () => this.sqlHost.engine,
      between: () => !this.#batch.began && this.#savepoints.depth === 0,
      taken: () => {
        this.#log.snapshotTaken();
        return [this.#lastSeq, this.#lastCommitTimeMs];
      },
    });
  }

  /**
   * Opens the core over what the persistence adapter holds: the newest snapshot plus the log after
   * it. A torn tail was already cut off by the adapter.
   */
  static async open(settings: CoreSettings, options: CoreOpenOptions = {}): Promise<StorageCore> {
    const loaded = await settings.persistence.load();
    await ensureFirstSnapshot(settings, loaded);
    // A restore requested by the previous session builds only the bookmark's state, not the
    // newest one first: the restore is then committed on top of the newest history.
    const restoreToSeq = await options.restoreTarget?.();
    // One streamed pass over the log: the timeline and the replay (openState in rebuild.ts).
    const built = await openState(settings, loaded, restoreToSeq);
    const timeline = built.timeline;
    const lastSeq = restoreToSeq === undefined ? built.lastSeq : Math.max(loaded.lastSeq, timeline.lastSeq);
    const lastTimeMs = restoreToSeq === undefined ? built.lastTimeMs : (timeline.timeOf(lastSeq) ?? built.lastTimeMs);
    const core = new StorageCore(settings, built.engine, lastSeq, lastTimeMs, timeline);
    core.#schedule.loaded(loaded.snapshots, built.recordsSinceSnapshot, built.bytesSinceSnapshot);
    if (restoreToSeq !== undefined) await core.#commitRestore(restoreToSeq);
    return core;
  }

  // ---------------------------------------------------------------- state

  /** The engine that holds the data now. */
  get engine(): SqlEngine {
    return this.sqlHost.engine;
  }

  get #engine(): SqlEngine {
    return this.sqlHost.engine;
  }

  get #kv(): KvTable {
    return this.sqlHost.kv;
  }

  /** The sequence number of the last committed batch (0 = nothing yet). */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** When the last batch committed. */
  get lastCommitTimeMs(): number {
    return this.#lastCommitTimeMs;
  }

  /** The error that broke the core, if any. */
  get broken(): Error | null {
    return this.#broken;
  }

  /** Attaches the object context's hooks. */
  attach(host: StorageHost | undefined): void {
    this.#host = host;
  }

  /** The attached host, if any. */
  get host(): StorageHost | undefined {
    return this.#host;
  }

  /** Throws if the core can no longer be used. */
  assertUsable(): void {
    if (this.#broken) throw this.#broken;
    if (this.#closed || this.#closing) throw closedError();
  }

  /** Whether an explicit transaction (or transactionSync) is open. */
  get inTransaction(): boolean {
    return this.#savepoints.depth > 0;
  }

  // ---------------------------------------------------------------- key-value reads

  /** The current bytes of `key` (buffered writes first), or `null` when absent. */
  read(key: string, noCache = false): Uint8Array | null {
    const buffered = bufferedValue(this.#savepoints.layers, key);
    if (buffered !== undefined) return buffered;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached.bytes;
    if (this.cache.knownAbsent(key)) return null;
    const bytes = this.#kv.get(key) ?? null;
    if (!noCache) this.cache.set(key, bytes);
    return bytes;
  }

  /**
   * Deletes `key` and answers whether it existed. Known keys (buffered, cached) are answered from
   * memory and the deletion is buffered; otherwise the row is deleted in SQLite at once, inside
   * the batch's transaction (or the open savepoint), so one statement both answers and deletes,
   * and the commit skips it (`WriteLayer.applied`).
   */
  delete(key: string, allowUnconfirmed: boolean): boolean {
    // The platform's delete() is a statement on `_cf_KV`, which it creates for it if needed.
    if (!this.#kv.exists()) this.sqlHost.createInternalTable(KV_SCHEMA);
    const buffered = bufferedValue(this.#savepoints.layers, key);
    let existed = buffered === undefined ? undefined : buffered !== null;
    if (existed === undefined) {
      const cached = this.cache.get(key);
      if (cached !== undefined) existed = cached.bytes !== null;
      else if (this.cache.knownAbsent(key)) existed = false;
    }
    if (existed === undefined) {
      const began = this.#batch.began;
      this.#begin();
      existed = this.#kv.remove(key);
      // The engine ran this call's statement itself: its change is not one the engine is behind on.
      if (existed) this.#pending.counts.engineChanged(1);
      if (existed) (this.#savepoints.top.applied ??= new Map()).set(key, null);
      else if (!began) {
        // Nothing changed: end the transaction this lookup opened.
        this.#engine.exec("COMMIT");
        this.#batch.began = false;
      }
    }
    if (existed) this.write(key, null, allowUnconfirmed);
    else {
      this.#pending.counts.called(key, 0);
      this.#afterWrite(allowUnconfirmed); // the platform holds the output gate for any delete
    }
    return existed;
  }

  /** The cached decoded primitive for `key`, when the cache has one and no write shadows it. */
  cachedPrimitive(key: string): { value: unknown } | undefined {
    for (const layer of this.#savepoints.layers) if (layer.kv.has(key)) return undefined;
    return this.cache.get(key)?.primitive;
  }

  /** Remembers the decoded primitive of a clean cached key. */
  rememberPrimitive(key: string, bytes: Uint8Array, value: unknown): void {
    const entry = this.cache.peek(key); // just read or inserted: already the most recent
    if (entry !== undefined && entry.bytes === bytes) entry.primitive = { value };
  }

  /** Entries in `range` as stored bytes (buffered writes merged over committed data), in order, limited. */
  list(range: KeyRange, noCache = false): Array<[string, Uint8Array]> {
    return listEntries(this.#listing(), range, noCache);
  }

  /** Entries in `range` with decoded values, as `list()` answers (see kv-listing.ts). */
  listValues(range: KeyRange, noCache: boolean, decode: ValueDecoder): Map<string, unknown> {
    return listValues(this.#listing(), range, noCache, decode);
  }

  #listing(): ListingSource {
    return { table: this.#kv, cache: this.cache, layers: this.#savepoints.layers };
  }

  // ---------------------------------------------------------------- writes

  /**
   * Buffers a write (`null` deletes). With `noCache`, the entry leaves memory once its batch is
   * committed.
   */
  write(key: string, bytes: Uint8Array | null, allowUnconfirmed: boolean, noCache = false): void {
    this.assertUsable();
    // The platform creates the hidden table with the first write, so SQL sees it (and is refused
    // access to it) from then on, not only after the batch commits.
    if (!this.#kv.exists()) this.sqlHost.createInternalTable(KV_SCHEMA);
    if (noCache) this.#noCacheKeys.add(key);
    else if (this.#noCacheKeys.size > 0) this.#noCacheKeys.delete(key);
    this.#savepoints.top.kv.set(key, bytes);
    this.#pending.wrote(key);
    this.#afterWrite(allowUnconfirmed);
  }

  /** The alarm as of now (buffered changes first). */
  currentAlarm(): number | null {
    const buffered = bufferedAlarm(this.#savepoints.layers);
    return buffered === undefined ? this.#committedAlarm : buffered;
  }

  /**
   * What `getAlarm()` answers. The alarm scheduler overrides it while a handler runs (the platform
   * shows no alarm then, unless the handler set a new one).
   */
  alarmView(): number | null {
    this.#pending.alarmUnknown = false;
    return this.alarmViewOverride ? this.alarmViewOverride(this.currentAlarm()) : this.currentAlarm();
  }

  /** Set by the alarm scheduler while a handler runs. */
  alarmViewOverride: ((current: number | null) => number | null) | undefined;

  /**
   * How many `setAlarm()`/`deleteAlarm()` calls this session made, those that change nothing
   * included; a rolled-back savepoint takes back its own. The object context compares it before
   * and after an alarm handler: on the platform a handler that sets the alarm, even to the time
   * being handled, keeps it (the deferred deletion is cancelled), and `getAlarm()` shows it.
   */
  get alarmCalls(): number {
    return this.#savepoints.alarmCalls;
  }

  /** {@link alarmCalls} when the latest alarm handler started (set by the object context). */
  alarmHandlerMark: number | undefined;

  /** The committed alarm (ignores buffered changes). */
  get committedAlarm(): number | null {
    return this.#committedAlarm;
  }

  /** Buffers an alarm change. */
  writeAlarm(timeMs: number | null, allowUnconfirmed: boolean): void {
    this.assertUsable();
    this.#savepoints.countAlarmCall();
    // Setting the same alarm is a no-op, as on the platform, except a deletion it cannot know is one.
    const unknown = timeMs === null && this.#pending.alarmUnknown;
    if (this.currentAlarm() === timeMs && !unknown) return;
    // The platform writes the alarm at the call, creating `_cf_METADATA` with the first one, so
    // `sqlite_schema` and `databaseSize` show it from then on (also if it is cleared in the batch).
    if ((timeMs !== null || unknown) && !this.#kv.metadataExists()) this.sqlHost.createInternalTable(METADATA_SCHEMA);
    this.#savepoints.top.alarm = timeMs;
    this.#pending.alarmChanged();
    this.#afterWrite(allowUnconfirmed);
  }

  /**
   * deleteAll(): drops everything pending, replaces the database with an empty one, and keeps the
   * alarm unless configured otherwise. Takes effect at once; commits with the batch.
   */
  deleteAll(): void {
    this.assertUsable();
    if (this.#savepoints.depth > 0) throw new Error("Cannot call deleteAll() within a transaction");
    const keepAlarm = this.settings.deleteAllDeletesAlarm ? null : this.currentAlarm();
    if (this.#batch.began) this.#engine.exec("ROLLBACK");
    this.sqlHost.replaceEngine(this.settings.engineFactory.open());
    this.cache.clear();
    // The new database is empty: every key is known to be absent until something is written.
    this.cache.markComplete("", undefined);
    const base = this.#savepoints.base;
    base.kv.clear();
    base.applied = undefined;
    // The fresh database has no alarm; write the kept one back (or record the deletion).
    base.alarm = keepAlarm ?? (this.#committedAlarm === null ? undefined : null);
    base.appliedAlarm = undefined;
    this.#pending.replaced(keepAlarm !== null);
    this.#batch.began = false;
    this.#batch.reset = true;
    this.#log.clear();
    // The platform writes the kept alarm into the new database at once.
    if (keepAlarm !== null) this.sqlHost.createInternalTable(METADATA_SCHEMA);
    // The platform disables allowUnconfirmed for deleteAll.
    this.#afterWrite(false);
  }

  // ---------------------------------------------------------------- savepoints

  /** The current time. */
  now(): number {
    return this.settings.clock.now();
  }

  /** transactionSync: a savepoint covering SQL, key-value and alarm writes. */
  transactionSync<T>(fn: () => T): T {
    this.assertUsable();
    const layer = this.openSavepoint("_cf_sync_savepoint");
    let result: T;
    try {
      result = fn();
    } catch (e) {
      this.rollbackSavepoint(layer);
      throw e;
    }
    this.releaseSavepoint(layer);
    return result;
  }

  /** Opens a savepoint and a write layer for it; returns its handle (savepoint-stack.ts). */
  openSavepoint(prefix: string): object {
    return this.#savepoints.open(prefix);
  }

  /**
   * Releases a savepoint: its writes join the enclosing layer, or, while nested savepoints are
   * still open, everything from it up is rolled back and an error says why.
   */
  releaseSavepoint(handle: object): void {
    if (this.#broken) return;
    // close() rolled back every savepoint still open: this transaction's writes were not committed.
    if (this.#closed || this.#closing) throw closedError();
    this.#savepoints.release(handle);
  }

  /** Rolls back a savepoint and those opened after it (`explicit`: a `rollback()` call). */
  rollbackSavepoint(handle: object, explicit = false): void {
    if (this.#broken || this.#closed) return;
    this.#savepoints.rollback(handle, explicit);
  }

  /** Whether a savepoint is still open. */
  isSavepointOpen(handle: object): boolean {
    return this.#savepoints.isOpen(handle);
  }

  // ---------------------------------------------------------------- commit

  /** Resolves when every write issued so far is confirmed (durable). */
  sync(): Promise<void> {
    if (this.#broken) return Promise.reject(this.#broken);
    // Inside a transaction the current batch is the transaction itself, which cannot commit
    // before the closure ends: sync() there waits for what was committed before it began.
    if (this.#savepoints.depth > 0) return this.#lastConfirmation;
    if (this.#hasPending()) return this.#batch.done.promise;
    return this.#lastConfirmation;
  }

  /** Commits the current batch now, if nothing (an explicit transaction) holds it open. */
  commitNow(): void {
    this.#commitScheduled = false;
    if (this.#savepoints.depth > 0 || this.#broken || this.#closed) return;
    this.#pending.alarmUnknown = false;
    const batch = this.#batch;
    const base = this.#savepoints.base;
    if (!this.#hasPending()) {
      if (batch.began) this.#engine.exec("COMMIT");
      // Nothing to confirm (everything was rolled back): whoever waits on this batch goes on.
      batch.done.resolve();
      this.#batch = this.#newBatch();
      return;
    }
    const kv: KvWrite[] = [];
    let changedBytes = 0;
    // What the record holds in memory (held-bytes.ts), counted while its parts are at hand.
    let heldBytes = 0;
    // The rows the commit's own writes change (the engine's total_changes() before and after them):
    // read only when it writes any, which a batch of SQL alone does not (everything it did ran at
    // the calls).
    let changesBefore: number | undefined;
    try {
      this.#begin();
      // forEach, not for-of: destructuring each entry made a pair array per write.
      base.kv.forEach((value, key) => {
        if (!isApplied(base, key, value)) {
          changesBefore ??= this.#engine.totalChanges();
          this.#kv.write(key, value);
        }
        kv.push({ key, value });
        changedBytes += key.length + (value?.byteLength ?? 0);
        heldBytes += kvWriteHeldBytes(key, value);
      });
      if (base.alarm !== undefined && base.appliedAlarm !== base.alarm) {
        changesBefore ??= this.#engine.totalChanges();
        this.#kv.setAlarm(base.alarm);
      }
      this.#log.settle(this.#engine);
      this.#engine.exec("COMMIT");
    } catch (e) {
      this.#failCommit(e);
      return;
    }
    this.#pending.committed(changesBefore === undefined ? 0 : this.#engine.totalChanges() - changesBefore);
    const seq = ++this.#lastSeq;
    const timeMs = Math.max(this.settings.clock.now(), this.#lastCommitTimeMs);
    this.#lastCommitTimeMs = timeMs;
    changedBytes += this.#log.bytes;
    heldBytes += this.#log.heldBytes;
    const record: CommitRecord = { seq, timeMs, reset: batch.reset, sql: this.#log.take(), kv };
    this.#log.committed(this.#engine, record);
    noteHeldBytes(record, heldBytes + recordOverheadHeldBytes(record.session !== undefined));
    if (base.alarm !== undefined) record.alarm = base.alarm;
    this.timeline.append(seq, timeMs);
    // The batch is now clean: its entries move to the read cache.
    for (const w of kv) {
      if (this.#noCacheKeys.has(w.key)) this.cache.delete(w.key);
      else this.cache.set(w.key, w.value);
    }
    if (this.#noCacheKeys.size > 0) this.#noCacheKeys.clear();
    const alarmChanged = base.alarm !== undefined && base.alarm !== this.#committedAlarm;
    if (base.alarm !== undefined) this.#committedAlarm = base.alarm;
    this.#savepoints.committed();
    this.#batch = this.#newBatch();
    const append = this.settings.persistence.append([record]);
    this.#lastConfirmation = append;
    append.then(
      () => {
        batch.done.resolve();
        if (alarmChanged) this.#host?.onAlarmCommitted(this.#committedAlarm);
      },
      (e: unknown) => {
        const error = new Error(WRITE_FAILED_MESSAGE, { cause: e });
        batch.done.reject(error);
        this.#break(error);
      },
    );
    this.#schedule.committed(seq, timeMs, changedBytes);
  }

  #hasPending(): boolean {
    const base = this.#savepoints.base;
    const b = this.#batch;
    return (
      b.reset || this.#log.length > 0 || base.kv.size > 0 || base.alarm !== undefined || this.#savepoints.depth > 0
    );
  }

  #afterWrite(allowUnconfirmed: boolean): void {
    if (!allowUnconfirmed) this.#host?.holdOutput(this.#batch.done.promise);
    this.#scheduleCommit();
  }

  #scheduleCommit(): void {
    if (this.#commitScheduled || this.#savepoints.depth > 0) return;
    this.#commitScheduled = true;
    // At the end of the turn: writes issued in this turn, and in microtasks after it, share the
    // batch; a timer the object sets after writing fires only after the commit.
    scheduleTurnEnd(() => this.commitNow());
  }

  #begin(): void {
    if (this.#batch.began) return;
    this.#engine.exec("BEGIN");
    this.#batch.began = true;
  }

  #newBatch(): Batch {
    return { began: false, reset: false, done: deferred<void>() };
  }

  #failCommit(e: unknown): void {
    try {
      this.#engine.exec("ROLLBACK");
    } catch {
      // already rolled back by SQLite
    }
    this.sqlHost.schemaChanged();
    const error = commitFailure(e);
    this.#batch.done.reject(error);
    this.#break(error);
  }

  /**
   * A write outside the log failed in a way that may have stored it all the same (a restore
   * request's metadata: a file renamed into place whose directory sync failed, a request whose
   * answer was lost). The next session may act on it, so this one must confirm nothing more:
   * the core breaks as after a failed commit (the object context resets the object). Returns the
   * error callers get: the platform's reset error with `cause`, or the one that broke it first.
   */
  failWrite(cause: unknown): Error {
    this.#break(new Error(WRITE_FAILED_MESSAGE, { cause }));
    return this.#broken as Error;
  }

  #break(error: Error): void {
    if (this.#broken) return;
    this.#broken = error;
    this.sqlHost.cancelCursors();
    this.#host?.onBroken(error);
  }

  /** The snapshots the adapter holds (as far as this core knows), oldest first. */
  get snapshots(): SnapshotInfo[] {
    return this.#schedule.snapshots;
  }

  set snapshots(list: SnapshotInfo[]) {
    this.#schedule.snapshots = list;
  }

  /** Called after each snapshot is durable (retention pruning hooks in here). */
  set onSnapshot(hook: ((seq: number) => void) | undefined) {
    this.#schedule.onSnapshot = hook;
  }

  /** Deletes snapshots inside the retention window that restores do not need (snapshot-schedule.ts). */
  thinSnapshots(keepFromSeq: number): Promise<void> {
    return this.#schedule.thin(keepFromSeq);
  }

  /** Writes a snapshot of the committed state now (right after a commit, before new writes begin). */
  snapshot(): Promise<void> {
    return this.#schedule.take();
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Discards everything not yet committed and stops accepting work (abort, reset).
   * The engine is closed; reopen the storage to continue from the confirmed state.
   */
  abort(reason: Error): void {
    if (!this.#broken) this.#broken = reason;
    this.#batch.done.reject(reason);
    this.#shutdown();
  }

  /** Resolves when no append or snapshot of this core is still in flight (success or not). */
  async settled(): Promise<void> {
    await this.#lastConfirmation.catch(() => {});
    await this.#schedule.settled();
  }

  /**
   * Closes after committing what is pending; rejects with the write's error (after releasing the
   * adapter) when that commit, or one still in flight, could not be made durable. From the call on, the core takes no new work
   * (ERR_CLOSED), and a transaction still open is rolled back first: its closure's end fails with
   * ERR_CLOSED, and the writes made beside it commit. Calling it again returns the same promise.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    if (this.#closed) return;
    const brokenBefore = this.#broken;
    if (!this.#broken) {
      this.#savepoints.unwindAll();
      this.commitNow();
      await this.#lastConfirmation.catch(() => {});
      // A final snapshot where it is written in place and the log since the newest is long.
      if (!this.#broken) await this.#schedule.closing();
      else await this.#schedule.settled();
    }
    this.#shutdown();
    // Release the adapter's resources (file handles); its data stays, and load() reopens it.
    await this.settings.persistence.close();
    // What close() committed (or waited for) did not become durable: say so, as sync() would.
    if (brokenBefore === null && this.#broken !== null) throw this.#broken;
  }

  #shutdown(): void {
    if (this.#closed) return;
    this.#closed = true;
    // Nothing can join or commit the open batch any more: whoever waits on it must not wait forever.
    this.#batch.done.reject(closedError());
    this.sqlHost.close();
  }

  /**
   * Commits a point-in-time restore whose state the engine already holds: a record naming the
   * restored seq (so replay rebuilds the same state), then a snapshot, so that later opens need
   * not rebuild it from older history. The record also carries the restored state's alarm (replay
   * takes it from the restored state and ignores the field), so whatever follows the log's alarm
   * (a host's alarm index) sees the alarm the restore brought back or removed.
   */
  async #commitRestore(restoreToSeq: number): Promise<void> {
    const seq = ++this.#lastSeq;
    const timeMs = Math.max(this.settings.clock.now(), this.#lastCommitTimeMs);
    this.#lastCommitTimeMs = timeMs;
    this.timeline.append(seq, timeMs);
    const alarm = this.#committedAlarm;
    const record: CommitRecord = { seq, timeMs, reset: false, restoreToSeq, alarm, sql: [], kv: [] };
    const append = this.settings.persistence.append([record]);
    this.#lastConfirmation = append;
    await append;
    await this.#schedule.take([seq, timeMs]);
  }
}

/** What every use of a closed (or closing) storage fails with. */
function closedError(): ActorStoreError {
  return new ActorStoreError("ERR_CLOSED", "This storage was closed. Open it again to continue.");
}

export type { CoreOpenOptions, CoreSettings } from "./core-settings";
export { NESTED_STILL_RUNNING_MESSAGE, ORPHANED_TRANSACTION_MESSAGE, WRITE_FAILED_MESSAGE } from "./core-settings";
