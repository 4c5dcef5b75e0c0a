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
 *
 * And SQLite's parse errors where its parser reaches the authorizer only at the statement's end:
 * `CREATE INDEX`/`VIEW`, `DROP`, `ALTER TABLE`, `REINDEX` and `ANALYZE` are resolved once they are
 * parsed whole, so `DROP TABLE _cf_KV garbage` is `near "garbage": syntax error` there; a
 * `CREATE TRIGGER` is judged once its head (up to `BEGIN`) is parsed, so a syntax error in its body
 * comes after the refusal; a `CREATE TABLE` once its name is, so its column list's do too.
 */
import { EngineError, type SqlEngine } from "../../engine/engine";
import { isParseError } from "./pragma-syntax";
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
  const parsedFirst = parseErrorBeforeAuthorizer(engine, sql, tokens, at);
  if (parsedFirst !== undefined) return parsedFirst;
  if (isKeyword(tokens[at], "ALTER")) return alterErrorBeforeAuthorizer(engine, sql, tokens, at);
  if (!isKeyword(tokens[at], "CREATE")) return undefined;
  const kind = isKeyword(tokens[at + 1], "TEMP") || isKeyword(tokens[at + 1], "TEMPORARY") ? at + 2 : at + 1;
  if (!isKeyword(tokens[kind], "TRIGGER")) return reservedNameError(engine, sql, tokens, kind);
  // SQLite asks the authorizer once the trigger's head is parsed (at its BEGIN): what it finds in
  // the body (a syntax error, a qualified table name) comes after. Compile the head with an empty
  // body instead when the head's BEGIN is found (outside parentheses, as `WHEN (begin)` names a
  // column).
  const begin = headBegin(tokens, kind);
  const head = begin === undefined ? sql : `${sql.slice(0, begin.end)} SELECT 1; END`;
  return compileError(engine, head);
}

/** The error compiling the first statement of `sql` gives, if it is an engine error. */
function compileError(engine: SqlEngine, sql: string): EngineError | undefined {
  try {
    engine.prepareHead(sql).statement?.free();
    return undefined;
  } catch (e) {
    return e instanceof EngineError ? e : undefined;
  }
}

/** The `BEGIN` that ends a `CREATE TRIGGER`'s head (its kind keyword at `kind`), outside parentheses. */
function headBegin(tokens: readonly SqlToken[], kind: number): SqlToken | undefined {
  let depth = 0;
  for (let i = kind + 1; i < tokens.length; i++) {
    const token = tokens[i];
    if (token?.text === "(") depth++;
    else if (token?.text === ")") depth--;
    else if (depth === 0 && isKeyword(token, "BEGIN")) return token;
  }
  return undefined;
}

/**
 * SQLite's parse error (`near "x": syntax error`, `incomplete input`, `unrecognized token`) for
 * the statement at `at` when SQLite asks the authorizer only after parsing it whole: `CREATE
 * INDEX`, `CREATE VIEW`, `DROP`, `ALTER TABLE`, `REINDEX`, `ANALYZE`. An `ADD COLUMN` looks its
 * table up as soon as `ADD` is parsed and fails there first (`no such table`), so for it the
 * parse error counts only when the table is found. Compiling these changes nothing.
 */
function parseErrorBeforeAuthorizer(
  engine: SqlEngine,
  sql: string,
  tokens: readonly SqlToken[],
  at: number,
): EngineError | undefined {
  const first = tokens[at];
  let kind = isKeyword(tokens[at + 1], "TEMP") || isKeyword(tokens[at + 1], "TEMPORARY") ? at + 2 : at + 1;
  if (isKeyword(first, "CREATE") && isKeyword(tokens[kind], "UNIQUE")) kind++;
  const whole =
    isKeyword(first, "DROP") ||
    isKeyword(first, "ALTER") ||
    isKeyword(first, "REINDEX") ||
    isKeyword(first, "ANALYZE") ||
    (isKeyword(first, "CREATE") && (isKeyword(tokens[kind], "INDEX") || isKeyword(tokens[kind], "VIEW")));
  if (!whole) return undefined;
  const error = compileError(engine, sql);
  if (error === undefined || !isParseError(error.sqliteMessage)) return undefined;
  if (isKeyword(first, "ALTER") && addColumnTableError(engine, sql, tokens, at) !== undefined) return undefined;
  return error;
}

/**
 * For an `ALTER TABLE … ADD [COLUMN]` (tokens from `at`): SQLite's error looking up and checking
 * its table (`no such table: temp.t1`, `table sqlite_master may not be altered`), found by
 * compiling the statement up to `ADD [COLUMN]` with a plain column; `undefined` when there is none
 * or the statement is no `ADD`.
 */
function addColumnTableError(
  engine: SqlEngine,
  sql: string,
  tokens: readonly SqlToken[],
  at: number,
): EngineError | undefined {
  const add = tokens.findIndex((token, i) => i > at + 2 && isKeyword(token, "ADD"));
  if (add < 0) return undefined;
  const addEnd = isKeyword(tokens[add + 1], "COLUMN") ? tokens[add + 1] : tokens[add];
  if (addEnd === undefined) return undefined;
  const error = compileError(engine, `${sql.slice(0, addEnd.end)} "added column probe"`);
  return error === undefined || isParseError(error.sqliteMessage) ? undefined : error;
}

/**
 * The error to report for `error`, SQLite's parse error of the first statement of `sql`, when
 * that statement is an `ALTER TABLE … ADD [COLUMN]` whose table SQLite cannot alter. The
 * platform's SQLite looks the table up as soon as it has parsed `ADD` and stops there (`ALTER
 * TABLE temp.t1 ADD COLUMN x ,,` is `no such table: temp.t1`); sql.js's newer SQLite parses the
 * column first and reports its syntax error. `undefined` when `error` stands.
 */
export function addColumnTableErrorFirst(engine: SqlEngine, sql: string, error: EngineError): EngineError | undefined {
  if (!isParseError(error.sqliteMessage)) return undefined;
  const tokens = tokenizeFirstStatement(sql);
  let at = 0;
  while (isKeyword(tokens[at], "EXPLAIN")) {
    at += isKeyword(tokens[at + 1], "QUERY") && isKeyword(tokens[at + 2], "PLAN") ? 3 : 1;
  }
  return isKeyword(tokens[at], "ALTER") ? addColumnTableError(engine, sql, tokens, at) : undefined;
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
  // A name may be written as a string literal too (`CREATE TABLE temp.'sqlite_master' (a)`).
  const reserved =
    name !== undefined && (name.kind === "identifier" || name.kind === "string") && /^sqlite_/i.test(name.value);
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
