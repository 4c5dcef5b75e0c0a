import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseExpression, printExpression, STANDARD_FIELDS, typeToString } from "../../../src/api/rules-language/index";
import { withoutSpans } from "./helpers";

/** Standard-catalogue fields grouped by type, so generated comparisons are well typed. */
function fieldsOf(type: string): string[] {
  return [...STANDARD_FIELDS].filter(([, t]) => typeToString(t) === type).map(([name]) => name);
}

const pick = (names: string[]) => fc.constantFrom(...names);
const bytesField = pick(fieldsOf("Bytes"));
const intField = pick(fieldsOf("Int"));
const ipField = pick(fieldsOf("Ip"));
const boolField = pick(fieldsOf("Bool"));
const stringMapField = pick(fieldsOf("Map<Array<Bytes>>"));
const stringArrayField = pick(fieldsOf("Array<Bytes>"));

const space = fc.constantFrom(" ", "  ", "\n", " \r\n ");

/** Any characters, escaped as the grammar requires, with some written as `\xHH` or octal escapes. */
const quoted = fc
  .array(
    fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 3 }).map((s) => s.replace(/[\\"]/g, (c) => `\\${c}`)),
      fc.integer({ min: 0, max: 255 }).map((b) => `\\x${b.toString(16).padStart(2, "0")}`),
      fc.integer({ min: 0, max: 255 }).map((b) => `\\${b.toString(8).padStart(3, "0")}`),
    ),
    { maxLength: 4 },
  )
  .map((parts) => `"${parts.join("")}"`);
/** Map keys must be valid UTF-8, so no byte escapes. */
const key = fc.string({ unit: "grapheme", maxLength: 6 }).map((s) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`);
const raw = fc
  .tuple(fc.integer({ min: 0, max: 3 }), fc.string({ maxLength: 6 }))
  .filter(([hashes, body]) => hashes > 0 || !body.includes('"'))
  .filter(([hashes, body]) => !body.includes(`"${"#".repeat(hashes)}`))
  .map(([hashes, body]) => `r${"#".repeat(hashes)}"${body}"${"#".repeat(hashes)}`);
const hexBytes = fc
  .tuple(fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 2, maxLength: 5 }), fc.constantFrom(":", "-", "."))
  .map(([bytes, sep]) => bytes.map((b) => b.toString(16).padStart(2, "0")).join(sep));
const bytesLiteral = fc.oneof(quoted, raw, hexBytes);

const int = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const intLiteral = fc.oneof(
  int.map(String),
  fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map((n) => `0x${n.toString(16)}`),
  fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map((n) => `0${n.toString(8)}`),
);
const intRange = fc.tuple(int, int).map(([a, b]) => (a <= b ? `${a}..${b}` : `${b}..${a}`));

const ipv4 = fc.ipV4();
const ipv6 = fc.ipV6();
const ipLiteral = fc.oneof(ipv4, ipv6);
const cidr = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 255 }), fc.constantFrom(8, 16)).map(([a, n]) => `${a}.0.0.0/${n}`),
  fc.constantFrom("2001:db8::/32", "::/0", "fe80::/10"),
);
const ipRange = fc.constantFrom("10.0.0.0..10.0.255.255", "::1..::2", "1.2.3.4..1.2.3.4");

const wildcard = fc
  .array(fc.stringMatching(/^[a-z./-]{1,4}$/), { minLength: 1, maxLength: 4 })
  .map((parts) => `"${parts.join("*")}"`);
const regex = fc.constantFrom('"^/api/"', '"(foo|bar)+"', '"[a-z\\"]+\\\\.php$"', 'r"\\d{2,3}"', 'r#"a"b"#', '"\\""');

const ordering = fc.constantFrom("eq", "ne", "ge", "le", "gt", "lt", "==", "!=", ">=", "<=", ">", "<");
const set = (item: fc.Arbitrary<string>) => fc.array(item, { maxLength: 4 }).map((items) => `{ ${items.join(" ")} }`);

