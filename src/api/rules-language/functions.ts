/**
 * The rules-language functions, with their arity and argument checks. Messages follow wirefilter's
 * (`invalid type of argument #0: expected value of type Bytes or Array<_>, but got Int`).
 *
 * Only `any`/`all` (quantifiers, handled by the parser) and `concat` exist in wirefilter itself; the
 * others follow Cloudflare's documentation (`ruleset-engine/rules-language/functions.mdx`).
 */
import type { Literal } from "./ast";
import { sameType, typeToString, type ValueType } from "./fields";
import { checkWildcard } from "./lexer";
import { checkRegexSyntax } from "./regex-syntax";

/** Whether an argument is a literal or something evaluated (a field, call or sub-expression). */
export const ARGUMENT_KINDS = ["Literal", "Field"] as const;

/**
 * `Literal` or `Field` (wirefilter's `FunctionArgKind`).
 *
 * @example
 * const k: ArgumentKind = "Field";
 */
export type ArgumentKind = (typeof ARGUMENT_KINDS)[number];

/**
 * An expected argument type: an exact type, or any array / any map (shown as `Array<_>`, `Map<_>`).
 *
 * @example
 * const e: ExpectedType = "AnyArray";
 */
export type ExpectedType = ValueType | "AnyArray" | "AnyMap";

/**
 * What the checker knows about an argument.
 *
 * @example
 * const a: ArgumentInfo = { kind: "Literal", type: "Int", literal: { kind: "int", value: 1n, span: { start: 0, end: 1 } } };
 */
export interface ArgumentInfo {
  readonly kind: ArgumentKind;
  readonly type: ValueType;
  readonly literal?: Literal;
}

/**
 * A function's signature: arity and a check per argument.
 *
 * @example
 * FUNCTIONS.get("lower")?.minArgs; // 1
 */
export interface FunctionDefinition {
  readonly name: string;
  readonly minArgs: number;
  /** `null` when the function takes any number of further arguments. */
  readonly maxArgs: number | null;
  /** Returns the wirefilter-style message for a bad argument, or `null`. */
  checkArgument(index: number, arg: ArgumentInfo, previous: readonly ArgumentInfo[]): string | null;
  returnType(args: readonly ArgumentInfo[]): ValueType;
}

function expectedRank(e: ExpectedType): number {
  if (e === "AnyArray") return 100;
  if (e === "AnyMap") return 101;
  if (typeof e === "string") return ["Bool", "Bytes", "Int", "Ip"].indexOf(e);
  return e.kind === "Array" ? 10 : 20;
}

function expectedToString(e: ExpectedType): string {
  if (e === "AnyArray") return "Array<_>";
  if (e === "AnyMap") return "Map<_>";
  return typeToString(e);
}

/**
 * wirefilter's rendering of a set of expected types: `A`, `A or B`, or `{A, B, C}`.
 *
 * @example
 * expectedTypesToString(["AnyArray", "Bytes"]); // "Bytes or Array<_>"
 */
export function expectedTypesToString(expected: readonly ExpectedType[]): string {
  const names = [...expected].sort((a, b) => expectedRank(a) - expectedRank(b)).map(expectedToString);
  if (names.length === 1) return names[0] ?? "";
  if (names.length === 2) return `${names[0]} or ${names[1]}`;
  return `{${names.join(", ")}}`;
}

function matches(expected: ExpectedType, type: ValueType): boolean {
  if (expected === "AnyArray") return typeof type !== "string" && type.kind === "Array";
  if (expected === "AnyMap") return typeof type !== "string" && type.kind === "Map";
  return sameType(expected, type);
}

/**
 * The message for a type mismatch, as wirefilter prints it.
 *
 * @example
 * typeMismatch(["Bool"], "Int"); // "expected value of type Bool, but got Int"
 */
export function typeMismatch(expected: readonly ExpectedType[], actual: ValueType): string {
  return `expected value of type ${expectedTypesToString(expected)}, but got ${typeToString(actual)}`;
}

