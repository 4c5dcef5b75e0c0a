/**
 * Token-level scanners for the rules language. Each takes the source (already cut at the end of the
 * trimmed expression) and a position, and returns the value and the position after it, or throws a
 * {@link ParseFailure} whose span follows wirefilter's choice for that error (often "the rest of the
 * input", which the formatter clips to the line).
 */
import type {
  BytesLiteral,
  CidrLiteral,
  IntLiteral,
  IntRangeLiteral,
  IpLiteral,
  IpRangeLiteral,
  RegexLiteral,
} from "./ast";
import { ParseFailure } from "./errors";
import { checkRegexSyntax } from "./regex-syntax";

/** A scanned value and the position just after it. */
export type Scanned<T> = readonly [value: T, end: number];

/** wirefilter skips only these between tokens; a tab is not whitespace inside an expression. */
const SPACE = new Set([" ", "\r", "\n"]);

/**
 * Skips `' '`, `'\r'` and `'\n'`.
 *
 * @example
 * skipSpace("  a", 0); // 2
 */
export function skipSpace(src: string, pos: number): number {
  while (pos < src.length && SPACE.has(src[pos] ?? "")) pos++;
  return pos;
}

/**
 * Whether `src` has `literal` at `pos`.
 *
 * @example
 * at("a == b", 2, "=="); // true
 */
export function at(src: string, pos: number, literal: string): boolean {
  return src.startsWith(literal, pos);
}

/**
 * Requires `literal` at `pos` (wirefilter's `expect`): `expected literal "…"` over the rest otherwise.
 *
 * @example
 * expectLiteral("(a)", 0, "("); // 1
 */
export function expectLiteral(src: string, pos: number, literal: string): number {
  if (at(src, pos, literal)) return pos + literal.length;
  throw new ParseFailure(`expected literal ${JSON.stringify(literal)}`, pos, src.length);
}

function isAsciiAlnum(c: string | undefined): boolean {
  return c !== undefined && /^[A-Za-z0-9]$/.test(c);
}

/** Whether `c` is an identifier character (`[A-Za-z0-9_]`). */
export function isIdentChar(c: string | undefined): boolean {
  return c === "_" || isAsciiAlnum(c);
}

/** Whether `c` is an ASCII hex digit. */
export function isHexDigit(c: string | undefined): boolean {
  return c !== undefined && /^[0-9A-Fa-f]$/.test(c);
}

/**
 * Scans a dotted identifier `seg(.seg)*`; a dot must be followed by an identifier character.
 *
 * @example
 * scanIdentifier("http.host eq", 0); // ["http.host", 9]
 */
export function scanIdentifier(src: string, pos: number): Scanned<string> {
  const start = pos;
  for (;;) {
    const segStart = pos;
    while (isIdentChar(src[pos])) pos++;
    if (pos === segStart) throw new ParseFailure("expected identifier character", pos, src.length);
    if (src[pos] !== ".") break;
    pos++;
  }
  return [src.slice(start, pos), pos];
}

// ---------------------------------------------------------------------------------------------
// Integers, parsed the way Rust's `from_str_radix` does, so the error texts match wirefilter's.

const INT_ERRORS = {
  empty: "cannot parse integer from empty string",
  digit: "invalid digit found in string",
  posOverflow: "number too large to fit in target type",
  negOverflow: "number too small to fit in target type",
} as const;

/**
 * Rust's `from_str_radix` for an integer type with bounds `[min, max]`: an optional sign (`-` only
 * for signed types), then digits; the first bad digit or overflow, left to right, decides the error.
 *
 * @example
 * rustParseInt("0}", 16, 0n, 255n); // { error: "invalid digit found in string" }
 */
