/**
 * What the differential test cannot show: a call on a function or RpcTarget an object passed runs as
 * an event on that object (behind its input gate, inside its storage), it fails with the reset's
 * error once the object was reset, and it never starts an evicted object again; a cluster still
 * refuses to pass references.
 */
import type { Rpc } from "@cloudflare/workers-types";
import { afterEach, describe, expect, expectTypeOf, test } from "vitest";
import { DurableObject } from "../../src/context/durable-object";
import { RpcTarget } from "../../src/context/rpc-target";
import type { ObjectNamespace, RemoteStub } from "../../src/host/namespace";
import { RpcTarget as EntryRpcTarget } from "../../src/index";
import { createTestHost, type TestHost } from "../../src/testkit";

class Tally extends RpcTarget {
  constructor(private readonly owner: Room) {
    super();
  }
  async add(by: number): Promise<number> {
    return this.owner.add(by);
  }
  get name(): string {
    return "tally";
  }
}

class Room extends DurableObject {
  static constructed = 0;
  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    Room.constructed++;
  }
  async add(by: number): Promise<number> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + by;
    await this.ctx.storage.put("n", n);
    return n;
  }
  tally(): Tally {
    return new Tally(this);
  }
  counter(): (by: number) => Promise<number> {
    return (by) => this.add(by);
  }
  /** Calls the caller's `visit` with a function of its own (counting in this instance). */
  async visit(visit: (bump: () => number) => Promise<void>): Promise<void> {
    await visit(() => ++this.bumps);
  }
  bumps = 0;
  /** Holds the input gate until `release` resolves. */
  hold(release: () => Promise<void>): Promise<void> {
    return this.ctx.blockConcurrencyWhile(() => release());
  }
  abortMe(): void {
    this.ctx.abort("went away");
  }
  async total(): Promise<number> {
    return (await this.ctx.storage.get<number>("n")) ?? 0;
  }
}

type DurableObjectState = ConstructorParameters<typeof DurableObject>[0];

/** Keeps a function another object passes it, and calls it later. */
class Keeper extends DurableObject {
  kept: (() => Promise<number>) | undefined;
  keep(f: () => Promise<number>): void {
    this.kept = (f as unknown as { dup(): () => Promise<number> }).dup();
  }
  async fire(): Promise<number> {
    return (this.kept as () => Promise<number>)();
  }
  ping(): void {}
}

/** Passes its own function (counting in its storage) to a Keeper. */
class Giver extends DurableObject<{ KEEPER: ObjectNamespace<Keeper> }> {
  /** When the function it passed runs (pushed as the function starts). */
  static calls: string[] = [];
  async give(): Promise<void> {
    await this.env.KEEPER.getByName("k").keep(() => {
      Giver.calls.push("called");
      return this.add(1);
    });
  }
  async add(by: number): Promise<number> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + by;
    await this.ctx.storage.put("n", n);
    return n;
  }
  hold(release: () => Promise<void>): Promise<void> {
    return this.ctx.blockConcurrencyWhile(() => release());
  }
}

/** Calls back what it is given. */
class Caller extends DurableObject {
  async callBack(f: () => Promise<number>): Promise<number> {
    return f();
  }
}

/**
 * Passes functions of its own from its constructor, from its alarm handler and from inside
 * blockConcurrencyWhile (each counting in this instance).
 */
class Passer extends DurableObject<{ KEEPER: ObjectNamespace<Keeper>; CALLER: ObjectNamespace<Caller> }> {
  count = 0;
  /** What the constructor's blockConcurrencyWhile got back from Caller, calling its own function. */
  fromConstructor: number | undefined;
  constructor(ctx: DurableObjectState, env: { KEEPER: ObjectNamespace<Keeper>; CALLER: ObjectNamespace<Caller> }) {
    super(ctx, env);
    const name = (ctx.id as { name?: string }).name;
    if (name === "keeps") void env.KEEPER.getByName("k").keep(async () => ++this.count);
    if (name === "calls back") {
      void ctx.blockConcurrencyWhile(async () => {
        this.fromConstructor = await env.CALLER.getByName("c").callBack(async () => ++this.count);
      });
    }
  }
  async ping(): Promise<number | undefined> {
    return this.fromConstructor;
  }
  async armAlarm(at: number): Promise<void> {
    await this.ctx.storage.setAlarm(at);
  }
  override async alarm(): Promise<void> {
    await this.env.KEEPER.getByName("k").keep(async () => ++this.count);
  }
  /** Inside blockConcurrencyWhile, has Caller call back a function passed from inside it. */
  callBackInSection(): Promise<number> {
    return this.ctx.blockConcurrencyWhile(() => this.env.CALLER.getByName("c").callBack(async () => ++this.count));
  }
  /** Inside blockConcurrencyWhile, passes a function to the keeper, then holds until `release` resolves. */
  keepInSection(release: () => Promise<void>): Promise<void> {
    return this.ctx.blockConcurrencyWhile(async () => {
      await this.env.KEEPER.getByName("k").keep(async () => ++this.count);
      await release();
    });
  }
}

