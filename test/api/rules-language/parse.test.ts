import { describe, expect, it } from "vitest";
import {
  DEFAULT_MAX_NESTING_DEPTH,
  type Expression,
  lookupField,
  MAX_EXPRESSION_LENGTH_CHARS,
  parseExpression,
  printExpression,
} from "../../../src/api/rules-language/index";
import { WIREFILTER_SCHEME, withoutSpans } from "./helpers";

const ACCEPTED: readonly string[] = [
  // The reference's §2.5 valid table, on the standard catalogue.
  'http.request.method != "POST" && not http.user_agent matches "(googlebot|facebook)" && cf.edge.server_port in {80 443}',
  "cf.edge.server_port in { 80 443 2082..2083 }",
  "ip.src in { 127.0.0.0/8 ::1 10.0.0.0..10.0.255.255 }",
  "http.host contains 6F:72:67",
  "http.host >= 10:20:30:40:50:60:70:80",
  "cf.edge.server_port & 1",
  'http.request.headers["host"][0] contains "abc"',
  'http.request.uri.path matches r##"a"#b"##',
  'any(lower(http.request.headers.names[*])[*] == "content-type")',
  // Operators and spellings.
  "ssl",
  "not ssl",
  "!ssl",
  "ssl and not cf.client.bot",
  "ssl && cf.client.bot || ip.src.is_in_european_union ^^ cf.edge.client_tcp",
  "http.response.code eq 404 or http.response.code == 0x1F4 or http.response.code gt 0777",
  "cf.bot_management.score lt -1 or cf.bot_management.score le 30 or cf.bot_management.score >= 1",
  "cf.edge.server_port bitwise_and 0x3",
  'http.request.uri.path ~ "^/admin"',
  'http.host wildcard "*.example.com"',
  'http.host strict wildcard "a\\\\*b*"',
  'http.request.uri.path in { "/a" "/b" r"/c" 2f:64 }',
  "ip.src in $office_ips",
  "ip.src in $cf.open_proxies",
  "ip.src eq 2001:db8::1",
  "ip.src ne ::ffff:10.0.0.1",
  "ip.src in { 10 10.1 1.1.1.01 2001:db8::/32 ::1..::2 }",
  '(http.host eq "a") and (ssl or (not cf.client.bot))',
  'http.cookie contains "session=\\x41\\101\\"\\\\"',
  // Indexing, mapping and functions.
  'http.request.uri.args["q"][0] eq "x"',
  'any(http.request.headers.names[*] contains "x")',
  'all(http.request.headers["accept"][*] == "*/*")',
  'lower(http.host) eq "example.com"',
  'upper(http.request.method) in { "GET" "HEAD" }',
  "len(http.request.uri.path) gt 100",
  "len(http.request.headers.names) > 50",
  'starts_with(http.request.uri.path, "/api/")',
  'ends_with(http.request.uri.path, ".php")',
  'concat(http.host, "/", http.request.uri.path) eq "a/b"',
  'url_decode(http.request.uri.query, "r") contains "<script"',
  'lookup_json_string(http.request.body.raw, "user", 0) eq "x"',
  'lookup_json_integer(http.request.body.raw, "n") > 3',
  "cidr(ip.src, 24, 64) eq 10.0.0.0",
  "cidr6(ip.src, 64) in { 2001:db8::/64 }",
  `regex_replace(http.request.uri.path, "^/old/(.*)$", "/new/\${1}") eq "/new/x"`,
  `wildcard_replace(http.request.full_uri, "https://*.example.com/*", "https://\${1}.x/\${2}") eq "a"`,
  'to_string(cf.bot_management.score) eq "1"',
  'join(http.request.headers.names, ",") contains "a"',
  'split(http.request.uri.path, "/", 3)[0] eq ""',
  'substring(http.request.uri.path, -3) eq "php"',
  'is_timed_hmac_valid_v0("secret", http.request.uri, 10800, http.request.timestamp.sec, 8)',
  "cf.response.1xxx_code eq 1020",
  'http.request.jwt.claims.iat.sec["kid"][0] gt 0',
  "  ssl\t",
  'http.host matches "(a)\\\\1"',
  "ssl\r\nand\ncf.client.bot",
];

