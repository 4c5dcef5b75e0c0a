/**
 * The storage core's SQL side: the engine that holds the object's database, and the SQL facade's
 * host ({@link SqlHost}) over it. It owns what belongs to one connection and its statements — the
 * engine and its replacement (`deleteAll()`), the hidden tables (kv-table.ts), the batch's SQL log
 * (batch-sql-log.ts), the buffered writes the engine does not hold yet with SQL's counters
 * (pending-writes.ts), the schema epoch — and runs what the facade asks before a statement: the
 * implicit transaction opened, the statement logged, the buffered key-value writes applied.
 *
 * The batch and the commit stay in storage-core.ts (the write layers and savepoints in
 * savepoint-stack.ts), which hands this side a few hooks ({@link CoreBatchHooks}). The facade
 * talks to this object directly (no wrapper: its getters are on every exec's path).
 */
import type { EngineValue, SqlEngine } from "../engine/engine";
import { BatchSqlLog } from "./batch-sql-log";
import type { CoreSettings } from "./core-settings";
import { KvTable } from "./kv-table";
import { PendingWrites } from "./pending-writes";
import type { SqlHost, WriteDescription } from "./sql/sql-host";
import type { WriteLayer } from "./write-layers";

/** What the SQL side needs from the batch and commit core (storage-core.ts). */
export interface CoreBatchHooks {
  /** Throws if the core can no longer be used. */
  assertUsable(): void;
  /** Opens the batch's implicit transaction, if it is not open yet. */
  begin(): void;
  /** The sequence number the batch being built will commit as. */
  nextSeq(): number;
  /** A write was issued: the output gate holds for it (unless `allowUnconfirmed`), the commit is scheduled. */
  afterWrite(allowUnconfirmed: boolean): void;
  /** The open write layers, the batch's first. */
  layers(): readonly WriteLayer[];
  /** The alarm as of now (buffered changes first). */
  currentAlarm(): number | null;
  /** The batch cannot commit as it stands: breaks the core and returns the error later calls throw. */
  failCommit(error: unknown): Error;
  /** transactionSync: a savepoint covering SQL, key-value and alarm writes. */
  transactionSync<T>(fn: () => T): T;
  /** Discards everything not committed and stops the core (a critical engine error). */
  abort(reason: Error): void;
}

/** The storage core's engine and SQL host. See the module comment. */
export class CoreSqlHost implements SqlHost {
  readonly #settings: CoreSettings;
  readonly #core: CoreBatchHooks;
  #engine: SqlEngine;
  #generation = 0;
  #schemaEpoch = 0;
  #kv: KvTable;
  /** Buffered writes the engine does not hold yet, and SQL's counters (pending-writes.ts). */
  readonly pending = new PendingWrites();
  /** The batch's SQL statements and connection state, for the commit record (batch-sql-log.ts). */
  readonly log = new BatchSqlLog(this.pending.counts);

  /** Hosts `engine` (already holding the opened state) for the core that passes `core`. */
  constructor(settings: CoreSettings, engine: SqlEngine, core: CoreBatchHooks) {
    this.#settings = settings;
    this.#core = core;
    this.#engine = engine;
    this.log.prepare(engine);
    this.#kv = new KvTable(engine, this.#bumpSchemaEpoch);
  }

  /** The engine that holds the data now. */
  get engine(): SqlEngine {
    return this.#engine;
  }

  /** The hidden tables of the current engine. */
  get kv(): KvTable {
    return this.#kv;
  }

  /** Changes whenever the engine is replaced. */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Changes when the schema may have changed behind the SQL facade: a rollback (it can bring back
   * dropped objects), the hidden tables created, the database replaced. Keys the cached verdicts.
   */
  get schemaEpoch(): number {
    return this.#schemaEpoch;
  }