/** Starts the passer called `name` from a method of its own (in its own event). */
class Starter extends DurableObject<{ PASSER: ObjectNamespace<Passer> }> {
  async start(name: string): Promise<void> {
    await this.env.PASSER.getByName(name).ping();
  }
  ping(): void {}
}

/** Resolves with `promise`'s outcome, or "pending" if it has not settled within `turns` macrotasks. */
async function within<T>(promise: Promise<T>, turns: number): Promise<T | "pending"> {
  let outcome: { value: T } | { error: unknown } | undefined;
  promise.then(
    (value) => {
      outcome = { value };
    },
    (error: unknown) => {
      outcome = { error };
    },
  );
  for (let i = 0; i < turns && outcome === undefined; i++) await new Promise((resolve) => setImmediate(resolve));
  if (outcome === undefined) return "pending";
  if ("error" in outcome) throw outcome.error;
  return outcome.value;
}

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});
function testHost(): TestHost<{ ROOM: typeof Room }> {
  const t = createTestHost({ ROOM: Room });
  open.push(t);
  return t;
}

describe("references an object passed", () => {
  test("a target's method runs inside the object: its writes are the object's", async () => {
    const { env } = testHost();
    const room = env.ROOM.getByName("a");
    const tally = await room.tally();
    expect(await tally.add(2)).toBe(2);
    expect(await tally.add(3)).toBe(5);
    expect(await (await room.counter())(4)).toBe(9);
    expect(await room.total()).toBe(9);
  });

  test("a call on a target waits for the object's input gate, as any event does", async () => {
    const { env } = testHost();
    const room = env.ROOM.getByName("gate");
    const tally = await room.tally();
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holding = room.hold(() => released);
    const order: string[] = [];
    const adding = tally.add(1).then((n) => order.push(`add ${n}`));
    // Let everything that could run without the gate run.
    for (let i = 0; i < 20; i++) await Promise.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    order.push("released");
    release();
    await holding;
    await adding;
    expect(order).toEqual(["released", "add 1"]);
  });

  test("after the object is reset, a call on what it passed fails with the reset's error", async () => {
    const { env } = testHost();
    const room = env.ROOM.getByName("reset");
    const tally = await room.tally();
    expect(await tally.add(1)).toBe(1);
    await expect(room.abortMe()).rejects.toThrow("went away");
    await expect(tally.add(1)).rejects.toThrowError(
      Object.assign(new Error("went away"), { durableObjectReset: true }),
    );
    // The fresh instance has the confirmed state.
    expect(await env.ROOM.getByName("reset").total()).toBe(1);
  });

  test("after the object is evicted, a call on what it passed fails and does not start it again", async () => {
    const t = testHost();
    const room = t.env.ROOM.getByName("evicted");
    const tally = await room.tally();
    const counter = await room.counter();
    expect(await tally.add(1)).toBe(1);
    await t.advance(10_000);
    expect(t.host.stats().live).toBe(0);
    const before = Room.constructed;
    for (const call of [() => tally.add(1), () => counter(1)]) {
      const error = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: "ERR_CLOSED" });
      expect((error as Error).message).toContain("call the object again for a new stub");
    }
    expect(Room.constructed).toBe(before);
    expect(t.host.stats().live).toBe(0);
    // The object itself is fine.
    expect(await room.add(1)).toBe(2);
  });

  test("what the object passes in a call on a callback fails after an eviction, and starts no new instance", async () => {
    const t = testHost();
    const room = t.env.ROOM.getByName("callback-evicted");
    let kept: (() => Promise<number>) & { dup(): () => Promise<number> } = Object.assign(async () => 0, {
      dup: () => async () => 0,
    });
    await room.visit(async (bump) => {
      const stub = bump as unknown as typeof kept;
      expect(await stub()).toBe(1);
      kept = stub.dup() as typeof kept;
    });
    expect(await kept()).toBe(2);
    await t.advance(10_000);
    expect(t.host.stats().live).toBe(0);
    const before = Room.constructed;
    const error = await kept().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "ERR_CLOSED" });
    // Not run (as the evicted instance's closure) inside a new instance started for it.
    expect(Room.constructed).toBe(before);
    expect(t.host.stats().live).toBe(0);
  });

  test("JSON.stringify of a result holding stubs leaves them out, with no unhandled rejection", async () => {
    const { env } = testHost();
    const room = env.ROOM.getByName("json");
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", listener);
    try {
      // JSON.stringify calls each stub's toJSON, a call that fails on the object (it has none).
      expect(JSON.stringify({ n: 1, counter: await room.counter(), tally: await room.tally() })).toBe('{"n":1}');
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      // Asked for, the call's failure is the caller's to see.
      const tally = (await room.tally()) as unknown as { toJSON(): Promise<unknown> };
      await expect(tally.toJSON()).rejects.toThrow('The RPC receiver does not implement the method "toJSON".');
    } finally {
      process.off("unhandledRejection", listener);
    }
  });

  test("calls on a target are events: they keep the object from being evicted while they run", async () => {
    const t = testHost();
    const room = t.env.ROOM.getByName("busy");
    const tally = await room.tally();
    for (let i = 0; i < 5; i++) {
      await t.advance(9_000);
      expect(await tally.add(1)).toBe(i + 1);
    }
    expect(t.host.stats().evictions).toBe(0);
  });
});

