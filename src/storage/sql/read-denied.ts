/**
 * The error for a refused read of an internal table, worded as the platform's authorizer words it.
 */
import type { StatementKind } from "./sql-access";
import type { SchemaObject, SqlCatalog } from "./sql-catalog";
import { SQLITE_AUTH, sqliteError } from "./sql-errors";
import type { SqlToken } from "./sql-tokenizer";

/** Marks a read of the row key (`Rowid` opcode) among a cursor's column numbers. */
export const ROWID_COLUMN = -1;

/** A protected object the program reads, and which of its columns (by number). */
export interface ProtectedRead {
  readonly object: SchemaObject;
  readonly columns: Set<number>;
  /** Whether the program counts its rows (`count(*)`, the `Count` opcode). */
  counted: boolean;
}

/**
 * SQLite's authorizer names the first column it resolves: `access to T.C is prohibited`. Which
 * column that is depends on resolution order; we pick the first column of the protected table
 * that the statement text names and the program reads, else the first column the program reads
 * (for `SELECT *`, the table's first column, as on the platform). A read that touches no column
 * (`count(*)`) is refused as `not authorized`, as there.
 */
export function readDenied(
  catalog: SqlCatalog,
  tokens: readonly SqlToken[],
  reads: readonly ProtectedRead[],
  kind: StatementKind,
): Error {
  for (const read of reads) {
    const table = read.object.table;
    const tableObject = catalog.byName(table) ?? read.object;
    const tableColumns = catalog.columns(tableObject);
    const primaryKey = catalog.primaryKey(table);
    // The row key is the INTEGER PRIMARY KEY column when there is one (SQLite names that).
    const rowidName = primaryKey.length === 1 ? (primaryKey[0] as string) : "ROWID";
    const names = catalog.columns(read.object);
    const readNames = [...read.columns]
      .map((c) => (c === ROWID_COLUMN ? rowidName : names[c]))
      .filter((n): n is string => n !== undefined);
    if (readNames.length === 0) {
      // count(*) (the `Count` opcode, only without a WHERE on the table) reads no column at all.
      if (read.counted) continue;
      // Key columns compared inside an index seek are never loaded with `Column`; SQLite still
      // authorizes them as reads while resolving the text, so name the first one the text uses.
      const named = tokens.find(
        (t) => t.kind === "identifier" && tableColumns.some((n) => n.toLowerCase() === t.value.toLowerCase()),
      );
      const namedColumn = tableColumns.find((n) => n.toLowerCase() === named?.value.toLowerCase());
      if (namedColumn !== undefined) return sqliteError(`access to ${table}.${namedColumn} is prohibited`, SQLITE_AUTH);
      // A DML statement that reads a protected table without reading a column is a foreign-key
      // check on the parent key, which SQLite authorizes as a read of the key column.
      if (kind === "insert" || kind === "update" || kind === "delete") {
        const parentKey = primaryKey[0] ?? tableColumns[0];
        if (parentKey !== undefined) return sqliteError(`access to ${table}.${parentKey} is prohibited`, SQLITE_AUTH);
      }
      continue;
    }
    const written = tokens.find(
      (t) => t.kind === "identifier" && readNames.some((n) => n.toLowerCase() === t.value.toLowerCase()),
    );
    const byTableOrder = [...readNames].sort((a, b) => tableColumns.indexOf(a) - tableColumns.indexOf(b));
    const column =
      written !== undefined ? readNames.find((n) => n.toLowerCase() === written.value.toLowerCase()) : byTableOrder[0];
    if (column !== undefined) return sqliteError(`access to ${table}.${column} is prohibited`, SQLITE_AUTH);
  }
  return sqliteError("not authorized", SQLITE_AUTH);
}
