/**
 * Firing alarms (workerd-semantics §6): the handler runs as an event through the object context on
 * the FakeClock, with `{ retryCount, isRetry, scheduledTime }`; success clears; failures retry with
 * backoff and jitter; interactions with deleteAlarm/setAlarm, abort() and restarts; the testing
 * surface (runDue, next, FakeClock.advance).
 */
import { describe, expect, test } from "vitest";
import type { AlarmInvocationInfo } from "../../src/alarms/alarm-scheduler";
import { backoffDelayMs } from "../../src/alarms/backoff";
import { ObjectContext } from "../../src/context/object-context";
import type { ObjectState } from "../../src/context/object-state";
import { FaultyPersistence } from "../../src/durability/faulty-persistence";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import type { PersistenceAdapter } from "../../src/durability/persistence";
import { ObjectStorage } from "../../src/storage/object-storage";
import { type Clock, FakeClock } from "../../src/util/clock";
import { type Trigger, track, triggerPromise, turns } from "../context/helpers";

const T0 = Date.UTC(2026, 0, 1);

/** What one handler run saw. */
interface Run {
  info: AlarmInvocationInfo;
  atMs: number;
  /** getAlarm() at the start of the handler. */
  alarmInside: number | null;
  instanceNo: number;
}

/** How the handler behaves; the test changes it between runs. */
interface Behaviour {
  /** Fail this many more attempts. */
  failures: number;
  /** Runs inside the handler before it succeeds or fails. */
  during?: (ctx: ObjectState, info: AlarmInvocationInfo) => Promise<void>;
}

interface Env {
  clock: FakeClock;
  runs: Run[];
  behaviour: Behaviour;
}

let constructed = 0;

class Scheduled {
  readonly instanceNo = ++constructed;
  constructor(
    readonly ctx: ObjectState,
    readonly env: Env,
  ) {}

  async alarm(info: AlarmInvocationInfo): Promise<void> {
    const alarmInside = await this.ctx.storage.getAlarm();
    this.env.runs.push({ info, atMs: this.env.clock.now(), alarmInside, instanceNo: this.instanceNo });
    await this.env.behaviour.during?.(this.ctx, info);
    if (this.env.behaviour.failures > 0) {
      this.env.behaviour.failures--;
      throw new Error(`alarm attempt ${info.retryCount} failed`);
    }
  }

  set(t: number): Promise<void> {
    return this.ctx.storage.setAlarm(t);
  }
  get(): Promise<number | null> {
    return this.ctx.storage.getAlarm();
  }
  delete(): Promise<void> {
    return this.ctx.storage.deleteAlarm();
  }
  async put(key: string, value: unknown): Promise<void> {
    await this.ctx.storage.put(key, value);
  }
  read(key: string): Promise<unknown> {
    return this.ctx.storage.get(key);
  }
}

interface Setup {
  clock?: FakeClock;
  random?: () => number;
  persistence?: PersistenceAdapter;
  behaviour?: Behaviour;
  alarms?: boolean;
}

async function scheduled(setup: Setup = {}) {
  const clock = setup.clock ?? new FakeClock(T0);
  const env: Env = { clock, runs: [], behaviour: setup.behaviour ?? { failures: 0 } };
  const context = await ObjectContext.create(Scheduled, {
    env,
    clock,
    random: setup.random ?? (() => 0),
    storage: { persistence: setup.persistence ?? createMemoryPersistence() },
    alarms: setup.alarms ?? true,
  });
  return { context, clock, env };
}

/**
 * Advances the clock timer by timer, letting each alarm attempt finish before time moves on (an
 * attempt takes a few event-loop turns; the retry is planned from the time it failed).
 */
async function advanceStepwise(context: ObjectContext<Env, Scheduled>, clock: FakeClock, ms: number): Promise<void> {
  const target = clock.now() + ms;
  for (;;) {
    await context.alarms.idle();
    const next = clock.nextTimerAt();
    if (next === null || next > target) break;
    await clock.advanceTo(next);
    await context.alarms.idle();
  }
  await clock.advanceTo(target);
  await context.alarms.idle();
}

