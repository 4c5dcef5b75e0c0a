/**
 * Function calls the access decision (sql-access.ts) finds in a statement's text rather than in its
 * compiled program: calls written in definitions that run only later, and functions SQLite
 * compiles inline. Both are refused with the platform's texts.
 *
 * @packageDocumentation
 */
import { ALLOWED_SQL_FUNCTIONS, INLINE_UNKNOWN_FUNCTIONS, PLATFORM_DENIED_FUNCTIONS } from "./allowed-functions";
import { PRAGMA_ARGUMENT_GUARD } from "./pragma-arguments";
import type { SqlCatalog } from "./sql-catalog";
import { SQLITE_ERROR, sqliteError } from "./sql-errors";
import { byteOffset, isKeyword, matchingParen, type SqlToken, tokenize } from "./sql-tokenizer";

/**
 * Functions written in a definition (CHECK, DEFAULT, generated columns, index expressions, view
 * and trigger bodies) must be allowed too: the platform's authorizer sees them while the
 * definition is compiled, but they may not appear in this statement's program.
 */
export function checkWrittenFunctionCalls(
  sql: string,
  tokens: readonly SqlToken[],
  catalog: SqlCatalog,
  from: number,
): void {
  for (let k = from; k + 1 < tokens.length; k++) {
    const t = tokens[k] as SqlToken;
    if (isKeyword(t, "DEFAULT") && tokens[k + 1]?.text === "(") {
      k = matchingParen(tokens, k + 1);
      continue;
    }
    if (t.kind !== "identifier" || tokens[k + 1]?.text !== "(") continue;
    const prev = tokens[k - 1];
    if (prev !== undefined && (prev.text === "." || isKeyword(prev, "REFERENCES") || isKeyword(prev, "ON"))) continue;
    const name = t.value.toLowerCase();
    if (catalog.functionNames.has(name) && !isAllowedFunction(name)) {
      throw deniedFunction(name, sql, byteOffset(sql, t.start));
    }
  }
}

/** Keywords after which `name(` names a table, view, index, trigger or CTE, not a call. */
const NAME_BEFORE = new Set([
  "TABLE",
  "VIEW",
  "INDEX",
  "TRIGGER",
  "INTO",
  "ON",
  "REFERENCES",
  "EXISTS",
  "FROM",
  "JOIN",
  "UPDATE",
  "USING",
  "WITH",
  "RECURSIVE",
]);

/**
 * Calls of functions SQLite compiles inline and the platform does not have (`if`): the program
 * shows no trace of them, so they are found in the text, as calls (`if(`, also quoted) that are
 * not a name (`INSERT INTO "if"(a)`, a CTE `if(x) AS (…)`).
 */
export function checkInlineFunctionCalls(sql: string, tokens: readonly SqlToken[]): void {
  for (let k = 0; k + 1 < tokens.length; k++) {
    const t = tokens[k] as SqlToken;
    if (t.kind !== "identifier" || tokens[k + 1]?.text !== "(") continue;
    const name = t.value.toLowerCase();
    if (!INLINE_UNKNOWN_FUNCTIONS.has(name)) continue;
    const prev = tokens[k - 1];
    if (
      prev !== undefined &&
      (prev.text === "." || (prev.kind === "identifier" && !prev.quoted && NAME_BEFORE.has(prev.text.toUpperCase())))
    )
      continue;
    const after = matchingParen(tokens, k + 1);
    const next = tokens[after + 2];
    if (
      isKeyword(tokens[after + 1], "AS") &&
      (next?.text === "(" || isKeyword(next, "NOT") || isKeyword(next, "MATERIALIZED"))
    )
      continue;
    throw deniedFunction(t.value, sql, byteOffset(sql, t.start));
  }
}

/** The allow-list, plus the run-time check of pragma arguments (pragma-arguments.ts). */
export function isAllowedFunction(name: string): boolean {
  return ALLOWED_SQL_FUNCTIONS.has(name) || name === PRAGMA_ARGUMENT_GUARD;
}

export function deniedFunction(name: string, sql: string, offset?: number): Error {
  const at = offset ?? locateCall(sql, name);
  const opts = at === undefined ? {} : { offset: at };
  if (PLATFORM_DENIED_FUNCTIONS.has(name))
    return sqliteError(`not authorized to use function: ${name}`, SQLITE_ERROR, opts);
  // The platform's SQLite does not have sql.js's extension functions at all.
  return sqliteError(`no such function: ${name}`, SQLITE_ERROR, opts);
}

function locateCall(sql: string, name: string): number | undefined {
  const tokens = tokenize(sql);
  const k = tokens.findIndex(
    (t, j) => t.kind === "identifier" && t.value.toLowerCase() === name && tokens[j + 1]?.text === "(",
  );
  const t = tokens[k];
  return t === undefined ? undefined : byteOffset(sql, t.start);
}
