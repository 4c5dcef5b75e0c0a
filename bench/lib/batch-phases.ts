/**
 * Where a growth batch's time goes (`npx tsx bench/growth.ts --quick --breakdown`): the batch's
 * wall time split into time the event loop was busy (CPU on the loop, `eventLoopUtilization`) and
 * time it was idle (waiting for I/O: the log's write and `fdatasync` run on libuv's thread pool),
 * and the busy part into the phases the bench can see from outside: the 100 `put()` calls, the
 * commit (`StorageCore.commitNow`: the rows into SQLite, `COMMIT`, the log record encoded by the
 * adapter's `append`, the cache move), snapshot copy steps landing in the batch, and GC pauses (GC
 * runs inside the other phases, so it overlaps them). The I/O side: wall time of the log's
 * `write` and `fdatasync` calls. Every hook is installed by the bench only; nothing in src/ knows.
 */
import type { FileHandle } from "node:fs/promises";
import { open, rm } from "node:fs/promises";
import { constants, PerformanceObserver, performance } from "node:perf_hooks";
import type { PersistenceAdapter } from "../../src/durability/persistence";
import { SqlJsEngine } from "../../src/engine/sqljs-engine";
import { PagedFile } from "../../src/engine/sqljs-paged-file";
import { KvCache } from "../../src/storage/kv-cache";
import { KvTable } from "../../src/storage/kv-table";
import { StorageCore } from "../../src/storage/storage-core";

/** One batch's phases, milliseconds. */
export interface BatchPhases {
  totalMs: number;
  /** Event loop busy (not waiting in the poll phase) during the batch. */
  busyMs: number;
  /**
   * CPU time of the whole process during the batch (`process.cpuUsage`, user + system, every
   * thread): unlike busy time, it does not grow when the machine's load keeps the process waiting.
   */
  cpuMs: number;
  /** The synchronous loop of 100 `put()` calls. */
  putMs: number;
  /** `commitNow` (inserts, COMMIT, encode, cache move, the snapshot check). */
  commitMs: number;
  /** Of `commitNow`: `exec("COMMIT")` alone (pages written into the database file). */
  sqliteCommitMs: number;
  /** Of `commitNow`: the adapter's `append` call (checks and encodes the record). */
  encodeMs: number;
  /** Of `commitNow`: the rows written into `_cf_KV` (`KvTable.write`). */
  insertMs: number;
  /** Of `commitNow`: the committed entries into the read cache (`KvCache.set`). */
  cacheMs: number;
  /** Writes into the paged database file (inside the inserts and COMMIT). */
  fileMs: number;
  /** New 256 KiB chunks of the paged file allocated. */
  newChunks: number;
  /** Snapshot copy steps that ran during the batch. */
  copyMs: number;
  /** GC pauses that began during the batch (overlap the phases above). */
  gcMs: number;
  /** Of the GC pauses: mark-compact (full) ones; the rest are scavenges of the young generation. */
  gcMajorMs: number;
  /** Wall time of the log's `write()` calls (thread pool). */
  writeMs: number;
  /** Wall time of `fdatasync` (thread pool). */
  datasyncMs: number;
}

const PHASES: (keyof BatchPhases)[] = [
  "totalMs",
  "busyMs",
  "cpuMs",
  "putMs",
  "commitMs",
  "sqliteCommitMs",
  "encodeMs",
  "insertMs",
  "cacheMs",
  "fileMs",
  "newChunks",
  "copyMs",
  "gcMs",
  "gcMajorMs",
  "writeMs",
  "datasyncMs",
];

/** Hooks that measure batches; {@link uninstall} removes them. */
export class BatchPhaseProbe {
  #current: BatchPhases | null = null;
  #elu = performance.eventLoopUtilization();
  #cpu = process.cpuUsage();
  readonly #undo: (() => void)[] = [];

