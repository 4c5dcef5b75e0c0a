/** UTF-8 helpers shared by key handling and the commit log's encoder. */

/**
 * The UTF-8 byte length of a string, without encoding it. A lone surrogate counts 3 bytes, as
 * `TextEncoder` writes it (U+FFFD).
 */
export function utf8Length(s: string): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** A lone (unpaired) surrogate: what UTF-8 cannot hold. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

/**
 * Whether a string has no lone surrogate. Uses `String.prototype.isWellFormed` (ES2024) where the
 * runtime has it, a regular expression elsewhere.
 */
export const isWellFormed: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === "function"
    ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

/** The string with every lone surrogate replaced by U+FFFD, as a UTF-8 encoder writes it. */
export function toWellFormed(s: string): string {
  return isWellFormed(s) ? s : s.replace(LONE_SURROGATES, "\uFFFD");
}
