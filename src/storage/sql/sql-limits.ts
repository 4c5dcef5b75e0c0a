/**
 * The platform's SQLite limits (workerd `setupSecurity`) and their SQLite-style errors.
 *
 * sql.js exposes no `sqlite3_limit`, and its build keeps SQLite's large defaults, so each limit is
 * emulated before SQLite sees the statement (from the text, with {@link tokenize}) or after it
 * compiled (result columns, program size) or on the values that cross the API (bindings, rows).
 * docs/sql.md lists which checks are exact and which approximate.
 */

import { utf8Length } from "../../util/utf8";
import { SQLITE_ERROR, SQLITE_NOMEM, SQLITE_TOOBIG, sqliteError } from "./sql-errors";
import { byteOffset, isKeyword, type SqlToken } from "./sql-tokenizer";

/** The limits, with the platform's values in {@link DEFAULT_SQL_LIMITS}. */
export interface SqlLimits {
  /** Largest string or blob, in bytes (`SQLITE_LIMIT_LENGTH`). */
  readonly maxValueBytes: number;
  /** Longest SQL text, in UTF-8 bytes (`SQLITE_LIMIT_SQL_LENGTH`). */
  readonly maxSqlBytes: number;
  /** Most columns in a table or a result set (`SQLITE_LIMIT_COLUMN`). */
  readonly maxColumns: number;
  /** Deepest expression tree (`SQLITE_LIMIT_EXPR_DEPTH`). */
  readonly maxExpressionDepth: number;
  /** Most SELECTs in one compound SELECT (`SQLITE_LIMIT_COMPOUND_SELECT`). */
  readonly maxCompoundSelect: number;
  /** Most opcodes in one compiled program (`SQLITE_LIMIT_VDBE_OP`). */
  readonly maxProgramOps: number;
  /** Most arguments to one function call (`SQLITE_LIMIT_FUNCTION_ARG`). */
  readonly maxFunctionArgs: number;
  /** Longest LIKE or GLOB pattern, in bytes (`SQLITE_LIMIT_LIKE_PATTERN_LENGTH`). */
  readonly maxLikePatternBytes: number;
  /** Highest parameter number (`SQLITE_LIMIT_VARIABLE_NUMBER`). */
  readonly maxVariables: number;
  /** Deepest trigger recursion (`SQLITE_LIMIT_TRIGGER_DEPTH`); not enforceable on sql.js, see docs. */
  readonly maxTriggerDepth: number;
}

/** The platform's limits (workerd v1.20260426: 2,200,000-byte values). */
export const DEFAULT_SQL_LIMITS: SqlLimits = Object.freeze({
  maxValueBytes: 2_200_000,
  maxSqlBytes: 100_000,
  maxColumns: 100,
  maxExpressionDepth: 100,
  maxCompoundSelect: 5,
  maxProgramOps: 25_000,
  maxFunctionArgs: 127,
  maxLikePatternBytes: 50,
  maxVariables: 100,
  maxTriggerDepth: 10,
});

/** `statement too long` when the SQL text (everything SQLite is handed at once) is too long. */
export function checkSqlLength(sql: string, limits: SqlLimits): void {
  // A UTF-16 length within a third of the limit cannot exceed it in UTF-8.
  if (sql.length * 3 <= limits.maxSqlBytes) return;
  if (utf8Length(sql) > limits.maxSqlBytes) throw sqliteError("statement too long", SQLITE_TOOBIG);
}

/** `string or blob too big` for a value larger than the limit. */
export function checkValueSize(value: unknown, limits: SqlLimits): void {
  if (typeof value === "string") {
    if (value.length * 3 > limits.maxValueBytes && utf8Length(value) > limits.maxValueBytes) {
      throw sqliteError("string or blob too big", SQLITE_TOOBIG);
    }
  } else if (value instanceof Uint8Array && value.byteLength > limits.maxValueBytes) {
    throw sqliteError("string or blob too big", SQLITE_TOOBIG);
  }
}

/** What {@link checkStatementText} learned about a statement's parameters. */
export interface TextFacts {
  /** Parameter numbers (1-based) used as a LIKE/GLOB pattern, checked again at bind time. */
  readonly likeParameters: readonly number[];
}

/**
 * The text-level limits of one statement, in the order SQLite's parser meets them: parameter
 * numbering, compound SELECT terms, function arguments, expression depth and literal LIKE
 * patterns. `sql` is the statement's own text (offsets are relative to it, as on the platform).
 */
