/**
 * The `ctx` surface a platform class sees (id, storage, props, waitUntil, fetch through the output
 * gate) and the host-facing `fetch(request)`.
 */
import fc from "fast-check";
import { afterEach, describe, expect, test, vi } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import { ObjectId } from "../../src/context/object-id";
import type { ObjectState } from "../../src/context/object-state";
import { ManualPersistence, track, triggerPromise, turns } from "./helpers";

class Counter {
  constructor(
    readonly ctx: ObjectState,
    readonly env: { greeting: string },
  ) {}
  async fetch(request: Request): Promise<Response> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    return new Response(`${this.env.greeting} ${new URL(request.url).pathname} ${n}`);
  }
  async notify(url: string): Promise<number> {
    await this.ctx.storage.put("notified", url);
    const res = await this.ctx.fetch(url);
    return res.status;
  }
  later(p: Promise<unknown>): string {
    this.ctx.waitUntil(p);
    return "returned";
  }
  describe(): { id: string; name: string | undefined; props: unknown } {
    return { id: this.ctx.id.toString(), name: this.ctx.id.name, props: this.ctx.props };
  }
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("ObjectState and the host API", () => {
  test("fetch: a platform-style class with fetch(request) runs unchanged", async () => {
    const context = await ObjectContext.create(Counter, { env: { greeting: "hello" } });
    const first = await context.fetch(new Request("http://do/a"));
    const second = await context.fetch(new Request("http://do/b"));
    expect(await first.text()).toBe("hello /a 1");
    expect(await second.text()).toBe("hello /b 2");
  });

  test("fetch: a class without fetch() rejects with a TypeError", async () => {
    class NoFetch {}
    const context = await ObjectContext.create(NoFetch);
    await expect(context.fetch(new Request("http://do/"))).rejects.toThrow(TypeError);
  });

  test("ctx.fetch: a subrequest leaves only after the earlier write is confirmed", async () => {
    const persistence = new ManualPersistence();
    const calls: string[] = [];
    vi.stubGlobal("fetch", async (input: RequestInfo | URL) => {
      calls.push(String(input));
      return new Response(null, { status: 204 });
    });
    const context = await ObjectContext.create(Counter, { env: { greeting: "" }, storage: { persistence } });
    persistence.hold();
    const result = track(context.call<number>("notify", "https://hook.example/x"));
    await turns(20);
    expect(calls).toEqual([]);
    await persistence.confirmNext();
    expect(await result.promise).toBe(204);
    expect(calls).toEqual(["https://hook.example/x"]);
  });

  test("waitUntil: the result does not wait for it; waitUntilSettled does", async () => {
    const context = await ObjectContext.create(Counter, { env: { greeting: "" } });
    const background = triggerPromise<string>();
    expect(await context.call("later", background.promise)).toBe("returned");
    const settled = track(context.waitUntilSettled());
    await turns(10);
    expect(settled.settled).toBe(false);
    background.resolve("done");
    await settled.promise;
  });

  test("waitUntil: a rejected promise is tracked without an unhandled rejection", async () => {
    const context = await ObjectContext.create(Counter, { env: { greeting: "" } });
    const background = triggerPromise<string>();
    await context.call("later", background.promise);
    background.reject(new Error("background failed"));
    await context.waitUntilSettled();
  });

  test("id: a named id is stable, 64 hex digits, and carries its name; props are passed through", async () => {
    const a = await ObjectContext.create(Counter, { env: { greeting: "" }, id: "room-1", props: { tier: "gold" } });
    const b = await ObjectContext.create(Counter, { env: { greeting: "" }, id: "room-1" });
    const seen = await a.call<{ id: string; name: string | undefined; props: unknown }>("describe");
    expect(seen.id).toMatch(/^[0-9a-f]{64}$/);
    expect(seen.name).toBe("room-1");
    expect(seen.props).toEqual({ tier: "gold" });
    expect(a.id.equals(b.id)).toBe(true);
    expect(ObjectId.fromString(seen.id).equals(a.id)).toBe(true);
    expect(ObjectId.unique().equals(ObjectId.unique())).toBe(false);
  });

  test("ObjectId.fromName: always 64 lowercase hex digits, deterministic, parseable by fromString", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), (name) => {
        const id = ObjectId.fromName(name);
        expect(id.toString()).toMatch(/^[0-9a-f]{64}$/);
        expect(ObjectId.fromName(name).toString()).toBe(id.toString());
        expect(ObjectId.fromString(id.toString()).equals(id)).toBe(true);
      }),
      { seed: 0x1d, numRuns: 300 },
    );
  });

  test("close: further events are refused with an error naming the fix", async () => {
    const context = await ObjectContext.create(Counter, { env: { greeting: "" } });
    await context.close();
    await expect(context.call("describe")).rejects.toThrow(/closed; create a new one/);
  });
});