const comparison: fc.Arbitrary<string> = fc.oneof(
  boolField,
  fc.tuple(bytesField, ordering, bytesLiteral).map((p) => p.join(" ")),
  fc.tuple(bytesField, bytesLiteral).map(([f, v]) => `${f} contains ${v}`),
  fc.tuple(bytesField, fc.constantFrom("matches", "~"), regex).map((p) => p.join(" ")),
  fc.tuple(bytesField, fc.constantFrom("wildcard", "strict wildcard"), wildcard).map((p) => p.join(" ")),
  fc.tuple(bytesField, set(bytesLiteral)).map(([f, s]) => `${f} in ${s}`),
  fc.tuple(intField, ordering, intLiteral).map((p) => p.join(" ")),
  fc.tuple(intField, fc.constantFrom("&", "bitwise_and"), intLiteral).map((p) => p.join(" ")),
  fc.tuple(intField, set(fc.oneof(intLiteral, intRange))).map(([f, s]) => `${f} in ${s}`),
  fc.tuple(ipField, ordering, ipLiteral).map((p) => p.join(" ")),
  fc.tuple(ipField, set(fc.oneof(ipLiteral, cidr, ipRange))).map(([f, s]) => `${f} in ${s}`),
  fc.tuple(ipField, fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/)).map(([f, l]) => `${f} in $${l}`),
  fc.tuple(stringMapField, key, fc.nat(3), bytesLiteral).map(([f, k, i, v]) => `${f}[${k}][${i}] eq ${v}`),
  fc.tuple(stringArrayField, bytesLiteral).map(([f, v]) => `any(${f}[*] contains ${v})`),
  fc.tuple(stringMapField, quoted).map(([f, v]) => `all(lower(${f}[*][*])[*] == ${v})`),
  fc.tuple(bytesField, quoted).map(([f, v]) => `lower(${f}) eq ${v}`),
  fc.tuple(bytesField, intLiteral).map(([f, n]) => `len(${f}) > ${n}`),
  fc.tuple(bytesField, quoted).map(([f, v]) => `starts_with(${f}, ${v})`),
  fc.tuple(bytesField, bytesField, quoted).map(([a, b, v]) => `concat(${a}, ${b}) contains ${v}`),
);

const expression: fc.Arbitrary<string> = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    comparison,
    fc.tuple(fc.constantFrom("not ", "! ", "!"), tie("expr")).map(([op, e]) => `${op}(${e})`),
    fc.tuple(tie("expr"), space).map(([e, s]) => `(${s}${e}${s})`),
    fc
      .tuple(
        tie("expr"),
        fc.constantFrom("and", "&&", "or", "||", "xor", "^^"),
        fc.constantFrom("not ", "!", ""),
        tie("expr"),
        space,
      )
      .map(([a, op, neg, b, s]) => `${a}${s}${op}${s}${neg}(${b})`),
  ),
})).expr;

describe("parseExpression / printExpression: round trip", () => {
  it("parses every generated expression and reparses its printed form to the same tree", () => {
    fc.assert(
      fc.property(expression, (text) => {
        const first = parseExpression(text, { maxLengthChars: Number.POSITIVE_INFINITY });
        if (!first.ok) throw new Error(`${JSON.stringify(text)}\n${first.error.formatted}`);
        const printed = printExpression(first.ast);
        const second = parseExpression(printed, { maxLengthChars: Number.POSITIVE_INFINITY });
        if (!second.ok) throw new Error(`${printed}\n${second.error.formatted}`);
        expect(withoutSpans(second.ast)).toEqual(withoutSpans(first.ast));
        expect(printExpression(second.ast)).toBe(printed);
      }),
      { numRuns: 400 },
    );
  });

  it("never throws on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (text) => {
        const result = parseExpression(text);
        expect(typeof result.ok).toBe("boolean");
      }),
      { numRuns: 500 },
    );
  });
});
