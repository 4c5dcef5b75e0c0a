import { describe, expect, it } from "vitest";
import { parseExpression } from "../../../src/api/rules-language/index";
import { checkRegexSyntax } from "../../../src/api/rules-language/regex-syntax";

// Patterns the regex crate accepts with wirefilter's settings (Unicode off, UTF-8 off).
const VALID = [
  "^/admin",
  "(?i)^/wp-login\\.php$",
  "(?s).*",
  "(?m)^a$",
  "(?x) a b # comment\n c",
  "(?i:abc)d",
  "(?-i:abc)",
  "(?i-s:a.b)",
  "(?imsUxR)a",
  "(?P<name>a+)",
  "(?<name>a+)",
  "(?<n1>a)(?<n_2>b)(?P<a.b[0]>c)",
  "(?-u:\\xFF)",
  "(?u)\\pL",
  "(?u)\\p{L}",
  "(?u)\\p{Greek}",
  "(?u)\\p{Script=Greek}",
  "(?u)\\p{sc:latin}",
  "(?u)\\p{gc=Lu}",
  "(?u)\\P{Uppercase_Letter}",
  "(?u)\\p{^Lu}",
  "(?u:\\w+)",
  "\\d\\w\\s\\D\\W\\S",
  "\\x41\\x{263A}\\u0041\\U0001F600",
  "\\a\\f\\t\\n\\r\\v",
  "\\A\\z\\b\\B\\<\\>",
  "\\b{start}a\\b{end}\\b{start-half}\\b{end-half}",
  "\\b{2}",
  "[a-z0-9_]",
  "[^]a]",
  "[]a]",
  "[-a]",
  "[a-]",
  "[[:alpha:][:^digit:]]",
  "[a-z&&[^aeiou]]",
  "[a-z--b]",
  "[a~~b]",
  // A `-` followed by `--` ends the item: these are differences, not ranges `a`..`-`.
  "[a--b]",
  "[0--9]",
  "(?x)[a - -b]",
  "[\\d\\w.]",
  "[\\x00-\\x{10FFFF}]",
  "a{2}b{2,}c{2,5}d{,3}e{2,5}?",
  "a*?b+?c??",
  "a**",
  "^*",
  "()",
  "a|",
  "|a",
  "\\/\\\"\\ \\'\\@\\%\\=\\!\\,",
  "é+",
  "😀{2}",
  "(googlebot|facebook)",
];

// Patterns it refuses, with the message of the error.
const INVALID: [string, string][] = [
  ["\\Qa.b\\E", "unrecognized escape sequence"],
  ["\\e", "unrecognized escape sequence"],
  ["\\K", "unrecognized escape sequence"],
  ["\\Z", "unrecognized escape sequence"],
  ["\\é", "unrecognized escape sequence"],
  ["\\pL", "Unicode not allowed here"],
  ["\\p{Greek}", "Unicode not allowed here"],
  ["[\\pL]", "Unicode not allowed here"],
  ["(?u)\\p{NotAProperty}", "Unicode property not found"],
  ["(?u)\\p{sc=Nope}", "Unicode property value not found"],
  ["(?u)\\p{", "incomplete escape sequence, reached end of pattern prematurely"],
  ["(?=a)", "look-around, including look-ahead and look-behind, is not supported"],
  ["(?!a)", "look-around, including look-ahead and look-behind, is not supported"],
  ["(?<=a)", "look-around, including look-ahead and look-behind, is not supported"],
  ["(?<!a)", "look-around, including look-ahead and look-behind, is not supported"],
  ["(a)\\1", "backreferences are not supported"],
  ["\\0", "backreferences are not supported"],
  ["(a", "unclosed group"],
  ["(?", "unclosed group"],
  ["a)", "unopened group"],
  ["(?i", "expected flag but got end of regex"],
  ["(?z)", "unrecognized flag"],
  ["(?P=n)", "unrecognized flag"],
  ["(?ii)", "duplicate flag"],
  ["(?i-)", "dangling flag negation operator"],
  ["(?--i)", "flag negation operator repeated"],
  ["(?)", "repetition operator missing expression"],
  ["(?P<>a)", "empty capture group name"],
  ["(?P<a", "unclosed capture group name"],
  ["(?P<1a>a)", "invalid capture group character"],
  ["(?P<a-b>a)", "invalid capture group character"],
  ["(?P<n>a)(?P<n>b)", "duplicate capture group name"],
  ["*a", "repetition operator missing expression"],
  ["a|*", "repetition operator missing expression"],
  ["(*)", "repetition operator missing expression"],
  ["(?i)*", "repetition operator missing expression"],
  ["{1}", "repetition operator missing expression"],
  ["a{", "unclosed counted repetition"],
  ["a{1", "unclosed counted repetition"],
  ["a{1,2", "unclosed counted repetition"],
  ["a{x}", "repetition quantifier expects a valid decimal"],
  ["a{2,1}", "invalid repetition count range, the start must be <= the end"],
  ["a{99999999999}", "decimal literal invalid"],
  ["[a", "unclosed character class"],
  ["[]", "unclosed character class"],
  ["[a[b]", "unclosed character class"],
  ["[z-a]", "invalid character class range, the start must be <= the end"],
  ["[\\d-z]", "invalid range boundary, must be a literal"],
  ["[a-\\w]", "invalid range boundary, must be a literal"],
  ["[\\b]", "invalid escape sequence found in character class"],
  ["\\x{}", "hexadecimal literal empty"],
  ["\\x{110000}", "hexadecimal literal is not a Unicode scalar value"],
  ["\\uD800", "hexadecimal literal is not a Unicode scalar value"],
  ["\\xG0", "invalid hexadecimal digit"],
  ["\\x4", "incomplete escape sequence, reached end of pattern prematurely"],
  ["a\\", "incomplete escape sequence, reached end of pattern prematurely"],
  ["\\b{foo}", "unrecognized special word boundary assertion, valid choices are: start, end, start-half or end-half"],
  ["\\b{start", "special word boundary assertion is either unclosed or contains an invalid character"],
  // The nesting limit is checked only once the whole pattern has parsed: an unclosed group wins.
  ["(".repeat(251), "unclosed group"],
  [`${"(".repeat(251)}${")".repeat(251)}`, "exceed the maximum number of nested parentheses/brackets (250)"],
];

