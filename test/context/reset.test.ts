/**
 * Resets (workerd-semantics §2, "Other failure modes"): a failed write, `abort()`, and what does
 * *not* reset (an uncaught exception). After a reset the next event sees the last committed state
 * with a fresh instance; nothing half-applied is ever visible.
 */
import { describe, expect, test } from "vitest";
import { ABORT_MESSAGE, ObjectContext } from "../../src/context/object-context";
import type { ObjectState } from "../../src/context/object-state";
import { FaultyPersistence } from "../../src/durability/faulty-persistence";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import { WRITE_FAILED_MESSAGE } from "../../src/storage/storage-core";
import { ManualPersistence, rejectionOf, track, triggerPromise, turns } from "./helpers";

let constructed = 0;

class Ledger {
  readonly instanceNo = ++constructed;
  /** In-memory state the instance builds up; a fresh instance starts without it. */
  readonly seen: string[] = [];
  constructor(
    readonly ctx: ObjectState,
    readonly env: { sent: string[] },
  ) {}

  /** Writes every entry in one batch (one turn, no real I/O in between). */
  async putAll(entries: Record<string, number>): Promise<string> {
    for (const [k, v] of Object.entries(entries)) void this.ctx.storage.put(k, v);
    this.seen.push(...Object.keys(entries));
    return "ok";
  }

  async putAndSend(key: string): Promise<string> {
    await this.ctx.storage.put(key, 1);
    return this.ctx.sendOutgoing(() => {
      this.env.sent.push(key);
      return "sent";
    });
  }

  async putAndAbort(key: string, reason?: string): Promise<string> {
    await this.ctx.storage.put(key, 1);
    this.ctx.abort(reason);
    return "after abort";
  }

  async putThenThrow(key: string): Promise<never> {
    await this.ctx.storage.put(key, 1);
    throw new TypeError(`boom after ${key}`);
  }

  /** Returns at once, writing nothing. */
  async ping(): Promise<string> {
    return "pong";
  }

  /** Aborts right away. */
  async abortNow(reason: string): Promise<never> {
    this.ctx.abort(reason);
    throw new Error("not reached");
  }

  /** Aborts after waiting several turns (like real I/O), when earlier answers have left. */
  async abortLater(reason: string): Promise<never> {
    await turns(5);
    this.ctx.abort(reason);
    throw new Error("not reached");
  }

  async dump(): Promise<Record<string, unknown>> {
    return Object.fromEntries(await this.ctx.storage.list());
  }

  instance(): { instanceNo: number; seen: string[] } {
    return { instanceNo: this.instanceNo, seen: [...this.seen] };
  }
}

async function ledger(persistence = new FaultyPersistence(createMemoryPersistence())) {
  const sent: string[] = [];
  const context = await ObjectContext.create(Ledger, { env: { sent }, storage: { persistence } });
  return { context, persistence, sent };
}