export function rustParseInt(
  text: string,
  radix: number,
  min: bigint,
  max: bigint,
): { value: bigint } | { error: string } {
  if (text.length === 0) return { error: INT_ERRORS.empty };
  let digits = text;
  let negative = false;
  if (text[0] === "+" || (text[0] === "-" && min < 0n)) {
    if (text.length === 1) return { error: INT_ERRORS.digit };
    negative = text[0] === "-";
    digits = text.slice(1);
  }
  let value = 0n;
  const big = BigInt(radix);
  for (const ch of digits) {
    const d = Number.parseInt(ch, 36);
    if (ch.length !== 1 || !/^[0-9A-Za-z]$/.test(ch) || Number.isNaN(d) || d >= radix)
      return { error: INT_ERRORS.digit };
    value = value * big + (negative ? -BigInt(d) : BigInt(d));
    if (value > max) return { error: INT_ERRORS.posOverflow };
    if (value < min) return { error: INT_ERRORS.negOverflow };
  }
  return { value };
}

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

function scanDigits(src: string, pos: number): number {
  let end = pos;
  // Any hex digit is taken whatever the radix, so that `09` fails on the `9` as wirefilter does.
  while (isHexDigit(src[end])) end++;
  if (end === pos) throw new ParseFailure("expected digit", pos, src.length);
  return end;
}

function parseI64(src: string, start: number, end: number, radix: number): bigint {
  const result = rustParseInt(src.slice(start, end), radix, I64_MIN, I64_MAX);
  if ("error" in result) throw new ParseFailure(`${result.error} while parsing with radix ${radix}`, start, end);
  return result.value;
}

/**
 * Scans an integer: `0x1f` (hex), `0123` (octal, so 83), `-12` (decimal).
 *
 * @example
 * scanInt("0123;", 0)[0].value; // 83n
 */
export function scanInt(src: string, pos: number): Scanned<IntLiteral> {
  const start = pos;
  if (at(src, pos, "0x")) {
    const end = scanDigits(src, pos + 2);
    return [{ kind: "int", value: parseI64(src, pos + 2, end, 16), span: { start, end } }, end];
  }
  if (src[pos] === "0") {
    const end = scanDigits(src, pos);
    return [{ kind: "int", value: parseI64(src, pos, end, 8), span: { start, end } }, end];
  }
  const digitsStart = src[pos] === "-" ? pos + 1 : pos;
  const end = scanDigits(src, digitsStart);
  return [{ kind: "int", value: parseI64(src, start, end, 10), span: { start, end } }, end];
}

/**
 * Scans a set element for an `Int` field: an integer or an ascending range `a..b`.
 *
 * @example
 * scanIntRange("2082..2083 }", 0)[0]; // { kind: "int-range", start: 2082n, end: 2083n, … }
 */
export function scanIntRange(src: string, pos: number): Scanned<IntLiteral | IntRangeLiteral> {
  const start = pos;
  const [first, afterFirst] = scanInt(src, pos);
  if (!at(src, afterFirst, "..")) return [first, afterFirst];
  const [last, end] = scanInt(src, afterFirst + 2);
  if (last.value < first.value) throw new ParseFailure("incompatible range bounds", start, end);
  return [{ kind: "int-range", start: first.value, end: last.value, span: { start, end } }, end];
}

// ---------------------------------------------------------------------------------------------
// Strings and bytes.

function pushUtf8(out: number[], ch: string): void {
  let cp = ch.codePointAt(0) ?? 0xfffd;
  // A lone surrogate cannot be encoded; Rust strings cannot hold one either, so use U+FFFD.
  if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
  if (cp < 0x80) out.push(cp);
  else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
  else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
}

/**
 * UTF-8 bytes of a string.
 *
 * @example
 * utf8Bytes("é"); // [0xc3, 0xa9]
 */
export function utf8Bytes(text: string): number[] {
  const out: number[] = [];
  for (const ch of text) pushUtf8(out, ch);
  return out;
}

/**
 * Strict UTF-8 decoding, `null` when the bytes are not valid UTF-8.
 *
 * @example
 * decodeUtf8([0x61]); // "a"
 * decodeUtf8([0xff]); // null
 * decodeUtf8([0xef, 0xbb, 0xbf, 0x61]); // "\uFEFFa": a leading U+FEFF is a character, kept
 */
export function decodeUtf8(bytes: readonly number[]): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(new Uint8Array(bytes));
  } catch {
    return null;
  }
}

