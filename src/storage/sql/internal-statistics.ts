/**
 * The internal tables' statistics, kept out of `sqlite_stat1` and shown to SQLite alone.
 *
 * ANALYZE and `PRAGMA optimize` count every table into `sqlite_stat1`, the internal ones too, and
 * user SQL may read that table, so their rows are deleted right after each such statement. The
 * platform keeps them, and what SQLite does later depends on them: `PRAGMA optimize` analyzes an
 * indexed table whose index has no statistics (`_cf_KV` here, once SQLite reloaded its statistics
 * without that row), and reanalyzes one whose size changed about tenfold since the row was written.
 *
 * So the row count of `_cf_KV`'s row (the one internal row optimize looks at: `_cf_METADATA` has no
 * index) is kept where user SQL cannot read it: the database header's application id (`PRAGMA
 * application_id`, which the platform refuses, as every form that reads it), as the count plus
 * one, 0 when there is no row. Around every statement that writes statistics the row is put back
 * into `sqlite_stat1` and taken out again; before `PRAGMA optimize` SQLite also reloads its
 * statistics (`ANALYZE sqlite_schema` analyzes nothing and ends with the reload every ANALYZE ends
 * with), so optimize decides from what the platform's connection holds. Each write is logged like
 * any other, so replay, a restart and a restore give the same database; the reload writes nothing.
 */
import type { SqlEngine } from "../../engine/engine";

/** Logs `sql` as a write of its own and runs it (the host's `beforeWrite`, then the engine). */
export type InternalWrite = (sql: string) => void;

/** Whether the database has a `sqlite_stat1` table (asked of the engine, not the catalog). */
function hasStatisticsTable(engine: SqlEngine): boolean {
  return engine.query("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat1'").length > 0;
}

/** What the header keeps: `_cf_KV`'s row count in `sqlite_stat1` plus one, 0 for no row. */
function kept(engine: SqlEngine): number {
  return Number(engine.query("PRAGMA application_id")[0]?.[0] ?? 0);
}

/** The largest value the header's 32-bit signed field takes. */
const MAX_KEPT = 0x7fffffff;

/**
 * Puts `_cf_KV`'s kept row back into `sqlite_stat1` before a statement that writes statistics;
 * with `reload` (before `PRAGMA optimize`) SQLite then reloads its statistics. Returns whether the
 * row was put back (pass it to {@link hideInternalStatistics}).
 */
export function showInternalStatistics(engine: SqlEngine, write: InternalWrite, reload: boolean): boolean {
  const count = kept(engine);
  if (count <= 0) return false;
  if (!hasStatisticsTable(engine)) {
    // The table was dropped, and the platform's row with it.
    write("PRAGMA application_id = 0");
    return false;
  }
  write(`INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES ('_cf_KV', '_cf_KV', '${count - 1} 1')`);
  if (reload) engine.exec("ANALYZE sqlite_schema");
  return true;
}

/**
 * Removes the internal tables' rows from `sqlite_stat1` after a statement that writes statistics,
 * keeping the row count of `_cf_KV`'s row first. `shown` says whether {@link showInternalStatistics}
 * put the kept row in: when the row is gone, the statement analyzed `_cf_KV` and found it empty.
 */
export function hideInternalStatistics(engine: SqlEngine, write: InternalWrite, shown: boolean): void {
  if (!hasStatisticsTable(engine)) return;
  const row = engine.query("SELECT stat FROM sqlite_stat1 WHERE tbl = '_cf_KV' AND idx = '_cf_KV'")[0];
  let count: number | undefined;
  if (row !== undefined) count = Math.min(MAX_KEPT, Number.parseInt(String(row[0]), 10) + 1) || 0;
  else if (shown) count = 0;
  if (count !== undefined && count !== kept(engine)) write(`PRAGMA application_id = ${count}`);
  // `lower()` folds ASCII only, as SQLite's name resolution does, whatever case_sensitive_like says.
  write("DELETE FROM sqlite_stat1 WHERE lower(substr(tbl, 1, 4)) = '_cf_'");
}
