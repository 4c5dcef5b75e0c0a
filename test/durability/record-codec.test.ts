import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { crc32, crc32Update, useNativeCrc32 } from "../../src/durability/crc32";
import {
  decodeRecords,
  encodedRecordSize,
  encodeRecord,
  encodeRecords,
  scanFrames,
} from "../../src/durability/record-codec";
import { concat } from "../../src/util/bytes";
import { commitRecord, commitRecords } from "./arbitraries";

const kvRecord = (seq: number, kv: CommitRecord["kv"]): CommitRecord => ({
  seq,
  timeMs: 1_767_225_600_000 + seq,
  reset: false,
  sql: [],
  kv,
});

describe("crc32", () => {
  it("crc32: matches the standard check value", () => {
    expect(crc32(new TextEncoder().encode("123456789"))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
  });

  it("crc32Update: pieces give the same checksum as the whole", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(), (data, cut) => {
        const at = data.length === 0 ? 0 : cut % (data.length + 1);
        expect(crc32Update(crc32(data, 0, at), data, at, data.length)).toBe(crc32(data));
      }),
    );
  });
});

describe("crc32 with a native implementation", () => {
  it("useNativeCrc32: refuses a function that disagrees; with zlib.crc32 large ranges, pieces and offsets give the table loop's checksums", async () => {
    const data = new Uint8Array(3 * 65536 + 123);
    for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 23;
    const cases: [number, number][] = [
      [0, data.length],
      [7, data.length - 3],
      [5000, 5000 + 4096],
      [100, 100 + 4095],
      [65536, 2 * 65536],
    ];
    const whole = (from: number, to: number) => crc32(data, from, to);
    const pieces = (from: number, to: number) => {
      const mid = from + Math.floor((to - from) / 3);
      return crc32Update(crc32(data, from, mid), data, mid, to);
    };
    const table = cases.map(([a, b]) => [whole(a, b), pieces(a, b)]);
    expect(useNativeCrc32((bytes, value) => (crc32Update(value, bytes) + 1) >>> 0)).toBe(false);
    expect(cases.map(([a, b]) => [whole(a, b), pieces(a, b)])).toEqual(table);
    const zlib = (await import("node:zlib")) as { crc32?: (data: Uint8Array, value: number) => number };
    // Node before 20.15 has no zlib.crc32: the table loop then stays (checked above).
    if (zlib.crc32 === undefined) return;
    expect(useNativeCrc32(zlib.crc32)).toBe(true);
    expect(cases.map(([a, b]) => [whole(a, b), pieces(a, b)])).toEqual(table);
  });
});

