import { describe, expect, test } from "vitest";
import { ALARM_HISTORY_LIMIT, type AlarmInvocationInfo, AlarmScheduler } from "../../src/alarms/alarm-scheduler";
import type { ObjectState } from "../../src/context/object-state";
import { createTestObject } from "../../src/testkit";
import { FakeClock } from "../../src/util/clock";

/** An alarm that sets itself again one second later, forever. */
class Ticker {
  constructor(private readonly ctx: ObjectState) {}
  async start(at: number): Promise<void> {
    await this.ctx.storage.setAlarm(at);
  }
  async alarm(info: AlarmInvocationInfo): Promise<void> {
    const n = ((await this.ctx.storage.get<number>("ticks")) ?? 0) + 1;
    await this.ctx.storage.put("ticks", n);
    await this.ctx.storage.setAlarm(info.scheduledTime + 1_000);
  }
}

describe("alarm scheduler history", () => {
  test("keeps only the latest attempts: a recurring alarm does not grow it without limit", async () => {
    const clock = new FakeClock();
    let now = clock.now();
    const scheduler = new AlarmScheduler({
      clock,
      random: () => 0,
      historyLimit: 5,
      deliver: async () => {},
      storage: async () => ({
        currentAlarm: () => now,
        committedAlarm: () => now,
        clearAlarm: async () => {},
      }),
    });
    for (let i = 0; i < 40; i++) {
      now = clock.now() + 10;
      scheduler.onAlarmCommitted(now);
      await clock.advance(10);
      await scheduler.idle();
    }
    expect(scheduler.history.length).toBe(5);
    // The latest five, oldest first.
    expect(scheduler.history.map((h) => h.atMs)).toEqual([35, 36, 37, 38, 39].map((i) => clock.now() - (39 - i) * 10));
    expect(ALARM_HISTORY_LIMIT).toBe(100);
    expect(() => new AlarmScheduler({ clock, random: () => 0, deliver: async () => {}, historyLimit: -1 })).toThrow(
      TypeError,
    );
  });

  test("an object's default history is bounded at ALARM_HISTORY_LIMIT", async () => {
    const ticker = await createTestObject(Ticker);
    await ticker.call("start", ticker.clock.now() + 1_000);
    // 250 attempts: each alarm sets the next one second later.
    for (let i = 0; i < 250; i++) await ticker.advance(1_000);
    expect(await ticker.get("ticks")).toBeGreaterThanOrEqual(250);
    expect(ticker.alarmHistory.length).toBe(ALARM_HISTORY_LIMIT);
    await ticker.close();
  });
});