/** [expression, expected message] on the standard catalogue. */
const REJECTED: readonly (readonly [string, string | RegExp])[] = [
  ["http.hots eq 1", "unknown identifier"],
  ["HTTP.HOST eq 1", "unknown identifier"],
  ["http.host. eq 1", "expected identifier character"],
  ["ssl AND ssl", "unrecognised input"],
  ["ssl\tand ssl", "unrecognised input"],
  ["http.host", "expected ComparisonOp"],
  ["http.host eq", "unrecognised input"],
  ["cf.edge.server_port contains 1", "cannot perform this operation on type Int"],
  ['ip.src matches "a"', "cannot perform this operation on type Ip"],
  ["ip.src eq 10.0.0.0/8", "couldn't parse address in network: invalid IP address syntax"],
  ["ip.src eq 010.0.0.1", "couldn't parse address in network: invalid IP address syntax"],
  ["ip.src in { 10.0.0.1/8 }", "host part of address was not zero"],
  ["ip.src in { 10.0.0.0/ab }", "couldn't parse length in network: invalid digit found in string"],
  ["ip.src in { 10.0.0.0/ }", "couldn't parse length in network: cannot parse integer from empty string"],
  ["cf.edge.server_port eq 09", "invalid digit found in string while parsing with radix 8"],
  ["cf.edge.server_port eq 9223372036854775808", "number too large to fit in target type while parsing with radix 10"],
  ["cf.edge.server_port eq 0x", "expected digit"],
  ['http.host wildcard "a**b"', "wildcard contains a double star"],
  ['http.host wildcard "a\\\\b"', "invalid wildcard: wildcard syntax error at position 1: invalid escape sequence"],
  ["http.host wildcard 61:62", 'expected " or r'],
  ['http.host matches "(a"', /error: unclosed group$/],
  ['http.host matches "a(?=b)"', /look-around/],
  ['http.host matches "(a)\\1"', /backreferences are not supported/],
  ["ssl and http.request.headers.names", "expected ComparisonOp"],
  ["ssl and cf.waf.content_scan.obj_sizes", "expected ComparisonOp"],
  ['http.request.headers.names[*] eq "a"', "expected value of type Bool, but got Array<Bool>"],
  ['http.request.headers["a"]["b"] eq "x"', 'cannot access index MapKey("b") for type Array<Bytes>'],
  ['http.request.headers[0][0] eq "x"', "cannot access index ArrayIndex(0) for type Map<Array<Bytes>>"],
  ['http.request.headers.names[-1] eq "x"', 'expected literal "expected positive integer as index"'],
  ['lower(http.host, "x") eq "a"', "invalid number of arguments"],
  ['lower() eq "a"', "invalid number of arguments"],
  ["len(1) eq 1", "invalid type of argument #0: expected value of type Bytes or Array<_>, but got Int"],
  ['starts_with("a", "b")', "invalid kind of argument #0: expected argument of kind Field, but got Literal"],
  [
    "cidr(ip.src, 33, 64) eq 10.0.0.0",
    /^invalid value of argument #1: invalid argument: "expected an integer between 1 and 32"$/,
  ],
  ['concat(http.host, http.request.headers.names[*])[0] eq "a"', "invalid use of map each access operator"],
  ['concat(http.host, 1) eq "a"', "invalid type of argument #1: expected value of type Bytes, but got Int"],
  ["any(http.request.headers.names)", "expected value of type Array<Bool>, but got Array<Bytes>"],
  ['any("a")', "expected value of type Array<Bool>, but got Bytes"],
  ["(ssl", 'expected literal ")"'],
  ["ssl)", "unrecognised input"],
  ["ip.src in { 1.2.3.4", "expected IP address character"],
  ["ip.src in $Bad", 'invalid list name "B"'],
  ['http.host eq "a', "could not find an ending quote"],
  ['http.host eq "\\x4"', "invalid digit found in string while parsing with radix 16"],
  ['regex_replace(http.host, "a", "b") eq regex_replace(http.host, "a", "b")', 'expected " or #'],
  [
    'regex_replace(wildcard_replace(http.host, "*", "b"), "a", "b") eq "x"',
    "regex_replace and wildcard_replace cannot be nested in one another",
  ],
];

describe("parseExpression: accepts valid expressions", () => {
  it.each(ACCEPTED)("%j", (text) => {
    const result = parseExpression(text);
    if (!result.ok) throw new Error(result.error.formatted);
    expect(result.ast.type).toBe("Bool");
  });
});

