/**
 * Parse errors in wirefilter's format:
 *
 * ```
 * Filter parsing error (2:8):
 * num == true or
 *        ^^^^^^^ expected digit
 * ```
 */

/**
 * Where a parse error is and what it says.
 *
 * - `line` is 1-based; `column` is 1-based and, as in wirefilter, counts UTF-8 bytes from the start of
 *   the line (identical to characters for ASCII input).
 * - `span` is the offending text as UTF-16 offsets into the input (end exclusive); wirefilter's span
 *   may run past the line, `formatted` clips the marker to the line as wirefilter does.
 * - `message` is wirefilter's message (`unknown identifier`, `expected digit`, …).
 * - `formatted` is the full three-line text, with a trailing newline.
 *
 * @example
 * const r = parseExpression("xyz");
 * if (!r.ok) r.error.formatted; // "Filter parsing error (1:1):\nxyz\n^^^ unknown identifier\n"
 */
export interface ExpressionError {
  line: number;
  column: number;
  span: { start: number; end: number };
  message: string;
  formatted: string;
}

/**
 * Thrown inside the lexer and parser and caught by `parseExpression`, which turns it into an
 * {@link ExpressionError}; it never escapes the module's public functions. A throw keeps the recursive
 * descent readable; every public entry point catches it.
 *
 * @example
 * throw new ParseFailure("unknown identifier", 0, 3);
 */
export class ParseFailure {
  readonly message: string;
  readonly start: number;
  readonly end: number;
  constructor(message: string, start: number, end: number) {
    this.message = message;
    this.start = start;
    this.end = Math.max(start, end);
  }
}

function utf8Length(text: string): number {
  let bytes = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/**
 * Builds the public error for a failure at `[start, end)` of `text`, with wirefilter's line, column
 * and marker rules (the marker is at least one `^` and never runs past the end of the line).
 *
 * @example
 * formatError("xyz", "unknown identifier", 0, 3).formatted;
 * // "Filter parsing error (1:1):\nxyz\n^^^ unknown identifier\n"
 */
export function formatError(text: string, message: string, start: number, end: number): ExpressionError {
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  const newline = text.indexOf("\n", start);
  const lineEnd = newline === -1 ? text.length : newline;
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < start; i = text.indexOf("\n", i + 1)) line++;
  const lineText = text.slice(lineStart, lineEnd);
  const columnBytes = utf8Length(text.slice(lineStart, start));
  const markerBytes = utf8Length(text.slice(start, Math.min(end, lineEnd)));
  const formatted = `Filter parsing error (${line}:${columnBytes + 1}):\n${lineText}\n${" ".repeat(columnBytes)}${"^".repeat(Math.max(1, markerBytes))} ${message}\n`;
  return { line, column: columnBytes + 1, span: { start, end }, message, formatted };
}
