/**
 * How the key-value calls convert their arguments, as the platform's bindings do (compared with
 * workerd in test/differential/kv-arguments.differential.test.ts): every member of an options
 * object read once, in the platform's order, before anything takes effect; key arrays read by
 * index (holes included); a Proxy of an array is one key; a function is an entries object.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ObjectStorage } from "../../../src/storage/object-storage";
import { openStorage } from "./harness";

/** The storage's methods with arguments their types do not allow. */
type Loose = {
  get(key: unknown, options?: unknown): Promise<unknown>;
  put(key: unknown, value?: unknown, options?: unknown): Promise<void>;
  delete(key: unknown, options?: unknown): Promise<unknown>;
  deleteAll(options?: unknown): Promise<void>;
  list(options?: unknown): Promise<Map<string, unknown>>;
  getAlarm(options?: unknown): Promise<unknown>;
  setAlarm(time: unknown, options?: unknown): Promise<void>;
  deleteAlarm(options?: unknown): Promise<void>;
  transaction(closure: unknown, options?: unknown): Promise<unknown>;
};
const loose = (s: unknown): Loose => s as Loose;

/** An options object that records each member read (own or inherited) and answers `undefined`. */
function recorder(): { options: object; reads: string[] } {
  const reads: string[] = [];
  const options = new Proxy(
    {},
    {
      get(_target, name) {
        reads.push(String(name));
        return undefined;
      },
    },
  );
  return { options, reads };
}

/** An options object whose member `name` throws `Error(message)` when read. */
function throwing(name: string, message = `read ${name}`): object {
  return Object.defineProperty({}, name, {
    get() {
      throw new Error(message);
    },
    enumerable: true,
  });
}