describe("parseExpression: rejects invalid expressions", () => {
  it.each(REJECTED)("%j", (text, message) => {
    const result = parseExpression(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.message).toMatch(message);
  });

  it("refuses a second regex_replace in one expression", () => {
    const result = parseExpression(
      'regex_replace(http.host, "a", "b") eq "x" or regex_replace(http.host, "a", "b") eq "y"',
    );
    expect(result).toMatchObject({
      ok: false,
      error: { message: "regex_replace can be used only once per expression" },
    });
  });
});

function ast(text: string, fields = WIREFILTER_SCHEME): Expression {
  const result = parseExpression(text, { fields });
  if (!result.ok) throw new Error(result.error.formatted);
  return result.ast;
}

function shape(e: Expression): unknown {
  switch (e.kind) {
    case "combining":
      return { [e.op]: e.items.map(shape) };
    case "not":
      return { not: shape(e.arg) };
    case "group":
      return [shape(e.expr)];
    case "quantifier":
      return e.quantifier;
    case "comparison":
      return e.lhs.target.name;
  }
}

describe("parseExpression: precedence and grouping", () => {
  it("binds and tighter than xor tighter than or", () => {
    expect(shape(ast("bool or bool xor bool and bool"))).toEqual({
      or: ["bool", { xor: ["bool", { and: ["bool", "bool"] }] }],
    });
    expect(shape(ast("bool and bool or bool and bool"))).toEqual({
      or: [{ and: ["bool", "bool"] }, { and: ["bool", "bool"] }],
    });
  });

  it("flattens runs of one operator, whatever the spelling", () => {
    expect(shape(ast("bool and bool && bool"))).toEqual({ and: ["bool", "bool", "bool"] });
  });

  it("binds not to the next simple expression only", () => {
    expect(shape(ast("not bool and bool"))).toEqual({ and: [{ not: "bool" }, "bool"] });
    expect(shape(ast("not (bool and bool)"))).toEqual({ not: [{ and: ["bool", "bool"] }] });
  });

  it("stores operators in English spelling, so symbol and word forms give equal trees", () => {
    const words = ast('str eq "a" and not num ne 1 or num ge 2 xor num le 3 and num gt 4 and num lt 5');
    const symbols = ast('str == "a" && ! num != 1 || num >= 2 ^^ num <= 3 && num > 4 && num < 5');
    expect(withoutSpans(symbols)).toEqual(withoutSpans(words));
  });

  it("reads integers in every base", () => {
    const values = ["83", "0123", "0x53"].map((lit) => {
      const e = ast(`num eq ${lit}`);
      return e.kind === "comparison" && e.op === "eq" && e.rhs.kind === "int" ? e.rhs.value : undefined;
    });
    expect(values).toEqual([83n, 83n, 83n]);
  });

  it("decodes escapes to exact bytes", () => {
    const e = ast('str eq "\\x41\\101\\"\\\\\\xff"');
    expect(e.kind === "comparison" && e.op === "eq" && e.rhs.kind === "bytes" ? e.rhs.bytes : null).toEqual([
      0x41, 0x41, 0x22, 0x5c, 0xff,
    ]);
  });

  it("types a mapped comparison as Array<Bool>", () => {
    const e = ast('any(str_arr[*] eq "a")');
    expect(e.kind === "quantifier" ? e.arg.type : null).toEqual({ kind: "Array", of: "Bool" });
  });

  it("spans point into the original text", () => {
    const e = ast("  bool  ");
    expect(e.span).toEqual({ start: 2, end: 6 });
  });
});

describe("printExpression", () => {
  it("prints canonical text that reparses to the same tree", () => {
    for (const text of ACCEPTED) {
      const first = parseExpression(text);
      if (!first.ok) throw new Error(first.error.formatted);
      const printed = printExpression(first.ast);
      const second = parseExpression(printed);
      if (!second.ok) throw new Error(`${printed}\n${second.error.formatted}`);
      expect(withoutSpans(second.ast)).toEqual(withoutSpans(first.ast));
    }
  });

  it("keeps a leading U+FEFF in a string or map key: the printed expression matches the same bytes", () => {
    // Regression: the bytes were decoded with a decoder that drops a leading byte-order mark, so
    // "\xef\xbb\xbfa" printed as "a", an expression that matches other requests.
    for (const [text, printed] of [
      ['http.host eq "\\xef\\xbb\\xbfa"', 'http.host eq "\uFEFFa"'],
      ['http.request.headers["\\xef\\xbb\\xbfx-a"][0] eq "b"', 'http.request.headers["\uFEFFx-a"][0] eq "b"'],
    ] as const) {
      const first = parseExpression(text);
      if (!first.ok) throw new Error(first.error.formatted);
      expect(printExpression(first.ast)).toBe(printed);
      const again = parseExpression(printExpression(first.ast));
      if (!again.ok) throw new Error(again.error.formatted);
      expect(withoutSpans(again.ast)).toEqual(withoutSpans(first.ast));
    }
  });

  it("uses English operators and canonical literals", () => {
    const result = parseExpression(
      'http.host == "a" && !ssl || cf.edge.server_port in {0x50 0777} && ip.src in {2001:0db8:0::1}',
    );
    expect(result.ok && printExpression(result.ast)).toBe(
      'http.host eq "a" and not ssl or cf.edge.server_port in { 80 511 } and ip.src in { 2001:db8::1 }',
    );
  });
});

