/**
 * A restore request whose metadata write fails may have been stored all the same: a file renamed
 * into place whose directory fsync then failed, a request whose answer was lost. The next session
 * may then apply it. Regression: onNextSessionRestoreBookmark rejected, the session carried on and
 * confirmed more writes, and the next session applied the request the caller had been told failed,
 * undoing those confirmed writes. Now the storage breaks as after a failed commit (the object is
 * reset): the request rejects with the platform's reset error and nothing more is confirmed.
 */
import { join } from "node:path";
import { afterAll, describe, expect, test, vi } from "vitest";

/** When set, the next fsync of a directory fails with EIO (the rename before it has landed). */
const fault = { dirSyncFails: false };
vi.mock("node:fs/promises", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs/promises")>();
  const open: typeof fs.open = async (...args) => {
    const handle = await fs.open(...args);
    const path = String(args[0]);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      if (fault.dirSyncFails && (await fs.stat(path)).isDirectory()) {
        fault.dirSyncFails = false;
        throw Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
      }
      return sync();
    };
    return handle;
  };
  const mocked = { ...fs, open };
  return { ...mocked, default: mocked };
});

const { mkdtemp, readdir, rm } = await import("node:fs/promises");
const { tmpdir } = await import("node:os");
const { DelegatingPersistence } = await import("../../src/durability/delegating-persistence");
const { openFilePersistence } = await import("../../src/durability/file-persistence");
const { createMemoryPersistence } = await import("../../src/durability/memory-persistence");
const { coreOf, ObjectStorage } = await import("../../src/storage/object-storage");
const { WRITE_FAILED_MESSAGE } = await import("../../src/storage/core-settings");
const { FakeClock } = await import("../../src/util/clock");
type Storage = Awaited<ReturnType<typeof ObjectStorage.open>>;

const root = await mkdtemp(join(tmpdir(), "actorstore-restore-request-fault-"));
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Error) return e;
    throw new Error(`rejected with a non-Error: ${String(e)}`);
  }
  throw new Error("expected a rejection, but the promise resolved");
}

/**
 * k = 1 (bookmarked), k = 2, then a restore request to k = 1 whose metadata write fails (`arm`
 * makes it fail), then k = 3. Returns the error of the request and of the write after it.
 */
async function requestThatFails(storage: Storage, clock: InstanceType<typeof FakeClock>, arm: () => void) {
  await storage.put("k", 1);
  await storage.sync();
  const bookmark = await storage.getCurrentBookmark();
  await clock.advance(10);
  await storage.put("k", 2);
  await storage.sync();
  arm();
  const request = await rejection(storage.onNextSessionRestoreBookmark(bookmark));
  const later = await rejection(
    (async () => {
      await storage.put("k", 3);
      await storage.sync();
    })(),
  );
  return { request, later };
}

describe("a restore request whose metadata write fails", () => {
  test("file adapter: the meta file was renamed into place, then the directory fsync failed: the storage resets, nothing later is confirmed", async () => {
    const directory = join(root, "file");
    const clock = new FakeClock(1_700_000_000_000);
    const open = async () => ObjectStorage.open({ persistence: await openFilePersistence(directory), clock });
    const storage = await open();
    const { request, later } = await requestThatFails(storage, clock, () => {
      fault.dirSyncFails = true;
    });
    expect(fault.dirSyncFails).toBe(false); // the fault was hit
    expect(await readdir(directory)).toContain("meta"); // and the request landed all the same
    expect(request.message).toBe(WRITE_FAILED_MESSAGE);
    expect(request.cause).toMatchObject({ code: "EIO" });
    // k = 3 was never confirmed, so the restore the next session applies undoes nothing confirmed.
    expect(later).toBe(request);
    await storage.close().catch(() => {});
    const next = await open();
    expect(await next.get("k")).toBe(1);
    await next.close();
  });

  test("any adapter: a write that landed but reported failure (a lost answer) resets the storage too", async () => {
    class LostAnswer extends DelegatingPersistence {
      lose = false;
      override async writeMetaIf(version: number, bytes: Uint8Array | null): Promise<boolean> {
        const written = await super.writeMetaIf(version, bytes);
        if (this.lose) throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
        return written;
      }
    }
    const clock = new FakeClock(1_700_000_000_000);
    const persistence = new LostAnswer(createMemoryPersistence());
    const storage = await ObjectStorage.open({ persistence, clock });
    const { request, later } = await requestThatFails(storage, clock, () => {
      persistence.lose = true;
    });
    expect(request).toMatchObject({ message: WRITE_FAILED_MESSAGE, cause: { code: "ECONNRESET" } });
    expect(later).toBe(request);
    storage.abort();
    await coreOf(storage).settled();
    persistence.lose = false;
    const next = await ObjectStorage.open({ persistence, clock });
    expect(await next.get("k")).toBe(1);
    await next.close();
  });
});
