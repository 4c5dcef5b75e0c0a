/**
 * Recursive-descent parser and type checker for filter expressions, following wirefilter's grammar,
 * precedence, type rules and error positions (`engine/src/ast/*.rs`), so that an expression accepted
 * or refused here is accepted or refused by Cloudflare with the same message.
 */
import type {
  ComparisonExpression,
  ComparisonOperation,
  Expression,
  FieldRef,
  FunctionArgument,
  FunctionCall,
  IndexStep,
  Literal,
  LogicalOp,
  OrderingOp,
  Quantifier,
  SetItem,
  ValueExpression,
} from "./ast";
import { type ExpressionError, formatError, ParseFailure } from "./errors";
import {
  arrayOf,
  elementType,
  type FieldCatalogue,
  STANDARD_FIELDS,
  sameType,
  typeToString,
  type ValueType,
} from "./fields";
import { type ArgumentInfo, lookupFunction, SINGLE_USE_FUNCTIONS, typeMismatch } from "./functions";
import {
  at,
  checkWildcard,
  expectLiteral,
  isHexDigit,
  isIdentChar,
  type Scanned,
  scanBytes,
  scanIdentifier,
  scanInt,
  scanIntRange,
  scanIp,
  scanIpSetItem,
  scanQuotedOrRaw,
  scanRegex,
  skipSpace,
} from "./lexer";

/** The longest expression Cloudflare accepts, in characters (developers.cloudflare.com, expressions). */
export const MAX_EXPRESSION_LENGTH_CHARS = 4096;

/** wirefilter's default `ParserSettings.max_nesting_depth`. */
export const DEFAULT_MAX_NESTING_DEPTH = 128;

/**
 * Options for {@link parseExpression}.
 *
 * @example
 * parseExpression("num == 1", { fields: new Map([["num", "Int"]]) });
 */
export interface ParseOptions {
  /** The field scheme; the standard Cloudflare catalogue by default. */
  fields?: FieldCatalogue;
  /** How deep parentheses, `not`, quantifiers and calls may nest; 128 by default. */
  maxNestingDepth?: number;
  /** The length limit in characters; 4,096 by default. */
  maxLengthChars?: number;
  /** Field types that accept `in $list`; `Ip`, `Int` and `Bytes` by default (Cloudflare's list kinds). */
  listTypes?: readonly ("Ip" | "Int" | "Bytes")[];
}

/**
 * The result of {@link parseExpression}: the tree, or the error in wirefilter's format.
 *
 * @example
 * const r: ParseResult = parseExpression("ssl");
 */
export type ParseResult = { ok: true; ast: Expression } | { ok: false; error: ExpressionError };

const LOGICAL_SPELLINGS: readonly (readonly [string, LogicalOp])[] = [
  ["or", "or"],
  ["||", "or"],
  ["xor", "xor"],
  ["^^", "xor"],
  ["and", "and"],
  ["&&", "and"],
];

const PRECEDENCE: Record<LogicalOp, number> = { or: 0, xor: 1, and: 2 };

type ComparisonOpToken = "in" | OrderingOp | "bitwise_and" | "contains" | "matches" | "wildcard" | "strict wildcard";

// The order is wirefilter's: `in`, then ordering, then integer, then bytes operators; within each,
// the first spelling that is a prefix of the input wins (so `>=` is tried before `>`).
const COMPARISON_SPELLINGS: readonly (readonly [string, ComparisonOpToken])[] = [
  ["in", "in"],
  ["eq", "eq"],
  ["==", "eq"],
  ["ne", "ne"],
  ["!=", "ne"],
  ["ge", "ge"],
  [">=", "ge"],
  ["le", "le"],
  ["<=", "le"],
  ["gt", "gt"],
  [">", "gt"],
  ["lt", "lt"],
  ["<", "lt"],
  ["&", "bitwise_and"],
  ["bitwise_and", "bitwise_and"],
  ["contains", "contains"],
  ["~", "matches"],
  ["matches", "matches"],
  ["wildcard", "wildcard"],
  ["strict wildcard", "strict wildcard"],
];

const BOOL_ARRAY = arrayOf("Bool");