export function checkStatementText(
  sql: string,
  tokens: readonly SqlToken[],
  functionNames: ReadonlySet<string>,
  limits: SqlLimits,
): TextFacts {
  const parameterIndex = numberParameters(sql, tokens, limits);
  checkCompoundSelect(tokens, limits);
  checkFunctionArguments(sql, tokens, functionNames, limits);
  checkExpressionDepth(tokens, functionNames, limits);
  return { likeParameters: checkLikePatterns(tokens, parameterIndex, limits) };
}

/** Assigns parameter numbers as SQLite does and enforces the variable limit. */
function numberParameters(sql: string, tokens: readonly SqlToken[], limits: SqlLimits): Map<SqlToken, number> {
  const index = new Map<SqlToken, number>();
  const named = new Map<string, number>();
  let count = 0;
  for (const t of tokens) {
    if (t.kind !== "parameter") continue;
    let n: number;
    if (t.text === "?") n = ++count;
    else if (t.text.startsWith("?")) {
      n = Number(t.text.slice(1));
      if (!(n >= 1 && n <= limits.maxVariables)) {
        throw sqliteError(`variable number must be between ?1 and ?${limits.maxVariables}`, SQLITE_ERROR, {
          offset: byteOffset(sql, t.start),
        });
      }
      count = Math.max(count, n);
    } else {
      const seen = named.get(t.text);
      n = seen ?? ++count;
      named.set(t.text, n);
    }
    if (n > limits.maxVariables) {
      throw sqliteError("too many SQL variables", SQLITE_ERROR, { offset: byteOffset(sql, t.start) });
    }
    index.set(t, n);
  }
  return index;
}

const COMPOUND_OPERATORS = ["UNION", "INTERSECT", "EXCEPT"];

/** Counts SELECTs joined by UNION/INTERSECT/EXCEPT at each nesting level. */
function checkCompoundSelect(tokens: readonly SqlToken[], limits: SqlLimits): void {
  const stack = [0];
  for (const t of tokens) {
    if (t.text === "(") stack.push(0);
    else if (t.text === ")") stack.length > 1 && stack.pop();
    else if (COMPOUND_OPERATORS.some((op) => isKeyword(t, op))) {
      const terms = (stack[stack.length - 1] ?? 0) + 1;
      stack[stack.length - 1] = terms;
      if (terms + 1 > limits.maxCompoundSelect) throw sqliteError("too many terms in compound SELECT", SQLITE_ERROR);
    }
  }
}

/** `too many arguments on function X` for a call with more arguments than allowed. */
function checkFunctionArguments(
  sql: string,
  tokens: readonly SqlToken[],
  functionNames: ReadonlySet<string>,
  limits: SqlLimits,
): void {
  for (let i = 0; i + 1 < tokens.length; i++) {
    const t = tokens[i] as SqlToken;
    if (t.kind !== "identifier" || tokens[i + 1]?.text !== "(" || !functionNames.has(t.value.toLowerCase())) continue;
    let depth = 0;
    let args = 0;
    let empty = true;
    for (let j = i + 2; j < tokens.length; j++) {
      const u = tokens[j] as SqlToken;
      if (u.text === "(") depth++;
      else if (u.text === ")") {
        if (depth === 0) break;
        depth--;
      } else if (u.text === "," && depth === 0) args++;
      empty = false;
    }
    const count = empty ? 0 : args + 1;
    if (count > limits.maxFunctionArgs) {
      throw sqliteError(`too many arguments on function ${t.text}`, SQLITE_ERROR, { offset: byteOffset(sql, t.start) });
    }
  }
}

/** Binary operators by precedence class; a chain of one class builds a tree as deep as it is long. */
const OPERATOR_CLASSES: ReadonlyMap<string, number> = new Map([
  ["OR", 1],
  ["AND", 2],
  ["=", 3],
  ["==", 3],
  ["!=", 3],
  ["<>", 3],
  ["IS", 3],
  ["<", 4],
  ["<=", 4],
  [">", 4],
  [">=", 4],
  ["&", 5],
  ["|", 5],
  ["<<", 5],
  [">>", 5],
  ["+", 6],
  ["-", 6],
  ["*", 7],
  ["/", 7],
  ["%", 7],
  ["||", 8],
  ["->", 8],
  ["->>", 8],
]);

