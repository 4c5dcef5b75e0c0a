/**
 * The pragmas user SQL may run, with the arguments each accepts, as on the platform (workerd's
 * `ALLOWED_PRAGMAS`, release v1.20260426). Every other pragma is refused with
 * `not authorized: SQLITE_AUTH`.
 */
import { isAllowedName } from "./internal-names";

/** How a pragma's argument is checked. */
export const PRAGMA_SIGNATURES = [
  "none",
  "boolean",
  "object-name",
  "optional-object-name",
  "null-or-number",
  "null-number-or-object-name",
] as const;

/** One of {@link PRAGMA_SIGNATURES}. */
export type PragmaSignature = (typeof PRAGMA_SIGNATURES)[number];

/**
 * Allowed pragmas and their argument rules. The platform compares names case-sensitively (SQLite
 * hands the authorizer the name as written), so `PRAGMA Foreign_Keys` is refused there too.
 */
export const ALLOWED_PRAGMAS: ReadonlyMap<string, PragmaSignature> = new Map<string, PragmaSignature>([
  ["data_version", "none"],
  ["case_sensitive_like", "boolean"],
  ["foreign_keys", "boolean"],
  ["defer_foreign_keys", "boolean"],
  ["ignore_check_constraints", "boolean"],
  ["legacy_alter_table", "boolean"],
  ["recursive_triggers", "boolean"],
  ["reverse_unordered_selects", "boolean"],
  ["foreign_key_check", "optional-object-name"],
  ["foreign_key_list", "object-name"],
  ["index_info", "object-name"],
  ["index_list", "object-name"],
  ["index_xinfo", "object-name"],
  ["quick_check", "null-number-or-object-name"],
  ["optimize", "null-or-number"],
]);

/**
 * Whether `value` is one of the platform's boolean spellings. The platform compares only as many
 * characters as the spelling has (a prefix match: `"online"` passes as `on`), and so do we.
 */
export function isPragmaBoolean(value: string): boolean {
  let v = value;
  if (v.length >= 2 && (v[0] === "'" || v[0] === '"') && v[v.length - 1] === v[0]) v = v.slice(1, -1);
  const lower = v.toLowerCase();
  return ["true", "false", "yes", "no", "on", "off", "1", "0"].some((word) => lower.startsWith(word));
}

/**
 * The integer the platform's number parser (KJ's `tryParseAs`, which calls `strtoll`/`strtoull`)
 * reads from `value`, or `undefined` when it reads none. A value that starts with `0x` or `-0x` is
 * read in base 16 (`0x10002`, `-0x1`), any other in base 10 after optional leading white space and
 * an optional sign (`' -2'`); the whole value must be read (`'2 '` is refused).
 */
function parsePlatformInteger(value: string): bigint | undefined {
  const hex = /^(-?)0[xX]([0-9a-fA-F]+)$/.exec(value);
  if (hex !== null) {
    const magnitude = BigInt(`0x${hex[2] as string}`);
    return hex[1] === "-" ? -magnitude : magnitude;
  }
  if (/^-?0[xX]/.test(value)) return undefined;
  const decimal = /^[ \t\n\v\f\r]*([+-]?)([0-9]+)$/.exec(value);
  if (decimal === null) return undefined;
  const magnitude = BigInt(decimal[2] as string);
  return decimal[1] === "-" ? -magnitude : magnitude;
}

/**
 * Whether `value` parses as a 32-bit signed integer (the platform's `tryParseAs<int32_t>`): decimal
 * or hexadecimal, as {@link parsePlatformInteger} reads it.
 */
export function isInt32(value: string): boolean {
  const n = parsePlatformInteger(value);
  return n !== undefined && n >= -2147483648n && n <= 2147483647n;
}

/**
 * Whether `value` parses as an unsigned 32-bit integer (the platform's `tryParseAs<uint>`, which
 * also refuses a value that starts with `-`).
 */
export function isUint32(value: string): boolean {
  const n = parsePlatformInteger(value);
  return n !== undefined && !value.startsWith("-") && n >= 0n && n <= 4294967295n;
}

/**
 * Whether the platform allows `PRAGMA name` with `argument` (the first value after `=` or `(`,
 * unquoted; `undefined` when there is none). `table_list` is always allowed (it lists internal
 * tables too); `table_info`/`table_xinfo` need a name that is not internal.
 */
export function isPragmaAllowed(name: string, argument: string | undefined): boolean {
  if (name === "table_list") return true;
  if (name === "table_info" || name === "table_xinfo") return argument !== undefined && isAllowedName(argument);
  switch (ALLOWED_PRAGMAS.get(name)) {
    case "none":
      return argument === undefined;
    case "boolean":
      return argument === undefined || isPragmaBoolean(argument);
    case "object-name":
      return argument !== undefined && isAllowedName(argument);
    case "optional-object-name":
      return argument === undefined || isAllowedName(argument);
    case "null-or-number":
      return argument === undefined || isInt32(argument);
    case "null-number-or-object-name":
      return argument === undefined || isUint32(argument) || isAllowedName(argument);
    default:
      return false;
  }
}

/**
 * The `pragma_*` table-valued functions user SQL may read. SQLite runs `PRAGMA name(arg)` for each
 * of them, which the platform's authorizer judges like the statement (see {@link isPragmaAllowed}).
 * Only pragmas that read are listed (`optimize` runs ANALYZE; a boolean pragma's function takes no
 * argument, so it only reads). `quick_check` is also what SQLite itself runs for
 * `ALTER TABLE … ADD COLUMN … CHECK (…)`.
 */
export const PRAGMA_FUNCTIONS: ReadonlySet<string> = new Set([
  "foreign_keys",
  "defer_foreign_keys",
  "ignore_check_constraints",
  "legacy_alter_table",
  "recursive_triggers",
  "reverse_unordered_selects",
  "table_list",
  "table_info",
  "table_xinfo",
  "index_list",
  "index_info",
  "index_xinfo",
  "foreign_key_list",
  "foreign_key_check",
  "quick_check",
  "data_version",
]);
