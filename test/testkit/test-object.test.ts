/**
 * The test kit: the instance is built on the first event (so seeded storage is what the
 * constructor loads), and the opt-in fake Date.
 */
import { describe, expect, it } from "vitest";
import { DurableObject } from "../../src/context/durable-object";
import { ObjectContext } from "../../src/context/object-context";
import type { ObjectState } from "../../src/context/object-state";
import { createTestObject } from "../../src/testkit/test-object";

let constructed = 0;

/** The common pattern: the constructor loads state inside blockConcurrencyWhile. */
class Counter extends DurableObject {
  count = 0;
  constructor(ctx: ObjectState, env: unknown) {
    super(ctx, env);
    constructed++;
    void ctx.blockConcurrencyWhile(async () => {
      this.count = (await ctx.storage.get<number>("count")) ?? 0;
    });
  }
  override async fetch(): Promise<Response> {
    this.count++;
    await this.ctx.storage.put("count", this.count);
    return new Response(String(this.count));
  }
}

describe("the instance is built on the first event", () => {
  it("createTestObject: seed, then fetch sees the seeded state", async () => {
    constructed = 0;
    const object = await createTestObject(Counter);
    expect(constructed).toBe(0);
    await object.seed({ count: 5 });
    expect(constructed).toBe(0);
    expect(await (await object.fetch("/")).text()).toBe("6");
    expect(constructed).toBe(1);
    expect(await (await object.fetch("/")).text()).toBe("7");
    expect(constructed).toBe(1);
    await object.close();
  });

  it("ObjectContext.create: storage written before the first event is what the constructor loads", async () => {
    constructed = 0;
    const context = await ObjectContext.create(Counter);
    await (await context.storage()).put("count", 41);
    expect(constructed).toBe(0);
    expect(await (await context.fetch(new Request("http://do/"))).text()).toBe("42");
    expect(constructed).toBe(1);
    await context.close();
  });

  it("after a crash the next event builds a fresh instance over the confirmed state", async () => {
    constructed = 0;
    const object = await createTestObject(Counter);
    await object.fetch("/");
    object.crash();
    await object.seed({ count: 100 });
    expect(await (await object.fetch("/")).text()).toBe("101");
    expect(constructed).toBe(2);
    await object.close();
  });

  it("a constructor that throws fails the event and resets; the next event tries again", async () => {
    let attempts = 0;
    class Flaky {
      constructor() {
        attempts++;
        if (attempts === 1) throw new Error("first construction fails");
      }
      async fetch(): Promise<Response> {
        return new Response(`built after ${attempts} attempts`);
      }
    }
    const object = await createTestObject(Flaky);
    await expect(object.fetch("/")).rejects.toThrow("first construction fails");
    expect(await (await object.fetch("/")).text()).toBe("built after 2 attempts");
    expect(object.resets).toBe(1);
    await object.close();
  });

  it("setAlarm on storage before the first event: the class's alarm() decides", async () => {
    class WithAlarm {
      async alarm(): Promise<void> {}
    }
    const object = await createTestObject(WithAlarm);
    await (await object.storage()).setAlarm(object.clock.now() + 1000);
    await object.sync();
    expect(object.nextAlarm()?.scheduledTime).toBe(object.clock.now() + 1000);
    await object.close();
    const plain = await createTestObject(class {});
    await expect((await plain.storage()).setAlarm(plain.clock.now() + 1000)).rejects.toThrow(
      "Your Durable Object class must have an alarm() handler in order to call setAlarm()",
    );
    await plain.close();
  });
});

/** Sets its alarm a second ahead of "now", as objects written for the platform do. */
class Reminder {
  fired: number[] = [];
  constructor(private readonly ctx: ObjectState) {}
  async remind(): Promise<{ now: number; date: number; text: string }> {
    await this.ctx.storage.setAlarm(Date.now() + 1000);
    const made = new Date(); // no arguments: "now" on the clock in effect
    return { now: Date.now(), date: made.getTime(), text: Date() };
  }
  async alarm(): Promise<void> {
    // Continuations after an await still see the fake clock.
    await Promise.resolve();
    this.fired.push(Date.now());
  }
}

describe("createTestObject({ fakeDate: true })", () => {
  it("Date.now(), new Date() and Date() inside the object follow the fake clock; the alarm fires under advance()", async () => {
    const realBefore = Date.now();
    const object = await createTestObject(Reminder, { fakeDate: true });
    const start = object.clock.now();
    expect(Math.abs(start - realBefore)).toBeGreaterThan(1000); // the fake clock is elsewhere in time
    const seen = await object.call("remind");
    expect(seen.now).toBe(start);
    expect(seen.date).toBe(start);
    expect(seen.text).toBe(new Date(start).toString());
    expect(object.nextAlarm()?.scheduledTime).toBe(start + 1000);
    // The test's own code keeps the real clock.
    expect(Math.abs(Date.now() - realBefore)).toBeLessThan(60_000);
    await object.advance(1000);
    expect((await object.instance()).fired).toEqual([start + 1000]);
    expect(new Date(0).getTime()).toBe(0);
    expect(new Date() instanceof Date).toBe(true);
    await object.close();
    expect(Date.name).toBe("Date");
  });

  it("off by default: the object reads the real clock, so its alarm lies in the fake clock's future of now", async () => {
    const object = await createTestObject(Reminder);
    const seen = await object.call("remind");
    expect(Math.abs(seen.now - Date.now())).toBeLessThan(60_000);
    await object.close();
  });

  it("two test objects with fake dates each see their own clock", async () => {
    const { FakeClock } = await import("../../src/util/clock");
    const a = await createTestObject(Reminder, { fakeDate: true, clock: new FakeClock(1_000_000) });
    const b = await createTestObject(Reminder, { fakeDate: true, clock: new FakeClock(2_000_000) });
    const [ra, rb] = await Promise.all([a.call("remind"), b.call("remind")]);
    expect(ra.now).toBe(1_000_000);
    expect(rb.now).toBe(2_000_000);
    await a.close();
    const again = await b.call("remind");
    expect(again.now).toBe(2_000_000);
    await b.close();
    expect(globalThis.Date.now()).toBeGreaterThan(2_000_000_000);
  });
});
