/**
 * Keys and SQL text with lone surrogates, against workerd (Miniflare, `useSQLite: true`).
 *
 * The platform stores a string as V8 writes it: UTF-8, with a lone surrogate as the three bytes of
 * its own code unit (WTF-8, `ED A0 80` for U+D800). So `"a\uD800b"` is a key of its own, distinct
 * from `"a\uFFFDb"`; keys sort by those bytes; and what `list()` and `get([...])` hand back is the
 * bytes decoded as UTF-8, where each of the three bytes reads as U+FFFD, so distinct keys can come
 * back as one string and collapse in the Map (the last in key order wins, at the first one's place).
 * The SQL API binds and compiles strings the same way.
 *
 * Reproduce a failure of the random part with `DIFF_SEED=<seed> npx vitest run test/differential/surrogates`.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KvOp, Op, OpResult } from "./ops";
import { runOnSubject } from "./subject";
import { createTranscriptCodec, type Encoded } from "./transcript-codec";
import { startWorkerd, type WorkerdHandle } from "./workerd";

const SEED = Number(process.env.DIFF_SEED ?? 20_261_127);
const NUM_RUNS = Number(process.env.DIFF_RUNS ?? 30);

const codec = createTranscriptCodec();
const enc = (value: unknown): Encoded => codec.encode(value);

const H = "\uD800";
const L = "\uDC00";
const PAIR = "\uD83D\uDE00";
/** Three U+FFFD: how the three bytes of an encoded lone surrogate read back. */
const R3 = "\uFFFD\uFFFD\uFFFD";

/** Keys around the lone surrogates: each side of the surrogate range, pairs, U+FFFD, and the bytes a surrogate reads back as. */
const KEYS = [
  H,
  L,
  `a${H}`,
  `a${L}`,
  `${H}a`,
  `a${H}b`,
  `a${L}b`,
  "a\uFFFDb",
  `a${R3}b`,
  PAIR,
  `${L}${H}`,
  `${H}${H}`,
  "\uDBFF",
  "\uDFFF",
  "\uD7FF",
  "\uE000",
  "\uFFFF",
  "\uDBFF\uDFFF",
  "\uD83D",
  "a",
] as const;

let workerd: WorkerdHandle;

beforeAll(async () => {
  workerd = await startWorkerd();
});

afterAll(async () => {
  await workerd?.dispose();
});

/** Runs `ops` on both sides and expects identical transcripts; returns workerd's. */
async function expectSameAsWorkerd(ops: readonly Op[]): Promise<OpResult[]> {
  const expected = await workerd.run(ops);
  expect(await runOnSubject(ops)).toEqual(expected);
  return expected;
}

/** The decoded value of a successful result. */
function decodedValue(result: OpResult | undefined): unknown {
  if (!result?.ok) throw new Error(`expected a successful result, got ${JSON.stringify(result)}`);
  return codec.decode(result.value);
}

const entriesOf = (result: OpResult | undefined): [string, unknown][] => [
  ...(decodedValue(result) as Map<string, unknown>).entries(),
];