describe("firing", () => {
  test("alarm: fires at its time through the object context with { retryCount: 0, isRetry: false, scheduledTime }", async () => {
    const { context, clock, env } = await scheduled();
    await context.call("set", T0 + 10_000);
    await clock.advance(9_999);
    expect(env.runs).toEqual([]);
    await advanceStepwise(context, clock, 1);
    expect(env.runs).toHaveLength(1);
    const run = env.runs[0] as Run;
    expect(run.info).toEqual({ retryCount: 0, isRetry: false, scheduledTime: T0 + 10_000 });
    expect(run.atMs).toBe(T0 + 10_000);
  });

  test("alarm: a clock whose timer fires early (a delay past setTimeout's 2^31 - 1 ms) does not run the alarm before its time", async () => {
    const fake = new FakeClock(T0);
    // setTimeout's behaviour for a delay it cannot hold: the timer fires after 1 ms (the first
    // time; the timers after it are honest, so that the test can reach the alarm's time).
    let early = 1;
    const earlyClock: Clock = {
      now: () => fake.now(),
      setTimer: (callback, delayMs) => {
        if (delayMs <= 0x7fffffff || early === 0) return fake.setTimer(callback, delayMs);
        early--;
        return fake.setTimer(callback, 1);
      },
      clearTimer: (handle) => fake.clearTimer(handle),
    };
    const env: Env = { clock: fake, runs: [], behaviour: { failures: 0 } };
    const context = await ObjectContext.create(Scheduled, {
      env,
      clock: earlyClock,
      random: () => 0,
      storage: { persistence: createMemoryPersistence() },
    });
    const at = T0 + 30 * 86_400_000;
    await context.call("set", at);
    for (let i = 0; i < 5; i++) {
      await fake.advance(1);
      await context.alarms.idle();
    }
    expect(early).toBe(0); // the early timer did fire
    expect(env.runs).toEqual([]);
    expect(await context.call("get")).toBe(at);
    await advanceStepwise(context, fake, at - fake.now());
    expect(env.runs.map((r) => r.atMs)).toEqual([at]);
    await context.close();
  });

  test("alarm: inside the handler getAlarm() returns null", async () => {
    const { context, clock, env } = await scheduled();
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 1_000);
    expect(env.runs.map((r) => r.alarmInside)).toEqual([null]);
  });

  test("alarm: a successful handler clears the alarm", async () => {
    const { context, clock, env } = await scheduled();
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 1_000);
    expect(env.runs).toHaveLength(1);
    expect(await context.call("get")).toBeNull();
    expect(context.alarms.next()).toBeNull();
    await advanceStepwise(context, clock, 3_600_000);
    expect(env.runs).toHaveLength(1);
  });

  test("alarm: a handler that sets a new alarm keeps it (getAlarm inside shows it) and it fires next with retryCount 0", async () => {
    const seen: Array<number | null> = [];
    const { context, clock, env } = await scheduled({
      behaviour: {
        failures: 0,
        during: async (ctx, info) => {
          if (info.scheduledTime === T0 + 1_000) {
            await ctx.storage.setAlarm(T0 + 5_000);
            seen.push(await ctx.storage.getAlarm());
          }
        },
      },
    });
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 1_000);
    expect(seen).toEqual([T0 + 5_000]);
    expect(await context.call("get")).toBe(T0 + 5_000);
    await advanceStepwise(context, clock, 4_000);
    expect(env.runs.map((r) => [r.info.scheduledTime, r.info.retryCount, r.atMs])).toEqual([
      [T0 + 1_000, 0, T0 + 1_000],
      [T0 + 5_000, 0, T0 + 5_000],
    ]);
    expect(await context.call("get")).toBeNull();
  });

  test("alarm: a handler that sets the alarm to the very time being handled (now, on a clock stopped there) keeps it, and it runs again", async () => {
    // On the platform any setAlarm() in the handler cancels the deletion a success would make,
    // even when the time is the one being handled; under FakeClock.advance the clock stands at
    // that time, so setAlarm(now) in a handler is exactly that case.
    const seen: Array<number | null> = [];
    let again = 2;
    const { context, clock, env } = await scheduled({
      behaviour: {
        failures: 0,
        during: async (ctx) => {
          if (again-- > 0) {
            await ctx.storage.setAlarm(clock.now());
            seen.push(await ctx.storage.getAlarm());
          }
        },
      },
    });
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 1_000);
    expect(env.runs.map((r) => [r.info.scheduledTime, r.info.retryCount, r.alarmInside])).toEqual([
      [T0 + 1_000, 0, null],
      [T0 + 1_000, 0, null],
      [T0 + 1_000, 0, null],
    ]);
    expect(seen).toEqual([T0 + 1_000, T0 + 1_000]);
    expect(await context.call("get")).toBeNull();
    expect(context.alarms.next()).toBeNull();
  });

  test("alarm: setting the handled time in a transaction the handler rolls back keeps nothing", async () => {
    const seen: Array<number | null> = [];
    const { context, clock, env } = await scheduled({
      behaviour: {
        failures: 0,
        during: async (ctx, info) => {
          await ctx.storage.transaction(async (txn) => {
            await txn.setAlarm(info.scheduledTime);
            seen.push(await txn.getAlarm());
            txn.rollback();
          });
          seen.push(await ctx.storage.getAlarm());
        },
      },
    });
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 1_000);
    expect(seen).toEqual([T0 + 1_000, null]);
    expect(env.runs).toHaveLength(1);
    expect(await context.call("get")).toBeNull();
    expect(context.alarms.next()).toBeNull();
  });

  test("alarm: a time in the past fires as soon as possible, asynchronously (not inside setAlarm)", async () => {
    const { context, clock, env } = await scheduled();
    await clock.advance(5_000);
    await context.call("set", T0); // in the past: clamped to now
    expect(await context.call("get")).toBe(T0 + 5_000);
    expect(env.runs).toEqual([]);
    expect(clock.nextTimerAt()).toBe(T0 + 5_000);
    await advanceStepwise(context, clock, 0);
    expect(env.runs.map((r) => [r.info.scheduledTime, r.atMs])).toEqual([[T0 + 5_000, T0 + 5_000]]);
  });

  test("alarm: the handler is an event: it waits for the input gate (a blockConcurrencyWhile in progress)", async () => {
    const { context, clock, env } = await scheduled();
    await context.call("set", T0 + 1_000);
    const gate = triggerPromise();
    const instance = await context.instance();
    const blocking = instance.ctx.blockConcurrencyWhile(() => gate.promise);
    await clock.advance(1_000);
    await turns(20);
    expect(env.runs).toEqual([]);
    gate.resolve();
    await blocking;
    await context.alarms.idle();
    expect(env.runs).toHaveLength(1);
  });

  test("alarm: writes made by the handler commit like any event's", async () => {
    const { context, clock } = await scheduled({
      behaviour: {
        failures: 0,
        during: async (ctx, info) => {
          await ctx.storage.put("fired", info.scheduledTime);
        },
      },
    });
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 1_000);
    expect(await context.call("read", "fired")).toBe(T0 + 1_000);
  });

  test("alarm: a bare ObjectStorage's alarm fires once a context with a handler owns the storage", async () => {
    const persistence = createMemoryPersistence();
    const clock = new FakeClock(T0);
    const bare = await ObjectStorage.open({ persistence, clock });
    await bare.setAlarm(T0 + 1_000);
    await clock.advance(2_000); // nothing fires: no context
    await bare.close();
    const { context, env } = await scheduled({ clock, persistence });
    await advanceStepwise(context, clock, 0);
    expect(env.runs.map((r) => [r.info.scheduledTime, r.atMs])).toEqual([[T0 + 1_000, T0 + 2_000]]);
  });
});