/** Takes `count` characters (code points) or fails with wirefilter's `CountMismatch`. */
function take(src: string, pos: number, count: number): Scanned<string> {
  let end = pos;
  for (let i = 0; i < count; i++) {
    const cp = src.codePointAt(end);
    if (cp === undefined) {
      throw new ParseFailure(`expected ${count} characters, but found ${i}`, pos, src.length);
    }
    end += cp > 0xffff ? 2 : 1;
  }
  return [src.slice(pos, end), end];
}

function fixedByte(src: string, pos: number, digits: number, radix: number): Scanned<number> {
  const [text, end] = take(src, pos, digits);
  const result = rustParseInt(text, radix, 0n, 255n);
  if ("error" in result) throw new ParseFailure(`${result.error} while parsing with radix ${radix}`, pos, end);
  return [Number(result.value), end];
}

/**
 * Scans the body of a quoted string after its opening `"`; escapes are only `\"`, `\\`, `\xHH` and
 * `\OOO`.
 *
 * @example
 * scanQuotedBody('a\\x41"', 0); // [[97, 65], 6]
 */
export function scanQuotedBody(src: string, pos: number): Scanned<number[]> {
  const bodyStart = pos;
  const out: number[] = [];
  for (;;) {
    const cp = src.codePointAt(pos);
    if (cp === undefined) throw new ParseFailure("could not find an ending quote", bodyStart, src.length);
    const ch = String.fromCodePoint(cp);
    pos += ch.length;
    if (ch === '"') return [out, pos];
    if (ch !== "\\") {
      pushUtf8(out, ch);
      continue;
    }
    const escCp = src.codePointAt(pos);
    if (escCp === undefined) throw new ParseFailure("could not find an ending quote", bodyStart, src.length);
    const esc = String.fromCodePoint(escCp);
    if (esc === '"' || esc === "\\") {
      out.push(esc.charCodeAt(0));
      pos += 1;
    } else if (esc === "x") {
      const [byte, end] = fixedByte(src, pos + 1, 2, 16);
      out.push(byte);
      pos = end;
    } else if (esc >= "0" && esc <= "7") {
      const [byte, end] = fixedByte(src, pos, 3, 8);
      out.push(byte);
      pos = end;
    } else {
      throw new ParseFailure('expected ", xHH or OOO after \\', pos, pos + esc.length);
    }
  }
}

/**
 * Scans a raw string after its `r`: `#…#"…"#…#` with up to 255 `#`. Returns the raw text and the
 * number of hashes.
 *
 * @example
 * scanRawBody('#"a"b"#', 0); // [{ text: 'a"b', hashes: 1 }, 7]
 */
export function scanRawBody(src: string, pos: number): Scanned<{ text: string; hashes: number }> {
  const full = pos;
  let hashes = 0;
  while (src[pos + hashes] === "#") hashes++;
  if (hashes > 255) {
    throw new ParseFailure("invalid raw string hash count, there can't be more than 255 #s", full, src.length);
  }
  if (src[pos + hashes] !== '"') throw new ParseFailure('expected " or #', pos + hashes, src.length);
  const bodyStart = pos + hashes + 1;
  let i = bodyStart;
  for (;;) {
    if (i >= src.length) throw new ParseFailure("could not find an ending quote", full, src.length);
    if (src[i] !== '"') {
      i++;
      continue;
    }
    // Like wirefilter, consume every `#` after the quote, then accept if there were enough; any
    // extra `#` are left for the next token.
    let endHashes = 0;
    while (src[i + 1 + endHashes] === "#") endHashes++;
    if (endHashes >= hashes) return [{ text: src.slice(bodyStart, i), hashes }, i + 1 + hashes];
    i += 1 + endHashes;
  }
}

function scanByteString(src: string, start: number): Scanned<BytesLiteral> {
  const bytes: number[] = [];
  let [byte, pos] = fixedByte(src, start, 2, 16);
  bytes.push(byte);
  pos = scanSeparator(src, pos);
  for (;;) {
    [byte, pos] = fixedByte(src, pos, 2, 16);
    bytes.push(byte);
    const sep = src[pos];
    if (sep !== ":" && sep !== "-" && sep !== ".") break;
    pos++;
  }
  return [{ kind: "bytes", format: "hex", hashes: 0, bytes, text: decodeUtf8(bytes), span: { start, end: pos } }, pos];
}

