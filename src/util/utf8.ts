/** UTF-8 helpers shared by key handling and the commit log's encoder. */

/**
 * The UTF-8 byte length of a string, without encoding it. A lone surrogate counts 3 bytes: the
 * length of its WTF-8 form ({@link writeWtf8}) and of the U+FFFD `TextEncoder` writes for it.
 */
export function utf8Length(s: string): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** A lone (unpaired) surrogate: what UTF-8 cannot hold. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

/**
 * Whether a string has no lone surrogate. Uses `String.prototype.isWellFormed` (ES2024) where the
 * runtime has it, a regular expression elsewhere.
 */
export const isWellFormed: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === "function"
    ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

/** Three U+FFFD: what a UTF-8 decoder reads from the three bytes of an encoded lone surrogate. */
const REPLACED_SURROGATE = "\uFFFD\uFFFD\uFFFD";

/**
 * The string a UTF-8 decoder (`TextDecoder`, V8's) reads back from the WTF-8 bytes of `s`
 * ({@link writeWtf8}): `s` itself when it is well-formed; otherwise every lone surrogate, whose
 * three bytes are not valid UTF-8, becomes three U+FFFD (`"a\uD800b"` → `"a\uFFFD\uFFFD\uFFFDb"`).
 * This is how the platform hands back a key or a SQL text it stored from a string with a lone
 * surrogate.
 */
export function readBackAsUtf8(s: string): string {
  return isWellFormed(s) ? s : s.replace(LONE_SURROGATES, REPLACED_SURROGATE);
}

/**
 * Writes `s` at `out[at…]` as WTF-8 (generalized UTF-8): UTF-8, except that a lone surrogate is
 * written as the three bytes of its own code unit (U+D800 → `ED A0 80`), as V8 and Emscripten's
 * encoder write it, and so as the platform stores a string with one and sql.js binds it. A
 * surrogate pair is one 4-byte character, as in UTF-8. `out` must have room for
 * {@link utf8Length}(s) bytes. Returns the number of bytes written. For a well-formed string the
 * bytes are exactly `TextEncoder`'s (which callers use for those: it is native).
 */
export function writeWtf8(s: string, out: Uint8Array, at: number): number {
  const start = at;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      out[at++] = c;
    } else if (c < 0x800) {
      out[at++] = 0xc0 | (c >> 6);
      out[at++] = 0x80 | (c & 0x3f);
    } else {
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
          out[at++] = 0xf0 | (c >> 18);
          out[at++] = 0x80 | ((c >> 12) & 0x3f);
          out[at++] = 0x80 | ((c >> 6) & 0x3f);
          out[at++] = 0x80 | (c & 0x3f);
          continue;
        }
      }
      out[at++] = 0xe0 | (c >> 12);
      out[at++] = 0x80 | ((c >> 6) & 0x3f);
      out[at++] = 0x80 | (c & 0x3f);
    }
  }
  return at - start;
}

/**
 * The code unit of the encoded surrogate at `bytes[i…i+3)` (`ED`, `A0`–`BF`, a continuation byte),
 * or 0 when there is none there (or it would run past `end`).
 */
function encodedSurrogateAt(bytes: Uint8Array, i: number, end: number): number {
  if (i + 3 > end || bytes[i] !== 0xed) return 0;
  const b1 = bytes[i + 1] as number;
  const b2 = bytes[i + 2] as number;
  if (b1 < 0xa0 || b1 > 0xbf || (b2 & 0xc0) !== 0x80) return 0;
  return 0xd000 | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
}

/**
 * Splits `bytes[start, end)` at the encoded lone surrogates {@link writeWtf8} writes: `text` gets
 * each run between them and `unit` each surrogate, in order. A high one directly followed by a low
 * one (a surrogate pair written as two 3-byte halves, which WTF-8 never does: the pair is one
 * 4-byte character) is not split out: it stays in its run. Whether any surrogate was found.
 */
function splitAtSurrogates(
  bytes: Uint8Array,
  start: number,
  end: number,
  text: (from: number, to: number) => void,
  unit: (code: number) => void,
): boolean {
  let from = start;
  let found = false;
  for (let i = start; i + 3 <= end; ) {
    const code = encodedSurrogateAt(bytes, i, end);
    if (code === 0) {
      i++;
      continue;
    }
    if (code <= 0xdbff && encodedSurrogateAt(bytes, i + 3, end) >= 0xdc00) {
      i += 6;
      continue;
    }
    found = true;
    text(from, i);
    unit(code);
    i += 3;
    from = i;
  }
  if (found) text(from, end);
  return found;
}

/**
 * `bytes[start, end)` decoded as {@link decodeUtf8} decodes it, except that a lone surrogate
 * written as WTF-8 ({@link writeWtf8}) comes back as that surrogate, so a string read back from its
 * WTF-8 bytes is the string written: `"a\uD800b"` stays distinct from `"a\uFFFDb"`. Everything else
 * decodes exactly as there (valid UTF-8, which is all a well-formed string writes, unchanged; other
 * invalid sequences as U+FFFD). The surrogates are looked for only when the decoded text has a
 * U+FFFD, which valid UTF-8 without that character never has.
 */
export function decodeWtf8(bytes: Uint8Array, start: number, end: number): string {
  const text = decodeUtf8(bytes, start, end);
  if (text.indexOf("\uFFFD") === -1) return text;
  let out = "";
  const found = splitAtSurrogates(
    bytes,
    start,
    end,
    (from, to) => {
      if (to > from) out += decodeUtf8(bytes, from, to);
    },
    (code) => {
      out += String.fromCharCode(code);
    },
  );
  return found ? out : text;
}

