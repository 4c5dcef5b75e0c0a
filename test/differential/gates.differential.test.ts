/**
 * Differential tests of the object context (issue 4): one Durable Object class, the same source
 * text, run in real workerd (Miniflare, SQLite-backed) and in an ObjectContext; what clients
 * observe is compared: final counter values under concurrency, what survives `abort()`, which
 * requests fail and with which message, whether the instance survived.
 *
 * Whether a response waited for its write cannot be seen from outside workerd (its commits are
 * local and fast), so that part is measured on our side with held persistence, and on workerd the
 * response and the write's visibility to the next request are compared.
 */
import { randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ABORT_MESSAGE, ObjectContext, type ObjectContextOptions } from "../../src/context/object-context";
import { ManualPersistence, track, turns } from "../context/helpers";
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

/**
 * The object under test. Plain JavaScript on purpose: workerd evaluates this very text, and so
 * does Node (see `classFromSource`). `instanceCounter` lives in memory only, so it shows whether a
 * request found the same instance or a fresh one.
 */
const GATE_PROBE_SOURCE = `
class GateProbe {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.instanceCounter = 0;
    this.events = [];
  }

  async fetch(request) {
    const storage = this.ctx.storage;
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    // Un-awaited writes: their promises are observed by nobody, so a rejection after abort() must
    // not surface as an unhandled rejection (Node's test runner would fail on it).
    const putAndForget = (key, value) => { storage.put(key, value).catch(() => {}); };
    const increment = async (pause) => {
      const n = (await storage.get("n")) ?? 0;
      // Long enough that every request has read before the first timer fires, even on a loaded
      // machine (20 ms let a descheduled process serve some reads only after the first put).
      if (pause) await sleep(200);
      await storage.put("n", n + 1);
      return n + 1;
    };
    switch (new URL(request.url).pathname) {
      case "/increment":
        return Response.json(await increment(false));
      case "/increment-with-timer":
        return Response.json(await increment(true));
      case "/increment-blocked":
        return Response.json(await this.ctx.blockConcurrencyWhile(() => increment(true)));
      case "/read":
        return Response.json(Object.fromEntries(await storage.list()));
      case "/write":
        await storage.put("w", "written");
        return Response.json("wrote w");
      case "/abort-one-batch":
        putAndForget("a1", 1);
        await storage.put("a2", 2);
        putAndForget("a3", 3);
        this.ctx.abort();
        return Response.json("not reached");
      case "/abort-after-timer":
        putAndForget("b1", 1);
        await storage.put("b2", 2);
        await sleep(0);
        putAndForget("b3", 3);
        this.ctx.abort();
        return Response.json("not reached");
      case "/abort-after-sync":
        putAndForget("c1", 1);
        await storage.put("c2", 2);
        await storage.sync();
        putAndForget("c3", 3);
        this.ctx.abort();
        return Response.json("not reached");
      case "/abort-after-transaction":
        await storage.transaction(async (txn) => {
          await txn.put("t1", 1);
        });
        putAndForget("t2", 2);
        this.ctx.abort();
        return Response.json("not reached");
      case "/abort-with-reason":
        this.ctx.abort("Custom reason for the reset.");
        return Response.json("not reached");
      case "/count":
        this.instanceCounter++;
        return Response.json(this.instanceCounter);
      case "/throw":
        this.instanceCounter++;
        throw new Error("Uncaught in fetch.");
      case "/block-and-throw":
        this.instanceCounter++;
        await this.ctx.blockConcurrencyWhile(async () => {
          throw new Error("blockConcurrencyWhile callback failed.");
        });
        return Response.json("not reached");
      // Concurrent with a reset ("gates differential: concurrent resets").
      case "/block-sleep-throw":
        await this.ctx.blockConcurrencyWhile(async () => {
          await sleep(20);
          throw new Error("blockConcurrencyWhile callback failed.");
        });
        return Response.json("not reached");
      // Waits for something that never comes (a fetch that hangs, say).
      case "/hang":
        await new Promise(() => {});
        return Response.json("not reached");
      // A timer started inside the section resets the object while the section still waits.
      case "/block-abort-hang":
        await this.ctx.blockConcurrencyWhile(async () => {
          setTimeout(() => this.ctx.abort("Reset by a timer inside the section."), 20);
          await new Promise(() => {});
        });
        return Response.json("not reached");
      case "/transaction-abort-hang":
        await storage.transaction(async (txn) => {
          await txn.put("in-transaction", true);
          setTimeout(() => this.ctx.abort("Reset by a timer inside the section."), 20);
          await new Promise(() => {});
        });
        return Response.json("not reached");
      // The callback fails and the caller catches it: on the platform the catch never runs.
      case "/block-throw-catch":
        try {
          await this.ctx.blockConcurrencyWhile(async () => {
            throw new Error("blockConcurrencyWhile callback failed.");
          });
          GateProbe.afterFailedBlock = "resolved";
        } catch (error) {
          GateProbe.afterFailedBlock = "caught: " + error.message;
        } finally {
          GateProbe.afterFailedBlock ??= "finally ran";
        }
        return Response.json("not reached");
      case "/after-failed-block":
        return Response.json(GateProbe.afterFailedBlock ?? null);
      // When a storage promise's callbacks run, against the caller's own microtasks.
      case "/storage-ticks": {
        const log = [];
        const read = storage.get("n");
        read.then(() => log.push("get settled"));
        for (let i = 0; i < 3; i++) {
          await null;
          log.push("tick " + i);
        }
        await read;
        return Response.json(log);
      }
      // An event that awaits sync() and others queued behind it: who runs first.
      case "/events-sync":
        this.events.push("sync start");
        storage.put("s", 1).catch(() => {});
        await storage.sync();
        this.events.push("synced");
        return Response.json("synced");
      case "/events-read": {
        this.events.push("read start");
        await storage.get("s");
        await null;
        await null;
        this.events.push("read end");
        return Response.json("read");
      }
      case "/events":
        return Response.json(this.events);
      // An INSERT … RETURNING whose rows are not all read before the event ends, in a batch with
      // another write (docs/sql.md, Known differences 14).
      case "/returning-unread":
        storage.put("before-returning", 1).catch(() => {});
        storage.sql.exec("CREATE TABLE r (a)");
        storage.sql.exec("INSERT INTO r VALUES (1), (2) RETURNING a").next();
        return Response.json("returned");
      case "/returning-state":
        return Response.json({
          tables: storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'r'").toArray().length,
          kv: (await storage.get("before-returning")) ?? null,
        });
      case "/delete-all-in-transaction-sync":
        try {
          // Awaited: the platform throws at the call, here the returned promise rejects (docs/semantics.md).
          await storage.transactionSync(() => storage.deleteAll());
          return Response.json("deleted");
        } catch (error) {
          return Response.json(error.name + ": " + error.message);
        }
      case "/write-sleep":
        await storage.put("w", "written");
        await sleep(50);
        return Response.json("wrote w");
      default:
        return new Response("no such path", { status: 404 });
    }
  }
}
`;

