/**
 * What `PRAGMA optimize` did, as statements that do the same on any connection. It analyzes only
 * tables the connection used since it opened (unless its mask says otherwise), which replay on a
 * fresh connection (or after a snapshot) does not know; ANALYZE of a named table depends on the data
 * alone. So the live path compares `sqlite_stat1` before and after (every row with its rowid: even
 * an analysis that finds the same numbers rewrites its rows) and logs ANALYZE of each table whose
 * rows changed, in the order they were rewritten, under the analysis limit optimize used.
 */
import type { SqlEngine } from "../engine/engine";

/** `sqlite_stat1` by rowid (`null` when the table does not exist). */
export type Statistics = Map<number, { table: string; row: string }> | null;

/** The rows of `sqlite_stat1`, or `null` when there is none. */
export function readStatistics(engine: SqlEngine): Statistics {
  if (engine.query("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat1'").length === 0) return null;
  const rows = new Map<number, { table: string; row: string }>();
  for (const [rowid, tbl, idx, stat] of engine.query("SELECT rowid, tbl, idx, stat FROM sqlite_stat1")) {
    rows.set(Number(rowid), { table: String(tbl), row: `${String(tbl)}\u0000${String(idx)}\u0000${String(stat)}` });
  }
  return rows;
}

/** SQLite's limit for optimize's analyses when its mask has 0x10 (SQLITE_DEFAULT_OPTIMIZE_LIMIT). */
const OPTIMIZE_LIMIT = 2000;
/** The mask `PRAGMA optimize` uses without an argument. */
const DEFAULT_MASK = 0xfffe;

/** The mask of a `PRAGMA optimize` statement (its argument, as SQLite reads it). */
function maskOf(sql: string): number {
  const text = sql.replace(/\/\*[\s\S]*?(?:\*\/|$)|--[^\n]*/g, " ");
  const m = /optimize["'`\]]?\s*(?:=|\()\s*['"]?\s*([+-]?(?:0x[0-9a-f]+|\d+))/i.exec(text);
  if (m === null) return DEFAULT_MASK;
  const v = m[1] as string;
  return /0x/i.test(v) ? Number.parseInt(v.replace(/^[+]/, ""), 16) : Number(v);
}

const ident = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** The statements that redo what the optimize `sql` did since `before` was read. */
export function analyzedSince(engine: SqlEngine, before: Statistics, sql: string): string[] {
  const after = readStatistics(engine);
  if (after === null) return [];
  const tables: string[] = [];
  const add = (t: string) => {
    if (!tables.includes(t)) tables.push(t);
  };
  // Tables whose rows only went away first (no new rowids to order them by), then by new rowid.
  for (const [rowid, old] of before ?? []) if (!after.has(rowid)) add(old.table);
  for (const rowid of [...after.keys()].sort((a, b) => a - b)) {
    const now = after.get(rowid) as { table: string; row: string };
    if (before?.get(rowid)?.row !== now.row) add(now.table);
  }
  if (tables.length === 0 && before !== null) return [];
  const limit = (maskOf(sql) & 0x10) !== 0 ? OPTIMIZE_LIMIT : 0;
  return [
    `PRAGMA analysis_limit = ${limit}`,
    ...tables.map((t) => `ANALYZE "main".${ident(t)}`),
    "PRAGMA analysis_limit = 0",
  ];
}
