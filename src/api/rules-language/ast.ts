/**
 * The syntax tree that {@link parseExpression} returns. Every node carries its `span` (UTF-16 offsets
 * into the parsed text, end exclusive) and, where it has a value, its type.
 *
 * Operators are stored in their English spelling whatever the source used (`==` is stored as `eq`,
 * `&&` as `and`), so two spellings of one expression give equal trees modulo spans.
 */
import type { ValueType } from "./fields";

/**
 * A half-open range of UTF-16 offsets into the parsed text.
 *
 * @example
 * const span: Span = { start: 0, end: 9 }; // "http.host" in `http.host eq "a"`
 */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** Logical operators, lowest precedence first (`or` < `xor` < `and`). */
export const LOGICAL_OPS = ["or", "xor", "and"] as const;

/**
 * A binary logical operator.
 *
 * @example
 * const op: LogicalOp = "and";
 */
export type LogicalOp = (typeof LOGICAL_OPS)[number];

/** Ordering operators, English spelling. */
export const ORDERING_OPS = ["eq", "ne", "ge", "le", "gt", "lt"] as const;

/**
 * An ordering operator (`eq`/`==`, `ne`/`!=`, `ge`/`>=`, `le`/`<=`, `gt`/`>`, `lt`/`<`).
 *
 * @example
 * const op: OrderingOp = "ge";
 */
export type OrderingOp = (typeof ORDERING_OPS)[number];

/** Operators that take a string pattern on a `Bytes` left-hand side. */
export const PATTERN_OPS = ["wildcard", "strict wildcard"] as const;

/**
 * `wildcard` (case-insensitive) or `strict wildcard` (case-sensitive).
 *
 * @example
 * const op: PatternOp = "strict wildcard";
 */
export type PatternOp = (typeof PATTERN_OPS)[number];

/** The quantifiers that reduce an `Array<Bool>`. */
export const QUANTIFIERS = ["any", "all"] as const;

/**
 * `any(...)` or `all(...)`.
 *
 * @example
 * const q: Quantifier = "any";
 */
export type Quantifier = (typeof QUANTIFIERS)[number];

/**
 * An integer literal (i64, so a `bigint`).
 *
 * @example
 * const lit: IntLiteral = { kind: "int", value: 443n, span: { start: 0, end: 3 } };
 */
export interface IntLiteral {
  readonly kind: "int";
  readonly value: bigint;
  readonly span: Span;
}

/**
 * An inclusive integer range `a..b`, only inside sets.
 *
 * @example
 * // `2082..2083`
 * const r: IntRangeLiteral = { kind: "int-range", start: 2082n, end: 2083n, span: { start: 0, end: 10 } };
 */
export interface IntRangeLiteral {
  readonly kind: "int-range";
  readonly start: bigint;
  readonly end: bigint;
  readonly span: Span;
}

/** How a bytes literal was written: `"quoted"`, `r#"raw"#`, or hex pairs `6f:72:67`. */
export const BYTES_FORMATS = ["quoted", "raw", "hex"] as const;

/**
 * The source format of a bytes literal.
 *
 * @example
 * const f: BytesFormat = "raw";
 */
export type BytesFormat = (typeof BYTES_FORMATS)[number];

/**
 * A string or byte-string literal. `bytes` is exact (escapes resolved, UTF-8 encoded); `text` is its
 * UTF-8 decoding, or `null` when the bytes are not valid UTF-8 (e.g. `"\xff"`).
 *
 * @example
 * // `"abc"`
 * const lit: BytesLiteral = { kind: "bytes", format: "quoted", hashes: 0, bytes: [97, 98, 99], text: "abc", span: { start: 0, end: 5 } };
 */
export interface BytesLiteral {
  readonly kind: "bytes";
  readonly format: BytesFormat;
  /** Number of `#` around a raw string; 0 otherwise. */
  readonly hashes: number;
  readonly bytes: readonly number[];
  readonly text: string | null;
  readonly span: Span;
}