interface ParamSpec {
  readonly kind?: ArgumentKind;
  readonly types: readonly ExpectedType[];
  readonly validate?: (literal: Literal) => string | null;
}

function checkParam(index: number, spec: ParamSpec, arg: ArgumentInfo): string | null {
  if (spec.kind !== undefined && spec.kind !== arg.kind) {
    return `invalid kind of argument #${index}: expected argument of kind ${spec.kind}, but got ${arg.kind}`;
  }
  if (!spec.types.some((t) => matches(t, arg.type))) {
    return `invalid type of argument #${index}: ${typeMismatch(spec.types, arg.type)}`;
  }
  if (spec.validate && arg.literal) {
    const problem = spec.validate(arg.literal);
    if (problem !== null) return `invalid value of argument #${index}: invalid argument: ${JSON.stringify(problem)}`;
  }
  return null;
}

function intBetween(min: number, max: number): (literal: Literal) => string | null {
  return (literal) =>
    literal.kind === "int" && literal.value >= BigInt(min) && literal.value <= BigInt(max)
      ? null
      : `expected an integer between ${min} and ${max}`;
}

function textOf(literal: Literal): string {
  return literal.kind === "bytes" ? (literal.text ?? "") : "";
}

/**
 * A function with a fixed list of parameters (the last `optional` of them may be left out), or with
 * a repeated last parameter when `repeatLast` is set.
 */
function simple(
  name: string,
  params: readonly ParamSpec[],
  returns: ValueType | ((args: readonly ArgumentInfo[]) => ValueType),
  options: { optional?: number; repeatLast?: boolean } = {},
): FunctionDefinition {
  const optional = options.optional ?? 0;
  return {
    name,
    minArgs: params.length - optional,
    maxArgs: options.repeatLast ? null : params.length,
    checkArgument(index, arg) {
      const spec = params[Math.min(index, params.length - 1)];
      return spec ? checkParam(index, spec, arg) : null;
    },
    returnType: (args) => (typeof returns === "function" ? returns(args) : returns),
  };
}

const BYTES: ParamSpec = { types: ["Bytes"] };
const BYTES_FIELD: ParamSpec = { kind: "Field", types: ["Bytes"] };
const BYTES_LITERAL: ParamSpec = { kind: "Literal", types: ["Bytes"] };

const concat: FunctionDefinition = {
  name: "concat",
  minArgs: 2,
  maxArgs: null,
  // As in wirefilter: the first argument is Bytes or an array; every later one has its type.
  checkArgument(index, arg, previous) {
    const first = previous[0];
    const expected: readonly ExpectedType[] = first ? [first.type] : ["Bytes", "AnyArray"];
    return expected.some((t) => matches(t, arg.type))
      ? null
      : `invalid type of argument #${index}: ${typeMismatch(expected, arg.type)}`;
  },
  returnType: (args) => args[0]?.type ?? "Bytes",
};

