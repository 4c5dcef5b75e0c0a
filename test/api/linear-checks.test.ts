/**
 * Header and expression checks must cost time linear in their input: a client controls every
 * header and expression, and a check that backtracks lets one request hold the process for seconds.
 * Each case times an adversarial input and the same input eight times as large, and asserts that
 * the cost grew like the input (a quadratic check grows 64-fold), never an absolute time.
 */
import { describe, expect, it } from "vitest";
import { validateAuthHeaders, validateJsonContentType } from "../../src/api/auth";
import { parseExpression } from "../../src/api/rules-language/index";
import { checkRegexSyntax } from "../../src/api/rules-language/regex-syntax";

const KEY = "c2547eb745079dac9320b638f5e225cf483cc";
const MiB = 1 << 20;

/** Below this the large input passes whatever the ratio: timer noise on a loaded machine. */
const FLOOR_MS = 1000;

/**
 * The CPU time this process has used, in milliseconds (its threads, the garbage collector's
 * included). Unlike the wall clock it does not count the time other processes hold the cores, so a
 * machine loaded by other work does not inflate one size's cost and not the other's.
 */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Asserts that `check` grows linearly: eight times the input must cost less than 24 times as much
 * (linear is eight, quadratic 64). The two sizes are measured alternately, five times each, in CPU
 * time, and the cheapest run of each is compared, so a busy machine's pauses and slow phases fall
 * on both sizes alike and stay out of the ratio; the floor keeps inputs too fast to measure reliably
 * from failing on noise: at these sizes a quadratic check takes far longer than the floor.
 */
function expectLinear<T>(make: (n: number) => T, check: (input: T) => unknown, n: number): void {
  const small = make(n);
  const large = make(8 * n);
  let smallMs = Number.POSITIVE_INFINITY;
  let largeMs = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    let start = cpuMs();
    check(small);
    smallMs = Math.min(smallMs, cpuMs() - start);
    start = cpuMs();
    check(large);
    largeMs = Math.min(largeMs, cpuMs() - start);
  }
  expect(largeMs).toBeLessThan(Math.max(24 * smallMs, FLOOR_MS));
}

const auth = (headers: Record<string, string>) => validateAuthHeaders(headers);
const withEmail = (email: string) => ({ "X-Auth-Email": email, "X-Auth-Key": KEY });
const parse = (text: string) => parseExpression(text, { maxLengthChars: Number.POSITIVE_INFINITY });
const N = MiB / 16;

describe("linear header checks", () => {
  const emails: [string, (n: number) => string][] = [
    ["dots after the @ and a space before the end", (n) => `a@${"a.".repeat(n)} x`],
    ["dots and no @", (n) => "a.".repeat(n)],
    ["many @", (n) => "@".repeat(n)],
    ["a long local part and a bad domain", (n) => `${"a".repeat(n)}@b`],
    ["an address ending in whitespace inside", (n) => `a@b.${"c.".repeat(n)}\u2028x`],
  ];
  it.each(emails)("X-Auth-Email: %s is refused in linear time", (_name, make) => {
    expect(auth(withEmail(make(8 * N))).ok).toBe(false);
    expectLinear((n) => withEmail(make(n)), auth, N);
  });

  it("X-Auth-Email: a long but valid address is accepted in linear time", () => {
    const make = (n: number) => withEmail(`${"a".repeat(n)}@${"b.".repeat(n / 4)}com`);
    expect(auth(make(8 * N)).ok).toBe(true);
    expectLinear(make, auth, N);
  });

  it.each([
    ["Authorization", (n: number) => ({ Authorization: `Bearer ${"a".repeat(n)}==x` })],
    ["Authorization", (n: number) => ({ Authorization: `Bearer ${"=".repeat(n)}` })],
    ["Authorization", (n: number) => ({ Authorization: `${" ".repeat(n)}Bearer x${" ".repeat(n)}!` })],
    ["X-Auth-Key", (n: number) => ({ "X-Auth-Email": "a@b.co", "X-Auth-Key": "a".repeat(n) })],
  ])("%s: a hostile value is refused in linear time", (_name, make) => {
    expect(auth(make(8 * N)).ok).toBe(false);
    expectLinear(make, auth, N);
  });

  it("Content-Type: a hostile value is checked in linear time", () => {
    const make = (n: number) => ({ "Content-Type": `application/json${";".repeat(n)}` });
    expect(validateJsonContentType(make(8 * N)).ok).toBe(true);
    expectLinear(make, validateJsonContentType, N);
  });
});

describe("linear expression checks", () => {
  const patterns: [string, (n: number) => string][] = [
    ["open groups", (n) => "(".repeat(n)],
    ["flag groups", (n) => "(?i)".repeat(n)],
    ["counted repetitions", (n) => `a${"{1,2}".repeat(n)}`],
    ["unclosed counts", (n) => `a${"{1".repeat(n)}`],
    ["ASCII class openers", (n) => `[${"[:".repeat(n)}`],
    ["nested class openers", (n) => "[".repeat(n)],
    ["Unicode classes in Unicode mode", (n) => `(?u)${"\\pL".repeat(n)}`],
    ["unclosed Unicode classes", (n) => `(?u)${"\\p{".repeat(n)}`],
    ["escapes and ranges", (n) => "[a-z\\x{41}-\\x{5A}]".repeat(n / 10)],
    ["comments in x mode", (n) => `(?x)${"# c\n".repeat(n)}`],
    ["named groups", (n) => Array.from({ length: n / 10 }, (_, i) => `(?<g${i}>a)`).join("")],
  ];
  it.each(patterns)("checkRegexSyntax: %s are checked in linear time", (_name, make) => {
    expectLinear(make, checkRegexSyntax, 25_000);
  });

  it("parseExpression: a long `matches` pattern with many groups parses in linear time", () => {
    const make = (n: number) => `http.host matches "${"(?:a|b)".repeat(n)}"`;
    expect(parse(make(8 * 12_500)).ok).toBe(true);
    expectLinear(make, parse, 12_500);
  });

  it.each([
    ["many parentheses", (n: number) => `${"(".repeat(n)}ssl`],
    ["a long or-chain", (n: number) => Array.from({ length: n }, () => "ssl").join(" or ")],
    ["a huge set", (n: number) => `ip.src in {${" 10.0.0.1".repeat(n)} }`],
    ["an unterminated string", (n: number) => `http.host eq "${"\\\\".repeat(n)}`],
  ])("parseExpression: %s are answered in linear time", (_name, make) => {
    expectLinear(make, parse, 2_500);
  });
});
