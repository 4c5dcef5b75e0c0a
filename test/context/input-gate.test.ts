/**
 * The input gate (workerd-semantics §2): which events may run while another one waits, in what
 * order, and how blockConcurrencyWhile and transaction() close the gate.
 */
import { describe, expect, test } from "vitest";
import { BLOCK_CONCURRENCY_TIMEOUT_MESSAGE, ObjectContext } from "../../src/context/object-context";
import type { ObjectState } from "../../src/context/object-state";
import { type Clock, FakeClock, systemClock } from "../../src/util/clock";
import { rejectionOf, type Trigger, track, triggerPromise, turns } from "./helpers";

/** Waits `ms` on `clock` (a FakeClock only moves when the test advances it). */
function delay(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(resolve, ms));
}

/** Counts constructions, so a test can tell a fresh instance from the same one. */
let constructed = 0;

class Counter {
  readonly instanceNo: number;
  constructor(
    readonly ctx: ObjectState,
    readonly env: { clock: Clock; log: string[] },
  ) {
    this.instanceNo = ++constructed;
  }

  /** The classic read-modify-write with storage awaits only. */
  async increment(): Promise<number> {
    const v = (await this.ctx.storage.get<number>("n")) ?? 0;
    await this.ctx.storage.put("n", v + 1);
    return v + 1;
  }

  /** The same with a timer between the read and the write: other events may interleave. */
  async incrementSlowly(ms: number, clock: Clock = this.env.clock): Promise<number> {
    const v = (await this.ctx.storage.get<number>("n")) ?? 0;
    await delay(clock, ms);
    await this.ctx.storage.put("n", v + 1);
    return v + 1;
  }

  async read(): Promise<number | undefined> {
    return this.ctx.storage.get<number>("n");
  }

  async logged(label: string): Promise<string> {
    this.env.log.push(`start ${label}`);
    await this.ctx.storage.get("n");
    await this.ctx.storage.put(`seen/${label}`, true);
    this.env.log.push(`end ${label}`);
    return label;
  }

  block<T>(fn: () => Promise<T>): Promise<T> {
    return this.ctx.blockConcurrencyWhile(fn);
  }

  async blockAndSwallow(error: Error): Promise<string> {
    try {
      await this.ctx.blockConcurrencyWhile(() => Promise.reject(error));
    } catch {
      // Catching is useless: the object resets anyway (workerd-semantics §2).
    }
    return "swallowed";
  }

  /** A transaction whose closure writes, aborts the object when `abort` is true, then waits for `gate`. */
  async transactionThenWait(gate: Promise<void>, abort: boolean): Promise<string> {
    return this.ctx.storage.transaction(async (txn) => {
      await txn.put("in-transaction", true);
      if (abort) this.ctx.abort("reset inside the transaction");
      await gate;
      return "committed";
    });
  }

  async slowTransaction(gate: Trigger): Promise<number> {
    return this.ctx.storage.transaction(async (txn) => {
      const v = (await txn.get<number>("n")) ?? 0;
      await gate.promise;
      await txn.put("n", v + 1);
      return v + 1;
    });
  }
}

async function counter(log: string[] = [], clock = new FakeClock()) {
  const context = await ObjectContext.create(Counter, { env: { clock, log }, clock });
  return { context, clock, log };
}

