/**
 * One whole benchmark run as a function (the CLI in bench/run.ts and the smoke test both call it):
 * the side-by-side suite, the actorstore-only durability costs, memory probes, then the targets.
 */

import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { ObjectStorage } from "../../src/index";
import { openActorstore, openActorstoreFile } from "../systems/actorstore";
import { openMiniflare2 } from "../systems/miniflare2";
import { openRawSqlJs } from "../systems/raw-sqljs";
import type { SystemFactory, SystemName } from "../systems/system";
import { openWorkerd } from "../systems/workerd";
import { throughputChart } from "./chart";
import { type LogCostResult, measureLogCost, measureRecovery, type RecoveryResult } from "./durability-costs";
import { type MemoryProbeResult, probeMemory } from "./memory";
import { formatConsole, formatMarkdown } from "./report";
import type { BenchResults, RunMeta } from "./results";
import { runSuite, WORKLOADS, type WorkloadInfo } from "./suite";
import { evaluateTargets } from "./targets";

/** Everything a run can be told. */
export interface BenchConfig {
  mode: RunMeta["mode"];
  sizes: number[];
  rounds: number;
  warmupRounds: number;
  roundTargetMs: number;
  systems: SystemName[];
  workloads: readonly WorkloadInfo[];
  /** Recovery scenario; `undefined` skips it. */
  recovery: { databaseBytes: number; batches: number; rounds: number } | undefined;
  /** Batches per shape for log bytes; `undefined` skips it. */
  logBatches: number | undefined;
  /** Keys for the memory probes; `undefined` skips them. */
  memoryKeys: number | undefined;
  log: (line: string) => void;
}

/** The factories, by name. */
export const SYSTEM_FACTORIES: Record<SystemName, SystemFactory> = {
  actorstore: () => openActorstore(),
  "actorstore-file": () => openActorstoreFile(),
  workerd: openWorkerd,
  miniflare2: openMiniflare2,
  "raw-sqljs": openRawSqlJs,
};

/** The value every write stores: a 100-character ASCII string (100 bytes). */
export const BENCH_VALUE = "v".repeat(100);

/** Presets for `--quick` (the default under CI), the default run, and `--full`. */
export function presetConfig(mode: RunMeta["mode"], log: (line: string) => void = console.log): BenchConfig {
  const base = {
    mode,
    systems: [...(Object.keys(SYSTEM_FACTORIES) as SystemName[])],
    workloads: WORKLOADS,
    log,
  };
  if (mode === "quick") {
    return {
      ...base,
      sizes: [1_000, 10_000, 100_000],
      rounds: 5,
      warmupRounds: 1,
      roundTargetMs: 20,
      recovery: { databaseBytes: 10_000_000, batches: 10_000, rounds: 3 },
      logBatches: 200,
      memoryKeys: 100_000,
    };
  }
  return {
    ...base,
    sizes: mode === "full" ? [1_000, 10_000, 100_000, 1_000_000] : [1_000, 10_000, 100_000],
    rounds: mode === "full" ? 13 : 9,
    warmupRounds: 2,
    roundTargetMs: 100,
    recovery: { databaseBytes: 10_000_000, batches: 10_000, rounds: mode === "full" ? 7 : 5 },
    logBatches: 1000,
    memoryKeys: 100_000,
  };
}

/** The installed version of a dependency (read from node_modules: some exports maps hide package.json). */
function packageVersion(name: string): string {
  try {
    const path = new URL(`../../node_modules/${name}/package.json`, import.meta.url);
    return (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
  } catch {
    return "?";
  }
}

/** Runs what `config` asks for and evaluates the targets. */
export async function runBenchmarks(config: BenchConfig): Promise<BenchResults> {
  const started = performance.now();
  const loadStart = loadavg()[0] ?? 0;
  const log = config.log;
  const probe = await ObjectStorage.open();
  const actorstoreCodec = probe.codec;
  await probe.close();

  let workloads: BenchResults["workloads"] = [];
  if (config.workloads.length > 0 && config.sizes.length > 0) {
    log(`side-by-side: ${config.systems.join(", ")} at ${config.sizes.join(", ")} keys`);
    const raw = await runSuite({
      sizes: config.sizes,
      rounds: config.rounds,
      warmupRounds: config.warmupRounds,
      roundTargetMs: config.roundTargetMs,
      workloads: config.workloads,
      systems: config.systems.map((name) => ({ name, open: SYSTEM_FACTORIES[name] })),
      value: BENCH_VALUE,
      log,
    });
    workloads = raw.map((w) => {
      const info = WORKLOADS.find((i) => i.name === w.workload);
      return { ...w, title: info?.title ?? w.workload, unit: info?.unit ?? "ops" };
    });
  }

  let recovery: RecoveryResult[] = [];
  if (config.recovery !== undefined && config.systems.includes("actorstore")) {
    log("actorstore: recovery and restore");
    recovery = await measureRecovery({ ...config.recovery, value: BENCH_VALUE, log });
  }
  let logCost: LogCostResult[] = [];
  if (config.logBatches !== undefined && config.systems.includes("actorstore")) {
    log("actorstore: log bytes per batch");
    logCost = await measureLogCost(BENCH_VALUE, config.logBatches);
  }
  const memory: MemoryProbeResult[] = [];
  if (config.memoryKeys !== undefined) {
    for (const system of config.systems) {
      log(`memory: ${system}`);
      memory.push(await probeMemory(system, config.memoryKeys));
    }
  }

  const measured = { workloads, recovery, logCost, memory };
  const meta: RunMeta = {
    date: new Date().toISOString(),
    mode: config.mode,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpuModel: cpus()[0]?.model ?? "unknown CPU",
    cpus: cpus().length,
    loadAverage: { start: loadStart, end: loadavg()[0] ?? 0 },
    sizes: config.sizes,
    rounds: config.rounds,
    warmupRounds: config.warmupRounds,
    roundTargetMs: config.roundTargetMs,
    systems: config.systems,
    value: `${BENCH_VALUE.length}-character ASCII string`,
    actorstoreCodec,
    versions: {
      miniflare: packageVersion("miniflare"),
      "@miniflare/durable-objects": packageVersion("@miniflare/durable-objects"),
      "sql.js": packageVersion("sql.js"),
    },
    durationMs: performance.now() - started,
  };
  return { meta, ...measured, targets: evaluateTargets(measured) };
}

/** Writes latest.json, latest.md and throughput.svg into `directory`; returns the console text. */
export async function writeResults(results: BenchResults, directory: string): Promise<string> {
  await mkdir(directory, { recursive: true });
  // JSON has no NaN or Infinity: they become null.
  await writeFile(join(directory, "latest.json"), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(join(directory, "latest.md"), formatMarkdown(results));
  if (results.workloads.length > 0) await writeFile(join(directory, "throughput.svg"), throughputChart(results));
  return formatConsole(results);
}