const GateProbe = classFromSource(GATE_PROBE_SOURCE, "GateProbe");

const ok = (body: unknown): Outcome => ({ ok: true, status: 200, body });
const failed = (error: string, name = "Error"): Outcome => ({ ok: false, name, error });

let mf: Miniflare;

beforeAll(async () => {
  mf = await startMiniflare([objectWorker("gates", GATE_PROBE_SOURCE, "GateProbe", DEFAULT_COMPATIBILITY_DATE)]);
});

afterAll(async () => {
  await mf?.dispose();
});

/** A fresh object on each side (workerd: a new name; ours: a new context). */
async function bothSides(options: ObjectContextOptions<unknown> = {}) {
  const context = await ObjectContext.create(GateProbe, { id: randomUUID(), ...options });
  return { workerd: await workerdSide(mf, "gates", randomUUID()), ours: ourSide(context), context };
}

/** Runs `scenario` on a fresh object of each side and returns both observations. */
async function observe<T>(scenario: (side: ObjectSide) => Promise<T>): Promise<{ workerd: T; ours: T }> {
  const { workerd, ours, context } = await bothSides();
  try {
    return { workerd: await scenario(workerd), ours: await scenario(ours) };
  } finally {
    await context.close();
  }
}

const tenTimes = (path: string): string[] => Array.from({ length: 10 }, () => path);
const bodies = (outcomes: readonly Outcome[]): unknown[] =>
  outcomes.map((o) => (o.ok ? o.body : `${o.name}: ${o.error}`));

