/**
 * The alarm API (workerd-semantics §6): setAlarm/getAlarm/deleteAlarm results and errors, and the
 * alarm as part of storage (same batch, rolled back with transactions, persisted and recovered).
 */
import { runInNewContext } from "node:vm";
import { describe, expect, test } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import type { ObjectState } from "../../src/context/object-state";
import type { CommitRecord } from "../../src/durability/commit-record";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import { ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";
import { ManualPersistence, rejectionOf } from "../context/helpers";

const T0 = Date.UTC(2026, 0, 1);

class WithAlarm {
  constructor(readonly ctx: ObjectState) {}
  alarm(): void {}
  set(time: number | Date): Promise<void> {
    return this.ctx.storage.setAlarm(time);
  }
  get(): Promise<number | null> {
    return this.ctx.storage.getAlarm();
  }
  delete(): Promise<void> {
    return this.ctx.storage.deleteAlarm();
  }
}

class WithoutAlarm {
  constructor(readonly ctx: ObjectState) {}
  set(time: number | Date): Promise<void> {
    return this.ctx.storage.setAlarm(time);
  }
}

async function withAlarm(clock = new FakeClock(T0)) {
  const context = await ObjectContext.create(WithAlarm, { clock, alarms: false });
  return { context, clock, storage: await context.storage() };
}

describe("setAlarm / getAlarm / deleteAlarm", () => {
  test("getAlarm: null when no alarm is set", async () => {
    const { storage } = await withAlarm();
    expect(await storage.getAlarm()).toBeNull();
  });

  test("setAlarm: accepts a number or a Date; getAlarm returns integer ms", async () => {
    const { storage } = await withAlarm();
    await storage.setAlarm(T0 + 60_000);
    expect(await storage.getAlarm()).toBe(T0 + 60_000);
    await storage.setAlarm(new Date(T0 + 120_000));
    expect(await storage.getAlarm()).toBe(T0 + 120_000);
  });

  test("setAlarm: fractional milliseconds are truncated", async () => {
    const { storage } = await withAlarm();
    await storage.setAlarm(T0 + 1_000.999);
    expect(await storage.getAlarm()).toBe(T0 + 1_000);
    expect(Number.isInteger(await storage.getAlarm())).toBe(true);
  });

  test("setAlarm: only one alarm; a later call replaces it", async () => {
    const { storage } = await withAlarm();
    await storage.setAlarm(T0 + 5_000);
    await storage.setAlarm(T0 + 1_000);
    expect(await storage.getAlarm()).toBe(T0 + 1_000);
  });

  test("setAlarm: a time in the past is clamped to now", async () => {
    const { storage, clock } = await withAlarm();
    await clock.advance(1_234);
    await storage.setAlarm(T0 - 10_000);
    expect(await storage.getAlarm()).toBe(T0 + 1_234);
    await storage.setAlarm(1); // the smallest valid time
    expect(await storage.getAlarm()).toBe(clock.now());
  });

  test("deleteAlarm: resolves to undefined, removes the alarm, and is idempotent", async () => {
    const { storage } = await withAlarm();
    await storage.setAlarm(T0 + 5_000);
    expect(await storage.deleteAlarm()).toBeUndefined();
    expect(await storage.getAlarm()).toBeNull();
    expect(await storage.deleteAlarm()).toBeUndefined();
    expect(await storage.getAlarm()).toBeNull();
  });

  test("setAlarm: a time <= 0 is a TypeError with the platform message", async () => {
    const { storage } = await withAlarm();
    for (const t of [0, -1, -1_000_000, new Date(0), 0.5]) {
      const error = await rejectionOf(storage.setAlarm(t));
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toBe("setAlarm() cannot be called with an alarm time <= 0");
    }
    expect(await storage.getAlarm()).toBeNull();
  });

  test("setAlarm: NaN, infinities and invalid dates are TypeErrors with the platform message", async () => {
    const { storage } = await withAlarm();
    for (const t of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, new Date(Number.NaN)]) {
      const error = await rejectionOf(storage.setAlarm(t));
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toBe("The value cannot be converted because it is not a valid Date.");
    }
  });

  test("setAlarm: a non-date argument is the platform's 'parameter 1 is not of type date' TypeError", async () => {
    const { storage } = await withAlarm();
    const setAlarm = storage.setAlarm.bind(storage) as (t: unknown) => Promise<void>;
    for (const t of ["2030-01-01", undefined, null, {}, 123n, true]) {
      const error = await rejectionOf(setAlarm(t));
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toBe(
        "Failed to execute 'setAlarm' on 'DurableObjectStorage': parameter 1 is not of type 'date'.",
      );
    }
  });

  test("setAlarm: a Date is recognised by what it is, not by its prototype chain", async () => {
    // Regression: `instanceof Date` refused a Date made in another realm (a vm context, an iframe)
    // and took an object made from Date.prototype, whose getTime() then threw "this is not a Date
    // object". The platform's binding checks for a real Date (V8's IsDate).
    const { storage } = await withAlarm();
    const foreign = runInNewContext("new Date(Date.UTC(2030, 0, 1))") as Date;
    expect(foreign instanceof Date).toBe(false);
    await storage.setAlarm(foreign);
    expect(await storage.getAlarm()).toBe(Date.UTC(2030, 0, 1));
    const setAlarm = storage.setAlarm.bind(storage) as (t: unknown) => Promise<void>;
    for (const fake of [Object.create(Date.prototype), new Proxy(new Date(), {})]) {
      const error = await rejectionOf(setAlarm(fake));
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toBe(
        "Failed to execute 'setAlarm' on 'DurableObjectStorage': parameter 1 is not of type 'date'.",
      );
    }
  });

  test("setAlarm: the platform's date range (int64 ns, to 2262-04-11) is accepted, later times are refused with its message", async () => {
    // workerd's message names 2189, but its check is the end of its nanosecond date type; the
    // differential suite (test/differential/alarms.differential.test.ts) pins this against workerd.
    const { storage, clock } = await withAlarm();
    await storage.setAlarm(new Date(Date.UTC(2190, 0, 1)));
    expect(await storage.getAlarm()).toBe(Date.UTC(2190, 0, 1));
    const last = 9_223_372_036_854;
    await storage.setAlarm(last);
    expect(await storage.getAlarm()).toBe(last);
    // 9223372036854.775 ms is 2^63 ns once multiplied in floating point, as the platform does.
    for (const t of [9_223_372_036_854.775, 9_223_372_036_855, 8.64e15 + 1, Number.MAX_VALUE]) {
      const error = await rejectionOf(storage.setAlarm(t));
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toBe("This API doesn't support dates after 2189.");
    }
    const before = await rejectionOf(storage.setAlarm(-9_223_372_036_855));
    expect(before.message).toBe("This API doesn't support dates before 1687.");
    expect(await storage.getAlarm()).toBe(last);
    expect(clock.now()).toBe(T0);
  });

  test("setAlarm: validation errors never throw synchronously", async () => {
    const { storage } = await withAlarm();
    const p = storage.setAlarm(-1);
    expect(p).toBeInstanceOf(Promise);
    await expect(p).rejects.toThrow(TypeError);
  });

  test("setAlarm: a class without alarm() gets the platform TypeError", async () => {
    const context = await ObjectContext.create(WithoutAlarm, { clock: new FakeClock(T0) });
    const error = await rejectionOf(context.call("set", T0 + 1_000));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe("Your Durable Object class must have an alarm() handler in order to call setAlarm()");
    expect(await (await context.storage()).getAlarm()).toBeNull();
  });

  test("setAlarm: the handler check is skipped during the constructor", async () => {
    class SetsInConstructor {
      constructor(readonly ctx: ObjectState) {
        void ctx.storage.setAlarm(T0 + 1_000);
      }
      read(): Promise<number | null> {
        return this.ctx.storage.getAlarm();
      }
    }
    const context = await ObjectContext.create(SetsInConstructor, { clock: new FakeClock(T0), alarms: false });
    expect(await context.call("read")).toBe(T0 + 1_000);
  });

  test("setAlarm: a bare ObjectStorage (no object context) stores the alarm", async () => {
    const persistence = createMemoryPersistence();
    const storage = await ObjectStorage.open({ persistence, clock: new FakeClock(T0) });
    await storage.setAlarm(T0 + 1_000);
    expect(await storage.getAlarm()).toBe(T0 + 1_000);
    await storage.close();
    const again = await ObjectStorage.open({ persistence, clock: new FakeClock(T0) });
    expect(await again.getAlarm()).toBe(T0 + 1_000);
  });

  test("setAlarm: the option bag is accepted (allowConcurrency, allowUnconfirmed)", async () => {
    const { storage } = await withAlarm();
    await storage.setAlarm(T0 + 1, { allowConcurrency: true, allowUnconfirmed: true });
    expect(await storage.getAlarm({ allowConcurrency: true })).toBe(T0 + 1);
    await storage.deleteAlarm({ allowUnconfirmed: true });
    expect(await storage.getAlarm()).toBeNull();
  });
});