/**
 * An IPv4 or IPv6 address, in canonical text form (`10.0.0.1`, `2001:db8::1`).
 *
 * @example
 * const lit: IpLiteral = { kind: "ip", family: 4, address: "127.0.0.1", span: { start: 0, end: 9 } };
 */
export interface IpLiteral {
  readonly kind: "ip";
  readonly family: 4 | 6;
  readonly address: string;
  readonly span: Span;
}

/**
 * An inclusive address range `a..b` (same family, ascending), only inside sets.
 *
 * @example
 * // `10.0.0.0..10.0.255.255`
 * const r: IpRangeLiteral = { kind: "ip-range", family: 4, start: "10.0.0.0", end: "10.0.255.255", span: { start: 0, end: 22 } };
 */
export interface IpRangeLiteral {
  readonly kind: "ip-range";
  readonly family: 4 | 6;
  readonly start: string;
  readonly end: string;
  readonly span: Span;
}

/**
 * A network `address/prefix` with a zero host part, only inside sets.
 *
 * @example
 * // `127.0.0.0/8`
 * const c: CidrLiteral = { kind: "cidr", family: 4, address: "127.0.0.0", prefix: 8, span: { start: 0, end: 11 } };
 */
export interface CidrLiteral {
  readonly kind: "cidr";
  readonly family: 4 | 6;
  readonly address: string;
  readonly prefix: number;
  readonly span: Span;
}

/**
 * A regular expression for `matches`/`~`. `pattern` is the regex as the engine sees it (for a quoted
 * literal, `\"` outside a character class has become `"`).
 *
 * @example
 * // `"^/api/"`
 * const re: RegexLiteral = { kind: "regex", format: "quoted", hashes: 0, pattern: "^/api/", span: { start: 0, end: 8 } };
 */
export interface RegexLiteral {
  readonly kind: "regex";
  readonly format: "quoted" | "raw";
  readonly hashes: number;
  readonly pattern: string;
  readonly span: Span;
}

/**
 * A literal usable as a function argument or a comparison's right-hand side.
 *
 * @example
 * const lit: Literal = { kind: "int", value: 1n, span: { start: 0, end: 1 } };
 */
export type Literal = IntLiteral | BytesLiteral | IpLiteral;

/**
 * One element of an `in { … }` set.
 *
 * @example
 * const item: SetItem = { kind: "int-range", start: 1n, end: 2n, span: { start: 0, end: 4 } };
 */
export type SetItem = IntLiteral | IntRangeLiteral | BytesLiteral | IpLiteral | IpRangeLiteral | CidrLiteral;

/**
 * One index step: `[0]`, `["key"]` or `[*]`.
 *
 * @example
 * const step: IndexStep = { kind: "map-key", key: "x-forwarded-for" };
 */
export type IndexStep =
  | { readonly kind: "array-index"; readonly index: number }
  | { readonly kind: "map-key"; readonly key: string }
  | { readonly kind: "each" };

/**
 * A reference to a catalogue field.
 *
 * @example
 * const f: FieldRef = { kind: "field", name: "http.host", type: "Bytes", span: { start: 0, end: 9 } };
 */
export interface FieldRef {
  readonly kind: "field";
  readonly name: string;
  readonly type: ValueType;
  readonly span: Span;
}

/**
 * A function call. `type` is the call's type, already wrapped in `Array<…>` when the first argument
 * maps over `[*]`.
 *
 * @example
 * // lower(http.host)
 * declare const call: FunctionCall;
 * call.name; // "lower"
 */
export interface FunctionCall {
  readonly kind: "call";
  readonly name: string;
  readonly args: readonly FunctionArgument[];
  readonly type: ValueType;
  readonly span: Span;
}

