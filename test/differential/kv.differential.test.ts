/**
 * Differential tests of the key-value API: the same transcripts run in real workerd (Miniflare,
 * `useSQLite: true`) and in ObjectStorage, compared op by op on the encoded results (values, Map
 * order, which ops fail, and the exact error name and message).
 *
 * Reproduce a failure with `DIFF_SEED=<seed> npx vitest run test/differential/kv`; the seed is in
 * the test name and in fast-check's failure report.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kvTranscriptArb, mixedKvTranscriptArb } from "./arbitraries";
import { KNOWN_DEVIATIONS } from "./known-deviations";
import type { Op, OpResult } from "./ops";
import { maskPendingMismatches, PENDING_MISMATCHES } from "./pending-mismatches";
import { runOnSubject } from "./subject";
import { createTranscriptCodec, type Encoded } from "./transcript-codec";
import { DELETE_ALL_DELETES_ALARM_DATE, startWorkerd, type WorkerdHandle } from "./workerd";

const SEED = Number(process.env.DIFF_SEED ?? 20_260_223);
const NUM_RUNS = Number(process.env.DIFF_RUNS ?? 40);

const codec = createTranscriptCodec();
const enc = (value: unknown): Encoded => codec.encode(value);
const ok = (value: unknown): OpResult => ({ ok: true, value: enc(value) });

/** Every key of the platform's documented ordering vector, in that (UTF-8 byte) order. */
const ORDERING_VECTOR = ["", "Z", "a", "a\u0000b", "ab", "abc", "b", "c", "é", "\uFFFF", "😀"];
const FAR_FUTURE_MS = Date.UTC(2100, 0, 1);

/** The decoded value of a successful result (fails the test on an error result). */
function decodedValue(result: OpResult | undefined): unknown {
  if (!result?.ok) throw new Error(`expected a successful result, got ${JSON.stringify(result)}`);
  return codec.decode(result.value);
}

/** The keys of a successful list()/get(keys) result, in order. */
const keysOf = (result: OpResult | undefined): string[] => [...(decodedValue(result) as Map<string, unknown>).keys()];

let workerd: WorkerdHandle;

beforeAll(async () => {
  workerd = await startWorkerd();
});

afterAll(async () => {
  await workerd?.dispose();
});

/** Expects ObjectStorage to produce exactly workerd's transcript `expected` for `ops`. */
async function expectSubjectMatches(ops: readonly Op[], expected: readonly OpResult[], subjectOptions = {}) {
  expect(await runOnSubject(ops, subjectOptions)).toEqual(expected);
}

/** Runs `ops` on both sides and expects identical transcripts. */
async function expectSameAsWorkerd(ops: readonly Op[]): Promise<void> {
  await expectSubjectMatches(ops, await workerd.run(ops));
}

describe("kv differential: random transcripts", () => {
  it(`random transcripts: ObjectStorage matches workerd (seed ${SEED}, ${NUM_RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(kvTranscriptArb(), async (ops) => {
        const expected = await workerd.run(ops);
        const actual = await runOnSubject(ops);
        // Known bugs (pending-mismatches.ts) are masked so that they do not hide new ones.
        expect(maskPendingMismatches(ops, expected, actual)).toEqual(expected);
      }),
      // Shrinking talks to workerd for every candidate; the time limit keeps a failing run bounded.
      { seed: SEED, numRuns: NUM_RUNS, interruptAfterTimeLimit: 45_000 },
    );
  }, 60_000);
});

describe("kv differential: the synchronous kv API mixed with the asynchronous one", () => {
  it(`random transcripts: ObjectStorage matches workerd (seed ${SEED}, ${NUM_RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(mixedKvTranscriptArb(), async (ops) => {
        const expected = await workerd.run(ops);
        const actual = await runOnSubject(ops);
        expect(maskPendingMismatches(ops, expected, actual)).toEqual(expected);
      }),
      { seed: SEED, numRuns: NUM_RUNS, interruptAfterTimeLimit: 45_000 },
    );
  }, 60_000);
});