/** Keywords that start a new expression (the chains before them are finished). */
const CLAUSE_KEYWORDS: ReadonlySet<string> = new Set(
  "SELECT FROM WHERE ON SET WHEN THEN ELSE END CASE ORDER GROUP HAVING LIMIT OFFSET VALUES BY RETURNING USING JOIN".split(
    " ",
  ),
);

/**
 * A lower bound of SQLite's expression-tree height: the longest chain of same-precedence binary
 * operators at one level, plus one per enclosing function call or subquery. Mixed-precedence
 * expressions are deeper than this estimate, so the check never rejects what SQLite accepts, but
 * it can accept a few trees that SQLite refuses (documented in docs/sql.md).
 */
function checkExpressionDepth(
  tokens: readonly SqlToken[],
  functionNames: ReadonlySet<string>,
  limits: SqlLimits,
): void {
  interface Level {
    nesting: number;
    chains: Map<number, number>;
  }
  const stack: Level[] = [{ nesting: 0, chains: new Map() }];
  let max = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as SqlToken;
    const top = stack[stack.length - 1] as Level;
    if (t.text === "(") {
      const prev = tokens[i - 1];
      const next = tokens[i + 1];
      const isCall = prev?.kind === "identifier" && functionNames.has(prev.value.toLowerCase());
      const isSubquery = isKeyword(next, "SELECT") || isKeyword(next, "WITH") || isKeyword(next, "VALUES");
      stack.push({ nesting: top.nesting + (isCall || isSubquery ? 1 : 0), chains: new Map() });
    } else if (t.text === ")") {
      if (stack.length > 1) stack.pop();
    } else if (
      t.text === "," ||
      t.text === ";" ||
      (t.kind === "identifier" && CLAUSE_KEYWORDS.has(t.text.toUpperCase()))
    ) {
      top.chains.clear();
    } else {
      const cls = OPERATOR_CLASSES.get(t.kind === "identifier" ? t.text.toUpperCase() : t.text);
      if (cls === undefined || (t.kind === "identifier" && t.quoted)) continue;
      // An operator that binds looser closes the tighter chains before it: they are its operand.
      for (const c of top.chains.keys()) if (c > cls) top.chains.delete(c);
      const length = (top.chains.get(cls) ?? 0) + 1;
      top.chains.set(cls, length);
      max = Math.max(max, top.nesting + length + 1);
    }
    if (max > limits.maxExpressionDepth) {
      throw sqliteError(`Expression tree is too large (maximum depth ${limits.maxExpressionDepth})`, SQLITE_ERROR);
    }
  }
}

/** Literal LIKE/GLOB patterns longer than the limit; returns the parameter numbers used as patterns. */
function checkLikePatterns(
  tokens: readonly SqlToken[],
  parameterIndex: ReadonlyMap<SqlToken, number>,
  limits: SqlLimits,
): number[] {
  const params: number[] = [];
  for (let i = 0; i + 1 < tokens.length; i++) {
    const t = tokens[i] as SqlToken;
    if (!isKeyword(t, "LIKE") && !isKeyword(t, "GLOB")) continue;
    const pattern = tokens[i + 1] as SqlToken;
    if (pattern.kind === "string") checkLikePattern(pattern.value, limits);
    const n = parameterIndex.get(pattern);
    if (n !== undefined) params.push(n);
  }
  return params;
}

/** `LIKE or GLOB pattern too complex` for a pattern longer than the limit. */
export function checkLikePattern(pattern: unknown, limits: SqlLimits): void {
  if (typeof pattern === "string" && utf8Length(pattern) > limits.maxLikePatternBytes) {
    throw sqliteError("LIKE or GLOB pattern too complex", SQLITE_ERROR);
  }
}

/** `too many columns in result set` for a statement returning more columns than allowed. */
export function checkResultColumns(count: number, limits: SqlLimits): void {
  if (count > limits.maxColumns) throw sqliteError("too many columns in result set", SQLITE_ERROR);
}

/** `too many columns on T` for a table definition with more columns than allowed. */
export function checkTableColumns(table: string, count: number, limits: SqlLimits): void {
  if (count > limits.maxColumns) throw sqliteError(`too many columns on ${table}`, SQLITE_ERROR);
}

/** SQLite fails to grow a program past the opcode limit with an out-of-memory error. */
export function checkProgramSize(ops: number, limits: SqlLimits): void {
  if (ops > limits.maxProgramOps) throw sqliteError("out of memory", SQLITE_NOMEM);
}
