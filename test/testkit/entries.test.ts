/**
 * What the test kit's entry gives a user that the main entry does not: the test-only helpers live in
 * `actorstore/testkit`, and docs/testing.md's recipes that use them run as written.
 */
import { describe, expect, it } from "vitest";
import { DurableObject } from "../../src/context/durable-object";
import * as main from "../../src/index";
import * as testkit from "../../src/testkit/index";

class Counter extends DurableObject {
  async increment(by: number): Promise<number> {
    const n = ((await this.ctx.storage.get<number>("count")) ?? 0) + by;
    await this.ctx.storage.put("count", n);
    return n;
  }
}

describe("entries", () => {
  it("FaultyPersistence (fault injection for tests) is in actorstore/testkit, not in the main entry", () => {
    expect(Object.keys(main)).not.toContain("FaultyPersistence");
    expect(typeof testkit.FaultyPersistence).toBe("function");
  });

  it("testing.md: a test host's stats() and objects() show what is live, and an idle object is evicted", async () => {
    const host = testkit.createTestHost({ COUNTER: Counter });
    const stub = host.env.COUNTER.get(host.env.COUNTER.idFromName("a"));
    expect(await stub.increment(2)).toBe(2);
    expect(host.stats()).toMatchObject({ live: 1, starts: 1, evictions: 0 });
    expect(host.objects()).toEqual([expect.objectContaining({ namespace: "COUNTER", name: "a", state: "active" })]);
    await host.advance(10_000);
    expect(host.stats()).toMatchObject({ live: 0, evictions: 1 });
    expect(host.objects()).toEqual([]);
    await host.close();
  });

  it("testing.md's write-failure recipe: the call rejects with the platform's reset message and nothing was stored", async () => {
    const faulty = new testkit.FaultyPersistence(main.createMemoryPersistence());
    const counter = await testkit.createTestObject(Counter, { persistence: faulty });
    expect(await counter.call("increment", 1)).toBe(1);
    faulty.failNextAppend();
    await expect(counter.call("increment", 1)).rejects.toThrow(
      "Internal error in Durable Object storage write caused object to be reset.",
    );
    expect(counter.resets).toBe(1);
    expect(await counter.get("count")).toBe(1);
    expect(await counter.call("increment", 1)).toBe(2);
    await counter.close();
  });
});
