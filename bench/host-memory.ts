/**
 * Memory of an object host that touches many objects once each (one write per object), in a fresh
 * process so that nothing else is counted:
 *
 *   node --expose-gc --import tsx bench/host-memory.ts [objects=10000] [activeSet=100] [mode=directory]
 *
 * mode:
 *   directory     a directory per object, evicted after each batch of `activeSet` objects (the
 *                 active set); memory should stay flat after the first batches
 *   memory        in-memory persistence per object, evicted the same way: the engines are closed but
 *                 every object's log stays in memory (memoryPerObject), so memory grows with the total
 *   no-eviction   a directory per object, never evicted: every engine stays open (the active set is
 *                 everything touched); run it with fewer objects
 *
 * Samples after every `objects / 10` objects: JS heap + external (ArrayBuffers and the one sql.js
 * WebAssembly memory, which grows but never shrinks), the ArrayBuffer share of it, and the resident set.
 * Prints one JSON line at the end (`HostMemoryResult`), including a last sample after every object was
 * evicted (what stays: the sql.js heap keeps the size it reached).
 *
 * `bench/host-run.ts` runs the three modes and writes bench/results/host-memory.{json,md}.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DurableObject } from "../src/context/durable-object";
import { ObjectHost } from "../src/host/object-host";
import { directoryPerObject, memoryPerObject } from "../src/host/options";
import { FakeClock } from "../src/util/clock";

const gc = (globalThis as { gc?: () => void }).gc;
function settle(): void {
  if (gc === undefined) throw new Error("run with --expose-gc");
  for (let i = 0; i < 3; i++) gc();
}

class Touched extends DurableObject {
  async touch(value: string): Promise<number> {
    await this.ctx.storage.put("value", value);
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v TEXT)");
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO t VALUES (1, ?)", value);
    return value.length;
  }
}

/** One sample along the run. */
export interface HostMemorySample {
  objects: number;
  live: number;
  heapPlusExternalBytes: number;
  arrayBufferBytes: number;
  rssBytes: number;
}

/** What the probe prints. */
export interface HostMemoryResult {
  mode: string;
  objects: number;
  activeSet: number;
  seconds: number;
  baseline: HostMemorySample;
  samples: HostMemorySample[];
  evictions: number;
  /** After evicting every object at the end: what the process keeps. */
  afterEvictingAll: HostMemorySample;
}

const objects = Number(process.argv[2] ?? 10_000);
const activeSet = Number(process.argv[3] ?? 100);
const mode = process.argv[4] ?? "directory";
if (!["directory", "memory", "no-eviction"].includes(mode)) throw new Error(`unknown mode ${mode}`);

const root = await mkdtemp(join(tmpdir(), "actorstore-host-bench-"));
const clock = new FakeClock();
const host = new ObjectHost({
  namespaces: { OBJ: Touched },
  clock,
  idleTimeoutMs: mode === "no-eviction" ? Number.POSITIVE_INFINITY : 10_000,
  persistence: mode === "memory" ? memoryPerObject() : directoryPerObject(root),
});

function sample(done: number): HostMemorySample {
  settle();
  const m = process.memoryUsage();
  return {
    objects: done,
    live: host.stats().live,
    heapPlusExternalBytes: m.heapUsed + m.external,
    arrayBufferBytes: m.arrayBuffers,
    rssBytes: m.rss,
  };
}

// The baseline: sql.js loaded and one object opened and evicted, so the numbers are what objects cost.
await host.env.OBJ.getByName("warm-up").touch("x");
await host.evictIdle();
const baseline = sample(0);
const samples: HostMemorySample[] = [];
const value = "v".repeat(100);
const started = performance.now();
const every = Math.max(1, Math.floor(objects / 10));
for (let done = 0; done < objects; ) {
  const batch: Array<Promise<number>> = [];
  for (let i = 0; i < activeSet && done < objects; i++, done++) {
    batch.push(host.env.OBJ.getByName(`object-${done}`).touch(value));
  }
  await Promise.all(batch);
  // The batch goes idle: past the idle time, the host evicts it (closing every engine).
  if (mode !== "no-eviction") {
    await clock.advance(10_000);
    await host.settled();
  }
  if (done % every < activeSet || done === objects) samples.push(sample(done));
}
const seconds = (performance.now() - started) / 1000;
await host.evictIdle();
const afterEvictingAll = sample(objects);
const evictions = host.stats().evictions;
await host.close();
await rm(root, { recursive: true, force: true });
const result: HostMemoryResult = { mode, objects, activeSet, seconds, baseline, samples, evictions, afterEvictingAll };
console.log(JSON.stringify(result));
