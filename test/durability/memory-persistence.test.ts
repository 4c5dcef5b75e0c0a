import { describe, expect, it } from "vitest";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import { loadWithRecords } from "../../src/durability/persistence";
import { encodeRecord } from "../../src/durability/record-codec";
import { describeAdapterContract, kvRecord, range } from "./adapter-contract";

describeAdapterContract("memory", async () => {
  const adapter = createMemoryPersistence();
  return {
    adapter,
    async reopen() {
      // An object reset within the process passes the same instance again.
      await adapter.close();
      return adapter;
    },
  };
});

describe("MemoryPersistence", () => {
  it("stats: counts log bytes exactly as the file format would", async () => {
    const adapter = createMemoryPersistence();
    await adapter.load();
    const records = range(1, 20).map((s) => kvRecord(s));
    await adapter.append(records);
    const expected = records.reduce((n, r) => n + encodeRecord(r).length, 0);
    expect(adapter.stats()).toEqual({ records: 20, logBytes: expected, snapshots: 0, snapshotBytes: 0 });
    await adapter.writeSnapshot({ seq: 10, timeMs: 0 }, new Uint8Array(100));
    await adapter.prune(10);
    const kept = records.slice(10).reduce((n, r) => n + encodeRecord(r).length, 0);
    expect(adapter.stats()).toEqual({ records: 10, logBytes: kept, snapshots: 1, snapshotBytes: 100 });
  });

  it("close: keeps the data; load() reopens", async () => {
    const adapter = createMemoryPersistence();
    await adapter.load();
    await adapter.append([kvRecord(1)]);
    await adapter.close();
    await expect(adapter.append([kvRecord(2)])).rejects.toMatchObject({ code: "ERR_CLOSED" });
    expect((await loadWithRecords(adapter)).records).toEqual([kvRecord(1)]);
  });
});