describe("reset on write failure", () => {
  test("write failure: the caller gets the platform's reset error and the object resets", async () => {
    const { context, persistence } = await ledger();
    await context.call("putAll", { a: 1 });
    persistence.failNextAppend();
    const error = await rejectionOf(context.call("putAll", { a: 2, b: 2 }));
    expect(error.message).toBe(WRITE_FAILED_MESSAGE);
    expect(error.message).toBe("Internal error in Durable Object storage write caused object to be reset.");
    expect(context.resets).toBe(1);
  });

  test("write failure: the next event sees the last committed state with a fresh instance (nothing half-applied)", async () => {
    const { context, persistence } = await ledger();
    await context.call("putAll", { a: 1, b: 1 });
    const before = await context.call<{ instanceNo: number; seen: string[] }>("instance");
    persistence.failNextAppend();
    await rejectionOf(context.call("putAll", { a: 2, b: 2, c: 2 }));
    const after = await context.call<{ instanceNo: number; seen: string[] }>("instance");
    expect(after.instanceNo).toBeGreaterThan(before.instanceNo);
    expect(after.seen).toEqual([]); // the constructor ran again
    expect(await context.call("dump")).toEqual({ a: 1, b: 1 });
  });

  test("write failure: the cache is dropped (a value read and overwritten before the failure is re-read)", async () => {
    const { context, persistence } = await ledger();
    await context.call("putAll", { k: 1 });
    expect(await context.call("dump")).toEqual({ k: 1 }); // now cached
    persistence.failNextAppend();
    await rejectionOf(context.call("putAll", { k: 99 }));
    const storage = await context.storage();
    expect(await storage.get("k")).toBe(1);
  });

  test("write failure: held outgoing messages are discarded and their senders get the error", async () => {
    const inner = new ManualPersistence();
    const persistence = new FaultyPersistence(inner);
    const { context, sent } = await ledger(persistence);
    inner.hold();
    const send = track(context.call("putAndSend", "order"));
    send.promise.catch(() => {});
    await turns(20);
    expect(sent).toEqual([]);
    inner.failNext();
    const error = await rejectionOf(send.promise);
    expect(error.message).toBe(WRITE_FAILED_MESSAGE);
    expect(sent).toEqual([]);
    inner.autoConfirm();
    expect(await context.call("dump")).toEqual({});
  });

  test("write failure: every event waiting on the output gate gets the error, not its result", async () => {
    const inner = new ManualPersistence();
    const { context } = await ledger(new FaultyPersistence(inner));
    inner.hold();
    const a = track(context.call("putAll", { a: 1 }));
    const b = track(context.call("putAll", { b: 1 }));
    const reader = track(context.call("dump"));
    for (const t of [a, b, reader]) t.promise.catch(() => {});
    await turns(20);
    expect([a.settled, b.settled, reader.settled]).toEqual([false, false, false]);
    inner.failNext();
    for (const t of [a, b, reader]) expect((await rejectionOf(t.promise)).message).toBe(WRITE_FAILED_MESSAGE);
    inner.autoConfirm();
    expect(await context.call("dump")).toEqual({});
    expect(context.resets).toBe(1);
  });

  test("write failure: a failure after the record was stored may keep the whole batch, never half", async () => {
    const { context, persistence } = await ledger();
    persistence.failNextAppend({ point: "after-write" });
    await rejectionOf(context.call("putAll", { x: 1, y: 2 }));
    const state = await context.call("dump");
    expect([{}, { x: 1, y: 2 }]).toContainEqual(state);
  });

  test("write failure: the object keeps working after several resets", async () => {
    const { context, persistence } = await ledger();
    for (let i = 0; i < 5; i++) {
      await context.call("putAll", { [`ok${i}`]: i });
      persistence.failNextAppend();
      await rejectionOf(context.call("putAll", { [`lost${i}`]: i }));
    }
    expect(context.resets).toBe(5);
    expect(await context.call("dump")).toEqual({ ok0: 0, ok1: 1, ok2: 2, ok3: 3, ok4: 4 });
  });
});

