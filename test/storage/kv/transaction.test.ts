import { afterEach, describe, expect, it } from "vitest";
import type { ObjectStorage } from "../../../src/storage/object-storage";
import { coreOf } from "../../../src/storage/object-storage";
import type { ObjectTransaction } from "../../../src/storage/transaction";
import { BACKENDS, keysOf, openRecorded, openStorage, type RecordingPersistence } from "./harness";
import { macrotask } from "./helpers";

const committed = (name: string) =>
  new Error(
    `Cannot call ${name}() on transaction that has already committed: did you move \`txn\` outside of the closure?`,
  );
const rolledBack = (name: string) => new Error(`Cannot ${name}() on rolled back transaction`);
const DELETE_ALL_IN_TXN = new Error("Cannot call deleteAll() within a transaction");

/** Every async txn call, by the name the platform puts in its messages. */
const CALLS: Array<[string, (txn: ObjectTransaction) => Promise<unknown>]> = [
  ["get", (txn) => txn.get("k")],
  ["get", (txn) => txn.get(["k"])],
  ["list", (txn) => txn.list()],
  ["put", (txn) => txn.put("k", 1)],
  ["put", (txn) => txn.put({ k: 1 })],
  ["delete", (txn) => txn.delete("k")],
  ["delete", (txn) => txn.delete(["k"])],
  ["getAlarm", (txn) => txn.getAlarm()],
  ["setAlarm", (txn) => txn.setAlarm(Date.now() + 60_000)],
  ["deleteAlarm", (txn) => txn.deleteAlarm()],
];

/** Resolves to "timed out" if `p` has not settled after `ms` real milliseconds. */
function withinMs<T>(p: Promise<T>, ms: number): Promise<T | "timed out"> {
  return Promise.race([p, new Promise<"timed out">((resolve) => setTimeout(() => resolve("timed out"), ms))]);
}

