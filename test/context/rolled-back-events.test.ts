/**
 * Regression: an event whose transaction() or transactionSync() rolled back never got its result.
 * Its writes had registered the batch's confirmation with the output gate, and a batch left with
 * nothing to commit used to return without settling that confirmation. Each test fails fast
 * instead of hanging.
 */
import { describe, expect, test } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import type { ObjectState } from "../../src/context/object-state";
import { FakeClock } from "../../src/util/clock";
import { track, turns } from "./helpers";

const T0 = Date.UTC(2026, 0, 1);

class Txn {
  constructor(readonly ctx: ObjectState) {}
  alarm(): void {}
  async throwingTransaction(): Promise<string> {
    await this.ctx.storage
      .transaction(async (txn) => {
        await txn.put("a", 1);
        throw new Error("roll back");
      })
      .catch(() => {});
    return "done";
  }
  async explicitRollback(): Promise<string> {
    await this.ctx.storage.transaction(async (txn) => {
      await txn.put("a", 1);
      txn.rollback();
    });
    return "done";
  }
  async rolledBackAlarm(t: number): Promise<string> {
    await this.ctx.storage.transaction(async (txn) => {
      await txn.setAlarm(t);
      txn.rollback();
    });
    return "done";
  }
  rolledBackSync(): string {
    try {
      this.ctx.storage.transactionSync(() => {
        void this.ctx.storage.put("a", 1);
        throw new Error("roll back");
      });
    } catch {
      // rolled back
    }
    return "done";
  }
}

describe("pending: rolled-back transactions inside an event", () => {
  for (const method of ["throwingTransaction", "explicitRollback", "rolledBackSync"]) {
    test(`transaction: ${method} inside an event still delivers the event's result`, async () => {
      const context = await ObjectContext.create(Txn, { clock: new FakeClock(T0) });
      const result = track(context.call<string>(method));
      await turns(50);
      expect(result.settled).toBe(true);
      expect(await result.promise).toBe("done");
      expect(await (await context.storage()).get("a")).toBeUndefined();
    });
  }

  test("alarm: a setAlarm rolled back by transaction() inside an event is not scheduled, and the event returns", async () => {
    const clock = new FakeClock(T0);
    const context = await ObjectContext.create(Txn, { clock });
    const result = track(context.call<string>("rolledBackAlarm", T0 + 1_000));
    await turns(50);
    expect(result.settled).toBe(true);
    expect(context.alarms.next()).toBeNull();
    expect(await (await context.storage()).getAlarm()).toBeNull();
  });
});