describe("events around a reset", () => {
  test("reset: events queued behind the failed one all run on one fresh instance", async () => {
    const { context, persistence } = await ledger();
    await context.call("putAll", { a: 1 });
    persistence.failNextAppend();
    const failed = context.call("putAll", { a: 2 });
    failed.catch(() => {});
    const queued = Array.from({ length: 5 }, () => context.call<{ instanceNo: number; seen: string[] }>("instance"));
    const seen = await Promise.allSettled(queued);
    await rejectionOf(failed);
    const instances = new Set(
      seen
        .filter((r) => r.status === "fulfilled")
        .map((r) => (r as PromiseFulfilledResult<{ instanceNo: number }>).value.instanceNo),
    );
    // Events that ran before the failure surfaced belong to the old instance; the rest share one new one.
    expect(instances.size).toBeLessThanOrEqual(2);
    const after = await context.call<{ instanceNo: number; seen: string[] }>("instance");
    expect(await context.call<{ instanceNo: number; seen: string[] }>("instance")).toEqual(after);
    expect(context.resets).toBe(1);
    expect(await context.call("dump")).toEqual({ a: 1 });
  });

  test("reset: an event of the old instance still in flight gets the reset's error, not its result", async () => {
    class Slow {
      constructor(readonly ctx: ObjectState) {}
      async slow(gate: Promise<void>): Promise<string> {
        await gate;
        await this.ctx.storage.put("late", 1);
        return "late result";
      }
      async fail(): Promise<void> {
        await this.ctx.storage.put("x", 1);
      }
      async dump(): Promise<Record<string, unknown>> {
        return Object.fromEntries(await this.ctx.storage.list());
      }
    }
    const persistence = new FaultyPersistence(createMemoryPersistence());
    const context = await ObjectContext.create(Slow, { storage: { persistence } });
    const gate = triggerPromise();
    const slow = track(context.call<string>("slow", gate.promise));
    slow.promise.catch(() => {});
    await turns(5);
    persistence.failNextAppend();
    expect((await rejectionOf(context.call("fail"))).message).toBe(WRITE_FAILED_MESSAGE);
    gate.resolve();
    expect((await rejectionOf(slow.promise)).message).toBe(WRITE_FAILED_MESSAGE);
    expect(await context.call("dump")).toEqual({});
  });
});

describe("events in flight at a reset", () => {
  class Waiting {
    constructor(readonly ctx: ObjectState) {}
    /** Waits for something that never comes (a fetch that hangs, say). */
    async hang(): Promise<string> {
      await new Promise<never>(() => {});
      return "not reached";
    }
    async abortNow(reason: string): Promise<never> {
      this.ctx.abort(reason);
      throw new Error("not reached");
    }
    async fail(): Promise<void> {
      await this.ctx.storage.put("x", 1);
    }
  }

  test("abort: an event still waiting fails at once with the reset's reason, as on workerd", async () => {
    const context = await ObjectContext.create(Waiting);
    const hanging = track(context.call("hang"));
    await turns(5);
    expect((await rejectionOf(context.call("abortNow", "reset meanwhile"))).message).toBe("reset meanwhile");
    await turns(5);
    expect(hanging.settled).toBe(true);
    expect((await rejectionOf(hanging.promise)).message).toBe("reset meanwhile");
  });

  test("a failed write: an event still waiting fails at once with the storage's reset error", async () => {
    const persistence = new FaultyPersistence(createMemoryPersistence());
    const context = await ObjectContext.create(Waiting, { storage: { persistence } });
    const hanging = track(context.call("hang"));
    await turns(5);
    persistence.failNextAppend();
    expect((await rejectionOf(context.call("fail"))).message).toBe(WRITE_FAILED_MESSAGE);
    await turns(5);
    expect(hanging.settled).toBe(true);
    expect((await rejectionOf(hanging.promise)).message).toBe(WRITE_FAILED_MESSAGE);
  });

  test("a constructor's blockConcurrencyWhile still waiting: the first event fails at once with the reset", async () => {
    class SlowStart {
      constructor(readonly ctx: ObjectState) {
        void ctx.blockConcurrencyWhile(async () => {
          await ctx.storage.get("x");
          ctx.abort("reset during start-up");
          await new Promise<never>(() => {});
        });
      }
      ping(): string {
        return "pong";
      }
    }
    const context = await ObjectContext.create(SlowStart);
    const first = track(context.call("ping"));
    await turns(20);
    expect(first.settled).toBe(true);
    expect((await rejectionOf(first.promise)).message).toBe("reset during start-up");
  });
});

