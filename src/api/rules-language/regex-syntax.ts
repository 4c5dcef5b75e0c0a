/**
 * A syntax check for the right-hand side of `matches`, by the rules of Rust's `regex` crate as
 * wirefilter configures it: byte-oriented (`unicode(false)`, `utf8(false)`), so `\pL` and other
 * Unicode classes are refused unless a `(?u)` flag turns Unicode on; inline flags (`i m s U u x R`),
 * named groups (`(?P<n>…)`, `(?<n>…)`), counted repetition and nested classes with set operations
 * are accepted; look-around, backreferences and escapes Rust does not know (`\Q…\E`, `\e`, `\K`)
 * are refused with the regex crate's own message.
 *
 * The order of checks is the regex crate's: the pattern is parsed first (syntax errors, leftmost
 * first), then the nesting limit is checked over the whole syntax tree, and only then are Unicode
 * classes looked up (`Unicode not allowed here`, `Unicode property not found`), which the crate does
 * while translating the tree.
 *
 * One pass, no backtracking and no recursion: every character is looked at a bounded number of
 * times and the tree is walked with an explicit stack, so hostile patterns cost linear time and
 * constant call stack.
 *
 * Not modelled: the compiled-size limit (10 MiB by default in wirefilter), which only a real build
 * of the automaton can measure.
 */

/**
 * The regex crate's default nesting limit. It bounds the depth of the syntax tree, where a
 * concatenation, an alternation, a repetition, a group, a bracketed class, a union of class items
 * and a class set operation each add one level (literals, `.`, assertions, flags and escape classes
 * add none): `ab` is one level, `(ab)` two, `(a)+` two, `[ab]` two.
 */
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

/**
 * A node of the regex crate's syntax tree, reduced to what the nesting limit needs: its span, whether
 * it adds a level, and its children. `flags` marks a `(?i)` item, which a repetition cannot follow.
 */
interface TreeNode {
  readonly start: number;
  readonly end: number;
  readonly counts: boolean;
  readonly children: readonly TreeNode[];
  readonly flags?: boolean;
}

function leaf(start: number, end: number, flags = false): TreeNode {
  return { start, end, counts: false, children: [], ...(flags ? { flags } : {}) };
}

/** A concatenation, alternation or class union: nothing when empty, its item when alone. */
function sequence(start: number, end: number, items: readonly TreeNode[]): TreeNode {
  const [only] = items;
  if (items.length === 0) return leaf(start, end);
  if (items.length === 1 && only !== undefined) return only;
  return { start, end, counts: true, children: items };
}

/**
 * The regex crate's nest-limit check: a pre-order walk, reporting the first node that is deeper
 * than the limit, with that node's span.
 */
function checkNesting(root: TreeNode): void {
  const stack: [TreeNode, number][] = [[root, 0]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [node, parentDepth] = top;
    const depth = parentDepth + (node.counts ? 1 : 0);
    if (depth > NEST_LIMIT) {
      fail(
        node.start,
        node.end - node.start,
        `exceed the maximum number of nested parentheses/brackets (${NEST_LIMIT})`,
      );
    }
    for (let i = node.children.length - 1; i >= 0; i--) {
      const child = node.children[i];
      if (child !== undefined) stack.push([child, depth]);
    }
  }
}

/** One open group (its parent's concatenation is saved) or one alternation in progress. */
type GroupFrame =
  | { readonly kind: "group"; readonly at: number; readonly saved: Flags; readonly concat: Concat }
  | { readonly kind: "alternation"; readonly start: number; readonly branches: TreeNode[] };

interface Concat {
  readonly start: number;
  readonly items: TreeNode[];
}

/** A union of class items being built; an empty one keeps the position where it began. */
interface ClassUnion {
  start: number;
  end: number;
  readonly items: TreeNode[];
}

function pushItem(union: ClassUnion, item: TreeNode): void {
  if (union.items.length === 0) union.start = item.start;
  union.end = item.end;
  union.items.push(item);
}

