/**
 * Schema names in user SQL, as SQLite resolves them before the platform's authorizer sees a
 * statement: `main` and `temp` are the only schemas (ATTACH is refused), compared in ASCII case.
 * A PRAGMA or CREATE naming another fails with SQLite's `unknown database <name as written>`; a
 * DROP or ALTER of an object under it, or under temp (which holds nothing but its schema table),
 * fails with SQLite's own error, or does nothing (`IF EXISTS`), so the guard leaves those to
 * SQLite instead of refusing them (sql-access.ts).
 */
import { SQLITE_ERROR, sqliteError } from "./sql-errors";
import { byteOffset, type SqlToken } from "./sql-tokenizer";

/** `name` in SQLite's case folding (ASCII only). */
function asciiLower(name: string): string {
  return name.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** Whether `name` is the temp schema (in any ASCII case). */
export function isTempSchema(name: string): boolean {
  return asciiLower(name) === "temp";
}

/**
 * Whether SQLite knows the schema `name`: `main` and `temp` (in ASCII case), the only ones, since
 * ATTACH is refused. SQLite resolves the schema a PRAGMA or CREATE names before the platform's
 * authorizer sees the statement.
 */
export function isKnownSchema(name: string): boolean {
  const lower = asciiLower(name);
  return lower === "main" || lower === "temp";
}

/** SQLite's error for the schema token `schema` that names no database, as the platform reports it. */
export function unknownDatabase(sql: string, schema: SqlToken): Error {
  return sqliteError(`unknown database ${schema.text}`, SQLITE_ERROR, { offset: byteOffset(sql, schema.start) });
}

/**
 * Whether SQLite fails on `target` (`no such table: s.x`, `table sqlite_temp_master may not be
 * altered`), or does nothing (`DROP … IF EXISTS`), before the platform's authorizer is asked: its
 * schema is one SQLite does not know, or temp, which holds no object but its schema table
 * (`sqlite_temp_master` and its aliases: user SQL cannot create temp objects, nor `sqlite_stat1`
 * there, see analyzesTemp). Only dropping that table (`droppedTable`: a `DROP TABLE` or `DROP
 * VIEW`; `temp.sqlite_sequence` names nothing) gets as far as the authorizer; no ALTER does.
 */
export function namesNothing(
  target: { schema: string | undefined; name: string } | undefined,
  droppedTable: boolean,
): boolean {
  const schema = target?.schema;
  if (target === undefined || schema === undefined) return false;
  if (!isKnownSchema(schema)) return true;
  return isTempSchema(schema) && !(droppedTable && /^sqlite_(?:temp_)?(?:master|schema)$/i.test(target.name));
}

/**
 * Whether `ANALYZE <target>` analyzes the temp schema: `ANALYZE temp` (a lone name is a schema
 * first), `ANALYZE temp.sqlite_master` (its schema table, the one object there) or `ANALYZE
 * sqlite_temp_master` (SQLite finds that name, unqualified, in temp). Each creates `sqlite_stat1`
 * in temp, a write to `sqlite_temp_master` the platform's authorizer refuses.
 */
export function analyzesTemp(target: { schema: string | undefined; name: string }): boolean {
  if (target.schema === undefined)
    return isTempSchema(target.name) || /^sqlite_temp_(?:master|schema)$/i.test(target.name);
  return isTempSchema(target.schema) && /^sqlite_/i.test(target.name);
}