describe("gates differential: concurrent read-modify-write", () => {
  it("input gate: ten concurrent get → put(v+1) end at 10 on both", async () => {
    const seen = await observe(async (side) => {
      const responses = await side.concurrent(tenTimes("/increment"));
      return { responses: bodies(responses).sort((a, b) => Number(a) - Number(b)), final: await side.request("/read") };
    });
    expect(seen.workerd.final).toEqual(ok({ n: 10 }));
    expect(seen.workerd.responses).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(seen.ours).toEqual(seen.workerd);
  });

  it("input gate: a timer between get and put lets the others interleave (lost updates on both)", async () => {
    const seen = await observe(async (side) => ({
      responses: bodies(await side.concurrent(tenTimes("/increment-with-timer"))),
      final: await side.request("/read"),
    }));
    // The platform fact (workerd-semantics §2, probe-gates): every request read 0, so the end is 1.
    expect(seen.workerd.final).toEqual(ok({ n: 1 }));
    expect(seen.ours.final).not.toEqual(ok({ n: 10 }));
    // Not only "lost some": exactly what workerd loses.
    expect(seen.ours).toEqual(seen.workerd);
  });

  it("blockConcurrencyWhile: the same with a timer inside it ends at 10 on both", async () => {
    const seen = await observe(async (side) => ({
      responses: bodies(await side.concurrent(tenTimes("/increment-blocked"))),
      final: await side.request("/read"),
    }));
    expect(seen.workerd.final).toEqual(ok({ n: 10 }));
    expect(seen.ours).toEqual(seen.workerd);
  });
});

describe("gates differential: abort()", () => {
  it("abort: put a1; await put a2; put a3; abort() loses all three on both (one batch)", async () => {
    const seen = await observe(async (side) => [await side.request("/abort-one-batch"), await side.request("/read")]);
    expect(seen.workerd).toEqual([failed(ABORT_MESSAGE), ok({})]);
    expect(seen.ours).toEqual(seen.workerd);
  });

  it("abort: a timer before abort() splits the batch, so the earlier writes survive on both", async () => {
    const seen = await observe(async (side) => [await side.request("/abort-after-timer"), await side.request("/read")]);
    expect(seen.workerd).toEqual([failed(ABORT_MESSAGE), ok({ b1: 1, b2: 2 })]);
    expect(seen.ours).toEqual(seen.workerd);
  });

  it("abort: sync() before abort() commits the earlier writes on both", async () => {
    const seen = await observe(async (side) => [await side.request("/abort-after-sync"), await side.request("/read")]);
    expect(seen.workerd).toEqual([failed(ABORT_MESSAGE), ok({ c1: 1, c2: 2 })]);
    expect(seen.ours).toEqual(seen.workerd);
  });

  it("abort: transaction() commits on its own, the write after it is lost, on both", async () => {
    const seen = await observe(async (side) => [
      await side.request("/abort-after-transaction"),
      await side.request("/read"),
    ]);
    expect(seen.workerd).toEqual([failed(ABORT_MESSAGE), ok({ t1: 1 })]);
    expect(seen.ours).toEqual(seen.workerd);
  });

  it("abort: the caller sees the given reason, and the next request a fresh instance, on both", async () => {
    const seen = await observe(async (side) => [
      await side.request("/count"),
      await side.request("/abort-with-reason"),
      await side.request("/count"),
    ]);
    expect(seen.workerd).toEqual([ok(1), failed("Custom reason for the reset."), ok(1)]);
    expect(seen.ours).toEqual(seen.workerd);
  });

  it("abort: an answer not yet sent fails with a concurrent abort, even with no writes, on both", async () => {
    const reason = failed("Custom reason for the reset.");
    const seen = await observe(async (side) => [
      ...(await side.concurrent(["/count", "/abort-with-reason"])),
      ...(await side.concurrent(["/abort-with-reason", "/count"])),
      await side.request("/count"),
    ]);
    expect(seen.workerd).toEqual([reason, reason, reason, reason, ok(1)]);
    expect(seen.ours).toEqual(seen.workerd);
  });
});