describe("key-value calls: options members", () => {
  let storage: ObjectStorage;
  beforeEach(async () => {
    storage = await openStorage();
    await storage.put({ a: 1, b: 2, c: 3 });
  });
  afterEach(async () => {
    await storage.close();
  });

  it("every member is read once, in the platform's order (its declaration order), on storage, txn and kv", async () => {
    const s = loose(storage);
    const readsOf = async (call: (options: object) => unknown): Promise<string[]> => {
      const { options, reads } = recorder();
      await Promise.resolve(call(options)).catch(() => undefined);
      return reads;
    };
    const get = ["allowConcurrency", "noCache"];
    const put = ["allowConcurrency", "allowUnconfirmed", "noCache"];
    const range = ["start", "startAfter", "end", "prefix", "reverse", "limit"];
    expect(await readsOf((o) => s.get("a", o))).toEqual(get);
    expect(await readsOf((o) => s.get(["a", "b"], o))).toEqual(get);
    expect(await readsOf((o) => s.put("a", 1, o))).toEqual(put);
    expect(await readsOf((o) => s.put({ a: 1 }, o))).toEqual(put);
    expect(await readsOf((o) => s.delete("a", o))).toEqual(put);
    expect(await readsOf((o) => s.deleteAll(o))).toEqual(put);
    expect(await readsOf((o) => s.list(o))).toEqual([...range, "allowConcurrency", "noCache"]);
    expect(await readsOf((o) => s.getAlarm(o))).toEqual(["allowConcurrency"]);
    expect(await readsOf((o) => s.setAlarm(4102444800000, o))).toEqual(["allowConcurrency", "allowUnconfirmed"]);
    expect(await readsOf((o) => s.deleteAlarm(o))).toEqual(["allowConcurrency", "allowUnconfirmed"]);
    expect(await readsOf((o) => s.transaction(async () => 1, o))).toEqual(["asOfTime", "lowPriority"]);
    expect(await readsOf((o) => [...storage.kv.list(o as never)])).toEqual(range);
    const inTxn: string[][] = [];
    await storage.transaction(async (txn) => {
      const t = loose(txn);
      inTxn.push(await readsOf((o) => t.get("a", o)));
      inTxn.push(await readsOf((o) => t.put("a", 1, o)));
      inTxn.push(await readsOf((o) => t.delete("a", o)));
      inTxn.push(await readsOf((o) => t.list(o)));
      inTxn.push(await readsOf((o) => t.setAlarm(4102444800000, o)));
      txn.rollback();
    });
    expect(inTxn).toEqual([
      get,
      put,
      put,
      [...range, "allowConcurrency", "noCache"],
      ["allowConcurrency", "allowUnconfirmed"],
    ]);
  });

  it("a member whose getter throws refuses the call and nothing takes effect (deleteAll keeps every key)", async () => {
    const s = loose(storage);
    await expect(s.deleteAll(throwing("allowUnconfirmed"))).rejects.toThrow("read allowUnconfirmed");
    await expect(s.put("d", 4, throwing("allowConcurrency"))).rejects.toThrow("read allowConcurrency");
    await expect(s.put({ e: 5 }, throwing("noCache"))).rejects.toThrow("read noCache");
    await expect(s.delete("a", throwing("allowConcurrency"))).rejects.toThrow("read allowConcurrency");
    await expect(s.delete(["a", "b"], throwing("noCache"))).rejects.toThrow("read noCache");
    await expect(s.get("a", throwing("allowConcurrency"))).rejects.toThrow("read allowConcurrency");
    await expect(s.list(throwing("noCache"))).rejects.toThrow("read noCache");
    await expect(s.setAlarm(4102444800000, throwing("allowConcurrency"))).rejects.toThrow("read allowConcurrency");
    expect(Object.fromEntries(await storage.list())).toEqual({ a: 1, b: 2, c: 3 });
    expect(await storage.getAlarm()).toBeNull();
    await storage.transaction(async (txn) => {
      const t = loose(txn);
      await expect(t.put("d", 4, throwing("allowUnconfirmed"))).rejects.toThrow("read allowUnconfirmed");
      await expect(t.delete("a", throwing("noCache"))).rejects.toThrow("read noCache");
    });
    expect(Object.fromEntries(await storage.list())).toEqual({ a: 1, b: 2, c: 3 });
  });

  it("put(entries, options, options3): the entries are read first, then parameter 3, then parameter 2", async () => {
    const order: string[] = [];
    const entries = {
      get x() {
        order.push("entry");
        return 9;
      },
    };
    const options = (name: string) => ({
      get noCache() {
        order.push(name);
        return false;
      },
    });
    await loose(storage).put(entries, options("parameter 2"), options("parameter 3"));
    expect(order).toEqual(["entry", "parameter 3", "parameter 2"]);
    expect(await storage.get("x")).toBe(9);
  });

  it("the key converts before the options are read; the options before put()'s undefined-value check", async () => {
    const s = loose(storage);
    const key = {
      toString() {
        throw new Error("key first");
      },
    };
    await expect(s.get(key, throwing("noCache"))).rejects.toThrow("key first");
    await expect(s.get(["a", key], throwing("noCache"))).rejects.toThrow("key first");
    await expect(s.put("a", undefined, throwing("noCache"))).rejects.toThrow("read noCache");
  });

  it("list() reads a getter once: a range that answers differently the second time is not seen twice", async () => {
    let reads = 0;
    const options = {
      get start() {
        reads++;
        return reads === 1 ? "b" : "zzz";
      },
    };
    expect([...(await storage.list(options)).keys()]).toEqual(["b", "c"]);
    expect(reads).toBe(1);
  });

  it("transaction() options: asOfTime converts as a date member, with the platform's errors", async () => {
    const s = loose(storage);
    const run = (options: unknown) => s.transaction(async () => "ran", options);
    await expect(run({ asOfTime: 5, lowPriority: "yes" })).resolves.toBe("ran");
    await expect(run({ asOfTime: new Date(5) })).resolves.toBe("ran");
    await expect(run({ asOfTime: "2020-01-01" })).rejects.toThrow(
      new TypeError(
        "Incorrect type for the 'asOfTime' field on 'TransactionOptions': the provided value is not of type 'date'.",
      ),
    );
    await expect(run({ asOfTime: Number.NaN })).rejects.toThrow(
      new TypeError("The value cannot be converted because it is not a valid Date."),
    );
    await expect(run({ asOfTime: 1e20 })).rejects.toThrow(new TypeError("This API doesn't support dates after 2189."));
    await expect(run(throwing("lowPriority"))).rejects.toThrow("read lowPriority");
  });
});

describe("key-value calls: keys", () => {
  let storage: ObjectStorage;
  beforeEach(async () => {
    storage = await openStorage();
    await storage.put({ a: 1, undefined: 2, c: 3 });
  });
  afterEach(async () => {
    await storage.close();
  });

  it("a hole in a key array reads as undefined, the key 'undefined' (it failed with an internal TypeError)", async () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    const withHole = ["a", , "zz"];
    expect(Object.fromEntries((await loose(storage).get(withHole)) as Map<string, unknown>)).toEqual({
      a: 1,
      undefined: 2,
    });
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    expect(await loose(storage).delete(["zz", , "c"])).toBe(2);
    expect([...(await storage.list()).keys()]).toEqual(["a"]);
  });

  it("a Proxy of an array is one key (its string), as V8's IsArray says no to a Proxy", async () => {
    const proxy = new Proxy(["a"], {});
    expect(await loose(storage).get(proxy)).toBe(1);
    expect(await loose(storage).delete(new Proxy(["c"], {}))).toBe(true);
  });

  it("a function with properties is an entries object; put(function, value) is refused as entries with a value", async () => {
    const s = loose(storage);
    await s.put(Object.assign(() => 0, { fromFunction: 7 }));
    expect(await storage.get("fromFunction")).toBe(7);
    await expect(s.put(() => 0, 1)).rejects.toThrow(/^put\(\) may only be called with a single key-value pair/);
    expect([...(await storage.list()).keys()]).toEqual(["a", "c", "fromFunction", "undefined"]);
  });
});