describe("references an object passes to another object", () => {
  function twoObjects(): TestHost<{ GIVER: typeof Giver; KEEPER: typeof Keeper }> {
    const t = createTestHost({ GIVER: Giver, KEEPER: Keeper });
    open.push(t);
    return t;
  }

  test("a call on it is an event on the object that passed it: it waits for that object's input gate", async () => {
    const { env } = twoObjects();
    const giver = env.GIVER.getByName("g");
    await giver.give();
    expect(await env.KEEPER.getByName("k").fire()).toBe(1);
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holding = giver.hold(() => released);
    const order = Giver.calls;
    order.length = 0;
    const firing = env.KEEPER.getByName("k")
      .fire()
      .then((n) => order.push(`fired ${n}`));
    for (let i = 0; i < 20; i++) await Promise.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    order.push("released");
    release();
    await holding;
    await firing;
    expect(order).toEqual(["released", "called", "fired 2"]);
  });

  test("after the object that passed it is evicted, a call on it fails and does not start it again", async () => {
    const t = twoObjects();
    await t.env.GIVER.getByName("g").give();
    await t.advance(5_000);
    await t.env.KEEPER.getByName("k").ping();
    await t.advance(6_000);
    // The giver is evicted; the keeper (and what it kept) lives.
    expect(t.host.objects().map((o) => o.namespace)).toEqual(["KEEPER"]);
    const error = await t.env.KEEPER.getByName("k")
      .fire()
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toMatchObject({ code: "ERR_CLOSED" });
    expect((error as Error).message).toContain("call the object again for a new stub");
    expect(t.host.objects().map((o) => o.namespace)).toEqual(["KEEPER"]);
  });
});