function precedence(op: LogicalOp | null): number {
  return op === null ? -1 : PRECEDENCE[op];
}

function isArray(type: ValueType): boolean {
  return typeof type !== "string" && type.kind === "Array";
}

function literalType(literal: Literal): ValueType {
  return literal.kind === "int" ? "Int" : literal.kind === "ip" ? "Ip" : "Bytes";
}

function isLiteral(arg: FunctionArgument): arg is Literal {
  return arg.kind === "int" || arg.kind === "bytes" || arg.kind === "ip";
}

function argumentType(arg: FunctionArgument): ValueType {
  return isLiteral(arg) ? literalType(arg) : arg.type;
}

function mapEachCount(arg: FunctionArgument): number {
  return arg.kind === "value" ? arg.indexes.filter((i) => i.kind === "each").length : 0;
}

function indexDebug(step: IndexStep): string {
  if (step.kind === "each") return "MapEach";
  if (step.kind === "array-index") return `ArrayIndex(${step.index})`;
  return `MapKey(${JSON.stringify(step.key)})`;
}

// Rust's `str::trim` removes Unicode White_Space (tabs included) around the whole expression,
// although tabs are not skipped between tokens.
const TRIM = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/;

interface Lookahead {
  readonly op: LogicalOp | null;
  readonly pos: number;
}

class Parser {
  readonly #src: string;
  readonly #fields: FieldCatalogue;
  readonly #maxDepth: number;
  readonly #listTypes: readonly ValueType[];
  #depth = 0;
  #singleUseSeen = new Set<string>();
  #singleUseActive = 0;

  constructor(src: string, options: ParseOptions) {
    this.#src = src;
    this.#fields = options.fields ?? STANDARD_FIELDS;
    this.#maxDepth = options.maxNestingDepth ?? DEFAULT_MAX_NESTING_DEPTH;
    this.#listTypes = options.listTypes ?? ["Ip", "Int", "Bytes"];
  }

