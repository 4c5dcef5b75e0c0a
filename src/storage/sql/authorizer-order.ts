/**
 * Which error wins when SQLite fails to compile a statement that the platform's authorizer would
 * also refuse. SQLite parses the whole statement first, then resolves it, asking the authorizer as
 * it goes; the library compiles in sql.js, which has no authorizer, and judges afterwards
 * (`sql-access.ts`). So where SQLite here fails while resolving, the platform's refusal may have
 * come first there:
 *
 * - INSERT (or REPLACE) and DELETE are authorized right after their table is looked up, before
 *   anything else is resolved: of an internal table (or, for INSERT, the temp schema's table, which
 *   SQLite would call read-only only later), `not authorized` wins over every error but a parse
 *   error or a missing table;
 * - UPDATE is authorized per assignment, after its value and its column are resolved: of an internal
 *   table, `not authorized` wins unless the error is in the first assignment;
 * - a function the platform refuses fails where SQLite resolves the call, pruning its arguments, and
 *   a later error in the same expression replaces it (SQLite keeps the last message) while an
 *   error in a later expression is never reached. Rather than model that walk, the statement is
 *   compiled again with each refused call replaced by an unknown function of no arguments, which
 *   SQLite reports at the same point of the same walk: if that is the error it reports, the
 *   refusal is the platform's error.
 *
 * Compiling changes nothing (no PRAGMA reaches this: those are judged before compiling).
 */
import { EngineError, type SqlEngine } from "../../engine/engine";
import { PLATFORM_DENIED_FUNCTIONS } from "./allowed-functions";
import { deniedFunction, isAllowedFunction } from "./function-calls";
import { isAllowedName } from "./internal-names";
import { isTempSchema } from "./schema-names";
import type { SqlCatalog } from "./sql-catalog";
import { SQLITE_AUTH, sqliteError } from "./sql-errors";
import { OPFLAG_P2ISREG, type ProgramOp } from "./sql-program";
import { byteOffset, isKeyword, matchingParen, type SqlToken, tokenize } from "./sql-tokenizer";