describe("retries", () => {
  /** Cumulative retry offsets: attempt 0 at the scheduled time, then each backoff after the last failure. */
  function expectedTimes(start: number, random: () => number, attempts: number): number[] {
    const times = [start];
    for (let i = 1; i < attempts; i++) times.push((times[i - 1] as number) + backoffDelayMs(i - 1, random));
    return times;
  }

  test("backoffDelayMs: 2 s, 4 s, 8 s … plus up to 25 % jitter, capped at 2 s << 9", () => {
    const zero = () => 0;
    const high = () => 0.999;
    expect([0, 1, 2, 3, 4, 5].map((i) => backoffDelayMs(i, zero))).toEqual([
      2_000, 4_000, 8_000, 16_000, 32_000, 64_000,
    ]);
    expect([0, 1, 2, 3, 4, 5].map((i) => backoffDelayMs(i, high))).toEqual([
      2_499, 4_999, 9_998, 19_996, 39_992, 79_984,
    ]);
    expect(backoffDelayMs(9, zero)).toBe(1_024_000);
    expect(backoffDelayMs(20, zero)).toBe(1_024_000);
  });

  test("alarm: a failing handler is retried after 2 s, 4 s, 8 s … (random = 0), 7 attempts, then abandoned", async () => {
    const { context, clock, env } = await scheduled({ behaviour: { failures: 100 }, random: () => 0 });
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 1_000_000);
    const start = T0 + 1_000;
    expect(env.runs.map((r) => r.atMs - start)).toEqual([0, 2_000, 6_000, 14_000, 30_000, 62_000, 126_000]);
    expect(env.runs.map((r) => r.info)).toEqual(
      [0, 1, 2, 3, 4, 5, 6].map((n) => ({ retryCount: n, isRetry: n > 0, scheduledTime: start })),
    );
    // Abandoned and cleared after the seventh attempt.
    expect(await context.call("get")).toBeNull();
    expect(context.alarms.next()).toBeNull();
    expect(context.alarms.history.map((h) => h.ok)).toEqual([false, false, false, false, false, false, false]);
  });

  test("alarm: jitter up to 25 % from the injected random (random = 0.999)", async () => {
    const random = () => 0.999;
    const { context, clock, env } = await scheduled({ behaviour: { failures: 100 }, random });
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 1_000_000);
    expect(env.runs.map((r) => r.atMs)).toEqual(expectedTimes(T0 + 1_000, random, 7));
    expect(env.runs.map((r) => r.atMs - T0 - 1_000)).toEqual([0, 2_499, 7_498, 17_496, 37_492, 77_484, 157_468]);
  });

  test("alarm: a retry that succeeds clears the alarm", async () => {
    const { context, clock, env } = await scheduled({ behaviour: { failures: 2 } });
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 100_000);
    expect(env.runs.map((r) => r.info.retryCount)).toEqual([0, 1, 2]);
    expect(await context.call("get")).toBeNull();
    expect(context.alarms.history.map((h) => h.ok)).toEqual([false, false, true]);
  });

  test("alarm: between attempts getAlarm() returns the original scheduled time; inside it is null", async () => {
    const { context, clock, env } = await scheduled({ behaviour: { failures: 3 } });
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 1_000);
    expect(env.runs).toHaveLength(1);
    expect(await context.call("get")).toBe(T0 + 1_000);
    expect(context.alarms.next()).toEqual({ scheduledTime: T0 + 1_000, runAtMs: T0 + 3_000, retryCount: 1 });
    await advanceStepwise(context, clock, 2_000);
    expect(env.runs).toHaveLength(2);
    expect(await context.call("get")).toBe(T0 + 1_000);
    expect(env.runs.map((r) => r.alarmInside)).toEqual([null, null]);
  });

  test("alarm: deleteAlarm() inside a failing handler cancels the retry", async () => {
    const { context, clock, env } = await scheduled({
      behaviour: {
        failures: 100,
        during: async (ctx) => {
          await ctx.storage.deleteAlarm();
        },
      },
    });
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 1_000_000);
    expect(env.runs).toHaveLength(1);
    expect(await context.call("get")).toBeNull();
    expect(context.alarms.next()).toBeNull();
  });

  test("alarm: deleteAlarm() from another event while the handler runs cancels the retry of a failure", async () => {
    const gate: Trigger = triggerPromise();
    const { context, clock, env } = await scheduled({
      behaviour: { failures: 100, during: () => gate.promise },
    });
    await context.call("set", T0 + 1_000);
    await clock.advance(1_000);
    await turns(10);
    expect(env.runs).toHaveLength(1);
    await context.call("delete");
    gate.resolve();
    await context.alarms.idle();
    await advanceStepwise(context, clock, 1_000_000);
    expect(env.runs).toHaveLength(1);
    expect(await context.call("get")).toBeNull();
  });

  test("alarm: deleteAlarm() between attempts cancels the pending retry", async () => {
    const { context, clock, env } = await scheduled({ behaviour: { failures: 100 } });
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 1_000);
    expect(context.alarms.next()?.retryCount).toBe(1);
    await context.call("delete");
    expect(context.alarms.next()).toBeNull();
    await advanceStepwise(context, clock, 1_000_000);
    expect(env.runs).toHaveLength(1);
  });

  test("alarm: setAlarm() between attempts replaces the retry with a fresh alarm (retryCount 0)", async () => {
    const { context, clock, env } = await scheduled({ behaviour: { failures: 1 } });
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 1_000);
    await context.call("set", T0 + 50_000);
    expect(context.alarms.next()).toEqual({ scheduledTime: T0 + 50_000, runAtMs: T0 + 50_000, retryCount: 0 });
    await advanceStepwise(context, clock, 100_000);
    expect(env.runs.map((r) => [r.info.scheduledTime, r.info.retryCount, r.atMs])).toEqual([
      [T0 + 1_000, 0, T0 + 1_000],
      [T0 + 50_000, 0, T0 + 50_000],
    ]);
  });
});

