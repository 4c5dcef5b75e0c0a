/**
 * The ASCII fast path for short text (asciiString) against TextDecoder, which sql.js's
 * UTF8ToString calls: over random byte strings (ASCII, NULs, high bytes, invalid and incomplete
 * sequences, encoded surrogates, byte-order marks) at random places in a larger buffer, it either
 * declines or returns exactly the decoder's string.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  ASCII_STRING_MAX,
  asciiString,
  decodeUtf8,
  decodeWtf8,
  decodeWtf8Strict,
  isWellFormed,
  readBackAsUtf8,
  utf8Length,
  writeWtf8,
} from "../../src/util/utf8";

const decoder = new TextDecoder();

/** Bytes weighted toward what a key decoder meets: mostly ASCII, some of every other kind. */
const byte = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(0x00, 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xe0, 0xed, 0xef, 0xbb, 0xf0, 0xf4, 0xf5, 0xff),
  },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xff }) },
);
/** Known sequences: a BOM, an encoded lone surrogate, a 4-byte character, an incomplete one. */
const special = fc.constantFrom([0xef, 0xbb, 0xbf], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98, 0x80], [0xe2, 0x82], [0]);
const piece = fc.oneof({ weight: 4, arbitrary: byte.map((b) => [b]) }, { weight: 1, arbitrary: special });
const bytesArb = fc.array(piece, { maxLength: 40 }).map((pieces) => new Uint8Array(pieces.flat()));
const asciiArb = fc
  .array(fc.integer({ min: 0, max: 0x7f }), { maxLength: ASCII_STRING_MAX + 8 })
  .map((a) => new Uint8Array(a));

describe("asciiString", () => {
  test("property: declines or equals TextDecoder's string, for bytes at any offset of a larger buffer", () => {
    fc.assert(
      fc.property(
        fc.oneof(bytesArb, asciiArb),
        fc.uint8Array({ maxLength: 9 }),
        fc.uint8Array({ maxLength: 9 }),
        (bytes, before, after) => {
          const buffer = new Uint8Array([...before, ...bytes, ...after]);
          const got = asciiString(buffer, before.length, bytes.length);
          const ascii = bytes.every((b) => b < 0x80);
          // It answers exactly for short ASCII, and then as the decoder does.
          expect(got !== undefined).toBe(ascii && bytes.length <= ASCII_STRING_MAX);
          if (got !== undefined) expect(got).toBe(decoder.decode(bytes));
        },
      ),
      { numRuns: 3000 },
    );
  });

  test("every length up to the maximum, NULs and the edges of ASCII included", () => {
    for (let n = 0; n <= ASCII_STRING_MAX + 1; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => [0, 0x7f, 0x41 + (i % 26), 0x30][i % 4] as number);
      const got = asciiString(bytes, 0, n);
      if (n > ASCII_STRING_MAX) expect(got).toBeUndefined();
      else expect(got).toBe(decoder.decode(bytes));
      // One high byte anywhere, and it declines.
      for (let at = 0; at < n && n <= ASCII_STRING_MAX; at++) {
        const high = bytes.slice();
        high[at] = 0x80 | (at & 0x7f);
        expect(asciiString(high, 0, n)).toBeUndefined();
      }
    }
    // A byte-order mark is the decoder's to drop (it would, at the start).
    expect(asciiString(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]), 0, 4)).toBeUndefined();
    expect(decoder.decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]))).toBe("A");
  });
});

describe("decodeUtf8", () => {
  /** What decodeUtf8 must equal: a decoder that keeps a leading byte-order mark. */
  const bomKeeping = new TextDecoder("utf-8", { ignoreBOM: true });
  /** The error `f` throws (class and message), or its result. */
  const outcome = (f: () => string): string => {
    try {
      return `ok ${JSON.stringify(f())}`;
    } catch (e) {
      return `${(e as Error).constructor.name} ${(e as Error).message}`;
    }
  };

  test("property: equals TextDecoder with ignoreBOM, for bytes at any offset of a view into a larger buffer", () => {
    fc.assert(
      fc.property(
        fc.oneof(bytesArb, asciiArb),
        fc.uint8Array({ maxLength: 9 }),
        fc.uint8Array({ maxLength: 9 }),
        fc.nat(5),
        (bytes, before, after, skip) => {
          const whole = new Uint8Array([...new Uint8Array(skip), ...before, ...bytes, ...after]);
          // A view that starts inside its buffer: offsets are the view's, not the buffer's.
          const view = whole.subarray(skip);
          const got = decodeUtf8(view, before.length, before.length + bytes.length);
          expect(got).toBe(bomKeeping.decode(bytes));
          // Decoding from another array in between must not mix up the two.
          expect(decodeUtf8(bytes, 0, bytes.length)).toBe(got);
        },
      ),
      { numRuns: 3000 },
    );
  });

  test("keeps a leading byte-order mark, where the default TextDecoder drops it", () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, 0x41, 0xef, 0xbb, 0xbf]);
    expect(decodeUtf8(bytes, 0, bytes.length)).toBe("\uFEFFA\uFEFF");
    expect(decodeUtf8(bytes, 3, bytes.length)).toBe("A\uFEFF");
    expect(decoder.decode(bytes)).toBe("A\uFEFF");
  });

  test("reads the bytes as they are now, after writes to the same array", () => {
    const bytes = new TextEncoder().encode("abcdef");
    expect(decodeUtf8(bytes, 0, 6)).toBe("abcdef");
    bytes.set(new TextEncoder().encode("xyz"), 2);
    expect(decodeUtf8(bytes, 0, 6)).toBe("abxyzf");
  });

  test("an array whose buffer was detached or has grown since it was last read answers as TextDecoder does", () => {
    const moved = new TextEncoder().encode("moved");
    expect(decodeUtf8(moved, 0, 5)).toBe("moved");
    structuredClone(moved.buffer, { transfer: [moved.buffer] });
    expect(outcome(() => decodeUtf8(moved, 0, 5))).toBe(outcome(() => bomKeeping.decode(moved.subarray(0, 5))));

    const buffer = new (ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ArrayBuffer)(4, {
      maxByteLength: 16,
    });
    const growing = new Uint8Array(buffer);
    growing.set([0x61, 0x62, 0x63, 0x64]);
    expect(decodeUtf8(growing, 0, 4)).toBe("abcd");
    (buffer as unknown as { resize(n: number): void }).resize(8);
    growing.set([0x65, 0x66, 0xc3, 0xa9], 4);
    expect(decodeUtf8(growing, 2, 8)).toBe("cdef\u00e9");
  });
});

