/**
 * The SQL functions user SQL may call, as on the platform (workerd's allow-list in
 * `util/sqlite.c++`, release v1.20260426). Everything else that exists is refused with
 * `not authorized to use function: <name>`.
 */

/** The date and time functions (all allowed; all read the current time). */
const TIME_FUNCTION_NAMES = [
  "date",
  "time",
  "datetime",
  "julianday",
  "unixepoch",
  "strftime",
  "timediff",
  "current_date",
  "current_time",
  "current_timestamp",
] as const;

/** Functions user SQL may call. Names are lower case, as SQLite reports them. */
export const ALLOWED_SQL_FUNCTIONS: ReadonlySet<string> = new Set([
  // core functions
  "abs",
  "changes",
  "char",
  "coalesce",
  "concat",
  "concat_ws",
  "format",
  "glob",
  "hex",
  "ifnull",
  "iif",
  "instr",
  "last_insert_rowid",
  "length",
  "like",
  "likelihood",
  "likely",
  "load_extension",
  "lower",
  "ltrim",
  "max_scalar",
  "min_scalar",
  "nullif",
  "octet_length",
  "printf",
  "quote",
  "random",
  "randomblob",
  "replace",
  "round",
  "rtrim",
  "sign",
  "soundex",
  "substr",
  "substring",
  "total_changes",
  "trim",
  "typeof",
  "unhex",
  "unicode",
  "unlikely",
  "upper",
  "zeroblob",
  // date and time
  ...TIME_FUNCTION_NAMES,
  // aggregates
  "avg",
  "count",
  "group_concat",
  "max",
  "min",
  "string_agg",
  "sum",
  "total",
  // window functions
  "row_number",
  "rank",
  "dense_rank",
  "percent_rank",
  "cume_dist",
  "ntile",
  "lag",
  "lead",
  "first_value",
  "last_value",
  "nth_value",
  // math
  "acos",
  "acosh",
  "asin",
  "asinh",
  "atan",
  "atan2",
  "atanh",
  "ceil",
  "cos",
  "cosh",
  "degrees",
  "exp",
  "floor",
  "ln",
  "log",
  "log2",
  "mod",
  "pi",
  "pow",
  "radians",
  "sin",
  "sinh",
  "sqrt",
  "tan",
  "tanh",
  "trunc",
  // JSON
  "json",
  "jsonb",
  "json_array",
  "jsonb_array",
  "json_array_length",
  "json_extract",
  "jsonb_extract",
  "->",
  "->>",
  "json_insert",
  "jsonb_insert",
  "json_object",
  "jsonb_object",
  "json_patch",
  "jsonb_patch",
  "json_remove",
  "jsonb_remove",
  "json_replace",
  "jsonb_replace",
  "json_set",
  "jsonb_set",
  "json_type",
  "json_valid",
  "json_quote",
  "json_group_array",
  "jsonb_group_array",
  "json_group_object",
  "jsonb_group_object",
  "json_each",
  "json_tree",
  // full-text search (fts5 auxiliary functions)
  "match",
  "highlight",
  "bm25",
  "snippet",
  // ALTER TABLE's internal helpers (SQLite calls them while rewriting the schema)
  "sqlite_rename_column",
  "sqlite_rename_table",
  "sqlite_rename_test",
  "sqlite_drop_column",
  "sqlite_rename_quotefix",
]);

/**
 * Functions that the platform's SQLite has but refuses (so the platform says "not authorized to use
 * function"). Other names that sql.js's build adds (its extension-functions: `median`, `padl`, …;
 * and what its newer SQLite has: `if`, `unistr`, `unistr_quote`) do not exist on the platform at
 * all (nor does `sqlite_offset` there), so for those we report SQLite's `no such function`.
 */
export const PLATFORM_DENIED_FUNCTIONS: ReadonlySet<string> = new Set([
  "sqlite_version",
  "sqlite_source_id",
  "sqlite_compileoption_get",
  "sqlite_compileoption_used",
  "sqlite_log",
  "log10",
  "power",
  "ceiling",
  "json_pretty",
  "json_error_position",
  "fts5",
  "fts5_source_id",
  "subtype",
]);

/** Functions whose value depends on the current time: statements using them run under `withNow`. */
export const TIME_FUNCTIONS: ReadonlySet<string> = new Set(TIME_FUNCTION_NAMES);

/**
 * Functions SQLite compiles inline, leaving no `Function` opcode in the program for the access
 * check to see, that the platform does not have: `if` (sql.js's SQLite's alias of `iif`).
 */
export const INLINE_UNKNOWN_FUNCTIONS: ReadonlySet<string> = new Set(["if"]);

/** Whether the platform's SQLite has function `name` (lower case), allowed or not. */
export function isPlatformFunction(name: string): boolean {
  return ALLOWED_SQL_FUNCTIONS.has(name) || PLATFORM_DENIED_FUNCTIONS.has(name);
}