describe("record codec", () => {
  it("encodeRecord: round-trips every record exactly", () => {
    fc.assert(
      fc.property(commitRecord(), (record) => {
        const frame = encodeRecord(record);
        const decoded = decodeRecords(frame);
        expect(decoded.tornTail).toBe(false);
        expect(decoded.validBytes).toBe(frame.length);
        expect(decoded.records).toEqual([record]);
        // -0 and NaN survive too (toEqual already distinguishes -0 via Object.is).
        expect(encodedRecordSize(record)).toBe(frame.length);
      }),
      { numRuns: 500 },
    );
  });

  it("decodeRecords: a string that starts with U+FEFF keeps it (a key, a text binding, SQL text)", () => {
    // Past the short-ASCII path (non-ASCII, or over 32 bytes), so the text decoder reads them.
    const keys = ["\uFEFFk\u00e9", `\uFEFF${"k".repeat(40)}`, "\uFEFF", "\uFEFF\uFEFFx"];
    const record: CommitRecord = {
      ...kvRecord(
        1,
        keys.map((key) => ({ key, value: new Uint8Array([1]) })),
      ),
      sql: [{ sql: "\uFEFFSELECT ?", bindings: ["\uFEFF\u00e9"], nowMs: 1_767_225_600_001 }],
    };
    expect(decodeRecords(encodeRecord(record)).records).toEqual([record]);
  });

  it("encodeRecord: a string with a lone surrogate is written as WTF-8 (its unit's three bytes) and read back exactly", () => {
    const record: CommitRecord = {
      ...kvRecord(1, [
        { key: "a\uD800b", value: new Uint8Array([1]) },
        { key: "a\uFFFDb", value: new Uint8Array([2]) },
        { key: "\uDC00\uD800", value: null },
        { key: `${"k".repeat(40)}\uDFFF`, value: null },
      ]),
      sql: [{ sql: "INSERT INTO t VALUES ('\uDC00', ?)", bindings: ["x\uD800y"], nowMs: 1_767_225_600_001 }],
    };
    const frame = encodeRecord(record);
    expect(Buffer.from(frame).includes(Buffer.from([0x61, 0xed, 0xa0, 0x80, 0x62]))).toBe(true);
    expect(encodedRecordSize(record)).toBe(frame.length);
    expect(decodeRecords(frame).records).toEqual([record]);
  });

  it("decodeRecords: a log written before WTF-8 (a lone surrogate written as U+FFFD) decodes as it always did", () => {
    // encodeRecord of the version before, for the record of the test above with seq 7: every
    // string was UTF-8 from TextEncoder, so each lone surrogate is EF BF BD.
    const old = Buffer.from(
      "41300780a0d5edee66013e494e5345525420494e544f20742056414c554553202827efbfbd272c203f290001030578efbfbd79020561efbfbd6203010203efbfbd001f933a0c",
      "hex",
    );
    const decoded = decodeRecords(new Uint8Array(old));
    expect(decoded.tornTail).toBe(false);
    expect(decoded.records).toEqual([
      {
        seq: 7,
        timeMs: 1_767_225_600_000,
        reset: false,
        sql: [{ sql: "INSERT INTO t VALUES ('\uFFFD', ?)", bindings: ["x\uFFFDy"], nowMs: 1_767_225_600_000 }],
        kv: [
          { key: "a\uFFFDb", value: new Uint8Array([1, 2]) },
          { key: "\uFFFD", value: null },
        ],
      },
    ]);
  });

  it("decodeRecords: invalid UTF-8 that is not an encoded lone surrogate is still damage (malformed)", () => {
    const frame = encodeRecord(kvRecord(1, [{ key: "a\uD800\uD800b", value: null }]));
    // Turn the second surrogate's lead byte (ED) into FF: a checksum-valid frame with invalid text.
    const at = Buffer.from(frame).indexOf(Buffer.from([0xed, 0xa0, 0x80, 0xed]));
    const damaged = frame.slice();
    damaged[at + 3] = 0xff;
    const payloadEnd = damaged.length - 4;
    new DataView(damaged.buffer).setUint32(payloadEnd, crc32(damaged, 0, payloadEnd), true);
    expect(decodeRecords(damaged)).toMatchObject({ records: [], tornTail: true, reason: "malformed" });
  });

  it("encodeRecords: equals the concatenation of single frames", () => {
    fc.assert(
      fc.property(commitRecords(1, 6), (records) => {
        const all = encodeRecords(records);
        expect(all).toEqual(concat(records.map(encodeRecord)));
        expect(decodeRecords(all).records).toEqual(records);
      }),
    );
  });

  it("encodeRecord: repeated SQL text in a batch is written once", () => {
    const sql = "INSERT INTO items (id, name, price) VALUES (?, ?, ?)";
    const record: CommitRecord = {
      seq: 1,
      timeMs: 1_767_225_600_000,
      reset: false,
      kv: [],
      sql: Array.from({ length: 10 }, (_, i) => ({
        sql,
        bindings: [i, `item ${i}`, i * 1.5],
        nowMs: 1_767_225_600_000,
      })),
    };
    const frame = encodeRecord(record);
    // The text once (52 bytes) plus about 20 bytes of bindings per row, not 10 copies of the text.
    expect(frame.length).toBeLessThan(sql.length + 10 * 25);
    expect(decodeRecords(frame).records).toEqual([record]);
  });

  it("encodeRecord: rejects seqs that are not positive safe integers", () => {
    expect(() => encodeRecord(kvRecord(0, []))).toThrow(RangeError);
    expect(() => encodeRecord(kvRecord(1.5, []))).toThrow(/safe integer/);
    expect(() => encodeRecord({ ...kvRecord(1, []), restoreToSeq: -1 })).toThrow(/restoreToSeq/);
  });

  it("encodeRecord: a typical key-value batch takes under 2× its changed bytes", () => {
    const value = new Uint8Array(24).fill(7); // a small serialized object
    for (const batch of [1, 3, 10, 100]) {
      const kv = Array.from({ length: batch }, (_, i) => ({ key: `user:${1000 + i}:profile`, value }));
      const changed = kv.reduce((n, w) => n + w.key.length + w.value.length, 0);
      const size = encodeRecord(kvRecord(123_456, kv)).length;
      expect(size).toBeLessThan(2 * changed);
    }
  });

  it("decodeRecords: empty input is a clean, empty log", () => {
    expect(decodeRecords(new Uint8Array(0))).toEqual({ records: [], validBytes: 0, tornTail: false });
  });
});