describe("kv differential: fixed scenarios from workerd-semantics.md", () => {
  it("list: orders keys by UTF-8 bytes, not UTF-16", async () => {
    const shuffled = [...ORDERING_VECTOR].reverse();
    const ops: Op[] = [
      ...shuffled.map((key, i): Op => ({ op: "put", key, value: i })),
      { op: "list" },
      { op: "getMany", keys: [...shuffled, "a", "missing"] },
    ];
    // The documented platform facts first, so a failure says which side is off.
    const results = await workerd.run(ops);
    expect(keysOf(results.at(-2))).toEqual(ORDERING_VECTOR);
    expect(keysOf(results.at(-1))).toEqual(ORDERING_VECTOR);
    await expectSubjectMatches(ops, results);
  });

  it("list: reverse keeps start inclusive and end exclusive and counts limit from the high end", async () => {
    const ops: Op[] = [
      { op: "putMany", entries: ["a", "ab", "abc", "b", "c"].map((k): [string, Encoded] => [k, k]) },
      { op: "list", options: enc({ start: "ab", end: "c", reverse: true }) },
      { op: "list", options: enc({ start: "ab", end: "c", reverse: true, limit: 2 }) },
      { op: "list", options: enc({ prefix: "a", reverse: true, limit: 1 }) },
    ];
    const results = await workerd.run(ops);
    expect(keysOf(results[1])).toEqual(["b", "abc", "ab"]);
    expect(keysOf(results[2])).toEqual(["b", "abc"]);
    expect(keysOf(results[3])).toEqual(["abc"]);
    await expectSubjectMatches(ops, results);
  });

  it('list: startAfter is start = startAfter + "\\0", so that very key is returned', async () => {
    const ops: Op[] = [
      { op: "putMany", entries: ["a", "a\u0000", "a\u0000\u0000", "ab"].map((k): [string, Encoded] => [k, 1]) },
      { op: "list", options: enc({ startAfter: "a" }) },
      { op: "list", options: enc({ startAfter: "a", reverse: true, limit: 2 }) },
    ];
    const results = await workerd.run(ops);
    expect(keysOf(results[1])).toEqual(["a\u0000", "a\u0000\u0000", "ab"]);
    expect(keysOf(results[2])).toEqual(["ab", "a\u0000\u0000"]);
    await expectSubjectMatches(ops, results);
  });

  it("list: option errors reject with the platform's messages, checked even for empty ranges", async () => {
    await expectSameAsWorkerd(
      [
        enc({ start: "a", startAfter: "b" }),
        enc({ limit: 0 }),
        enc({ limit: -1, start: "b", end: "a" }),
        enc({ limit: Number.POSITIVE_INFINITY }),
        enc({ limit: Number.NaN }),
        enc({ limit: 2 ** 31 }),
        enc({ limit: 1.7 }),
        enc({ limit: "2" }),
        enc({ prefix: "a", end: "a" }),
        enc({ unknownOption: true, noCache: true }),
      ].map((options): Op => ({ op: "list", options })),
    );
  });

  it("delete: single returns a boolean, multiple counts existing keys once", async () => {
    const ops: Op[] = [
      {
        op: "putMany",
        entries: [
          ["a", 1],
          ["ab", 2],
        ],
      },
      { op: "deleteMany", keys: ["a", "ab", "nope", "a"] },
      { op: "deleteMany", keys: [] },
      { op: "delete", key: "a" },
      { op: "put", key: "", value: 0 },
      { op: "delete", key: "" },
    ];
    const results = await workerd.run(ops);
    expect(results.slice(1)).toEqual([ok(2), ok(0), ok(false), ok(undefined), ok(true)]);
    await expectSubjectMatches(ops, results);
  });

  it("put: argument checks, undefined fields of put(entries), non-string keys, unclonable values", async () => {
    await expectSameAsWorkerd([
      { op: "put", key: "a", value: enc(undefined) },
      {
        op: "putMany",
        entries: [
          ["x", enc(undefined)],
          ["y", 1],
        ],
      },
      { op: "put", key: 123, value: "n" },
      { op: "get", key: "123" },
      { op: "put", key: "f", value: enc(() => 1) },
      { op: "put", key: "s", value: enc(Symbol("x")) },
      { op: "list" },
    ]);
  });

  it("transaction: commit, throw, rollback, nesting, and misuse after the closure", async () => {
    await expectSameAsWorkerd([
      {
        op: "transaction",
        ops: [
          { op: "put", key: "a", value: 1 },
          { op: "get", key: "a" },
        ],
      },
      {
        op: "transaction",
        ops: [
          { op: "put", key: "b", value: 2 },
          { op: "throw", message: "nope" },
        ],
      },
      { op: "transaction", ops: [{ op: "put", key: "c", value: 3 }, { op: "rollback" }, { op: "get", key: "c" }] },
      { op: "leakedTxn", method: "get", args: ["a"] },
      {
        op: "transaction",
        ops: [
          { op: "put", key: "d", value: 4 },
          { op: "transaction", ops: [{ op: "put", key: "e", value: 5 }, { op: "rollback" }] },
          { op: "deleteAll" },
        ],
      },
      { op: "leakedTxn", method: "rollback" },
      { op: "list" },
    ]);
  });

  it("get(keys) returns a key whose stored value is undefined (written by the synchronous kv API)", async () => {
    const undef = enc(undefined);
    await expectSameAsWorkerd([
      { op: "kvPut", key: "é", value: undef },
      { op: "getMany", keys: ["é", "missing"] },
      { op: "get", key: "é" },
      { op: "transaction", ops: [{ op: "getMany", keys: ["é"] }, { op: "list" }] },
      { op: "sync" },
      { op: "getMany", keys: ["é", "é"] },
      { op: "kvPut", key: "a", value: undef },
      { op: "getMany", keys: ["a", "é", "b"] },
      { op: "list" },
    ]);
  });

  it("put() serializes its values before it looks at the transaction or at any limit", async () => {
    const fn = enc(() => 1);
    const sym = enc(Symbol("s"));
    const manyFns = Array.from({ length: 130 }, (_, i): [string, Encoded] => [String(i), fn]);
    await expectSameAsWorkerd([
      { op: "transaction", ops: [{ op: "rollback" }, { op: "put", key: "a", value: fn }] },
      { op: "transaction", ops: [{ op: "rollback" }, { op: "put", key: "a", value: sym }] },
      { op: "transaction", ops: [{ op: "rollback" }, { op: "putMany", entries: [["a", fn]] }] },
      {
        op: "transaction",
        ops: [
          { op: "rollback" },
          {
            op: "putMany",
            entries: [
              ["a", enc(1)],
              ["b", fn],
            ],
          },
        ],
      },
      { op: "transaction", ops: [{ op: "rollback" }, { op: "put", key: "a", value: 1 }] },
      { op: "transaction", ops: [{ op: "rollback" }, { op: "put", key: "a", value: enc(undefined) }] },
      { op: "transaction", ops: [{ op: "rollback" }, { op: "putMany", entries: manyFns }] },
      { op: "transaction", ops: [{ op: "put", key: "t", value: 1 }] },
      { op: "leakedTxn", method: "put", args: [enc("a"), fn] },
      { op: "leakedTxn", method: "put", args: [enc({ a: fn })] },
      { op: "leakedTxn", method: "put", args: [enc("a"), enc(2)] },
      { op: "putMany", entries: manyFns },
      {
        op: "putMany",
        entries: [
          ["k".repeat(3000), enc(1)],
          ["b", fn],
        ],
      },
      {
        op: "putMany",
        entries: [
          ["a", enc("x".repeat(200_000))],
          ["b", fn],
        ],
      },
      { op: "list" },
    ]);
  });

  it("alarm: set, get, delete, invalid times, fractional milliseconds", async () => {
    await expectSameAsWorkerd([
      { op: "getAlarm" },
      { op: "setAlarm", time: FAR_FUTURE_MS + 0.9 },
      { op: "getAlarm" },
      { op: "setAlarm", time: enc(new Date(FAR_FUTURE_MS + 5)) },
      { op: "getAlarm" },
      { op: "setAlarm", time: 0 },
      { op: "setAlarm", time: enc(Number.NaN) },
      { op: "setAlarm", time: enc(new Date(Number.NaN)) },
      { op: "setAlarm", time: "soon" },
      { op: "deleteAlarm" },
      { op: "deleteAlarm" },
      { op: "getAlarm" },
      { op: "transaction", ops: [{ op: "setAlarm", time: FAR_FUTURE_MS }, { op: "rollback" }] },
      { op: "getAlarm" },
    ]);
  });

  const deleteAllWithAlarm: Op[] = [
    { op: "setAlarm", time: FAR_FUTURE_MS },
    { op: "put", key: "a", value: 1 },
    { op: "deleteAll" },
    { op: "getAlarm" },
    { op: "list" },
  ];

  it("deleteAll: keeps the alarm under compat date 2026-02-23 (our default)", async () => {
    const results = await workerd.run(deleteAllWithAlarm);
    expect(results[3]).toEqual(ok(FAR_FUTURE_MS));
    await expectSubjectMatches(deleteAllWithAlarm, results);
  });

  it("deleteAll: deletes the alarm under compat date 2026-03-01 (deleteAllDeletesAlarm: true)", async () => {
    const newer = await startWorkerd({ compatibilityDate: DELETE_ALL_DELETES_ALARM_DATE });
    try {
      const results = await newer.run(deleteAllWithAlarm);
      expect(results[3]).toEqual(ok(null));
      await expectSubjectMatches(deleteAllWithAlarm, results, { deleteAllDeletesAlarm: true });
    } finally {
      await newer.dispose();
    }
  });
});

