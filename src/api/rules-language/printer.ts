/**
 * AST → expression text. The output uses the English operator spellings and canonical literals
 * (decimal integers, canonical addresses) and reparses to the same tree, modulo spans.
 */
import type {
  BytesLiteral,
  Expression,
  FunctionArgument,
  IndexStep,
  Literal,
  RegexLiteral,
  SetItem,
  ValueExpression,
} from "./ast";

const HEX = "0123456789abcdef";

function hexByte(b: number): string {
  return `${HEX[(b >> 4) & 15]}${HEX[b & 15]}`;
}

/** Quotes bytes as a wirefilter string: printable ASCII as is, `"` and `\` escaped, the rest `\xHH`. */
function quoteBytes(bytes: readonly number[], text: string | null): string {
  if (text !== null) {
    // Valid UTF-8: keep the characters readable and escape only what the grammar requires.
    return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  }
  let out = '"';
  for (const b of bytes) {
    if (b === 0x22 || b === 0x5c) out += `\\${String.fromCharCode(b)}`;
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += `\\x${hexByte(b)}`;
  }
  return `${out}"`;
}

function printBytes(literal: BytesLiteral): string {
  if (literal.format === "hex") return literal.bytes.map(hexByte).join(":");
  if (literal.format === "raw" && literal.text !== null) {
    const hashes = "#".repeat(literal.hashes);
    return `r${hashes}"${literal.text}"${hashes}`;
  }
  return quoteBytes(literal.bytes, literal.text);
}

/** The inverse of the quoted-regex lexer: a `"` outside a character class becomes `\"`. */
function printRegex(regex: RegexLiteral): string {
  if (regex.format === "raw") {
    const hashes = "#".repeat(regex.hashes);
    return `r${hashes}"${regex.pattern}"${hashes}`;
  }
  let out = '"';
  let inClass = false;
  for (let i = 0; i < regex.pattern.length; i++) {
    const ch = regex.pattern[i] ?? "";
    if (ch === "\\") {
      out += ch + (regex.pattern[i + 1] ?? "");
      i++;
    } else if (ch === '"' && !inClass) {
      out += '\\"';
    } else {
      if (ch === "[" && !inClass) inClass = true;
      else if (ch === "]" && inClass) inClass = false;
      out += ch;
    }
  }
  return `${out}"`;
}

function printLiteral(literal: Literal | SetItem): string {
  switch (literal.kind) {
    case "int":
      return literal.value.toString();
    case "int-range":
      return `${literal.start}..${literal.end}`;
    case "bytes":
      return printBytes(literal);
    case "ip":
      return literal.address;
    case "ip-range":
      return `${literal.start}..${literal.end}`;
    case "cidr":
      return `${literal.address}/${literal.prefix}`;
  }
}

function printIndex(step: IndexStep): string {
  if (step.kind === "each") return "[*]";
  if (step.kind === "array-index") return `[${step.index}]`;
  return `[${quoteBytes([], step.key)}]`;
}

function printValue(value: ValueExpression): string {
  const target =
    value.target.kind === "field"
      ? value.target.name
      : `${value.target.name}(${value.target.args.map(printArgument).join(", ")})`;
  return target + value.indexes.map(printIndex).join("");
}

function printArgument(arg: FunctionArgument): string {
  if (arg.kind === "value") return printValue(arg);
  if (arg.kind === "int" || arg.kind === "bytes" || arg.kind === "ip") return printLiteral(arg);
  return printExpression(arg);
}

/**
 * Prints an expression. For trees produced by {@link parseExpression}, `parseExpression(printExpression(ast))`
 * gives the same tree modulo spans; explicit parentheses are kept as written.
 *
 * @example
 * const r = parseExpression('http.host == "a" && !ssl');
 * if (r.ok) printExpression(r.ast); // 'http.host eq "a" and not ssl'
 */
export function printExpression(ast: Expression): string {
  switch (ast.kind) {
    case "combining":
      return ast.items.map(printExpression).join(` ${ast.op} `);
    case "not":
      return `not ${printExpression(ast.arg)}`;
    case "group":
      return `(${printExpression(ast.expr)})`;
    case "quantifier":
      return `${ast.quantifier}(${ast.arg.kind === "value" ? printValue(ast.arg) : printExpression(ast.arg)})`;
    case "comparison": {
      const lhs = printValue(ast.lhs);
      switch (ast.op) {
        case "is_true":
          return lhs;
        case "in":
          return ast.rhs.kind === "list"
            ? `${lhs} in $${ast.rhs.name}`
            : `${lhs} in {${ast.rhs.items.map((i) => ` ${printLiteral(i)}`).join("")} }`;
        case "matches":
          return `${lhs} matches ${printRegex(ast.rhs)}`;
        case "bitwise_and":
          return `${lhs} & ${printLiteral(ast.rhs)}`;
        default:
          return `${lhs} ${ast.op} ${printLiteral(ast.rhs)}`;
      }
    }
  }
}
