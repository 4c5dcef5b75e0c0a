/**
 * Growth: one object's database grown with the file adapter (part of `npm run bench`, or alone:
 * `npx tsx bench/growth.ts [--quick]`). Each batch is 100 `put()`s of new keys with 1 KB values,
 * then `await sync()` (fdatasync on). Per size step: p50, p99 and max batch latency, the longest
 * event-loop stall (`monitorEventLoopDelay`, what every other event of the object waited), the
 * snapshots written (count, the longest `writeSnapshot`, and the longest single step of a
 * snapshot's image copy, which runs on the event loop between batches), and RSS. At the end: recovery
 * (`ObjectStorage.open()` of the directory, each round ending with `abort()` so that every round
 * opens the same files) against raw sql.js opening the final database that open rebuilt, as one
 * image read from disk, with the commits that open replayed after the newest snapshot (and, for
 * comparison with earlier runs, raw sql.js opening that newest snapshot as one image). Writes
 * bench/results/growth.{json,md,svg}. `--log-cap=<MiB>` sets `snapshotLogCapBytes` for the growth
 * (default: the storage's). `--crash` ends the growth with `abort()` instead of `close()`, so that
 * the recovery measured is an open after a crash (a snapshot being copied is dropped, not finished).
 * `--copied` wraps the adapter in a `DelegatingPersistence`, which does not pass
 * `writeSnapshotParts` on: snapshots are exported or copied across turns as before snapshots were
 * written in place (an A/B of that change in one build). `--full-snapshots` writes every snapshot as
 * a full image (no deltas: the limits of snapshot-delta.ts closed), an A/B of incremental
 * snapshots in one build.
 * `--breakdown` adds, per step, where the
 * median batch's and each tail batch's time went, and the slowest 2% of all batches by cause
 * (bench/lib/batch-phases.ts); it hooks the log's
 * file handle and the commit, so its batch times are not the ones to publish.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import initSqlJs from "sql.js";
import { DelegatingPersistence } from "../src/durability/delegating-persistence";
import { openFilePersistence } from "../src/durability/file-persistence";
import { setDeltaLimits } from "../src/durability/snapshot-delta";
import type { ImageCopy } from "../src/engine/engine";
import { SqlJsEngine } from "../src/engine/sqljs-engine";
import { coreOf, ObjectStorage } from "../src/storage/object-storage";
import { BatchPhaseProbe, type BatchPhases, PHASE_HEADER, phaseRows, tailCauses } from "./lib/batch-phases";
import { SQLJS_NATIVE_FUNCTIONS } from "./lib/sqljs-config";

const MB = 1_000_000;
const PER_BATCH = 100;
/** 1,000 bytes (a 1,000-character string would be stored as UTF-16: 2 KB, one row per page). */
const VALUE = new Uint8Array(1000).fill(0x61);

/** One size step of the growth run. */
export interface GrowthRow {
  /** Database size (page count × page size) at the end of the step, bytes. */
  databaseBytes: number;
  batches: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Longest event-loop delay seen during the step. */
  stallMs: number;
  snapshots: number;
  /** Of those, how many were written as deltas (incremental snapshots). */
  deltas: number;
  /** Longest `writeSnapshot` (checksum, write, fsync, read-back) of the step. */
  snapshotMs: number;
  /** Longest single step of a snapshot's image copy (one turn's share of the copy). */
  copyStepMs: number;
  rssBytes: number;
}

/** Every batch of the growth at once (the steps' p99 of their few batches is their slowest one). */
export interface GrowthOverall {
  batches: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Batches over the 10 ms that the p99 target allows. */
  over10Ms: number;
}

