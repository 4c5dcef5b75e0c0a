/**
 * SQLite parses a statement before anything acts on it: the platform's authorizer sees a pragma
 * only once its statement has parsed. So a PRAGMA the platform refuses but SQLite cannot parse
 * (`PRAGMA foreign_keys = x'01'`: a blob, NULL, a bound parameter or a parenthesized value is no
 * pragma value in SQLite's grammar) fails there with SQLite's parse error (`near "x'01'": syntax
 * error`), not with `not authorized`.
 *
 * The guard judges a PRAGMA before SQLite compiles it (a PRAGMA acts while compiling), so it cannot
 * compile the refused text to find out. It compiles a probe instead: the same text with the pragma
 * moved into a schema that does not exist. The probe parses when the text does and fails where
 * it fails (a schema name is added before the pragma's name, or put in place of the one given;
 * every other token is kept; see below for a keyword given as the schema), and a probe that
 * parses acts on nothing: SQLite resolves the schema first and stops with
 * `unknown database`. Only a parse error from the probe replaces the refusal.
 */
import { isKeyword, tokenizeFirstStatement } from "./sql-tokenizer";

/** The schema the probe names (none such can exist: ATTACH is refused). */
const PROBE_SCHEMA = "_cf_parse_probe";

/**
 * The probe for `sql` (see above), or `undefined` when its first statement is not a PRAGMA. A
 * PRAGMA without a name is its own probe: it cannot parse.
 */
export function pragmaParseProbe(sql: string): string | undefined {
  const tokens = tokenizeFirstStatement(sql);
  let at = 0;
  while (isKeyword(tokens[at], "EXPLAIN")) {
    at += isKeyword(tokens[at + 1], "QUERY") && isKeyword(tokens[at + 2], "PLAN") ? 3 : 1;
  }
  if (!isKeyword(tokens[at], "PRAGMA")) return undefined;
  const first = tokens[at + 1];
  // No name at all (`PRAGMA`, `PRAGMA 5`, `PRAGMA ?`): SQLite's grammar needs one, so the text
  // itself cannot parse and is its own probe.
  if (first === undefined || (first.kind !== "identifier" && first.kind !== "string")) return sql;
  if (tokens[at + 2]?.text !== ".") return `${sql.slice(0, first.start)}${PROBE_SCHEMA}.${sql.slice(first.start)}`;
  // A schema is given: replace it. (An unquoted keyword there, which SQLite would not parse as a
  // name, is the one case where the probe may parse further than the text: its error can then
  // name a later token; it can never make a refused pragma act.)
  return `${sql.slice(0, first.start)}${PROBE_SCHEMA}${sql.slice(first.end)}`;
}

/** Whether SQLite's message is a parse error (its tokenizer's or its parser's). */
export function isParseError(message: string): boolean {
  return (
    /^near "[\s\S]*": syntax error$/.test(message) ||
    /^unrecognized token: "[\s\S]*"$/.test(message) ||
    message === "incomplete input"
  );
}
