/**
 * A syntax check for the right-hand side of `matches`, by the rules of Rust's `regex` crate as
 * wirefilter configures it: byte-oriented (`unicode(false)`, `utf8(false)`), so `\pL` and other
 * Unicode classes are refused unless a `(?u)` flag turns Unicode on; inline flags (`i m s U u x R`),
 * named groups (`(?P<n>…)`, `(?<n>…)`), counted repetition and nested classes with set operations
 * are accepted; look-around, backreferences and escapes Rust does not know (`\Q…\E`, `\e`, `\K`)
 * are refused with the regex crate's own message.
 *
 * One pass, no backtracking and no recursion: every character is looked at a bounded number of
 * times, so hostile patterns cost linear time and constant stack.
 *
 * Not modelled: the compiled-size limit (10 MiB by default in wirefilter), which only a real build
 * of the automaton can measure.
 */

/** The regex crate's default nesting limit for groups and classes. */
const NEST_LIMIT = 250;
const META = new Set("\\.+*?()|[]{}^$#&-~");
const ASCII_CLASSES = new Set([
  "alnum",
  "alpha",
  "ascii",
  "blank",
  "cntrl",
  "digit",
  "graph",
  "lower",
  "print",
  "punct",
  "space",
  "upper",
  "word",
  "xdigit",
]);
const FLAG_CHARS = new Set("imsUuxR");
const WORD_BOUNDARIES = new Set(["start", "end", "start-half", "end-half"]);

/** Where a check failed and why, before formatting. */
class RegexFailure {
  constructor(
    readonly at: number,
    readonly length: number,
    readonly message: string,
  ) {}
}

function fail(at: number, length: number, message: string): never {
  throw new RegexFailure(at, length, message);
}

function format(pattern: string, f: RegexFailure): string {
  const width = Math.max(1, f.length);
  return `regex parse error:\n    ${pattern}\n    ${" ".repeat(f.at)}${"^".repeat(width)}\nerror: ${f.message}`;
}

/** Rust's `char::is_whitespace`, which `(?x)` skips. */
function isSpace(c: string): boolean {
  return /\s/.test(c) && c !== "\u180e" && c !== "\ufeff";
}

function isHex(c: string | undefined): boolean {
  return c !== undefined && ((c >= "0" && c <= "9") || (c >= "a" && c <= "f") || (c >= "A" && c <= "F"));
}

function isAsciiAlnum(c: string): boolean {
  return (c >= "0" && c <= "9") || (c >= "a" && c <= "z") || (c >= "A" && c <= "Z");
}

/** The code point at `i` and its length in UTF-16 units. */
function codePointAt(s: string, i: number): [number, number] {
  const cp = s.codePointAt(i) ?? 0;
  return [cp, cp > 0xffff ? 2 : 1];
}

// ---------------------------------------------------------------------------------------------
// Unicode property names, looked up loosely as the regex crate does (case, spaces, `_` and `-`
// ignored, an optional `is` prefix). JavaScript's own tables answer for scripts and binary
// properties; results are cached so a pattern repeating one class costs one lookup.

const propertyCache = new Map<string, boolean>();
const GENERAL_CATEGORIES =
  "c other cc control cf format cn unassigned co privateuse cs surrogate l letter lc casedletter ll lowercaseletter lm modifierletter lo otherletter lt titlecaseletter lu uppercaseletter m mark combiningmark mc spacingmark me enclosingmark mn nonspacingmark n number nd decimalnumber digit nl letternumber no othernumber p punctuation punct pc connectorpunctuation pd dashpunctuation pe closepunctuation pf finalpunctuation pi initialpunctuation po otherpunctuation ps openpunctuation s symbol sc currencysymbol sk modifiersymbol sm mathsymbol so othersymbol z separator zl lineseparator zp paragraphseparator zs spaceseparator any ascii assigned";
const LOOSE_NAMES = new Set(GENERAL_CATEGORIES.split(" "));

function loose(name: string): string {
  return name.toLowerCase().replace(/[\s_-]/g, "");
}

function jsKnows(body: string): boolean {
  try {
    new RegExp(`\\p{${body}}`, "u");
    return true;
  } catch {
    return false;
  }
}