type ClassFrame =
  | { readonly kind: "open"; readonly parent: ClassUnion; readonly start: number; readonly openEnd: number }
  | { readonly kind: "op"; readonly lhs: TreeNode };

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
  #deferred: RegexFailure | undefined;
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

  /** Records a Unicode-class error; the regex crate only finds these after parsing the whole pattern. */
  #defer(failure: RegexFailure): void {
    this.#deferred ??= failure;
  }

  run(): void {
    const p = this.#p;
    const stack: GroupFrame[] = [];
    let concat: Concat = { start: 0, items: [] };
    let i = 0;
    for (;;) {
      i = this.#space(i);
      const c = p[i];
      if (c === undefined) break;
      if (c === "(") {
        const opened = this.#group(i);
        if (opened.setFlags !== undefined) {
          this.#flags = opened.setFlags;
          concat.items.push(leaf(i, opened.end, true));
          i = opened.end;
        } else {
          stack.push({ kind: "group", at: i, saved: this.#flags, concat });
          // A plain group's contents start after any space (x mode); others after their `:` or `>`.
          const inner = opened.end === i + 1 ? this.#space(opened.end) : opened.end;
          if (opened.groupFlags !== undefined) this.#flags = opened.groupFlags;
          concat = { start: inner, items: [] };
          i = inner;
        }
      } else if (c === ")") {
        let top = stack.pop();
        const alternation = top?.kind === "alternation" ? top : undefined;
        if (alternation !== undefined) top = stack.pop();
        if (top === undefined || top.kind !== "group") fail(i, 1, "unopened group");
        const body = sequence(concat.start, i, concat.items);
        const content =
          alternation === undefined ? body : sequence(alternation.start, i, [...alternation.branches, body]);
        this.#flags = top.saved;
        concat = top.concat;
        concat.items.push({ start: top.at, end: i + 1, counts: true, children: [content] });
        i++;
      } else if (c === "|") {
        const body = sequence(concat.start, i, concat.items);
        const top = stack.at(-1);
        if (top?.kind === "alternation") top.branches.push(body);
        else stack.push({ kind: "alternation", start: concat.start, branches: [body] });
        i++;
        concat = { start: i, items: [] };
      } else if (c === "[") {
        const [node, end] = this.#class(i);
        concat.items.push(node);
        i = end;
      } else if (c === "*" || c === "+" || c === "?" || c === "{") {
        const last = concat.items.at(-1);
        if (last === undefined || last.flags === true) fail(i, 1, "repetition operator missing expression");
        let end: number;
        if (c === "{") end = this.#counted(i);
        else {
          end = i + 1;
          if (p[end] === "?") end++;
        }
        concat.items[concat.items.length - 1] = { start: last.start, end, counts: true, children: [last] };
        i = end;
      } else if (c === "\\") {
        const [, end] = this.#escape(i, false);
        concat.items.push(leaf(i, end));
        i = end;
      } else {
        const end = i + codePointAt(p, i)[1];
        concat.items.push(leaf(i, end));
        i = end;
      }
    }
    const body = sequence(concat.start, p.length, concat.items);
    const top = stack.pop();
    if (top?.kind === "group") fail(top.at, 1, "unclosed group");
    const below = stack.pop();
    if (below?.kind === "group") fail(below.at, 1, "unclosed group");
    checkNesting(top === undefined ? body : sequence(top.start, p.length, [...top.branches, body]));
    if (this.#deferred !== undefined) throw this.#deferred;
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
    if (!this.#flags.u) {
      this.#defer(new RegexFailure(i, j - i, "Unicode not allowed here"));
      return j;
    }
    let text = body.trim();
    if (text.startsWith("^")) text = text.slice(1);
    const sep = text.search(/!=|=|:/);
    const name = sep === -1 ? text : text.slice(0, sep);
    const value = sep === -1 ? undefined : text.slice(sep + (text.startsWith("!=", sep) ? 2 : 1));
    if (!knownProperty(name.trim(), value?.trim())) {
      const message = value === undefined ? "Unicode property not found" : "Unicode property value not found";
      this.#defer(new RegexFailure(i, j - i, message));
    }
    return j;
  }

  /**
   * A bracketed class at `i`, nested classes and set operations included, built as the regex crate
   * builds it (a stack of open classes and pending set operations, so `[a--b--c]` nests to the
   * left); returns its tree and its end.
   */
  #class(i: number): [TreeNode, number] {
    const p = this.#p;
    const frames: ClassFrame[] = [];
    const unclosedAt = (start: number, end: number): never => fail(start, end - start, "unclosed character class");
    // The error names the most recently opened class, with the span of its opening.
    const unclosed = (): never => {
      for (let k = frames.length - 1; k >= 0; k--) {
        const frame = frames[k];
        if (frame?.kind === "open") unclosedAt(frame.start, frame.openEnd);
      }
      return unclosedAt(i, i + 1);
    };
    // `[`, an optional `^`, then any run of `-` and, if nothing came before, a `]`: all literals.
    const open = (at: number, parent: ClassUnion): [ClassUnion, number] => {
      let j = this.#space(at + 1);
      if (j >= p.length) unclosedAt(at, j);
      if (p[j] === "^") {
        j = this.#space(j + 1);
        if (j >= p.length) unclosedAt(at, j);
      }
      const union: ClassUnion = { start: j, end: j, items: [] };
      while (p[j] === "-") {
        pushItem(union, leaf(j, j + 1));
        j = this.#space(j + 1);
        if (j >= p.length) unclosedAt(at, at);
      }
      if (union.items.length === 0 && p[j] === "]") {
        pushItem(union, leaf(j, j + 1));
        j = this.#space(j + 1);
        if (j >= p.length) unclosedAt(at, j);
      }
      frames.push({ kind: "open", parent, start: at, openEnd: j });
      return [union, j];
    };
    // A pending set operation takes `rhs` as its right-hand side.
    const popOperation = (rhs: TreeNode): TreeNode => {
      const top = frames.at(-1);
      if (top?.kind !== "op") return rhs;
      frames.pop();
      return { start: top.lhs.start, end: rhs.end, counts: true, children: [top.lhs, rhs] };
    };
    let [union, j] = open(i, { start: i, end: i, items: [] });
    for (;;) {
      j = this.#space(j);
      const c = p[j];
      if (c === undefined) return unclosed();
      if (c === "[") {
        const ascii = /^\[:\^?([a-z]*):\]/.exec(p.slice(j, j + 12));
        if (ascii !== null && ASCII_CLASSES.has(ascii[1] ?? "")) {
          pushItem(union, leaf(j, j + ascii[0].length));
          j += ascii[0].length;
        } else {
          [union, j] = open(j, union);
        }
        continue;
      }
      if (c === "]") {
        const set = popOperation(sequence(union.start, union.end, union.items));
        const frame = frames.pop();
        j++;
        if (frame?.kind !== "open") return unclosed();
        const node: TreeNode = { start: frame.start, end: j, counts: true, children: [set] };
        if (frames.length === 0) return [node, j];
        union = frame.parent;
        pushItem(union, node);
        continue;
      }
      if ((c === "&" && p[j + 1] === "&") || (c === "-" && p[j + 1] === "-") || (c === "~" && p[j + 1] === "~")) {
        const lhs = popOperation(sequence(union.start, union.end, union.items));
        frames.push({ kind: "op", lhs });
        j += 2;
        union = { start: j, end: j, items: [] };
        continue;
      }
      const [item, end] = this.#classRange(j, unclosed);
      pushItem(union, item);
      j = end;
    }
  }

  /**
   * One class item that may start a range `a-z`. As in the regex crate, a `-` followed by `]` or by
   * another `-` (the start of a `--` difference) is not a range.
   */
  #classRange(j: number, unclosed: () => never): [TreeNode, number] {
    const p = this.#p;
    const [first, afterFirst] = this.#classPrimitive(j);
    let k = this.#space(afterFirst);
    if (k >= p.length) unclosed();
    const next = p[this.#space(k + 1)];
    if (p[k] !== "-" || next === "]" || next === "-") return [leaf(j, afterFirst), afterFirst];
    k = this.#space(k + 1);
    if (k >= p.length) unclosed();
    const [last, end] = this.#classPrimitive(k);
    if (first.kind !== "literal") fail(j, afterFirst - j, "invalid range boundary, must be a literal");
    if (last.kind !== "literal") fail(k, end - k, "invalid range boundary, must be a literal");
    if (first.cp > last.cp) fail(j, end - j, "invalid character class range, the start must be <= the end");
    return [leaf(j, end), end];
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
