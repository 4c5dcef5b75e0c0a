/**
 * How to test your own object class with the test kit. Copy this file next to your class; in your
 * project the import is `from "actorstore/testkit"` (here it points at the source, since a fresh
 * clone has no build).
 */
import { describe, expect, it } from "vitest";
import { type AlarmInvocationInfo, createTestObject, type ObjectState } from "../src/testkit/index";

/** The class under test, written as for the platform. */
class Counter {
  readonly #ctx: ObjectState;
  /** Alarm attempts this instance saw (in-memory state, gone after a crash). */
  readonly attempts: AlarmInvocationInfo[] = [];

  constructor(ctx: ObjectState) {
    this.#ctx = ctx;
  }

  async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== "/increment") return new Response("not found", { status: 404 });
    return Response.json({ count: await this.increment() });
  }

  async increment(by = 1): Promise<number> {
    const count = ((await this.#ctx.storage.get<number>("count")) ?? 0) + by;
    await this.#ctx.storage.put("count", count);
    return count;
  }

  /** Schedules a report in `delayMs`. */
  async scheduleReport(delayMs: number, nowMs: number): Promise<void> {
    await this.#ctx.storage.setAlarm(nowMs + delayMs);
  }

  /** Fails on its first attempt (a flaky downstream), then records a report. */
  async alarm(info: AlarmInvocationInfo): Promise<void> {
    this.attempts.push(info);
    if (!info.isRetry) throw new Error("report service unavailable");
    await this.#ctx.storage.put("reported", await this.#ctx.storage.get("count"));
  }
}

describe("Counter (example of actorstore/testkit)", () => {
  it("fetch: counts requests, and storage can be read directly", async () => {
    const counter = await createTestObject(Counter);
    await counter.fetch("/increment");
    const res = await counter.fetch("/increment");
    expect(await res.json()).toEqual({ count: 2 });
    expect(await counter.get("count")).toBe(2);
    await counter.close();
  });

  it("call: typed RPC calls; concurrent events do not lose updates (input gate)", async () => {
    const counter = await createTestObject(Counter);
    const results = await Promise.all(Array.from({ length: 10 }, () => counter.call("increment", 1)));
    expect(results.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await counter.get("count")).toBe(10);
  });

  it("seed: storage can be seeded before the object runs, and queried with SQL", async () => {
    const counter = await createTestObject(Counter);
    await counter.seed({ count: 41 });
    expect(await counter.call("increment")).toBe(42);
    const [row] = await counter.sql<{ n: number }>("SELECT 6 * 7 AS n");
    expect(row?.n).toBe(42);
  });

  it("advance: fires the alarm when its time comes, and retries a failure with backoff", async () => {
    const counter = await createTestObject(Counter);
    await counter.call("increment", 5);
    await counter.call("scheduleReport", 60_000, counter.clock.now());
    expect(counter.nextAlarm()?.scheduledTime).toBe(counter.clock.now() + 60_000);

    await counter.advance(59_999);
    expect(counter.alarmHistory).toHaveLength(0);

    await counter.advance(1); // the first attempt fails…
    expect(counter.alarmHistory.map((a) => a.ok)).toEqual([false]);
    expect(counter.nextAlarm()?.retryCount).toBe(1); // …and is retried 2 s later (jitter is 0 in the kit)

    await counter.advance(2_000);
    expect(counter.alarmHistory.map((a) => [a.info.retryCount, a.ok])).toEqual([
      [0, false],
      [1, true],
    ]);
    expect(await counter.get("reported")).toBe(5);
    expect(counter.nextAlarm()).toBeNull();
    expect(await (await counter.storage()).getAlarm()).toBeNull();
  });

  it("runDueAlarms / fireAlarm: run alarms without moving the clock", async () => {
    const counter = await createTestObject(Counter);
    await counter.call("scheduleReport", 0, counter.clock.now()); // due now
    expect(await counter.runDueAlarms()).toBe(1); // fails; its retry is 2 s away
    expect(await counter.runDueAlarms()).toBe(0);
    expect(await counter.fireAlarm()).toBe(true); // run the retry anyway
    expect((await counter.instance()).attempts.map((a) => a.retryCount)).toEqual([0, 1]);
  });

  it("crash: confirmed writes survive, the instance is rebuilt", async () => {
    const counter = await createTestObject(Counter);
    await counter.call("increment", 3); // the result was released, so the write is confirmed
    const before = await counter.instance();
    counter.crash();
    expect(await counter.get("count")).toBe(3);
    expect(await counter.instance()).not.toBe(before);
    expect(counter.resets).toBe(1);
  });

  it("crash: a write not yet committed is lost", async () => {
    const counter = await createTestObject(Counter);
    await counter.seed({ count: 1 });
    const storage = await counter.storage();
    void storage.put("count", 100); // buffered, not committed yet
    counter.crash();
    expect(await counter.get("count")).toBe(1);
  });

  it("restart: a pending alarm survives a process restart and fires once its time passes", async () => {
    const counter = await createTestObject(Counter);
    await counter.call("increment", 7);
    await counter.call("scheduleReport", 10_000, counter.clock.now());
    await counter.restart();
    expect(counter.restarts).toBe(1);
    expect(counter.nextAlarm()?.retryCount).toBe(0);
    await counter.advance(12_000); // first attempt at +10 s fails, the retry at +12 s succeeds
    expect(counter.alarmHistory.map((a) => a.ok)).toEqual([false, true]);
    expect(await counter.get("reported")).toBe(7);
  });
});