function scanSeparator(src: string, pos: number): number {
  const [sep, end] = take(src, pos, 1);
  if (sep === ":" || sep === "-" || sep === ".") return end;
  throw new ParseFailure("expected byte separator", pos, end);
}

/**
 * Scans a quoted or raw string (what `wildcard` and function string arguments accept).
 *
 * @example
 * scanQuotedOrRaw('r"a"', 0)[0].format; // "raw"
 */
export function scanQuotedOrRaw(src: string, pos: number): Scanned<BytesLiteral> {
  const c = src[pos];
  if (c === undefined) throw new ParseFailure("unrecognised input", pos, src.length);
  if (c === '"') {
    const [bytes, end] = scanQuotedBody(src, pos + 1);
    return [
      { kind: "bytes", format: "quoted", hashes: 0, bytes, text: decodeUtf8(bytes), span: { start: pos, end } },
      end,
    ];
  }
  if (c === "r") {
    const [{ text, hashes }, end] = scanRawBody(src, pos + 1);
    return [{ kind: "bytes", format: "raw", hashes, bytes: utf8Bytes(text), text, span: { start: pos, end } }, end];
  }
  throw new ParseFailure('expected " or r', pos, src.length);
}

/**
 * Scans a `Bytes` value: a quoted string, a raw string, or hex pairs separated by `:`, `-` or `.`.
 *
 * @example
 * scanBytes("6F:72:67", 0)[0].bytes; // [0x6f, 0x72, 0x67]
 */
export function scanBytes(src: string, pos: number): Scanned<BytesLiteral> {
  const c = src[pos];
  if (c === undefined) throw new ParseFailure("unrecognised input", pos, src.length);
  if (c === '"' || c === "r") return scanQuotedOrRaw(src, pos);
  return scanByteString(src, pos);
}

// ---------------------------------------------------------------------------------------------
// IP addresses, with Rust's strict std parser and the `cidr` crate's rules inside sets.

const ADDR_ERROR = "invalid IP address syntax";

function parseIpv4Strict(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    // Rust rejects leading zeros ("01") and more than three digits.
    if (!/^[0-9]{1,3}$/.test(p) || (p.length > 1 && p[0] === "0")) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out;
}

function parseIpv6(text: string): number[] | null {
  // Mirrors Rust's `Ipv6Addr` parser: groups of 1–4 hex digits, one `::` standing for at least one
  // zero group, and an optional embedded IPv4 address taking the last two groups.
  let pos = 0;
  const readGroups = (limit: number): { groups: number[]; ipv4: boolean } => {
    const groups: number[] = [];
    for (let i = 0; i < limit; i++) {
      const save = pos;
      if (i > 0) {
        if (text[pos] !== ":") return { groups, ipv4: false };
        pos++;
      }
      if (i < limit - 1) {
        const m = /^[0-9]{1,3}(\.[0-9]{1,3}){3}/.exec(text.slice(pos));
        const v4 = m ? parseIpv4Strict(m[0]) : null;
        if (m && v4) {
          pos += m[0].length;
          groups.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0));
          return { groups, ipv4: true };
        }
      }
      const g = /^[0-9A-Fa-f]{1,4}/.exec(text.slice(pos));
      if (!g) {
        pos = save;
        return { groups, ipv4: false };
      }
      pos += g[0].length;
      groups.push(Number.parseInt(g[0], 16));
    }
    return { groups, ipv4: false };
  };
  const head = readGroups(8);
  if (head.groups.length === 8) return pos === text.length ? head.groups : null;
  if (head.ipv4 || !text.startsWith("::", pos)) return null;
  pos += 2;
  const tail = readGroups(8 - (head.groups.length + 1));
  if (pos !== text.length) return null;
  const zeros = new Array<number>(8 - head.groups.length - tail.groups.length).fill(0);
  return [...head.groups, ...zeros, ...tail.groups];
}

/** An address as family plus a 128-bit (v6) or 32-bit (v4) integer. */
interface Address {
  readonly family: 4 | 6;
  readonly value: bigint;
}

function fromParts(family: 4 | 6, parts: readonly number[]): Address {
  const width = family === 4 ? 8n : 16n;
  let value = 0n;
  for (const p of parts) value = (value << width) | BigInt(p);
  return { family, value };
}

