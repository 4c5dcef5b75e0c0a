/**
 * The rules language (wirefilter) for filter expressions: parser, type checker, printer, field and
 * function catalogues.
 *
 * @example
 * // parseExpression and printExpression are exported by the `actorstore/api` entry point.
 * const r = parseExpression('http.request.uri.path matches "^/admin" and not ip.src in { 10.0.0.0/8 }');
 * if (r.ok) printExpression(r.ast);
 *
 * @packageDocumentation
 */
export type {
  BytesFormat,
  BytesLiteral,
  CidrLiteral,
  CombiningExpression,
  ComparisonExpression,
  ComparisonOperation,
  Expression,
  FieldRef,
  FunctionArgument,
  FunctionCall,
  GroupExpression,
  IndexStep,
  IntLiteral,
  IntRangeLiteral,
  IpLiteral,
  IpRangeLiteral,
  Literal,
  LogicalOp,
  NotExpression,
  OrderingOp,
  PatternOp,
  Quantifier,
  QuantifierExpression,
  RegexLiteral,
  SetItem,
  Span,
  ValueExpression,
} from "./ast";
export { BYTES_FORMATS, LOGICAL_OPS, ORDERING_OPS, PATTERN_OPS, QUANTIFIERS } from "./ast";
export type { ExpressionError } from "./errors";
export type { FieldCatalogue, PrimitiveType, ValueType } from "./fields";
export { arrayOf, lookupField, mapOf, PRIMITIVE_TYPES, STANDARD_FIELDS, sameType, typeToString } from "./fields";
export type { ArgumentInfo, ArgumentKind, ExpectedType, FunctionDefinition } from "./functions";
export { ARGUMENT_KINDS, FUNCTIONS, lookupFunction } from "./functions";
export type { ParseOptions, ParseResult } from "./parser";
export { DEFAULT_MAX_NESTING_DEPTH, MAX_EXPRESSION_LENGTH_CHARS, parseExpression } from "./parser";
export { printExpression } from "./printer";