/**
 * `bytes[start, end)` as a strict decoder of WTF-8 reads it: valid UTF-8 (a leading U+FEFF kept),
 * where a lone surrogate may also be written as {@link writeWtf8} writes it; `undefined` for
 * anything else (an invalid sequence, a surrogate pair written as two halves). `decode` is the
 * caller's strict UTF-8 decoder, which throws on invalid input.
 */
export function decodeWtf8Strict(
  bytes: Uint8Array,
  start: number,
  end: number,
  decode: (bytes: Uint8Array) => string,
): string | undefined {
  let out = "";
  try {
    const found = splitAtSurrogates(
      bytes,
      start,
      end,
      (from, to) => {
        if (to > from) out += decode(bytes.subarray(from, to));
      },
      (code) => {
        out += String.fromCharCode(code);
      },
    );
    return found ? out : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The longest byte run {@link asciiString} turns into a string itself: past about 32 bytes one
 * `TextDecoder` call is the faster (measured 86 against 93 ns at 32 bytes, 170 against 94 ns at 64).
 */
export const ASCII_STRING_MAX = 32;

/** One argument array per length, reused by {@link asciiString} (its calls never nest). */
const asciiArgs: number[][] = Array.from({ length: ASCII_STRING_MAX + 1 }, (_, n) => new Array<number>(n).fill(0));

const fromCharCode = String.fromCharCode;

/**
 * `bytes[start, start + length)` as a string when every byte is ASCII (below 0x80) and `length` is
 * at most {@link ASCII_STRING_MAX}; otherwise `undefined`, and the caller decodes the bytes with a
 * UTF-8 decoder. For such bytes the result is exactly what `TextDecoder` (UTF-8) returns: each byte
 * is its own code unit, NUL included; anything it would treat specially (a byte-order mark, an
 * invalid or incomplete sequence, an encoded surrogate) has a byte of 0x80 or more and is left to
 * it. Short keys are decoded this way because a decoder call costs far more than their bytes
 * (measured ~120 ns against ~55 ns for a 12-byte key).
 */
export function asciiString(bytes: Uint8Array, start: number, length: number): string | undefined {
  if (length > ASCII_STRING_MAX) return undefined;
  const args = asciiArgs[length] as number[];
  for (let i = 0; i < length; i++) {
    const c = bytes[start + i] as number;
    if (c >= 0x80) return undefined;
    args[i] = c;
  }
  return fromCharCode.apply(null, args);
}

/** The UTF-8 decoder of {@link decodeUtf8}'s fallback: a leading byte-order mark is kept (it is text). */
const utf8Decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** What {@link decodeUtf8} uses of Node's `Buffer`: a view over a range of an `ArrayBuffer`, and its UTF-8 slice. */
interface NodeBufferView {
  readonly length: number;
  utf8Slice(start: number, end: number): string;
}
interface NodeBufferClass {
  from(buffer: ArrayBufferLike, byteOffset: number, length: number): NodeBufferView;
}

/**
 * Node's `Buffer`, when this runtime has one whose `utf8Slice` decodes exactly as the fallback
 * decoder does (checked once, on a byte-order mark, an invalid byte and an encoded surrogate).
 */
const nodeBuffer: NodeBufferClass | undefined = (() => {
  const candidate = (globalThis as unknown as { Buffer?: Partial<NodeBufferClass> & { prototype?: unknown } }).Buffer;
  if (typeof candidate?.from !== "function") return undefined;
  if (typeof (candidate.prototype as Partial<NodeBufferView> | undefined)?.utf8Slice !== "function") return undefined;
  const probe = new Uint8Array([0xef, 0xbb, 0xbf, 0x61, 0xff, 0xed, 0xa0, 0x80, 0xe2, 0x82]);
  try {
    const view = (candidate as NodeBufferClass).from(probe.buffer, 0, probe.length);
    return view.utf8Slice(0, probe.length) === utf8Decoder.decode(probe) ? (candidate as NodeBufferClass) : undefined;
  } catch {
    return undefined;
  }
})();

/**
 * The array {@link decodeUtf8} last decoded from, and a `Buffer` over the same bytes: a listing
 * decodes every row from the same engine heap, and making the `Buffer` (or even reading an array's
 * `buffer`) costs more than the decoding saves. Held strongly until a call decodes from another
 * array: weak references (tried first) made a 100k-key listing 1.2–1.4× slower in CPU time. What it
 * can keep alive is one array's memory: usually sql.js's heap, which its module keeps anyway.
 */
let lastArray: Uint8Array | undefined;
let lastView: NodeBufferView | undefined;

/**
 * `bytes[start, end)` decoded as UTF-8 exactly as `new TextDecoder("utf-8", { ignoreBOM: true })`
 * decodes it: invalid sequences become U+FFFD, and a leading byte-order mark is kept as U+FEFF
 * (it is a character of the string that was encoded). Where Node's `Buffer` is available this is its
 * `utf8Slice` over the same memory (the same decoder as Node's `TextDecoder`, without a view per
 * call nor the decoder's own argument handling); elsewhere a `TextDecoder` call on a view of the range.
 */
export function decodeUtf8(bytes: Uint8Array, start: number, end: number): string {
  if (nodeBuffer !== undefined && start <= end) {
    let view = lastArray === bytes ? lastView : undefined;
    // An array whose ArrayBuffer grew (resizable) since its view was made: a new view covers it.
    if (view === undefined || end > view.length) {
      view = nodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      lastArray = bytes;
      lastView = view;
    }
    // Past the end, or a detached buffer (length 0): the decoder below answers as it always did.
    if (end <= view.length) return view.utf8Slice(start, end);
  }
  return utf8Decoder.decode(bytes.subarray(start, end));
}