function parseStdAddress(text: string): Address | null {
  const v4 = parseIpv4Strict(text);
  if (v4) return fromParts(4, v4);
  const v6 = parseIpv6(text);
  return v6 ? fromParts(6, v6) : null;
}

/** The `cidr` crate falls back to short IPv4 forms (`10`, `10.1`, `1.1.1.01`) inside sets. */
function parseCidrAddress(text: string): Address | null {
  const std = parseStdAddress(text);
  if (std) return std;
  const parts = text.split(".");
  if (parts.length > 4) return null;
  const octets = [0, 0, 0, 0];
  for (const [i, p] of parts.entries()) {
    const r = rustParseInt(p, 10, 0n, 255n);
    if ("error" in r) return null;
    octets[i] = Number(r.value);
  }
  return fromParts(4, octets);
}

/**
 * Canonical text of an address: dotted IPv4, or RFC 5952 IPv6 (longest zero run compressed,
 * IPv4-mapped addresses dotted).
 *
 * @example
 * formatAddress(6, 1n); // "::1"
 */
export function formatAddress(family: 4 | 6, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 255n)).join(".");
  const groups: number[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(Number((value >> s) & 0xffffn));
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${formatAddress(4, value & 0xffffffffn)}`;
  }
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart === -1) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLen).join(":")}`;
}

function scanAddressChunk(src: string, pos: number): number {
  let end = pos;
  while (end < src.length && /[0-9a-fA-F:./]/.test(src[end] ?? "")) end++;
  if (end === pos) throw new ParseFailure("expected IP address character", pos, src.length);
  return end;
}

function addressOrFail(text: string, start: number, end: number): Address {
  const address = parseStdAddress(text);
  if (!address) throw new ParseFailure(`couldn't parse address in network: ${ADDR_ERROR}`, start, end);
  return address;
}

/**
 * Scans one address (the right-hand side of an ordering comparison); no CIDR, no range.
 *
 * @example
 * scanIp("127.0.0.1 ", 0)[0].address; // "127.0.0.1"
 */
export function scanIp(src: string, pos: number): Scanned<IpLiteral> {
  const end = scanAddressChunk(src, pos);
  const a = addressOrFail(src.slice(pos, end), pos, end);
  return [{ kind: "ip", family: a.family, address: formatAddress(a.family, a.value), span: { start: pos, end } }, end];
}

/**
 * Scans a set element for an `Ip` field: an address, a CIDR network with a zero host part, or an
 * ascending same-family range `a..b`.
 *
 * @example
 * scanIpSetItem("10.0.0.0/8}", 0)[0]; // { kind: "cidr", address: "10.0.0.0", prefix: 8, … }
 */
export function scanIpSetItem(src: string, pos: number): Scanned<IpLiteral | IpRangeLiteral | CidrLiteral> {
  const end = scanAddressChunk(src, pos);
  const chunk = src.slice(pos, end);
  const span = { start: pos, end };
  const dots = chunk.indexOf("..");
  if (dots !== -1) {
    const first = addressOrFail(chunk.slice(0, dots), pos, pos + dots);
    const last = addressOrFail(chunk.slice(dots + 2), pos + dots + 2, end);
    if (first.family !== last.family || first.value > last.value) {
      throw new ParseFailure("incompatible range bounds", pos, end);
    }
    const family = first.family;
    const range: IpRangeLiteral = {
      kind: "ip-range",
      family,
      start: formatAddress(family, first.value),
      end: formatAddress(family, last.value),
      span,
    };
    return [range, end];
  }
  const slash = chunk.lastIndexOf("/");
  const addrText = slash === -1 ? chunk : chunk.slice(0, slash);
  const addrEnd = pos + addrText.length;
  const address = parseCidrAddress(addrText);
  if (!address) throw new ParseFailure(`couldn't parse address in network: ${ADDR_ERROR}`, pos, addrEnd);
  const canonical = formatAddress(address.family, address.value);
  if (slash === -1) return [{ kind: "ip", family: address.family, address: canonical, span }, end];
  const lengthResult = rustParseInt(chunk.slice(slash + 1), 10, 0n, 255n);
  if ("error" in lengthResult) {
    throw new ParseFailure(`couldn't parse length in network: ${lengthResult.error}`, addrEnd + 1, end);
  }
  const prefix = Number(lengthResult.value);
  const width = address.family === 4 ? 32 : 128;
  if (prefix > width) {
    const family = address.family === 4 ? "Ipv4" : "Ipv6";
    throw new ParseFailure(
      `invalid length for network: Network length ${prefix} is too long for ${family} (maximum: ${width})`,
      pos,
      end,
    );
  }
  const hostMask = (1n << BigInt(width - prefix)) - 1n;
  if ((address.value & hostMask) !== 0n) throw new ParseFailure("host part of address was not zero", pos, addrEnd);
  return [{ kind: "cidr", family: address.family, address: canonical, prefix, span }, end];
}

