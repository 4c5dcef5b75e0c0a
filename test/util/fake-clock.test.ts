/**
 * FakeClock and the test kit's advance(): a time that is not one (NaN, Infinity, beyond a Date's
 * range) or a negative step is refused before any timer fires. NaN used to fire every pending timer,
 * however far ahead, and leave "now" NaN; Infinity fired them all and left "now" Infinity.
 */
import { describe, expect, it } from "vitest";
import { DurableObject } from "../../src/context/durable-object";
import { createTestHost } from "../../src/testkit/test-host";
import { createTestObject } from "../../src/testkit/test-object";
import { FakeClock } from "../../src/util/clock";

const START = Date.UTC(2026, 0, 1);
const NOT_TIMES = [
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  8.64e15 + 1,
  "5" as unknown as number,
];

describe("FakeClock refuses a time that is not one", () => {
  it("advance(): NaN, ±Infinity, a negative step and a step past a Date's range fire nothing and leave now", async () => {
    for (const ms of [...NOT_TIMES, -1, 8.64e15]) {
      const clock = new FakeClock(START);
      let fired = 0;
      clock.setTimer(() => fired++, 1_000);
      await expect(clock.advance(ms), String(ms)).rejects.toThrow(RangeError);
      await expect(clock.advance(ms)).rejects.toThrow(/^FakeClock\.advance\(ms\): /);
      expect(fired, String(ms)).toBe(0);
      expect(clock.now(), String(ms)).toBe(START);
      expect(clock.pendingTimers).toBe(1);
    }
  });

  it("advanceTo(), set() and the constructor: a time a Date cannot hold is a RangeError", async () => {
    for (const t of NOT_TIMES) {
      const clock = new FakeClock(START);
      let fired = 0;
      clock.setTimer(() => fired++, 1_000);
      await expect(clock.advanceTo(t), String(t)).rejects.toThrow(RangeError);
      expect(() => clock.set(t), String(t)).toThrow(RangeError);
      expect(() => new FakeClock(t), String(t)).toThrow(RangeError);
      expect(fired).toBe(0);
      expect(clock.now()).toBe(START);
    }
  });

  it("what stays allowed: a zero step, an earlier advanceTo (no-op), set() backwards, a Date's extremes", async () => {
    const clock = new FakeClock(START);
    let fired = 0;
    clock.setTimer(() => fired++, 1_000);
    await clock.advance(0);
    await clock.advanceTo(START - 5_000);
    expect(clock.now()).toBe(START);
    await clock.advance(1_000);
    expect(fired).toBe(1);
    clock.set(0);
    expect(clock.now()).toBe(0);
    expect(new FakeClock(-8.64e15).now()).toBe(-8.64e15);
    const edge = new FakeClock(8.64e15 - 10);
    await edge.advance(10);
    expect(new Date(edge.now()).toISOString()).toBe("+275760-09-13T00:00:00.000Z");
  });
});

class Reminder extends DurableObject {
  async remind(atMs: number): Promise<void> {
    await this.ctx.storage.setAlarm(atMs);
  }
  override async alarm(): Promise<void> {
    await this.ctx.storage.put("fired", true);
  }
}

describe("the test kit's advance() refuses the same", () => {
  it("TestObject.advance(NaN) does not run an alarm an hour ahead; advanceTo(NaN) neither", async () => {
    const reminder = await createTestObject(Reminder);
    await reminder.call("remind", reminder.clock.now() + 3_600_000);
    await expect(reminder.advance(Number.NaN)).rejects.toThrow(/^advance\(ms\): ms must be a finite number/);
    await expect(reminder.advance(-1)).rejects.toThrow(RangeError);
    await expect(reminder.advanceTo(Number.NaN)).rejects.toThrow(/^advanceTo\(targetMs\): /);
    await expect(reminder.advance(Number.POSITIVE_INFINITY)).rejects.toThrow(RangeError);
    expect(reminder.alarmHistory).toEqual([]);
    expect(await reminder.get("fired")).toBeUndefined();
    expect(reminder.clock.now()).toBe(START);
    await reminder.advance(3_600_000);
    expect(await reminder.get("fired")).toBe(true);
    await reminder.close();
  });

  it("TestHost.advance(NaN) does not evict or wake anything", async () => {
    const host = createTestHost({ REMINDER: Reminder });
    const stub = host.env.REMINDER.getByName("a");
    await stub.remind(host.clock.now() + 3_600_000);
    await expect(host.advance(Number.NaN)).rejects.toThrow(/^advance\(ms\): /);
    expect(host.clock.now()).toBe(START);
    expect(host.stats()).toMatchObject({ evictions: 0, alarmWakes: 0, live: 1 });
    expect(host.objects().map((o) => o.state)).toEqual(["active"]);
    await host.close();
  });
});