/**
 * A field or call with index steps: `http.request.headers["x"][0]`, `names[*]`. `type` is the type
 * after indexing (for `[*]`, the element type; the comparison then yields `Array<Bool>`).
 *
 * @example
 * declare const v: ValueExpression;
 * v.indexes; // [{ kind: "map-key", key: "x" }, { kind: "array-index", index: 0 }]
 */
export interface ValueExpression {
  readonly kind: "value";
  readonly target: FieldRef | FunctionCall;
  readonly indexes: readonly IndexStep[];
  readonly type: ValueType;
  readonly span: Span;
}

/**
 * A function argument: a value, a literal, or a logical sub-expression (`lower(x) == "a"`).
 *
 * @example
 * declare const arg: FunctionArgument;
 * if (arg.kind === "bytes") arg.text;
 */
export type FunctionArgument = ValueExpression | Literal | Expression;

/**
 * The operator and right-hand side of a comparison.
 *
 * @example
 * const rhs: ComparisonOperation = { op: "contains", rhs: { kind: "bytes", format: "quoted", hashes: 0, bytes: [97], text: "a", span: { start: 0, end: 3 } } };
 */
export type ComparisonOperation =
  | { readonly op: "is_true" }
  | { readonly op: OrderingOp; readonly rhs: Literal }
  | { readonly op: "bitwise_and"; readonly rhs: IntLiteral }
  | { readonly op: "contains"; readonly rhs: BytesLiteral }
  | { readonly op: "matches"; readonly rhs: RegexLiteral }
  | { readonly op: PatternOp; readonly rhs: BytesLiteral }
  | {
      readonly op: "in";
      readonly rhs: { readonly kind: "set"; readonly items: readonly SetItem[]; readonly span: Span };
    }
  | { readonly op: "in"; readonly rhs: { readonly kind: "list"; readonly name: string; readonly span: Span } };

/**
 * A comparison `lhs op rhs`, or a bare boolean value (`op: "is_true"`).
 *
 * @example
 * declare const c: ComparisonExpression;
 * if (c.op === "in" && c.rhs.kind === "set") c.rhs.items.length;
 */
export type ComparisonExpression = {
  readonly kind: "comparison";
  readonly lhs: ValueExpression;
  readonly type: ValueType;
  readonly span: Span;
} & ComparisonOperation;

/**
 * `a and b and c`: one node per run of the same operator, as wirefilter builds it.
 *
 * @example
 * declare const e: CombiningExpression;
 * e.items.length >= 2; // true
 */
export interface CombiningExpression {
  readonly kind: "combining";
  readonly op: LogicalOp;
  readonly items: readonly Expression[];
  readonly type: ValueType;
  readonly span: Span;
}

/**
 * `not x` / `!x`.
 *
 * @example
 * declare const e: NotExpression;
 * e.arg.kind;
 */
export interface NotExpression {
  readonly kind: "not";
  readonly arg: Expression;
  readonly type: ValueType;
  readonly span: Span;
}

/**
 * `( … )`, kept so that printing reproduces the grouping.
 *
 * @example
 * declare const e: GroupExpression;
 * e.expr.kind;
 */
export interface GroupExpression {
  readonly kind: "group";
  readonly expr: Expression;
  readonly type: ValueType;
  readonly span: Span;
}

/**
 * `any(…)` / `all(…)` over an `Array<Bool>`.
 *
 * @example
 * declare const e: QuantifierExpression;
 * e.quantifier; // "any"
 */
export interface QuantifierExpression {
  readonly kind: "quantifier";
  readonly quantifier: Quantifier;
  readonly arg: ValueExpression | Expression;
  readonly type: ValueType;
  readonly span: Span;
}

/**
 * A logical expression: what a filter is.
 *
 * @example
 * const r = parseExpression("ssl");
 * if (r.ok) r.ast.kind; // "comparison"
 */
export type Expression =
  | ComparisonExpression
  | CombiningExpression
  | NotExpression
  | GroupExpression
  | QuantifierExpression;
