/**
 * The layout constants of the binary log format that the encoder (record-codec.ts, which describes
 * the frame) and the decoder (record-decoder.ts) share: the payload's flag bits, its `ext` bits,
 * the per-statement extras, the binding tags and the frame's sizes. The full layout is documented in
 * docs/durability.md.
 *
 * @packageDocumentation
 */

/** Bits of the payload's first byte. Unknown bits make a frame malformed (room for a format v2). */
export const FLAG_RESET = 0x01;
export const FLAG_RESTORE = 0x02;
export const FLAG_ALARM_SET = 0x04;
export const FLAG_ALARM_CLEAR = 0x08;
export const FLAG_SQL = 0x10;
export const FLAG_KV = 0x20;
/** The alarm is stored as a float64 (not an integer in zigzag range). */
export const FLAG_ALARM_FLOAT = 0x40;
/** `timeMs` and every `nowMs` are stored as raw float64s (some were not integers in zigzag range). */
export const FLAG_FLOAT_TIMES = 0x80;
/** Both alarm bits at once: an `ext` byte follows the flags. */
export const FLAG_EXTENDED = FLAG_ALARM_SET | FLAG_ALARM_CLEAR;
/** Bits of the `ext` byte. */
export const EXT_ALARM_SET = 0x01;
export const EXT_ALARM_CLEAR = 0x02;
/** A session mark follows the alarm: varint(settingsMask * 2 + start). */
export const EXT_SESSION = 0x04;
/** Every SQL entry is followed by varint(extras): bit 0 inputs, bit 1 settings. */
export const EXT_ENTRY_EXTRAS = 0x08;
/**
 * The session mark is followed by varint(realTextDigits) (only with {@link EXT_SESSION}); a mark
 * without it is of a session that ran with sql.js's SQLite's 17 digits.
 */
export const EXT_REAL_DIGITS = 0x10;
/**
 * The session ran with SQLite's own math functions (`SessionMark.nativeFunctions`; only with
 * {@link EXT_SESSION}, and no bytes follow); a mark without it is of a session that ran with
 * sql.js's legacy extension functions.
 */
export const EXT_NATIVE_FUNCTIONS = 0x20;
export const EXT_KNOWN =
  EXT_ALARM_SET | EXT_ALARM_CLEAR | EXT_SESSION | EXT_ENTRY_EXTRAS | EXT_REAL_DIGITS | EXT_NATIVE_FUNCTIONS;
export const ENTRY_INPUTS = 0x01;
export const ENTRY_SETTINGS = 0x02;
export const ENTRY_REPLAY = 0x04;

/** Tags of the engine's values (`EngineValue`) in SQL bindings. */
export const TAG_NULL = 0;
export const TAG_INT = 1;
export const TAG_FLOAT = 2;
export const TAG_TEXT = 3;
export const TAG_BLOB = 4;

/**
 * Integers up to this magnitude are written as zigzag varints. Zigzag doubles the magnitude, and
 * 2^52 · 2 is still exactly representable, so no precision is lost; larger numbers go as float64
 * (which a varint would not beat anyway).
 */
export const MAX_ZIGZAG_MAGNITUDE = 2 ** 51;

/** Bytes a frame adds around its payload at most: a 5-byte length and the 4-byte checksum. */
export const MAX_LENGTH_BYTES = 5;
export const CHECKSUM_BYTES = 4;

/**
 * Frames larger than this are treated as a corrupt length rather than read (1 GiB, far above any
 * batch the storage limits allow).
 */
export const MAX_FRAME_PAYLOAD_BYTES = 2 ** 30;

/** The bytes of `v` as an unsigned varint (the shortest encoding a frame's length may use). */
export function varintSize(v: number): number {
  let n = 1;
  while (v > 0x7f) {
    v = Math.floor(v / 0x80);
    n++;
  }
  return n;
}
