/**
 * CPU time of opening a directory, for paired comparisons between two checkouts (wall time on a
 * loaded shared machine varies far more than CPU time). Run from any checkout; `<repo>` is the
 * checkout whose code is measured, so one script measures an older commit too:
 *
 *   npx tsx bench/recovery-cpu.ts <repo> build <dir>        10 MB database, snapshot, 10,000 one-put batches
 *   npx tsx bench/recovery-cpu.ts <repo> build-small <dir>  100 keys
 *   npx tsx bench/recovery-cpu.ts <repo> recovery <dir> 5   median CPU ms of ObjectStorage.open() (5 rounds)
 *   npx tsx bench/recovery-cpu.ts <repo> open-close <dir> 30  median CPU ms of open + close (30 rounds)
 *
 * Build a directory per checkout (their formats may differ), then alternate the two checkouts'
 * measuring processes (A B A B …) and take the median of the pairs' ratios. Two warm-up rounds are
 * not counted. CPU time is `process.cpuUsage()` (user + system, every thread of the process).
 */
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";

interface Storage {
  sql: { databaseSize: number };
  put(entries: Record<string, unknown> | string, value?: unknown): Promise<void>;
  get(key: string): Promise<unknown>;
  sync(): Promise<void>;
  close(): Promise<void>;
}
interface Adapter {
  close(): Promise<void>;
}
interface Api {
  ObjectStorage: { open(options: { persistence: Adapter; snapshotEveryRecords?: number }): Promise<Storage> };
  openFilePersistence(directory: string, options?: { allowUnsyncedWrites?: boolean }): Promise<Adapter>;
}

const [repoArg, mode, directory, roundsArg] = process.argv.slice(2);
if (repoArg === undefined || mode === undefined || directory === undefined)
  throw new Error("usage: recovery-cpu.ts <repo> build|build-small|recovery|open-close <dir> [rounds]");
const repo = resolve(repoArg);
const api = (await import(`${repo}/src/index.ts`)) as Api;
/** Older checkouts expose the core as `storage.core`, newer ones through `coreOf(storage)`. */
const coreOf = async (storage: Storage): Promise<{ snapshot(): Promise<void> }> => {
  const own = (storage as unknown as { core?: { snapshot(): Promise<void> } }).core;
  if (own !== undefined) return own;
  const module = (await import(`${repo}/src/storage/object-storage.ts`)) as {
    coreOf(s: Storage): { snapshot(): Promise<void> };
  };
  return module.coreOf(storage);
};

const NO_AUTOMATIC_SNAPSHOTS = 1_000_000_000;
const key = (i: number): string => `key-${String(i).padStart(8, "0")}`;
const VALUE = "v".repeat(100);
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

if (mode === "build") {
  // The scenario of bench/lib/durability-costs.ts: fill to 10 MB, snapshot, 10,000 one-put batches.
  await mkdir(directory, { recursive: true });
  const adapter = await api.openFilePersistence(directory, { allowUnsyncedWrites: true });
  const storage = await api.ObjectStorage.open({ persistence: adapter, snapshotEveryRecords: NO_AUTOMATIC_SNAPSHOTS });
  let keys = 0;
  while (storage.sql.databaseSize < 10_000_000) {
    for (let b = 0; b < 10_000; b += 128) {
      const entries: Record<string, unknown> = {};
      for (let i = 0; i < 128; i++) entries[key(keys++)] = VALUE;
      void storage.put(entries);
    }
    await storage.sync();
  }
  await (await coreOf(storage)).snapshot();
  for (let i = 0; i < 10_000; i++) {
    void storage.put(key((i * 7919) % keys), VALUE);
    await storage.sync();
  }
  await storage.close();
  await adapter.close();
} else if (mode === "build-small") {
  await mkdir(directory, { recursive: true });
  const adapter = await api.openFilePersistence(directory);
  const storage = await api.ObjectStorage.open({ persistence: adapter });
  for (let i = 0; i < 100; i++) void storage.put(key(i), VALUE);
  await storage.sync();
  await storage.close();
  await adapter.close();
} else if (mode === "recovery" || mode === "open-close") {
  const rounds = Number(roundsArg ?? 5);
  const measured: number[] = [];
  for (let r = 0; r < rounds + 2; r++) {
    const adapter = await api.openFilePersistence(directory);
    const start = cpuMs();
    const storage = await api.ObjectStorage.open({
      persistence: adapter,
      snapshotEveryRecords: NO_AUTOMATIC_SNAPSHOTS,
    });
    if (mode === "open-close") {
      await storage.close();
      await adapter.close();
    }
    const spent = cpuMs() - start;
    if (mode === "recovery") {
      // A fast open that lost the data would be no result.
      if ((await storage.get(key(0))) === undefined) throw new Error("recovery lost data: key 0 is missing");
      await storage.close();
      await adapter.close();
    }
    if (r >= 2) measured.push(spent);
  }
  console.log(median(measured).toFixed(3));
} else throw new Error(`unknown mode ${mode}`);
