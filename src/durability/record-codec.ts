/**
 * The binary log format of {@link CommitRecord}s: one self-checking frame per record.
 *
 * ```
 * frame   = varint(payloadLength) payload crc32le(varint(payloadLength) payload)
 * payload = flags:u8 [ext:u8] varint(seq) time(timeMs) [varint(restoreToSeq)] [alarm] [session] [sql] [kv]
 * ```
 *
 * `ext` is present when `flags` has both alarm bits (impossible on their own): it then holds the
 * alarm bits and the newer parts (a session mark, per-statement extras), which frames written
 * before them never have.
 *
 * Framing costs 5–6 bytes per record (1–2 length bytes, 4 checksum bytes), and a small key-value
 * batch adds about 9 more (flags, seq, time, counts), so the log stays well within 2× the changed
 * data for typical batches. The full layout is documented in docs/durability.md.
 *
 * Decoding stops at the first frame that is incomplete or fails its checksum and reports it as a
 * torn tail: a frame is either returned whole or not at all, so replay never half-applies a batch.
 *
 * @packageDocumentation
 */
import type { EngineValue } from "../engine/engine";
import { utf8Length } from "../util/utf8";
import {
  CONNECTION_SETTING_NAMES,
  type CommitRecord,
  type ConnectionSettings,
  type KvWrite,
  type SqlWrite,
} from "./commit-record";
import { crc32 } from "./crc32";

/** Bits of the payload's first byte. Unknown bits make a frame malformed (room for a format v2). */
const FLAG_RESET = 0x01;
const FLAG_RESTORE = 0x02;
const FLAG_ALARM_SET = 0x04;
const FLAG_ALARM_CLEAR = 0x08;
const FLAG_SQL = 0x10;
const FLAG_KV = 0x20;
/** The alarm is stored as a float64 (not an integer in zigzag range). */
const FLAG_ALARM_FLOAT = 0x40;
/** `timeMs` and every `nowMs` are stored as raw float64s (some were not integers in zigzag range). */
const FLAG_FLOAT_TIMES = 0x80;
/** Both alarm bits at once: an `ext` byte follows the flags. */
const FLAG_EXTENDED = FLAG_ALARM_SET | FLAG_ALARM_CLEAR;
/** Bits of the `ext` byte. */
const EXT_ALARM_SET = 0x01;
const EXT_ALARM_CLEAR = 0x02;
/** A session mark follows the alarm: varint(settingsMask * 2 + start). */
const EXT_SESSION = 0x04;
/** Every SQL entry is followed by varint(extras): bit 0 inputs, bit 1 settings. */
const EXT_ENTRY_EXTRAS = 0x08;
/**
 * The session mark is followed by varint(realTextDigits) (only with {@link EXT_SESSION}); a mark
 * without it is of a session that ran with sql.js's SQLite's 17 digits.
 */
const EXT_REAL_DIGITS = 0x10;
const EXT_KNOWN = EXT_ALARM_SET | EXT_ALARM_CLEAR | EXT_SESSION | EXT_ENTRY_EXTRAS | EXT_REAL_DIGITS;
/** The digits SQLite accepts for `nFpDigit`. */
const MAX_REAL_DIGITS = 23;
const ENTRY_INPUTS = 0x01;
const ENTRY_SETTINGS = 0x02;
const ENTRY_REPLAY = 0x04;

/** Tags of {@link EngineValue}s in SQL bindings. */
const TAG_NULL = 0;
const TAG_INT = 1;
const TAG_FLOAT = 2;
const TAG_TEXT = 3;
const TAG_BLOB = 4;

/**
 * Integers up to this magnitude are written as zigzag varints. Zigzag doubles the magnitude, and
 * 2^52 · 2 is still exactly representable, so no precision is lost; larger numbers go as float64
 * (which a varint would not beat anyway).
 */
const MAX_ZIGZAG_MAGNITUDE = 2 ** 51;

/** Bytes a frame adds around its payload at most: a 5-byte length and the 4-byte checksum. */
const MAX_LENGTH_BYTES = 5;
const CHECKSUM_BYTES = 4;

/**
 * Frames larger than this are treated as a corrupt length rather than read (1 GiB, far above any
 * batch the storage limits allow).
 */
