import { describe, expect, test } from "vitest";
import { DurableObject } from "../../src/context/durable-object";
import { createTestHost } from "../../src/testkit";

class Counter extends DurableObject {
  async increment(by = 1): Promise<number> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + by;
    await this.ctx.storage.put("n", n);
    return n;
  }
  override async fetch(): Promise<Response> {
    return new Response(String(await this.increment()));
  }
}

describe("test kit namespaces", () => {
  test("a test does what a platform test does: env.COUNTER.get(env.COUNTER.idFromName(...))", async () => {
    const { env, advance, host, close } = createTestHost({ COUNTER: Counter }, { env: { GREETING: "hi" } });
    expect(env.GREETING).toBe("hi");
    const stub = env.COUNTER.get(env.COUNTER.idFromName("a"));
    expect(await stub.increment(2)).toBe(2);
    expect(await (await stub.fetch("http://do/")).text()).toBe("3");
    expect(await env.COUNTER.get(env.COUNTER.idFromName("b")).increment()).toBe(1);
    expect(host.stats().live).toBe(2);
    await advance(10_000);
    expect(host.stats()).toMatchObject({ live: 0, evictions: 2 });
    // Data survives the eviction (in-memory persistence per object is kept by the kit).
    expect(await stub.increment()).toBe(4);
    await close();
  });
});
