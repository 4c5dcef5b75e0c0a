/**
 * Applying commit records to an engine: the one code path shared by live commits' recovery
 * (open after a crash, reset after a failed write) and point-in-time restore.
 *
 * Replay is exact because the live path made every non-deterministic input explicit: SQL runs with
 * the logged 'now' and with `random()` reseeded from (seq, statement index), statements run in the
 * logged order, and key-value writes are logged as their final bytes.
 */

import type { CommitRecord } from "../durability/commit-record";
import type { EngineStatement, SqlEngine } from "../engine/engine";
import type { SplitMix64 } from "../util/prng";
import type { KvTable } from "./kv-table";

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
): void {
  record.sql.forEach((op, index) => {
    prng.reseed(record.seq, index);
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
  });
  for (const w of record.kv) kv.write(w.key, w.value);
  if (record.alarm !== undefined) kv.setAlarm(record.alarm);
}

/**
 * Replays many records in one engine transaction. They were each committed once already, so
 * per-record transactions would only repeat work (a journal per record); what a COMMIT does to
 * connection state between them (switching `defer_foreign_keys` off) is done by hand.
 */
export class ReplayTransaction {
  readonly #engine: SqlEngine;
  #open = false;

  constructor(engine: SqlEngine) {
    this.#engine = engine;
  }

  /** Applies one record inside the group's transaction. */
  apply(kv: KvTable, prng: SplitMix64, statements: ReplayStatements, record: CommitRecord): void {
    if (!this.#open) {
      this.#engine.exec("BEGIN");
      this.#open = true;
    }
    applyRecord(this.#engine, kv, prng, statements, record);
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
