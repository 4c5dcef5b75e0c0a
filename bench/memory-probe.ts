/**
 * Peak and settled memory of one system holding N keys of 100-byte values, measured in a fresh
 * process so that nothing else the suite did is counted. Prints one JSON line (`MemoryProbeResult`).
 *
 *   node --expose-gc --import tsx bench/memory-probe.ts <system> [keys=100000] [cacheSoftLimitBytes]
 *
 * The baseline is taken after the empty store is open (sql.js's WASM module, workerd's process),
 * so the numbers are what the data costs. workerd runs in its own processes: its RSS comes from
 * /proc (Linux) and its heap is not visible.
 */

import { coreOf } from "../src/storage/object-storage";
import type { MemoryProbeResult } from "./lib/memory";
import { openActorstore, openActorstoreFile } from "./systems/actorstore";
import { openMiniflare2 } from "./systems/miniflare2";
import { openRawSqlJs } from "./systems/raw-sqljs";
import type { BenchSystem } from "./systems/system";
import { openWorkerd, workerdResidentBytes } from "./systems/workerd";

const gc = (globalThis as { gc?: () => void }).gc;
function settle(): void {
  if (gc === undefined) throw new Error("run with --expose-gc");
  for (let i = 0; i < 3; i++) gc();
}

const system = process.argv[2] ?? "actorstore";
const keys = Number(process.argv[3] ?? 100_000);
const value = "v".repeat(100);
/** actorstore only: the read cache's soft limit (default: the library's, 16 MiB). */
const cacheSoftLimitBytes = process.argv[4] === undefined ? undefined : Number(process.argv[4]);

interface Sample {
  rss: number;
  heap: number;
}
const inProcess = (): Sample => {
  const m = process.memoryUsage();
  // external covers ArrayBuffers, WebAssembly memories (sql.js's heap) and Buffers.
  return { rss: m.rss, heap: m.heapUsed + m.external };
};

let store: BenchSystem;
let sample: () => Promise<Sample>;
let trim: () => Promise<void> = async () => {};
let cacheBytes: () => number | undefined = () => undefined;
let note = "";
if (system === "actorstore" || system === "actorstore-file") {
  const options = cacheSoftLimitBytes === undefined ? {} : { cacheSoftLimitBytes };
  const opened = system === "actorstore" ? await openActorstore(options) : await openActorstoreFile(options);
  store = opened;
  sample = async () => inProcess();
  const cache = coreOf(opened.storage).cache;
  trim = async () => cache.trim();
  cacheBytes = () => cache.bytes;
  note =
    system === "actorstore"
      ? "in-memory persistence (the default): the log and snapshots are kept in this process too"
      : "file persistence: the log and snapshots are on disk";
  if (cacheSoftLimitBytes !== undefined) note += `; cache soft limit ${cacheSoftLimitBytes} bytes`;
} else if (system === "miniflare2") {
  store = await openMiniflare2();
  sample = async () => inProcess();
} else if (system === "raw-sqljs") {
  store = await openRawSqlJs();
  sample = async () => inProcess();
} else if (system === "workerd") {
  store = await openWorkerd();
  sample = async () => ({ rss: (await workerdResidentBytes()) ?? Number.NaN, heap: Number.NaN });
  note = "RSS of the workerd processes; their heap is not visible from Node";
} else {
  throw new Error(`unknown system ${system}`);
}

// The workerd object exists only after its first request: an empty fill creates it.
await store.fillKeys(0, 0, value);
settle();
const baseline = await sample();
let peakRss = baseline.rss;
const step = 10_000;
for (let from = 0; from < keys; from += step) {
  await store.fillKeys(from, Math.min(keys, from + step), value);
  peakRss = Math.max(peakRss, (await sample()).rss);
}
await trim();
settle();
const after = await sample();
peakRss = Math.max(peakRss, after.rss);
const rawBytes = keys * (12 + value.length);
const result: MemoryProbeResult = {
  system: store.name,
  keys,
  rawBytes,
  rssBytes: after.rss - baseline.rss,
  peakRssBytes: peakRss - baseline.rss,
  heapBytes: after.heap - baseline.heap,
  cacheBytes: cacheBytes(),
  note,
};
await store.close();
console.log(JSON.stringify(result));
