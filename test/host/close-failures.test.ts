/**
 * An object whose close fails (its persistence adapter's close() rejects, or the final commit of
 * unconfirmed writes cannot be made durable) must not take the host down. An idle eviction's
 * failed close used to surface as an unhandled rejection (which ends a Node process by default),
 * a call that waited for that eviction failed with the close's error instead of starting the
 * object again, and host.close() stopped at the first failure.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DurableObject } from "../../src/context/durable-object";
import type { ObjectId } from "../../src/context/object-id";
import { createMemoryPersistence, type MemoryPersistence } from "../../src/durability/memory-persistence";
import { ObjectHost } from "../../src/host/object-host";
import { FakeClock } from "../../src/util/clock";
import { type Deferred, deferred } from "../../src/util/deferred";

class Counter extends DurableObject {
  async increment(): Promise<number> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    return n;
  }
}

/** Per-object memory adapters whose close() does what `closeWith` says for the next close. */
function failingCloses() {
  const adapters = new Map<string, MemoryPersistence>();
  const closes: string[] = [];
  let next: ((name: string) => Promise<void>) | undefined;
  const factory = (id: ObjectId): MemoryPersistence => {
    const name = id.name ?? id.toString();
    let adapter = adapters.get(name);
    if (adapter === undefined) {
      const created = createMemoryPersistence();
      const close = created.close.bind(created);
      created.close = async () => {
        closes.push(name);
        const behaviour = next;
        next = undefined;
        await close();
        if (behaviour) await behaviour(name);
      };
      adapter = created;
      adapters.set(name, adapter);
    }
    return adapter;
  };
  return {
    factory,
    closes,
    closeWith(behaviour: (name: string) => Promise<void>) {
      next = behaviour;
    },
  };
}

const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => {
  unhandled.push(e);
};
beforeEach(() => {
  unhandled.length = 0;
  process.on("unhandledRejection", onUnhandled);
});
afterEach(() => {
  process.off("unhandledRejection", onUnhandled);
});

async function turns(n = 6): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

describe("an object whose close fails", () => {
  it("an idle eviction: no unhandled rejection, counted in stats().closeErrors, the object starts again", async () => {
    const clock = new FakeClock();
    const adapters = failingCloses();
    const host = new ObjectHost({ namespaces: { COUNTER: Counter }, clock, persistence: adapters.factory });
    const stub = host.env.COUNTER.getByName("a");
    expect(await stub.increment()).toBe(1);
    adapters.closeWith(async () => {
      throw new Error("the adapter could not close");
    });
    await clock.advance(host.idleTimeoutMs);
    await host.settled();
    await turns();
    expect(unhandled).toEqual([]);
    expect(host.stats()).toMatchObject({ live: 0, evictions: 1, closeErrors: 1 });
    expect(host.objects()).toEqual([]);
    expect(await stub.increment()).toBe(2);
    await host.close();
    expect(unhandled).toEqual([]);
  });

  it("a call that waited for the failing close starts the object again instead of failing with its error", async () => {
    const clock = new FakeClock();
    const adapters = failingCloses();
    const host = new ObjectHost({ namespaces: { COUNTER: Counter }, clock, persistence: adapters.factory });
    const stub = host.env.COUNTER.getByName("a");
    expect(await stub.increment()).toBe(1);
    const closing: Deferred<void> = deferred();
    adapters.closeWith(() => closing.promise);
    const eviction = host.evictIdle();
    await turns();
    expect(adapters.closes).toEqual(["a"]);
    const call = stub.increment();
    closing.reject(new Error("the adapter could not close"));
    expect(await eviction).toBe(1);
    expect(await call).toBe(2);
    expect(host.stats()).toMatchObject({ closeErrors: 1, starts: 2 });
    await host.close();
    expect(unhandled).toEqual([]);
  });

  it("host.close(): every object is closed, then it rejects with the failure", async () => {
    const clock = new FakeClock();
    const adapters = failingCloses();
    const host = new ObjectHost({ namespaces: { COUNTER: Counter }, clock, persistence: adapters.factory });
    for (const name of ["a", "b", "c"]) expect(await host.env.COUNTER.getByName(name).increment()).toBe(1);
    adapters.closeWith(async (name) => {
      throw new Error(`${name} could not close`);
    });
    await expect(host.close()).rejects.toThrow(/^[abc] could not close$/);
    expect([...adapters.closes].sort()).toEqual(["a", "b", "c"]);
    expect(host.stats()).toMatchObject({ live: 0, closeErrors: 1 });
    await expect(host.close()).resolves.toBeUndefined();
    expect(unhandled).toEqual([]);
  });
});