/** Errors SQLite raises while parsing, before anything is resolved or authorized. */
const PARSE_ERROR =
  /^(near "|unrecognized token|incomplete input|parser stack overflow|too many SQL variables|variable number must be|Expression tree is too large|statement too long|string or blob too big|too many columns|duplicate column name|unknown database)/;

/** The unknown function a refused call is replaced with in the probe, numbered by call. */
const PLACEHOLDER = "_cf_refused_call_";

/**
 * The platform's error for the first statement of `sql` when its authorizer would have refused
 * the statement before SQLite reached `error` (SQLite's compile error here); `undefined` when
 * `error` is the one the platform reports. `offsetOf` gives `error`'s offset as the platform
 * reports it, if any.
 */
export function refusalBeforeCompileError(
  engine: SqlEngine,
  catalog: SqlCatalog,
  sql: string,
  error: EngineError,
  offsetOf: (error: EngineError) => number | undefined,
): Error | undefined {
  if (PARSE_ERROR.test(error.sqliteMessage)) return undefined;
  const all = tokenize(sql);
  const tokens = firstStatement(all);
  if (isKeyword(tokens[0], "PRAGMA")) return undefined;
  const target = writeTarget(tokens);
  if (target !== undefined && writesProtectedTable(catalog, target)) {
    if (target.verb !== "UPDATE") return notAuthorized();
    if (!inFirstAssignment(sql, tokens, target.next, error, offsetOf)) {
      return refusedCallBeforeUpdate(sql, catalog) ?? notAuthorized();
    }
  }
  return refusedCallFirst(engine, catalog, sql, all);
}

/**
 * For an UPDATE of an internal table that also calls a refused function: the function's error
 * when the call is in the first assignment, which SQLite resolves before it asks about the write.
 */
export function refusedCallBeforeUpdate(sql: string, catalog: SqlCatalog): Error | undefined {
  const tokens = firstStatement(tokenize(sql));
  const target = writeTarget(tokens);
  if (target?.verb !== "UPDATE") return undefined;
  const range = firstAssignment(tokens, target.next);
  if (range === undefined) return undefined;
  for (let k = range.from; k < range.to; k++) {
    const call = refusedCall(tokens, k, catalog);
    if (call !== undefined) return deniedFunction(call, sql, byteOffset(sql, (tokens[k] as SqlToken).start));
  }
  return undefined;
}

const notAuthorized = () => sqliteError("not authorized", SQLITE_AUTH);

/** The tokens of the statement itself: after empty statements and EXPLAIN, up to its `;`. */
function firstStatement(all: readonly SqlToken[]): readonly SqlToken[] {
  let at = 0;
  while (all[at]?.text === ";") at++;
  while (isKeyword(all[at], "EXPLAIN")) {
    at += isKeyword(all[at + 1], "QUERY") && isKeyword(all[at + 2], "PLAN") ? 3 : 1;
  }
  return all.slice(at);
}

interface WriteTarget {
  readonly verb: "INSERT" | "DELETE" | "UPDATE";
  readonly schema: string | undefined;
  readonly name: string;
  /** The token after the name. */
  readonly next: number;
}

/** The table an INSERT, REPLACE, DELETE or UPDATE (after a WITH clause) writes. */
function writeTarget(tokens: readonly SqlToken[]): WriteTarget | undefined {
  let i = 0;
  if (isKeyword(tokens[0], "WITH")) {
    i = isKeyword(tokens[1], "RECURSIVE") ? 2 : 1;
    for (;;) {
      i++;
      if (tokens[i]?.text === "(") i = matchingParen(tokens, i) + 1;
      if (!isKeyword(tokens[i], "AS")) return undefined;
      i++;
      if (isKeyword(tokens[i], "NOT")) i++;
      if (isKeyword(tokens[i], "MATERIALIZED")) i++;
      if (tokens[i]?.text !== "(") return undefined;
      i = matchingParen(tokens, i) + 1;
      if (tokens[i]?.text !== ",") break;
      i++;
    }
  }
  let verb: WriteTarget["verb"];
  if (isKeyword(tokens[i], "INSERT") || isKeyword(tokens[i], "REPLACE")) {
    verb = "INSERT";
    while (i < tokens.length && !isKeyword(tokens[i], "INTO")) i++;
  } else if (isKeyword(tokens[i], "DELETE") && isKeyword(tokens[i + 1], "FROM")) {
    verb = "DELETE";
    i++;
  } else if (isKeyword(tokens[i], "UPDATE")) {
    verb = "UPDATE";
    if (isKeyword(tokens[i + 1], "OR")) i += 2;
  } else {
    return undefined;
  }
  const a = tokens[i + 1];
  if (a === undefined || (a.kind !== "identifier" && a.kind !== "string")) return undefined;
  if (tokens[i + 2]?.text === ".") {
    const b = tokens[i + 3];
    if (b === undefined || (b.kind !== "identifier" && b.kind !== "string")) return undefined;
    return { verb, schema: a.value, name: b.value, next: i + 4 };
  }
  return { verb, schema: undefined, name: a.value, next: i + 2 };
}

/**
 * Whether SQLite finds `target` and the platform's authorizer refuses writing it: an internal
 * table of main, or (INSERT only: SQLite calls an UPDATE or DELETE of it read-only first) the
 * temp schema's table.
 */
function writesProtectedTable(catalog: SqlCatalog, target: WriteTarget): boolean {
  const schema = target.schema?.toLowerCase();
  const tempTable = schema === undefined ? /^sqlite_temp_(master|schema)$/i : /^sqlite_(temp_)?(master|schema)$/i;
  if (schema === undefined || isTempSchema(schema)) {
    if (tempTable.test(target.name)) return target.verb === "INSERT";
    if (schema !== undefined) return false;
  } else if (schema !== "main") {
    return false;
  }
  if (isAllowedName(target.name)) return false;
  const found = () => catalog.byName(target.name)?.type === "table";
  if (found()) return true;
  catalog.invalidate();
  return found();
}

/** The tokens of an UPDATE's first `SET` assignment, `[from, to)`. */
function firstAssignment(tokens: readonly SqlToken[], afterName: number): { from: number; to: number } | undefined {
  const set = tokens.findIndex((t, k) => k >= afterName && isKeyword(t, "SET"));
  if (set < 0) return undefined;
  let depth = 0;
  for (let k = set + 1; k < tokens.length; k++) {
    const t = tokens[k] as SqlToken;
    if (t.text === "(") depth++;
    else if (t.text === ")") depth--;
    else if (
      t.text === ";" ||
      (depth === 0 && (t.text === "," || ["WHERE", "FROM", "RETURNING", "ORDER", "LIMIT"].some((w) => isKeyword(t, w))))
    )
      return { from: set + 1, to: k };
  }
  return { from: set + 1, to: tokens.length };
}

/** Whether `error` arose in the UPDATE's first assignment (its value, or its unknown column). */
function inFirstAssignment(
  sql: string,
  tokens: readonly SqlToken[],
  afterName: number,
  error: EngineError,
  offsetOf: (error: EngineError) => number | undefined,
): boolean {
  const range = firstAssignment(tokens, afterName);
  if (range === undefined) return true;
  const first = tokens[range.from];
  const last = tokens[range.to - 1];
  if (first === undefined || last === undefined) return true;
  const offset = offsetOf(error);
  if (offset !== undefined) return offset >= byteOffset(sql, first.start) && offset < byteOffset(sql, last.end);
  // `no such column: c` without an offset: the column an assignment names.
  const column = /^no such column: (.*)$/.exec(error.sqliteMessage)?.[1];
  if (column === undefined) return true;
  return first.value.toLowerCase() === column.toLowerCase() && tokens[range.from + 1]?.text === "=";
}

/** The name of the function `tokens[k]` calls, if it is one the platform refuses. */
function refusedCall(tokens: readonly SqlToken[], k: number, catalog: SqlCatalog): string | undefined {
  const t = tokens[k] as SqlToken;
  if (t.kind !== "identifier" || tokens[k + 1]?.text !== "(" || tokens[k - 1]?.text === ".") return undefined;
  const name = t.value.toLowerCase();
  return catalog.functionNames.has(name) && !isAllowedFunction(name) ? name : undefined;
}

/**
 * The refusal of a function call, when SQLite would have reached it before the error it reported:
 * the statement compiled again with each refused call replaced (see the module comment) fails at a replacement.
 */
function refusedCallFirst(
  engine: SqlEngine,
  catalog: SqlCatalog,
  sql: string,
  tokens: readonly SqlToken[],
): Error | undefined {
  const calls: { name: string; at: number }[] = [];
  let probe = "";
  let copied = 0;
  for (let k = 0; k < tokens.length; k++) {
    const name = refusedCall(tokens, k, catalog);
    if (name === undefined) continue;
    const t = tokens[k] as SqlToken;
    const close = matchingParen(tokens, k + 1);
    // A refused function SQLite has (`sqlite_version`) prunes its arguments, unless their number
    // is wrong (SQLite says so first); one the platform does not have at all (sql.js's extension
    // functions) is unknown there, and SQLite goes on into its arguments.
    const pruned = PLATFORM_DENIED_FUNCTIONS.has(name);
    const end = pruned ? (tokens[close]?.end ?? sql.length) : t.end;
    if (pruned && !arityFits(engine, name, tokens, k + 1, close)) continue;
    probe += `${sql.slice(copied, t.start)}${PLACEHOLDER}${calls.length}${pruned ? "()" : ""}`;
    copied = end;
    calls.push({ name, at: byteOffset(sql, t.start) });
    if (pruned) k = close;
  }
  if (calls.length === 0) return undefined;
  probe += sql.slice(copied);
  const reported = compileError(engine, probe);
  const index =
    reported === undefined ? undefined : new RegExp(`^no such function: ${PLACEHOLDER}(\\d+)$`).exec(reported);
  const call = index ? calls[Number(index[1])] : undefined;
  return call === undefined ? undefined : deniedFunction(call.name, sql, call.at);
}

/** Whether `name` takes as many arguments as the call between `open` and `close` passes. */
function arityFits(engine: SqlEngine, name: string, tokens: readonly SqlToken[], open: number, close: number): boolean {
  let count = close > open + 1 ? 1 : 0;
  let depth = 0;
  for (let k = open + 1; k < close; k++) {
    const text = tokens[k]?.text;
    if (text === "(") depth++;
    else if (text === ")") depth--;
    else if (text === "," && depth === 0) count++;
  }
  return compileError(engine, `SELECT ${name}(${Array(count).fill("NULL").join(", ")})`) === undefined;
}

function compileError(engine: SqlEngine, sql: string): string | undefined {
  try {
    engine.prepareHead(sql).statement?.free();
    return undefined;
  } catch (e) {
    return e instanceof EngineError ? e.sqliteMessage : String(e);
  }
}

/**
 * Ops that use an index cursor (P1) for its columns: a seek or comparison on its key, a loop in its
 * order. Not `Count`: `count(*)` counts the smallest index.
 */
const INDEX_READING_OPS = new Set([
  "Rewind",
  "Last",
  "Next",
  "Prev",
  "IdxRowid",
  "DeferredSeek",
  "SeekGE",
  "SeekGT",
  "SeekLE",
  "SeekLT",
  "SeekScan",
  "IdxGE",
  "IdxGT",
  "IdxLE",
  "IdxLT",
  "Found",
  "NotFound",
  "NoConflict",
  "IfNoHope",
]);

/**
 * The platform's refusal of a FROM item whose schema is written in another case than `main` or
 * `temp` (`MAIN.t1`, `"MAIN".t1`, `TEMP.sqlite_master`) and of which no column is read (`count(*)`,
 * `SELECT 1`, `rowid`, `EXISTS`): SQLite asks the authorizer about such an item with an empty column
 * name and the schema as written, which the platform's authorizer, comparing with `main` and `temp`
 * exactly, refuses (compared through Miniflare). An item one of whose columns is read is asked
 * about with the schema SQLite resolved, and passes. Whether a column is read is told from the
 * program: a `Column` of the item's table, or any use of one of its indexes but counting its rows
 * (a seek, or a loop in its order). A table named so once and once otherwise with its columns
 * read is not refused (docs/sql.md, known differences 6).
 */
export function checkSchemaSpelling(
  tokens: readonly SqlToken[],
  program: readonly ProgramOp[],
  catalog: SqlCatalog,
): void {
  for (let k = 1; k + 2 < tokens.length; k++) {
    const schema = tokens[k] as SqlToken;
    if (tokens[k + 1]?.text !== "." || tokens[k + 3]?.text === ".") continue;
    if (schema.kind !== "identifier" && schema.kind !== "string") continue;
    const lower = schema.value.toLowerCase();
    if ((lower !== "main" && lower !== "temp") || schema.value === lower) continue;
    const prev = tokens[k - 1] as SqlToken;
    const fromItem =
      isKeyword(prev, "JOIN") || prev.text === "," || (isKeyword(prev, "FROM") && !isKeyword(tokens[k - 2], "DELETE"));
    const name = tokens[k + 2];
    if (!fromItem || name === undefined) continue;
    const db = lower === "main" ? 0 : 1;
    const schemaTable = /^sqlite_(temp_)?(master|schema)$/i.test(name.value);
    const table = schemaTable ? "sqlite_schema" : catalog.byName(name.value)?.table;
    if (table === undefined || (!schemaTable && catalog.byName(name.value)?.type !== "table")) continue;
    if (!readsNoColumn(program, catalog, db, table)) continue;
    throw notAuthorized();
  }
}

/** Whether the program opens `table` (of database `db`) and reads none of its columns. */
function readsNoColumn(program: readonly ProgramOp[], catalog: SqlCatalog, db: number, table: string): boolean {
  // Cursor (per segment) → whether it is one of the table's indexes.
  const cursors = new Map<string, boolean>();
  for (const op of program) {
    if (op.opcode !== "OpenRead" && op.opcode !== "ReopenIdx") continue;
    if (op.p3 !== db || (op.p5 & OPFLAG_P2ISREG) !== 0) continue;
    const object = op.p2 === 1 ? undefined : db === 0 ? catalog.byRoot(op.p2) : undefined;
    const owner = op.p2 === 1 ? "sqlite_schema" : object?.table;
    if (owner !== undefined && owner.toLowerCase() === table.toLowerCase())
      cursors.set(`${op.segment}:${op.p1}`, object?.type === "index");
  }
  if (cursors.size === 0) return false;
  return !program.some((op) => {
    const index = cursors.get(`${op.segment}:${op.p1}`);
    return index !== undefined && (op.opcode === "Column" || (index && INDEX_READING_OPS.has(op.opcode)));
  });
}
