import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatBookmark, isBookmark, parseBookmark } from "../../src/durability/bookmarks";
import { ActorStoreError } from "../../src/errors";

const fields = fc.record({
  seq: fc.maxSafeInteger().filter((n) => n >= 0),
  timeMs: fc.oneof(
    fc.integer({ min: 0, max: 4_102_444_800_000 }),
    fc.maxSafeInteger().filter((n) => n >= 0),
  ),
  epoch: fc.nat({ max: 0xffff_ffff }),
  beforeNextRestore: fc.boolean(),
});

const SHAPE = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

describe("bookmarks", () => {
  it("formatBookmark: has the platform's shape, lowercase and fixed width", () => {
    fc.assert(
      fc.property(fields, (f) => {
        expect(formatBookmark(f)).toMatch(SHAPE);
      }),
    );
  });

  it("parseBookmark: parse(format(x)) === x", () => {
    fc.assert(
      fc.property(fields, (f) => {
        expect(parseBookmark(formatBookmark(f))).toEqual(f);
      }),
    );
    expect(parseBookmark(formatBookmark({ seq: 3, timeMs: 10 }))).toEqual({
      seq: 3,
      timeMs: 10,
      epoch: 0,
      beforeNextRestore: false,
    });
  });

  it("formatBookmark: string order is seq order", () => {
    fc.assert(
      fc.property(fields, fields, (a, b) => {
        const x = formatBookmark(a);
        const y = formatBookmark(b);
        if (a.seq !== b.seq) expect(x < y).toBe(a.seq < b.seq);
      }),
    );
  });

  it("formatBookmark: sorting bookmarks sorts commits", () => {
    const seqs = [0, 1, 9, 10, 15, 16, 255, 256, 2 ** 32 - 1, 2 ** 32, 2 ** 40, Number.MAX_SAFE_INTEGER];
    const bookmarks = seqs.map((seq) => formatBookmark({ seq, timeMs: seq % 1000 }));
    expect([...bookmarks].reverse().sort()).toEqual(bookmarks);
  });

  it("formatBookmark: drops fractions of a millisecond and rejects impossible fields", () => {
    expect(parseBookmark(formatBookmark({ seq: 1, timeMs: 10.9 })).timeMs).toBe(10);
    expect(() => formatBookmark({ seq: -1, timeMs: 0 })).toThrow(RangeError);
    expect(() => formatBookmark({ seq: 1.5, timeMs: 0 })).toThrow(RangeError);
    expect(() => formatBookmark({ seq: 1, timeMs: -1 })).toThrow(RangeError);
    expect(() => formatBookmark({ seq: 1, timeMs: 0, epoch: 2 ** 32 })).toThrow(RangeError);
  });

  it("parseBookmark: rejects malformed strings with ERR_BOOKMARK and says what is wrong", () => {
    const good = formatBookmark({ seq: 42, timeMs: 1_767_225_600_000 });
    const cases: Array<[string, RegExp]> = [
      ["", /four dash-separated groups/],
      ["not a bookmark", /four dash-separated groups/],
      [good.toUpperCase(), /lowercase/],
      [good.slice(0, -1), /four dash-separated groups/],
      [`${good}0`, /four dash-separated groups/],
      [` ${good}`, /four dash-separated groups/],
      [good.replaceAll("-", ""), /four dash-separated groups/],
      [`${good.slice(0, -1)}${good.endsWith("0") ? "1" : "0"}`, /checksum/],
      [`1${good.slice(1)}`, /checksum/],
    ];
    for (const [input, message] of cases) {
      let error: unknown;
      try {
        parseBookmark(input);
      } catch (e) {
        error = e;
      }
      expect(error, input).toBeInstanceOf(ActorStoreError);
      expect((error as ActorStoreError).code).toBe("ERR_BOOKMARK");
      expect((error as ActorStoreError).message).toMatch(message);
      expect((error as ActorStoreError).message).toMatch(/getCurrentBookmark\(\)/);
      expect(isBookmark(input)).toBe(false);
    }
    expect(isBookmark(good)).toBe(true);
    expect(isBookmark(42)).toBe(false);
  });

  it("parseBookmark: any single changed digit is rejected", () => {
    fc.assert(
      fc.property(fields, fc.nat(), fc.integer({ min: 1, max: 15 }), (f, at, delta) => {
        const b = formatBookmark(f);
        const positions = [...b].flatMap((c, i) => (c === "-" ? [] : [i]));
        const i = positions[at % positions.length] as number;
        const digit = ((Number.parseInt(b[i] as string, 16) + delta) % 16).toString(16);
        const changed = b.slice(0, i) + digit + b.slice(i + 1);
        expect(() => parseBookmark(changed)).toThrow(ActorStoreError);
      }),
    );
  });
});