const DEFINITIONS: readonly FunctionDefinition[] = [
  concat,
  simple("len", [{ types: ["Bytes", "AnyArray"] }], "Int"),
  simple("lower", [BYTES], "Bytes"),
  simple("upper", [BYTES], "Bytes"),
  simple("starts_with", [BYTES_FIELD, BYTES], "Bool"),
  simple("ends_with", [BYTES_FIELD, BYTES], "Bool"),
  simple(
    "url_decode",
    [
      BYTES_FIELD,
      {
        kind: "Literal",
        types: ["Bytes"],
        validate: (l) => (/^[ru]+$/.test(textOf(l)) ? null : 'expected options made of "r" and "u"'),
      },
    ],
    "Bytes",
    { optional: 1 },
  ),
  simple("decode_base64", [BYTES_FIELD], "Bytes"),
  simple(
    "cidr",
    [
      { kind: "Field", types: ["Ip"] },
      { kind: "Literal", types: ["Int"], validate: intBetween(1, 32) },
      { kind: "Literal", types: ["Int"], validate: intBetween(1, 128) },
    ],
    "Ip",
  ),
  simple(
    "cidr6",
    [
      { kind: "Field", types: ["Ip"] },
      { kind: "Literal", types: ["Int"], validate: intBetween(1, 128) },
    ],
    "Ip",
  ),
  simple("join", [{ types: [{ kind: "Array", of: "Bytes" }] }, BYTES_LITERAL], "Bytes"),
  simple("split", [BYTES_FIELD, BYTES_LITERAL, { kind: "Literal", types: ["Int"], validate: intBetween(1, 128) }], {
    kind: "Array",
    of: "Bytes",
  }),
  simple("substring", [BYTES, { types: ["Int"] }, { types: ["Int"] }], "Bytes", { optional: 1 }),
  simple("remove_bytes", [BYTES_FIELD, BYTES_LITERAL], "Bytes"),
  simple("remove_query_args", [BYTES_FIELD, BYTES_LITERAL], "Bytes", { repeatLast: true }),
  simple("to_string", [{ types: ["Int", "Bool", "Ip"] }], "Bytes"),
  simple("lookup_json_string", [BYTES_FIELD, { kind: "Literal", types: ["Bytes", "Int"] }], "Bytes", {
    repeatLast: true,
  }),
  simple("lookup_json_integer", [BYTES_FIELD, { kind: "Literal", types: ["Bytes", "Int"] }], "Int", {
    repeatLast: true,
  }),
  simple(
    "regex_replace",
    [
      BYTES_FIELD,
      {
        kind: "Literal",
        types: ["Bytes"],
        validate: (l) => (checkRegexSyntax(textOf(l)) === null ? null : "invalid regular expression"),
      },
      {
        kind: "Literal",
        types: ["Bytes"],
        validate: (l) =>
          (textOf(l)
            .replaceAll("$$", "")
            .match(/\$\{?\d+\}?/g)?.length ?? 0) > 8
            ? "too many capture group references, at most 8 are allowed"
            : null,
      },
    ],
    "Bytes",
  ),
  simple(
    "wildcard_replace",
    [
      BYTES_FIELD,
      {
        kind: "Literal",
        types: ["Bytes"],
        validate: (l) => (l.kind === "bytes" ? checkWildcard(l.bytes) : null),
      },
      BYTES_LITERAL,
      { kind: "Literal", types: ["Bytes"], validate: (l) => (textOf(l) === "s" ? null : 'expected flags "s"') },
    ],
    "Bytes",
    { optional: 1 },
  ),
  simple("uuidv4", [BYTES_FIELD], "Bytes"),
  simple("bit_slice", [BYTES_FIELD, { kind: "Literal", types: ["Int"] }, { kind: "Literal", types: ["Int"] }], "Int"),
  simple(
    "is_timed_hmac_valid_v0",
    [
      BYTES_LITERAL,
      BYTES_FIELD,
      { kind: "Literal", types: ["Int"] },
      { kind: "Field", types: ["Int"] },
      { kind: "Literal", types: ["Int"] },
      BYTES_LITERAL,
    ],
    "Bool",
    { optional: 2 },
  ),
];

/**
 * The function catalogue by name.
 *
 * @example
 * FUNCTIONS.has("lower"); // true
 */
export const FUNCTIONS: ReadonlyMap<string, FunctionDefinition> = new Map(DEFINITIONS.map((d) => [d.name, d]));

/**
 * Functions that may appear once per expression and never inside one another.
 *
 * @example
 * SINGLE_USE_FUNCTIONS.includes("regex_replace"); // true
 */
export const SINGLE_USE_FUNCTIONS: readonly string[] = ["regex_replace", "wildcard_replace"];

/**
 * Looks a function up.
 *
 * @example
 * lookupFunction("concat")?.maxArgs; // null
 */
export function lookupFunction(name: string): FunctionDefinition | undefined {
  return FUNCTIONS.get(name);
}