export const MAX_FRAME_PAYLOAD_BYTES = 2 ** 30;

/** Why {@link decodeRecords} stopped before the end of its input. */
export type TornReason =
  /** The bytes end inside a frame (a write that did not finish). */
  | "short-read"
  /** The length prefix is zero, overlong or beyond {@link MAX_FRAME_PAYLOAD_BYTES}. */
  | "bad-length"
  /** The frame is complete but its CRC-32 does not match. */
  | "checksum"
  /** The checksum matches but the payload does not parse (a bug or an astronomically unlikely collision). */
  | "malformed";

/** The result of {@link decodeRecords}. */
export interface DecodeResult {
  /** Every whole, valid record before the first bad frame, in order. */
  records: CommitRecord[];
  /** Bytes covered by `records`; the offset to truncate a log file to. */
  validBytes: number;
  /** Whether bytes after `validBytes` were ignored because the frame there was torn or corrupt. */
  tornTail: boolean;
  /** Why decoding stopped early; absent when `tornTail` is `false`. */
  reason?: TornReason;
}

// ---------------------------------------------------------------------------------------------
// Writing

/**
 * One growable scratch buffer shared by every encode call. Encoding is synchronous and never
 * re-entrant, so sharing is safe, and it saves an allocation per record on the commit path.
 */
let scratch = new Uint8Array(4096);
let scratchView = new DataView(scratch.buffer);
let pos = 0;
const textEncoder = new TextEncoder();

function ensure(extra: number): void {
  const needed = pos + extra;
  if (needed <= scratch.length) return;
  let size = scratch.length * 2;
  while (size < needed) size *= 2;
  const next = new Uint8Array(size);
  next.set(scratch.subarray(0, pos));
  scratch = next;
  scratchView = new DataView(scratch.buffer);
}