export interface GrowthResult {
  rows: GrowthRow[];
  overall: GrowthOverall;
  /** Median `ObjectStorage.open()` of the directory the growth left (after `abort()` with `crash`). */
  recoveryMs: number;
  /** Median raw sql.js open (readFile + `new Database`) of the database that open rebuilt. */
  rawOpenMs: number;
  /** The size of that database's image. */
  finalBytes: number;
  /** Median raw sql.js open of the newest snapshot composed as one image (older than the final database after a crash). */
  rawSnapshotOpenMs: number;
  snapshotBytes: number;
  /** Commits after the newest snapshot: what the recovery replayed. */
  replayedCommits: number;
  /**
   * Commits after the newest snapshot written before the storage closed: what an open after a
   * crash at the last batch would replay (`close()` lets a snapshot in flight finish first).
   */
  crashReplayCommits: number;
  markdown: string;
  /** With `breakdown`: the phases table (Markdown). */
  phases?: string;
}

const quantile = (sorted: number[], q: number): number =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);

/** Grows one object to each size in `stepsMb` (MB of database) and measures. */
export async function runGrowthBench(options: {
  quick: boolean;
  breakdown?: boolean;
  logCapBytes?: number;
  /** End with `abort()` instead of `close()`, so the recovery measured is a crash's. */
  crash?: boolean;
  /** Snapshots through a wrapper: copied, not written in place (see the module comment). */
  copied?: boolean;
  /** Every snapshot a full image (no deltas; see the module comment). */
  fullSnapshots?: boolean;
}): Promise<GrowthResult> {
  const limits = options.fullSnapshots ? setDeltaLimits({ chain: 0, fraction: 0 }) : undefined;
  const steps = options.quick ? [10, 25, 50, 100, 150] : [10, 25, 50, 100, 250, 500, 750, 1000];
  const dir = await mkdtemp(join(tmpdir(), "actorstore-growth-"));
  /** The final database and the newest snapshot as SQLite files beside the directory (see the recovery). */
  const imagePath = `${dir}.image.sqlite`;
  const snapshotPath = `${dir}.snapshot.sqlite`;
  try {
    const adapter = await openFilePersistence(dir);
    let snapshotCount = 0;
    let deltaCount = 0;
    /** The seq of the newest snapshot written (0: the first, of the empty database). */
    let newestWritten = 0;
    let snapshotMax = 0;
    const timed = async (info: { seq: number }, write: () => Promise<void>) => {
      const t = performance.now();
      await write();
      snapshotCount++;
      newestWritten = Math.max(newestWritten, info.seq);
      snapshotMax = Math.max(snapshotMax, performance.now() - t);
    };
    const write = adapter.writeSnapshot.bind(adapter);
    adapter.writeSnapshot = (info, image) => timed(info, () => write(info, image));
    const writeParts = adapter.writeSnapshotParts?.bind(adapter);
    if (writeParts !== undefined)
      adapter.writeSnapshotParts = (info, parts) => timed(info, () => writeParts(info, parts));
    // A delta the adapter declined (false) is followed by a full write, timed above.
    const writeDelta = adapter.writeSnapshotDelta.bind(adapter);
    adapter.writeSnapshotDelta = async (info, delta) => {
      let wrote = false;
      const t = performance.now();
      wrote = await writeDelta(info, delta);
      if (wrote) {
        snapshotCount++;
        deltaCount++;
        newestWritten = Math.max(newestWritten, info.seq);
        snapshotMax = Math.max(snapshotMax, performance.now() - t);
      }
      return wrote;
    };
    // Each step of a snapshot's image copy runs synchronously in one turn: time the longest.
    let copyStepMax = 0;
    const probe = options.breakdown ? await BatchPhaseProbe.install(adapter, dir) : undefined;
    const phaseTable = [...PHASE_HEADER];
    const begin = SqlJsEngine.prototype.beginImageCopy;
    SqlJsEngine.prototype.beginImageCopy = function timed(this: SqlJsEngine): ImageCopy {
      const copy = begin.call(this);
      const step = copy.step.bind(copy);
      copy.step = (pages: number) => {
        const t = performance.now();
        try {
          return step(pages);
        } finally {
          const ms = performance.now() - t;
          copyStepMax = Math.max(copyStepMax, ms);
          probe?.add("copyMs", ms);
        }
      };
      return copy;
    };
    const storage = await ObjectStorage.open({
      persistence: options.copied ? new DelegatingPersistence(adapter) : adapter,
      ...(options.logCapBytes === undefined ? {} : { snapshotLogCapBytes: options.logCapBytes }),
    });
    const size = () => storage.sql.databaseSize;
    const rows: GrowthRow[] = [];
    let key = 0;
    const allPhases: BatchPhases[] = [];
    const allLatencies: number[] = [];
    for (const stepMb of steps) {
      const latencies: number[] = [];
      const phases: BatchPhases[] = [];
      snapshotCount = 0;
      deltaCount = 0;
      snapshotMax = 0;
      copyStepMax = 0;
      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      while (size() < stepMb * MB) {
        probe?.begin();
        const t = performance.now();
        for (let j = 0; j < PER_BATCH; j++) void storage.put(`key-${String(key++).padStart(10, "0")}`, VALUE);
        probe?.add("putMs", performance.now() - t);
        await storage.sync();
        const ms = performance.now() - t;
        latencies.push(ms);
        if (probe !== undefined) phases.push(probe.end(ms));
      }
      delay.disable();
      allLatencies.push(...latencies);
      latencies.sort((a, b) => a - b);
      const row: GrowthRow = {
        databaseBytes: size(),
        batches: latencies.length,
        p50Ms: quantile(latencies, 0.5),
        p99Ms: quantile(latencies, 0.99),
        maxMs: latencies[latencies.length - 1] ?? 0,
        stallMs: delay.max / 1e6,
        snapshots: snapshotCount,
        deltas: deltaCount,
        snapshotMs: snapshotMax,
        copyStepMs: copyStepMax,
        rssBytes: process.memoryUsage().rss,
      };
      rows.push(row);
      if (probe !== undefined) phaseTable.push(...phaseRows(`${stepMb} MB`, phases, row.p99Ms));
      allPhases.push(...phases);
      console.log(
        `growth ${(row.databaseBytes / MB).toFixed(0)} MB: p50 ${row.p50Ms.toFixed(2)} ms, p99 ${row.p99Ms.toFixed(2)} ms, max ${row.maxMs.toFixed(1)} ms, stall ${row.stallMs.toFixed(1)} ms, ${row.snapshots} snapshot(s) (${row.deltas} deltas) ≤ ${row.snapshotMs.toFixed(0)} ms, copy step ≤ ${row.copyStepMs.toFixed(1)} ms, RSS ${(row.rssBytes / MB).toFixed(0)} MB`,
      );
    }
    allLatencies.sort((a, b) => a - b);
    const overall: GrowthOverall = {
      batches: allLatencies.length,
      p50Ms: quantile(allLatencies, 0.5),
      p99Ms: quantile(allLatencies, 0.99),
      maxMs: allLatencies[allLatencies.length - 1] ?? 0,
      over10Ms: allLatencies.filter((ms) => ms > 10).length,
    };
    console.log(
      `growth, all ${overall.batches} batches: p50 ${overall.p50Ms.toFixed(2)} ms, p99 ${overall.p99Ms.toFixed(2)} ms, max ${overall.maxMs.toFixed(1)} ms, ${overall.over10Ms} over 10 ms`,
    );
    const crashReplayCommits = rows.reduce((n, r) => n + r.batches, 0) - newestWritten;
    if (options.crash) {
      // As a crash would: the snapshot being copied is dropped (one already being written finishes).
      storage.abort();
      await adapter.close();
    } else await storage.close();
    SqlJsEngine.prototype.beginImageCopy = begin;
    probe?.uninstall();
    if (probe !== undefined) phaseTable.push("", tailCauses(allPhases, 0.02));
    if (probe !== undefined) console.log(`\nBatch phases (ms):\n${phaseTable.join("\n")}\n`);

    // Recovery against raw sql.js opening the final database as one image read from disk (paired,
    // alternating). Every round opens the same directory and ends with abort(), as the growth did
    // with --crash: close() would write a snapshot of the final state (docs/durability.md, "A final
    // snapshot at close"), and every round after the first would then open that instead.
    const SQL = await initSqlJs(SQLJS_NATIVE_FUNCTIONS);
    // Also for comparison with earlier runs: raw sql.js opening the newest snapshot as one SQLite
    // file. Where that snapshot is a delta, the adapter composes it from its chain (a delta file
    // alone is no SQLite file); after a crash it is older than the final database.
    {
      const reader = await openFilePersistence(dir);
      const { snapshots } = await reader.load();
      const newest = snapshots[snapshots.length - 1];
      if (newest === undefined) throw new Error("growth: no snapshot was written");
      await writeFile(snapshotPath, await reader.readSnapshot(newest.seq));
      await reader.close();
    }
    const snapshotNames = async () => (await readdir(dir)).filter((n) => n.startsWith("snap-")).sort();
    const opened = await snapshotNames();
    const recovery: number[] = [];
    const raw: number[] = [];
    const rawSnapshot: number[] = [];
    let finalBytes = 0;
    let snapshotBytes = 0;
    const rawOpen = async (path: string) => {
      const t = performance.now();
      const bytes = await readFile(path);
      const db = new SQL.Database(bytes);
      const ms = performance.now() - t;
      db.close();
      return { ms, bytes: bytes.length };
    };
    for (let round = 0; round < (options.quick ? 2 : 3); round++) {
      const persistence = await openFilePersistence(dir);
      const t = performance.now();
      const again = await ObjectStorage.open({ persistence });
      recovery.push(performance.now() - t);
      // The database the open rebuilt, as one image: what raw sql.js opens below.
      if (round === 0) await writeFile(imagePath, coreOf(again).engine.exportBytes());
      again.abort();
      await persistence.close();
      const now = await snapshotNames();
      if (now.join() !== opened.join())
        throw new Error(`growth: recovery round ${round + 1} changed the snapshots (${now.join(", ")})`);
      const final = await rawOpen(imagePath);
      raw.push(final.ms);
      finalBytes = final.bytes;
      const newest = await rawOpen(snapshotPath);
      rawSnapshot.push(newest.ms);
      snapshotBytes = newest.bytes;
      console.log(
        `recovery round ${round + 1}: open ${(recovery[round] as number).toFixed(0)} ms; raw sql.js: final database ${final.ms.toFixed(0)} ms, newest snapshot ${newest.ms.toFixed(0)} ms`,
      );
    }
    // One commit per batch; the newest snapshot's name starts with its seq.
    const batches = rows.reduce((n, r) => n + r.batches, 0);
    const replayedCommits = batches - Number((opened[opened.length - 1] as string).split("-")[1]);
    recovery.sort((a, b) => a - b);
    raw.sort((a, b) => a - b);
    rawSnapshot.sort((a, b) => a - b);
    const recoveryMs = quantile(recovery, 0.5);
    const rawOpenMs = quantile(raw, 0.5);
    const rawSnapshotOpenMs = quantile(rawSnapshot, 0.5);
    const recoveryFigures = {
      recoveryMs,
      rawOpenMs,
      finalBytes,
      rawSnapshotOpenMs,
      snapshotBytes,
      replayedCommits,
      crashReplayCommits,
    };
    const markdown = growthMarkdown(rows, overall, {
      ...recoveryFigures,
      crash: options.crash === true,
      newestIsDelta: (opened[opened.length - 1] as string).endsWith(".delta"),
    });
    const phases = probe === undefined ? undefined : phaseTable.join("\n");
    return { rows, overall, ...recoveryFigures, markdown, ...(phases === undefined ? {} : { phases }) };
  } finally {
    if (limits !== undefined) setDeltaLimits(limits);
    await rm(dir, { recursive: true, force: true });
    await rm(imagePath, { force: true });
    await rm(snapshotPath, { force: true });
  }
}

