/**
 * What the SQL facade (`storage.sql`) needs from the storage core. The core owns the engine, the
 * implicit transaction of the current batch, the commit log and savepoints; the facade owns
 * statement compilation, the restriction checks and cursors.
 */
import type { EngineValue, SqlEngine } from "../../engine/engine";

/**
 * What the host decided about a statement that may write from its text alone (see
 * {@link SqlHost.describeWrite}).
 */
export interface WriteDescription {
  /** Its text names a pragma, so it may change a connection setting (the host logs them). */
  readonly mayChangeSettings: boolean;
}

/** The storage core, as the SQL facade sees it. */
export interface SqlHost {
  /** The engine that holds the data now. `deleteAll()` and resets replace it. */
  readonly engine: SqlEngine;
  /** Changes whenever {@link SqlHost.engine} is replaced (cursors of an older generation are canceled). */
  readonly generation: number;
  /**
   * Optional. Changes whenever the core rolls back (savepoint or transaction) or changes the
   * schema itself. The facade caches restriction verdicts per statement text until the schema
   * changes; it sees its own DDL, but a rollback can silently restore an older schema (say, a
   * trigger that was dropped), so a host that rolls back should bump this. Without it the facade
   * falls back to comparing SQLite's schema cookie on every `exec`.
   */
  readonly schemaEpoch?: number;
  /**
   * Must be called right before running a statement that may write (anything the restriction
   * check did not prove read-only). Opens the batch's implicit transaction if needed, logs the
   * statement for durability, and seeds `random()` so that replay is exact. Returns the time the
   * statement must see as 'now' (pass it to `statement.step`). The host may keep `bindings`: the
   * caller must not change the array afterwards. `description` is what
   * {@link SqlHost.describeWrite} returned for `sql`, when the caller kept it (the host decides
   * again without it).
   */
  beforeWrite(sql: string, bindings: readonly EngineValue[], description?: WriteDescription): number;
  /**
   * Optional. Decides once what {@link SqlHost.beforeWrite} would otherwise decide from the text
   * on every run of a statement; the facade keeps it with the compiled statement.
   */
  describeWrite?(sql: string): WriteDescription;
  /**
   * Optional. Called before every statement runs and before `databaseSize` is read, so that a host
   * that buffers writes of its own (key-value writes) can put them into the database first, where
   * the statement can see them (as the platform, which writes them at the call).
   */
  beforeStatement?(): void;
  /** The current time for read-only statements (ms since epoch). */
  now(): number;
  /**
   * Runs `fn` inside a savepoint that covers SQL and key-value writes (transactionSync):
   * released on return, rolled back and rethrown on throw. Nesting works.
   */
  transactionSync<T>(fn: () => T): T;
  /**
   * Optional. A statement failed with a critical error (`SQLITE_FULL`, `SQLITE_NOMEM`,
   * `SQLITE_IOERR`, `SQLITE_INTERRUPT`), after which SQLite may have rolled back the whole
   * implicit transaction by itself. The platform breaks the object then: every later call throws
   * `error`. A host without this method keeps going (tests that own the transaction).
   */
  onCriticalError?(error: Error): void;
  /** Throws if the storage was closed or reset (the platform's error for a broken object). */
  assertUsable(): void;
}