describe("the alarm is part of storage", () => {
  test("setAlarm: commits in the same batch as the writes of its turn", async () => {
    const persistence = new ManualPersistence();
    const storage = await ObjectStorage.open({ persistence, clock: new FakeClock(T0) });
    void storage.put("a", 1);
    void storage.setAlarm(T0 + 5_000);
    void storage.put("b", 2);
    await storage.sync();
    const records = persistence.appends.flat();
    expect(records).toHaveLength(1);
    const record = records[0] as CommitRecord;
    expect(record.alarm).toBe(T0 + 5_000);
    expect(record.kv.map((w) => w.key).sort()).toEqual(["a", "b"]);
  });

  test("deleteAlarm: commits as a record with alarm null", async () => {
    const persistence = new ManualPersistence();
    const storage = await ObjectStorage.open({ persistence, clock: new FakeClock(T0) });
    await storage.setAlarm(T0 + 5_000);
    await storage.sync();
    await storage.deleteAlarm();
    await storage.sync();
    expect(persistence.appends.flat().map((r) => r.alarm)).toEqual([T0 + 5_000, null]);
  });

  test("setAlarm: setting the current value again writes nothing", async () => {
    const persistence = new ManualPersistence();
    const storage = await ObjectStorage.open({ persistence, clock: new FakeClock(T0) });
    await storage.setAlarm(T0 + 5_000);
    await storage.sync();
    await storage.setAlarm(T0 + 5_000);
    await storage.sync();
    expect(persistence.appends).toHaveLength(1);
  });

  test("transaction: a setAlarm inside a throwing transaction() is rolled back", async () => {
    const { storage } = await withAlarm();
    await storage.setAlarm(T0 + 1_000);
    await expect(
      storage.transaction(async (txn) => {
        await txn.setAlarm(T0 + 9_000);
        expect(await txn.getAlarm()).toBe(T0 + 9_000);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await storage.getAlarm()).toBe(T0 + 1_000);
  });

  test("transaction: txn.rollback() rolls back setAlarm and deleteAlarm", async () => {
    const { storage } = await withAlarm();
    await storage.setAlarm(T0 + 1_000);
    await storage.transaction(async (txn) => {
      await txn.deleteAlarm();
      expect(await txn.getAlarm()).toBeNull();
      txn.rollback();
    });
    expect(await storage.getAlarm()).toBe(T0 + 1_000);
  });

  test("transaction: a committed transaction keeps its alarm", async () => {
    const { storage } = await withAlarm();
    await storage.transaction(async (txn) => {
      await txn.put("k", 1);
      await txn.setAlarm(T0 + 2_000);
    });
    expect(await storage.getAlarm()).toBe(T0 + 2_000);
  });

  test("transactionSync: a setAlarm inside a throwing closure is rolled back", async () => {
    const { storage } = await withAlarm();
    await storage.setAlarm(T0 + 1_000);
    expect(() =>
      storage.transactionSync(() => {
        void storage.setAlarm(T0 + 9_000);
        void storage.deleteAlarm();
        throw new Error("sync roll back");
      }),
    ).toThrow("sync roll back");
    expect(await storage.getAlarm()).toBe(T0 + 1_000);
    storage.transactionSync(() => {
      void storage.setAlarm(T0 + 7_000);
    });
    expect(await storage.getAlarm()).toBe(T0 + 7_000);
  });

  test("setAlarm: persisted and recovered when reopened with the same persistence", async () => {
    const persistence = createMemoryPersistence();
    const clock = new FakeClock(T0);
    const first = await ObjectContext.create(WithAlarm, { clock, storage: { persistence }, alarms: false });
    await first.call("set", T0 + 3_600_000);
    await first.close();
    const second = await ObjectContext.create(WithAlarm, { clock, storage: { persistence }, alarms: false });
    expect(await second.call("get")).toBe(T0 + 3_600_000);
    await second.call("delete");
    await second.close();
    const third = await ObjectContext.create(WithAlarm, { clock, storage: { persistence }, alarms: false });
    expect(await third.call("get")).toBeNull();
  });

  test("setAlarm: an uncommitted alarm is lost by abort(), a committed one survives", async () => {
    class AbortAfterSet {
      constructor(readonly ctx: ObjectState) {}
      alarm(): void {}
      async setThenAbort(t: number): Promise<void> {
        void this.ctx.storage.setAlarm(t);
        this.ctx.abort();
      }
      set(t: number): Promise<void> {
        return this.ctx.storage.setAlarm(t);
      }
      get(): Promise<number | null> {
        return this.ctx.storage.getAlarm();
      }
    }
    const context = await ObjectContext.create(AbortAfterSet, { clock: new FakeClock(T0), alarms: false });
    await context.call("set", T0 + 1_000);
    await expect(context.call("setThenAbort", T0 + 2_000)).rejects.toThrow(
      "Application called abort() to reset Durable Object.",
    );
    expect(await context.call("get")).toBe(T0 + 1_000);
  });

  test("deleteAll: keeps the alarm by default", async () => {
    const { storage } = await withAlarm();
    await storage.put("k", 1);
    await storage.setAlarm(T0 + 1_000);
    await storage.deleteAll();
    expect(await storage.get("k")).toBeUndefined();
    expect(await storage.getAlarm()).toBe(T0 + 1_000);
  });

  test("deleteAll: keeps the alarm across a reopen", async () => {
    const persistence = createMemoryPersistence();
    const storage = await ObjectStorage.open({ persistence, clock: new FakeClock(T0) });
    await storage.setAlarm(T0 + 1_000);
    await storage.sync();
    await storage.deleteAll();
    await storage.close();
    const again = await ObjectStorage.open({ persistence, clock: new FakeClock(T0) });
    expect(await again.getAlarm()).toBe(T0 + 1_000);
  });

  test("deleteAll: removes the alarm with deleteAllDeletesAlarm: true (also after a reopen)", async () => {
    const persistence = createMemoryPersistence();
    const storage = await ObjectStorage.open({
      persistence,
      clock: new FakeClock(T0),
      deleteAllDeletesAlarm: true,
    });
    await storage.setAlarm(T0 + 1_000);
    await storage.sync();
    await storage.deleteAll();
    expect(await storage.getAlarm()).toBeNull();
    await storage.close();
    const again = await ObjectStorage.open({ persistence, clock: new FakeClock(T0) });
    expect(await again.getAlarm()).toBeNull();
  });
});