function growthMarkdown(
  rows: GrowthRow[],
  all: GrowthOverall,
  r: Pick<
    GrowthResult,
    | "recoveryMs"
    | "rawOpenMs"
    | "finalBytes"
    | "rawSnapshotOpenMs"
    | "snapshotBytes"
    | "replayedCommits"
    | "crashReplayCommits"
  > & { crash: boolean; newestIsDelta: boolean },
): string {
  const lines = [
    "| database | batches | p50 batch | p99 batch | max batch | longest stall | snapshots (deltas) | longest snapshot write | longest copy step | RSS |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${(r.databaseBytes / MB).toFixed(0)} MB | ${r.batches} | ${r.p50Ms.toFixed(2)} ms | ${r.p99Ms.toFixed(2)} ms | ${r.maxMs.toFixed(1)} ms | ${r.stallMs.toFixed(1)} ms | ${r.snapshots} (${r.deltas}) | ${r.snapshotMs.toFixed(0)} ms | ${r.copyStepMs.toFixed(1)} ms | ${(r.rssBytes / MB).toFixed(0)} MB |`,
    ),
    "",
    `All ${all.batches} batches of the growth: p50 ${all.p50Ms.toFixed(2)} ms, p99 ${all.p99Ms.toFixed(2)} ms (target ≤ 10 ms), max ${all.maxMs.toFixed(1)} ms; ${all.over10Ms} over 10 ms (${((100 * all.over10Ms) / Math.max(1, all.batches)).toFixed(1)}%). A step's p99 of fewer than 100 batches is its slowest batch.`,
    "",
    `Recovery of the final database ${r.crash ? "after a crash (`abort()` at the last batch)" : "after `close()`"}: \`ObjectStorage.open()\` ${r.recoveryMs.toFixed(0)} ms, from the newest snapshot (${r.newestIsDelta ? "a delta, read through its chain" : "a full image"}, ${(r.snapshotBytes / MB).toFixed(0)} MB) and the ${r.replayedCommits} commits after it.`,
    `Raw sql.js opening the final database (the one that open rebuilt) as one image read from disk (${(r.finalBytes / MB).toFixed(0)} MB): ${r.rawOpenMs.toFixed(0)} ms; recovery / raw ${(r.recoveryMs / r.rawOpenMs).toFixed(2)}× (target ≤ 1.5×).`,
    `Raw sql.js opening the newest snapshot as one image (${(r.snapshotBytes / MB).toFixed(0)} MB, the baseline of runs before 2026-11-27 08:30): ${r.rawSnapshotOpenMs.toFixed(0)} ms (recovery / it ${(r.recoveryMs / r.rawSnapshotOpenMs).toFixed(2)}×). After a crash at the last batch ${r.crashReplayCommits} commits would replay (the newest snapshot finished before it).`,
  ];
  return lines.join("\n");
}

