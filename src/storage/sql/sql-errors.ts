/**
 * SQL errors in the platform's shape: `<sqlite message>[ at offset N]: SQLITE_<CODE>[ (extended:
 * SQLITE_<EXT>)]`, thrown as plain `Error`s like workerd's `dbErrorMessage`.
 *
 * sql.js reports only SQLite's message and (for step errors) the primary result code. The
 * extended code and the error offset, which SQLite computes internally, are not exported, so they
 * are derived here: the extended code from the message (and the table's primary key for UNIQUE
 * failures), the offset from the statement text for exactly the messages where SQLite records one
 * (those formatted from a token or an expression). See docs/sql.md for what cannot match.
 */
import { EngineError } from "../../engine/engine";
import { isPlatformFunction, PLATFORM_DENIED_FUNCTIONS } from "./allowed-functions";
import { byteOffset, isKeyword, type SqlToken, tokenize, tokenizeFirstStatement } from "./sql-tokenizer";

/** SQLite's primary result codes by number. */
const PRIMARY_CODE_NAMES: Readonly<Record<number, string>> = {
  1: "ERROR",
  2: "INTERNAL",
  3: "PERM",
  4: "ABORT",
  5: "BUSY",
  6: "LOCKED",
  7: "NOMEM",
  8: "READONLY",
  9: "INTERRUPT",
  10: "IOERR",
  11: "CORRUPT",
  12: "NOTFOUND",
  13: "FULL",
  14: "CANTOPEN",
  15: "PROTOCOL",
  16: "EMPTY",
  17: "SCHEMA",
  18: "TOOBIG",
  19: "CONSTRAINT",
  20: "MISMATCH",
  21: "MISUSE",
  22: "NOLFS",
  23: "AUTH",
  24: "FORMAT",
  25: "RANGE",
  26: "NOTADB",
};

/** Result codes the facade raises itself. */
export const SQLITE_ERROR = 1;
/** `SQLITE_NOMEM`. */
export const SQLITE_NOMEM = 7;
/** `SQLITE_TOOBIG`. */
export const SQLITE_TOOBIG = 18;
/** `SQLITE_CONSTRAINT`. */
export const SQLITE_CONSTRAINT = 19;
/** `SQLITE_AUTH`. */
export const SQLITE_AUTH = 23;

/** The platform's text when user SQL tries to manage transactions itself. */
export const TRANSACTION_STATEMENT_MESSAGE =
  "To execute a transaction, please use the state.storage.transaction() or state.storage.transactionSync() APIs instead of the SQL BEGIN TRANSACTION or SAVEPOINT statements. The JavaScript API is safer because it will automatically roll back on exceptions, and because it interacts correctly with Durable Objects' automatic atomic write coalescing.";

/** The platform's text for a cursor that outlived `deleteAll()`. */
export const QUERY_CANCELED_MESSAGE = "SQLite query was canceled because the database was deleted.";

/**
 * Builds an error in the platform's shape.
 *
 * @example
 * ```ts
 * sqliteError("not authorized", 23).message; // "not authorized: SQLITE_AUTH"
 * ```
 */
export function sqliteError(
  message: string,
  code: number,
  options: { offset?: number; extended?: string } = {},
): Error {
  const name = PRIMARY_CODE_NAMES[code & 0xff] ?? "ERROR";
  const offset = options.offset === undefined ? "" : ` at offset ${options.offset}`;
  const extended = options.extended === undefined ? "" : ` (extended: SQLITE_${options.extended})`;
  return new Error(`${message}${offset}: SQLITE_${name}${extended}`);
}

/** What error translation needs to know about the database (answered by trusted queries). */
export interface ErrorContext {
  /** The text of the statement that failed (offsets are relative to it, as on the platform). */
  readonly statementSql: string;
  /** The primary-key columns of `table`, in order; empty for rowid tables without one. */
  primaryKeyColumns(table: string): readonly string[];
  /** The message of compiling `sql`, or `undefined` when it compiles (used to locate syntax errors). */
  compileError(sql: string): string | undefined;
}

