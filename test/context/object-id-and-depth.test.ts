/**
 * ctx.id's platform members (name, jurisdiction, equals, toString, Illegal constructor) and the
 * platform's cap on nested blockConcurrencyWhile (issue 15). The same behaviours are compared with
 * workerd in test/differential/surface.differential.test.ts where the reference shows them.
 */
import { afterEach, describe, expect, test } from "vitest";
import { DurableObject } from "../../src/context/durable-object";
import { ObjectContext } from "../../src/context/object-context";
import { ObjectId } from "../../src/context/object-id";
import type { ObjectState } from "../../src/context/object-state";
import { MAX_BLOCK_CONCURRENCY_WHILE_DEPTH, NESTED_TOO_DEEPLY_MESSAGE } from "../../src/context/section-depth";
import { ObjectHost } from "../../src/host/object-host";
import { FakeClock } from "../../src/util/clock";

class Probe extends DurableObject {
  idInfo(): { name: string | undefined; jurisdiction: string | undefined; hex: string } {
    const id = this.ctx.id;
    return { name: id.name, jurisdiction: id.jurisdiction, hex: id.toString() };
  }
}

const hosts: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});

function makeHost() {
  const host = new ObjectHost({ namespaces: { PROBE: Probe }, clock: new FakeClock() });
  hosts.push(host);
  return host;
}

describe("ObjectId: the platform's DurableObjectId members", () => {
  test("name and jurisdiction are own, read-only, enumerable; unknown ones are undefined but present", () => {
    const named = ObjectId.fromName("a");
    const unique = ObjectId.unique();
    for (const id of [named, unique]) {
      expect(Object.keys(id)).toEqual(["jurisdiction", "name"]);
      expect(Object.getOwnPropertyDescriptor(id, "name")).toMatchObject({ writable: false, enumerable: true });
      expect(() => {
        (id as { name: string | undefined }).name = "other";
      }).toThrow(TypeError);
    }
    expect(named.name).toBe("a");
    expect(unique.name).toBeUndefined();
    expect(JSON.stringify(named)).toBe('{"name":"a"}');
    expect(JSON.stringify(unique)).toBe("{}");
    expect(Object.prototype.toString.call(named)).toBe("[object DurableObjectId]");
    expect(Object.keys(Object.getPrototypeOf(named))).toEqual(["toString", "equals"]);
  });

  test("equals takes only an id; new ObjectId() is an illegal constructor", () => {
    const a = ObjectId.fromName("a");
    expect(a.equals(ObjectId.fromString(a.toString()))).toBe(true);
    expect(a.equals(ObjectId.fromName("b"))).toBe(false);
    const message = "Failed to execute 'equals' on 'DurableObjectId': parameter 1 is not of type 'DurableObjectId'.";
    for (const other of [a.toString(), { toString: () => a.toString() }, undefined, null]) {
      expect(() => a.equals(other as unknown as ObjectId)).toThrowError(new TypeError(message));
    }
    const Ctor = ObjectId as unknown as new (...args: unknown[]) => ObjectId;
    expect(() => new Ctor("0".repeat(64))).toThrowError(new TypeError("Illegal constructor"));
    expect(() => new Ctor(undefined, "0".repeat(64))).toThrowError(new TypeError("Illegal constructor"));
  });

  test("a jurisdiction travels on ids made for it, and reaches ctx.id; the id string stays the same", async () => {
    const { env } = makeHost();
    const eu = env.PROBE.jurisdiction("eu");
    expect(eu.idFromName("a").jurisdiction).toBe("eu");
    expect(eu.idFromName("a").toString()).toBe(env.PROBE.idFromName("a").toString());
    expect(eu.newUniqueId().jurisdiction).toBe("eu");
    expect(env.PROBE.newUniqueId({ jurisdiction: "fedramp" }).jurisdiction).toBe("fedramp");
    expect(env.PROBE.newUniqueId().jurisdiction).toBeUndefined();
    expect(env.PROBE.idFromName("a").jurisdiction).toBeUndefined();
    const id = eu.idFromName("x");
    const seen = await env.PROBE.get(id).idInfo();
    expect(seen).toEqual({ name: "x", jurisdiction: "eu", hex: id.toString() });
  });
});

describe(`blockConcurrencyWhile nests at most ${MAX_BLOCK_CONCURRENCY_WHILE_DEPTH} deep`, () => {
  async function withState<T>(run: (ctx: ObjectState) => Promise<T>): Promise<T> {
    let state: ObjectState | undefined;
    class Holder {
      constructor(ctx: ObjectState) {
        state = ctx;
      }
    }
    const context = await ObjectContext.create(Holder, { id: "depth" });
    try {
      await context.instance();
      return await run(state as ObjectState);
    } finally {
      await context.close();
    }
  }

  /** Nests `levels` calls; each level reports what its inner call did. */
  function nest(ctx: ObjectState, levels: number, inner: () => Promise<unknown>, after = false): Promise<unknown> {
    const level = async (depth: number): Promise<unknown> => {
      if (after) await Promise.resolve();
      if (depth === levels) return inner();
      return ctx.blockConcurrencyWhile(() => level(depth + 1));
    };
    return level(0);
  }

  for (const after of [false, true]) {
    test(`depth 64 runs, depth 65 rejects with the platform's error and the object lives on (${after ? "after an await" : "synchronously"})`, async () => {
      await withState(async (ctx) => {
        await expect(nest(ctx, MAX_BLOCK_CONCURRENCY_WHILE_DEPTH, async () => "deepest", after)).resolves.toBe(
          "deepest",
        );
        const refused = await nest(
          ctx,
          MAX_BLOCK_CONCURRENCY_WHILE_DEPTH,
          () => ctx.blockConcurrencyWhile(async () => "too deep").catch((e: unknown) => e),
          after,
        );
        expect(refused).toEqual(new Error(NESTED_TOO_DEEPLY_MESSAGE));
        expect((refused as Error).constructor).toBe(Error);
        await expect(ctx.blockConcurrencyWhile(async () => "alive")).resolves.toBe("alive");
        await ctx.storage.put("k", 1);
        expect(await ctx.storage.get("k")).toBe(1);
      });
    });
  }

  test("a transaction inside the deepest blockConcurrencyWhile is one level too deep", async () => {
    await withState(async (ctx) => {
      const outcome = await nest(ctx, MAX_BLOCK_CONCURRENCY_WHILE_DEPTH, () =>
        ctx.storage.transaction(async () => "in txn").catch((e: unknown) => e),
      );
      expect(outcome).toEqual(new Error(NESTED_TOO_DEEPLY_MESSAGE));
      await expect(
        nest(ctx, MAX_BLOCK_CONCURRENCY_WHILE_DEPTH - 1, () => ctx.storage.transaction(async () => "ok")),
      ).resolves.toBe("ok");
    });
  });

  test("side-by-side calls are not nested: 200 at one level, at the top and at depth 63", async () => {
    await withState(async (ctx) => {
      const many = () => Promise.all(Array.from({ length: 200 }, (_, i) => ctx.blockConcurrencyWhile(async () => i)));
      expect((await many()).length).toBe(200);
      const inside = await nest(ctx, MAX_BLOCK_CONCURRENCY_WHILE_DEPTH - 1, many);
      expect((inside as number[]).length).toBe(200);
    });
  });
});
