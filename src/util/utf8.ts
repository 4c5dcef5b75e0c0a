/** UTF-8 helpers shared by key handling and the commit log's encoder. */

/**
 * The UTF-8 byte length of a string, without encoding it. A lone surrogate counts 3 bytes, as
 * `TextEncoder` writes it (U+FFFD).
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

/** The string with every lone surrogate replaced by U+FFFD, as a UTF-8 encoder writes it. */
export function toWellFormed(s: string): string {
  return isWellFormed(s) ? s : s.replace(LONE_SURROGATES, "\uFFFD");
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
