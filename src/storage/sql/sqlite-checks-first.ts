/**
 * Statements SQLite checks in full before the platform's authorizer sees them. For
 * `CREATE TRIGGER` SQLite resolves the trigger's schema, refuses a table in another schema
 * (`trigger tr cannot reference objects in database nosuch`), looks the table up (`no such
 * table`), refuses schema tables (`cannot create trigger on system table`), an existing trigger
 * name and a wrong `INSTEAD OF`, and only then asks the authorizer. The access decision refuses
 * such a statement by its names before SQLite compiles it (`sql-access.ts`), so when it does, the
 * statement is compiled here (compiling a CREATE TRIGGER changes nothing; its program is never
 * run) and SQLite's error, if any, is the one the platform reports.
 *
 * `ALTER TABLE` likewise, in part: SQLite checks a `RENAME TO` (the new name taken or reserved)
 * and a `DROP COLUMN` (no such column, a key or the last column) in full before it asks the
 * authorizer, and an `ADD COLUMN`'s name while parsing it (`duplicate column name`); it asks
 * before anything else of a `RENAME COLUMN`, and before an `ADD COLUMN`'s constraints. And a
 * `CREATE TABLE`/`VIEW`/`INDEX` of a reserved `sqlite_` name (see {@link reservedNameError}).
 */
import { EngineError, type SqlEngine } from "../../engine/engine";
import { isKeyword, type SqlToken, tokenizeFirstStatement } from "./sql-tokenizer";

/**
 * SQLite's own error for the first statement of `sql` when that statement is one whose SQLite
 * checks all come before the platform's authorizer and it fails them; `undefined` otherwise.
 * The caller translates it into the platform's shape.
 */
export function sqliteErrorBeforeAuthorizer(engine: SqlEngine, sql: string): EngineError | undefined {
  const tokens = tokenizeFirstStatement(sql);
  let at = 0;
  while (isKeyword(tokens[at], "EXPLAIN")) {
    at += isKeyword(tokens[at + 1], "QUERY") && isKeyword(tokens[at + 2], "PLAN") ? 3 : 1;
  }
  if (isKeyword(tokens[at], "ALTER")) return alterErrorBeforeAuthorizer(engine, sql, tokens, at);
  if (!isKeyword(tokens[at], "CREATE")) return undefined;
  const kind = isKeyword(tokens[at + 1], "TEMP") || isKeyword(tokens[at + 1], "TEMPORARY") ? at + 2 : at + 1;
  if (!isKeyword(tokens[kind], "TRIGGER")) return reservedNameError(engine, sql, tokens, kind);
  try {
    engine.prepareHead(sql).statement?.free();
    return undefined;
  } catch (e) {
    return e instanceof EngineError ? e : undefined;
  }
}

/** SQLite's error for an `ALTER TABLE` (tokens from `at`) where it comes before the authorizer. */
function alterErrorBeforeAuthorizer(
  engine: SqlEngine,
  sql: string,
  tokens: readonly SqlToken[],
  at: number,
): EngineError | undefined {
  const name = tokens[at + 3]?.text === "." ? at + 5 : at + 3;
  const action = tokens[name];
  const renameTo = isKeyword(action, "RENAME") && isKeyword(tokens[name + 1], "TO");
  const drop = isKeyword(action, "DROP");
  const add = isKeyword(action, "ADD");
  if (!renameTo && !drop && !add) return undefined;
  let error: EngineError | undefined;
  try {
    engine.prepareHead(sql).statement?.free();
  } catch (e) {
    if (e instanceof EngineError) error = e;
  }
  if (error === undefined || (add && !/^duplicate column name: /.test(error.sqliteMessage))) return undefined;
  return error;
}

/**
 * SQLite's `object name reserved for internal use` for a `CREATE TABLE`/`VIEW` (its kind keyword
 * at `kind`) of a `sqlite_` name: SQLite checks the name before it asks the authorizer (so
 * `CREATE TABLE temp.sqlite_master (a)` fails with it there); compiled only for such a name, whose
 * compilation stops at that check. For a `CREATE INDEX`, SQLite's errors of {@link INDEX_CHECKS_FIRST}
 * (`CREATE INDEX _cf_x ON nosuch (a)` is `no such table: main.nosuch` there). Compiling changes nothing.
 */
function reservedNameError(
  engine: SqlEngine,
  sql: string,
  tokens: readonly SqlToken[],
  kind: number,
): EngineError | undefined {
  let at = isKeyword(tokens[kind], "UNIQUE") ? kind + 1 : kind;
  const index = isKeyword(tokens[at], "INDEX");
  if (!(isKeyword(tokens[at], "TABLE") || isKeyword(tokens[at], "VIEW") || index)) return undefined;
  at++;
  if (isKeyword(tokens[at], "IF") && isKeyword(tokens[at + 1], "NOT") && isKeyword(tokens[at + 2], "EXISTS")) at += 3;
  const name = tokens[at + 1]?.text === "." ? tokens[at + 2] : tokens[at];
  const reserved = name !== undefined && name.kind === "identifier" && /^sqlite_/i.test(name.value);
  if (!reserved && !index) return undefined;
  try {
    engine.prepareHead(sql).statement?.free();
    return undefined;
  } catch (e) {
    if (!(e instanceof EngineError)) return undefined;
    const first = index ? INDEX_CHECKS_FIRST : RESERVED_NAME;
    return first.test(e.sqliteMessage) ? e : undefined;
  }
}

const RESERVED_NAME = /^object name reserved for internal use: /;
/**
 * What SQLite checks of a `CREATE INDEX` before it asks the authorizer: the table (it exists, may be
 * indexed, is in the index's schema), then the index's name (reserved, taken). Its columns and
 * expressions are resolved after.
 */
const INDEX_CHECKS_FIRST =
  /^(?:no such table: |table .* may not be indexed$|views may not be indexed$|virtual tables may not be indexed$|cannot create a TEMP index on non-TEMP table |object name reserved for internal use: |there is already a table named |index .* already exists$)/;