/** Batch latency (p50, p99, max) and the longest stall against database size, as SVG. */
export function growthChart(rows: GrowthRow[]): string {
  const W = 520;
  const H = 260;
  const m = { left: 52, right: 16, top: 28, bottom: 36 };
  const xs = rows.map((r) => r.databaseBytes / MB);
  const ys = rows.flatMap((r) => [r.p50Ms, r.p99Ms, r.maxMs, r.stallMs]).filter((v) => v > 0);
  const [x0, x1] = [Math.log10(Math.min(...xs)), Math.log10(Math.max(...xs) * 1.05)];
  const [y0, y1] = [Math.log10(Math.max(0.1, Math.min(...ys) / 1.5)), Math.log10(Math.max(...ys) * 1.5)];
  const px = (v: number) => m.left + ((Math.log10(v) - x0) / (x1 - x0 || 1)) * (W - m.left - m.right);
  const py = (v: number) =>
    H - m.bottom - ((Math.log10(Math.max(v, 0.1)) - y0) / (y1 - y0 || 1)) * (H - m.top - m.bottom);
  const series: [string, string, (r: GrowthRow) => number][] = [
    ["p50 batch", "#00798c", (r) => r.p50Ms],
    ["p99 batch", "#edae49", (r) => r.p99Ms],
    ["max batch", "#d1495b", (r) => r.maxMs],
    ["longest stall", "#30638e", (r) => r.stallMs],
  ];
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="10">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${m.left}" y="14" font-size="11">file adapter, 100 × 1 KB puts + sync() per batch: ms (log) against database MB (log)</text>`,
    `<line x1="${m.left}" y1="${H - m.bottom}" x2="${W - m.right}" y2="${H - m.bottom}" stroke="#999"/>`,
    `<line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${H - m.bottom}" stroke="#999"/>`,
  ];
  for (const r of rows) {
    const x = px(r.databaseBytes / MB);
    parts.push(
      `<text x="${x}" y="${H - m.bottom + 14}" text-anchor="middle">${(r.databaseBytes / MB).toFixed(0)}</text>`,
    );
  }
  for (const v of [0.1, 1, 10, 50, 100, 1000, 10000]) {
    if (Math.log10(v) < y0 || Math.log10(v) > y1) continue;
    const y = py(v);
    parts.push(`<line x1="${m.left}" y1="${y}" x2="${W - m.right}" y2="${y}" stroke="#eee"/>`);
    parts.push(`<text x="${m.left - 4}" y="${y + 3}" text-anchor="end">${v}</text>`);
  }
  series.forEach(([name, color, get], i) => {
    const points = rows.map((r) => `${px(r.databaseBytes / MB).toFixed(1)},${py(get(r)).toFixed(1)}`).join(" ");
    parts.push(`<polyline points="${points}" fill="none" stroke="${color}" stroke-width="2"/>`);
    const lx = m.left + 10 + i * 110;
    parts.push(
      `<line x1="${lx}" y1="${m.top + 4}" x2="${lx + 18}" y2="${m.top + 4}" stroke="${color}" stroke-width="2.5"/>`,
    );
    parts.push(`<text x="${lx + 22}" y="${m.top + 8}">${name}</text>`);
  });
  parts.push(`<text x="${W / 2}" y="${H - 6}" text-anchor="middle">database MB</text>`, "</svg>");
  return parts.join("\n");
}

