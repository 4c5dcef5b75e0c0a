/**
 * The output gate (workerd-semantics §2): an event's result and every outgoing message wait until
 * the writes issued before them are confirmed; `allowUnconfirmed` writes do not hold them.
 * Appends are confirmed by hand with {@link ManualPersistence}.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, test } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import type { ObjectState } from "../../src/context/object-state";
import { OutputGate } from "../../src/context/output-gate";
import { deferred } from "../../src/util/deferred";
import { ManualPersistence, track, turns } from "./helpers";

class Writer {
  constructor(
    readonly ctx: ObjectState,
    readonly env: { sent: string[] },
  ) {}

  async write(key: string, value: unknown): Promise<string> {
    await this.ctx.storage.put(key, value);
    return `wrote ${key}`;
  }

  async writeUnconfirmed(key: string, value: unknown): Promise<string> {
    await this.ctx.storage.put(key, value, { allowUnconfirmed: true });
    return `wrote ${key}`;
  }

  async writeThenSend(key: string): Promise<string> {
    await this.ctx.storage.put(key, true);
    return this.ctx.sendOutgoing(() => {
      this.env.sent.push(key);
      return `sent ${key}`;
    });
  }

  async writeThenThrow(key: string): Promise<never> {
    await this.ctx.storage.put(key, true);
    throw new Error(`handler failed after writing ${key}`);
  }

  sync(): Promise<void> {
    return this.ctx.storage.sync();
  }

  async putThenSync(key: string): Promise<string> {
    await this.ctx.storage.put(key, 1, { allowUnconfirmed: true });
    await this.ctx.storage.sync();
    return "synced";
  }

  read(key: string): Promise<unknown> {
    return this.ctx.storage.get(key);
  }

  /** An unconfirmed write, then a delete of a key that never existed (on the platform a write statement too). */
  async writeUnconfirmedThenDeleteMissing(key: string): Promise<boolean> {
    void this.ctx.storage.put(key, 1, { allowUnconfirmed: true });
    return this.ctx.storage.delete("never-written");
  }

  async deleteMissingUnconfirmed(key: string): Promise<boolean> {
    void this.ctx.storage.put(key, 1, { allowUnconfirmed: true });
    return this.ctx.storage.delete("never-written", { allowUnconfirmed: true });
  }
}

async function writer() {
  const persistence = new ManualPersistence();
  const sent: string[] = [];
  const context = await ObjectContext.create(Writer, { env: { sent }, storage: { persistence } });
  return { context, persistence, sent };
}

