/**
 * fast-check arbitraries for commit records, shared by the durability tests.
 */
import fc from "fast-check";
import {
  CONNECTION_SETTING_NAMES,
  type CommitRecord,
  type ConnectionSettings,
  type KvWrite,
  type SqlWrite,
} from "../../src/durability/commit-record";
import type { EngineValue } from "../../src/engine/engine";

/** Text of every kind: whole characters, and single UTF-16 units (lone surrogates among them). */
const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc.string({
      unit: fc.oneof(
        fc.constantFrom("\uD800", "\uDBFF", "\uDC00", "\uDFFF", "\uFFFD", "\uFEFF", "é", "a"),
        fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
      ),
      maxLength: 40,
    }),
  },
);
const bytes = fc.uint8Array({ maxLength: 64 });

/** Every kind of number the engine can hand over, including the awkward ones. */
const number = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double(),
  fc.constantFrom(0, -0, 2 ** 51, -(2 ** 51), 2 ** 52, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY),
);

/** Any {@link EngineValue}. */
export const engineValue: fc.Arbitrary<EngineValue> = fc.oneof(fc.constant(null), number, text, bytes);

/** A plausible clock time, sometimes fractional (a fake clock may produce those). */
export const timeMs = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 1_600_000_000_000, max: 2_000_000_000_000 }) },
  { weight: 1, arbitrary: fc.double({ min: 0, max: 2e12, noNaN: true }) },
  { weight: 1, arbitrary: fc.integer({ min: -1_000, max: 1_000 }) },
);

/** Any value of every connection setting. */
export const connectionSettings: fc.Arbitrary<ConnectionSettings> = fc
  .array(fc.boolean(), { minLength: CONNECTION_SETTING_NAMES.length, maxLength: CONNECTION_SETTING_NAMES.length })
  .map((bits) => Object.fromEntries(CONNECTION_SETTING_NAMES.map((name, i) => [name, bits[i]])) as ConnectionSettings);

/** What changes(), total_changes() and last_insert_rowid() may return: any signed 64-bit integer. */
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });

const sqlWrite = (base: number): fc.Arbitrary<SqlWrite> =>
  fc
    .record({
      sql: fc.oneof(fc.constantFrom("INSERT INTO t VALUES (?, ?)", "UPDATE t SET v = random()", ""), text),
      bindings: fc.array(engineValue, { maxLength: 5 }),
      nowMs: fc.oneof(
        fc.constant(base),
        fc.integer({ min: -5_000, max: 5_000 }).map((d) => base + d),
        timeMs,
      ),
      inputs: fc.option(fc.array(int64, { minLength: 1, maxLength: 4 }), { nil: undefined, freq: 3 }),
      settings: fc.option(connectionSettings, { nil: undefined, freq: 3 }),
      replay: fc.option(fc.array(text, { maxLength: 3 }), { nil: undefined, freq: 3 }),
    })
    .map(({ inputs, settings, replay, ...write }): SqlWrite => {
      // Optional fields are absent rather than `undefined`, as the decoder produces them.
      const w: SqlWrite = write;
      if (inputs !== undefined) w.inputs = inputs;
      if (settings !== undefined) w.settings = settings;
      if (replay !== undefined) w.replay = replay;
      return w;
    });

const kvWrite: fc.Arbitrary<KvWrite> = fc.record({ key: text, value: fc.option(bytes, { nil: null }) });

/** A random record with the given seq (or a random one). */
export function commitRecord(seq?: number): fc.Arbitrary<CommitRecord> {
  return fc
    .record({
      seq:
        seq === undefined
          ? fc.oneof(
              fc.integer({ min: 1, max: 1000 }),
              fc.maxSafeInteger().filter((n) => n >= 1),
            )
          : fc.constant(seq),
      timeMs,
      reset: fc.boolean(),
      restoreToSeq: fc.option(fc.nat(), { nil: undefined }),
      alarm: fc.option(fc.option(fc.oneof(timeMs, fc.double()), { nil: null }), { nil: undefined }),
      session: fc.option(
        fc.record(
          {
            start: fc.boolean(),
            settings: connectionSettings,
            realTextDigits: fc.integer({ min: 1, max: 23 }),
            nativeFunctions: fc.constant(true as const),
          },
          { requiredKeys: ["start", "settings"] },
        ),
        { nil: undefined, freq: 3 },
      ),
    })
    .chain((head) =>
      fc
        .record({
          sql: fc.array(sqlWrite(head.timeMs), { maxLength: 4 }),
          kv: fc.array(kvWrite, { maxLength: 4 }),
        })
        .map((body): CommitRecord => {
          const record: CommitRecord = { seq: head.seq, timeMs: head.timeMs, reset: head.reset, ...body };
          // Optional fields are absent rather than `undefined`, as the decoder produces them.
          if (head.restoreToSeq !== undefined) record.restoreToSeq = head.restoreToSeq;
          if (head.alarm !== undefined) record.alarm = head.alarm;
          if (head.session !== undefined) record.session = head.session;
          return record;
        }),
    );
}

/** A run of records with seqs `first, first + 1, …`. */
export function commitRecords(first = 1, maxLength = 8): fc.Arbitrary<CommitRecord[]> {
  return fc
    .array(commitRecord(1), { minLength: 1, maxLength })
    .map((records) => records.map((r, i) => ({ ...r, seq: first + i })));
}