describe("checkRegexSyntax", () => {
  it.each(VALID)("accepts %j", (pattern) => {
    expect(checkRegexSyntax(pattern)).toBeNull();
  });

  it.each(INVALID)("refuses %j: %s", (pattern, message) => {
    const error = checkRegexSyntax(pattern);
    expect(error).not.toBeNull();
    expect(error?.split("\n").at(-1)).toBe(`error: ${message}`);
    expect(error?.startsWith(`regex parse error:\n    ${pattern}\n    `)).toBe(true);
  });

  it("points at the offending part of the pattern", () => {
    expect(checkRegexSyntax("ab\\Qc")).toBe(
      "regex parse error:\n    ab\\Qc\n      ^^\nerror: unrecognized escape sequence",
    );
    expect(checkRegexSyntax("a(?=b)")).toBe(
      "regex parse error:\n    a(?=b)\n     ^^^\nerror: look-around, including look-ahead and look-behind, is not supported",
    );
  });

  it("(?x) ignores whitespace and comments, also inside classes and counts", () => {
    expect(checkRegexSyntax("(?x)[ a - z ]")).toBeNull();
    expect(checkRegexSyntax("(?x)a{ 1 , 2 }")).toBeNull();
    expect(checkRegexSyntax("(?x) # only a comment")).toBeNull();
    // Without x, a space in a count is not a digit.
    expect(checkRegexSyntax("a{ 1}")).toMatch(/repetition quantifier expects a valid decimal$/);
  });

  it("flags last until the end of their group", () => {
    expect(checkRegexSyntax("((?u)\\pL)")).toBeNull();
    expect(checkRegexSyntax("((?u)a)\\pL")).toMatch(/Unicode not allowed here$/);
    expect(checkRegexSyntax("(?u:a)\\pL")).toMatch(/Unicode not allowed here$/);
    expect(checkRegexSyntax("(?u)(?-u:\\pL)")).toMatch(/Unicode not allowed here$/);
  });
});