/** Runs the growth section and writes bench/results/growth.{json,md,svg}. */
export async function runAndWriteGrowth(
  quick: boolean,
  breakdown = false,
  logCapBytes?: number,
  crash = false,
  copied = false,
  fullSnapshots = false,
): Promise<GrowthResult> {
  const result = await runGrowthBench({
    quick,
    breakdown,
    crash,
    copied,
    fullSnapshots,
    ...(logCapBytes === undefined ? {} : { logCapBytes }),
  });
  const directory = fileURLToPath(new URL("./results/", import.meta.url));
  await writeFile(`${directory}growth.md`, `${result.markdown}\n`);
  await writeFile(`${directory}growth.svg`, `${growthChart(result.rows)}\n`);
  const { markdown: _markdown, ...data } = result;
  await writeFile(
    `${directory}growth.json`,
    JSON.stringify({ date: new Date().toISOString(), quick, ...data }, null, 2),
  );
  console.log(`\nGrowth (file adapter):\n${result.markdown}\nwrote ${directory}growth.md, growth.json, growth.svg`);
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cap = process.argv.find((a) => a.startsWith("--log-cap="));
  const logCapBytes = cap === undefined ? undefined : Number(cap.slice("--log-cap=".length)) * 2 ** 20;
  await runAndWriteGrowth(
    process.argv.includes("--quick"),
    process.argv.includes("--breakdown"),
    logCapBytes,
    process.argv.includes("--crash"),
    process.argv.includes("--copied"),
    process.argv.includes("--full-snapshots"),
  );
}