describe("interactions", () => {
  test("alarm: a running handler is not cancelled by deleteAlarm() from another event", async () => {
    const gate: Trigger = triggerPromise();
    let finished = false;
    const { context, clock, env } = await scheduled({
      behaviour: {
        failures: 0,
        during: async () => {
          await gate.promise;
          finished = true;
        },
      },
    });
    await context.call("set", T0 + 1_000);
    await clock.advance(1_000);
    await turns(10);
    expect(env.runs).toHaveLength(1);
    await context.call("delete");
    gate.resolve();
    await context.alarms.idle();
    expect(finished).toBe(true);
    expect(context.alarms.history.map((h) => h.ok)).toEqual([true]);
    expect(await context.call("get")).toBeNull();
  });

  test("alarm: a running handler is not cancelled by setAlarm() from another event; the new alarm fires next", async () => {
    const gate: Trigger = triggerPromise();
    let finished = false;
    const { context, clock, env } = await scheduled({
      behaviour: {
        failures: 0,
        during: async (_ctx, info) => {
          if (info.scheduledTime !== T0 + 1_000) return;
          await gate.promise;
          finished = true;
        },
      },
    });
    await context.call("set", T0 + 1_000);
    await clock.advance(1_000);
    await turns(10);
    expect(env.runs).toHaveLength(1);
    // Another event sees no alarm while the handler runs (as ActorSqlite), and sets a new one.
    expect(await context.call("get")).toBeNull();
    await context.call("set", T0 + 9_000);
    expect(await context.call("get")).toBe(T0 + 9_000);
    gate.resolve();
    await context.alarms.idle();
    expect(finished).toBe(true);
    expect(await context.call("get")).toBe(T0 + 9_000);
    await advanceStepwise(context, clock, 10_000);
    expect(env.runs.map((r) => r.info.scheduledTime)).toEqual([T0 + 1_000, T0 + 9_000]);
  });

  test("alarm: after abort() a pending alarm is still scheduled and fires on a fresh instance", async () => {
    const { context, clock, env } = await scheduled();
    await context.call("set", T0 + 1_000);
    const before = (await context.instance()).instanceNo;
    context.abort();
    expect(context.alarms.next()?.scheduledTime).toBe(T0 + 1_000);
    await advanceStepwise(context, clock, 1_000);
    expect(env.runs).toHaveLength(1);
    expect((env.runs[0] as Run).instanceNo).toBeGreaterThan(before);
    expect(await context.call("get")).toBeNull();
  });

  test("alarm: a setAlarm lost by abort() is not scheduled", async () => {
    class Aborting extends Scheduled {
      async setThenAbort(t: number): Promise<void> {
        void this.ctx.storage.setAlarm(t);
        this.ctx.abort();
      }
    }
    const clock = new FakeClock(T0);
    const env: Env = { clock, runs: [], behaviour: { failures: 0 } };
    const context = await ObjectContext.create(Aborting, { env, clock, random: () => 0 });
    await expect(context.call("setThenAbort", T0 + 1_000)).rejects.toThrow();
    expect(context.alarms.next()).toBeNull();
    await clock.advance(10_000);
    await context.alarms.idle();
    expect(env.runs).toEqual([]);
  });

  test("alarm: after a restart (reopen with the same persistence) a pending alarm is still scheduled", async () => {
    const persistence = createMemoryPersistence();
    const clock = new FakeClock(T0);
    const first = await scheduled({ clock, persistence });
    await first.context.call("set", T0 + 60_000);
    await first.context.close();
    const second = await scheduled({ clock, persistence });
    expect(second.context.alarms.next()).toEqual({ scheduledTime: T0 + 60_000, runAtMs: T0 + 60_000, retryCount: 0 });
    await advanceStepwise(second.context, clock, 60_000);
    expect(first.env.runs).toEqual([]);
    expect(second.env.runs.map((r) => r.atMs)).toEqual([T0 + 60_000]);
  });

  test("alarm: an alarm whose time passed while the object was down fires once on start-up", async () => {
    const persistence = createMemoryPersistence();
    const first = await scheduled({ clock: new FakeClock(T0), persistence });
    await first.context.call("set", T0 + 1_000);
    // A crash: the first process is simply gone (its clock never advances again).
    const later = new FakeClock(T0 + 3_600_000);
    const second = await scheduled({ clock: later, persistence });
    await advanceStepwise(second.context, later, 0);
    expect(second.env.runs.map((r) => [r.info.scheduledTime, r.info.retryCount, r.atMs])).toEqual([
      [T0 + 1_000, 0, T0 + 3_600_000],
    ]);
    await advanceStepwise(second.context, later, 3_600_000);
    expect(second.env.runs).toHaveLength(1);
    expect(await second.context.call("get")).toBeNull();
  });

  test("alarm: deleteAll() keeps the alarm by default, so it still fires", async () => {
    class Wiping extends Scheduled {
      wipe(): Promise<void> {
        return this.ctx.storage.deleteAll();
      }
    }
    const clock = new FakeClock(T0);
    const env: Env = { clock, runs: [], behaviour: { failures: 0 } };
    const context = await ObjectContext.create(Wiping, { env, clock });
    await context.call("set", T0 + 1_000);
    await context.call("wipe");
    expect(await context.call("get")).toBe(T0 + 1_000);
    await clock.advance(1_000);
    await context.alarms.idle();
    expect(env.runs).toHaveLength(1);
  });

  test("alarm: deleteAll() with deleteAllDeletesAlarm: true unschedules it", async () => {
    class Wiping extends Scheduled {
      wipe(): Promise<void> {
        return this.ctx.storage.deleteAll();
      }
    }
    const clock = new FakeClock(T0);
    const env: Env = { clock, runs: [], behaviour: { failures: 0 } };
    const context = await ObjectContext.create(Wiping, { env, clock, storage: { deleteAllDeletesAlarm: true } });
    await context.call("set", T0 + 1_000);
    await context.call("wipe");
    expect(await context.call("get")).toBeNull();
    expect(context.alarms.next()).toBeNull();
    await clock.advance(10_000);
    await context.alarms.idle();
    expect(env.runs).toEqual([]);
  });
});