/** SQLite's critical result codes: FULL, NOMEM, IOERR, INTERRUPT (SQLite may roll back the transaction). */
const CRITICAL_CODES = new Set([13, 7, 10, 9]);

/** Whether `error` is an engine error with a critical result code (see {@link CRITICAL_CODES}). */
export function isCriticalEngineError(error: unknown): boolean {
  return error instanceof EngineError && CRITICAL_CODES.has(error.resultCode & 0xff);
}

/**
 * The message of the run-time check of `pragma_*` arguments (pragma-arguments.ts), reported as the
 * platform's `not authorized: SQLITE_AUTH`.
 */
export const PRAGMA_ARGUMENT_REFUSED = "actorstore: pragma argument not authorized";

/**
 * Turns an engine error into the platform's error. Non-engine errors pass through unchanged.
 */
export function translateEngineError(error: unknown, context: ErrorContext): unknown {
  if (!(error instanceof EngineError)) return error;
  const message = error.sqliteMessage;
  if (message.includes(PRAGMA_ARGUMENT_REFUSED)) return sqliteError("not authorized", SQLITE_AUTH);
  // A function the platform's SQLite does not have (sql.js's extension functions, `unistr`…) is
  // unknown there whatever its arguments; SQLite here checks their number first.
  // A function the platform has and refuses that sql.js's build lacks (fts5's) is refused there.
  const unknown = /^wrong number of arguments to function (.*)\(\)$/.exec(message)?.[1];
  if (unknown !== undefined && !isPlatformFunction(unknown.toLowerCase())) {
    const offset = locateFunctionCall(context.statementSql, unknown);
    return sqliteError(`no such function: ${unknown}`, SQLITE_ERROR, offset === undefined ? {} : { offset });
  }
  const missing = /^no such function: (.*)$/.exec(message)?.[1];
  if (missing !== undefined && PLATFORM_DENIED_FUNCTIONS.has(missing.toLowerCase())) {
    const offset = locateFunctionCall(context.statementSql, missing);
    const text = `not authorized to use function: ${missing}`;
    return sqliteError(text, SQLITE_ERROR, offset === undefined ? {} : { offset });
  }
  const code = error.resultCode & 0xff;
  const extended = extendedCodeFor(message, code, context);
  const offset = offsetFor(message, context);
  return sqliteError(message, code, {
    ...(offset === undefined ? {} : { offset }),
    ...(extended === undefined ? {} : { extended }),
  });
}

/** The extended result code SQLite would have reported, derived from the message. */
function extendedCodeFor(message: string, code: number, context: ErrorContext): string | undefined {
  if (code === SQLITE_CONSTRAINT) {
    const unique = /^UNIQUE constraint failed: (.*)$/.exec(message);
    if (unique) {
      const columns = (unique[1] ?? "").split(", ");
      if (columns.length === 1 && columns[0]?.endsWith(".rowid")) return "CONSTRAINT_ROWID";
      const table = columns[0]?.split(".")[0];
      if (table !== undefined && !columns[0]?.startsWith("index ")) {
        const names = columns.map((c) => c.slice(c.indexOf(".") + 1));
        const pk = context.primaryKeyColumns(table);
        if (pk.length === names.length && pk.every((c, i) => c === names[i])) return "CONSTRAINT_PRIMARYKEY";
      }
      return "CONSTRAINT_UNIQUE";
    }
    if (message.startsWith("NOT NULL constraint failed")) return "CONSTRAINT_NOTNULL";
    if (message.startsWith("CHECK constraint failed")) return "CONSTRAINT_CHECK";
    if (message.startsWith("FOREIGN KEY constraint failed")) return "CONSTRAINT_FOREIGNKEY";
    if (/^cannot store .* value in .* column /.test(message)) return "CONSTRAINT_DATATYPE";
    // Anything else with SQLITE_CONSTRAINT comes from RAISE(ABORT|FAIL|ROLLBACK, …) in a trigger.
    return "CONSTRAINT_TRIGGER";
  }
  if (code === 4 && message === "abort due to ROLLBACK") return "ABORT_ROLLBACK";
  return undefined;
}

