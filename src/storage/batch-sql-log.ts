/**
 * The SQL log of the batch being built: the statements it ran, in order, each with what replay
 * needs to run it exactly as it ran live — the time it saw as 'now', how `random()` was seeded (the
 * batch's seq and the statement's index in the record), and the connection state around it
 * (session-log.ts: settings, connection inputs, session marks). The storage core's SQL side
 * (core-sql-host.ts) hands it each statement right before it runs, as the SQL facade's host
 * (`SqlHost.beforeWrite`), and the core (storage-core.ts) takes its entries into the commit record.
 */
import type { CommitRecord, SqlWrite } from "../durability/commit-record";
import { INPUT_HELD_BYTES, SETTINGS_HELD_BYTES } from "../durability/held-bytes";
import type { SqlEngine } from "../engine/engine";
import { SplitMix64 } from "../util/prng";
import { applyConnectionDefaults } from "./connection-defaults";
import type { PerCallChanges } from "./per-call-changes";
import { mayChangeSettings, SessionLog } from "./session-log";
import type { WriteDescription } from "./sql/sql-host";

/** The batch's SQL log. See the module comment. */
export class BatchSqlLog {
  #entries: SqlWrite[] = [];
  /** `sqlWriteBytes` (snapshots.ts) of the entries, counted as each is logged (while it is still in cache). */
  #bytes = 0;
  /**
   * `sqlWriteHeldBytes` (held-bytes.ts) of the entries, counted as each is logged, without what
   * the session log added to them since (`SessionLog.addedHeldBytes`).
   */
  #held = 0;
  /** Connection state for the log: session starts, settings, connection inputs. */
  readonly #session: SessionLog;
  readonly #prng = new SplitMix64();

  /** `counts` says how far the engine's `total_changes()` is behind the platform's (per-call-changes.ts). */
  constructor(counts: PerCallChanges) {
    this.#session = new SessionLog(counts);
  }

  /**
   * Prepares a connection the log records, at the start of a session: the seeded `random()`, the
   * connection inputs, the defaults, and `changes()`, `total_changes()` and `last_insert_rowid()`
   * at 0, as on the platform's new connection (whatever replay or the previous session ran on this one).
   */
  prepare(engine: SqlEngine): void {
    engine.setRandomSource(this.#prng);
    engine.setConnectionInputs(this.#session);
    applyConnectionDefaults(engine);
    engine.resetConnectionCounters();
  }

  /** How many entries the batch logged so far (a savepoint's mark to roll back to). */
  get length(): number {
    return this.#entries.length;
  }

  /** About how many bytes the batch's entries add to the log (for the snapshot schedule). */
  get bytes(): number {
    return this.#bytes;
  }

  /** What {@link BatchSqlLog.statement} decides from a statement's text alone (SqlHost.describeWrite). */
  describe(sql: string): WriteDescription {
    return { mayChangeSettings: mayChangeSettings(sql) };
  }

  /**
   * Logs a statement of batch `seq` that is compiled and about to run on `engine`, and seeds
   * `random()` for it. `description` is {@link BatchSqlLog.describe} of its text, when known.
   */
  statement(engine: SqlEngine, entry: SqlWrite, seq: number, description: WriteDescription | undefined): void {
    const index = this.#entries.length;
    this.#entries.push(entry);
    this.#count(entry, 1);
    this.#session.logged(engine, entry, description?.mayChangeSettings ?? mayChangeSettings(entry.sql));
    this.#prng.reseed(seq, index);
  }

  /** Logs a statement the core runs itself (an internal table's schema); it draws no random numbers. */
  internal(engine: SqlEngine, entry: SqlWrite): void {
    this.#entries.push(entry);
    this.#count(entry, 1);
    this.#session.logged(engine, entry);
  }

  /**
   * A savepoint opened at `mark` rolled back: its entries are gone, and when one of them may have
   * changed a setting (a rollback does not undo one), an entry that sets what the rollback left.
   */
  rollBackTo(engine: SqlEngine, mark: number, nowMs: number): void {
    const removed = this.#entries.slice(mark);
    const settings = this.#session.rolledBack(engine, removed, nowMs);
    this.#entries.length = mark;
    for (const entry of removed) this.#count(entry, -1);
    if (settings !== undefined) {
      this.#entries.push(settings);
      this.#count(settings, 1);
    }
  }

  /**
   * Adds `sign` times `entry`'s `sqlWriteBytes` (snapshots.ts) and `sqlWriteHeldBytes`
   * (held-bytes.ts), as it stands, to the batch's counts: both in one pass over its bindings, which
   * is on every statement's path (test/storage/batch-sql-log.test.ts holds both sums to those
   * functions).
   */
  #count(entry: SqlWrite, sign: 1 | -1): void {
    const text = entry.sql.length;
    let bytes = text + 16;
    let held = 64 + text * 2;
    if (entry.inputs !== undefined) held += INPUT_HELD_BYTES * entry.inputs.length;
    if (entry.settings) held += SETTINGS_HELD_BYTES;
    const bindings = entry.bindings;
    for (let i = 0; i < bindings.length; i++) {
      const b = bindings[i];
      if (typeof b === "string") {
        bytes += b.length;
        held += 16 + b.length * 2;
      } else if (b instanceof Uint8Array) {
        bytes += b.byteLength;
        held += 64 + b.byteLength;
      } else {
        bytes += 8;
        held += 8;
      }
    }
    this.#bytes += sign * bytes;
    this.#held += sign * held;
  }

  /** Reads the settings a logged statement may have changed; runs before the COMMIT. */
  settle(engine: SqlEngine): void {
    this.#session.settle(engine);
  }

  /**
   * `sqlWriteHeldBytes` (held-bytes.ts) of the batch's entries as they stand: what was counted as
   * each was logged, and what the session log added to them since. Ask after
   * {@link BatchSqlLog.settle}, before {@link BatchSqlLog.take}.
   */
  get heldBytes(): number {
    return this.#held + this.#session.addedHeldBytes;
  }

  /** The batch's entries, for its commit record; the log starts the next batch. */
  take(): SqlWrite[] {
    const entries = this.#entries;
    this.clear();
    return entries;
  }

  /** The batch of `record` committed (the engine's COMMIT ran): adds the pending session mark to it. */
  committed(engine: SqlEngine, record: CommitRecord): void {
    this.#session.committed(engine, record);
  }

  /**
   * deleteAll() dropped the batch's writes: nothing of it is logged. Also how
   * {@link BatchSqlLog.take} starts the next batch.
   */
  clear(): void {
    this.#entries = [];
    this.#bytes = 0;
    this.#held = 0;
    this.#session.resetHeldBytes();
  }

  /** A snapshot of the last committed state was taken: the next record says what the settings are. */
  snapshotTaken(): void {
    this.#session.snapshotTaken();
  }

  /** The database was replaced by a fresh one (deleteAll): a new connection, prepared as the first. */
  connectionReplaced(engine: SqlEngine): void {
    this.#session.connectionReplaced();
    this.prepare(engine);
  }
}