describe("the nesting limit, as the regex crate counts it", () => {
  const groups = (n: number, inner: string) => `${"(".repeat(n)}${inner}${")".repeat(n)}`;
  const NEST = "error: exceed the maximum number of nested parentheses/brackets (250)";
  /** The caret line of an error: its offset and width. */
  const caret = (error: string | null) => {
    const line = error?.split("\n")[2] ?? "";
    const marks = line.slice(4);
    return { at: marks.indexOf("^"), width: marks.trim().length, last: error?.split("\n").at(-1) };
  };

  it("counts a concatenation, an alternation and a repetition as a level, not only groups", () => {
    expect(checkRegexSyntax(groups(250, "a"))).toBeNull();
    expect(checkRegexSyntax(groups(249, "ab"))).toBeNull();
    expect(checkRegexSyntax(groups(249, "a|b"))).toBeNull();
    expect(checkRegexSyntax(`${groups(249, "a")}+`)).toBeNull();
    // One level more: the deepest node is reported with its span.
    expect(caret(checkRegexSyntax(groups(250, "ab")))).toEqual({ at: 250, width: 2, last: NEST });
    expect(caret(checkRegexSyntax(groups(250, "a|b")))).toEqual({ at: 250, width: 3, last: NEST });
    expect(caret(checkRegexSyntax(`${groups(250, "a")}+`))).toEqual({ at: 249, width: 3, last: NEST });
  });

  it("counts stacked repetitions", () => {
    expect(checkRegexSyntax(`a${"*".repeat(250)}`)).toBeNull();
    expect(caret(checkRegexSyntax(`a${"*".repeat(251)}`))).toEqual({ at: 0, width: 2, last: NEST });
  });

  it("counts class unions and set operations, which nest to the left", () => {
    expect(checkRegexSyntax(`[a${"--b".repeat(249)}]`)).toBeNull();
    expect(caret(checkRegexSyntax(`[a${"--b".repeat(250)}]`))).toEqual({ at: 1, width: 4, last: NEST });
    expect(checkRegexSyntax(`${"[".repeat(250)}a${"]".repeat(250)}`)).toBeNull();
    // 250 nested classes, then a union of two items: 251 levels.
    expect(caret(checkRegexSyntax(`${"[".repeat(250)}ab${"]".repeat(250)}`))).toEqual({
      at: 250,
      width: 2,
      last: NEST,
    });
  });

  it("reports syntax errors before the nesting limit, and the nesting limit before Unicode classes", () => {
    expect(checkRegexSyntax(`${groups(251, "a")}(`)).toMatch(/error: unclosed group$/);
    expect(checkRegexSyntax("\\pL(")).toMatch(/error: unclosed group$/);
    expect(checkRegexSyntax(`\\pL${groups(251, "a")}`)).toMatch(/nested parentheses\/brackets \(250\)$/);
    expect(checkRegexSyntax("(?u)\\p{Nope}a{2,1}")).toMatch(/invalid repetition count range/);
  });

  it("stays linear and off the call stack for the longest expressions", () => {
    // CPU time of this process, not wall time: other processes holding the cores of a loaded
    // machine do not count against the check (linear-checks.test.ts measures the same way).
    const cpuMs = () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    };
    const start = cpuMs();
    for (const p of [groups(2000, "ab"), `a${"*".repeat(4000)}`, `[a${"--b".repeat(1300)}]`, "(a|".repeat(1000)]) {
      expect(checkRegexSyntax(p)).not.toBeNull();
    }
    expect(cpuMs() - start).toBeLessThan(2000);
  });
});

describe("matches in expressions", () => {
  it.each([
    'http.request.uri.path matches "(?i)^/admin"',
    'http.request.uri.path matches "(?i:/wp-)(?P<rest>.*)"',
    'http.user_agent matches "(?<bot>bot|crawler)"',
    'http.host matches r"(?-u:\\xff)"',
    'http.host matches "(?u)\\p{Greek}"',
    'http.host ~ "(?s).*"',
  ])("accepts %s", (expression) => {
    const r = parseExpression(expression);
    expect(r.ok ? "ok" : r.error.message).toBe("ok");
  });

  it.each([
    ['http.request.uri.path matches "\\Qa.b\\E"', "unrecognized escape sequence"],
    ['http.host matches "\\p{Greek}"', "Unicode not allowed here"],
    ['http.host matches "a(?=b)"', "look-around"],
  ])("refuses %s", (expression, message) => {
    const r = parseExpression(expression);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain(message);
  });

  it("regex_replace checks its pattern (a quoted string, so backslashes are doubled) by the same rules", () => {
    expect(parseExpression('regex_replace(http.host, "(?i)^www\\\\.", "") eq "a"').ok).toBe(true);
    expect(parseExpression('regex_replace(http.host, "\\\\Qa\\\\E", "") eq "a"').ok).toBe(false);
  });
});

describe("fields the public documentation uses", () => {
  it.each([
    'cf.zone.name eq "example.com"',
    'cf.zone.name in {"example.com" "example.net"} and http.request.uri.path matches "(?i)^/login"',
    'cf.zone.plan eq "ENT"',
    "cf.colo.id eq 21",
    'cf.colo.region eq "WNAM"',
  ])("parses %s", (expression) => {
    const r = parseExpression(expression);
    expect(r.ok ? "ok" : r.error.message).toBe("ok");
  });

  it("types cf.zone.name as a string", () => {
    const r = parseExpression("cf.zone.name eq 1");
    expect(r.ok).toBe(false);
  });
});