  readonly #bumpSchemaEpoch = (): void => {
    this.#schemaEpoch++;
  };

  /**
   * The schema may have changed behind the facade (a rollback, a failed commit): cached verdicts
   * and the hidden tables' state are stale.
   */
  schemaChanged(): void {
    this.#schemaEpoch++;
    this.#kv.invalidate();
  }

  /** Opens the implicit transaction if needed and logs a SQL write (see SqlHost.beforeWrite). */
  beforeWrite(sql: string, bindings: readonly EngineValue[], description?: WriteDescription): number {
    const core = this.#core;
    core.assertUsable();
    core.begin();
    const nowMs = this.#settings.clock.now();
    // Kept as is: the facade hands over an array of its own (SqlHost.beforeWrite).
    this.log.statement(this.#engine, { sql, bindings: bindings as EngineValue[], nowMs }, core.nextSeq(), description);
    core.afterWrite(false);
    return nowMs;
  }

  /** What {@link CoreSqlHost.beforeWrite} decides from a statement's text alone (SqlHost.describeWrite). */
  describeWrite(sql: string): WriteDescription {
    return this.log.describe(sql);
  }

  /** The current time. */
  now(): number {
    return this.#settings.clock.now();
  }

  /**
   * SqlHost: a SQL statement is about to run (or `databaseSize` to be read). The platform writes
   * each key into `_cf_KV` at the call, so SQL that looks at the database (`PRAGMA optimize`,
   * `ANALYZE`, `databaseSize`, `changes()`) sees it; here key-value writes are buffered, so the
   * ones the engine does not hold yet are written now, inside the batch's transaction (or the open
   * savepoint). They stay buffered for reads and the commit record; the commit skips them.
   */
  beforeStatement(): void {
    this.applyPending(true);
  }

  /** Brings the engine up to date with the buffered writes (pending-writes.ts). */
  applyPending(beforeStatement: boolean): void {
    if (!this.pending.due(beforeStatement)) return;
    const core = this.#core;
    try {
      this.pending.apply(this.#engine, this.#kv, core.layers(), core.currentAlarm(), this.#begin, beforeStatement);
    } catch (e) {
      // A write SQLite refused (the database is full): the batch cannot commit as it stands.
      throw core.failCommit(e);
    }
  }

  readonly #begin = (): void => this.#core.begin();

  /**
   * Creates an internal table now, at the call that first needs it (as the platform does), as a
   * logged write of the batch: it rolls back with a savepoint, and replay creates it at the same
   * point among the batch's SQL writes, so `sqlite_schema` gets the same rows in the same order.
   */
  createInternalTable(schema: string): void {
    this.#core.begin();
    this.log.internal(this.#engine, { sql: schema, bindings: [], nowMs: this.#settings.clock.now() });
    this.#engine.exec(schema);
    this.schemaChanged();
  }

  /** SqlHost: runs `fn` in a savepoint (the core's transactionSync). */
  transactionSync<T>(fn: () => T): T {
    return this.#core.transactionSync(fn);
  }

  /**
   * SqlHost: SQLite rolled the open transaction back by itself (a critical error such as
   * SQLITE_FULL): the object breaks, as on the platform, and every later call throws `error`.
   */
  onCriticalError(error: Error): void {
    this.#core.abort(error);
  }

  /** Throws if the core can no longer be used. */
  assertUsable(): void {
    this.#core.assertUsable();
  }

  /** Replaces the engine with `engine` (a new, empty database: deleteAll()); the old one is closed. */
  replaceEngine(engine: SqlEngine): void {
    this.close();
    this.#engine = engine;
    this.log.connectionReplaced(engine);
    this.#kv = new KvTable(engine, this.#bumpSchemaEpoch);
    this.#generation++;
    this.#schemaEpoch++;
  }

  /**
   * The core broke (a failed commit or append): the generation moves on, so cursors still open fail
   * at their next read with the core's error, as every other call does, instead of reading on from
   * the engine the host is about to discard (a failed commit has rolled it back).
   */
  cancelCursors(): void {
    this.#generation++;
  }

  /**
   * Closes the hidden tables' statements and the engine. The generation moves on, so cursors
   * still open on the closed engine are canceled (they fail with the storage's closed error).
   */
  close(): void {
    this.#generation++;
    this.#kv.dispose();
    this.#engine.close();
  }
}