describe("WTF-8: writeWtf8, decodeWtf8, decodeWtf8Strict, readBackAsUtf8", () => {
  /** Single UTF-16 units of every kind (lone surrogates among them) and whole characters. */
  const anyString = fc.string({
    unit: fc.oneof(
      fc.constantFrom("\uD800", "\uDBFF", "\uDC00", "\uDFFF", "\uD83D", "\uDE00", "\uFFFD", "\uFEFF", "é", "😀", "a"),
      fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
      fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
    ),
    maxLength: 24,
  });
  const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const encode = (s: string): Uint8Array => {
    const out = new Uint8Array(utf8Length(s));
    expect(writeWtf8(s, out, 0)).toBe(out.length);
    return out;
  };

  test("writeWtf8: a lone surrogate is the three bytes of its own unit; everything else is TextEncoder's UTF-8", () => {
    expect([...encode("a\uD800b")]).toEqual([0x61, 0xed, 0xa0, 0x80, 0x62]);
    expect([...encode("\uDC00\uD800")]).toEqual([0xed, 0xb0, 0x80, 0xed, 0xa0, 0x80]);
    expect([...encode("\uD800\uDC00")]).toEqual([0xf0, 0x90, 0x80, 0x80]);
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 24 }), (s) => {
        expect(encode(s)).toEqual(new TextEncoder().encode(s));
      }),
    );
  });

  test("decodeWtf8 and decodeWtf8Strict give back the string written, at any offset of a larger buffer", () => {
    fc.assert(
      fc.property(anyString, fc.uint8Array({ maxLength: 5 }), fc.uint8Array({ maxLength: 5 }), (s, before, after) => {
        const bytes = encode(s);
        const buffer = new Uint8Array([...before, ...bytes, ...after]);
        const end = before.length + bytes.length;
        expect(decodeWtf8(buffer, before.length, end)).toBe(s);
        const decoded = decodeWtf8Strict(buffer, before.length, end, (b) => strict.decode(b));
        // Strict decoding is for text the fast decoder refused: undefined when there is no surrogate to read.
        expect(decoded).toBe(isWellFormed(s) ? undefined : s);
        expect(readBackAsUtf8(s)).toBe(new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes));
      }),
      { numRuns: 3000 },
    );
  });

  test("decodeWtf8: other bytes decode as decodeUtf8 decodes them; decodeWtf8Strict refuses them", () => {
    fc.assert(
      fc.property(bytesArb, (bytes) => {
        const text = decodeWtf8(bytes, 0, bytes.length);
        // Only encoded surrogates read differently, and each is one unit where decodeUtf8 has three U+FFFD.
        if (text !== decodeUtf8(bytes, 0, bytes.length)) {
          expect(readBackAsUtf8(text)).toBe(decodeUtf8(bytes, 0, bytes.length));
        }
        const strictText = decodeWtf8Strict(bytes, 0, bytes.length, (b) => strict.decode(b));
        if (strictText !== undefined) expect([...encode(strictText)]).toEqual([...bytes]);
      }),
      { numRuns: 3000 },
    );
    // A surrogate pair written as two 3-byte halves is not WTF-8: never read as two units (which would pair up).
    const halves = new Uint8Array([0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80]);
    expect(decodeWtf8(halves, 0, 6)).toBe("\uFFFD".repeat(6));
    expect(decodeWtf8Strict(halves, 0, 6, (b) => strict.decode(b))).toBeUndefined();
    expect(decodeWtf8Strict(new Uint8Array([0xed, 0xa0, 0x80, 0xff]), 0, 4, (b) => strict.decode(b))).toBeUndefined();
  });
});
