/**
 * Applying commit records to an engine: the one code path shared by live commits' recovery
 * (open after a crash, reset after a failed write) and point-in-time restore.
 *
 * Replay is exact because the live path made every input that is not in the database explicit: SQL
 * runs with the logged 'now' and with `random()` reseeded from (seq, statement index); statements
 * run in the logged order; `changes()`, `total_changes()` and `last_insert_rowid()` answer the
 * values they had live; the connection settings are set where the log says (session starts,
 * records after a snapshot, rolled-back savepoints); and key-value writes are logged as their
 * final bytes.
 */

import type { CommitRecord, SqlWrite } from "../durability/commit-record";
import type { ConnectionInput, ConnectionInputSource, EngineStatement, SqlEngine } from "../engine/engine";
import type { SplitMix64 } from "../util/prng";
import { applyConnectionSettings } from "./connection-defaults";
import type { KvTable } from "./kv-table";

/**
 * Answers `changes()`, `total_changes()` and `last_insert_rowid()` during replay with the values
 * the statement being replayed saw live, in call order. A statement logged without them (older
 * logs, or none called) reads the replaying connection's own.
 */
export class ReplayInputs implements ConnectionInputSource {
  #values: readonly bigint[] = [];
  #next = 0;

  /** The values of the statement about to run. */
  set(values: readonly bigint[] | undefined): void {
    this.#values = values ?? [];
    this.#next = 0;
  }

  value(_name: ConnectionInput, live: () => bigint): bigint {
    return this.#next < this.#values.length ? (this.#values[this.#next++] as bigint) : live();
  }
}

/** Statements compiled during one replay, reused across records (most logs repeat a few SQL texts). */
export class ReplayStatements {
  readonly #engine: SqlEngine;
  readonly #cache = new Map<string, EngineStatement>();

  constructor(engine: SqlEngine) {
    this.#engine = engine;
  }

  /** The compiled statement for `sql`. */
  get(sql: string): EngineStatement {
    let s = this.#cache.get(sql);
    if (s === undefined || s.freed) {
      s = this.#engine.prepare(sql);
      if (this.#cache.size > 256) this.dispose();
      this.#cache.set(sql, s);
    }
    return s;
  }

  /** Frees every cached statement. */
  dispose(): void {
    for (const s of this.#cache.values()) s.free();
    this.#cache.clear();
  }
}

/**
 * Applies the SQL, key-value and alarm parts of `record` to the open transaction. The caller has
 * already handled `reset` (fresh engine) and `restoreToSeq`, and groups records into transactions
 * (see {@link ReplayTransaction}).
 */
export function applyRecord(
  engine: SqlEngine,
  kv: KvTable,
  prng: SplitMix64,
  statements: ReplayStatements,
  record: CommitRecord,
  inputs?: ReplayInputs,
): void {
  if (record.session !== undefined) applyConnectionSettings(engine, record.session.settings);
  record.sql.forEach((op, index) => {
    if (op.sql !== "") runLogged(engine, prng, statements, record.seq, index, op, inputs);
    if (op.settings !== undefined) applyConnectionSettings(engine, op.settings);
  });
  for (const w of record.kv) kv.write(w.key, w.value);
  if (record.alarm !== undefined) kv.setAlarm(record.alarm);
}

function runLogged(
  engine: SqlEngine,
  prng: SplitMix64,
  statements: ReplayStatements,
  seq: number,
  index: number,
  op: SqlWrite,
  inputs: ReplayInputs | undefined,
): void {
  if (op.replay !== undefined) {
    // What the statement did live, as statements that do the same on any connection.
    for (const sql of op.replay) {
      try {
        engine.exec(sql);
      } catch {
        // as any logged statement: a failure is part of the history
      }
    }
    return;
  }
  prng.reseed(seq, index);
  inputs?.set(op.inputs);
  engine.withNow(op.nowMs, () => {
    // A statement that failed when it first ran fails again here, the same way, with the
    // same (lack of) effect: errors are part of the history, not a replay problem.
    let stmt: EngineStatement | undefined;
    try {
      stmt = statements.get(op.sql);
      stmt.bind(op.bindings, "real");
      while (stmt.step()) {
        // drain: RETURNING rows and the like
      }
    } catch {
      // see above
    } finally {
      stmt?.reset();
    }
  });
}

/**
 * Replays many records in one engine transaction. They were each committed once already, so
 * per-record transactions would only repeat work (a journal per record); what a COMMIT does to
 * connection state between them (switching `defer_foreign_keys` off) is done by hand.
 */
export class ReplayTransaction {
  readonly #engine: SqlEngine;
  #open = false;
  /** The connection's `foreign_keys` (on by default, see connection-defaults.ts). */
  #foreignKeys = true;

  constructor(engine: SqlEngine) {
    this.#engine = engine;
  }

  /**
   * Applies one record inside the group's transaction. A record that sets the connection settings
   * up front is applied in a transaction of its own, entered after setting them: `foreign_keys`
   * only changes outside a transaction.
   */
  apply(
    kv: KvTable,
    prng: SplitMix64,
    statements: ReplayStatements,
    record: CommitRecord,
    inputs?: ReplayInputs,
  ): void {
    if (record.session !== undefined) {
      this.commit();
      applyConnectionSettings(this.#engine, record.session.settings);
      this.#foreignKeys = record.session.settings.foreign_keys;
    }
    // Live, `foreign_keys` changes only when its pragma is compiled before the batch's transaction
    // began, so before anything of the batch touched the database: set it up front, outside one.
    let foreignKeys = this.#foreignKeys;
    for (const op of record.sql) if (op.settings !== undefined) foreignKeys = op.settings.foreign_keys;
    if (foreignKeys !== this.#foreignKeys) {
      this.commit();
      this.#engine.exec(`PRAGMA foreign_keys = ${foreignKeys ? "ON" : "OFF"}`);
      this.#foreignKeys = foreignKeys;
    }
    if (!this.#open) {
      this.#engine.exec("BEGIN");
      this.#open = true;
    }
    // (applyRecord sets the settings again, inside the transaction: the same values, no change.)
    applyRecord(this.#engine, kv, prng, statements, record, inputs);
    this.#engine.exec("PRAGMA defer_foreign_keys = OFF");
  }

  /** Commits what was applied (call before replacing the engine, and at the end). */
  commit(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#engine.exec("COMMIT");
  }

  /** Abandons the group after a failure. */
  rollback(): void {
    if (!this.#open) return;
    this.#open = false;
    try {
      this.#engine.exec("ROLLBACK");
    } catch {
      // already rolled back
    }
  }
}