  #fail(message: string, start: number, end: number = this.#src.length): never {
    throw new ParseFailure(message, start, end);
  }

  #nested<T>(spanStart: number, body: () => T): T {
    if (this.#depth >= this.#maxDepth) {
      this.#fail(`maximum nesting depth exceeded (limit: ${this.#maxDepth})`, spanStart);
    }
    this.#depth++;
    try {
      return body();
    } finally {
      this.#depth--;
    }
  }

  /** The whole filter: a logical expression of type `Bool` with nothing after it. */
  parseFilter(start: number): Expression {
    const [ast, end] = this.logical(start);
    if (ast.type !== "Bool") this.#fail(typeMismatch(["Bool"], ast.type), end);
    if (end !== this.#src.length) this.#fail("unrecognised input", end);
    return ast;
  }

  logical(pos: number): Scanned<Expression> {
    const [lhs, end] = this.#simple(pos);
    return this.#more(lhs, null, this.#combiningOp(end));
  }

  #combiningOp(pos: number): Lookahead {
    const q = skipSpace(this.#src, pos);
    for (const [text, op] of LOGICAL_SPELLINGS) {
      if (at(this.#src, q, text)) return { op, pos: skipSpace(this.#src, q + text.length) };
    }
    return { op: null, pos };
  }

  // Precedence climbing exactly as wirefilter's `lex_more_with_precedence`, including where a type
  // mismatch is reported (just after the right-hand operand and any operator that follows it).
  #more(lhs: Expression, minOp: LogicalOp | null, lookahead: Lookahead): Scanned<Expression> {
    let la = lookahead;
    // The items array of the combining expression this call is building, owned by this call.
    let owned: Expression[] | undefined;
    while (la.op !== null) {
      const op: LogicalOp = la.op;
      let rhs = this.#simple(la.pos);
      for (;;) {
        la = this.#combiningOp(rhs[1]);
        if (precedence(la.op) <= precedence(op)) break;
        rhs = this.#more(rhs[0], la.op, la);
      }
      const [right, rightEnd] = rhs;
      const bothBool = lhs.type === "Bool" && right.type === "Bool";
      if (!bothBool && !(isArray(lhs.type) && isArray(right.type))) {
        this.#fail(typeMismatch([lhs.type], right.type), la.pos);
      }
      const span = { start: lhs.span.start, end: right.span.end };
      if (lhs.kind === "combining" && lhs.op === op) {
        // Appending to the array this call built keeps a long `a or b or …` chain linear; copying
        // the items on every operand made it quadratic.
        if (owned !== lhs.items) owned = [...lhs.items];
        owned.push(right);
        lhs = { ...lhs, items: owned, span };
      } else {
        owned = [lhs, right];
        lhs = { kind: "combining", op, items: owned, type: lhs.type, span };
      }
      if (precedence(la.op) < precedence(minOp)) la = { op: null, pos: rightEnd };
    }
    return [lhs, la.pos];
  }

  #quantifierAt(pos: number): { quantifier: Quantifier; paren: number } | null {
    for (const quantifier of ["any", "all"] as const) {
      if (at(this.#src, pos, quantifier)) {
        const paren = skipSpace(this.#src, pos + quantifier.length);
        if (at(this.#src, paren, "(")) return { quantifier, paren };
      }
    }
    return null;
  }

  #unaryAt(pos: number): number {
    if (at(this.#src, pos, "not")) return 3;
    if (at(this.#src, pos, "!")) return 1;
    return 0;
  }

  #simple(pos: number): Scanned<Expression> {
    const src = this.#src;
    if (at(src, pos, "(")) {
      return this.#nested(pos, () => {
        const [expr, end] = this.logical(skipSpace(src, pos + 1));
        const close = expectLiteral(src, skipSpace(src, end), ")");
        return [{ kind: "group", expr, type: expr.type, span: { start: pos, end: close } }, close];
      });
    }
    const unary = this.#unaryAt(pos);
    if (unary > 0) {
      return this.#nested(pos, () => {
        const [arg, end] = this.#simple(skipSpace(src, pos + unary));
        return [{ kind: "not", arg, type: arg.type, span: { start: pos, end } }, end];
      });
    }
    const q = this.#quantifierAt(pos);
    if (q) {
      return this.#nested(q.paren, () => {
        const argStart = skipSpace(src, q.paren + 1);
        const [arg, argEnd] = this.#functionArgument(argStart);
        const argType = argumentType(arg);
        if (isLiteral(arg) || !sameType(argType, BOOL_ARRAY)) {
          this.#fail(typeMismatch([BOOL_ARRAY], argType), argStart, argEnd);
        }
        const close = expectLiteral(src, skipSpace(src, argEnd), ")");
        const node: Expression = {
          kind: "quantifier",
          quantifier: q.quantifier,
          arg: arg as ValueExpression | Expression,
          type: "Bool",
          span: { start: pos, end: close },
        };
        return [node, close];
      });
    }
    const [lhs, end] = this.#value(pos);
    return this.#comparison(end, lhs);
  }

  #comparisonOp(pos: number): Scanned<ComparisonOpToken> | null {
    for (const [text, op] of COMPARISON_SPELLINGS) {
      if (at(this.#src, pos, text)) return [op, pos + text.length];
    }
    return null;
  }

  #comparison(pos: number, lhs: ValueExpression): Scanned<ComparisonExpression> {
    const src = this.#src;
    const type = lhs.type;
    const mapped = mapEachCount(lhs) > 0;
    const make = (
      operation: ComparisonOperation,
      end: number,
      isTrueType?: ValueType,
    ): Scanned<ComparisonExpression> => {
      const resultType = mapped ? BOOL_ARRAY : (isTrueType ?? "Bool");
      return [{ kind: "comparison", lhs, ...operation, type: resultType, span: { start: lhs.span.start, end } }, end];
    };
    if (type === "Bool") return make({ op: "is_true" }, pos, type);
    if (elementType(type) === "Bool") {
      // A mapped Array<Bool> would yield Array<Array<Bool>>, which nothing can consume.
      if (mapped) this.#fail(`cannot perform this operation on type ${typeToString(arrayOf(BOOL_ARRAY))}`, pos, pos);
      return make({ op: "is_true" }, pos, type);
    }
    const opStart = skipSpace(src, pos);
    const scanned = this.#comparisonOp(opStart);
    if (!scanned) this.#fail("expected ComparisonOp", opStart);
    const [op, afterOp] = scanned;
    const rhsStart = skipSpace(src, afterOp);
    const unsupported = (): never =>
      this.#fail(`cannot perform this operation on type ${typeToString(type)}`, opStart, afterOp);
    if (type !== "Ip" && type !== "Bytes" && type !== "Int") return unsupported();
    switch (op) {
      case "in": {
        if (at(src, rhsStart, "$")) return this.#list(rhsStart, opStart, type, make);
        const [set, end] = this.#set(rhsStart, type);
        return make({ op: "in", rhs: set }, end);
      }
      case "eq":
      case "ne":
      case "ge":
      case "le":
      case "gt":
      case "lt": {
        const [rhs, end] =
          type === "Int" ? scanInt(src, rhsStart) : type === "Ip" ? scanIp(src, rhsStart) : scanBytes(src, rhsStart);
        return make({ op, rhs }, end);
      }
      case "bitwise_and": {
        if (type !== "Int") return unsupported();
        const [rhs, end] = scanInt(src, rhsStart);
        return make({ op, rhs }, end);
      }
      case "contains": {
        if (type !== "Bytes") return unsupported();
        const [rhs, end] = scanBytes(src, rhsStart);
        return make({ op, rhs }, end);
      }
      case "matches": {
        if (type !== "Bytes") return unsupported();
        const [rhs, end] = scanRegex(src, rhsStart);
        return make({ op, rhs }, end);
      }
      case "wildcard":
      case "strict wildcard": {
        if (type !== "Bytes") return unsupported();
        const [rhs, end] = scanQuotedOrRaw(src, rhsStart);
        const problem = checkWildcard(rhs.bytes);
        if (problem) this.#fail(problem, rhsStart);
        return make({ op, rhs }, end);
      }
    }
  }

  #list(
    pos: number,
    opStart: number,
    type: ValueType,
    make: (operation: ComparisonOperation, end: number) => Scanned<ComparisonExpression>,
  ): Scanned<ComparisonExpression> {
    const src = this.#src;
    const nameStart = pos + 1;
    let end = nameStart;
    while (end < src.length && /[a-z0-9_.]/.test(src[end] ?? "")) end++;
    if (end === nameStart) {
      const cp = src.codePointAt(nameStart);
      const bad = cp === undefined ? "" : String.fromCodePoint(cp);
      this.#fail(`invalid list name ${JSON.stringify(bad)}`, nameStart);
    }
    if (!this.#listTypes.some((t) => t === type)) {
      this.#fail(`cannot perform this operation on type ${typeToString(type)}`, opStart, end);
    }
    return make({ op: "in", rhs: { kind: "list", name: src.slice(nameStart, end), span: { start: pos, end } } }, end);
  }

  #set(
    pos: number,
    type: "Ip" | "Bytes" | "Int",
  ): Scanned<{ kind: "set"; items: SetItem[]; span: { start: number; end: number } }> {
    const src = this.#src;
    let p = expectLiteral(src, pos, "{");
    const items: SetItem[] = [];
    for (;;) {
      p = skipSpace(src, p);
      if (at(src, p, "}")) {
        p++;
        return [{ kind: "set", items, span: { start: pos, end: p } }, p];
      }
      const [item, end] =
        type === "Int" ? scanIntRange(src, p) : type === "Ip" ? scanIpSetItem(src, p) : scanBytes(src, p);
      items.push(item);
      p = end;
    }
  }

  #value(pos: number): Scanned<ValueExpression> {
    const src = this.#src;
    const [name, nameEnd] = scanIdentifier(src, pos);
    let target: FieldRef | FunctionCall;
    let p: number;
    const fieldType = this.#fields.get(name);
    if (fieldType !== undefined) {
      target = { kind: "field", name, type: fieldType, span: { start: pos, end: nameEnd } };
      p = nameEnd;
    } else if (lookupFunction(name)) {
      [target, p] = this.#nested(skipSpace(src, nameEnd), () => this.#call(name, pos, nameEnd));
    } else {
      this.#fail("unknown identifier", pos, nameEnd);
    }
    let type = target.type;
    const indexes: IndexStep[] = [];
    while (at(src, p, "[")) {
      const bracket = p;
      const [step, stepEnd] = this.#indexStep(skipSpace(src, p + 1));
      const close = expectLiteral(src, skipSpace(src, stepEnd), "]");
      const inner = elementType(type);
      const fits =
        typeof type !== "string" &&
        inner !== undefined &&
        (step.kind === "each" || (step.kind === "array-index") === (type.kind === "Array"));
      if (!fits || inner === undefined) {
        this.#fail(`cannot access index ${indexDebug(step)} for type ${typeToString(type)}`, bracket, close);
      }
      type = inner;
      indexes.push(step);
      p = close;
    }
    return [{ kind: "value", target, indexes, type, span: { start: pos, end: p } }, p];
  }

  #indexStep(pos: number): Scanned<IndexStep> {
    const src = this.#src;
    if (at(src, pos, "*")) return [{ kind: "each" }, pos + 1];
    if (at(src, pos, '"')) {
      const [key, end] = scanBytes(src, pos);
      if (key.text === null) this.#fail('expected literal "expected utf8 string"', pos);
      return [{ kind: "map-key", key: key.text }, end];
    }
    let scanned: Scanned<{ value: bigint }>;
    try {
      scanned = scanInt(src, pos);
    } catch (e) {
      if (!(e instanceof ParseFailure)) throw e;
      this.#fail('expected literal "expected quoted utf8 string or positive integer"', pos);
    }
    const [{ value }, end] = scanned;
    if (value < 0n || value > 0xffffffffn) this.#fail('expected literal "expected positive integer as index"', pos);
    return [{ kind: "array-index", index: Number(value) }, end];
  }

  #call(name: string, nameStart: number, nameEnd: number): Scanned<FunctionCall> {
    const src = this.#src;
    const definition = lookupFunction(name);
    if (!definition) this.#fail("unknown identifier", nameStart, nameEnd);
    const singleUse = SINGLE_USE_FUNCTIONS.includes(name);
    if (singleUse) {
      if (this.#singleUseActive > 0) {
        this.#fail(`${SINGLE_USE_FUNCTIONS.join(" and ")} cannot be nested in one another`, nameStart, nameEnd);
      }
      if (this.#singleUseSeen.has(name)) {
        this.#fail(`${name} can be used only once per expression`, nameStart, nameEnd);
      }
      this.#singleUseSeen.add(name);
      this.#singleUseActive++;
    }
    try {
      let p = skipSpace(src, expectLiteral(src, skipSpace(src, nameEnd), "("));
      const args: FunctionArgument[] = [];
      const infos: ArgumentInfo[] = [];
      while (p < src.length && src[p] !== ")") {
        if (args.length !== 0) p = expectLiteral(src, p, ",");
        p = skipSpace(src, p);
        const [arg, argEnd] = this.#functionArgument(p);
        const index = args.length;
        if (mapEachCount(arg) > 0 && index !== 0) this.#fail("invalid use of map each access operator", p, argEnd);
        if (definition.maxArgs !== null && index >= definition.maxArgs) this.#fail("invalid number of arguments", p);
        const info: ArgumentInfo = isLiteral(arg)
          ? { kind: "Literal", type: literalType(arg), literal: arg }
          : { kind: "Field", type: arg.type };
        const problem = definition.checkArgument(index, info, infos);
        if (problem !== null) this.#fail(problem, p, argEnd);
        args.push(arg);
        infos.push(info);
        p = skipSpace(src, argEnd);
      }
      if (args.length < definition.minArgs) this.#fail("invalid number of arguments", p);
      const end = expectLiteral(src, p, ")");
      const returned = definition.returnType(infos);
      const first = args[0];
      const type = first !== undefined && mapEachCount(first) > 0 ? arrayOf(returned) : returned;
      return [{ kind: "call", name, args, type, span: { start: nameStart, end } }, end];
    } finally {
      if (singleUse) this.#singleUseActive--;
    }
  }

  // wirefilter's grammar is ambiguous inside calls (`0a:...` may be bytes or a field), so, like it,
  // look at the first three characters to pick the likely reading and only then fall back.
  #functionArgument(pos: number): Scanned<FunctionArgument> {
    const src = this.#src;
    const c = src[pos];
    const c2 = src[pos + 1];
    const c3 = src[pos + 2];
    const isField = (ch: string | undefined) => isIdentChar(ch) && (ch === "_" || !isHexDigit(ch));
    if (c !== undefined) {
      if (c === '"' || (c === "r" && (c2 === "#" || c2 === '"'))) return scanBytes(src, pos);
      if (c === "(" || this.#unaryAt(pos) > 0 || this.#quantifierAt(pos)) return this.logical(pos);
      if (isField(c) || (isIdentChar(c) && isField(c2)) || (isIdentChar(c) && isIdentChar(c2) && isField(c3))) {
        return this.#valueOrComparison(pos);
      }
    }
    const saved = { depth: this.#depth, seen: new Set(this.#singleUseSeen), active: this.#singleUseActive };
    try {
      const [value, end] = this.#value(pos);
      return this.#maybeComparison(value, end);
    } catch (e) {
      if (!(e instanceof ParseFailure)) throw e;
      this.#depth = saved.depth;
      this.#singleUseSeen = saved.seen;
      this.#singleUseActive = saved.active;
    }
    for (const scan of [scanIp, scanInt, scanBytes]) {
      try {
        return scan(src, pos);
      } catch (e) {
        if (!(e instanceof ParseFailure)) throw e;
      }
    }
    return this.#fail("unrecognised input", pos);
  }

  #valueOrComparison(pos: number): Scanned<FunctionArgument> {
    const [value, end] = this.#value(pos);
    return this.#maybeComparison(value, end);
  }

  #maybeComparison(value: ValueExpression, end: number): Scanned<FunctionArgument> {
    if (this.#comparisonOp(skipSpace(this.#src, end))) return this.#comparison(end, value);
    return [value, end];
  }
}