/** The error offset SQLite would have reported, for the messages where it records one. */
function offsetFor(message: string, context: ErrorContext): number | undefined {
  const sql = context.statementSql;
  const near = /^near "([\s\S]*)": syntax error$/.exec(message);
  if (near) return locateSyntaxError(near[1] ?? "", message, context);
  const unrecognized = /^unrecognized token: "([\s\S]*)"$/.exec(message);
  if (unrecognized) {
    const at = sql.indexOf(unrecognized[1] ?? "");
    return at < 0 ? undefined : byteOffset(sql, at);
  }
  // ALTER TABLE … DROP COLUMN names the column token as written, in quotes (`no such column: "%T"`).
  const dropped = /^no such column: "([\s\S]*)"$/.exec(message)?.[1];
  if (dropped !== undefined) {
    // The column of this statement's DROP COLUMN or RENAME COLUMN, not a later statement's.
    const tokens = tokenizeFirstStatement(sql);
    const at = tokens.findLast((t, k) => t.text === dropped && k > 0);
    return at === undefined ? undefined : byteOffset(sql, at.start);
  }
  const column = /^(?:no such column|ambiguous column name): (.*)$/.exec(message);
  if (column) return locateName(sql, (column[1] ?? "").split("."), (text) => context.compileError(text) === message);
  const fn =
    /^(?:no such function|not authorized to use function): (.*)$/.exec(message) ??
    /^(?:wrong number of arguments to function|misuse of (?:aggregate|window) function) (.*)\(\)$/.exec(message) ??
    /^misuse of aggregate: (.*)\(\)$/.exec(message) ??
    /^(.*)\(\) may not be used as a window function$/.exec(message) ??
    /^too many arguments on function (.*)$/.exec(message);
  if (fn) return locateFunctionCall(sql, fn[1] ?? "");
  const database = /^unknown database (.*)$/.exec(message);
  if (database) {
    // The schema token, as written: where SQLite resolves it, in this statement (a later one may
    // qualify a name with it: `VACUUM nosuch; SELECT * FROM nosuch.t`).
    const first = tokenizeFirstStatement(sql);
    const tokens = first.some((t) => t.text === database[1]) ? first : tokenize(sql);
    const at =
      tokens.find((t, k) => t.text === database[1] && tokens[k + 1]?.text === ".") ??
      tokens.find((t) => t.text === database[1]);
    return at === undefined ? undefined : byteOffset(sql, at.start);
  }
  // `%T` of the view's or trigger's name token, as written.
  const exists =
    /^(?:table|view|trigger) (.*) already exists$/.exec(message) ??
    /^(?:view|trigger) (.*) cannot reference objects in database .*$/.exec(message);
  if (exists) {
    const tokens = tokenize(sql);
    const at = tokens.find((t) => t.text === exists[1]);
    return at === undefined ? undefined : byteOffset(sql, at.start);
  }
  return undefined;
}

/**
 * SQLite stops at the first token it cannot parse. The same text can occur earlier (validly), so
 * find the first occurrence whose prefix already fails with the same message.
 */
function locateSyntaxError(tokenText: string, message: string, context: ErrorContext): number | undefined {
  const sql = context.statementSql;
  const candidates = tokenize(sql).filter((t) => t.text === tokenText);
  for (const t of candidates) {
    if (candidates.length === 1 || context.compileError(sql.slice(0, t.end)) === message) {
      return byteOffset(sql, t.start);
    }
  }
  const first = candidates[0];
  return first === undefined ? undefined : byteOffset(sql, first.start);
}

