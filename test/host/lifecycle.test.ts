import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test, vi } from "vitest";
import { DurableObject } from "../../src/context/durable-object";
import type { ObjectId } from "../../src/context/object-id";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import type { PersistenceAdapter } from "../../src/durability/persistence";
import { ObjectHost } from "../../src/host/object-host";
import { directoryPerObject, memoryPerObject } from "../../src/host/options";
import { createTestHost, type TestHost } from "../../src/testkit/test-host";
import { FakeClock } from "../../src/util/clock";

interface Env {
  COUNTER: import("../../src/host/namespace").ObjectNamespace<Counter>;
}

class Counter extends DurableObject<Env> {
  static constructed = 0;
  constructor(ctx: DurableObject["ctx"], env: Env) {
    super(ctx, env);
    Counter.constructed++;
  }
  async increment(by: number): Promise<number> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + by;
    await this.ctx.storage.put("n", n);
    return n;
  }
  abortMe(reason: string): void {
    this.ctx.abort(reason);
  }
  async slow(gate: string): Promise<string> {
    await this.ctx.storage.put("slow", gate);
    await new Promise((r) => setTimeout(r, 20));
    return "slow done";
  }
  async setAlarmIn(ms: number): Promise<void> {
    await this.ctx.storage.setAlarm(Date.UTC(2026, 0, 1) + ms);
  }
  async alarmAt(ms: number): Promise<void> {
    await this.ctx.storage.setAlarm(ms);
  }
  override async alarm(): Promise<void> {
    const fired = ((await this.ctx.storage.get<number>("alarms")) ?? 0) + 1;
    await this.ctx.storage.put("alarms", fired);
  }
  async alarms(): Promise<number> {
    return (await this.ctx.storage.get<number>("alarms")) ?? 0;
  }
  /** Background work that lasts until the test calls {@link Counter.finishBackground}. */
  background(): void {
    this.ctx.waitUntil(
      new Promise<void>((r) => {
        Counter.finishBackground = r;
      }),
    );
  }
  static finishBackground: () => void = () => {};
  /** Calls another object through env, as platform code does. */
  async forward(name: string, by: number): Promise<number> {
    return this.env.COUNTER.getByName(name).increment(by);
  }
}

class FailingAlarm extends DurableObject {
  async arm(at: number): Promise<void> {
    await this.ctx.storage.setAlarm(at);
  }
  override async alarm(): Promise<void> {
    const n = ((await this.ctx.storage.get<number>("tries")) ?? 0) + 1;
    await this.ctx.storage.put("tries", n);
    throw new Error("alarm fails");
  }
  async tries(): Promise<number> {
    return (await this.ctx.storage.get<number>("tries")) ?? 0;
  }
}

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});
function testHost(idleTimeoutMs?: number): TestHost<{ COUNTER: typeof Counter; FAILING: typeof FailingAlarm }> {
  const t = createTestHost(
    { COUNTER: Counter, FAILING: FailingAlarm },
    idleTimeoutMs === undefined ? {} : { idleTimeoutMs },
  );
  open.push(t);
  return t;
}

describe("resets and stubs", () => {
  test("a stub whose object was reset fails its in-flight and later calls; a new stub reaches the fresh instance", async () => {
    const { env } = testHost();
    const id = env.COUNTER.idFromName("a");
    const s = env.COUNTER.get(id);
    const unused = env.COUNTER.get(id);
    expect(await s.increment(2)).toBe(2);
    // As on the platform, the callers' errors say that the object was reset (and not `remote`).
    const reset = Object.assign(new Error("custom reason"), { durableObjectReset: true });
    await expect(s.abortMe("custom reason")).rejects.toThrowError(reset);
    await expect(s.increment(1)).rejects.toThrowError(reset);
    await expect(s.fetch("http://x/")).rejects.toThrowError(reset);
    // A stub made before the reset but never used binds to the fresh instance.
    expect(await unused.increment(1)).toBe(3);
    expect(await env.COUNTER.get(id).increment(1)).toBe(4);
  });

  test("calls in flight on other stubs fail with the reset too", async () => {
    const { env } = testHost();
    const a = env.COUNTER.getByName("b");
    const b = env.COUNTER.getByName("b");
    expect(await a.increment(1)).toBe(1);
    const [slow, aborting] = await Promise.allSettled([a.slow("x"), b.abortMe("went away")]);
    const reset = Object.assign(new Error("went away"), { durableObjectReset: true });
    expect(slow).toEqual({ status: "rejected", reason: reset });
    expect(aborting).toEqual({ status: "rejected", reason: reset });
    await expect(a.increment(1)).rejects.toThrowError(reset);
    const fresh = env.COUNTER.getByName("b");
    // The slow call's write was never confirmed to anyone, and the object continues from confirmed state.
    expect(await fresh.increment(1)).toBe(2);
  });
});

