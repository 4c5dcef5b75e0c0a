import { describe, expect, it } from "vitest";
import { FaultyPersistence } from "../../src/durability/faulty-persistence";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import { kvRecord } from "./adapter-contract";

async function setup(): Promise<FaultyPersistence> {
  const faulty = new FaultyPersistence(createMemoryPersistence());
  await faulty.load();
  return faulty;
}

describe("FaultyPersistence", () => {
  it("failNextAppend: fails that append, and every later one until load()", async () => {
    const faulty = await setup();
    await faulty.append([kvRecord(1)]);
    faulty.failNextAppend();
    await expect(faulty.append([kvRecord(2)])).rejects.toThrow(/Injected failure in append/);
    await expect(faulty.append([kvRecord(2)])).rejects.toMatchObject({ code: "ERR_WRITE_FAILED" });
    const loaded = await faulty.load();
    expect(loaded.lastSeq).toBe(1); // "before-write": the batch was never stored
    await faulty.append([kvRecord(2)]);
    expect(faulty.appendCalls).toBe(4);
  });

  it("failAppendAt: counts from now; after-write stores the batch but reports failure", async () => {
    const faulty = await setup();
    const boom = new Error("disk full");
    faulty.failWith(boom).failAppendAt(2, { point: "after-write" });
    await faulty.append([kvRecord(1)]);
    await expect(faulty.append([kvRecord(2)])).rejects.toBe(boom);
    expect((await faulty.load()).lastSeq).toBe(2);
  });

  it("failSnapshots / failMetaWrites / failLoads: fail until healed", async () => {
    const faulty = await setup();
    await faulty.append([kvRecord(1)]);
    faulty.failSnapshots().failMetaWrites().failLoads(1);
    await expect(faulty.writeSnapshot({ seq: 1, timeMs: 0 }, new Uint8Array(1))).rejects.toThrow(/writeSnapshot/);
    await expect(faulty.writeMetaIf(0, new Uint8Array(1))).rejects.toThrow(/writeMetaIf/);
    await expect(faulty.load()).rejects.toThrow(/load/);
    faulty.heal();
    await faulty.writeSnapshot({ seq: 1, timeMs: 0 }, new Uint8Array(1));
    expect(await faulty.writeMetaIf(0, new Uint8Array(1))).toBe(true);
    expect((await faulty.load()).snapshots).toHaveLength(1);
    await faulty.append([kvRecord(2)]); // appends were never poisoned
  });

  it("holdAppends: appends wait until released, then complete in order", async () => {
    const faulty = await setup();
    const release = faulty.holdAppends();
    let done = 0;
    const a = faulty.append([kvRecord(1)]).then(() => done++);
    const b = faulty.append([kvRecord(2)]).then(() => done++);
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(0);
    release();
    await Promise.all([a, b]);
    expect((await faulty.readRecords(0, 2)).map((r) => r.seq)).toEqual([1, 2]);
  });
});