describe("abort()", () => {
  test("abort: the default message, and uncommitted writes are discarded", async () => {
    const { context } = await ledger();
    await context.call("putAll", { kept: 1 });
    const error = await rejectionOf(context.call("putAndAbort", "dropped"));
    expect(error.message).toBe(ABORT_MESSAGE);
    expect(error.message).toBe("Application called abort() to reset Durable Object.");
    expect(await context.call("dump")).toEqual({ kept: 1 });
  });

  test("abort: the reason becomes the message", async () => {
    const { context } = await ledger();
    const error = await rejectionOf(context.call("putAndAbort", "x", "custom reason"));
    expect(error.message).toBe("custom reason");
  });

  test("abort: the next event starts a fresh instance over the committed state", async () => {
    const { context } = await ledger();
    await context.call("putAll", { a: 1 });
    const before = await context.call<{ instanceNo: number; seen: string[] }>("instance");
    await rejectionOf(context.call("putAndAbort", "b"));
    const after = await context.call<{ instanceNo: number; seen: string[] }>("instance");
    expect(after.instanceNo).toBeGreaterThan(before.instanceNo);
    expect(after.seen).toEqual([]);
    expect(context.resets).toBe(1);
    expect(await context.call("dump")).toEqual({ a: 1 });
  });

  test("abort: writes confirmed before the abort survive, a write still in flight does not reach its caller", async () => {
    const inner = new ManualPersistence();
    const { context } = await ledger(new FaultyPersistence(inner));
    await context.call("putAll", { a: 1 });
    inner.hold();
    const pending = track(context.call("putAll", { b: 1 }));
    pending.promise.catch(() => {});
    await turns(20);
    context.abort();
    expect((await rejectionOf(pending.promise)).message).toBe(ABORT_MESSAGE);
    // The in-flight append was already handed to the adapter: it may still land, whole.
    await inner.confirmNext();
    inner.autoConfirm();
    expect([{ a: 1 }, { a: 1, b: 1 }]).toContainEqual(await context.call("dump"));
  });

  test("abort: from the host, with a reason", async () => {
    const { context } = await ledger();
    await context.call("putAll", { a: 1 });
    context.abort("evicted");
    expect(context.resets).toBe(1);
    expect(await context.call("dump")).toEqual({ a: 1 });
  });
});

describe("uncaught exceptions", () => {
  test("deliver: an uncaught exception does not reset the object (same instance, writes kept)", async () => {
    const { context } = await ledger();
    await context.call("putAll", { a: 1 });
    const before = await context.call<{ instanceNo: number; seen: string[] }>("instance");
    const error = await rejectionOf(context.call("putThenThrow", "b"));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe("boom after b");
    const after = await context.call<{ instanceNo: number; seen: string[] }>("instance");
    expect(after.instanceNo).toBe(before.instanceNo);
    expect(after.seen).toEqual(["a"]);
    expect(context.resets).toBe(0);
    expect(await context.call("dump")).toEqual({ a: 1, b: 1 });
  });

  test("deliver: calling a missing method is an error without a reset", async () => {
    const { context } = await ledger();
    await expect(context.call("nope")).rejects.toThrow(TypeError);
    expect(context.resets).toBe(0);
  });
});

describe("answers in flight", () => {
  test("an answer not yet sent fails when the next event, delivered meanwhile, aborts", async () => {
    const { context } = await ledger();
    const answered = context.call("ping");
    const aborting = context.call("abortNow", "reset by the next event");
    const errors = await Promise.all([rejectionOf(answered), rejectionOf(aborting)]);
    expect(errors.map((e) => e.message)).toEqual(["reset by the next event", "reset by the next event"]);
    expect(context.resets).toBe(1);
  });

  test("an answer sent before the abort stays answered", async () => {
    const { context } = await ledger();
    const answered = context.call("ping");
    const aborting = rejectionOf(context.call("abortLater", "reset later"));
    expect(await answered).toBe("pong");
    expect((await aborting).message).toBe("reset later");
    expect(await context.call("ping")).toBe("pong");
  });
});