describe("record codec: torn and corrupt tails", () => {
  it("decodeRecords: a log cut at any byte of its last frame returns only whole records", () => {
    fc.assert(
      fc.property(commitRecords(1, 4), (records) => {
        const frames = records.map(encodeRecord);
        const log = concat(frames);
        const last = frames[frames.length - 1] as Uint8Array;
        const lastStart = log.length - last.length;
        for (let cut = lastStart; cut < log.length; cut++) {
          const result = decodeRecords(log.subarray(0, cut));
          expect(result.records).toEqual(records.slice(0, -1));
          expect(result.validBytes).toBe(lastStart);
          expect(result.tornTail).toBe(cut > lastStart);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("decodeRecords: a flipped bit stops decoding at the damaged frame", () => {
    fc.assert(
      fc.property(commitRecords(1, 5), fc.nat(), fc.nat(7), (records, at, bit) => {
        const frames = records.map(encodeRecord);
        const log = concat(frames);
        const i = at % log.length;
        log[i] = (log[i] as number) ^ (1 << bit);
        // The frame that holds byte i, and where it starts.
        let start = 0;
        let k = 0;
        while (start + (frames[k] as Uint8Array).length <= i) start += (frames[k++] as Uint8Array).length;
        const result = decodeRecords(log);
        expect(result.tornTail).toBe(true);
        expect(result.validBytes).toBe(start);
        expect(result.records).toEqual(records.slice(0, k));
      }),
      { numRuns: 500 },
    );
  });

  it("decodeRecords: reports why it stopped", () => {
    const frame = encodeRecord(kvRecord(1, [{ key: "k", value: new Uint8Array([1, 2, 3]) }]));
    expect(decodeRecords(frame.subarray(0, 3)).reason).toBe("short-read");
    const zeroLength = new Uint8Array([0, 0, 0, 0, 0]);
    expect(decodeRecords(zeroLength).reason).toBe("bad-length");
    const overlong = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    expect(decodeRecords(overlong).reason).toBe("bad-length");
    const flipped = frame.slice();
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] as number) ^ 1;
    expect(decodeRecords(flipped).reason).toBe("checksum");
  });

  it("decodeRecords: a frame with a valid checksum but an unknown payload is malformed", () => {
    const payload = new Uint8Array([0x0c, 1, 2]); // alarm both set and cleared: impossible
    const frame = new Uint8Array(1 + payload.length + 4);
    frame[0] = payload.length;
    frame.set(payload, 1);
    new DataView(frame.buffer).setUint32(1 + payload.length, crc32(frame, 0, 1 + payload.length), true);
    expect(decodeRecords(frame)).toMatchObject({ records: [], validBytes: 0, tornTail: true, reason: "malformed" });
  });
});

describe("scanFrames: the frame check opening a directory runs (without decoding records)", () => {
  it("agrees with decodeRecords on seqs, offsets, validBytes and why it stopped, under any damage", () => {
    fc.assert(
      fc.property(
        commitRecords(1, 6),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 7 })), { maxLength: 3 }),
        fc.nat(),
        (records, flips, cut) => {
          const bytes = encodeRecords(records);
          const damaged = bytes.slice(0, flips.length === 0 ? bytes.length : Math.max(1, cut % (bytes.length + 1)));
          for (const [at, bit] of flips) {
            if (damaged.length > 0)
              damaged[at % damaged.length] = (damaged[at % damaged.length] as number) ^ (1 << bit);
          }
          const decoded = decodeRecords(damaged);
          const scanned = scanFrames(damaged);
          expect(scanned.seqs).toEqual(decoded.records.map((r) => r.seq));
          let offset = 0;
          const offsets = decoded.records.map((r) => {
            const at = offset;
            offset += encodedRecordSize(r);
            return at;
          });
          expect(scanned.offsets).toEqual(offsets);
          expect(scanned.validBytes).toBe(decoded.validBytes);
          expect(scanned.tornTail).toBe(decoded.tornTail);
          expect(scanned.reason).toBe(decoded.reason);
        },
      ),
      { numRuns: 500 },
    );
  });
});