describe("failure modes", () => {
  test("alarm: a handler that calls abort() fails the attempt and is retried on a fresh instance", async () => {
    let aborted = false;
    const { context, clock, env } = await scheduled({
      behaviour: {
        failures: 0,
        during: async (ctx) => {
          if (!aborted) {
            aborted = true;
            ctx.abort();
          }
        },
      },
    });
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 10_000);
    expect(env.runs.map((r) => [r.info.retryCount, r.atMs])).toEqual([
      [0, T0 + 1_000],
      [1, T0 + 3_000],
    ]);
    expect((env.runs[1] as Run).instanceNo).toBeGreaterThan((env.runs[0] as Run).instanceNo);
    expect(context.resets).toBe(1);
    expect(await context.call("get")).toBeNull();
  });

  /** Every append from now on fails until `heal()` (a storage outage). */
  function outage(faulty: FaultyPersistence): void {
    for (let n = 1; n <= 200; n++) faulty.failAppendAt(n);
  }

  test("alarm: an attempt whose writes cannot be confirmed is retried without counting it (retryCount stays 0, never abandoned), as on the platform", async () => {
    const faulty = new FaultyPersistence(createMemoryPersistence());
    let attempt = 0;
    const { context, clock, env } = await scheduled({
      persistence: faulty,
      behaviour: {
        failures: 0,
        during: async (ctx) => {
          await ctx.storage.put("attempt", ++attempt);
        },
      },
    });
    await context.call("set", T0 + 1_000);
    outage(faulty);
    // Longer than the seven attempts a counted failure gets (126 s): the storage is still down.
    await advanceStepwise(context, clock, 300_000);
    expect(env.runs.map((r) => [r.info.retryCount, r.info.isRetry, r.atMs - T0 - 1_000])).toEqual(
      [0, 2_000, 6_000, 14_000, 30_000, 62_000, 126_000, 254_000].map((at) => [0, false, at]),
    );
    expect(context.alarms.next()).toEqual({ scheduledTime: T0 + 1_000, runAtMs: T0 + 511_000, retryCount: 0 });
    faulty.heal();
    expect(await context.call("get")).toBe(T0 + 1_000);
    await advanceStepwise(context, clock, 300_000);
    expect(env.runs.length).toBe(9);
    expect(context.alarms.history.map((h) => h.ok)).toEqual([...Array(8).fill(false), true]);
    expect(await context.call("read", "attempt")).toBe(9);
    expect(await context.call("get")).toBeNull();
    expect(context.alarms.next()).toBeNull();
  });

  test("alarm: a session that cannot open when the alarm is due retries the alarm later (it was left planned with no timer)", async () => {
    const faulty = new FaultyPersistence(createMemoryPersistence());
    const { context, clock, env } = await scheduled({ persistence: faulty });
    await context.call("set", T0 + 1_000);
    context.abort();
    faulty.failLoads(3);
    await advanceStepwise(context, clock, 20_000);
    // Opening failed at 1 s, 3 s and 7 s (2 s, 4 s, 8 s of backoff); the fourth try ran it.
    expect(env.runs.map((r) => [r.info.retryCount, r.atMs - T0 - 1_000])).toEqual([[0, 14_000]]);
    expect(await context.call("get")).toBeNull();
  });

  test("alarm: a counted failure after uncounted ones starts the backoff again at 2 s, as on the platform", async () => {
    const faulty = new FaultyPersistence(createMemoryPersistence());
    let attempt = 0;
    const { context, clock, env } = await scheduled({
      persistence: faulty,
      behaviour: {
        failures: 0,
        during: async (ctx) => {
          attempt++;
          if (attempt < 3) await ctx.storage.put("attempt", attempt);
          if (attempt === 3) {
            faulty.heal();
            throw new Error("the handler's own failure");
          }
        },
      },
    });
    await context.call("set", T0 + 1_000);
    outage(faulty);
    await advanceStepwise(context, clock, 60_000);
    // 0 s and 2 s: storage failures (uncounted, 2 s then 4 s); 6 s: the handler throws (counted,
    // backoff back to 2 s); 8 s: retryCount 1, succeeds.
    expect(env.runs.map((r) => [r.info.retryCount, r.atMs - T0 - 1_000])).toEqual([
      [0, 0],
      [0, 2_000],
      [0, 6_000],
      [1, 8_000],
    ]);
    expect(context.alarms.history.map((h) => h.ok)).toEqual([false, false, false, true]);
    expect(await context.call("get")).toBeNull();
  });

  test("alarm: clearing an abandoned alarm while the storage fails raises no unhandled rejection; the alarm stays and is abandoned once it can be cleared", async () => {
    const faulty = new FaultyPersistence(createMemoryPersistence());
    const { context, clock, env } = await scheduled({ persistence: faulty, behaviour: { failures: 100 } });
    await context.call("set", T0 + 1_000);
    // The handler writes nothing: the first append after this is the clearing of the abandoned alarm.
    faulty.failNextAppend();
    await advanceStepwise(context, clock, 200_000);
    expect(env.runs.map((r) => r.info.retryCount)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(await context.call("get")).toBe(T0 + 1_000);
    expect(context.alarms.next()).toEqual({ scheduledTime: T0 + 1_000, runAtMs: T0 + 255_000, retryCount: 6 });
    await advanceStepwise(context, clock, 100_000);
    expect(env.runs.map((r) => r.info.retryCount)).toEqual([0, 1, 2, 3, 4, 5, 6, 6]);
    expect(await context.call("get")).toBeNull();
    expect(context.alarms.next()).toBeNull();
  });

  test("alarm: a stored alarm on a class without alarm() runs nothing and is not retried", async () => {
    class Plain {
      constructor(readonly ctx: ObjectState) {}
      get(): Promise<number | null> {
        return this.ctx.storage.getAlarm();
      }
    }
    const persistence = createMemoryPersistence();
    const clock = new FakeClock(T0);
    const bare = await ObjectStorage.open({ persistence, clock });
    await bare.setAlarm(T0 + 1_000);
    await bare.close();
    const context = await ObjectContext.create(Plain, { clock, storage: { persistence } });
    await clock.advance(1_000_000);
    await context.alarms.idle();
    expect(context.alarms.history.length).toBeLessThanOrEqual(1);
    expect(context.alarms.next()).toBeNull();
  });
});