describe("input gate", () => {
  test("deliver: ten concurrent get → put(v+1) events end at 10", async () => {
    const { context } = await counter();
    const results = await Promise.all(Array.from({ length: 10 }, () => context.call<number>("increment")));
    expect(results).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await context.call("read")).toBe(10);
  });

  test("deliver: a FakeClock timer between get and put lets events interleave (lost updates, final 1)", async () => {
    const { context, clock } = await counter();
    const calls = Array.from({ length: 10 }, () => context.call<number>("incrementSlowly", 20));
    // Every event reaches its timer before any timer fires: all of them read 0.
    for (let i = 0; i < 100 && clock.pendingTimers < 10; i++) await turns(1);
    expect(clock.pendingTimers).toBe(10);
    await clock.advance(20);
    const results = await Promise.all(calls);
    const final = await context.call<number>("read");
    expect(final).toBeLessThan(10);
    // As on the platform (probe-gates): every event read 0, so the final value is 1.
    expect(final).toBe(1);
    expect(results).toEqual(Array.from({ length: 10 }, () => 1));
  });

  test("deliver: a real timer between get and put may interleave (final < 10)", async () => {
    const { context } = await counter();
    const calls = Array.from({ length: 10 }, () => context.call<number>("incrementSlowly", 5, systemClock));
    await Promise.all(calls);
    expect(await context.call<number>("read")).toBeLessThan(10);
  });

  test("deliver: events start in arrival order and storage awaits do not let the next one in", async () => {
    const log: string[] = [];
    const { context } = await counter(log);
    const labels = Array.from({ length: 12 }, (_, i) => `e${i}`);
    const results = await Promise.all(labels.map((l) => context.call<string>("logged", l)));
    expect(results).toEqual(labels);
    expect(log).toEqual(labels.flatMap((l) => [`start ${l}`, `end ${l}`]));
  });

  test("deliver: events sent while another waits on a timer still start in arrival order", async () => {
    const log: string[] = [];
    const { context, clock } = await counter(log);
    const slow = context.call("incrementSlowly", 1000);
    const rest = ["a", "b", "c", "d"].map((l) => context.call<string>("logged", l));
    await Promise.all(rest);
    expect(log.filter((l) => l.startsWith("start"))).toEqual(["start a", "start b", "start c", "start d"]);
    await clock.advance(1000);
    await slow;
  });
});

