/**
 * Small defensive checks for unknown input. Internal to the migration models: callers may hand
 * us anything parsed from JSON, so nothing here assumes a shape.
 */

/**
 * Tells whether a value is a plain object (not null, not an array).
 *
 * @example
 * ```ts
 * isRecord({ a: 1 }); // true
 * isRecord([1]); // false
 * ```
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const HEX32 = /^[0-9a-f]{32}$/;

/**
 * Tells whether a value is a 32-character lower-case hex identifier (the rulesets id format).
 *
 * @example
 * ```ts
 * isHex32("efb7b8c949ac4650a09736fc376e9aee"); // true
 * ```
 */
export function isHex32(value: unknown): value is string {
  return typeof value === "string" && HEX32.test(value);
}

/**
 * Builds a closed-list membership test for an `as const` array (STYLE example 7).
 *
 * @example
 * ```ts
 * const isColour = oneOf(["red", "green"] as const);
 * isColour("red"); // true
 * ```
 */
export function oneOf<T extends string>(values: readonly T[]): (value: unknown) => value is T {
  return (value: unknown): value is T => typeof value === "string" && (values as readonly string[]).includes(value);
}

/**
 * Renders a value the way the rulesets API quotes it in "… is not a valid value for …" messages.
 *
 * @example
 * ```ts
 * quote("blok"); // "'blok'"
 * ```
 */
export function quote(value: unknown): string {
  if (typeof value === "string") return `'${value}'`;
  try {
    return `'${JSON.stringify(value) ?? String(value)}'`;
  } catch {
    // A cyclic object cannot be stringified; the message only needs a hint of what was sent.
    return "'[object]'";
  }
}

/**
 * Builds the rulesets API's "… is not a valid value for …" message.
 *
 * @example
 * ```ts
 * invalidValue("blok", "action", "it is not one of the allowed actions");
 * ```
 */
export function invalidValue(value: unknown, field: string, reason: string): string {
  return `${quote(value)} is not a valid value for ${field} because ${reason}`;
}

/**
 * UTF-8 length of a string, for limits stated in bytes (the 4 KB expression limit).
 *
 * @example
 * ```ts
 * utf8Length("é"); // 2
 * ```
 */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return bytes;
}
