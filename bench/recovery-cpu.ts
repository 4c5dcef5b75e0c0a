/**
 * CPU time of opening a directory, for paired comparisons between two checkouts (wall time on a
 * loaded shared machine varies far more than CPU time). Run from any checkout; `<repo>` is the
 * checkout whose code is measured, so one script measures an older commit too:
 *
 *   npx tsx bench/recovery-cpu.ts <repo> build <dir>        10 MB database, snapshot, 10,000 one-put batches
 *   npx tsx bench/recovery-cpu.ts <repo> build-small <dir>  100 keys
 *   npx tsx bench/recovery-cpu.ts <repo> build-growth <dir> 150  the growth workload (bench/growth.ts) to 150 MB
 *   npx tsx bench/recovery-cpu.ts <repo> snapshot <dir>     opens the directory and writes a snapshot of
 *                                                           its newest state (an open then replays nothing)
 *   npx tsx bench/recovery-cpu.ts <repo> recovery <dir> 5   median CPU ms of ObjectStorage.open() (5 rounds)
 *   npx tsx bench/recovery-cpu.ts <repo> open-close <dir> 30  median CPU ms of open + close (30 rounds)
 *   npx tsx bench/recovery-cpu.ts <repo> versus-raw <dir> 3    per round: ObjectStorage.open() and raw
 *                                                               sql.js opening the newest snapshot read
 *                                                               from disk, CPU and wall ms, and the ratios
 *
 * Build a directory per checkout (their formats may differ), then alternate the two checkouts'
 * measuring processes (A B A B …) and take the median of the pairs' ratios. Two warm-up rounds are
 * not counted. CPU time is `process.cpuUsage()` (user + system, every thread of the process).
 */
import { mkdir, readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { SQLJS_NATIVE_FUNCTIONS } from "./lib/sqljs-config";

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
  throw new Error(
    "usage: recovery-cpu.ts <repo> build|build-small|build-growth|snapshot|recovery|open-close|versus-raw <dir> [n]",
  );
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
} else if (mode === "build-growth") {
  // bench/growth.ts's workload (100 puts of new keys with 1,000-byte values, then sync()), with
  // the storage's own snapshot rule, to `n` MB of database; fdatasync off to build it faster.
  const target = Number(roundsArg ?? 150) * 1_000_000;
  await mkdir(directory, { recursive: true });
  const adapter = await api.openFilePersistence(directory, { allowUnsyncedWrites: true });
  const storage = await api.ObjectStorage.open({ persistence: adapter });
  const value = new Uint8Array(1000).fill(0x61);
  let keys = 0;
  while (storage.sql.databaseSize < target) {
    for (let j = 0; j < 100; j++) void storage.put(key(keys++), value);
    await storage.sync();
  }
  await storage.close();
  await adapter.close();
} else if (mode === "snapshot") {
  const adapter = await api.openFilePersistence(directory, { allowUnsyncedWrites: true });
  const storage = await api.ObjectStorage.open({ persistence: adapter, snapshotEveryRecords: NO_AUTOMATIC_SNAPSHOTS });
  await (await coreOf(storage)).snapshot();
  await storage.close();
  await adapter.close();
} else if (mode === "versus-raw") {
  // Raw sql.js as bench/growth.ts measures it: readFile of the newest snapshot, new Database().
  const { default: initSqlJs } = await import("sql.js");
  const SQL = await initSqlJs(SQLJS_NATIVE_FUNCTIONS);
  // Load the engine (WASM and its checks) before timing, as raw sql.js's module is loaded above.
  const warm = await api.ObjectStorage.open({ persistence: await api.openFilePersistence(`${directory}-warm`) });
  await warm.close();
  const rounds = Number(roundsArg ?? 3);
  for (let r = 0; r < rounds; r++) {
    const adapter = await api.openFilePersistence(directory);
    let cpu = cpuMs();
    let wall = performance.now();
    const storage = await api.ObjectStorage.open({
      persistence: adapter,
      snapshotEveryRecords: NO_AUTOMATIC_SNAPSHOTS,
    });
    const openCpu = cpuMs() - cpu;
    const openWall = performance.now() - wall;
    if ((await storage.get(key(0))) === undefined) throw new Error("recovery lost data: key 0 is missing");
    await storage.close();
    await adapter.close();
    const names = (await readdir(directory)).filter((n) => n.startsWith("snap-") && n.endsWith(".sqlite")).sort();
    cpu = cpuMs();
    wall = performance.now();
    const bytes = await readFile(join(directory, names[names.length - 1] as string));
    const db = new SQL.Database(bytes);
    const rawCpu = cpuMs() - cpu;
    const rawWall = performance.now() - wall;
    db.close();
    console.log(
      `open ${openCpu.toFixed(0)} ms CPU ${openWall.toFixed(0)} ms wall; raw sql.js (${(bytes.length / 1e6).toFixed(0)} MB) ${rawCpu.toFixed(0)} ms CPU ${rawWall.toFixed(0)} ms wall; ratio ${(openCpu / rawCpu).toFixed(2)}x CPU ${(openWall / rawWall).toFixed(2)}x wall`,
    );
  }
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
