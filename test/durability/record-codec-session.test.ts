/**
 * The log format's newer parts: session marks, connection settings after a statement, and the
 * connection inputs (changes(), total_changes(), last_insert_rowid()) a statement saw. Frames
 * without them keep the original layout byte for byte.
 */
import { describe, expect, it } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { crc32 } from "../../src/durability/crc32";
import { decodeRecords, encodeRecord } from "../../src/durability/record-codec";

const settings = {
  foreign_keys: false,
  defer_foreign_keys: true,
  case_sensitive_like: true,
  ignore_check_constraints: false,
  legacy_alter_table: true,
  recursive_triggers: false,
  reverse_unordered_selects: true,
};

const record: CommitRecord = {
  seq: 7,
  timeMs: 1_767_225_600_000,
  reset: false,
  session: { start: true, settings },
  alarm: 1_767_225_660_000,
  sql: [
    {
      sql: "INSERT INTO log VALUES (last_insert_rowid())",
      bindings: [],
      nowMs: 1_767_225_600_000,
      inputs: [2n ** 63n - 1n, -(2n ** 63n), 0n],
    },
    { sql: "PRAGMA case_sensitive_like = ON", bindings: [1], nowMs: 1_767_225_600_001, settings },
    { sql: "", bindings: [], nowMs: 1_767_225_600_002, settings: { ...settings, recursive_triggers: true } },
  ],
  kv: [{ key: "k", value: new Uint8Array([1]) }],
};

/** A frame for `payload`, with a valid length and checksum. */
function frame(payload: number[]): Uint8Array {
  const body = new Uint8Array([payload.length, ...payload]);
  const sum = crc32(body, 0, body.length);
  return new Uint8Array([...body, sum & 0xff, (sum >>> 8) & 0xff, (sum >>> 16) & 0xff, sum >>> 24]);
}

describe("record codec: connection state", () => {
  it("round-trips session marks, settings and 64-bit inputs exactly", () => {
    const decoded = decodeRecords(encodeRecord(record));
    expect(decoded.tornTail).toBe(false);
    expect(decoded.records).toEqual([record]);
  });

  it("a record without them is written in the original layout (no extension byte)", () => {
    const plain: CommitRecord = { seq: 1, timeMs: 5, reset: false, sql: [], kv: [], alarm: null };
    // length, flags (alarm cleared), seq, zigzag time, checksum
    expect([...encodeRecord(plain).subarray(0, 4)]).toEqual([3, 0x08, 1, 10]);
  });

  it("an extension byte with an unknown bit, or with nothing new, is malformed", () => {
    // flags = both alarm bits (extended), then ext, seq 1, time 0
    for (const ext of [0x40, 0x80, 0x00, 0x01, 0x03 | 0x04]) {
      const decoded = decodeRecords(frame([0x0c, ext, 1, 0, ...(ext & 0x04 ? [0] : [])]));
      expect(decoded.reason, `ext ${ext}`).toBe("malformed");
      expect(decoded.records).toEqual([]);
    }
    expect(decodeRecords(frame([0x0c, 0x04, 1, 0, 0])).records).toHaveLength(1);
  });

  it("a session mark's REAL-as-text digits round-trip; a mark without them (older frames) has none", () => {
    const withDigits: CommitRecord = { ...record, session: { start: false, settings, realTextDigits: 15 } };
    expect(decodeRecords(encodeRecord(withDigits)).records).toEqual([withDigits]);
    // flags = extended, ext = session + digits, seq 1, time 0, mark 0 (not a start, every setting off), 15
    const [decoded] = decodeRecords(frame([0x0c, 0x14, 1, 0, 0, 15])).records;
    expect(decoded?.session).toEqual({ start: false, settings: expect.any(Object), realTextDigits: 15 });
    const [older] = decodeRecords(frame([0x0c, 0x04, 1, 0, 1])).records;
    expect(older?.session?.start).toBe(true);
    expect(older?.session && "realTextDigits" in older.session).toBe(false);
  });

  it("REAL-as-text digits out of SQLite's range, or without a session mark, are malformed or refused", () => {
    for (const digits of [0, 24, 127]) {
      expect(decodeRecords(frame([0x0c, 0x14, 1, 0, 0, digits])).reason, `digits ${digits}`).toBe("malformed");
    }
    // the digits bit with per-entry extras but no session mark
    expect(decodeRecords(frame([0x0c, 0x18, 1, 0])).reason).toBe("malformed");
    for (const digits of [0, 24, 1.5, Number.NaN]) {
      expect(() => encodeRecord({ ...record, session: { start: true, settings, realTextDigits: digits } })).toThrow(
        RangeError,
      );
    }
    expect(() => encodeRecord({ ...record, session: { start: true, settings, realTextDigits: 24 } })).toThrow(
      "SessionMark.realTextDigits must be an integer from 1 to 23; got 24.",
    );
  });

  it("a session mark's native-functions bit round-trips, written as ext bit 0x20 with no bytes of its own", () => {
    const mark = { start: true, settings, realTextDigits: 15, nativeFunctions: true as const };
    for (const session of [mark, { start: false, settings, nativeFunctions: true as const }]) {
      const withNative: CommitRecord = { ...record, session };
      expect(decodeRecords(encodeRecord(withNative)).records).toEqual([withNative]);
    }
    const minimal: CommitRecord = { seq: 1, timeMs: 0, reset: false, sql: [], kv: [] };
    const allOff = Object.fromEntries(Object.keys(settings).map((k) => [k, false])) as typeof settings;
    const bytes = encodeRecord({
      ...minimal,
      session: { start: true, settings: allOff, realTextDigits: 15, nativeFunctions: true },
    });
    // length, flags (extended), ext (session | digits | native), seq, time, mark, digits
    expect([...bytes.subarray(0, 7)]).toEqual([6, 0x0c, 0x04 | 0x10 | 0x20, 1, 0, 1, 15]);
    expect(bytes).toHaveLength(7 + 4);
  });

  it("a mark written before the bit (a session with sql.js's legacy functions) decodes without it", () => {
    // A frame as the engine wrote it before: session mark (start, no settings) with 15 digits.
    const [older] = decodeRecords(frame([0x0c, 0x04 | 0x10, 1, 0, 1, 15])).records;
    expect(older?.session).toEqual({ start: true, settings: expect.any(Object), realTextDigits: 15 });
    expect(older?.session && "nativeFunctions" in older.session).toBe(false);
    const [newer] = decodeRecords(frame([0x0c, 0x04 | 0x10 | 0x20, 1, 0, 1, 15])).records;
    expect(newer?.session?.nativeFunctions).toBe(true);
  });

  it("the native-functions bit without a session mark is malformed; a mark's flag other than true is refused", () => {
    for (const ext of [0x20, 0x20 | 0x08, 0x20 | 0x10 | 0x08]) {
      expect(decodeRecords(frame([0x0c, ext, 1, 0, 0])).reason, `ext ${ext}`).toBe("malformed");
    }
    const bad = { start: true, settings, nativeFunctions: false } as unknown as CommitRecord["session"];
    expect(() => encodeRecord({ ...record, session: bad })).toThrow(
      "SessionMark.nativeFunctions must be true or absent; got false.",
    );
  });

  it("a settings mask beyond the known settings is malformed", () => {
    expect(decodeRecords(frame([0x0c, 0x04, 1, 0, 0x80, 0x02])).reason).toBe("malformed");
  });
});
