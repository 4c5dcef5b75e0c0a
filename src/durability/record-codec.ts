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
 * This module writes frames; record-decoder.ts reads them (re-exported here, so that the format has
 * one entry point), and record-format.ts holds the layout constants both share.
 *
 * @packageDocumentation
 */
import { type EngineValue, MAX_REAL_TEXT_DIGITS } from "../engine/engine";
import { isWellFormed, utf8Length, writeWtf8 } from "../util/utf8";
import {
  CONNECTION_SETTING_NAMES,
  type CommitRecord,
  type ConnectionSettings,
  type KvWrite,
  type SqlWrite,
} from "./commit-record";
import { crc32Update } from "./crc32";
import type { FrameBinding } from "./record-decoder";
import {
  CHECKSUM_BYTES,
  ENTRY_INPUTS,
  ENTRY_REPLAY,
  ENTRY_SETTINGS,
  EXT_ALARM_CLEAR,
  EXT_ALARM_SET,
  EXT_ENTRY_EXTRAS,
  EXT_NATIVE_FUNCTIONS,
  EXT_REAL_DIGITS,
  EXT_SESSION,
  FLAG_ALARM_CLEAR,
  FLAG_ALARM_FLOAT,
  FLAG_ALARM_SET,
  FLAG_EXTENDED,
  FLAG_FLOAT_TIMES,
  FLAG_KV,
  FLAG_RESET,
  FLAG_RESTORE,
  FLAG_SQL,
  MAX_LENGTH_BYTES,
  MAX_ZIGZAG_MAGNITUDE,
  TAG_BLOB,
  TAG_FLOAT,
  TAG_INT,
  TAG_NULL,
  TAG_TEXT,
  varintSize,
} from "./record-format";

export {
  type DecodeResult,
  decodeRecords,
  type FrameBinding,
  type FrameScan,
  frameSumMatches,
  peekPayloadSeq,
  scanFrames,
  type TornReason,
} from "./record-decoder";
export { MAX_FRAME_PAYLOAD_BYTES } from "./record-format";

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
  // Not ASCII: rewind and write the true UTF-8 length first.
  pos = start;
  const bytes = utf8Length(s);
  writeVarint(bytes);
  ensure(bytes);
  writeText(s, bytes);
}

/**
 * `s` as the `bytes` bytes of its UTF-8 at `pos`; a lone surrogate as the three bytes of its own
 * code unit (WTF-8), as the engine stores it and as the platform stores a key with one, so replay
 * writes what the live write wrote (`"a\uD800b"` stays distinct from `"a\uFFFDb"`).
 */
function writeText(s: string, bytes: number): void {
  if (isWellFormed(s)) pos += textEncoder.encodeInto(s, scratch.subarray(pos, pos + bytes)).written;
  else pos += writeWtf8(s, scratch, pos);
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
      if (!(Number.isInteger(digits) && digits >= 1 && digits <= MAX_REAL_TEXT_DIGITS)) {
        throw new RangeError(
          `SessionMark.realTextDigits must be an integer from 1 to ${MAX_REAL_TEXT_DIGITS}; got ${String(digits)}.`,
        );
      }
      ext |= EXT_REAL_DIGITS;
    }
    const native = session.nativeFunctions;
    if (native !== undefined) {
      if (native !== true)
        throw new RangeError(`SessionMark.nativeFunctions must be true or absent; got ${String(native)}.`);
      ext |= EXT_NATIVE_FUNCTIONS;
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
  } else writeText(s, bytes);
}

/**
 * Appends one whole frame at `pos`. The payload is written after room for the longest length
 * prefix, then moved back once its length is known: one pass over the record, one small memmove.
 */
function writeFrame(record: CommitRecord, withChecksum: boolean, seed: number): void {
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
  // The starting CRC state (0: none) binds the frame to a directory's identity (log-binding.ts) at no cost.
  const sum = withChecksum ? crc32Update(seed, scratch, frameStart, pos) : 0;
  scratchView.setUint32(pos, sum, true);
  pos += CHECKSUM_BYTES;
}

/**
 * Encodes one record as a complete frame (length, payload, CRC-32), with the plain CRC (bound to
 * no directory's identity: {@link encodeRecords} binds).
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
  writeFrame(record, true, 0);
  return scratch.slice(0, pos);
}

/**
 * Encodes records as consecutive frames in one buffer (one write for a group commit). With
 * `binding` (a directory's {@link FrameBinding}), each frame's CRC starts from its seed: the frames
 * are bound to that directory's identity (log-binding.ts); without, they carry the plain CRC.
 *
 * @example
 * ```ts
 * const bytes = encodeRecords(batch); // same as concatenating encodeRecord() of each
 * ```
 */
export function encodeRecords(records: readonly CommitRecord[], binding?: Pick<FrameBinding, "seed">): Uint8Array {
  return encodeRecordsView(records, binding).slice();
}

/**
 * As {@link encodeRecords}, but a view of the encoder's own buffer, valid only until this module's
 * next encode call: for a caller that copies it into a buffer of its own (`group-commit.ts`). @internal
 */
export function encodeRecordsView(records: readonly CommitRecord[], binding?: Pick<FrameBinding, "seed">): Uint8Array {
  pos = 0;
  const seed = binding?.seed ?? 0;
  for (let i = 0; i < records.length; i++) writeFrame(records[i] as CommitRecord, true, seed);
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
  writeFrame(record, false, 0);
  return pos;
}
