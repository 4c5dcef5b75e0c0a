import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../../src/limits";
import {
  checkKeyCount,
  checkKeySize,
  compareKeys,
  compileListOptions,
  type ListRangeOptions,
  listedKey,
  prefixSuccessor,
  toKey,
  utf8Length,
} from "../../../src/storage/keys";
import { PLATFORM_ORDER, platformReadBack, UNIT_STRING_CHARS, utf8Compare, wtf8Bytes, wtf8Compare } from "./helpers";

const encoder = new TextEncoder();

/** Well-formed strings (whole code points, astral ones included), so UTF-8 encoding is lossless. */
const wellFormed = fc.string({ unit: "binary", maxLength: 6 });

/** Any string: single UTF-16 units (lone surrogates included) mixed with whole characters. */
const anyString = (maxLength: number, minLength = 0) =>
  fc.string({
    unit: fc.oneof(
      fc.constantFrom(...UNIT_STRING_CHARS),
      fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
      fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
    ),
    minLength,
    maxLength,
  });

/** Whether `key`'s stored bytes start with `prefix`'s (the platform's prefix: bytes, not UTF-16 units). */
const hasBytePrefix = (key: string, prefix: string): boolean => {
  const k = wtf8Bytes(key);
  const p = wtf8Bytes(prefix);
  return p.length <= k.length && p.every((b, i) => k[i] === b);
};

describe("compareKeys", () => {
  it("compareKeys: sorts the platform's ordering vector in UTF-8 byte order", () => {
    const shuffled = [...PLATFORM_ORDER].reverse();
    expect(shuffled.sort(compareKeys)).toEqual(PLATFORM_ORDER);
  });

  it("compareKeys: puts U+FFFF below an astral character, unlike JS string order", () => {
    expect(compareKeys("\uFFFF", "😀")).toBeLessThan(0);
    expect(compareKeys("😀", "\uFFFF")).toBeGreaterThan(0);
    expect("\uFFFF" < "😀").toBe(false); // the trap the function exists for
    expect(compareKeys("\uE000", "\u{10000}")).toBeLessThan(0);
    expect(compareKeys("\uD7FF", "\u{10000}")).toBeLessThan(0);
  });

  it("compareKeys: a proper prefix sorts first, equal strings compare 0", () => {
    expect(compareKeys("a", "a\u0000")).toBeLessThan(0);
    expect(compareKeys("", "\u0000")).toBeLessThan(0);
    expect(compareKeys("abc", "abc")).toBe(0);
  });

  it("compareKeys: agrees in sign with a byte-wise comparison of the UTF-8 encodings", () => {
    fc.assert(
      fc.property(wellFormed, wellFormed, (a, b) => {
        expect(Math.sign(compareKeys(a, b))).toBe(Math.sign(utf8Compare(a, b)));
      }),
      { numRuns: 2000 },
    );
  });

  it("compareKeys: with lone surrogates, agrees in sign with a byte-wise comparison of the platform's bytes (WTF-8)", () => {
    // A lone surrogate sorts at its own value, below U+E000 and above U+D7FF; a pair above U+FFFF.
    expect(compareKeys("\uD800", "\uE000")).toBeLessThan(0);
    expect(compareKeys("\uDC00", "\uD800\uDC00")).toBeLessThan(0);
    expect(compareKeys("\uDBFF", "\uD800\uDC00")).toBeLessThan(0);
    expect(compareKeys("\uD7FF", "\uD800")).toBeLessThan(0);
    expect(compareKeys("\uD800\uE000", "\uD800\uDC00")).toBeLessThan(0);
    expect(compareKeys("a\uD800b", "a\uFFFDb")).toBeLessThan(0);
    fc.assert(
      fc.property(anyString(6), anyString(6), (a, b) => {
        expect(Math.sign(compareKeys(a, b))).toBe(Math.sign(wtf8Compare(a, b)));
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(anyString(4), anyString(3), anyString(3), (common, a, b) => {
        expect(Math.sign(compareKeys(common + a, common + b))).toBe(Math.sign(wtf8Compare(common + a, common + b)));
      }),
      { numRuns: 3000 },
    );
  });

  it("compareKeys: is a total order (antisymmetric, transitive through sorting)", () => {
    fc.assert(
      fc.property(fc.array(wellFormed, { maxLength: 12 }), (keys) => {
        const sorted = [...keys].sort(compareKeys);
        for (let i = 1; i < sorted.length; i++) {
          expect(compareKeys(sorted[i - 1] as string, sorted[i] as string)).toBeLessThanOrEqual(0);
        }
        expect(sorted).toEqual([...keys].sort(utf8Compare));
      }),
    );
  });
});

describe("utf8Length", () => {
  it("utf8Length: counts 1, 2, 3 and 4 bytes per code point", () => {
    expect(utf8Length("")).toBe(0);
    expect(utf8Length("a")).toBe(1);
    expect(utf8Length("é")).toBe(2);
    expect(utf8Length("\uFFFF")).toBe(3);
    expect(utf8Length("😀")).toBe(4);
    expect(utf8Length("e\u0301")).toBe(3);
  });

  it("utf8Length: counts a lone surrogate as 3 bytes (its WTF-8 form, as the platform stores it)", () => {
    expect(utf8Length("\uD800")).toBe(3);
    expect(utf8Length("\uDC00a")).toBe(4);
  });

  it("utf8Length: equals TextEncoder's byte count for any string", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (s) => {
        expect(utf8Length(s)).toBe(encoder.encode(s).length);
      }),
    );
  });
});