describe("eviction", () => {
  test("an idle object is evicted after the idle time (10 s by default); its next call starts it again over its data", async () => {
    const t = testHost();
    const { env, host } = t;
    const stub = env.COUNTER.getByName("a");
    expect(await stub.increment(5)).toBe(5);
    expect(host.stats().live).toBe(1);
    await t.advance(9_999);
    expect(host.stats().live).toBe(1);
    await t.advance(1);
    expect(host.stats()).toMatchObject({ live: 0, sleeping: 0, evictions: 1, starts: 1 });
    expect(host.objects()).toEqual([]);
    const before = Counter.constructed;
    // The same stub still works after an eviction (an eviction is not a reset).
    expect(await stub.increment(1)).toBe(6);
    expect(Counter.constructed).toBe(before + 1);
    expect(host.stats()).toMatchObject({ live: 1, starts: 2 });
  });

  test("every event restarts the idle time; idleTimeoutMs is configurable; Infinity never evicts", async () => {
    const t = testHost(1_000);
    const stub = t.env.COUNTER.getByName("a");
    for (let i = 0; i < 5; i++) {
      await stub.increment(1);
      await t.advance(900);
    }
    expect(t.host.stats().evictions).toBe(0);
    await t.advance(100);
    expect(t.host.stats().evictions).toBe(1);

    const never = testHost(Number.POSITIVE_INFINITY);
    await never.env.COUNTER.getByName("x").increment(1);
    await never.advance(3_600_000);
    expect(never.host.stats()).toMatchObject({ live: 1, evictions: 0 });
  });

  test("waitUntil work keeps the object until it settles", async () => {
    const t = testHost(1_000);
    const stub = t.env.COUNTER.getByName("a");
    await stub.background();
    await t.clock.advance(1_000);
    // The eviction waits for the waitUntil promise before it closes anything.
    expect(t.host.stats().live).toBe(1);
    await t.host.settled();
    expect(t.host.stats()).toMatchObject({ live: 1, evictions: 0 });
    Counter.finishBackground();
    // The eviction goes on once the work is done (a few turns later, which settled() does not track).
    await vi.waitFor(() => expect(t.host.stats()).toMatchObject({ live: 0, evictions: 1 }), { timeout: 10_000 });
  });

  test("a call that arrives before an eviction closes anything keeps the object; one that arrives while it closes waits and starts it again", async () => {
    const memory = memoryPerObject();
    let slowClose = false;
    const host = new ObjectHost({
      namespaces: { COUNTER: Counter },
      clock: new FakeClock(),
      persistence: async (id, ns) => {
        const inner = await memory(id, ns);
        return new Proxy(inner, {
          get(target, prop, receiver) {
            if (prop === "close" && slowClose) {
              return async () => {
                await new Promise((r) => setTimeout(r, 30));
                await target.close();
              };
            }
            const value = Reflect.get(target, prop, receiver);
            return typeof value === "function" ? value.bind(target) : value;
          },
        });
      },
    });
    open.push(host);
    const stub = host.env.COUNTER.getByName("a");
    await stub.increment(1);
    const kept = host.evictIdle();
    expect(await stub.increment(1)).toBe(2);
    expect(await kept).toBe(0);
    expect(host.stats()).toMatchObject({ live: 1, evictions: 0 });

    slowClose = true;
    const eviction = host.evictIdle();
    while (host.objects()[0]?.state !== "stopping") await new Promise((r) => setImmediate(r));
    const call = stub.increment(1);
    expect(await eviction).toBe(1);
    expect(await call).toBe(3);
    expect(host.stats()).toMatchObject({ live: 1, evictions: 1, starts: 2 });
  });

  test("an evicted object's alarm still fires: the host wakes it, then evicts it again", async () => {
    const t = testHost();
    const { env, host } = t;
    const stub = env.COUNTER.getByName("a");
    const start = t.clock.now();
    await stub.alarmAt(start + 60_000);
    await t.advance(10_000);
    expect(host.stats()).toMatchObject({ live: 0, sleeping: 1, evictions: 1 });
    expect(host.objects()).toEqual([
      expect.objectContaining({ namespace: "COUNTER", name: "a", state: "sleeping", alarmAtMs: start + 60_000 }),
    ]);
    await t.advance(50_000);
    expect(host.stats()).toMatchObject({ alarmWakes: 1 });
    await t.advance(10_000);
    expect(host.stats()).toMatchObject({ live: 0, sleeping: 0, evictions: 2 });
    expect(await stub.alarms()).toBe(1);
  });

  test("an alarm being retried keeps its object until the retries end (no backoff restart)", async () => {
    const t = testHost(1_000);
    const stub = t.env.FAILING.getByName("f");
    await stub.arm(t.clock.now() + 5_000);
    await t.advance(1_000);
    expect(t.host.stats()).toMatchObject({ live: 0, sleeping: 1 });
    await t.advance(600_000);
    // One attempt and six retries, as on the platform, then the alarm is abandoned.
    expect(await stub.tries()).toBe(7);
    await t.advance(2_000);
    expect(t.host.stats()).toMatchObject({ live: 0, sleeping: 0 });
  });

  test("objects reach each other through env; the host reports what it holds", async () => {
    const t = testHost();
    const a = t.env.COUNTER.getByName("a");
    expect(await a.forward("b", 3)).toBe(3);
    expect(await t.env.COUNTER.getByName("b").increment(0)).toBe(3);
    const held = t.host
      .objects()
      .map((o) => o.name)
      .sort();
    expect(held).toEqual(["a", "b"]);
    expect(t.host.objects().every((o) => o.state === "active" && o.inFlight === 0)).toBe(true);
    expect(await t.host.evictIdle()).toBe(2);
    expect(t.host.objects()).toEqual([]);
  });
});