function titleCase(name: string): string {
  return name
    .split(/[\s_-]+/)
    .filter((w) => w.length > 0)
    .map((w) => (w[0] ?? "").toUpperCase() + w.slice(1).toLowerCase())
    .join("_");
}

function knownProperty(name: string, value: string | undefined): boolean {
  const key = `${name}\u0000${value ?? ""}`;
  const cached = propertyCache.get(key);
  if (cached !== undefined) return cached;
  let known: boolean;
  if (value === undefined) {
    const l = loose(name);
    const bare = l.startsWith("is") ? l.slice(2) : l;
    known =
      LOOSE_NAMES.has(l) ||
      LOOSE_NAMES.has(bare) ||
      [name, titleCase(name), titleCase(name.replace(/^is/i, ""))].some(
        (n) => /^[A-Za-z0-9_]+$/.test(n) && (jsKnows(n) || jsKnows(`Script=${n}`)),
      );
  } else {
    const prop = loose(name);
    const target =
      prop === "gc" || prop === "generalcategory"
        ? "General_Category"
        : prop === "sc" || prop === "script"
          ? "Script"
          : prop === "scx" || prop === "scriptextensions"
            ? "Script_Extensions"
            : undefined;
    known =
      target !== undefined &&
      (target === "General_Category" ? LOOSE_NAMES.has(loose(value)) : jsKnowsValue(target, value));
  }
  propertyCache.set(key, known);
  return known;
}

function jsKnowsValue(target: string, value: string): boolean {
  return [value, titleCase(value)].some((v) => /^[A-Za-z0-9_]+$/.test(v) && jsKnows(`${target}=${v}`));
}

// ---------------------------------------------------------------------------------------------

/** What an escape stands for: a literal (with its code point), a class, or an assertion. */
type EscapeKind = { kind: "literal"; cp: number } | { kind: "class" } | { kind: "assertion" };

interface Flags {
  readonly x: boolean;
  readonly u: boolean;
}

class RegexChecker {
  readonly #p: string;
  #flags: Flags = { x: false, u: false };
  #depth = 0;
  readonly #names = new Set<string>();

  constructor(pattern: string) {
    this.#p = pattern;
  }

  /** Skips whitespace and `#` comments in `(?x)` mode. */
  #space(i: number): number {
    if (!this.#flags.x) return i;
    const p = this.#p;
    for (;;) {
      const c = p[i];
      if (c === undefined) return i;
      if (isSpace(c)) i++;
      else if (c === "#") {
        while (i < p.length && p[i] !== "\n") i++;
      } else return i;
    }
  }