describe("blockConcurrencyWhile", () => {
  test("blockConcurrencyWhile: no other event is delivered until the callback settles; returns its value", async () => {
    const log: string[] = [];
    const { context, clock } = await counter(log);
    const gate = triggerPromise<string>();
    const blocked = track(context.call<string>("block", () => gate.promise));
    await turns(5);
    const other = track(context.call<string>("logged", "other"));
    await turns(20);
    await clock.advance(29_000); // under the timeout: still blocked, no reset
    expect(log).toEqual([]);
    expect(other.settled).toBe(false);
    gate.resolve("value");
    expect(await blocked.promise).toBe("value");
    expect(await other.promise).toBe("other");
    expect(log).toEqual(["start other", "end other"]);
    expect(context.resets).toBe(0);
  });

  test("blockConcurrencyWhile: a throwing callback resets the object with the callback's error", async () => {
    const { context } = await counter();
    await context.call("increment");
    const before = ((await context.instance()) as Counter).instanceNo;
    const error = await rejectionOf(context.call("block", () => Promise.reject(new Error("init failed"))));
    expect(error.message).toBe("init failed");
    expect(context.resets).toBe(1);
    const after = (await context.instance()) as Counter;
    expect(after.instanceNo).not.toBe(before);
    expect(await context.call("read")).toBe(1);
  });

  test("blockConcurrencyWhile: catching the error inside the object does not prevent the reset", async () => {
    const { context } = await counter();
    const before = ((await context.instance()) as Counter).instanceNo;
    const error = await rejectionOf(context.call("blockAndSwallow", new Error("swallowed?")));
    expect(error.message).toBe("swallowed?");
    expect(context.resets).toBe(1);
    expect(((await context.instance()) as Counter).instanceNo).not.toBe(before);
  });

  test("blockConcurrencyWhile: after 30 s on the injected clock the object resets with the platform message", async () => {
    const log: string[] = [];
    const { context, clock } = await counter(log);
    await context.call("increment");
    const before = ((await context.instance()) as Counter).instanceNo;
    const never = new Promise<never>(() => {});
    const blocked = track(context.call("block", () => never));
    await turns(5);
    const queued = track(context.call<string>("logged", "queued"));
    queued.promise.catch(() => {});
    await clock.advance(29_999);
    expect(blocked.settled).toBe(false);
    expect(context.resets).toBe(0);
    await clock.advance(1);
    const error = await rejectionOf(blocked.promise);
    expect(error.message).toBe(BLOCK_CONCURRENCY_TIMEOUT_MESSAGE);
    expect(error.message).toBe(
      "A call to blockConcurrencyWhile() in a Durable Object waited for too long. The call was canceled and the Durable Object was reset.",
    );
    expect(context.resets).toBe(1);
    // The event queued behind the block fails with the reset, as on workerd (see the gates
    // differential suite); the next event runs on a fresh instance over committed state.
    expect((await rejectionOf(queued.promise)).message).toBe(BLOCK_CONCURRENCY_TIMEOUT_MESSAGE);
    expect(log).not.toContain("queued");
    expect(((await context.instance()) as Counter).instanceNo).not.toBe(before);
    expect(await context.call("read")).toBe(1);
  });

  test("blockConcurrencyWhile: a configurable timeout", async () => {
    const clock = new FakeClock();
    const context = await ObjectContext.create(Counter, {
      env: { clock, log: [] },
      clock,
      blockConcurrencyTimeoutMs: 500,
    });
    const blocked = track(context.call("block", () => new Promise<never>(() => {})));
    await clock.advance(499);
    expect(blocked.settled).toBe(false);
    await clock.advance(1);
    expect((await rejectionOf(blocked.promise)).message).toBe(BLOCK_CONCURRENCY_TIMEOUT_MESSAGE);
  });

  test("blockConcurrencyWhile: called in the constructor, the first event waits for it", async () => {
    const clock = new FakeClock();
    class Initialised {
      value: number | undefined;
      constructor(readonly ctx: ObjectState) {
        void ctx.blockConcurrencyWhile(async () => {
          const stored = (await ctx.storage.get<number>("n")) ?? 41;
          await delay(clock, 1_000);
          this.value = stored + 1;
        });
      }
      read(): number | undefined {
        return this.value;
      }
    }
    const context = await ObjectContext.create(Initialised, { clock });
    const first = track(context.call<number | undefined>("read"));
    await turns(20);
    expect(first.settled).toBe(false);
    await clock.advance(1_000);
    expect(await first.promise).toBe(42);
  });

  test("blockConcurrencyWhile: a timer inside it does not let other events interleave (final 10)", async () => {
    class Blocking {
      constructor(
        readonly ctx: ObjectState,
        readonly env: { clock: Clock },
      ) {}
      increment(): Promise<number> {
        return this.ctx.blockConcurrencyWhile(async () => {
          const v = (await this.ctx.storage.get<number>("n")) ?? 0;
          await delay(this.env.clock, 20);
          await this.ctx.storage.put("n", v + 1);
          return v + 1;
        });
      }
    }
    const clock = new FakeClock();
    const context = await ObjectContext.create(Blocking, { env: { clock }, clock });
    const calls = Array.from({ length: 10 }, () => context.call<number>("increment"));
    for (let i = 0; i < 10; i++) {
      for (let j = 0; j < 100 && clock.pendingTimers < 2; j++) await turns(1); // the bcw timeout + one delay
      await clock.advance(20);
    }
    expect(await Promise.all(calls)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});

describe("critical sections of an instance that was reset", () => {
  const never = new Promise<never>(() => {});

  test("blockConcurrencyWhile: a reset while the callback still waits lets the next event in at once, on a fresh instance", async () => {
    const { context } = await counter();
    await context.call("increment");
    const old = (await context.instance()) as Counter;
    const blocked = track(
      context.call("block", async () => {
        old.ctx.abort("reset inside the callback");
        await never;
      }),
    );
    await turns(5);
    const next = track(context.call<number>("read"));
    // No clock advance: neither waits for the 30 s limit of the dead callback's section.
    await turns(20);
    expect(blocked.settled).toBe(true);
    expect((await rejectionOf(blocked.promise)).message).toBe("reset inside the callback");
    expect(next.settled).toBe(true);
    expect(await next.promise).toBe(1);
    expect(((await context.instance()) as Counter).instanceNo).not.toBe(old.instanceNo);
    expect(context.resets).toBe(1);
  });

  test("transaction: a reset while the closure still waits lets the next event in at once; the closure's write is gone", async () => {
    const { context } = await counter();
    await context.call("increment");
    const waiting = track(context.call("transactionThenWait", never, true));
    await turns(5);
    const next = track(context.call<number>("read"));
    await turns(20);
    expect(waiting.settled).toBe(true);
    expect((await rejectionOf(waiting.promise)).message).toBe("reset inside the transaction");
    expect(next.settled).toBe(true);
    expect(await next.promise).toBe(1);
    expect(await context.call("block", async () => (await context.storage()).get("in-transaction"))).toBeUndefined();
  });

  test("a section that fails, times out or outlives its instance never settles: code after it does not run, as on workerd", async () => {
    const { context, clock } = await counter();
    const settled: string[] = [];
    const observe = (label: string, p: Promise<unknown>) =>
      void p.then(
        () => settled.push(`${label} resolved`),
        () => settled.push(`${label} rejected`),
      );
    // Fails: the callback rejects. The event fails with the callback's error all the same.
    const first = (await context.instance()) as Counter;
    const failing = context.call("block", async () => {
      observe(
        "inner",
        first.ctx.blockConcurrencyWhile(() => Promise.reject(new Error("callback failed"))),
      );
    });
    expect((await rejectionOf(failing)).message).toBe("callback failed");
    await turns(10);
    expect(context.resets).toBe(1);
    // Times out: a transaction closure that waits for ever.
    const second = (await context.instance()) as Counter;
    observe(
      "transaction",
      second.ctx.storage.transaction(() => new Promise<never>(() => {})),
    );
    await turns(5);
    await clock.advance(30_000);
    expect(context.resets).toBe(2);
    // Outlives its instance: the callback succeeds after the object was reset.
    const third = (await context.instance()) as Counter;
    const gate = triggerPromise<void>();
    observe(
      "outliving",
      third.ctx.blockConcurrencyWhile(() => gate.promise),
    );
    await turns(5);
    context.abort("reset from outside");
    gate.resolve();
    await turns(20);
    expect(settled).toEqual([]);
    expect(context.resets).toBe(3);
  });

  test("code of an instance that was reset starts no critical section: it fails with the reset, and holds nothing", async () => {
    const { context } = await counter();
    const old = (await context.instance()) as Counter;
    context.abort("reset from outside");
    const late = old.ctx.blockConcurrencyWhile(() => never);
    const lateTransaction = old.ctx.storage.transaction(() => never);
    expect((await rejectionOf(late)).message).toBe("reset from outside");
    expect((await rejectionOf(lateTransaction)).message).toBe("reset from outside");
    const next = track(context.call<number>("increment"));
    await turns(20);
    expect(next.settled).toBe(true);
    expect(await next.promise).toBe(1);
  });
});

describe("sibling critical sections", () => {
  /** Runs `sections` side by side inside one blockConcurrencyWhile; each logs its start and end around a timer. */
  class Siblings {
    constructor(
      readonly ctx: ObjectState,
      readonly env: { clock: Clock; log: string[] },
    ) {}
    run(kinds: string[]): Promise<unknown> {
      const one = (kind: string, label: string) => {
        const body = async () => {
          this.env.log.push(`${label} start`);
          await delay(this.env.clock, 10);
          this.env.log.push(`${label} end`);
        };
        return kind === "bcw" ? this.ctx.blockConcurrencyWhile(body) : this.ctx.storage.transaction(body);
      };
      return this.ctx.blockConcurrencyWhile(() => Promise.all(kinds.map((kind, i) => one(kind, `${kind}${i}`))));
    }
  }

  test("each sibling's 30 s limit counts from its own start, not from its call (as on the platform)", async () => {
    class LongSiblings {
      constructor(
        readonly ctx: ObjectState,
        readonly env: { clock: Clock },
      ) {}
      run(): Promise<unknown> {
        const body = (label: string) => async () => {
          await delay(this.env.clock, 20_000);
          return label;
        };
        return Promise.all([
          this.ctx.blockConcurrencyWhile(body("first")),
          this.ctx.blockConcurrencyWhile(body("second")),
          this.ctx.storage.transaction(body("third")),
        ]);
      }
    }
    const clock = new FakeClock();
    const context = await ObjectContext.create(LongSiblings, { env: { clock }, clock });
    const done = track(context.call("run"));
    for (let i = 0; i < 100 && !done.settled; i++) {
      await turns(5);
      await clock.advance(1_000);
    }
    expect(await done.promise).toEqual(["first", "second", "third"]);
    expect(context.resets).toBe(0);
  });

  test.each([[["bcw", "bcw", "bcw"]], [["bcw", "txn"]], [["txn", "bcw"]]])(
    "sections started side by side (%j) run one after the other, in call order, as on the platform",
    async (kinds) => {
      const clock = new FakeClock();
      const log: string[] = [];
      const context = await ObjectContext.create(Siblings, { env: { clock, log }, clock });
      const done = track(context.call("run", kinds));
      for (let i = 0; i < 200 && !done.settled; i++) {
        await turns(5);
        await clock.advance(10);
      }
      await done.promise;
      expect(log).toEqual(kinds.flatMap((kind, i) => [`${kind}${i} start`, `${kind}${i} end`]));
    },
  );
});

describe("transaction() and the input gate", () => {
  test("transaction: a closure running longer than 30 s resets the object with the platform's message; its writes roll back", async () => {
    const log: string[] = [];
    const { context, clock } = await counter(log);
    await context.call("increment");
    const before = ((await context.instance()) as Counter).instanceNo;
    const waiting = track(context.call("transactionThenWait", new Promise<void>(() => {}), false));
    await turns(5);
    const queued = track(context.call<string>("logged", "queued"));
    queued.promise.catch(() => {});
    await clock.advance(29_999);
    expect(waiting.settled).toBe(false);
    expect(context.resets).toBe(0);
    await clock.advance(1);
    // As on workerd (transaction() runs in blockConcurrencyWhile, checked through Miniflare).
    expect((await rejectionOf(waiting.promise)).message).toBe(BLOCK_CONCURRENCY_TIMEOUT_MESSAGE);
    expect(context.resets).toBe(1);
    expect((await rejectionOf(queued.promise)).message).toBe(BLOCK_CONCURRENCY_TIMEOUT_MESSAGE);
    expect(log).toEqual([]);
    expect(((await context.instance()) as Counter).instanceNo).not.toBe(before);
    expect(await context.call("read")).toBe(1);
    expect(await context.call("block", async () => (await context.storage()).get("in-transaction"))).toBeUndefined();
  });

  test("transaction: other events wait while the closure awaits", async () => {
    const log: string[] = [];
    const { context } = await counter(log);
    const gate = triggerPromise();
    const txn = context.call<number>("slowTransaction", gate);
    await turns(5);
    const inc = track(context.call<number>("increment"));
    const other = track(context.call<string>("logged", "other"));
    await turns(30);
    expect(inc.settled).toBe(false);
    expect(other.settled).toBe(false);
    expect(log).toEqual([]);
    gate.resolve();
    expect(await txn).toBe(1);
    expect(await inc.promise).toBe(2);
    expect(await other.promise).toBe("other");
    expect(await context.call("read")).toBe(2);
  });
});