function trimBounds(text: string): { start: number; end: number } {
  let start = 0;
  let end = text.length;
  while (start < end && TRIM.test(text[start] ?? "")) start++;
  while (end > start && TRIM.test(text[end - 1] ?? "")) end--;
  return { start, end };
}

/**
 * Parses and type-checks a rules-language (wirefilter) filter expression against the field catalogue.
 * Never throws: bad input gives `{ ok: false, error }` with wirefilter's message, position and
 * formatted text.
 *
 * @example
 * const ok = parseExpression('http.host eq "example.com" and ip.src in { 10.0.0.0/8 }');
 * ok.ok; // true
 * const bad = parseExpression("xyz");
 * if (!bad.ok) bad.error.formatted; // "Filter parsing error (1:1):\nxyz\n^^^ unknown identifier\n"
 */
export function parseExpression(text: string, options: ParseOptions = {}): ParseResult {
  try {
    const limit = options.maxLengthChars ?? MAX_EXPRESSION_LENGTH_CHARS;
    let chars = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      // Count code points: a surrogate pair is one character.
      if (code >= 0xdc00 && code <= 0xdfff && i > 0 && (text.charCodeAt(i - 1) & 0xfc00) === 0xd800) continue;
      chars++;
      if (chars > limit) {
        const message = `expression is too long: it must be at most ${limit} characters`;
        return { ok: false, error: formatError(text, message, i, text.length) };
      }
    }
    const { start, end } = trimBounds(text);
    const ast = new Parser(text.slice(0, end), options).parseFilter(start);
    return { ok: true, ast };
  } catch (e) {
    if (e instanceof ParseFailure) return { ok: false, error: formatError(text, e.message, e.start, e.end) };
    // Only a stack overflow from an absurd `maxNestingDepth` can land here; report, never throw.
    const message = e instanceof RangeError ? "expression is too deeply nested" : "unrecognised input";
    return { ok: false, error: formatError(text, message, 0, text.length) };
  }
}
