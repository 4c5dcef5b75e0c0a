// Placeholder until the rules-language parser lands: the signature below is the contract.
/** Where a parse error is and what it says. */
export interface ExpressionError {
  line: number;
  column: number;
  span: { start: number; end: number };
  message: string;
  formatted: string;
}
/** The result of {@link parseExpression}. */
export type ParseResult = { ok: true; ast: unknown } | { ok: false; error: ExpressionError };
/** Parses and type-checks a rules-language expression. */
export function parseExpression(text: string): ParseResult {
  return {
    ok: false,
    error: { line: 1, column: 0, span: { start: 0, end: text.length }, message: "not implemented", formatted: "" },
  };
}
