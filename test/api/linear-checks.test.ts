/**
 * Header and expression checks must cost time linear in their input: a client controls every
 * header and expression, and a check that backtracks lets one request hold the process for seconds.
 * Each case feeds a large adversarial input (sizes where a quadratic check takes minutes) and
 * asserts a bound that a linear check meets with a wide margin on any machine.
 */
import { describe, expect, it } from "vitest";
import { validateAuthHeaders, validateJsonContentType } from "../../src/api/auth";
import { parseExpression } from "../../src/api/rules-language/index";
import { checkRegexSyntax } from "../../src/api/rules-language/regex-syntax";

const KEY = "c2547eb745079dac9320b638f5e225cf483cc";
const MiB = 1 << 20;
// A linear scan of 1 MiB takes milliseconds; a quadratic one takes minutes. The bound is generous
// so that a slow shared CI machine never fails it, and still far below the quadratic cost.
const BOUND_MS = 3000;

function timed(fn: () => unknown): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

describe("linear header checks", () => {
  const emails: [string, string][] = [
    ["dots after the @ and a space before the end", `a@${"a.".repeat(MiB / 2)} x`],
    ["dots and no @", "a.".repeat(MiB / 2)],
    ["many @", "@".repeat(MiB)],
    ["a long local part and a bad domain", `${"a".repeat(MiB)}@b`],
    ["an address ending in whitespace inside", `a@b.${"c.".repeat(MiB / 2)}\u2028x`],
  ];
  it.each(emails)("X-Auth-Email: %s is refused in linear time", (_name, email) => {
    let result: ReturnType<typeof validateAuthHeaders> | undefined;
    const ms = timed(() => {
      result = validateAuthHeaders({ "X-Auth-Email": email, "X-Auth-Key": KEY });
    });
    expect(result?.ok).toBe(false);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it("X-Auth-Email: a long but valid address is accepted in linear time", () => {
    const email = `${"a".repeat(MiB)}@${"b.".repeat(MiB / 4)}com`;
    let result: ReturnType<typeof validateAuthHeaders> | undefined;
    const ms = timed(() => {
      result = validateAuthHeaders({ "X-Auth-Email": email, "X-Auth-Key": KEY });
    });
    expect(result?.ok).toBe(true);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it.each([
    ["Authorization", `Bearer ${"a".repeat(MiB)}==x`],
    ["Authorization", `Bearer ${"=".repeat(MiB)}`],
    ["Authorization", `${" ".repeat(MiB)}Bearer x${" ".repeat(MiB)}!`],
    ["X-Auth-Key", "a".repeat(MiB)],
  ])("%s: a hostile 1 MiB value is refused in linear time", (name, value) => {
    const headers = name === "X-Auth-Key" ? { "X-Auth-Email": "a@b.co", [name]: value } : { [name]: value };
    let ok: boolean | undefined;
    const ms = timed(() => {
      ok = validateAuthHeaders(headers).ok;
    });
    expect(ok).toBe(false);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it("Content-Type: a hostile value is refused in linear time", () => {
    let ok: boolean | undefined;
    const ms = timed(() => {
      ok = validateJsonContentType({ "Content-Type": `application/json${";".repeat(MiB)}` }).ok;
    });
    expect(ok).toBe(true);
    expect(ms).toBeLessThan(BOUND_MS);
  });
});

describe("linear expression checks", () => {
  const n = 200_000;
  const patterns: [string, string][] = [
    ["open groups", "(".repeat(n)],
    ["flag groups", "(?i)".repeat(n)],
    ["counted repetitions", `a${"{1,2}".repeat(n)}`],
    ["unclosed counts", `a${"{1".repeat(n)}`],
    ["ASCII class openers", `[${"[:".repeat(n)}`],
    ["nested class openers", "[".repeat(n)],
    ["Unicode classes in Unicode mode", `(?u)${"\\pL".repeat(n)}`],
    ["unclosed Unicode classes", `(?u)${"\\p{".repeat(n)}`],
    ["escapes and ranges", "[a-z\\x{41}-\\x{5A}]".repeat(n / 10)],
    ["comments in x mode", `(?x)${"# c\n".repeat(n)}`],
    ["named groups", Array.from({ length: n / 10 }, (_, i) => `(?<g${i}>a)`).join("")],
  ];
  it.each(patterns)("checkRegexSyntax: %s are checked in linear time", (_name, pattern) => {
    const ms = timed(() => checkRegexSyntax(pattern));
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it("parseExpression: a long `matches` pattern with many groups parses in linear time", () => {
    const pattern = "(?:a|b)".repeat(100_000);
    let ok: boolean | undefined;
    const ms = timed(() => {
      ok = parseExpression(`http.host matches "${pattern}"`, { maxLengthChars: Number.POSITIVE_INFINITY }).ok;
    });
    expect(ok).toBe(true);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it.each([
    ["many parentheses", `${"(".repeat(100_000)}ssl`],
    ["a long or-chain", Array.from({ length: 20_000 }, () => "ssl").join(" or ")],
    ["a huge set", `ip.src in {${" 10.0.0.1".repeat(50_000)} }`],
    ["an unterminated string", `http.host eq "${"\\\\".repeat(200_000)}`],
  ])("parseExpression: %s are answered in linear time", (_name, text) => {
    const ms = timed(() => parseExpression(text, { maxLengthChars: Number.POSITIVE_INFINITY }));
    expect(ms).toBeLessThan(BOUND_MS);
  });
});