/** An unsigned varint (7 bits per byte, least significant first) of a safe integer ≥ 0. */
function writeVarint(v: number): void {
  ensure(8);
  if (v < 0x1_0000_0000) {
    // Bit operations are exact below 2^32 and much faster than division.
    while (v > 0x7f) {
      scratch[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    scratch[pos++] = v;
    return;
  }
  while (v > 0x7f) {
    scratch[pos++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  scratch[pos++] = v;
}

/** Zigzag maps small negative and positive integers to small unsigned ones (0,-1,1,-2 → 0,1,2,3). */
function writeZigzag(v: number): void {
  writeVarint(v >= 0 ? v * 2 : -v * 2 - 1);
}

function writeFloat64(v: number): void {
  ensure(8);
  scratchView.setFloat64(pos, v, true);
  pos += 8;
}

function isZigzagInteger(v: number): boolean {
  return Number.isInteger(v) && Math.abs(v) <= MAX_ZIGZAG_MAGNITUDE && !Object.is(v, -0);
}

/** A varint byte length followed by UTF-8. ASCII (the common case for keys and SQL) is copied directly. */
function writeString(s: string): void {
  const n = s.length;
  const start = pos;
  writeVarint(n);
  ensure(n);
  let i = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) break;
    scratch[pos++] = c;
  }
  if (i === n) return;
  // Not ASCII: rewind and write the true UTF-8 length first. Lone surrogates become U+FFFD, as they
  // do when SQLite stores TEXT.
  pos = start;
  const bytes = utf8Length(s);
  writeVarint(bytes);
  ensure(bytes);
  pos += textEncoder.encodeInto(s, scratch.subarray(pos, pos + bytes)).written;
}

function writeBytes(b: Uint8Array): void {
  ensure(b.length);
  scratch.set(b, pos);
  pos += b.length;
}

function writeValue(v: EngineValue): void {
  if (v === null) {
    ensure(1);
    scratch[pos++] = TAG_NULL;
  } else if (typeof v === "number") {
    ensure(1);
    if (isZigzagInteger(v)) {
      scratch[pos++] = TAG_INT;
      writeZigzag(v);
    } else {
      scratch[pos++] = TAG_FLOAT;
      writeFloat64(v);
    }
  } else if (typeof v === "string") {
    ensure(1);
    scratch[pos++] = TAG_TEXT;
    writeString(v);
  } else {
    ensure(1);
    scratch[pos++] = TAG_BLOB;
    writeVarint(v.length);
    writeBytes(v);
  }
}

/** A zigzag varint of a signed 64-bit integer (up to 10 bytes). */
function writeBigZigzag(v: bigint): void {
  let z = v >= 0n ? v * 2n : -v * 2n - 1n;
  ensure(10);
  while (z > 0x7fn) {
    scratch[pos++] = Number(z & 0x7fn) | 0x80;
    z >>= 7n;
  }
  scratch[pos++] = Number(z);
}

/** The settings as a bit mask, in {@link CONNECTION_SETTING_NAMES} order. */
function settingsMask(settings: ConnectionSettings): number {
  let mask = 0;
  CONNECTION_SETTING_NAMES.forEach((name, bit) => {
    if (settings[name]) mask |= 1 << bit;
  });
  return mask;
}

function settingsOf(mask: number): ConnectionSettings {
  if (mask >= 1 << CONNECTION_SETTING_NAMES.length) throw new Malformed();
  const settings = {} as ConnectionSettings;
  CONNECTION_SETTING_NAMES.forEach((name, bit) => {
    settings[name] = (mask & (1 << bit)) !== 0;
  });
  return settings;
}

function checkSeq(name: string, v: number, min: number): void {
  if (!Number.isSafeInteger(v) || v < min)
    throw new RangeError(`CommitRecord.${name} must be a safe integer ≥ ${min}; got ${String(v)}.`);
}

/** Writes the payload of `record` at `pos`. */
function writePayload(record: CommitRecord): void {
  checkSeq("seq", record.seq, 1);
  let flags = 0;
  if (record.reset) flags |= FLAG_RESET;
  if (record.restoreToSeq !== undefined) {
    checkSeq("restoreToSeq", record.restoreToSeq, 0);
    flags |= FLAG_RESTORE;
  }
  const alarm = record.alarm;
  if (alarm === null) flags |= FLAG_ALARM_CLEAR;
  else if (alarm !== undefined) flags |= isZigzagInteger(alarm) ? FLAG_ALARM_SET : FLAG_ALARM_SET | FLAG_ALARM_FLOAT;
  const sql = record.sql;
  const kv = record.kv;
  if (sql.length > 0) flags |= FLAG_SQL;
  if (kv.length > 0) flags |= FLAG_KV;
  let ext = 0;
  const session = record.session;
  if (session !== undefined) {
    ext |= EXT_SESSION;
    const digits = session.realTextDigits;
    if (digits !== undefined) {
      if (!(Number.isInteger(digits) && digits >= 1 && digits <= MAX_REAL_DIGITS)) {
        throw new RangeError(`SessionMark.realTextDigits must be an integer from 1 to 23; got ${String(digits)}.`);
      }
      ext |= EXT_REAL_DIGITS;
    }
  }
  for (let i = 0; i < sql.length && (ext & EXT_ENTRY_EXTRAS) === 0; i++) {
    const w = sql[i] as SqlWrite;
    if ((w.inputs !== undefined && w.inputs.length > 0) || w.settings !== undefined || w.replay !== undefined) {
      ext |= EXT_ENTRY_EXTRAS;
    }
  }
  if (ext !== 0) {
    if (flags & FLAG_ALARM_SET) ext |= EXT_ALARM_SET;
    if (flags & FLAG_ALARM_CLEAR) ext |= EXT_ALARM_CLEAR;
    flags |= FLAG_EXTENDED;
  }
  // Times are integers from the clock in practice; a fake clock may produce fractions, and those
  // must still round-trip exactly, so the whole record then switches to float64 times.
  let floatTimes = !isZigzagInteger(record.timeMs);
  for (let i = 0; i < sql.length && !floatTimes; i++) {
    const nowMs = (sql[i] as SqlWrite).nowMs;
    const delta = nowMs - record.timeMs;
    // The subtraction may round (a tiny fraction next to a large time): only exact deltas qualify.
    if (!isZigzagInteger(delta) || !Object.is(record.timeMs + delta, nowMs)) floatTimes = true;
  }
  if (floatTimes) flags |= FLAG_FLOAT_TIMES;

  ensure(1);
  scratch[pos++] = flags;
  if (ext !== 0) {
    ensure(1);
    scratch[pos++] = ext;
  }
  writeVarint(record.seq);
  if (floatTimes) writeFloat64(record.timeMs);
  else writeZigzag(record.timeMs);
  if (record.restoreToSeq !== undefined) writeVarint(record.restoreToSeq);
  if (alarm !== null && alarm !== undefined) {
    if (flags & FLAG_ALARM_FLOAT) writeFloat64(alarm);
    else writeZigzag(alarm);
  }
  if (session !== undefined) {
    writeVarint(settingsMask(session.settings) * 2 + (session.start ? 1 : 0));
    if (session.realTextDigits !== undefined) writeVarint(session.realTextDigits);
  }
  if (sql.length > 0) {
    writeVarint(sql.length);
    // A batch often repeats one statement (an INSERT per row): later repeats are written as a
    // back-reference, `index * 2 + 1`, instead of the text; new text is `byteLength * 2`.
    let seen: Map<string, number> | undefined;
    for (let i = 0; i < sql.length; i++) {
      const w = sql[i] as SqlWrite;
      const ref = seen?.get(w.sql);
      if (ref !== undefined) writeVarint(ref * 2 + 1);
      else {
        if (sql.length > 1) (seen ??= new Map()).set(w.sql, i);
        writeSqlText(w.sql);
      }
      if (floatTimes) writeFloat64(w.nowMs);
      else writeZigzag(w.nowMs - record.timeMs);
      const bindings = w.bindings;
      writeVarint(bindings.length);
      for (let j = 0; j < bindings.length; j++) writeValue(bindings[j] as EngineValue);
      if (ext & EXT_ENTRY_EXTRAS) writeEntryExtras(w);
    }
  }
  if (kv.length > 0) {
    writeVarint(kv.length);
    for (let i = 0; i < kv.length; i++) {
      const w = kv[i] as KvWrite;
      writeString(w.key);
      // `length + 1`, so that 0 can mean "deleted" without a separate byte.
      if (w.value === null) writeVarint(0);
      else {
        writeVarint(w.value.length + 1);
        writeBytes(w.value);
      }
    }
  }
}

function writeEntryExtras(w: SqlWrite): void {
  const inputs = w.inputs !== undefined && w.inputs.length > 0 ? w.inputs : undefined;
  writeVarint(
    (inputs === undefined ? 0 : ENTRY_INPUTS) |
      (w.settings === undefined ? 0 : ENTRY_SETTINGS) |
      (w.replay === undefined ? 0 : ENTRY_REPLAY),
  );
  if (inputs !== undefined) {
    writeVarint(inputs.length);
    for (const v of inputs) writeBigZigzag(v);
  }
  if (w.settings !== undefined) writeVarint(settingsMask(w.settings));
  if (w.replay !== undefined) {
    writeVarint(w.replay.length);
    for (const s of w.replay) writeString(s);
  }
}

/** Like {@link writeString}, but the length is doubled (low bit 0 = text follows, 1 = back-reference). */
function writeSqlText(s: string): void {
  const bytes = utf8Length(s);
  writeVarint(bytes * 2);
  ensure(bytes);
  if (bytes === s.length) {
    for (let i = 0; i < bytes; i++) scratch[pos++] = s.charCodeAt(i);
  } else pos += textEncoder.encodeInto(s, scratch.subarray(pos, pos + bytes)).written;
}

function varintSize(v: number): number {
  let n = 1;
  while (v > 0x7f) {
    v = Math.floor(v / 0x80);
    n++;
  }
  return n;
}

/**
 * Appends one whole frame at `pos`. The payload is written after room for the longest length
 * prefix, then moved back once its length is known: one pass over the record, one small memmove.
 */
function writeFrame(record: CommitRecord, withChecksum: boolean): void {
  const frameStart = pos;
  ensure(MAX_LENGTH_BYTES);
  pos += MAX_LENGTH_BYTES;
  const payloadStart = pos;
  writePayload(record);
  const payloadLength = pos - payloadStart;
  const lengthBytes = varintSize(payloadLength);
  pos = frameStart;
  writeVarint(payloadLength);
  if (lengthBytes < MAX_LENGTH_BYTES) scratch.copyWithin(pos, payloadStart, payloadStart + payloadLength);
  pos += payloadLength;
  ensure(CHECKSUM_BYTES);
  const sum = withChecksum ? crc32(scratch, frameStart, pos) : 0;
  scratchView.setUint32(pos, sum, true);
  pos += CHECKSUM_BYTES;
}

/**
 * Encodes one record as a complete frame (length, payload, CRC-32).
 *
 * Throws a `RangeError` when `seq` or `restoreToSeq` is not a safe integer in range; every other
 * field round-trips exactly (times and numbers included).
 *
 * @example
 * ```ts
 * const frame = encodeRecord({ seq: 1, timeMs: clock.now(), reset: false, sql: [], kv: [{ key: "a", value: bytes }] });
 * await file.write(frame);
 * ```
 */
export function encodeRecord(record: CommitRecord): Uint8Array {
  pos = 0;
  writeFrame(record, true);
  return scratch.slice(0, pos);
}

/**
 * Encodes records as consecutive frames in one buffer (one write for a group commit).
 *
 * @example
 * ```ts
 * const bytes = encodeRecords(batch); // same as concatenating encodeRecord() of each
 * ```
 */
export function encodeRecords(records: readonly CommitRecord[]): Uint8Array {
  return encodeRecordsView(records).slice();
}

/**
 * As {@link encodeRecords}, but a view of the encoder's own buffer, valid only until this module's
 * next encode call: for a caller that copies it into a buffer of its own (`group-commit.ts`). @internal
 */
export function encodeRecordsView(records: readonly CommitRecord[]): Uint8Array {
  pos = 0;
  for (let i = 0; i < records.length; i++) writeFrame(records[i] as CommitRecord, true);
  return scratch.subarray(0, pos);
}

/**
 * The exact number of bytes {@link encodeRecord} produces for `record`, without allocating or
 * checksumming. Lets the in-memory adapter count log bytes honestly while storing records as objects.
 *
 * @example
 * ```ts
 * encodedRecordSize(record) === encodeRecord(record).length; // true
 * ```
 */
export function encodedRecordSize(record: CommitRecord): number {
  pos = 0;
  writeFrame(record, false);
  return pos;
}

// ---------------------------------------------------------------------------------------------
// Reading

/** Thrown inside the payload parser; never escapes {@link decodeRecords}. */
class Malformed extends Error {}

const textDecoder = new TextDecoder("utf-8", { fatal: true });

/** A bounds-checked cursor over one payload. */
class Reader {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  #at: number;
  readonly #start: number;
  readonly #end: number;
  #owned: Uint8Array | null = null;

  constructor(bytes: Uint8Array, view: DataView, start: number, end: number) {
    this.#bytes = bytes;
    this.#view = view;
    this.#at = start;
    this.#start = start;
    this.#end = end;
  }

  get done(): boolean {
    return this.#at === this.#end;
  }

  u8(): number {
    if (this.#at >= this.#end) throw new Malformed();
    return this.#bytes[this.#at++] as number;
  }

  varint(): number {
    let result = 0;
    let scale = 1;
    // 8 bytes hold 56 bits, enough for every safe integer; more means damage.
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      result += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (result > Number.MAX_SAFE_INTEGER) throw new Malformed();
        return result;
      }
      scale *= 0x80;
    }
    throw new Malformed();
  }

  /** A zigzag varint of a signed 64-bit integer. */
  bigZigzag(): bigint {
    let z = 0n;
    for (let i = 0; i < 10; i++) {
      const b = this.u8();
      z |= BigInt(b & 0x7f) << BigInt(7 * i);
      if (b < 0x80) {
        if (z >= 1n << 64n) throw new Malformed();
        return z % 2n === 0n ? z / 2n : -(z + 1n) / 2n;
      }
    }
    throw new Malformed();
  }

  zigzag(): number {
    const z = this.varint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  float64(): number {
    if (this.#at + 8 > this.#end) throw new Malformed();
    const v = this.#view.getFloat64(this.#at, true);
    this.#at += 8;
    return v;
  }

  /**
   * Byte values are views into one private copy of this frame's payload, made on first use: decoded
   * records never pin the (possibly large) input buffer, and a frame costs one allocation instead of
   * one per value (allocation dominates decoding). The copy is built with the constructor because
   * `slice()` on a Node `Buffer` is a view, not a copy.
   */
  bytes(length: number): Uint8Array {
    const at = this.#at;
    if (length > this.#end - at) throw new Malformed();
    this.#at += length;
    if (this.#owned === null) {
      this.#owned = new Uint8Array(this.#bytes.subarray(this.#start, this.#end));
    }
    return this.#owned.subarray(at - this.#start, at - this.#start + length);
  }

  utf8(length: number): string {
    const start = this.#at;
    if (length > this.#end - start) throw new Malformed();
    const b = this.#bytes;
    this.#at += length;
    // Short ASCII strings (most keys) are cheaper to build by hand than through TextDecoder.
    if (length <= 32) {
      let s = "";
      let i = start;
      const end = start + length;
      for (; i < end; i++) {
        const c = b[i] as number;
        if (c >= 0x80) break;
        s += String.fromCharCode(c);
      }
      if (i === end) return s;
    }
    try {
      return textDecoder.decode(b.subarray(start, start + length));
    } catch {
      throw new Malformed();
    }
  }

  value(): EngineValue {
    switch (this.u8()) {
      case TAG_NULL:
        return null;
      case TAG_INT:
        return this.zigzag();
      case TAG_FLOAT:
        return this.float64();
      case TAG_TEXT:
        return this.utf8(this.varint());
      case TAG_BLOB:
        return this.bytes(this.varint());
      default:
        throw new Malformed();
    }
  }
}

function readPayload(r: Reader): CommitRecord {
  let flags = r.u8();
  let ext = 0;
  if ((flags & FLAG_EXTENDED) === FLAG_EXTENDED) {
    ext = r.u8();
    if (ext === 0 || (ext & ~EXT_KNOWN) !== 0) throw new Malformed();
    if ((ext & (EXT_SESSION | EXT_ENTRY_EXTRAS)) === 0) throw new Malformed();
    if (ext & EXT_REAL_DIGITS && !(ext & EXT_SESSION)) throw new Malformed();
    flags &= ~FLAG_EXTENDED;
    if (ext & EXT_ALARM_SET) flags |= FLAG_ALARM_SET;
    if (ext & EXT_ALARM_CLEAR) flags |= FLAG_ALARM_CLEAR;
  }
  if ((flags & FLAG_ALARM_SET && flags & FLAG_ALARM_CLEAR) || (flags & FLAG_ALARM_FLOAT && !(flags & FLAG_ALARM_SET)))
    throw new Malformed();
  const seq = r.varint();
  if (seq < 1) throw new Malformed();
  const floatTimes = (flags & FLAG_FLOAT_TIMES) !== 0;
  const timeMs = floatTimes ? r.float64() : r.zigzag();
  const record: CommitRecord = { seq, timeMs, reset: (flags & FLAG_RESET) !== 0, sql: [], kv: [] };
  if (flags & FLAG_RESTORE) record.restoreToSeq = r.varint();
  if (flags & FLAG_ALARM_CLEAR) record.alarm = null;
  else if (flags & FLAG_ALARM_SET) record.alarm = flags & FLAG_ALARM_FLOAT ? r.float64() : r.zigzag();
  if (ext & EXT_SESSION) {
    const mark = r.varint();
    record.session = { start: mark % 2 === 1, settings: settingsOf(Math.floor(mark / 2)) };
    if (ext & EXT_REAL_DIGITS) {
      const digits = r.varint();
      if (digits < 1 || digits > MAX_REAL_DIGITS) throw new Malformed();
      record.session.realTextDigits = digits;
    }
  }
  if (flags & FLAG_SQL) {
    const count = r.varint();
    if (count === 0) throw new Malformed();
    const sql: SqlWrite[] = [];
    for (let i = 0; i < count; i++) {
      const h = r.varint();
      let text: string;
      if (h % 2 === 1) {
        const ref = sql[(h - 1) / 2];
        if (ref === undefined) throw new Malformed();
        text = ref.sql;
      } else text = r.utf8(h / 2);
      const nowMs = floatTimes ? r.float64() : timeMs + r.zigzag();
      const n = r.varint();
      const bindings: EngineValue[] = [];
      for (let j = 0; j < n; j++) bindings.push(r.value());
      const entry: SqlWrite = { sql: text, bindings, nowMs };
      if (ext & EXT_ENTRY_EXTRAS) readEntryExtras(r, entry);
      sql.push(entry);
    }
    record.sql = sql;
  }
  if (flags & FLAG_KV) {
    const count = r.varint();
    if (count === 0) throw new Malformed();
    const kv: KvWrite[] = [];
    for (let i = 0; i < count; i++) {
      const key = r.utf8(r.varint());
      const n = r.varint();
      kv.push({ key, value: n === 0 ? null : r.bytes(n - 1) });
    }
    record.kv = kv;
  }
  if (!r.done) throw new Malformed();
  return record;
}

function readEntryExtras(r: Reader, entry: SqlWrite): void {
  const extras = r.varint();
  if (extras & ~(ENTRY_INPUTS | ENTRY_SETTINGS | ENTRY_REPLAY)) throw new Malformed();
  if (extras & ENTRY_INPUTS) {
    const count = r.varint();
    if (count === 0) throw new Malformed();
    const inputs: bigint[] = [];
    for (let i = 0; i < count; i++) inputs.push(r.bigZigzag());
    entry.inputs = inputs;
  }
  if (extras & ENTRY_SETTINGS) entry.settings = settingsOf(r.varint());
  if (extras & ENTRY_REPLAY) {
    const count = r.varint();
    const replay: string[] = [];
    for (let i = 0; i < count; i++) replay.push(r.utf8(r.varint()));
    entry.replay = replay;
  }
}

/**
 * The seq a frame's payload starting at `at` claims, read without checking the frame (a cheap
 * filter before a full decode when searching damaged bytes for whole frames); `undefined` when the
 * bytes there cannot start a payload. The payload's layout stays known to this module only.
 *
 * @example
 * ```ts
 * if ((peekPayloadSeq(bytes, payloadStart) ?? 0) > lastSeq) decodeRecords(bytes.subarray(frameStart, frameEnd));
 * ```
 */
export function peekPayloadSeq(bytes: Uint8Array, at: number): number | undefined {
  if (at >= bytes.length) return undefined;
  const flags = bytes[at] as number;
  let p = at + 1;
  if ((flags & FLAG_EXTENDED) === FLAG_EXTENDED) p++;
  let value = 0;
  let scale = 1;
  for (let i = 0; i < MAX_LENGTH_BYTES + 4; i++, p++) {
    if (p >= bytes.length) return undefined;
    const b = bytes[p] as number;
    value += (b & 0x7f) * scale;
    scale *= 0x80;
    if (b < 0x80) return value;
  }
  return undefined;
}

/**
 * Decodes consecutive frames from the start of `bytes`, stopping at the first one that is
 * incomplete, has an impossible length, fails its checksum or does not parse. Never throws on
 * bad input and never returns part of a record. With `from` and `maxRecords` it decodes at most
 * that many frames starting at byte `from` (`validBytes` is then where it stopped), so that a long
 * log can be read a chunk of records at a time. `verified` skips the checksums: only for bytes whose
 * frames {@link scanFrames} already checked and that stayed in memory since (the file adapter hands
 * the segments its load scanned to the open this way, so the log is checksummed once).
 *
 * @example
 * ```ts
 * const { records, validBytes, tornTail } = decodeRecords(await readFile(segment));
 * if (tornTail) await truncate(segment, validBytes); // drop the write a crash interrupted
 * ```
 */
export function decodeRecords(
  bytes: Uint8Array,
  from = 0,
  maxRecords = Number.POSITIVE_INFINITY,
  verified = false,
): DecodeResult {
  const records: CommitRecord[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = from;
  while (at < bytes.length && records.length < maxRecords) {
    const frame = checkFrame(bytes, at, !verified);
    if (typeof frame === "string") return { records, validBytes: at, tornTail: true, reason: frame };
    try {
      records.push(readPayload(new Reader(bytes, view, frame.payloadStart, frame.payloadEnd)));
    } catch (e) {
      if (e instanceof Malformed) return { records, validBytes: at, tornTail: true, reason: "malformed" };
      throw e;
    }
    at = frame.payloadEnd + CHECKSUM_BYTES;
  }
  return { records, validBytes: at, tornTail: false };
}

/** The result of {@link scanFrames}. */
export interface FrameScan {
  /** The seq each whole, valid frame claims, in order. */
  seqs: number[];
  /** The commit time (`timeMs`) each of those frames claims. */
  times: number[];
  /** Where each of those frames starts. */
  offsets: number[];
  /** Bytes covered by those frames. */
  validBytes: number;
  /** Whether bytes after `validBytes` were ignored (see {@link DecodeResult.tornTail}). */
  tornTail: boolean;
  /** Why the scan stopped early; absent when `tornTail` is `false`. */
  reason?: TornReason;
}

/**
 * Checks the frames of `bytes` as {@link decodeRecords} does (length, checksum) and reads each one's
 * seq, without decoding the records: what opening a directory needs to tell corruption from a torn
 * write and the seqs each segment holds, at a fraction of the cost (the log is decoded once more,
 * record by record, when the storage replays it). A frame whose checksum matches but whose payload
 * does not start with a seq stops the scan as `malformed`.
 *
 * @example
 * ```ts
 * const { seqs, tornTail, validBytes } = scanFrames(await readFile(segment));
 * ```
 */
export function scanFrames(bytes: Uint8Array): FrameScan {
  const seqs: number[] = [];
  const times: number[] = [];
  const offsets: number[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  while (at < bytes.length) {
    const frame = checkFrame(bytes, at, true);
    if (typeof frame === "string") return { seqs, times, offsets, validBytes: at, tornTail: true, reason: frame };
    const head = readHead(bytes, view, frame.payloadStart, frame.payloadEnd);
    if (head === undefined) return { seqs, times, offsets, validBytes: at, tornTail: true, reason: "malformed" };
    seqs.push(head.seq);
    times.push(head.timeMs);
    offsets.push(at);
    at = frame.payloadEnd + CHECKSUM_BYTES;
  }
  return { seqs, times, offsets, validBytes: at, tornTail: false };
}

/** A payload's seq and commit time (its first fields), read as {@link readPayload} reads them. */
function readHead(
  bytes: Uint8Array,
  view: DataView,
  start: number,
  end: number,
): { seq: number; timeMs: number } | undefined {
  try {
    const r = new Reader(bytes, view, start, end);
    const flags = r.u8();
    if ((flags & FLAG_EXTENDED) === FLAG_EXTENDED) r.u8();
    const seq = r.varint();
    if (seq < 1) return undefined;
    return { seq, timeMs: flags & FLAG_FLOAT_TIMES ? r.float64() : r.zigzag() };
  } catch (e) {
    if (e instanceof Malformed) return undefined;
    throw e;
  }
}

/**
 * The frame starting at `at`: where its payload starts and ends when its length and checksum are
 * right, or why it is not a whole frame (shared by {@link decodeRecords} and {@link scanFrames}).
 */
function checkFrame(
  bytes: Uint8Array,
  at: number,
  verify: boolean,
): { payloadStart: number; payloadEnd: number } | TornReason {
  const end = bytes.length;
  // The length prefix, by hand: it may itself be cut short.
  let length = 0;
  let scale = 1;
  let p = at;
  for (;;) {
    if (p >= end) return "short-read";
    if (p - at >= MAX_LENGTH_BYTES) return "bad-length";
    const b = bytes[p++] as number;
    length += (b & 0x7f) * scale;
    scale *= 0x80;
    if (b < 0x80) break;
  }
  if (length === 0 || length > MAX_FRAME_PAYLOAD_BYTES || p - at !== varintSize(length)) return "bad-length";
  const payloadEnd = p + length;
  if (payloadEnd + CHECKSUM_BYTES > end) return "short-read";
  if (!verify) return { payloadStart: p, payloadEnd };
  const stored =
    ((bytes[payloadEnd] as number) |
      ((bytes[payloadEnd + 1] as number) << 8) |
      ((bytes[payloadEnd + 2] as number) << 16) |
      ((bytes[payloadEnd + 3] as number) << 24)) >>>
    0;
  if (crc32(bytes, at, payloadEnd) !== stored) return "checksum";
  return { payloadStart: p, payloadEnd };
}
