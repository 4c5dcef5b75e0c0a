/**
 * Random sequences of setAlarm / deleteAlarm / failing handlers / clock advances / abort() /
 * restarts, checked step by step against a plain model of the alarm slot and its retry counter
 * (random = 0, so the backoff is exactly 2 s << retry).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { AlarmInvocationInfo } from "../../src/alarms/alarm-scheduler";
import { ObjectContext } from "../../src/context/object-context";
import type { ObjectState } from "../../src/context/object-state";
import { createMemoryPersistence, type MemoryPersistence } from "../../src/durability/memory-persistence";
import { FakeClock } from "../../src/util/clock";

const T0 = Date.UTC(2026, 0, 1);
const MAX_RETRIES = 6;

type Op =
  | { kind: "set"; offsetMs: number }
  | { kind: "delete" }
  | { kind: "advance"; ms: number }
  | { kind: "fail"; attempts: number }
  | { kind: "abort" }
  | { kind: "restart" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("set" as const), offsetMs: fc.integer({ min: -5_000, max: 200_000 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "delete" as const }) },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 300_000 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("fail" as const), attempts: fc.integer({ min: 1, max: 9 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "abort" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "restart" as const }) },
);

/** The model: the stored alarm, and the attempt the scheduler has planned for it. */
interface Slot {
  scheduledTime: number;
  runAtMs: number;
  retryCount: number;
}

interface Attempt {
  scheduledTime: number;
  retryCount: number;
  atMs: number;
}

interface Env {
  clock: FakeClock;
  failures: number;
  attempts: Attempt[];
}

class Alarmed {
  constructor(
    readonly ctx: ObjectState,
    readonly env: Env,
  ) {}
  alarm(info: AlarmInvocationInfo): void {
    this.env.attempts.push({
      scheduledTime: info.scheduledTime,
      retryCount: info.retryCount,
      atMs: this.env.clock.now(),
    });
    if (info.isRetry !== info.retryCount > 0) throw new Error("isRetry disagrees with retryCount");
    if (this.env.failures > 0) {
      this.env.failures--;
      throw new Error("planned failure");
    }
  }
  set(t: number): Promise<void> {
    return this.ctx.storage.setAlarm(t);
  }
  delete(): Promise<void> {
    return this.ctx.storage.deleteAlarm();
  }
  get(): Promise<number | null> {
    return this.ctx.storage.getAlarm();
  }
}

function open(env: Env, persistence: MemoryPersistence) {
  return ObjectContext.create(Alarmed, { env, clock: env.clock, random: () => 0, storage: { persistence } });
}

describe("alarm model", () => {
  test("alarm: random set/delete/fail/advance/abort/restart sequences match the model of the slot and retry counter", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
        const clock = new FakeClock(T0);
        const env: Env = { clock, failures: 0, attempts: [] };
        const persistence = createMemoryPersistence();
        let context = await open(env, persistence);
        let slot = null as Slot | null;
        let failures = 0;
        const expected: Attempt[] = [];

        for (const op of ops) {
          switch (op.kind) {
            case "set": {
              const t = Math.max(clock.now() + op.offsetMs, clock.now());
              await context.call("set", clock.now() + op.offsetMs);
              // Setting the current value is a no-op (a retry in progress keeps its backoff).
              if (slot?.scheduledTime !== t) slot = { scheduledTime: t, runAtMs: t, retryCount: 0 };
              break;
            }
            case "delete":
              await context.call("delete");
              slot = null;
              break;
            case "fail":
              env.failures = failures = op.attempts;
              break;
            case "abort":
              context.abort();
              break;
            case "restart":
              await context.close();
              context = await open(env, persistence);
              // A new scheduler: the stored alarm is planned afresh (a past one runs at once).
              if (slot !== null)
                slot = { scheduledTime: slot.scheduledTime, runAtMs: slot.scheduledTime, retryCount: 0 };
              break;
            case "advance": {
              const target = clock.now() + op.ms;
              let now = clock.now();
              while (slot !== null && slot.runAtMs <= target) {
                const at: number = Math.max(now, slot.runAtMs);
                now = at;
                expected.push({ scheduledTime: slot.scheduledTime, retryCount: slot.retryCount, atMs: at });
                if (failures > 0) {
                  failures--;
                  slot =
                    slot.retryCount >= MAX_RETRIES
                      ? null
                      : {
                          scheduledTime: slot.scheduledTime,
                          runAtMs: at + 2_000 * 2 ** slot.retryCount,
                          retryCount: slot.retryCount + 1,
                        };
                } else {
                  slot = null;
                }
              }
              await clock.advance(op.ms);
              await context.alarms.idle();
              break;
            }
          }
          expect(env.attempts).toEqual(expected);
          expect(context.alarms.next()).toEqual(slot);
          expect(await context.call("get")).toBe(slot?.scheduledTime ?? null);
          expect(env.failures).toBe(failures);
        }
        await context.close();
      }),
      { seed: 0xa1a2, numRuns: 100 },
    );
  });
});