describe("limits", () => {
  it(`accepts exactly ${MAX_EXPRESSION_LENGTH_CHARS} characters and refuses one more`, () => {
    const base = 'http.host eq ""';
    const fits = `http.host eq "${"a".repeat(MAX_EXPRESSION_LENGTH_CHARS - base.length)}"`;
    expect(fits.length).toBe(MAX_EXPRESSION_LENGTH_CHARS);
    expect(parseExpression(fits).ok).toBe(true);
    const tooLong = `http.host eq "${"a".repeat(MAX_EXPRESSION_LENGTH_CHARS + 1 - base.length)}"`;
    const result = parseExpression(tooLong);
    expect(result).toMatchObject({
      ok: false,
      error: { line: 1, column: 4097, message: "expression is too long: it must be at most 4096 characters" },
    });
  });

  it("counts characters, not UTF-16 units", () => {
    const emoji = "😀".repeat(MAX_EXPRESSION_LENGTH_CHARS - 15);
    expect(parseExpression(`http.host eq "${emoji}"`).ok).toBe(true);
  });

  it(`allows ${DEFAULT_MAX_NESTING_DEPTH} levels of nesting and refuses one more`, () => {
    const nest = (n: number) => `${"(".repeat(n)}ssl${")".repeat(n)}`;
    expect(parseExpression(nest(DEFAULT_MAX_NESTING_DEPTH)).ok).toBe(true);
    const result = parseExpression(nest(DEFAULT_MAX_NESTING_DEPTH + 1));
    expect(result).toMatchObject({
      ok: false,
      error: { column: DEFAULT_MAX_NESTING_DEPTH + 1, message: "maximum nesting depth exceeded (limit: 128)" },
    });
  });

  it("counts not, quantifiers and calls as nesting, as wirefilter does", () => {
    const options = { fields: WIREFILTER_SCHEME, maxNestingDepth: 1 };
    expect(parseExpression("((bool))", options)).toMatchObject({ ok: false, error: { column: 2 } });
    expect(parseExpression("!!bool", options)).toMatchObject({ ok: false, error: { column: 2 } });
    expect(parseExpression("!!bool", { ...options, maxNestingDepth: 2 }).ok).toBe(true);
    expect(parseExpression("bool and (bool or bool)", { ...options, maxNestingDepth: 0 })).toMatchObject({
      ok: false,
      error: { column: 10, message: "maximum nesting depth exceeded (limit: 0)" },
    });
    expect(parseExpression('lower(lower(http.host)) eq "a"', { maxNestingDepth: 1 }).ok).toBe(false);
  });

  it("never overflows the stack, even with a huge nesting allowance", () => {
    const deep = `${"(".repeat(100_000)}ssl${")".repeat(100_000)}`;
    expect(parseExpression(deep, { maxNestingDepth: 1_000_000, maxLengthChars: 1_000_000 }).ok).toBe(false);
  });
});

describe("lookupField", () => {
  it.each([
    ["http.host", "Bytes"],
    ["ip.src", "Ip"],
    ["ssl", "Bool"],
    ["cf.bot_management.score", "Int"],
    ["http.request.headers", { kind: "Map", of: { kind: "Array", of: "Bytes" } }],
    ["cf.random_seed", "Bytes"],
  ])("%s is %j", (name, type) => {
    expect(lookupField(name)).toEqual(type);
  });

  it("knows nothing else", () => {
    expect(lookupField("http.hots")).toBeUndefined();
  });
});
