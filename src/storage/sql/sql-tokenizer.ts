/**
 * A small SQLite tokenizer. sql.js has no authorizer hook and reports no error offsets, so the SQL
 * facade needs to see the statement text the way SQLite's lexer does: to find the statement kind,
 * pragma names and arguments, bound parameters, function calls and the byte offsets that the
 * platform appends to its error messages. It follows `tokenize.c` closely enough for that purpose
 * (identifiers, the four quoting styles, strings, blobs, numbers, parameters, comments); it is not
 * a parser and never decides whether SQL is valid: SQLite does.
 */

import { utf8Length } from "../../util/utf8";

/** The kinds of token the facade cares about. Whitespace and comments are dropped. */
export const SQL_TOKEN_KINDS = ["identifier", "string", "number", "blob", "parameter", "operator", "illegal"] as const;

/** A token kind. */
export type SqlTokenKind = (typeof SQL_TOKEN_KINDS)[number];

/** One token of SQL text. */
export interface SqlToken {
  /** What the token is. */
  readonly kind: SqlTokenKind;
  /** The token's exact source text (quotes included). */
  readonly text: string;
  /**
   * For identifiers: the name with quotes removed (`"a""b"` → `a"b`); for strings: the string's
   * value; otherwise the text.
   */
  readonly value: string;
  /** Whether an identifier was quoted (quoted identifiers are never keywords). */
  readonly quoted: boolean;
  /** Index of the first UTF-16 code unit in the source. */
  readonly start: number;
  /** Index after the last UTF-16 code unit in the source. */
  readonly end: number;
}

const isIdStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c > 127; // A-Z a-z _ and non-ASCII
const isIdChar = (c: number) => isIdStart(c) || (c >= 48 && c <= 57) || c === 36; // + digits and $
const isDigit = (c: number) => c >= 48 && c <= 57;
const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 12 || c === 13 || c === 11;

/**
 * Splits `sql` into tokens, dropping whitespace and comments.
 *
 * @example
 * ```ts
 * tokenize("SELECT a FROM t").map((t) => t.value); // ["SELECT", "a", "FROM", "t"]
 * ```
 */
export function tokenize(sql: string): SqlToken[] {
  return scan(sql, false);
}

/**
 * The tokens of the first statement of `sql`, as SQLite's `prepare` would compile it: empty
 * statements (`;`) before it are skipped, and the scan stops at the `;` that ends it, so a long
 * script is not tokenized to its end. (A `;` inside a trigger body ends this token list early;
 * callers use it only to judge statements that cannot contain one, such as PRAGMA.)
 */
export function tokenizeFirstStatement(sql: string): SqlToken[] {
  return scan(sql, true);
}

function scan(sql: string, firstStatementOnly: boolean): SqlToken[] {
  const tokens: SqlToken[] = [];
  const n = sql.length;
  let i = 0;
  const push = (kind: SqlTokenKind, start: number, end: number, value?: string, quoted = false) => {
    const text = sql.slice(start, end);
    tokens.push({ kind, text, value: value ?? text, quoted, start, end });
  };
  while (i < n) {
    const c = sql.charCodeAt(i);
    const start = i;
    if (isSpace(c)) {
      i++;
      continue;
    }
    // -- line comment
    if (c === 45 && sql.charCodeAt(i + 1) === 45) {
      while (i < n && sql.charCodeAt(i) !== 10) i++;
      continue;
    }
    // /* block comment */ (an unterminated one runs to the end, as in SQLite)
    if (c === 47 && sql.charCodeAt(i + 1) === 42) {
      const close = sql.indexOf("*/", i + 2);
      i = close < 0 ? n : close + 2;
      continue;
    }
    // 'string'
    if (c === 39) {
      const end = scanQuoted(sql, i, "'");
      push(end < 0 ? "illegal" : "string", start, end < 0 ? n : end, unquote(sql.slice(start, end < 0 ? n : end)));
      i = end < 0 ? n : end;
      continue;
    }
    // "identifier", `identifier`, [identifier]
    if (c === 34 || c === 96) {
      const q = c === 34 ? '"' : "`";
      const end = scanQuoted(sql, i, q);
      push(
        end < 0 ? "illegal" : "identifier",
        start,
        end < 0 ? n : end,
        unquote(sql.slice(start, end < 0 ? n : end)),
        true,
      );
      i = end < 0 ? n : end;
      continue;
    }
    if (c === 91) {
      const close = sql.indexOf("]", i + 1);
      const end = close < 0 ? n : close + 1;
      push(close < 0 ? "illegal" : "identifier", start, end, sql.slice(start + 1, end - 1), true);
      i = end;
      continue;
    }
    // x'blob'
    if ((c === 120 || c === 88) && sql.charCodeAt(i + 1) === 39) {
      const end = scanQuoted(sql, i + 1, "'");
      push(end < 0 ? "illegal" : "blob", start, end < 0 ? n : end);
      i = end < 0 ? n : end;
      continue;
    }
    if (isIdStart(c)) {
      while (i < n && isIdChar(sql.charCodeAt(i))) i++;
      push("identifier", start, i);
      continue;
    }
    if (isDigit(c) || (c === 46 && isDigit(sql.charCodeAt(i + 1)))) {
      i = scanNumber(sql, i);
      push("number", start, i);
      continue;
    }
    // ?NNN, :name, @name, $name (SQLite also allows $name::suffix(...) for TCL; not needed here)
    if (c === 63) {
      i++;
      while (i < n && isDigit(sql.charCodeAt(i))) i++;
      push("parameter", start, i);
      continue;
    }
    if (c === 58 || c === 64 || c === 36) {
      i++;
      while (i < n && isIdChar(sql.charCodeAt(i))) i++;
      push(i - start > 1 ? "parameter" : "illegal", start, i);
      continue;
    }
    i = scanOperator(sql, i);
    if (firstStatementOnly && c === 59 /* ; */) {
      if (tokens.length === 0) continue;
      push("operator", start, i);
      break;
    }
    push(i === start + 1 && "();,+-*/%<>=&|~.!".indexOf(sql[start] ?? "") < 0 ? "illegal" : "operator", start, i);
  }
  return tokens;
}

