import { describe, expect, it } from "vitest";
import { parseExpression } from "../../../src/api/rules-language/index";
import { WIREFILTER_SCHEME } from "./helpers";

/** [expression, line, column, marker width, message] from wirefilter's `scheme.rs` tests. */
const WIREFILTER_CASES: readonly (readonly [string, number, number, number, string])[] = [
  ["xyz", 1, 1, 3, "unknown identifier"],
  ["xyz\n", 1, 1, 3, "unknown identifier"],
  ["\n\n    xyz", 3, 5, 3, "unknown identifier"],
  ["num == 10 or\nnum == true or\nnum == 20\n", 2, 8, 7, "expected digit"],
  ["arr and arr\n", 1, 12, 1, "expected value of type Bool, but got Array<Bool>"],
  ["str in {", 1, 9, 1, "unrecognised input"],
  ['str in {"a"', 1, 12, 1, "unrecognised input"],
  ["num in {", 1, 9, 1, "expected digit"],
  ["concat(0, 0) == 0", 1, 8, 1, "invalid type of argument #0: expected value of type Bytes or Array<_>, but got Int"],
  ["bool in {0}", 1, 5, 7, "unrecognised input"],
  ["bool in {127.0.0.1}", 1, 5, 15, "unrecognised input"],
  ['bool in {"test"}', 1, 5, 12, "unrecognised input"],
  ["num in {127.0.0.1}", 1, 12, 7, "expected digit"],
  ['num in {"test"}', 1, 9, 7, "expected digit"],
  ["ip in {666}", 1, 8, 3, "couldn't parse address in network: invalid IP address syntax"],
  ['ip in {"test"}', 1, 8, 7, "expected IP address character"],
  ["str in {0}", 1, 9, 2, "invalid digit found in string while parsing with radix 16"],
  ["str in {127.0.0.1}", 1, 11, 1, "expected byte separator"],
];

describe("parseExpression: wirefilter's formatted errors", () => {
  it.each(WIREFILTER_CASES)("%j", (text, line, column, width, message) => {
    const result = parseExpression(text, { fields: WIREFILTER_SCHEME });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const { error } = result;
    expect({ line: error.line, column: error.column, message: error.message }).toEqual({ line, column, message });
    const offending = text.split("\n")[line - 1];
    expect(error.formatted).toBe(
      `Filter parsing error (${line}:${column}):\n${offending}\n${" ".repeat(column - 1)}${"^".repeat(width)} ${message}\n`,
    );
  });

  it("formats the reference's multi-line example exactly", () => {
    const result = parseExpression("num == 10 or\nnum == true or\nnum == 20", { fields: WIREFILTER_SCHEME });
    expect(result).toEqual({
      ok: false,
      error: {
        line: 2,
        column: 8,
        span: { start: 20, end: 37 },
        message: "expected digit",
        formatted: "Filter parsing error (2:8):\nnum == true or\n       ^^^^^^^ expected digit\n",
      },
    });
  });
});

describe("parseExpression: wirefilter's ordering-operator errors", () => {
  const OPS = ["eq", "ne", "ge", "le", "gt", "lt"] as const;
  const cases = OPS.flatMap((op) => [
    [`num ${op} 127.0.0.1`, 10, 6, "unrecognised input"],
    [`num ${op} "test"`, 7, 6, "expected digit"],
    [`str ${op} 0`, 7, 1, "expected 2 characters, but found 1"],
    [`str ${op} 256`, 9, 1, "expected byte separator"],
    [`str ${op} 127.0.0.1`, 9, 1, "expected byte separator"],
    [`str_arr ${op} 0`, 8, 2, "cannot perform this operation on type Array<Bytes>"],
    [`str_arr ${op} "test"`, 8, 2, "cannot perform this operation on type Array<Bytes>"],
    [`str_map ${op} 127.0.0.1`, 8, 2, "cannot perform this operation on type Map<Bytes>"],
  ]) as [string, number, number, string][];

  it.each(cases)("%j", (text, spanStart, spanLength, message) => {
    const result = parseExpression(text, { fields: WIREFILTER_SCHEME });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.column).toBe(spanStart + 1);
    expect(result.error.message).toBe(message);
    expect(result.error.formatted.split("\n")[2]).toBe(`${" ".repeat(spanStart)}${"^".repeat(spanLength)} ${message}`);
  });

  it.each(["0", "127.0.0.1", '"test"'])("`in` on arrays and maps is unsupported (%s)", (item) => {
    for (const field of ["str_arr", "str_map"]) {
      const result = parseExpression(`${field} in {${item}}`, { fields: WIREFILTER_SCHEME });
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error.column).toBe(9);
        expect(result.error.message).toMatch(/^cannot perform this operation on type (Array|Map)<Bytes>$/);
      }
    }
  });
});

/** The reference's §2.5 invalid-expression table, against the scheme each case names. */
const REFERENCE_REJECTS: readonly (readonly [string, string | RegExp])[] = [
  ["str eq 0", "expected 2 characters, but found 1"],
  ['str[*] == "three"', "cannot access index MapEach for type Bytes"],
  ["ip[*] == 127.0.0.1", "cannot access index MapEach for type Ip"],
  ['str_map[a] == "x"', 'expected literal "expected quoted utf8 string or positive integer"'],
  ["str_map['a'] == \"x\"", 'expected literal "expected quoted utf8 string or positive integer"'],
  ['str == "\\n"', 'expected ", xHH or OOO after \\'],
  ['str == r#"a"', "could not find an ending quote"],
  ["ip in {10.0.0.0/100}", "invalid length for network: Network length 100 is too long for Ipv4 (maximum: 32)"],
  ["ip in {127.0.0.1..10.0.0.0}", "incompatible range bounds"],
  ["ip in {10.0.0.0..::1}", "incompatible range bounds"],
  ["num in {10..0}", "incompatible range bounds"],
  ["any(bool)", "expected value of type Array<Bool>, but got Bool"],
  ["bool and arr", "expected value of type Bool, but got Array<Bool>"],
  ["arr or bool", "expected value of type Array<Bool>, but got Bool"],
  ['str_map == "test"', "cannot perform this operation on type Map<Bytes>"],
];

describe("parseExpression: reference §2.5 rejections", () => {
  it.each(REFERENCE_REJECTS)("%j", (text, message) => {
    const result = parseExpression(text, { fields: WIREFILTER_SCHEME });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.message).toMatch(message);
  });

  it("rejects `ends_with` used as an operator (docs)", () => {
    const result = parseExpression('http.request.uri.path ends_with ".html"');
    expect(result).toMatchObject({ ok: false, error: { line: 1, column: 23, message: "expected ComparisonOp" } });
  });

  it("reports the string escape at the escaped character", () => {
    const result = parseExpression('str == "\\n"', { fields: WIREFILTER_SCHEME });
    expect(result).toMatchObject({ ok: false, error: { column: 10, span: { start: 9, end: 10 } } });
  });

  it("never throws, whatever the input", () => {
    for (const text of ["", "(", ")", "\u0000", "http.host[", 'concat("a"', "a".repeat(5000), "\ud800", "any(", "!"]) {
      expect(() => parseExpression(text)).not.toThrow();
      expect(parseExpression(text).ok).toBe(false);
    }
  });
});