describe("surrogates differential: keys", () => {
  it("each key is its own: put, get, get([...]), delete; list hands keys back as their bytes read as UTF-8", async () => {
    const ops: Op[] = [
      ...KEYS.map((key, i): Op => ({ op: "put", key, value: i })),
      ...KEYS.map((key): Op => ({ op: "get", key })),
      { op: "list" },
      { op: "list", options: enc({ reverse: true }) },
      { op: "getMany", keys: [`a${L}b`, `a${H}b`, "a\uFFFDb", H, "zz", `${L}${H}`] },
      { op: "getMany", keys: [`a${R3}b`, `a${L}b`, `a${H}b`] },
      { op: "delete", key: `a${H}b` },
      { op: "delete", key: `a${H}b` },
      { op: "get", key: `a${L}b` },
      { op: "get", key: "a\uFFFDb" },
      { op: "deleteMany", keys: [H, H, L, "nope"] },
      { op: "list" },
    ];
    const results = await expectSameAsWorkerd(ops);
    // The platform's facts this suite depends on, so a change on its side is named here.
    expect(results.slice(KEYS.length, 2 * KEYS.length).map(decodedValue)).toEqual(KEYS.map((_, i) => i));
    const listed = entriesOf(results[2 * KEYS.length]);
    expect(listed.find(([k]) => k === `a${R3}b`)?.[1]).toBe(8); // a\uD800b, a\uDC00b, then a\uFFFD×3 b (bytes EF…)
  });

  it("list options with lone surrogates: prefix, start, end, startAfter, reverse, limit counting stored keys", async () => {
    const options = [
      { prefix: `a${H}` },
      { prefix: H },
      { prefix: "\uD83D" },
      { prefix: "\uD7FF" },
      { prefix: "\uDBFF" },
      { prefix: `${H}\uDBFF` },
      { prefix: "a" },
      { start: H, end: L },
      { startAfter: H, end: "\uE001" },
      { start: "\uD7FF", end: "\uE000" },
      { start: L, reverse: true },
      { end: PAIR, reverse: true, limit: 3 },
      { limit: 3 },
      { prefix: "a", limit: 2 },
      { prefix: "a", limit: 2, reverse: true },
    ];
    await expectSameAsWorkerd([
      ...KEYS.map((key, i): Op => ({ op: "put", key, value: i })),
      { op: "put", key: `${H}\uDBFFx`, value: "hh" },
      { op: "put", key: `${H}\uE000`, value: "he" },
      ...options.map((o): Op => ({ op: "list", options: enc(o) })),
      ...options.map((o): Op => ({ op: "kvList", options: enc(o) })),
    ]);
  });

  it("buffered and committed keys merge as stored keys: list before and after the batch commits, in a transaction", async () => {
    await expectSameAsWorkerd([
      { op: "put", key: `a${H}`, value: 1 },
      { op: "list" },
      { op: "sync" },
      { op: "put", key: `a${L}`, value: 2 },
      { op: "put", key: `a${R3}`, value: 3 },
      { op: "list" },
      { op: "kvList" },
      {
        op: "transaction",
        ops: [
          { op: "put", key: `c${H}`, value: 5 },
          { op: "list", options: enc({ prefix: "c" }) },
          { op: "get", key: `c${H}` },
          { op: "delete", key: `c${H}` },
          { op: "get", key: `c${R3}` },
        ],
      },
      { op: "kvPut", key: `k${L}`, value: 6 },
      { op: "kvGet", key: `k${L}` },
      { op: "kvGet", key: `k${R3}` },
      { op: "kvDelete", key: `k${L}` },
      {
        op: "putMany",
        entries: [
          [`p${H}`, 1],
          [`p${L}`, 2],
          ["p\uFFFD", 3],
        ],
      },
      { op: "list", options: enc({ prefix: "p" }) },
      { op: "getMany", keys: [`p${H}`, `p${L}`] },
    ]);
  });

  it("a lone surrogate counts three bytes toward the key-size limit (as on the platform's KV backend)", async () => {
    const ops: Op[] = [
      { op: "put", key: `${H.repeat(682)}xx`, value: 1 },
      { op: "put", key: H.repeat(683), value: 1 },
      { op: "get", key: H.repeat(683) },
      { op: "put", key: `${PAIR.repeat(512)}x`, value: 1 },
    ];
    const expected = await workerd.run(ops, { backend: "cache" });
    expect(expected.map((r) => r.ok)).toEqual([true, false, false, false]);
    expect(await runOnSubject(ops)).toEqual(expected);
  });

  it("random transcripts over keys and bounds with lone surrogates match workerd", async () => {
    const keyArb = fc.constantFrom<string>(...KEYS);
    const boundArb = fc.constantFrom<string>(...KEYS, "\uDBFF\uDBFF", `a${H}\uDBFF`, "b", "");
    const listOptions = fc
      .record(
        {
          start: boundArb,
          end: boundArb,
          prefix: boundArb,
          reverse: fc.boolean(),
          limit: fc.integer({ min: 1, max: 4 }),
        },
        { requiredKeys: [] },
      )
      .map(enc);
    const opArb: fc.Arbitrary<KvOp | Op> = fc.oneof(
      { weight: 6, arbitrary: fc.tuple(keyArb, fc.integer()).map(([key, value]): Op => ({ op: "put", key, value })) },
      { weight: 3, arbitrary: keyArb.map((key): Op => ({ op: "get", key })) },
      { weight: 2, arbitrary: keyArb.map((key): Op => ({ op: "delete", key })) },
      {
        weight: 2,
        arbitrary: fc.array(keyArb, { maxLength: 5 }).map((keys): Op => ({ op: "getMany", keys })),
      },
      {
        weight: 1,
        arbitrary: fc.array(keyArb, { maxLength: 5 }).map((keys): Op => ({ op: "deleteMany", keys })),
      },
      { weight: 4, arbitrary: listOptions.map((options): Op => ({ op: "list", options })) },
      { weight: 2, arbitrary: listOptions.map((options): Op => ({ op: "kvList", options })) },
      { weight: 1, arbitrary: fc.constant<Op>({ op: "sync" }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 30 }), async (ops) => {
        expect(await runOnSubject(ops)).toEqual(await workerd.run(ops));
      }),
      { seed: SEED, numRuns: NUM_RUNS, interruptAfterTimeLimit: 45_000 },
    );
  }, 60_000);
});

describe("surrogates differential: SQL API", () => {
  it("bound strings, literals in the SQL text, column names: stored as WTF-8, read back as UTF-8", async () => {
    const s = `a${H}b`;
    await expectSameAsWorkerd([
      {
        op: "sql",
        query: "SELECT ? AS v, length(?) AS l, hex(?) AS h, typeof(?) AS t",
        bindings: [s, s, s, s],
      },
      { op: "sql", query: "SELECT hex(?) AS a, hex(?) AS b, hex(?) AS c", bindings: [`${L}${H}`, PAIR, `${H}${L}`] },
      { op: "sql", query: `SELECT hex('a${H}b') AS h, 'x${L}' AS v, unicode('${H}') AS u, length('${H}${H}') AS n` },
      { op: "sql", query: `SELECT 1 AS "c${H}", 2 AS "${"c".repeat(40)}${L}"` },
      { op: "sql", query: "CREATE TABLE t (k TEXT PRIMARY KEY, v)" },
      { op: "sql", query: "INSERT INTO t VALUES (?, 1), (?, 2), (?, 3)", bindings: [s, "a\uFFFDb", `a${L}b`] },
      { op: "sql", query: `INSERT INTO t VALUES ('x${H}', 4); SELECT hex(k) AS h FROM t WHERE v = 4` },
      { op: "sql", query: "SELECT k, hex(k) AS h, v FROM t ORDER BY k" },
      { op: "sql", query: "SELECT v FROM t WHERE k = ?", bindings: [s] },
      { op: "sql", query: "SELECT v FROM t WHERE k = ?", bindings: [`a${R3}b`] },
      { op: "databaseSize" },
    ]);
  });
});
