/**
 * Faults at random points: writers take the object from each other while the fake S3 loses
 * answers (after applying the write), answers 503, 500 or 409, at random requests. After each run:
 * claims contiguous, log epochs never decrease, no gaps, every confirmed commit present with the
 * value its writer confirmed, and no seq confirmed twice.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { isFencedError, type PersistenceAdapter } from "../../src/durability/persistence";
import { s3Persistence } from "../../src/s3/index";
import { type FakeRequest, FakeS3, type Fault } from "./fake-s3";
import { checkInvariants } from "./invariants";
import { freshPrefix, optionsFor, type S3Target } from "./s3-harness";

let s3: FakeS3;
let target: S3Target;
beforeAll(async () => {
  s3 = await FakeS3.start({ accessKeyId: "AKRANDOM" });
  target = { endpoint: s3.endpoint, bucket: "objects", accessKeyId: "AKRANDOM", secretAccessKey: "random-secret" };
});
afterAll(async () => {
  await s3.close();
});

const FAULTS: Fault[] = [
  { kind: "lose-answer" },
  { kind: "status", status: 503, code: "SlowDown" },
  { kind: "status", status: 500, code: "InternalError" },
  { kind: "status", status: 409, code: "ConditionalRequestConflict" },
];

type Step = { kind: "append"; writer: number; count: number } | { kind: "takeover"; writer: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("append" as const),
      writer: fc.nat(2),
      count: fc.integer({ min: 1, max: 4 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("takeover" as const), writer: fc.nat(2) }) },
);

describe("s3 (fake): faults at random points", () => {
  test("takeovers under lost answers, 503, 500 and 409 keep every invariant", async () => {
    let applied = 0;
    let fenced = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 4, maxLength: 14 }),
        fc.array(fc.tuple(fc.nat(120), fc.nat(FAULTS.length - 1)), { maxLength: 12 }),
        async (steps, faultPlan) => {
          const prefix = freshPrefix("random");
          let index = 0;
          const planned = new Map(faultPlan.map(([at, f]) => [at, FAULTS[f] as Fault]));
          const mine = (r: FakeRequest) => r.key.startsWith(prefix);
          // One rule that decides per request, by its index among this prefix's requests.
          const rule = {
            match: (r: FakeRequest) => mine(r) && planned.has(index++),
            get fault(): Fault {
              applied++;
              return planned.get(index - 1) as Fault;
            },
            times: Number.MAX_SAFE_INTEGER,
          };
          s3.rules.push(rule);
          const writers: Array<{ adapter: PersistenceAdapter; next: number; fenced: boolean } | null> = [
            null,
            null,
            null,
          ];
          const confirmed = new Map<number, string>();
          const open = async (w: number) => {
            const adapter = s3Persistence(optionsFor(target, prefix, { retries: 3 }));
            try {
              const loaded = await adapter.load();
              writers[w] = { adapter, next: loaded.lastSeq + 1, fenced: false };
            } catch (e) {
              if (!isFencedError(e) && (e as { code?: string }).code !== "ERR_WRITE_FAILED") throw e;
              writers[w] = null;
            }
          };
          try {
            for (const step of steps) {
              if (step.kind === "takeover" || writers[step.writer] === null) {
                await open(step.writer);
                if (step.kind === "takeover") continue;
              }
              const w = writers[step.writer];
              if (w === null || w === undefined || w.fenced) continue;
              for (let i = 0; i < step.count; i++) {
                const seq = w.next;
                const value = `w${step.writer}:${seq}:${i}`;
                try {
                  await w.adapter.append([
                    {
                      seq,
                      timeMs: 0,
                      reset: false,
                      sql: [],
                      kv: [{ key: "v", value: new TextEncoder().encode(value) }],
                    },
                  ]);
                } catch (e) {
                  if (isFencedError(e)) {
                    w.fenced = true;
                    fenced++;
                  } else {
                    expect((e as { code?: string }).code).toBe("ERR_WRITE_FAILED");
                    writers[step.writer] = null;
                  }
                  break;
                }
                expect(confirmed.has(seq), `seq ${seq} confirmed twice`).toBe(false);
                confirmed.set(seq, value);
                w.next++;
              }
            }
          } finally {
            s3.rules.splice(s3.rules.indexOf(rule), 1);
          }
          await checkInvariants(target, prefix, confirmed);
        },
      ),
      { numRuns: 8 },
    );
    // The runs did meet faults and takeovers.
    expect(applied).toBeGreaterThan(0);
    expect(fenced).toBeGreaterThan(0);
  }, 180_000);
});