describe("output gate", () => {
  test("delete: of a key that does not exist still holds the gate until the batch is confirmed", async () => {
    const { context, persistence } = await writer();
    persistence.hold();
    const response = track(context.call<boolean>("writeUnconfirmedThenDeleteMissing", "u"));
    await turns(20);
    expect(persistence.pendingCount).toBe(1);
    expect(response.settled).toBe(false);
    await persistence.confirmNext();
    expect(await response.promise).toBe(false);
    expect(persistence.durableKeys.has("u")).toBe(true);
  });

  test("delete: with allowUnconfirmed, a missing key's delete does not hold the gate", async () => {
    const { context, persistence } = await writer();
    persistence.hold();
    const response = track(context.call<boolean>("deleteMissingUnconfirmed", "u"));
    await turns(20);
    expect(response.settled).toBe(true);
    expect(await response.promise).toBe(false);
    await persistence.confirmNext();
  });

  test("deliver: a result waits until the write issued before it is confirmed", async () => {
    const { context, persistence } = await writer();
    persistence.hold();
    const response = track(context.call<string>("write", "k", 1));
    await turns(20);
    expect(persistence.pendingCount).toBe(1);
    expect(response.settled).toBe(false);
    expect(persistence.durableKeys.has("k")).toBe(false);
    await persistence.confirmNext();
    expect(await response.promise).toBe("wrote k");
    expect(persistence.durableKeys.has("k")).toBe(true);
  });

  test("deliver: the read of a held write answers at once, but the reader's result waits too", async () => {
    const { context, persistence } = await writer();
    persistence.hold();
    const write = track(context.call("write", "k", 1));
    const read = track(context.call("read", "k"));
    await turns(20);
    // The reader saw the write, so its answer must not leave before the write is durable.
    expect(write.settled).toBe(false);
    expect(read.settled).toBe(false);
    await persistence.confirmNext();
    expect(await read.promise).toBe(1);
  });

  test("deliver: allowUnconfirmed writes do not hold the result", async () => {
    const { context, persistence } = await writer();
    persistence.hold();
    expect(await context.call("writeUnconfirmed", "u", 1)).toBe("wrote u");
    await turns(5);
    expect(persistence.pendingCount).toBe(1);
    expect(persistence.durableKeys.has("u")).toBe(false);
    await persistence.confirmNext();
    expect(persistence.durableKeys.has("u")).toBe(true);
  });

  test("deliver: a confirmed write in the same batch as an unconfirmed one still holds the result", async () => {
    class Mixed {
      constructor(readonly ctx: ObjectState) {}
      mixed(): string {
        void this.ctx.storage.put("u", 1, { allowUnconfirmed: true });
        void this.ctx.storage.put("c", 2);
        return "done";
      }
    }
    const persistence = new ManualPersistence();
    const context = await ObjectContext.create(Mixed, { storage: { persistence } });
    persistence.hold();
    const response = track(context.call<string>("mixed"));
    await turns(20);
    expect(response.settled).toBe(false);
    await persistence.confirmNext();
    expect(await response.promise).toBe("done");
  });

  test("sendOutgoing: the message runs only after the earlier write is confirmed", async () => {
    const { context, persistence, sent } = await writer();
    persistence.hold();
    const response = track(context.call<string>("writeThenSend", "order-1"));
    await turns(20);
    expect(sent).toEqual([]);
    expect(response.settled).toBe(false);
    await persistence.confirmNext();
    expect(await response.promise).toBe("sent order-1");
    expect(sent).toEqual(["order-1"]);
  });

  test("deliver: an uncaught exception is an outgoing message too and waits for the write", async () => {
    const { context, persistence } = await writer();
    persistence.hold();
    const response = track(context.call("writeThenThrow", "k"));
    response.promise.catch(() => {});
    await turns(20);
    expect(response.settled).toBe(false);
    await persistence.confirmNext();
    await expect(response.promise).rejects.toThrow("handler failed after writing k");
  });

  test("sync: resolves only when every pending write (allowUnconfirmed too) is confirmed", async () => {
    const { context, persistence } = await writer();
    persistence.hold();
    const response = track(context.call<string>("putThenSync", "s"));
    await turns(20);
    expect(response.settled).toBe(false);
    await persistence.confirmNext();
    expect(await response.promise).toBe("synced");
    expect(persistence.durableKeys.has("s")).toBe(true);
  });

  test("sync: from the host, resolves after the held append is confirmed", async () => {
    const { context, persistence } = await writer();
    persistence.hold();
    void context.call("writeUnconfirmed", "h", 1);
    await turns(10);
    const storage = await context.storage();
    const synced = track(storage.sync());
    await turns(10);
    expect(synced.settled).toBe(false);
    await persistence.confirmNext();
    await synced.promise;
    expect(persistence.durableKeys.has("h")).toBe(true);
  });

  test("deliver: results of several events are released in order as their batches are confirmed", async () => {
    const { context, persistence } = await writer();
    persistence.hold();
    const a = track(context.call("write", "a", 1));
    await turns(10);
    const b = track(context.call("write", "b", 2));
    await turns(10);
    expect(persistence.pendingCount).toBe(2);
    await persistence.confirmNext();
    await a.promise;
    await turns(5);
    expect(b.settled).toBe(false);
    await persistence.confirmNext();
    await b.promise;
  });
});

describe("OutputGate.hold", () => {
  test("holding the same confirmation again (every write of a batch does) still waits for it, and for a later one", async () => {
    const gate = new OutputGate();
    const first = deferred<void>();
    const second = deferred<void>();
    gate.hold(first.promise);
    gate.hold(first.promise);
    gate.hold(second.promise);
    gate.hold(second.promise);
    const waited = track(gate.wait());
    await turns();
    expect(waited.settled).toBe(false);
    first.resolve();
    await turns();
    expect(waited.settled).toBe(false);
    second.resolve();
    await waited.promise;
  });

  test("a confirmation held again after another one is held again too, and its failure reaches the waiter", async () => {
    const gate = new OutputGate();
    const first = deferred<void>();
    const second = deferred<void>();
    gate.hold(first.promise);
    gate.hold(second.promise);
    gate.hold(first.promise);
    second.resolve();
    const waited = gate.wait();
    const failure = new Error("append failed");
    first.reject(failure);
    await expect(waited).rejects.toBe(failure);
  });
});

describe("output gate: nothing kept per event", () => {
  // A real garbage collection, so that "not retained" is observed rather than assumed.
  setFlagsFromString("--expose_gc");
  const gc = runInNewContext("gc") as () => void;

  test("an event's result is not retained by the gate once delivered (a healthy object never breaks it)", async () => {
    class Echo {
      fetch(value: object): object {
        return value;
      }
    }
    const ctx = await ObjectContext.create(Echo, { alarms: false });
    const refs: WeakRef<object>[] = [];
    for (let i = 0; i < 20; i++) {
      const value = { payload: new Uint8Array(1024) };
      refs.push(new WeakRef(value));
      expect(await ctx.deliver((instance) => instance.fetch(value))).toBe(value);
    }
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    // The newest may still be referenced from the last turn's bookkeeping; none may pile up.
    expect(refs.filter((r) => r.deref() !== undefined).length).toBeLessThanOrEqual(1);
    await ctx.close();
  });
});