describe("references an object passes from its constructor, its alarm handler, a critical section", () => {
  function objects(): TestHost<{
    PASSER: typeof Passer;
    KEEPER: typeof Keeper;
    CALLER: typeof Caller;
    STARTER: typeof Starter;
  }> {
    const t = createTestHost({ PASSER: Passer, KEEPER: Keeper, CALLER: Caller, STARTER: Starter });
    open.push(t);
    return t;
  }

  /** Fires what the keeper kept once the passer was evicted (the keeper and the starter stay). */
  async function fireAfterPasserEvicted(t: ReturnType<typeof objects>): Promise<unknown> {
    await t.advance(5_000);
    await t.env.KEEPER.getByName("k").ping();
    await t.env.STARTER.getByName("s").ping();
    await t.advance(6_000);
    expect(t.host.objects().map((o) => o.namespace)).not.toContain("PASSER");
    const starts = t.host.stats().starts;
    const error = await t.env.KEEPER.getByName("k")
      .fire()
      .then(
        () => null,
        (e: unknown) => e,
      );
    // Never run as the evicted instance's closure (nor in another object's event), nor a new start.
    expect(t.host.stats().starts).toBe(starts);
    return error;
  }

  test("what the constructor passes is the instance's: after an eviction a call on it fails", async () => {
    const t = objects();
    // Started from another object's method: what the constructor passes is still the passer's own.
    await t.env.STARTER.getByName("s").start("keeps");
    expect(await t.env.KEEPER.getByName("k").fire()).toBe(1);
    const error = await fireAfterPasserEvicted(t);
    expect(error).toMatchObject({ code: "ERR_CLOSED" });
  });

  test("what the alarm handler passes is the instance's: after an eviction a call on it fails", async () => {
    const t = objects();
    const passer = t.env.PASSER.getByName("alarm");
    await passer.armAlarm(t.clock.now() + 1_000);
    await t.advance(1_000);
    expect(await t.env.KEEPER.getByName("k").fire()).toBe(1);
    const error = await fireAfterPasserEvicted(t);
    expect(error).toMatchObject({ code: "ERR_CLOSED" });
  });

  test("called back from inside the blockConcurrencyWhile it was passed from, it runs inside it (no deadlock)", async () => {
    const t = objects();
    // As on workerd: the callback is an event on the passer, run inside the section it was passed from.
    expect(await within(t.env.PASSER.getByName("p").callBackInSection(), 200)).toBe(1);
    expect(await within(t.env.PASSER.getByName("p").callBackInSection(), 200)).toBe(2);
  });

  test("passed from inside the constructor's blockConcurrencyWhile, it runs inside it (no deadlock)", async () => {
    const t = objects();
    await t.env.STARTER.getByName("s").ping();
    expect(await within(t.env.STARTER.getByName("s").start("calls back"), 200)).toBeUndefined();
    expect(await t.env.PASSER.getByName("calls back").ping()).toBe(1);
  });

  test("passed from inside a section that still holds the gate, a call from outside runs inside it", async () => {
    const t = objects();
    await t.env.KEEPER.getByName("k").ping();
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let kept!: () => void;
    const keptNow = new Promise<void>((resolve) => {
      kept = resolve;
    });
    const holding = t.env.PASSER.getByName("p").keepInSection(async () => {
      kept();
      await released;
    });
    await keptNow;
    // The section holds the passer's gate until released; the call needs no gate (as on workerd).
    expect(await within(t.env.KEEPER.getByName("k").fire(), 200)).toBe(1);
    release();
    await holding;
    // Once the section ended, a call waits for the gate as any event does.
    expect(await t.env.KEEPER.getByName("k").fire()).toBe(2);
  });
});

describe("types", () => {
  test("results are typed as the caller receives them: stubs for targets and functions, pipelined", async () => {
    const { env } = testHost();
    const room = env.ROOM.getByName("types");
    expectTypeOf(room.tally).returns.toExtend<Promise<RemoteStub<Tally>>>();
    const tally = await room.tally();
    expectTypeOf(tally.add).returns.toExtend<Promise<number>>();
    // A getter of a target is read by awaiting it.
    expectTypeOf(tally.name).toExtend<Promise<string>>();
    expect(await tally.name).toBe("tally");
    // Pipelined: a member of the result before it arrives.
    expectTypeOf(room.tally().add).returns.toExtend<Promise<number>>();
    expect(await room.tally().add(2)).toBe(2);
    const counter = await room.counter();
    expectTypeOf(counter).returns.toExtend<Promise<number>>();
    expect(await counter(1)).toBe(3);
    expectTypeOf(tally.dup).returns.toEqualTypeOf<RemoteStub<Tally>>();
    // Data results stay as they were.
    expectTypeOf(room.total).returns.toEqualTypeOf<Promise<number>>();
  });

  test("the main entry exports RpcTarget, and a target is the platform's RpcTarget type", () => {
    expect(EntryRpcTarget).toBe(RpcTarget);
    expectTypeOf<Tally>().toExtend<Rpc.RpcTargetBranded>();
  });
});