describe.each(BACKENDS)("transaction (%s backend)", (backend) => {
  let storage: ObjectStorage;
  let log: RecordingPersistence;
  const open = async () => {
    ({ storage, log } = await openRecorded({ backend }));
  };
  afterEach(async () => {
    await storage?.close();
  });

  it("transaction: returns the closure's value and commits its writes", async () => {
    await open();
    const result = await storage.transaction(async (txn) => {
      await txn.put("a", 1);
      await txn.put({ b: 2, c: 3 });
      return "done";
    });
    expect(result).toBe("done");
    expect([...(await storage.list())]).toEqual([
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ]);
    await storage.sync();
    expect(log.appends).toHaveLength(1);
  });

  it("txn: reads see the transaction's own writes (get, get many, list, delete counts)", async () => {
    await open();
    await storage.put({ a: 1, b: 2 });
    await storage.transaction(async (txn) => {
      await txn.put("a", 10);
      await txn.delete("b");
      await txn.put("c", 3);
      expect(await txn.get("a")).toBe(10);
      expect(await txn.get("b")).toBeUndefined();
      expect(await txn.get(["a", "b", "c"])).toEqual(
        new Map([
          ["a", 10],
          ["c", 3],
        ]),
      );
      expect(keysOf(await txn.list())).toEqual(["a", "c"]);
      expect(await txn.list({ reverse: true, limit: 1 })).toEqual(new Map([["c", 3]]));
      expect(await txn.delete(["a", "b", "c", "a"])).toBe(2);
      expect(await txn.delete("a")).toBe(false);
    });
    expect(await storage.list()).toEqual(new Map());
  });

  it("txn: validates like storage (limits, undefined values, list options)", async () => {
    await open();
    await storage.transaction(async (txn) => {
      await expect(txn.put("k", undefined)).rejects.toThrow(new TypeError("put() called with undefined value."));
      await expect(txn.get("x".repeat(2049))).rejects.toThrow(
        new RangeError("Keys cannot be larger than 2048 bytes. A key of size 2049 was provided."),
      );
      await expect(txn.list({ limit: 0 })).rejects.toThrow(new TypeError("List limit must be positive."));
      await expect(txn.list({ start: "a", startAfter: "a" })).rejects.toThrow(
        "list() cannot be called with both start and startAfter values.",
      );
      let p: Promise<unknown> | undefined;
      expect(() => {
        p = txn.put("k", () => 1);
      }).not.toThrow();
      await expect(p).rejects.toMatchObject({ name: "DataCloneError" });
    });
    expect(await storage.list()).toEqual(new Map());
  });

  it("txn: refuses options of the wrong type, naming DurableObjectTransaction, before it looks at its state", async () => {
    await open();
    const notOfType = (method: string, position: number, type: string) =>
      new TypeError(
        `Failed to execute '${method}' on 'DurableObjectTransaction': parameter ${position} is not of type '${type}'.`,
      );
    await storage.transaction(async (txn) => {
      const t = txn as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const calls: Array<[() => Promise<unknown> | undefined, TypeError]> = [
        [() => t.get?.("k", 5), notOfType("get", 2, "GetOptions")],
        [() => t.put?.("k", 1, "o"), notOfType("put", 3, "PutOptions")],
        [() => t.put?.({ k: 1 }, undefined, true), notOfType("put", 3, "PutOptions")],
        [() => t.delete?.("k", 5), notOfType("delete", 2, "PutOptions")],
        [() => t.list?.(5), notOfType("list", 1, "ListOptions")],
        [() => t.getAlarm?.(5), notOfType("getAlarm", 1, "GetAlarmOptions")],
        [() => t.setAlarm?.(Date.now() + 1000, 5), notOfType("setAlarm", 2, "SetAlarmOptions")],
        [() => t.setAlarm?.("soon"), notOfType("setAlarm", 1, "date")],
        [() => t.deleteAlarm?.(5), notOfType("deleteAlarm", 1, "SetAlarmOptions")],
      ];
      for (const [call, error] of calls) await expect(call(), String(call)).rejects.toThrow(error);
      txn.rollback();
      for (const [call, error] of calls) await expect(call(), String(call)).rejects.toThrow(error);
    });
    expect(await storage.list()).toEqual(new Map());
  });

  it("transaction: a throw rolls everything back and is rethrown", async () => {
    await open();
    await storage.put("a", 1);
    const error = new Error("boom");
    await expect(
      storage.transaction(async (txn) => {
        await txn.put("a", 2);
        await txn.put("b", 2);
        await txn.delete("a");
        throw error;
      }),
    ).rejects.toBe(error);
    expect([...(await storage.list())]).toEqual([["a", 1]]);
  });

  it("transaction: a rejection of a non-Error value (throw 42) rolls back and rethrows the value", async () => {
    await open();
    await expect(
      storage.transaction(async (txn) => {
        await txn.put("a", 1);
        throw 42;
      }),
    ).rejects.toBe(42);
    await expect(
      storage.transaction((txn) => {
        void txn.put("b", 1);
        return Promise.reject(undefined);
      }),
    ).rejects.toBeUndefined();
    expect(await storage.list()).toEqual(new Map());
  });

  it("transaction: a failed transaction leaves the storage usable", async () => {
    await open();
    await storage.transaction(async () => Promise.reject(new Error("x"))).catch(() => {});
    await storage.put("k", 1);
    await storage.transaction(async (txn) => {
      await txn.put("k", 2);
    });
    await storage.sync();
    expect(await storage.get("k")).toBe(2);
  });

  it("rollback: discards the transaction's writes; the closure's value is still returned", async () => {
    await open();
    await storage.put("a", 1);
    const result = await storage.transaction(async (txn) => {
      await txn.put("a", 2);
      await txn.put("b", 2);
      txn.rollback();
      return "value";
    });
    expect(result).toBe("value");
    await storage.sync();
    expect([...(await storage.list())]).toEqual([["a", 1]]);
  });

  it.each(CALLS)(
    "rollback: afterwards %s() fails with 'Cannot %s() on rolled back transaction'",
    async (name, call) => {
      await open();
      await storage.transaction(async (txn) => {
        txn.rollback();
        let p: Promise<unknown> | undefined;
        expect(() => {
          p = call(txn);
        }).not.toThrow();
        await expect(p).rejects.toThrow(rolledBack(name));
      });
    },
  );

  it("rollback: a throw after rollback() still rejects with the thrown error, and nothing is written", async () => {
    await open();
    const error = new Error("after rollback");
    await expect(
      storage.transaction(async (txn) => {
        await txn.put("a", 1);
        txn.rollback();
        throw error;
      }),
    ).rejects.toBe(error);
    expect(await storage.get("a")).toBeUndefined();
    await storage.put("b", 1);
    await storage.sync();
    expect(keysOf(await storage.list())).toEqual(["b"]);
  });

  it("rollback: is idempotent", async () => {
    await open();
    await storage.transaction(async (txn) => {
      await txn.put("a", 1);
      txn.rollback();
      expect(() => txn.rollback()).not.toThrow();
      txn.rollback();
    });
    expect(await storage.get("a")).toBeUndefined();
  });

  it.each(CALLS)("txn: %s() after the closure ended fails naming the fix", async (name, call) => {
    await open();
    let leaked: ObjectTransaction | undefined;
    await storage.transaction(async (txn) => {
      leaked = txn;
    });
    if (leaked === undefined) throw new Error("closure did not run");
    const escaped = leaked;
    let p: Promise<unknown> | undefined;
    expect(() => {
      p = call(escaped);
    }).not.toThrow();
    await expect(p).rejects.toThrow(committed(name));
    expect(await storage.get("k")).toBeUndefined();
  });

  it("txn: rollback() after the closure ended throws naming the fix", async () => {
    await open();
    let leaked: ObjectTransaction | undefined;
    await storage.transaction(async (txn) => {
      leaked = txn;
    });
    expect(() => leaked?.rollback()).toThrow(committed("rollback"));
  });

  it("txn: a call issued after the closure ended via a timer fails even though the transaction failed", async () => {
    await open();
    let leaked: ObjectTransaction | undefined;
    await storage
      .transaction(async (txn) => {
        leaked = txn;
        throw new Error("fail");
      })
      .catch(() => {});
    await expect(leaked?.get("k")).rejects.toThrow(/^Cannot call get\(\) on transaction that has already committed/);
  });

  it("txn.deleteAll: rejects (never throws) and changes nothing", async () => {
    await open();
    await storage.put("a", 1);
    await storage.transaction(async (txn) => {
      await txn.put("b", 2);
      let p: Promise<unknown> | undefined;
      expect(() => {
        p = txn.deleteAll();
      }).not.toThrow();
      await expect(p).rejects.toThrow(DELETE_ALL_IN_TXN);
      expect(keysOf(await txn.list())).toEqual(["a", "b"]);
    });
    expect(keysOf(await storage.list())).toEqual(["a", "b"]);
  });

  it("storage.deleteAll: inside the closure rejects with the same error", async () => {
    await open();
    await storage.put("a", 1);
    await storage.transaction(async () => {
      await expect(storage.deleteAll()).rejects.toThrow(DELETE_ALL_IN_TXN);
    });
    expect(keysOf(await storage.list())).toEqual(["a"]);
  });

  it("transaction: nested transactions commit with the outer one", async () => {
    await open();
    await storage.transaction(async (outer) => {
      await outer.put("a", 1);
      await storage.transaction(async (inner) => {
        expect(await inner.get("a")).toBe(1);
        await inner.put("b", 2);
      });
      expect(await outer.get("b")).toBe(2);
    });
    expect(keysOf(await storage.list())).toEqual(["a", "b"]);
  });

  it("transaction: a nested transaction started after a macrotask inside the closure still nests", async () => {
    await open();
    const result = await storage.transaction(async (outer) => {
      await outer.put("a", 1);
      await macrotask();
      return storage.transaction(async (inner) => {
        await inner.put("b", 2);
        return inner.get("a");
      });
    });
    expect(result).toBe(1);
    expect(keysOf(await storage.list())).toEqual(["a", "b"]);
  });

  it("transaction: nested transactions started side by side run one after the other; a failing one does not take a sibling's writes", async () => {
    await open();
    const order: string[] = [];
    const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));
    const outcomes = await storage.transaction(async () =>
      Promise.allSettled([
        storage.transaction(async (a) => {
          order.push("a start");
          await a.put("a", 1);
          await macrotask();
          order.push("a end");
          throw new Error("a fails");
        }),
        storage.transaction(async (b) => {
          order.push("b start");
          await b.put("b", 2);
          order.push("b end");
        }),
      ]),
    );
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "fulfilled"]);
    expect(order).toEqual(["a start", "a end", "b start", "b end"]);
    expect(await storage.list()).toEqual(new Map([["b", 2]]));
  });

  it("transaction: an inner rollback keeps the outer transaction's writes", async () => {
    await open();
    await storage.transaction(async (outer) => {
      await outer.put("a", 1);
      await storage.transaction(async (inner) => {
        await inner.put("b", 2);
        await inner.delete("a");
        inner.rollback();
      });
      expect(await outer.get("a")).toBe(1);
      expect(await outer.get("b")).toBeUndefined();
      await outer.put("c", 3);
    });
    expect(keysOf(await storage.list())).toEqual(["a", "c"]);
  });

  it("transaction: an inner throw rolls back only the inner transaction when the outer catches it", async () => {
    await open();
    await storage.transaction(async (outer) => {
      await outer.put("a", 1);
      await storage
        .transaction(async (inner) => {
          await inner.put("b", 2);
          throw new Error("inner");
        })
        .catch(() => {});
      await outer.put("c", 3);
    });
    expect(keysOf(await storage.list())).toEqual(["a", "c"]);
  });

  it("transaction: an outer rollback discards committed inner transactions", async () => {
    await open();
    await storage.transaction(async (outer) => {
      await storage.transaction(async (inner) => {
        await inner.put("b", 2);
      });
      outer.rollback();
    });
    expect(await storage.list()).toEqual(new Map());
  });

  it("transaction: program order holds inside a transaction (delete then put, put then delete)", async () => {
    await open();
    await storage.put({ x: 0, y: 0 });
    await storage.transaction(async (txn) => {
      void txn.delete("x");
      void txn.put("x", 1);
      void txn.put("y", 1);
      void txn.delete("y");
    });
    expect([...(await storage.list())]).toEqual([["x", 1]]);
  });

  it("transaction: ten concurrent read-increment-write transactions never interleave", async () => {
    await open();
    await storage.put("n", 0);
    await Promise.all(
      Array.from({ length: 10 }, () =>
        storage.transaction(async (txn) => {
          const n = (await txn.get<number>("n")) ?? 0;
          await txn.get("other");
          await txn.put("n", n + 1);
        }),
      ),
    );
    expect(await storage.get("n")).toBe(10);
  });

  it("transaction: concurrent transactions with a macrotask inside still never interleave", async () => {
    await open();
    await storage.put("n", 0);
    await Promise.all(
      Array.from({ length: 5 }, () =>
        storage.transaction(async (txn) => {
          const n = (await txn.get<number>("n")) ?? 0;
          await macrotask();
          await txn.put("n", n + 1);
        }),
      ),
    );
    expect(await storage.get("n")).toBe(5);
  });

  it("rollback: rolling back the outer transaction while a nested one runs fails without wedging the storage", async () => {
    await open();
    let innerStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      innerStarted = resolve;
    });
    const outer = storage.transaction(async (txn) => {
      const inner = storage.transaction(async (t) => {
        innerStarted();
        await macrotask();
        await t.put("inner", 1);
      });
      await started;
      expect(() => txn.rollback()).toThrow(
        "Cannot roll back an outer transaction while a nested transaction is still running.",
      );
      await inner;
    });
    await outer.catch(() => {});
    await macrotask();
    expect(coreOf(storage).inTransaction).toBe(false);
    await storage.put("z", 1);
    await storage.sync();
    await storage.close();
    storage = await openStorage({ backend, persistence: log });
    expect(await storage.get("z")).toBe(1);
  });

  it("sync: awaited inside a transaction closure resolves (it does not wait for the transaction itself)", async () => {
    await open();
    await storage.put("before", 1);
    const result = await withinMs(
      storage.transaction(async (txn) => {
        await txn.put("a", 1);
        await storage.sync();
        return "done";
      }),
      // A deadlock never settles; a loaded machine can take seconds for what takes milliseconds.
      20_000,
    );
    expect(result).toBe("done");
  });

  it("transaction: a nested transaction left running by its outer closure does not wedge the storage", async () => {
    await open();
    const persistence = log;
    let innerDone: Promise<unknown> = Promise.resolve();
    const outer = storage.transaction(async (txn) => {
      await txn.put("outer", 1);
      innerDone = storage
        .transaction(async (inner) => {
          await macrotask();
          await inner.put("inner", 1);
        })
        .catch((e: unknown) => e);
    });
    // The misuse is reported, naming the fix, and neither transaction's writes survive.
    await expect(outer).rejects.toThrow(/Await nested transactions inside the closure/);
    expect(await innerDone).toBeInstanceOf(Error);
    await macrotask();
    expect(coreOf(storage).inTransaction).toBe(false);
    expect(await storage.get(["outer", "inner"])).toEqual(new Map());
    await storage.put("z", 1);
    await storage.sync();
    await storage.close();
    storage = await openStorage({ backend, persistence });
    expect(await storage.get("z")).toBe(1);
  });

  it("txn alarms: setAlarm/getAlarm/deleteAlarm see the transaction's own changes and commit", async () => {
    await open();
    const at = Date.now() + 3_600_000;
    await storage.transaction(async (txn) => {
      expect(await txn.getAlarm()).toBeNull();
      await txn.setAlarm(at);
      expect(await txn.getAlarm()).toBe(at);
      await txn.deleteAlarm();
      expect(await txn.getAlarm()).toBeNull();
      await txn.setAlarm(new Date(at + 1));
    });
    expect(await storage.getAlarm()).toBe(at + 1);
  });

  it("txn alarms: setAlarm inside a rolled-back transaction is rolled back", async () => {
    await open();
    const at = Date.now() + 3_600_000;
    await storage.setAlarm(at);
    await storage.transaction(async (txn) => {
      await txn.setAlarm(at + 5_000);
      txn.rollback();
    });
    expect(await storage.getAlarm()).toBe(at);
    await storage
      .transaction(async (txn) => {
        await txn.deleteAlarm();
        throw new Error("undo");
      })
      .catch(() => {});
    expect(await storage.getAlarm()).toBe(at);
    await storage.sync();
    expect(await storage.getAlarm()).toBe(at);
  });

  it("transaction: a throw inside rolls back storage calls made through storage itself too", async () => {
    await open();
    await storage
      .transaction(async () => {
        await storage.put("through-storage", 1);
        throw new Error("undo");
      })
      .catch(() => {});
    expect(await storage.get("through-storage")).toBeUndefined();
  });
});