describe("gates differential: failures and resets", () => {
  it("fetch: an uncaught exception fails the request but keeps the instance on both", async () => {
    const seen = await observe(async (side) => [
      await side.request("/count"),
      await side.request("/throw"),
      await side.request("/count"),
    ]);
    expect(seen.workerd).toEqual([ok(1), failed("Uncaught in fetch."), ok(3)]);
    expect(seen.ours).toEqual(seen.workerd);
  });

  it("blockConcurrencyWhile: a throwing callback fails the request and resets the instance on both", async () => {
    const seen = await observe(async (side) => [
      await side.request("/count"),
      await side.request("/block-and-throw"),
      await side.request("/count"),
    ]);
    expect(seen.workerd).toEqual([ok(1), failed("blockConcurrencyWhile callback failed."), ok(1)]);
    expect(seen.ours).toEqual(seen.workerd);
  });
});

describe("gates differential: concurrent resets", () => {
  it("a write committed before a concurrent abort survives it; the sleeping writer's answer fails", async () => {
    const seen = await observe(async (side) => [
      ...(await side.concurrent(["/write-sleep", "/abort-with-reason"])),
      await side.request("/read"),
    ]);
    const reason = failed("Custom reason for the reset.");
    expect(seen.workerd).toEqual([reason, reason, ok({ w: "written" })]);
    expect(seen.ours).toEqual(seen.workerd);
  });

  it("a request still waiting (for what never comes) fails at once with a concurrent abort", async () => {
    const seen = await observe(async (side) => [
      ...(await side.concurrent(["/hang", "/abort-with-reason"])),
      await side.request("/count"),
    ]);
    const reason = failed("Custom reason for the reset.");
    expect(seen.workerd).toEqual([reason, reason, ok(1)]);
    expect(seen.ours).toEqual(seen.workerd);
  });

  it.each(["/block-abort-hang", "/transaction-abort-hang"])(
    "%s: a reset while the section still waits fails it and lets the next request in at once, on a fresh instance",
    async (path) => {
      const seen = await observe(async (side) => [
        await side.request("/count"),
        await side.request(path),
        await side.request("/count"),
        await side.request("/read"),
      ]);
      expect(seen.workerd).toEqual([ok(1), failed("Reset by a timer inside the section."), ok(1), ok({})]);
      expect(seen.ours).toEqual(seen.workerd);
    },
  );

  it("blockConcurrencyWhile: a failed call never settles, so the caller's catch and finally do not run", async () => {
    const seen = await observe(async (side) => [
      await side.request("/block-throw-catch"),
      await side.request("/after-failed-block"),
      await side.request("/count"),
    ]);
    expect(seen.workerd).toEqual([failed("blockConcurrencyWhile callback failed."), ok(null), ok(1)]);
    expect(seen.ours).toEqual(seen.workerd);
  });

  it("a failing blockConcurrencyWhile resets the object under a request queued behind it", async () => {
    const seen = await observe(async (side) => [
      ...(await side.concurrent(["/block-sleep-throw", "/count"])),
      await side.request("/count"),
    ]);
    const blockFailed = failed("blockConcurrencyWhile callback failed.");
    expect(seen.workerd).toEqual([blockFailed, blockFailed, ok(1)]);
    expect(seen.ours).toEqual(seen.workerd);
  });
});