describe("kv differential: known deviations (limits)", () => {
  for (const deviation of KNOWN_DEVIATIONS) {
    it(`${deviation.id}: local workerd (SQLite) accepts, ObjectStorage enforces the platform limit`, async () => {
      const onSqlite = await workerd.run(deviation.ops);
      // If this fails, workerd started enforcing the limit: delete the deviation.
      expect(onSqlite.every((r) => r.ok)).toBe(true);
      const expected =
        "sameAs" in deviation.subjectExpected
          ? await workerd.run(deviation.ops, { backend: deviation.subjectExpected.sameAs })
          : deviation.subjectExpected.results;
      const actual = await runOnSubject(deviation.ops);
      expect(maskPendingMismatches(deviation.ops, expected, actual)).toEqual(expected);
    });
  }
});

const KV_PENDING = PENDING_MISMATCHES.filter((m) => !m.ops.some((op) => op.op === "sql"));

// Only while there are pending KV mismatches (an empty describe block fails in vitest).
(KV_PENDING.length > 0 ? describe : () => {})(
  "kv differential: pending mismatches (bugs; these turn red when fixed, then delete the entry)",
  () => {
    for (const mismatch of KV_PENDING) {
      it.fails(`${mismatch.id}: ${mismatch.description}`, async () => {
        const expected = await workerd.run(mismatch.ops, { backend: mismatch.backend ?? "sqlite" });
        await expectSubjectMatches(mismatch.ops, expected);
      });
    }
  },
);