  #nest(at: number): void {
    this.#depth++;
    if (this.#depth > NEST_LIMIT) {
      fail(at, 1, `exceed the maximum number of nested parentheses/brackets (${NEST_LIMIT})`);
    }
  }

  run(): void {
    const p = this.#p;
    const groups: { at: number; saved: Flags }[] = [];
    // Whether the last thing in the current concatenation can take a repetition operator.
    let repeatable = false;
    let i = 0;
    for (;;) {
      i = this.#space(i);
      const c = p[i];
      if (c === undefined) break;
      if (c === "(") {
        const opened = this.#group(i);
        if (opened.setFlags !== undefined) {
          this.#flags = opened.setFlags;
          repeatable = false;
        } else {
          this.#nest(i);
          groups.push({ at: i, saved: this.#flags });
          if (opened.groupFlags !== undefined) this.#flags = opened.groupFlags;
          repeatable = false;
        }
        i = opened.end;
      } else if (c === ")") {
        const g = groups.pop();
        if (g === undefined) fail(i, 1, "unopened group");
        this.#flags = g.saved;
        this.#depth--;
        repeatable = true;
        i++;
      } else if (c === "|") {
        repeatable = false;
        i++;
      } else if (c === "[") {
        i = this.#class(i);
        repeatable = true;
      } else if (c === "\\") {
        const [, end] = this.#escape(i, false);
        i = end;
        repeatable = true;
      } else if (c === "*" || c === "+" || c === "?") {
        if (!repeatable) fail(i, 1, "repetition operator missing expression");
        i++;
        if (p[i] === "?") i++;
      } else if (c === "{") {
        if (!repeatable) fail(i, 1, "repetition operator missing expression");
        i = this.#counted(i);
      } else {
        i += codePointAt(p, i)[1];
        repeatable = true;
      }
    }
    const open = groups.pop();
    if (open !== undefined) fail(open.at, 1, "unclosed group");
  }

  /** `(`…: a look-around (refused), a named group, flags, or a plain group. */
  #group(i: number): { end: number; setFlags?: Flags; groupFlags?: Flags } {
    const p = this.#p;
    if (p.startsWith("(?=", i) || p.startsWith("(?!", i)) {
      fail(i, 3, "look-around, including look-ahead and look-behind, is not supported");
    }
    if (p.startsWith("(?<=", i) || p.startsWith("(?<!", i)) {
      fail(i, 4, "look-around, including look-ahead and look-behind, is not supported");
    }
    const named = p.startsWith("(?P<", i) ? i + 4 : p.startsWith("(?<", i) ? i + 3 : -1;
    if (named !== -1) return { end: this.#captureName(named) };
    if (p[i + 1] !== "?") return { end: i + 1 };
    let j = i + 2;
    if (j >= p.length) fail(i, 2, "unclosed group");
    let x = this.#flags.x;
    let u = this.#flags.u;
    let negated = false;
    let lastWasNegation = false;
    let items = 0;
    const seen = new Set<string>();
    for (;;) {
      const c = p[j];
      if (c === ":" || c === ")") break;
      if (c === "-") {
        if (negated) fail(j, 1, "flag negation operator repeated");
        negated = true;
        lastWasNegation = true;
      } else if (c !== undefined && FLAG_CHARS.has(c)) {
        if (seen.has(c)) fail(j, 1, "duplicate flag");
        seen.add(c);
        if (c === "x") x = !negated;
        if (c === "u") u = !negated;
        lastWasNegation = false;
      } else {
        fail(j, 1, "unrecognized flag");
      }
      items++;
      j++;
      if (j >= p.length) fail(j, 0, "expected flag but got end of regex");
    }
    if (lastWasNegation) fail(j - 1, 1, "dangling flag negation operator");
    if (p[j] === ")") {
      if (items === 0) fail(i, 2, "repetition operator missing expression");
      return { end: j + 1, setFlags: { x, u } };
    }
    return { end: j + 1, groupFlags: { x, u } };
  }

  #captureName(start: number): number {
    const p = this.#p;
    let j = start;
    for (;;) {
      const c = p[j];
      if (c === undefined) fail(start, j - start, "unclosed capture group name");
      if (c === ">") break;
      const [cp, len] = codePointAt(p, j);
      const ch = String.fromCodePoint(cp);
      const first = j === start;
      const ok = first ? ch === "_" || /\p{Alphabetic}/u.test(ch) : /[_.[\]]|\p{Alphabetic}|\p{N}/u.test(ch);
      if (!ok) fail(j, len, "invalid capture group character");
      j += len;
    }
    if (j === start) fail(j, 0, "empty capture group name");
    const name = p.slice(start, j);
    if (this.#names.has(name)) fail(start, j - start, "duplicate capture group name");
    this.#names.add(name);
    return j + 1;
  }

  /** `{n}`, `{n,}`, `{n,m}` (and `{,m}`), with an optional lazy `?`. */
  #counted(i: number): number {
    const p = this.#p;
    const unclosed = (): never => fail(i, p.length - i, "unclosed counted repetition");
    let j = this.#space(i + 1);
    if (j >= p.length) unclosed();
    const readDecimal = (): [number | undefined, number] => {
      let k = this.#space(j);
      const begin = k;
      while (p[k] !== undefined && (p[k] ?? "") >= "0" && (p[k] ?? "") <= "9") k++;
      const digits = p.slice(begin, k);
      k = this.#space(k);
      if (digits.length === 0) return [undefined, k];
      const n = Number(digits);
      if (n > 0xffffffff) fail(begin, k - begin, "decimal literal invalid");
      return [n, k];
    };
    let min: number | undefined;
    [min, j] = readDecimal();
    let max: number | undefined = min;
    if (p[j] === ",") {
      j = this.#space(j + 1);
      if (j >= p.length) unclosed();
      if (p[j] === "}") max = undefined;
      else {
        [max, j] = readDecimal();
        if (max === undefined) fail(j, 1, "repetition quantifier expects a valid decimal");
      }
      min ??= 0;
    } else if (min === undefined) {
      if (j >= p.length) unclosed();
      fail(j, 1, "repetition quantifier expects a valid decimal");
    }
    if (p[j] !== "}") unclosed();
    if (max !== undefined && min > max) {
      fail(i, j + 1 - i, "invalid repetition count range, the start must be <= the end");
    }
    j++;
    if (p[j] === "?") j++;
    return j;
  }

  /** An escape at `i` (`p[i]` is a backslash); returns what it stands for and where it ends. */
  #escape(i: number, inClass: boolean): [EscapeKind, number] {
    const p = this.#p;
    const c = p[i + 1];
    if (c === undefined) fail(i, 1, "incomplete escape sequence, reached end of pattern prematurely");
    if (META.has(c)) return [{ kind: "literal", cp: c.codePointAt(0) ?? 0 }, i + 2];
    if (c >= "0" && c <= "9") fail(i, 2, "backreferences are not supported");
    switch (c) {
      case "x":
      case "u":
      case "U":
        return this.#hex(i, c);
      case "p":
      case "P":
        return [{ kind: "class" }, this.#unicodeClass(i)];
      case "d":
      case "D":
      case "s":
      case "S":
      case "w":
      case "W":
        return [{ kind: "class" }, i + 2];
      case "a":
        return [{ kind: "literal", cp: 7 }, i + 2];
      case "f":
        return [{ kind: "literal", cp: 12 }, i + 2];
      case "t":
        return [{ kind: "literal", cp: 9 }, i + 2];
      case "n":
        return [{ kind: "literal", cp: 10 }, i + 2];
      case "r":
        return [{ kind: "literal", cp: 13 }, i + 2];
      case "v":
        return [{ kind: "literal", cp: 11 }, i + 2];
      case "A":
      case "z":
      case "B":
      case "<":
      case ">":
      case "b": {
        if (inClass) fail(i, 2, "invalid escape sequence found in character class");
        return [{ kind: "assertion" }, c === "b" ? this.#wordBoundary(i) : i + 2];
      }
    }
    const [cp, len] = codePointAt(p, i + 1);
    if (cp < 0x80 && !isAsciiAlnum(c)) return [{ kind: "literal", cp }, i + 1 + len];
    return fail(i, 1 + len, "unrecognized escape sequence");
  }

  #wordBoundary(i: number): number {
    const p = this.#p;
    const after = i + 2;
    // `\b{` followed by a letter or `-` is a special word boundary; otherwise `{` starts a count.
    if (p[after] !== "{" || !/[A-Za-z-]/.test(p[after + 1] ?? "")) return after;
    let j = after + 1;
    while (j < p.length && /[A-Za-z-]/.test(p[j] ?? "")) j++;
    if (p[j] !== "}") {
      fail(i, j - i, "special word boundary assertion is either unclosed or contains an invalid character");
    }
    if (!WORD_BOUNDARIES.has(p.slice(after + 1, j))) {
      fail(
        after + 1,
        j - after - 1,
        "unrecognized special word boundary assertion, valid choices are: start, end, start-half or end-half",
      );
    }
    return j + 1;
  }

  #hex(i: number, c: string): [EscapeKind, number] {
    const p = this.#p;
    let j = i + 2;
    let digits: string;
    if (p[j] === "{") {
      const start = j + 1;
      j = start;
      for (;;) {
        const d = p[j];
        if (d === undefined) fail(i, j - i, "incomplete escape sequence, reached end of pattern prematurely");
        if (d === "}") break;
        if (!isHex(d)) fail(j, 1, "invalid hexadecimal digit");
        j++;
      }
      digits = p.slice(start, j);
      if (digits.length === 0) fail(i, j + 1 - i, "hexadecimal literal empty");
      j++;
    } else {
      const count = c === "x" ? 2 : c === "u" ? 4 : 8;
      const start = j;
      for (let k = 0; k < count; k++, j++) {
        const d = p[j];
        if (d === undefined) fail(i, j - i, "incomplete escape sequence, reached end of pattern prematurely");
        if (!isHex(d)) fail(j, 1, "invalid hexadecimal digit");
      }
      digits = p.slice(start, j);
    }
    const value = digits.length > 8 ? Number.POSITIVE_INFINITY : Number.parseInt(digits, 16);
    if (value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) {
      fail(i, j - i, "hexadecimal literal is not a Unicode scalar value");
    }
    return [{ kind: "literal", cp: value }, j];
  }

  #unicodeClass(i: number): number {
    const p = this.#p;
    let j = i + 2;
    const c = p[j];
    if (c === undefined) fail(i, 2, "incomplete escape sequence, reached end of pattern prematurely");
    let body: string;
    if (c === "{") {
      const close = p.indexOf("}", j + 1);
      if (close === -1) fail(i, p.length - i, "incomplete escape sequence, reached end of pattern prematurely");
      body = p.slice(j + 1, close);
      j = close + 1;
    } else {
      const [, len] = codePointAt(p, j);
      body = p.slice(j, j + len);
      j += len;
    }
    if (!this.#flags.u) fail(i, j - i, "Unicode not allowed here");
    let text = body.trim();
    if (text.startsWith("^")) text = text.slice(1);
    const sep = text.search(/!=|=|:/);
    const name = sep === -1 ? text : text.slice(0, sep);
    const value = sep === -1 ? undefined : text.slice(sep + (text.startsWith("!=", sep) ? 2 : 1));
    if (!knownProperty(name.trim(), value?.trim())) {
      fail(i, j - i, value === undefined ? "Unicode property not found" : "Unicode property value not found");
    }
    return j;
  }

  /** A bracketed class at `i`, nested classes and set operations included; returns its end. */
  #class(i: number): number {
    const p = this.#p;
    const opens: number[] = [];
    const open = (at: number): number => {
      this.#nest(at);
      opens.push(at);
      let j = this.#space(at + 1);
      if (p[j] === "^") j = this.#space(j + 1);
      // A `]` first is a literal, and so is any run of `-` there.
      if (p[j] === "]") j = this.#space(j + 1);
      while (p[j] === "-") j = this.#space(j + 1);
      return j;
    };
    let j = open(i);
    for (;;) {
      j = this.#space(j);
      const c = p[j];
      if (c === undefined) fail(opens[opens.length - 1] ?? i, 1, "unclosed character class");
      if (c === "]") {
        opens.pop();
        this.#depth--;
        j++;
        if (opens.length === 0) return j;
        continue;
      }
      if (c === "[") {
        const ascii = /^\[:\^?([a-z]*):\]/.exec(p.slice(j, j + 12));
        if (ascii !== null && ASCII_CLASSES.has(ascii[1] ?? "")) j += ascii[0].length;
        else j = open(j);
        continue;
      }
      if ((c === "&" && p[j + 1] === "&") || (c === "-" && p[j + 1] === "-") || (c === "~" && p[j + 1] === "~")) {
        j += 2;
        continue;
      }
      j = this.#classRange(j);
    }
  }

  /** One class item that may start a range `a-z`; returns its end. */
  #classRange(j: number): number {
    const p = this.#p;
    const start = j;
    const [first, afterFirst] = this.#classPrimitive(j);
    let k = this.#space(afterFirst);
    if (p[k] !== "-" || p[k + 1] === "]" || p[k + 1] === undefined) return afterFirst;
    k = this.#space(k + 1);
    if (p[k] === undefined) return k;
    const [last, end] = this.#classPrimitive(k);
    if (first.kind !== "literal" || last.kind !== "literal") {
      fail(first.kind !== "literal" ? start : k, 1, "invalid range boundary, must be a literal");
    }
    if (first.cp > last.cp) fail(start, end - start, "invalid character class range, the start must be <= the end");
    return end;
  }

  #classPrimitive(j: number): [EscapeKind, number] {
    const p = this.#p;
    if (p[j] === "\\") return this.#escape(j, true);
    const [cp, len] = codePointAt(p, j);
    return [{ kind: "literal", cp }, j + len];
  }
}

/**
 * Checks a `matches` pattern by the regex crate's rules as wirefilter configures it. Returns the
 * error text in the regex crate's shape, or `null` when the pattern is valid. Linear in the
 * pattern's length.
 *
 * @example
 * checkRegexSyntax("(?i)^/admin"); // null
 * checkRegexSyntax("(a"); // "regex parse error:\n    (a\n    ^\nerror: unclosed group"
 */
export function checkRegexSyntax(pattern: string): string | null {
  try {
    new RegexChecker(pattern).run();
    return null;
  } catch (e) {
    if (e instanceof RegexFailure) return format(pattern, e);
    throw e;
  }
}
