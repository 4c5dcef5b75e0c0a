/**
 * A class written for the platform compiles unchanged against actorstore: `ctx` typed as the
 * platform's `DurableObjectState`, `extends DurableObject`, `super(ctx, env)`. (A type test: `tsc`
 * in `npm test` is what fails if this stops compiling; the run checks the members behave.)
 */
import type {
  DurableObjectNamespace,
  DurableObjectState,
  DurableObjectStorage,
  DurableObjectTransaction,
  Rpc,
} from "@cloudflare/workers-types";
import { describe, expect, expectTypeOf, it } from "vitest";
import { DurableObject } from "../../src/context/durable-object";
import { ObjectContext } from "../../src/context/object-context";
import type { ObjectState } from "../../src/context/object-state";
import { ActorStoreError } from "../../src/errors";
import type { RpcMethods } from "../../src/host/namespace";
import type { MethodName } from "../../src/testkit/test-object";
import { createTestObject } from "../../src/testkit/test-object";

interface Env {
  GREETING: string;
}

/** Written exactly as for the platform, except for where DurableObject is imported from. */
class PlatformCounter extends DurableObject<Env> {
  readonly #state: DurableObjectState;
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#state = ctx;
  }
  override async fetch(): Promise<Response> {
    const storage: DurableObjectStorage = this.#state.storage;
    const n = ((await storage.get<number>("n")) ?? 0) + 1;
    await storage.transaction(async (txn: DurableObjectTransaction) => txn.put("n", n));
    return new Response(`${this.env.GREETING} ${n}`);
  }
}

/** A class that does not extend anything, typed with the platform's state. */
class PlainPlatformClass {
  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
  ) {}
  async hello(): Promise<string> {
    await this.ctx.blockConcurrencyWhile(async () => this.ctx.storage.put("hello", this.env.GREETING));
    return String(await this.ctx.storage.get("hello"));
  }
  sockets(): number {
    return this.ctx.getWebSockets().length;
  }
}

describe("platform types", () => {
  it("ObjectState is assignable to DurableObjectState", () => {
    expectTypeOf<ObjectState>().toExtend<DurableObjectState>();
  });

  it("a class extending DurableObject is a Durable Object class to the platform's types", async () => {
    // The platform's Env typing: a namespace of the class (its type parameter wants the brand).
    interface PlatformEnv {
      COUNTER: DurableObjectNamespace<PlatformCounter>;
    }
    expectTypeOf<PlatformCounter>().toExtend<Rpc.DurableObjectBranded>();
    expectTypeOf<PlatformEnv["COUNTER"]>().toExtend<DurableObjectNamespace<PlatformCounter>>();
    // The brand is a declaration only: never a method of a stub or of the test kit, never at run time.
    expectTypeOf<"__DURABLE_OBJECT_BRAND">().not.toExtend<MethodName<PlatformCounter>>();
    expectTypeOf<"__DURABLE_OBJECT_BRAND">().not.toExtend<keyof RpcMethods<PlatformCounter>>();
    const context = await ObjectContext.create(PlatformCounter, { env: { GREETING: "hi" } });
    const instance = await context.instance();
    expect("__DURABLE_OBJECT_BRAND" in instance).toBe(false);
    expect(Object.getOwnPropertyNames(DurableObject.prototype)).toEqual(["constructor"]);
    await context.close();
  });

  it("a class extending DurableObject with a DurableObjectState constructor runs", async () => {
    const context = await ObjectContext.create(PlatformCounter, { env: { GREETING: "hi" } });
    expect(await (await context.fetch(new Request("http://do/"))).text()).toBe("hi 1");
    expect(await (await context.fetch(new Request("http://do/"))).text()).toBe("hi 2");
    await context.close();
  });

  it("a plain class typed with DurableObjectState runs in the test kit", async () => {
    const object = await createTestObject(PlainPlatformClass, { env: { GREETING: "hey" } });
    expect(await object.call("hello")).toBe("hey");
    expect(await object.call("sockets")).toBe(0);
    await object.close();
  });

  it("platform members actorstore does not offer exist and say so when used", async () => {
    let state: ObjectState | undefined;
    class Probe {
      constructor(ctx: ObjectState) {
        state = ctx;
      }
    }
    const context = await ObjectContext.create(Probe);
    await context.instance();
    const ctx = state as ObjectState;
    expect(ctx.container).toBeUndefined();
    expect(ctx.getWebSockets()).toEqual([]);
    expect(ctx.getWebSocketAutoResponse()).toBeNull();
    expect(ctx.getHibernatableWebSocketEventTimeout()).toBeNull();
    const unsupported: Array<[string, () => unknown]> = [
      ["ctx.exports", () => ctx.exports],
      ["ctx.facets", () => ctx.facets],
      ["ctx.acceptWebSocket()", () => ctx.acceptWebSocket({})],
      ["ctx.setWebSocketAutoResponse()", () => ctx.setWebSocketAutoResponse()],
      ["ctx.getWebSocketAutoResponseTimestamp()", () => ctx.getWebSocketAutoResponseTimestamp({})],
      ["ctx.setHibernatableWebSocketEventTimeout()", () => ctx.setHibernatableWebSocketEventTimeout(1000)],
      ["ctx.getTags()", () => ctx.getTags({})],
    ];
    for (const [name, use] of unsupported) {
      let error: unknown;
      try {
        use();
      } catch (e) {
        error = e;
      }
      expect(error, name).toBeInstanceOf(ActorStoreError);
      expect((error as ActorStoreError).code).toBe("ERR_NOT_IMPLEMENTED");
      expect((error as Error).message).toContain(`${name}`);
      expect((error as Error).message).toContain("is not supported by actorstore");
    }
    await context.close();
  });
});