describe("gates differential: output gate", () => {
  it("fetch: the response arrives and the write is visible to the next request, on both", async () => {
    const seen = await observe(async (side) => [await side.request("/write"), await side.request("/read")]);
    expect(seen.workerd).toEqual([ok("wrote w"), ok({ w: "written" })]);
    expect(seen.ours).toEqual(seen.workerd);
  });

  it("fetch: our response waits until its write is durable (held persistence)", async () => {
    // workerd commits locally within a turn, so this is measured on our side only, with the same class.
    const persistence = new ManualPersistence();
    const context = await ObjectContext.create(GateProbe, { id: randomUUID(), storage: { persistence } });
    try {
      persistence.hold();
      const response = track(ourSide(context).request("/write"));
      await turns(20);
      expect(persistence.pendingCount).toBe(1);
      expect(response.settled).toBe(false);
      expect(persistence.durableKeys.has("w")).toBe(false);
      await persistence.confirmNext();
      expect(await response.promise).toEqual(ok("wrote w"));
      expect(persistence.durableKeys.has("w")).toBe(true);
    } finally {
      persistence.autoConfirm();
      await context.close();
    }
  });
});

describe("gates differential: known differences", () => {
  it("deleteAll() inside transactionSync(): an internal error on workerd, the explicit-transaction error here (docs/semantics.md)", async () => {
    const seen = await observe(async (side) => side.request("/delete-all-in-transaction-sync"));
    expect(seen.workerd).toMatchObject({
      ok: true,
      body: expect.stringMatching(/^Error: internal error; reference = \w+$/),
    });
    expect(seen.ours).toEqual(ok("Error: Cannot call deleteAll() within a transaction"));
  });

  it("an INSERT … RETURNING left half-read: workerd's commit fails and resets the object, losing the batch; here it commits (docs/sql.md)", async () => {
    const seen = await observe(async (side) => [
      await side.request("/returning-unread"),
      await side.request("/returning-state"),
    ]);
    // workerd: SQLite refuses to commit while the statement is unfinished ("cannot commit
    // transaction - SQL statements in progress: SQLITE_BUSY"); the caller gets an internal error
    // and the batch's other writes are gone with it. The storage interface makes a call that
    // returned part of its batch, so here the write ran to the end inside exec() and commits.
    expect(seen.workerd[0]).toMatchObject({
      ok: false,
      name: "Error",
      error: expect.stringMatching(/^internal error; reference = \w+$/),
    });
    expect(seen.workerd[1]).toEqual(ok({ tables: 0, kv: null }));
    expect(seen.ours).toEqual([ok("returned"), ok({ tables: 1, kv: 1 })]);
  });

  it("storage promises settle two microtask ticks after the call on workerd, at once here (docs/semantics.md)", async () => {
    const seen = await observe(async (side) => side.request("/storage-ticks"));
    // Pinned on both sides: the day either changes, this goes red and the docs' row goes.
    expect(seen.workerd).toEqual(ok(["tick 0", "tick 1", "get settled", "tick 2"]));
    expect(seen.ours).toEqual(ok(["get settled", "tick 0", "tick 1", "tick 2"]));
  });

  it("an awaited sync() resumes after the events queued behind it on workerd, between them here (docs/semantics.md)", async () => {
    const seen = await observe(async (side) => [
      ...(await side.concurrent(["/events-sync", "/events-read", "/events-read"])),
      await side.request("/events"),
    ]);
    const answers = [ok("synced"), ok("read"), ok("read")];
    expect(seen.workerd).toEqual([
      ...answers,
      ok(["sync start", "read start", "read end", "read start", "read end", "synced"]),
    ]);
    // Here the batch commits on the next macrotask (or as the next event is delivered), and the
    // memory adapter confirms it at once: sync() resumes before the second queued event starts
    // (where among the first one's steps depends on which macrotask came first).
    expect(seen.ours.slice(0, 3)).toEqual(answers);
    const events = (seen.ours[3] as { body: string[] }).body;
    expect([...events].sort()).toEqual(["read end", "read end", "read start", "read start", "sync start", "synced"]);
    expect(events.indexOf("synced")).toBeLessThan(events.lastIndexOf("read start"));
  });
});
