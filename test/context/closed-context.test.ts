/**
 * A closed object context opens nothing again. `storage()` and `instance()` on a closed context
 * (and the test kit's storage helpers after `close()`) used to open a fresh session over the closed
 * persistence, which nothing closed afterwards: a directory stayed locked for the rest of the
 * process (the next open of it failed with ERR_LOCKED), and a test read storage it had closed.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DurableObject } from "../../src/context/durable-object";
import { ObjectContext } from "../../src/context/object-context";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { createTestObject } from "../../src/testkit/test-object";
import { deferred } from "../../src/util/deferred";

class Counter extends DurableObject {
  async increment(): Promise<number> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    return n;
  }
}

const CLOSED = { code: "ERR_CLOSED", message: "This object context was closed; create a new one." };
const dirs: string[] = [];

async function directory(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "actorstore-closed-context-"));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("a closed context", () => {
  it("storage() and instance() fail with ERR_CLOSED and leave the directory free for the next open", async () => {
    const dir = await directory();
    const context = await ObjectContext.create(Counter, { storage: { persistence: await openFilePersistence(dir) } });
    expect(await context.call("increment")).toBe(1);
    await context.close();
    await expect(context.storage()).rejects.toMatchObject(CLOSED);
    await expect(context.instance()).rejects.toMatchObject(CLOSED);
    await expect(context.call("increment")).rejects.toMatchObject(CLOSED);
    const next = await ObjectContext.create(Counter, { storage: { persistence: await openFilePersistence(dir) } });
    expect(await next.call("increment")).toBe(2);
    await next.close();
  });

  it("close() while a session is reopening (after a reset): the opening fails and the directory is released", async () => {
    const dir = await directory();
    const context = await ObjectContext.create(Counter, { storage: { persistence: await openFilePersistence(dir) } });
    expect(await context.call("increment")).toBe(1);
    context.abort("reset");
    const reopening = context.storage();
    await context.close();
    await expect(reopening).rejects.toMatchObject(CLOSED);
    const next = await ObjectContext.create(Counter, { storage: { persistence: await openFilePersistence(dir) } });
    expect(await next.call("increment")).toBe(2);
    await next.close();
  });

  it("the test kit's storage helpers after close() fail instead of reading a reopened storage", async () => {
    const counter = await createTestObject(Counter);
    expect(await counter.call("increment")).toBe(1);
    await counter.close();
    await expect(counter.get("n")).rejects.toMatchObject(CLOSED);
    await expect(counter.list()).rejects.toMatchObject(CLOSED);
    await expect(counter.sql("SELECT 1")).rejects.toMatchObject(CLOSED);
    await expect(counter.seed({ n: 5 })).rejects.toMatchObject(CLOSED);
    await expect(counter.storage()).rejects.toMatchObject(CLOSED);
    // restart() is the way back: a new context over the same persistence.
    await counter.restart();
    expect(await counter.get("n")).toBe(1);
    await counter.close();
  });

  it("close() while a call's transaction is open: the call fails with ERR_CLOSED instead of waiting forever", async () => {
    const inside = deferred<void>();
    const release = deferred<void>();
    class Transfer extends DurableObject {
      async move(): Promise<string> {
        return this.ctx.storage.transaction(async (txn) => {
          await txn.put("from", 1);
          inside.resolve();
          await release.promise;
          return "moved";
        });
      }
    }
    const dir = await directory();
    const context = await ObjectContext.create(Transfer, { storage: { persistence: await openFilePersistence(dir) } });
    let outcome: unknown = "pending";
    const call = context.call("move").then(
      (v) => v,
      (e: unknown) => e,
    );
    void call.then((v) => {
      outcome = v;
    });
    await inside.promise;
    await context.close();
    release.resolve();
    // The answer waited on a batch the closed storage would never commit (its output gate).
    for (let i = 0; i < 10 && outcome === "pending"; i++) await new Promise<void>((r) => setImmediate(r));
    expect(outcome).toMatchObject({
      code: "ERR_CLOSED",
      message: "This storage was closed. Open it again to continue.",
    });
    const next = await ObjectContext.create(Transfer, { storage: { persistence: await openFilePersistence(dir) } });
    expect(await (await next.storage()).get("from")).toBeUndefined();
    await next.close();
  });

  it("close() lets waitUntil work finish first: what it writes is durable, as before a host's eviction", async () => {
    const go = deferred<void>();
    class Background extends DurableObject {
      start(): string {
        this.ctx.waitUntil(
          (async () => {
            await go.promise;
            await this.ctx.storage.put("late", "written");
          })(),
        );
        return "started";
      }
    }
    const dir = await directory();
    const context = await ObjectContext.create(Background, {
      storage: { persistence: await openFilePersistence(dir) },
    });
    expect(await context.call("start")).toBe("started");
    let closed = false;
    const closing = context.close().then(() => {
      closed = true;
    });
    for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
    expect(closed).toBe(false);
    // New events are refused while it waits.
    await expect(context.call("start")).rejects.toMatchObject(CLOSED);
    go.resolve();
    await closing;
    const next = await ObjectContext.create(Background, { storage: { persistence: await openFilePersistence(dir) } });
    expect(await (await next.storage()).get("late")).toBe("written");
    await next.close();
  });
});