describe("testing surface", () => {
  test("runDue: false when nothing is due; force runs a future alarm now", async () => {
    const { context, clock, env } = await scheduled({ alarms: false });
    expect(await context.alarms.runDue()).toBe(false);
    await context.call("set", T0 + 60_000);
    expect(context.alarms.next()).toEqual({ scheduledTime: T0 + 60_000, runAtMs: T0 + 60_000, retryCount: 0 });
    expect(await context.alarms.runDue()).toBe(false);
    expect(await context.alarms.runDue({ force: true })).toBe(true);
    expect(env.runs.map((r) => [r.info.scheduledTime, r.atMs])).toEqual([[T0 + 60_000, T0]]);
    expect(context.alarms.next()).toBeNull();
    expect(clock.now()).toBe(T0);
  });

  test("runDue: with alarms disabled nothing fires on its own; runDue runs the due alarm and its retries", async () => {
    const { context, clock, env } = await scheduled({ alarms: false, behaviour: { failures: 1 } });
    await context.call("set", T0 + 1_000);
    await clock.advance(5_000);
    expect(env.runs).toEqual([]);
    expect(clock.pendingTimers).toBe(0);
    expect(await context.alarms.runDue()).toBe(true);
    expect(context.alarms.next()).toEqual({ scheduledTime: T0 + 1_000, runAtMs: T0 + 7_000, retryCount: 1 });
    expect(await context.alarms.runDue()).toBe(false);
    await clock.advance(2_000);
    expect(await context.alarms.runDue()).toBe(true);
    expect(env.runs.map((r) => r.info.retryCount)).toEqual([0, 1]);
    expect(await context.call("get")).toBeNull();
  });

  test("setEnabled: re-enabling arms the timer of the planned alarm", async () => {
    const { context, clock, env } = await scheduled({ alarms: false });
    await context.call("set", T0 + 1_000);
    context.alarms.setEnabled(true);
    expect(clock.nextTimerAt()).toBe(T0 + 1_000);
    await advanceStepwise(context, clock, 1_000);
    expect(env.runs).toHaveLength(1);
  });

  test("FakeClock: nextTimerAt shows the alarm; advance fires it without sleeping", async () => {
    const { context, clock, env } = await scheduled();
    await context.call("set", T0 + 86_400_000);
    expect(clock.nextTimerAt()).toBe(T0 + 86_400_000);
    await clock.advance(86_400_000);
    await context.alarms.idle();
    expect(env.runs).toHaveLength(1);
  });

  test("FakeClock.advance: one call runs the alarm and each retry at its own time", async () => {
    const { context, clock, env } = await scheduled({ behaviour: { failures: 100 }, random: () => 0 });
    await context.call("set", T0 + 1_000);
    await clock.advance(1_000_000);
    await context.alarms.idle();
    expect(env.runs.map((r) => r.atMs - T0 - 1_000)).toEqual([0, 2_000, 6_000, 14_000, 30_000, 62_000, 126_000]);
    expect(await context.call("get")).toBeNull();
  });

  test("history: records each attempt with its info, outcome and time", async () => {
    const { context, clock } = await scheduled({ behaviour: { failures: 1 } });
    await context.call("set", T0 + 1_000);
    await advanceStepwise(context, clock, 10_000);
    expect(context.alarms.history).toEqual([
      { info: { retryCount: 0, isRetry: false, scheduledTime: T0 + 1_000 }, ok: false, atMs: T0 + 1_000 },
      { info: { retryCount: 1, isRetry: true, scheduledTime: T0 + 1_000 }, ok: true, atMs: T0 + 3_000 },
    ]);
  });

  test("close: stops the scheduler; nothing fires afterwards", async () => {
    const { context, clock, env } = await scheduled();
    await context.call("set", T0 + 1_000);
    await context.close();
    const pending = track(clock.advance(10_000));
    await pending.promise;
    expect(env.runs).toEqual([]);
  });
});
