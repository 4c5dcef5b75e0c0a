/**
 * The pragmas user SQL may run, with the arguments each accepts, as on the platform (workerd's
 * `ALLOWED_PRAGMAS`, release v1.20260426). Every other pragma is refused with
 * `not authorized: SQLITE_AUTH`.
 */

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

/** Whether `value` parses as a 32-bit signed integer (the platform's `tryParseAs<int32_t>`). */
export function isInt32(value: string): boolean {
  if (!/^[+-]?[0-9]+$/.test(value)) return false;
  const n = Number(value);
  return n >= -2147483648 && n <= 2147483647;
}

/** Whether `value` parses as an unsigned integer (the platform's `tryParseAs<uint>`). */
export function isUint32(value: string): boolean {
  return /^[0-9]+$/.test(value) && Number(value) <= 4294967295;
}