  /** Installs the hooks (FileHandle, StorageCore, SqlJsEngine prototypes; the adapter's append). */
  static async install(adapter: PersistenceAdapter, dir: string): Promise<BatchPhaseProbe> {
    const probe = new BatchPhaseProbe();
    const add = (phase: keyof BatchPhases, ms: number) => {
      if (probe.#current !== null) probe.#current[phase] += ms;
    };
    const patch = <T extends object, K extends keyof T>(target: T, key: K, make: (orig: T[K]) => T[K]) => {
      const orig = target[key];
      target[key] = make(orig);
      probe.#undo.push(() => {
        target[key] = orig;
      });
    };
    const handle = await open(`${dir}/probe.tmp`, "w");
    const fileHandle = Object.getPrototypeOf(handle) as FileHandle;
    await handle.close();
    await rm(`${dir}/probe.tmp`);
    const timedAsync =
      (phase: keyof BatchPhases) =>
      <F extends (...args: never[]) => Promise<unknown>>(orig: F): F =>
        async function (this: unknown, ...args: Parameters<F>) {
          const t = performance.now();
          try {
            return await orig.apply(this, args);
          } finally {
            add(phase, performance.now() - t);
          }
        } as F;
    const timedSync =
      (phase: keyof BatchPhases, when: (args: unknown[]) => boolean = () => true) =>
      <F extends (...args: never[]) => unknown>(orig: F): F =>
        function (this: unknown, ...args: Parameters<F>) {
          if (!when(args)) return orig.apply(this, args);
          const t = performance.now();
          try {
            return orig.apply(this, args);
          } finally {
            add(phase, performance.now() - t);
          }
        } as F;
    patch(fileHandle, "datasync", timedAsync("datasyncMs"));
    patch(fileHandle, "write", timedAsync("writeMs") as never);
    patch(StorageCore.prototype, "commitNow", timedSync("commitMs"));
    patch(
      SqlJsEngine.prototype,
      "exec",
      timedSync("sqliteCommitMs", (args) => args[0] === "COMMIT"),
    );
    patch(adapter, "append", timedSync("encodeMs"));
    patch(KvTable.prototype, "write", timedSync("insertMs"));
    patch(KvCache.prototype, "set", timedSync("cacheMs"));
    patch(
      PagedFile.prototype,
      "set",
      (orig) =>
        function (this: PagedFile, ...args: Parameters<PagedFile["set"]>) {
          const chunks = this.allocatedChunks;
          const t = performance.now();
          try {
            orig.apply(this, args);
          } finally {
            add("fileMs", performance.now() - t);
            add("newChunks", this.allocatedChunks - chunks);
          }
        },
    );
    const gc = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        add("gcMs", e.duration);
        const kind = (e.detail as { kind?: number } | undefined)?.kind;
        if (kind !== constants.NODE_PERFORMANCE_GC_MINOR) add("gcMajorMs", e.duration);
      }
    });
    gc.observe({ entryTypes: ["gc"] });
    probe.#undo.push(() => gc.disconnect());
    return probe;
  }

  /** Starts a batch. */
  begin(): void {
    this.#current = Object.fromEntries(PHASES.map((p) => [p, 0])) as unknown as BatchPhases;
    this.#elu = performance.eventLoopUtilization();
    this.#cpu = process.cpuUsage();
  }

  /** Adds time to the current batch (the copy steps, the put loop). */
  add(phase: keyof BatchPhases, ms: number): void {
    if (this.#current !== null) this.#current[phase] += ms;
  }

  /** Ends the batch: its phases. */
  end(totalMs: number): BatchPhases {
    const phases = this.#current as BatchPhases;
    phases.totalMs = totalMs;
    phases.busyMs = performance.eventLoopUtilization(this.#elu).active;
    const cpu = process.cpuUsage(this.#cpu);
    phases.cpuMs = (cpu.user + cpu.system) / 1000;
    this.#current = null;
    return phases;
  }

  /** Removes every hook. */
  uninstall(): void {
    for (const undo of this.#undo.splice(0).reverse()) undo();
  }
}

const fmt = (p: BatchPhases) =>
  `${p.totalMs.toFixed(1)} | ${p.busyMs.toFixed(1)} | ${p.cpuMs.toFixed(1)} | ${(p.totalMs - p.busyMs).toFixed(1)} | ${p.putMs.toFixed(1)} | ${p.commitMs.toFixed(1)} | ${p.sqliteCommitMs.toFixed(1)} | ${p.encodeMs.toFixed(1)} | ${p.insertMs.toFixed(1)} | ${p.cacheMs.toFixed(1)} | ${p.fileMs.toFixed(1)} | ${p.newChunks} | ${p.copyMs.toFixed(1)} | ${p.gcMs.toFixed(1)} | ${p.gcMajorMs.toFixed(1)} | ${p.writeMs.toFixed(1)} | ${p.datasyncMs.toFixed(1)}`;

/** The median batch's phases (each phase's median) and every batch at or over the p99, as Markdown rows. */
export function phaseRows(label: string, batches: BatchPhases[], p99Ms: number): string[] {
  const median = Object.fromEntries(
    PHASES.map((p) => {
      const v = batches.map((b) => b[p]).sort((a, b) => a - b);
      return [p, v[Math.floor(v.length / 2)] ?? 0];
    }),
  ) as unknown as BatchPhases;
  const tail = batches.filter((b) => b.totalMs >= p99Ms).sort((a, b) => b.totalMs - a.totalMs);
  return [`| ${label} median | ${fmt(median)} |`, ...tail.map((b) => `| ${label} tail | ${fmt(b)} |`)];
}

/** The header of {@link phaseRows}' table. */
export const PHASE_HEADER = [
  "| batch | total | busy | CPU | idle | put() | commit | of which COMMIT | of which encode | of which inserts | of which cache | file writes | new chunks | copy steps | GC | of which full | log write | fdatasync |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
];
