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
  /**
   * Wall time of the log's `write()` calls (thread pool). Where the segment is opened with
   * `O_DSYNC` (Linux, macOS) this includes the flush, and {@link datasyncMs} stays 0.
   */
  writeMs: number;
  /** Wall time of the log's `fdatasync` (thread pool; none where the write itself flushes). */
  datasyncMs: number;
  /** Wall time of a snapshot's slice flushes during the batch (handles written with `writev`). */
  snapshotSyncMs: number;
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
  "snapshotSyncMs",
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
    // Snapshots are written with writev (their slices too); the log with write.
    const snapshotHandles = new WeakSet<object>();
    patch(
      fileHandle,
      "writev",
      (orig) =>
        function (this: FileHandle, ...args: Parameters<FileHandle["writev"]>) {
          snapshotHandles.add(this);
          return orig.apply(this, args);
        } as FileHandle["writev"],
    );
    const timedLogSync = timedAsync("datasyncMs")(fileHandle.datasync);
    const timedSnapshotSync = timedAsync("snapshotSyncMs")(fileHandle.datasync);
    patch(
      fileHandle,
      "datasync",
      () =>
        function (this: FileHandle) {
          return (snapshotHandles.has(this) ? timedSnapshotSync : timedLogSync).call(this);
        },
    );
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
  `${p.totalMs.toFixed(1)} | ${p.busyMs.toFixed(1)} | ${p.cpuMs.toFixed(1)} | ${(p.totalMs - p.busyMs).toFixed(1)} | ${p.putMs.toFixed(1)} | ${p.commitMs.toFixed(1)} | ${p.sqliteCommitMs.toFixed(1)} | ${p.encodeMs.toFixed(1)} | ${p.insertMs.toFixed(1)} | ${p.cacheMs.toFixed(1)} | ${p.fileMs.toFixed(1)} | ${p.newChunks} | ${p.copyMs.toFixed(1)} | ${p.gcMs.toFixed(1)} | ${p.gcMajorMs.toFixed(1)} | ${p.writeMs.toFixed(1)} | ${p.datasyncMs.toFixed(1)} | ${p.snapshotSyncMs.toFixed(1)}`;

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
  "| batch | total | busy | CPU | idle | put() | commit | of which COMMIT | of which encode | of which inserts | of which cache | file writes | new chunks | copy steps | GC | of which full | log write | fdatasync | snapshot slice flushes |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
];

/** What a tail batch's time is charged to, in order of precedence for its largest share. */
const CAUSES = ["log fdatasync", "log write", "GC", "commit (CPU)", "put() calls", "copy steps", "other"] as const;

/**
 * The slowest `fraction` of all batches (every step together): how many there were, their time
 * summed per cause, and how many had each cause as their largest share. "other" is the batch's time
 * outside every timed phase: turns of other work between its phases (chunks prepared, a snapshot's
 * checksum or slices), promise turns, and the process waiting for a core. GC overlaps the phase it
 * ran in and is charged to GC only (taken out of commit and put). Markdown.
 */
export function tailCauses(batches: BatchPhases[], fraction: number): string {
  const sorted = [...batches].sort((a, b) => b.totalMs - a.totalMs);
  const tail = sorted.slice(0, Math.max(1, Math.ceil(sorted.length * fraction)));
  const sums = new Map<string, number>(CAUSES.map((c) => [c, 0]));
  const largest = new Map<string, number>(CAUSES.map((c) => [c, 0]));
  let chunks = 0;
  let snapshotSync = 0;
  for (const b of tail) {
    const gc = Math.min(b.gcMs, b.putMs + b.commitMs);
    const shares: [string, number][] = [
      ["log fdatasync", b.datasyncMs],
      ["log write", b.writeMs],
      ["GC", gc],
      ["commit (CPU)", Math.max(0, b.commitMs - Math.max(0, gc - b.putMs))],
      ["put() calls", Math.max(0, b.putMs - Math.min(gc, b.putMs))],
      ["copy steps", b.copyMs],
    ];
    const timed = shares.reduce((n, [, ms]) => n + ms, 0);
    shares.push(["other", Math.max(0, b.totalMs - timed)]);
    for (const [cause, ms] of shares) sums.set(cause, (sums.get(cause) ?? 0) + ms);
    const top = shares.reduce((a, c) => (c[1] > a[1] ? c : a));
    largest.set(top[0], (largest.get(top[0]) ?? 0) + 1);
    chunks += b.newChunks;
    if (b.snapshotSyncMs > 0) snapshotSync++;
  }
  const total = tail.reduce((n, b) => n + b.totalMs, 0);
  const rows = CAUSES.map(
    (c) =>
      `| ${c} | ${(sums.get(c) ?? 0).toFixed(1)} ms | ${((100 * (sums.get(c) ?? 0)) / total).toFixed(0)}% | ${largest.get(c) ?? 0} |`,
  );
  return [
    `The slowest ${(fraction * 100).toFixed(0)}% of batches: ${tail.length} of ${batches.length}, ${(tail[tail.length - 1]?.totalMs ?? 0).toFixed(1)}–${(tail[0]?.totalMs ?? 0).toFixed(1)} ms, ${total.toFixed(0)} ms in all; new chunks inside them: ${chunks}; ${snapshotSync} overlapped a snapshot slice's flush.`,
    "",
    "| cause | time | share | batches where it is the largest |",
    "|---|---:|---:|---:|",
    ...rows,
  ].join("\n");
}
