/**
 * A fenced adapter means another holder owns the object now: the object context must drop the
 * object (every later event fails with ERR_FENCED) instead of reloading it, which would claim the
 * object back from its new holder.
 */
import { describe, expect, it } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { DelegatingPersistence } from "../../src/durability/delegating-persistence";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import { fencedError, isFencedError, type LoadResult } from "../../src/durability/persistence";
import { ObjectContext } from "../../src/index";
import { FakeClock } from "../../src/util/clock";

class FencingPersistence extends DelegatingPersistence {
  fenced = false;
  loads = 0;
  override load(): Promise<LoadResult> {
    this.loads++;
    if (this.fenced) return Promise.reject(fencedError("test", 1, 2));
    return super.load();
  }
  override append(records: readonly CommitRecord[]): Promise<void> {
    if (this.fenced) return Promise.reject(fencedError("test", 1, 2));
    return super.append(records);
  }
}

class Counter {
  constructor(
    readonly state: { storage: { put(k: string, v: unknown): Promise<void>; get(k: string): Promise<unknown> } },
  ) {}
  async bump(): Promise<number> {
    const n = ((await this.state.storage.get("n")) as number | undefined) ?? 0;
    await this.state.storage.put("n", n + 1);
    return n + 1;
  }
}

describe("a fenced object is dropped, not reloaded", () => {
  it("isFencedError finds the code on the error or in its cause chain", () => {
    const fenced = fencedError("s3://b/p/", 3, 4);
    expect(fenced.code).toBe("ERR_FENCED");
    expect(fenced.message).toContain("epoch 3");
    expect(isFencedError(fenced)).toBe(true);
    expect(isFencedError(new Error("write failed", { cause: new Error("x", { cause: fenced }) }))).toBe(true);
    expect(isFencedError(new Error("other"))).toBe(false);
    expect(isFencedError(null)).toBe(false);
  });

  it("after a fenced append, every later event rejects with ERR_FENCED and the adapter is never loaded again", async () => {
    const persistence = new FencingPersistence(createMemoryPersistence());
    const context = await ObjectContext.create(Counter as never, {
      storage: { persistence },
      clock: new FakeClock(),
      alarms: false,
    });
    expect(await context.call("bump")).toBe(1);
    const loadsBefore = persistence.loads;
    persistence.fenced = true;
    const failed = await context.call("bump").then(
      () => null,
      (e: unknown) => e,
    );
    expect(isFencedError(failed)).toBe(true);
    for (let i = 0; i < 3; i++) {
      const again = await context.call("bump").then(
        () => null,
        (e: unknown) => e,
      );
      expect(isFencedError(again)).toBe(true);
    }
    expect(persistence.loads).toBe(loadsBefore);
    await context.close();
  });
});

describe("a fenced file writer is dropped the same way", () => {
  it("a directory whose lock was taken over: the object context fails with ERR_FENCED and never reloads", async () => {
    const { mkdtemp, readdir, readFile, rm, writeFile } = await import("node:fs/promises");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const { openFilePersistence } = await import("../../src/durability/file-persistence");
    const dir = await mkdtemp(join(tmpdir(), "actorstore-fenced-file-"));
    const persistence = new FencingPersistence(await openFilePersistence(dir, { allowUnsyncedWrites: true }));
    const context = await ObjectContext.create(Counter as never, {
      storage: { persistence },
      clock: new FakeClock(),
      alarms: false,
    });
    expect(await context.call("bump")).toBe(1);
    const loadsBefore = persistence.loads;
    // Another process takes the directory's lock over (the next generation of the lock).
    const mine = (await readdir(dir))
      .filter((n) => /^lock-\d{16}$/.test(n))
      .sort()
      .at(-1) as string;
    const next = `lock-${String(Number(mine.slice(5)) + 1).padStart(16, "0")}`;
    await writeFile(join(dir, next), await readFile(join(dir, mine)));
    for (let i = 0; i < 3; i++) {
      const failed = await context.call("bump").then(
        () => null,
        (e: unknown) => e,
      );
      expect(isFencedError(failed)).toBe(true);
    }
    expect(persistence.loads).toBe(loadsBefore);
    await context.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });
});
