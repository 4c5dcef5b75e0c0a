import type {
  DurableObjectStorage,
  DurableObjectTransaction,
  SqlStorage as PlatformSqlStorage,
  SyncKvStorage as PlatformSyncKvStorage,
} from "@cloudflare/workers-types";
import { describe, expect, expectTypeOf, it } from "vitest";
import { ObjectStorage } from "../../../src/storage/object-storage";
import type { ObjectTransaction } from "../../../src/storage/transaction";

describe("types", () => {
  it("ObjectStorage: is assignable to the platform's DurableObjectStorage", async () => {
    const storage = await ObjectStorage.open();
    const platform: DurableObjectStorage = storage;
    expect(platform).toBe(storage);
    expectTypeOf<ObjectStorage>().toExtend<DurableObjectStorage>();
    expectTypeOf(storage.sql).toExtend<PlatformSqlStorage>();
    expectTypeOf(storage.kv).toExtend<PlatformSyncKvStorage>();
    await storage.close();
  });

  it("ObjectTransaction: is assignable to the platform's DurableObjectTransaction", async () => {
    const storage = await ObjectStorage.open();
    await storage.transaction(async (txn) => {
      const platform: DurableObjectTransaction = txn;
      expect(platform).toBe(txn);
    });
    expectTypeOf<ObjectTransaction>().toExtend<DurableObjectTransaction>();
    await storage.close();
  });

  it("transaction: accepts a closure written against the platform's transaction type", async () => {
    const storage = await ObjectStorage.open();
    const closure = async (txn: DurableObjectTransaction): Promise<number> => {
      await txn.put("n", 1);
      return (await txn.get<number>("n")) ?? 0;
    };
    const platform: DurableObjectStorage = storage;
    expect(await platform.transaction(closure)).toBe(1);
    expect(await storage.transaction(closure)).toBe(1);
    await storage.close();
  });

  it("ObjectStorage: its overloads give the platform's result types", () => {
    expectTypeOf<ReturnType<ObjectStorage["sync"]>>().toEqualTypeOf<Promise<void>>();
    expectTypeOf<ReturnType<ObjectStorage["deleteAll"]>>().toEqualTypeOf<Promise<void>>();
    expectTypeOf<ReturnType<ObjectStorage["getAlarm"]>>().toEqualTypeOf<Promise<number | null>>();
    const get = (s: ObjectStorage) => s.get<number>(["a"]);
    expectTypeOf(get).returns.toEqualTypeOf<Promise<Map<string, number>>>();
    const getOne = (s: ObjectStorage) => s.get<number>("a");
    expectTypeOf(getOne).returns.toEqualTypeOf<Promise<number | undefined>>();
    const del = (s: ObjectStorage) => s.delete(["a"]);
    expectTypeOf(del).returns.toEqualTypeOf<Promise<number>>();
    const delOne = (s: ObjectStorage) => s.delete("a");
    expectTypeOf(delOne).returns.toEqualTypeOf<Promise<boolean>>();
  });
});