describe("persistence per object", () => {
  test("the factory is called with (id, namespace), one adapter per object, again after each eviction", async () => {
    const calls: string[] = [];
    const adapters = new Map<string, PersistenceAdapter>();
    const host = new ObjectHost({
      namespaces: { COUNTER: Counter },
      clock: new FakeClock(),
      persistence: (id: ObjectId, namespace: string) => {
        calls.push(`${namespace}:${id.name}`);
        const key = id.toString();
        let adapter = adapters.get(key);
        if (!adapter) adapters.set(key, (adapter = createMemoryPersistence()));
        return adapter;
      },
    });
    open.push(host);
    await host.env.COUNTER.getByName("a").increment(1);
    await host.env.COUNTER.getByName("b").increment(2);
    await host.evictIdle();
    expect(await host.env.COUNTER.getByName("a").increment(1)).toBe(2);
    expect(calls).toEqual(["COUNTER:a", "COUNTER:b", "COUNTER:a"]);
    expect(adapters.size).toBe(2);
  });

  test("a failing factory fails the call, not the host; the next call tries again", async () => {
    let fail = true;
    const memory = memoryPerObject();
    const host = new ObjectHost({
      namespaces: { COUNTER: Counter },
      clock: new FakeClock(),
      persistence: (id, ns) => {
        if (fail) throw new Error("disk on fire");
        return memory(id, ns);
      },
    });
    open.push(host);
    await expect(host.env.COUNTER.getByName("a").increment(1)).rejects.toThrowError(new Error("disk on fire"));
    expect(host.stats()).toMatchObject({ live: 0, failedStarts: 1 });
    expect(host.objects()).toEqual([]);
    fail = false;
    expect(await host.env.COUNTER.getByName("a").increment(1)).toBe(1);
  });

  test("a sleeping object's alarm still fires after a call failed to start it (its persistence did not open)", async () => {
    let fail = false;
    const memory = memoryPerObject();
    const clock = new FakeClock();
    const host = new ObjectHost({
      namespaces: { COUNTER: Counter },
      clock,
      idleTimeoutMs: 1_000,
      persistence: (id, ns) => {
        if (fail) throw new Error("disk on fire");
        return memory(id, ns);
      },
    });
    open.push(host);
    const stub = host.env.COUNTER.getByName("a");
    const start = clock.now();
    await stub.alarmAt(start + 60_000);
    await clock.advance(1_000);
    await host.settled();
    expect(host.stats()).toMatchObject({ live: 0, sleeping: 1 });
    // A call meanwhile cannot start the object: it fails, and the alarm must still be planned.
    fail = true;
    await expect(stub.increment(1)).rejects.toThrowError(new Error("disk on fire"));
    fail = false;
    expect(host.stats()).toMatchObject({ live: 0, sleeping: 1 });
    expect(host.objects()).toEqual([
      expect.objectContaining({ name: "a", state: "sleeping", alarmAtMs: start + 60_000 }),
    ]);
    await clock.advance(59_000);
    await host.settled();
    expect(host.stats()).toMatchObject({ alarmWakes: 1 });
    expect(await stub.alarms()).toBe(1);
  });

  test("directoryPerObject: one directory per object; data survives evictions and a new host", async () => {
    const root = await mkdtemp(join(tmpdir(), "actorstore-host-"));
    try {
      const first = new ObjectHost({
        namespaces: { COUNTER: Counter },
        clock: new FakeClock(),
        persistence: directoryPerObject(root),
      });
      await first.env.COUNTER.getByName("a").increment(4);
      await first.env.COUNTER.getByName("b").increment(1);
      await first.evictIdle();
      expect(await first.env.COUNTER.getByName("a").increment(1)).toBe(5);
      await first.close();
      expect((await readdir(join(root, "COUNTER"))).length).toBe(2);
      const second = new ObjectHost({
        namespaces: { COUNTER: Counter },
        clock: new FakeClock(),
        persistence: directoryPerObject(root),
      });
      expect(await second.env.COUNTER.getByName("a").increment(1)).toBe(6);
      expect(await second.env.COUNTER.getByName("b").increment(1)).toBe(2);
      await second.close();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe("options", () => {
  test("an unknown or mistyped option is a TypeError naming it", () => {
    const make = (options: unknown) => () => new ObjectHost(options as ConstructorParameters<typeof ObjectHost>[0]);
    expect(make({ namespaces: { C: Counter }, idleTimeout: 5 })).toThrowError(/unknown option "idleTimeout"/);
    expect(make({ namespaces: { C: Counter }, idleTimeoutMs: "5" })).toThrowError(
      /option "idleTimeoutMs" must be a number/,
    );
    expect(make({ namespaces: { C: Counter }, idleTimeoutMs: -1 })).toThrowError(/idleTimeoutMs/);
    expect(make({ namespaces: { C: Counter }, idleTimeoutMs: Number.NaN })).toThrowError(/idleTimeoutMs/);
    expect(make({ namespaces: { C: Counter }, persistence: {} })).toThrowError(
      /option "persistence" must be a function/,
    );
    expect(make({})).toThrowError(/"namespaces" is required/);
    expect(make(null)).toThrowError(TypeError);
    expect(make({ namespaces: { C: 5 } })).toThrowError(/namespace "C" must be a class/);
    expect(make({ namespaces: { C: Counter }, env: { C: 1 } })).toThrowError(
      /namespace "C" has the name of an env binding/,
    );
    expect(() => directoryPerObject("")).toThrowError(TypeError);
  });

  test("a closed host refuses calls with ERR_CLOSED", async () => {
    const host = new ObjectHost({ namespaces: { COUNTER: Counter }, clock: new FakeClock() });
    const stub = host.env.COUNTER.getByName("a");
    await stub.increment(1);
    await host.close();
    await expect(stub.increment(1)).rejects.toMatchObject({ code: "ERR_CLOSED" });
  });
});