/**
 * Where the (possibly qualified) name `parts` is written: the first place, or when it is written
 * several times, the first place SQLite fails on (`fails` tells whether a text fails as the
 * statement did). `INSERT INTO w SELECT rowid FROM t RETURNING rowid` fails on the second `rowid`
 * when `w` has no rowid: each text keeps the places up to one and writes NULL for the rest.
 */
function locateName(sql: string, parts: readonly string[], fails: (text: string) => boolean): number | undefined {
  const tokens = tokenize(sql);
  const spans: { start: number; end: number }[] = [];
  let update: number | undefined;
  const matches = (t: SqlToken | undefined, name: string | undefined) =>
    t !== undefined && t.kind === "identifier" && name !== undefined && t.value.toLowerCase() === name.toLowerCase();
  for (let i = 0; i < tokens.length; i++) {
    let ok = true;
    for (let p = 0; p < parts.length && ok; p++) {
      ok = matches(tokens[i + p * 2], parts[p]) && (p === parts.length - 1 || tokens[i + p * 2 + 1]?.text === ".");
    }
    // a bare name must not be the column part of a qualified reference
    if (!ok || (parts.length === 1 && tokens[i - 1]?.text === ".")) continue;
    if (parts.length === 1 && isUpdateTarget(tokens, i)) {
      if (spans.length === 0) update = i;
      break;
    }
    spans.push({ start: tokens[i]?.start ?? 0, end: tokens[i + (parts.length - 1) * 2]?.end ?? 0 });
  }
  if (update !== undefined) return locateInSetValue(sql, tokens, update, parts[0] ?? "");
  const first = spans[0];
  if (first === undefined) return undefined;
  const failing =
    spans.length === 1
      ? first
      : (spans.find((_, j) => {
          let text = sql;
          for (const later of spans.slice(j + 1).reverse())
            text = `${text.slice(0, later.start)}NULL${text.slice(later.end)}`;
          return fails(text);
        }) ?? first);
  return byteOffset(sql, failing.start);
}

/** Whether token `i` is the column an UPDATE's (or upsert's) `SET c = …` assigns. */
function isUpdateTarget(tokens: readonly SqlToken[], i: number): boolean {
  const before = tokens[i - 1];
  if (tokens[i + 1]?.text !== "=" || !(isKeyword(before, "SET") || before?.text === ",")) return false;
  return tokens.slice(0, i).some((t) => isKeyword(t, "UPDATE"));
}

/**
 * SQLite resolves the value of each `SET c = value` before the column it assigns, and names an
 * unknown assigned column without recording an offset (`no such column: %s`). So: the name in
 * that value if it is there, else no offset.
 */
function locateInSetValue(sql: string, tokens: readonly SqlToken[], target: number, name: string): number | undefined {
  let depth = 0;
  for (let k = target + 2; k < tokens.length; k++) {
    const t = tokens[k] as SqlToken;
    if (t.text === "(") depth++;
    else if (t.text === ")") depth--;
    if (
      t.text === ";" ||
      (depth === 0 && (t.text === "," || ["WHERE", "FROM", "RETURNING", "ORDER", "LIMIT"].some((w) => isKeyword(t, w))))
    ) {
      break;
    }
    if (t.kind === "identifier" && t.value.toLowerCase() === name.toLowerCase() && tokens[k - 1]?.text !== ".") {
      return byteOffset(sql, t.start);
    }
  }
  return undefined;
}

/** The first call of function `name` (`name(`), as SQLite records the function expression. */
export function locateFunctionCall(sql: string, name: string): number | undefined {
  const tokens = tokenize(sql);
  const lower = name.toLowerCase();
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t?.kind === "identifier" && t.value.toLowerCase() === lower && tokens[i + 1]?.text === "(") {
      return byteOffset(sql, t.start);
    }
  }
  return undefined;
}