/** Returns the index after the closing quote, or -1 when unterminated. Doubled quotes escape. */
function scanQuoted(sql: string, open: number, quote: string): number {
  let i = open + 1;
  for (;;) {
    const close = sql.indexOf(quote, i);
    if (close < 0) return -1;
    if (sql[close + 1] === quote) {
      i = close + 2;
      continue;
    }
    return close + 1;
  }
}

function unquote(text: string): string {
  const q = text[0] ?? "";
  if (text.length < 2 || text[text.length - 1] !== q) return text;
  return text
    .slice(1, -1)
    .split(q + q)
    .join(q);
}

function scanNumber(sql: string, i: number): number {
  const n = sql.length;
  if (sql[i] === "0" && (sql[i + 1] === "x" || sql[i + 1] === "X")) {
    i += 2;
    while (i < n && /[0-9a-fA-F_]/.test(sql[i] ?? "")) i++;
    return i;
  }
  while (i < n && /[0-9_]/.test(sql[i] ?? "")) i++;
  if (sql[i] === ".") {
    i++;
    while (i < n && /[0-9_]/.test(sql[i] ?? "")) i++;
  }
  if ((sql[i] === "e" || sql[i] === "E") && /[0-9+-]/.test(sql[i + 1] ?? "")) {
    i += 2;
    while (i < n && isDigit(sql.charCodeAt(i))) i++;
  }
  // SQLite treats "12abc" as one (illegal) token; keep trailing identifier characters with it.
  while (i < n && isIdChar(sql.charCodeAt(i))) i++;
  return i;
}

const TWO_CHAR_OPERATORS = new Set(["<=", ">=", "<>", "!=", "==", "<<", ">>", "||", "->"]);

function scanOperator(sql: string, i: number): number {
  if (sql.startsWith("->>", i)) return i + 3;
  if (TWO_CHAR_OPERATORS.has(sql.slice(i, i + 2))) return i + 2;
  return i + 1;
}

/** Whether `token` is the bare keyword `word` (case-insensitive; quoted identifiers never are). */
export function isKeyword(token: SqlToken | undefined, word: string): boolean {
  return token !== undefined && token.kind === "identifier" && !token.quoted && token.text.toUpperCase() === word;
}

/** The index of the `)` closing the `(` at `open` (`tokens.length` when it is never closed). */
export function matchingParen(tokens: readonly SqlToken[], open: number): number {
  let depth = 0;
  for (let k = open; k < tokens.length; k++) {
    if (tokens[k]?.text === "(") depth++;
    else if (tokens[k]?.text === ")" && --depth === 0) return k;
  }
  return tokens.length;
}

/**
 * The byte offset of UTF-16 index `index` in `text`: SQLite reports error offsets in bytes of the
 * UTF-8 statement text.
 */
export function byteOffset(text: string, index: number): number {
  return utf8Length(text.slice(0, index));
}