describe("toKey", () => {
  it("toKey: converts non-strings with String() and keeps strings", () => {
    expect(toKey(123)).toBe("123");
    expect(toKey(null)).toBe("null");
    expect(toKey(undefined)).toBe("undefined");
    expect(toKey(true)).toBe("true");
    expect(toKey({})).toBe("[object Object]");
    expect(toKey("")).toBe("");
  });

  it("toKey: keeps lone surrogates (the platform stores them as WTF-8: a key of its own)", () => {
    expect(toKey("\uD800")).toBe("\uD800");
    expect(toKey("a\uDC00b")).toBe("a\uDC00b");
    expect(toKey("\uD83D\uDE00\uD83D")).toBe("😀\uD83D");
  });
});

describe("listedKey", () => {
  it("listedKey: a stored key's bytes read as UTF-8, as the platform hands keys back", () => {
    expect(listedKey("a\uD800b")).toBe("a\uFFFD\uFFFD\uFFFDb");
    expect(listedKey("\uDC00\uD800")).toBe("\uFFFD".repeat(6));
    expect(listedKey("😀\uD83D")).toBe("😀\uFFFD\uFFFD\uFFFD");
    expect(listedKey("plain é 😀")).toBe("plain é 😀");
    fc.assert(
      fc.property(anyString(8), (s) => {
        expect(listedKey(s)).toBe(platformReadBack(s));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("checkKeySize", () => {
  it("checkKeySize: accepts 2048 bytes and rejects 2049 with the platform's RangeError", () => {
    expect(() => checkKeySize("x".repeat(2048), DEFAULT_LIMITS)).not.toThrow();
    expect(() => checkKeySize("x".repeat(2049), DEFAULT_LIMITS)).toThrow(
      new RangeError("Keys cannot be larger than 2048 bytes. A key of size 2049 was provided."),
    );
  });

  it("checkKeySize: measures multi-byte characters in UTF-8 bytes, not UTF-16 units", () => {
    // 1024 × "é" = 2048 bytes but only 1024 code units.
    expect(() => checkKeySize("é".repeat(1024), DEFAULT_LIMITS)).not.toThrow();
    expect(() => checkKeySize(`${"é".repeat(1024)}a`, DEFAULT_LIMITS)).toThrow(
      "Keys cannot be larger than 2048 bytes. A key of size 2049 was provided.",
    );
    expect(() => checkKeySize("😀".repeat(512), DEFAULT_LIMITS)).not.toThrow();
    expect(() => checkKeySize(`${"😀".repeat(512)}é`, DEFAULT_LIMITS)).toThrow(
      "Keys cannot be larger than 2048 bytes. A key of size 2050 was provided.",
    );
    expect(() => checkKeySize("\uFFFF".repeat(683), DEFAULT_LIMITS)).toThrow(
      "Keys cannot be larger than 2048 bytes. A key of size 2049 was provided.",
    );
  });

  it("checkKeySize: names a configured limit in its message", () => {
    const limits = { ...DEFAULT_LIMITS, maxKeyBytes: 4 };
    expect(() => checkKeySize("abcd", limits)).not.toThrow();
    expect(() => checkKeySize("abcde", limits)).toThrow(
      new RangeError("Keys cannot be larger than 4 bytes. A key of size 5 was provided."),
    );
    expect(() => checkKeySize("éé", limits)).not.toThrow();
    expect(() => checkKeySize("éé!", limits)).toThrow("A key of size 5 was provided.");
  });
});

describe("checkKeyCount", () => {
  it("checkKeyCount: accepts 128 and rejects 129 with the platform's RangeError", () => {
    expect(() => checkKeyCount(128, DEFAULT_LIMITS)).not.toThrow();
    expect(() => checkKeyCount(129, DEFAULT_LIMITS)).toThrow(
      new RangeError("Maximum number of key value pairs is 128. 129 pairs were provided."),
    );
  });
});

describe("prefixSuccessor", () => {
  it("prefixSuccessor: increments the last code point", () => {
    expect(prefixSuccessor("a")).toBe("b");
    expect(prefixSuccessor("ab")).toBe("ac");
    expect(prefixSuccessor("é")).toBe("ê");
    expect(prefixSuccessor("a\u0000")).toBe("a\u0001");
    expect(prefixSuccessor("\uFFFF")).toBe("\u{10000}");
    expect(prefixSuccessor("😀")).toBe("😁");
  });

  it("prefixSuccessor: a lone surrogate is a code point of its own value; after a lone high one, U+DBFF is followed by U+E000", () => {
    expect(prefixSuccessor("\uD7FF")).toBe("\uD800");
    expect(prefixSuccessor("\uDBFF")).toBe("\uDC00");
    expect(prefixSuccessor("a\uD800")).toBe("a\uD801");
    // "\uD800" + "\uDC00" would be a pair (U+10000), which sorts far above every key with the prefix.
    expect(prefixSuccessor("\uD800\uDBFF")).toBe("\uD800\uE000");
    expect(prefixSuccessor("\uDFFF")).toBe("\uE000");
  });

  it("prefixSuccessor: with lone surrogates, the range [prefix, successor) holds exactly the keys whose bytes start with the prefix's", () => {
    fc.assert(
      fc.property(anyString(4, 1), anyString(3), anyString(6), (p, tail, s) => {
        const succ = prefixSuccessor(p);
        const inRange = compareKeys(s, p) >= 0 && (succ === undefined || compareKeys(s, succ) < 0);
        expect(inRange).toBe(hasBytePrefix(s, p));
        const k = p + tail;
        const kInRange = compareKeys(k, p) >= 0 && (succ === undefined || compareKeys(k, succ) < 0);
        expect(kInRange).toBe(hasBytePrefix(k, p));
      }),
      { numRuns: 3000 },
    );
  });

  it("prefixSuccessor: strips trailing U+10FFFF and is unbounded for an all-max prefix", () => {
    expect(prefixSuccessor("a\u{10FFFF}")).toBe("b");
    expect(prefixSuccessor("a\u{10FFFF}\u{10FFFF}")).toBe("b");
    expect(prefixSuccessor("\u{10FFFF}")).toBeUndefined();
    expect(prefixSuccessor("")).toBeUndefined();
  });

  it("prefixSuccessor: every string with the prefix sorts below it, and every string in between has the prefix", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", minLength: 1, maxLength: 4 }), wellFormed, wellFormed, (p, tail, s) => {
        const succ = prefixSuccessor(p);
        if (succ === undefined) return;
        expect(compareKeys(p + tail, succ)).toBeLessThan(0);
        if (compareKeys(s, p) >= 0 && compareKeys(s, succ) < 0) expect(s.startsWith(p)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

/** The keys a range selects from `keys`, by the platform's definition (not by compiling it). */
function referenceSelect(keys: readonly string[], o: ListRangeOptions): string[] {
  const selected = [...new Set(keys)]
    .filter((k) => o.start === undefined || compareKeys(k, o.start) >= 0)
    .filter((k) => o.startAfter === undefined || compareKeys(k, o.startAfter) > 0)
    .filter((k) => o.end === undefined || compareKeys(k, o.end) < 0)
    .filter((k) => o.prefix === undefined || k.startsWith(o.prefix))
    .sort(compareKeys);
  if (o.reverse) selected.reverse();
  return o.limit === undefined ? selected : selected.slice(0, o.limit);
}

/** Applies a compiled range to a key set the way the core does. */
function applyRange(keys: readonly string[], options: ListRangeOptions): string[] {
  const range = compileListOptions(options);
  if (range.empty) return [];
  const selected = [...new Set(keys)]
    .filter((k) => compareKeys(k, range.start) >= 0 && (range.end === undefined || compareKeys(k, range.end) < 0))
    .sort(compareKeys);
  if (range.reverse) selected.reverse();
  return range.limit === undefined ? selected : selected.slice(0, range.limit);
}

describe("compileListOptions", () => {
  it("compileListOptions: no options is the whole key space, ascending and unlimited", () => {
    expect(compileListOptions(undefined)).toEqual({
      start: "",
      end: undefined,
      reverse: false,
      limit: undefined,
      empty: false,
    });
    expect(compileListOptions({})).toEqual(compileListOptions(undefined));
  });

  it("compileListOptions: rejects start together with startAfter", () => {
    expect(() => compileListOptions({ start: "a", startAfter: "b" })).toThrow(
      new TypeError("list() cannot be called with both start and startAfter values."),
    );
    // Even an empty-string start counts as given.
    expect(() => compileListOptions({ start: "", startAfter: "" })).toThrow(TypeError);
  });

  it("compileListOptions: turns startAfter into an inclusive start of startAfter + NUL", () => {
    expect(compileListOptions({ startAfter: "a" }).start).toBe("a\u0000");
    expect(applyRange(["a", "a\u0000", "a\u0000b", "ab", "b"], { startAfter: "a" })).toEqual([
      "a\u0000",
      "a\u0000b",
      "ab",
      "b",
    ]);
  });

  it("compileListOptions: converts limit with ToInt32 (1.7 → 1, '2' → 2)", () => {
    expect(compileListOptions({ limit: 1.7 }).limit).toBe(1);
    expect(compileListOptions({ limit: "2" as unknown as number }).limit).toBe(2);
    expect(compileListOptions({ limit: 2147483647 }).limit).toBe(2147483647);
  });

  it("compileListOptions: rejects a limit that is not positive", () => {
    for (const limit of [0, -1, 0.5, -0.5, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN]) {
      expect(() => compileListOptions({ limit }), String(limit)).toThrow(new TypeError("List limit must be positive."));
    }
  });

  it("compileListOptions: rejects a limit outside int32 with the platform's range TypeError", () => {
    for (const limit of [2 ** 31, -(2 ** 31) - 1, 1e12]) {
      expect(() => compileListOptions({ limit }), String(limit)).toThrow(
        new TypeError("Value out of range. Must be between -2147483648 and 2147483647 (inclusive)."),
      );
    }
  });

  it("compileListOptions: checks start+startAfter before the limit, and the limit even for an empty range", () => {
    expect(() => compileListOptions({ start: "a", startAfter: "a", limit: 0 })).toThrow(
      "list() cannot be called with both start and startAfter values.",
    );
    // …except that converting limit to an int32 happens while the options are read, before any check.
    expect(() => compileListOptions({ start: "a", startAfter: "a", limit: 2 ** 31 })).toThrow(
      "Value out of range. Must be between -2147483648 and 2147483647 (inclusive).",
    );
    expect(() => compileListOptions({ start: "b", end: "a", limit: 0 })).toThrow("List limit must be positive.");
    expect(() => compileListOptions({ prefix: "b", end: "a", limit: -3 })).toThrow("List limit must be positive.");
  });

  it("compileListOptions: a non-empty prefix clamps start up and end down to the prefix successor", () => {
    expect(compileListOptions({ prefix: "ab" })).toMatchObject({ start: "ab", end: "ac", empty: false });
    expect(compileListOptions({ prefix: "ab", start: "abc" })).toMatchObject({ start: "abc", end: "ac" });
    expect(compileListOptions({ prefix: "ab", start: "a" })).toMatchObject({ start: "ab", end: "ac" });
    expect(compileListOptions({ prefix: "ab", end: "abc" })).toMatchObject({ start: "ab", end: "abc" });
    expect(compileListOptions({ prefix: "ab", end: "z" })).toMatchObject({ start: "ab", end: "ac" });
  });

  it("compileListOptions: an empty prefix constrains nothing", () => {
    expect(compileListOptions({ prefix: "" })).toEqual(compileListOptions({}));
  });

  it("compileListOptions: marks empty ranges (end <= start, start beyond the prefix, end <= prefix)", () => {
    expect(compileListOptions({ start: "b", end: "a" }).empty).toBe(true);
    expect(compileListOptions({ start: "a", end: "a" }).empty).toBe(true);
    expect(compileListOptions({ prefix: "ab", start: "b" }).empty).toBe(true);
    expect(compileListOptions({ prefix: "ab", end: "ab" }).empty).toBe(true);
    expect(compileListOptions({ prefix: "ab", end: "aa" }).empty).toBe(true);
    expect(compileListOptions({ start: "a", end: "a\u0000" }).empty).toBe(false);
    expect(compileListOptions({ end: "" }).empty).toBe(true);
  });

  it("compileListOptions: reverse keeps start inclusive-low and end exclusive-high", () => {
    const range = compileListOptions({ start: "ab", end: "c", reverse: true });
    expect(range).toMatchObject({ start: "ab", end: "c", reverse: true });
    expect(applyRange(["a", "ab", "abc", "b", "c"], { start: "ab", end: "c", reverse: true })).toEqual([
      "b",
      "abc",
      "ab",
    ]);
    expect(applyRange(["a", "ab", "abc", "b", "c"], { start: "ab", end: "c", reverse: true, limit: 2 })).toEqual([
      "b",
      "abc",
    ]);
  });

  it("compileListOptions: converts non-string bounds with String()", () => {
    const o = { start: 1, end: 3, prefix: 2 } as unknown as ListRangeOptions;
    expect(compileListOptions(o)).toMatchObject({ start: "2", end: "3" });
  });

  it("compileListOptions: does not mutate the options object", () => {
    const o: ListRangeOptions = { startAfter: "a", prefix: "a", limit: 1.5, reverse: true };
    const copy = { ...o };
    compileListOptions(o);
    expect(o).toEqual(copy);
  });

  it("compileListOptions: selects exactly the keys the platform's definition selects", () => {
    const key = fc.constantFrom("", "a", "a\u0000", "a\u0000b", "ab", "abc", "b", "é", "e\u0301", "\uFFFF", "😀", "Z");
    const options = fc.record(
      {
        start: key,
        startAfter: key,
        end: key,
        prefix: key,
        reverse: fc.boolean(),
        limit: fc.integer({ min: 1, max: 6 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.array(key, { maxLength: 12 }), options, (keys, o) => {
        if (o.start !== undefined && o.startAfter !== undefined) {
          expect(() => compileListOptions(o)).toThrow(TypeError);
          return;
        }
        expect(applyRange(keys, o)).toEqual(referenceSelect(keys, o));
      }),
      { numRuns: 3000 },
    );
  });
});
