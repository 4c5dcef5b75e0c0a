/**
 * Differential tests of the calls on `ctx` itself (`blockConcurrencyWhile`, `waitUntil`, `abort`)
 * with arguments the platform's bindings convert or refuse: what the object's code sees, what the
 * caller receives, and whether the instance survived. One class, the same source text, in real
 * workerd (Miniflare) and in an ObjectContext.
 */
import { randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ABORT_MESSAGE, ObjectContext } from "../../src/context/object-context";
import {
  classFromSource,
  type ObjectSide,
  type Outcome,
  objectWorker,
  ourSide,
  startMiniflare,
  workerdSide,
} from "./same-source";
import { DEFAULT_COMPATIBILITY_DATE } from "./workerd";

/** `/count` counts in memory, so it tells the same instance from a fresh one (after a reset). */
const CONTEXT_CALLS_SOURCE = `
class ContextCalls {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.count = 0;
  }

  async fetch(request) {
    // Whether the call threw at once, or what its result settled to.
    const outcome = async (f) => {
      let result;
      try {
        result = f();
      } catch (e) {
        return { threw: e.name + ": " + e.message };
      }
      if (!(result instanceof Promise)) return { returned: String(result) };
      try {
        return { resolved: String(await result) };
      } catch (e) {
        return { rejected: e.name + ": " + e.message };
      }
    };
    const ctx = this.ctx;
    switch (new URL(request.url).pathname) {
      case "/count":
        this.count++;
        return Response.json(this.count);
      case "/block-arguments":
        return Response.json({
          number: await outcome(() => ctx.blockConcurrencyWhile(5)),
          none: await outcome(() => ctx.blockConcurrencyWhile()),
          object: await outcome(() => ctx.blockConcurrencyWhile({ then() {} })),
          syncValue: await outcome(() => ctx.blockConcurrencyWhile(() => 7)),
        });
      case "/wait-until-arguments":
        return Response.json({
          none: await outcome(() => ctx.waitUntil()),
          undefined: await outcome(() => ctx.waitUntil(undefined)),
          number: await outcome(() => ctx.waitUntil(5)),
          rejected: await outcome(() => ctx.waitUntil(Promise.reject(new Error("ignored")))),
        });
      // When a critical section's callback starts, relative to the caller's own microtasks.
      case "/section-start": {
        const log = [];
        const ticks = async (n) => {
          for (let i = 0; i < n; i++) {
            await null;
            log.push("tick " + i);
          }
        };
        const block = ctx.blockConcurrencyWhile(async () => {
          log.push("callback");
        });
        await ticks(20);
        await block;
        const txn = ctx.storage.transaction(async () => {
          log.push("closure");
        });
        await ticks(20);
        await txn;
        // A section started from inside another one and not awaited there.
        await ctx.blockConcurrencyWhile(async () => {
          log.push("outer");
          ctx.blockConcurrencyWhile(async () => {
            log.push("inner");
          });
          log.push("outer returns");
        });
        log.push("caller resumed");
        await ctx.blockConcurrencyWhile(async () => {});
        return Response.json(log);
      }
      case "/abort-symbol":
        return Response.json(await outcome(() => ctx.abort(Symbol("reason"))));
      case "/abort-null":
        ctx.abort(null);
        return Response.json("not reached");
      case "/abort-undefined":
        ctx.abort(undefined);
        return Response.json("not reached");
      case "/abort-number":
        ctx.abort(42);
        return Response.json("not reached");
      default:
        return new Response("no such path", { status: 404 });
    }
  }
}
`;

let mf: Miniflare;

beforeAll(async () => {
  mf = await startMiniflare([
    objectWorker("context-calls", CONTEXT_CALLS_SOURCE, "ContextCalls", DEFAULT_COMPATIBILITY_DATE),
  ]);
});

afterAll(async () => {
  await mf?.dispose();
});

/** Runs `scenario` on a fresh object of each side. */
async function observe<T>(scenario: (side: ObjectSide) => Promise<T>): Promise<{ workerd: T; ours: T }> {
  const context = await ObjectContext.create(classFromSource(CONTEXT_CALLS_SOURCE, "ContextCalls"), {
    id: randomUUID(),
  });
  try {
    const workerd = await scenario(await workerdSide(mf, "context-calls", randomUUID()));
    return { workerd, ours: await scenario(ourSide(context)) };
  } finally {
    await context.close();
  }
}

const ok = (body: unknown): Outcome => ({ ok: true, status: 200, body });
const failed = (error: string): Outcome => ({ ok: false, name: "Error", error });
const NOT_A_FUNCTION =
  "TypeError: Failed to execute 'blockConcurrencyWhile' on 'DurableObjectState': parameter 1 is not of type 'function'.";

describe("context calls differential: when critical sections start", () => {
  it("blockConcurrencyWhile and transaction() start their callback after the caller's pending microtasks", async () => {
    const seen = await observe(async (side) => [await side.request("/section-start")]);
    const ticks = Array.from({ length: 20 }, (_, i) => `tick ${i}`);
    expect(seen.workerd).toEqual([
      ok([...ticks, "callback", ...ticks, "closure", "outer", "outer returns", "caller resumed", "inner"]),
    ]);
    expect(seen.ours).toEqual(seen.workerd);
  });
});

describe("context calls differential: argument conversion on ctx", () => {
  it("blockConcurrencyWhile: a callback that is not a function is a rejected TypeError; the object is not reset", async () => {
    const seen = await observe(async (side) => [
      await side.request("/count"),
      await side.request("/block-arguments"),
      await side.request("/count"),
    ]);
    expect(seen.workerd).toEqual([
      ok(1),
      ok({
        number: { rejected: NOT_A_FUNCTION },
        none: { rejected: NOT_A_FUNCTION },
        object: { rejected: NOT_A_FUNCTION },
        syncValue: { resolved: "7" },
      }),
      ok(2),
    ]);
    expect(seen.ours).toEqual(seen.workerd);
  });

  it("waitUntil: with no argument it throws the platform's TypeError; any given value is taken", async () => {
    const seen = await observe(async (side) => [
      await side.request("/wait-until-arguments"),
      await side.request("/count"),
    ]);
    expect(seen.workerd).toEqual([
      ok({
        none: {
          threw:
            "TypeError: Failed to execute 'waitUntil' on 'DurableObjectState': parameter 1 is not of type 'Promise'.",
        },
        undefined: { returned: "undefined" },
        number: { returned: "undefined" },
        rejected: { returned: "undefined" },
      }),
      ok(1),
    ]);
    expect(seen.ours).toEqual(seen.workerd);
  });

  it("abort: the reason is converted to a string (null is 'null'); undefined is the default; a Symbol throws and resets nothing", async () => {
    const seen = await observe(async (side) => [
      await side.request("/count"),
      await side.request("/abort-symbol"),
      await side.request("/count"),
      await side.request("/abort-null"),
      await side.request("/abort-undefined"),
      await side.request("/abort-number"),
      await side.request("/count"),
    ]);
    expect(seen.workerd).toEqual([
      ok(1),
      ok({ threw: "TypeError: Cannot convert a Symbol value to a string" }),
      ok(2),
      failed("null"),
      failed(ABORT_MESSAGE),
      failed("42"),
      ok(1),
    ]);
    expect(seen.ours).toEqual(seen.workerd);
  });
});
