/**
 * Reading the binary log format (record-format.ts, docs/durability.md): frames back into
 * `CommitRecord`s, and the cheaper scans of a log's frames that opening a directory needs.
 *
 * Decoding stops at the first frame that is incomplete or fails its checksum and reports it as a
 * torn tail: a frame is either returned whole or not at all, so replay never half-applies a batch.
 *
 * @packageDocumentation
 */
import { type EngineValue, MAX_REAL_TEXT_DIGITS } from "../engine/engine";
import { decodeWtf8Strict } from "../util/utf8";
import {
  CONNECTION_SETTING_NAMES,
  type CommitRecord,
  type ConnectionSettings,
  type KvWrite,
  type SqlWrite,
} from "./commit-record";
import { crc32, crc32Update } from "./crc32";
import {
  CHECKSUM_BYTES,
  ENTRY_INPUTS,
  ENTRY_REPLAY,
  ENTRY_SETTINGS,
  EXT_ALARM_CLEAR,
  EXT_ALARM_SET,
  EXT_ENTRY_EXTRAS,
  EXT_KNOWN,
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
  MAX_FRAME_PAYLOAD_BYTES,
  MAX_LENGTH_BYTES,
  TAG_BLOB,
  TAG_FLOAT,
  TAG_INT,
  TAG_NULL,
  TAG_TEXT,
  varintSize,
} from "./record-format";

/** Why {@link decodeRecords} stopped before the end of its input. */
export type TornReason =
  /** The bytes end inside a frame (a write that did not finish). */
  | "short-read"
  /** The length prefix is zero, overlong or beyond {@link MAX_FRAME_PAYLOAD_BYTES}. */
  | "bad-length"
  /** The frame is complete but its CRC-32 does not match. */
  | "checksum"
  /** The checksum matches but the payload does not parse (a bug or an astronomically unlikely collision). */
  | "malformed"
  /**
   * The frame's plain CRC-32 matches, but it is read with a {@link FrameBinding} and its seq is past
   * the binding's `unboundUpTo`: a frame without the directory's identity where every frame has it.
   */
  | "unbound";

/**
 * How a directory's frames are bound to its identity (log-binding.ts): their CRC-32 starts from
 * `seed` instead of 0. Frames of a seq up to `unboundUpTo` may carry the plain CRC instead (an older
 * version wrote them before the log was bound; `Infinity`: the log was never bound, so any may).
 * Reading without a binding accepts the plain CRC only (the S3 and IndexedDB adapters, and a
 * directory without identity).
 */
export interface FrameBinding {
  readonly seed: number;
  readonly unboundUpTo: number;
}

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

/** Thrown inside the payload parser; never escapes {@link decodeRecords}. */
class Malformed extends Error {}

/**
 * Strict (an invalid sequence is damage), and keeping a leading U+FEFF: it is a character of the
 * string the encoder wrote (a key `"\uFEFFk"`), not a byte-order mark to drop.
 */
const textDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const decodeStrict = (bytes: Uint8Array): string => textDecoder.decode(bytes);

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
      // Not UTF-8: a string with a lone surrogate, written as WTF-8 (record-codec.ts), or damage.
      // Logs written before WTF-8 hold only UTF-8, which the line above reads as it always did.
      const text = decodeWtf8Strict(b, start, start + length, decodeStrict);
      if (text === undefined) throw new Malformed();
      return text;
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

function settingsOf(mask: number): ConnectionSettings {
  if (mask >= 1 << CONNECTION_SETTING_NAMES.length) throw new Malformed();
  const settings = {} as ConnectionSettings;
  CONNECTION_SETTING_NAMES.forEach((name, bit) => {
    settings[name] = (mask & (1 << bit)) !== 0;
  });
  return settings;
}

function readPayload(r: Reader): CommitRecord {
  let flags = r.u8();
  let ext = 0;
  if ((flags & FLAG_EXTENDED) === FLAG_EXTENDED) {
    ext = r.u8();
    if (ext === 0 || (ext & ~EXT_KNOWN) !== 0) throw new Malformed();
    if ((ext & (EXT_SESSION | EXT_ENTRY_EXTRAS)) === 0) throw new Malformed();
    if (ext & (EXT_REAL_DIGITS | EXT_NATIVE_FUNCTIONS) && !(ext & EXT_SESSION)) throw new Malformed();
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
      if (digits < 1 || digits > MAX_REAL_TEXT_DIGITS) throw new Malformed();
      record.session.realTextDigits = digits;
    }
    if (ext & EXT_NATIVE_FUNCTIONS) record.session.nativeFunctions = true;
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
 * the segments its load scanned to the open this way, so the log is checksummed once). `binding`:
 * the directory's {@link FrameBinding}, for a file adapter's segments.
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
  binding?: FrameBinding,
): DecodeResult {
  const records: CommitRecord[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = from;
  while (at < bytes.length && records.length < maxRecords) {
    const frame = checkFrame(bytes, at, !verified, binding);
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
 * does not start with a seq stops the scan as `malformed`. `binding` as for {@link decodeRecords}.
 *
 * @example
 * ```ts
 * const { seqs, tornTail, validBytes } = scanFrames(await readFile(segment));
 * ```
 */
export function scanFrames(bytes: Uint8Array, binding?: FrameBinding): FrameScan {
  const seqs: number[] = [];
  const times: number[] = [];
  const offsets: number[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  while (at < bytes.length) {
    const frame = checkFrame(bytes, at, true, binding);
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
  binding: FrameBinding | undefined,
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
  const frame = { payloadStart: p, payloadEnd };
  if (binding === undefined) return crc32(bytes, at, payloadEnd) === stored ? frame : "checksum";
  return frameSumMatches(bytes, at, p, payloadEnd, stored, binding) ?? frame;
}

/**
 * Whether a frame's stored CRC is its bound one, or its plain one where the binding lets its seq
 * be unbound: `undefined` when it matches, else the reason. One CRC per frame: the seq the payload
 * claims (read unchecked) says which sum to try first, the other only when that one fails.
 * @internal
 */
export function frameSumMatches(
  bytes: Uint8Array,
  at: number,
  payloadStart: number,
  payloadEnd: number,
  stored: number,
  binding: FrameBinding,
): TornReason | undefined {
  const seq = peekPayloadSeq(bytes, payloadStart);
  const mayBeUnbound = seq !== undefined && seq <= binding.unboundUpTo;
  if (mayBeUnbound && crc32(bytes, at, payloadEnd) === stored) return undefined;
  if (crc32Update(binding.seed, bytes, at, payloadEnd) === stored) return undefined;
  if (!mayBeUnbound && crc32(bytes, at, payloadEnd) === stored) return "unbound";
  return "checksum";
}