// ---------------------------------------------------------------------------------------------
// Regular expressions and wildcards.

/**
 * Scans the right-hand side of `matches`: a quoted regex (where `\"` outside a class is a quote and
 * every other escape is kept for the regex engine) or a raw string; then checks the regex syntax.
 *
 * @example
 * scanRegex('"^a+$"', 0)[0].pattern; // "^a+$"
 */
export function scanRegex(src: string, pos: number): Scanned<RegexLiteral> {
  const c = src[pos];
  if (c === undefined) throw new ParseFailure("unrecognised input", pos, src.length);
  if (c === "r") {
    const [{ text, hashes }, end] = scanRawBody(src, pos + 1);
    const problem = checkRegexSyntax(text);
    // wirefilter points a raw regex's error at the input after the string; kept for fidelity.
    if (problem) throw new ParseFailure(problem, end, src.length);
    return [{ kind: "regex", format: "raw", hashes, pattern: text, span: { start: pos, end } }, end];
  }
  if (c !== '"') throw new ParseFailure('expected " or r', pos, src.length);
  const bodyStart = pos + 1;
  let i = bodyStart;
  let inClass = false;
  let pattern = "";
  for (;;) {
    const ch = src[i];
    if (ch === undefined) throw new ParseFailure("could not find an ending quote", bodyStart, src.length);
    i++;
    if (ch === "\\") {
      const next = src[i];
      if (next !== undefined) {
        i++;
        pattern += inClass || next !== '"' ? `\\${next}` : next;
      }
    } else if (ch === '"' && !inClass) {
      break;
    } else {
      if (ch === "[" && !inClass) inClass = true;
      else if (ch === "]" && inClass) inClass = false;
      pattern += ch;
    }
  }
  const problem = checkRegexSyntax(pattern);
  if (problem) throw new ParseFailure(problem, bodyStart, i - 1);
  return [{ kind: "regex", format: "quoted", hashes: 0, pattern, span: { start: pos, end: i } }, i];
}

/**
 * Checks a `wildcard` pattern the way the `wildcard` crate and wirefilter do: only `\*` and `\\` are
 * escapes, and `**` is refused. Returns the error text or `null`.
 *
 * @example
 * checkWildcard([...'*a**'].map((c) => c.charCodeAt(0))); // "wildcard contains a double star"
 */
export function checkWildcard(bytes: readonly number[]): string | null {
  const STAR = 0x2a;
  const BACKSLASH = 0x5c;
  let escaping = false;
  let previousWasStar = false;
  // Syntax errors win over `**` anywhere in the pattern, as in wirefilter (syntax is checked first).
  let doubleStar = false;
  for (const [i, b] of bytes.entries()) {
    if (escaping) {
      if (b !== STAR && b !== BACKSLASH) {
        return `invalid wildcard: wildcard syntax error at position ${i - 1}: invalid escape sequence`;
      }
      escaping = false;
      previousWasStar = false;
    } else if (b === BACKSLASH) {
      escaping = true;
    } else if (b === STAR) {
      if (previousWasStar) doubleStar = true;
      previousWasStar = true;
    } else {
      previousWasStar = false;
    }
  }
  if (escaping) {
    return `invalid wildcard: wildcard syntax error at position ${bytes.length - 1}: incomplete escape sequence at the end of the wildcard`;
  }
  return doubleStar ? "wildcard contains a double star" : null;
}
