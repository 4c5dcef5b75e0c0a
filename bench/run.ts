/**
 * `npm run bench`: actorstore side by side with workerd (Miniflare 4), Miniflare 2 and raw sql.js.
 *
 *   npm run bench                      # default: 1k, 10k, 100k keys, 9 rounds
 *   npm run bench -- --quick           # fewer rounds, shorter rounds (the default when CI=true)
 *   npm run bench -- --full            # adds 1M keys, 13 longer rounds
 *   npm run bench -- --only list-1000  # one workload (comma-separate several); also: recovery,
 *                                      # log-bytes, memory, or a system: --systems actorstore,workerd
 *
 * Writes bench/results/latest.json, latest.md (included by docs/benchmarks.md) and throughput.svg;
 * the growth section (bench/growth.ts) writes growth.{json,md,svg}.
 * See bench/README.md for what each workload does and how to read the ratios.
 */
import { fileURLToPath } from "node:url";
import { runAndWriteGrowth } from "./growth";
import { type BenchConfig, presetConfig, runBenchmarks, writeResults } from "./lib/bench";
import { WORKLOADS } from "./lib/suite";
import { runS3Bench } from "./s3";
import { SYSTEM_NAMES, type SystemName } from "./systems/system";

const args = process.argv.slice(2);
const flagValue = (flag: string): string | undefined => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
};

const mode = args.includes("--full")
  ? "full"
  : args.includes("--quick") || process.env.CI === "true"
    ? "quick"
    : "default";
let config: BenchConfig = presetConfig(mode);

const only = flagValue("--only")?.split(",");
if (only !== undefined) {
  const extras = ["recovery", "log-bytes", "memory", "s3", "growth"];
  const unknown = only.filter((o) => !extras.includes(o) && !WORKLOADS.some((w) => w.name === o));
  if (unknown.length > 0) {
    console.error(
      `unknown --only ${unknown.join(", ")}; choose from ${[...WORKLOADS.map((w) => w.name), ...extras].join(", ")}`,
    );
    process.exit(2);
  }
  config = {
    ...config,
    workloads: WORKLOADS.filter((w) => only.includes(w.name)),
    recovery: only.includes("recovery") ? config.recovery : undefined,
    logBatches: only.includes("log-bytes") ? config.logBatches : undefined,
    memoryKeys: only.includes("memory") ? config.memoryKeys : undefined,
  };
}
const systems = flagValue("--systems")?.split(",");
if (systems !== undefined) {
  const unknown = systems.filter((s) => !(SYSTEM_NAMES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    console.error(`unknown --systems ${unknown.join(", ")}; choose from ${SYSTEM_NAMES.join(", ")}`);
    process.exit(2);
  }
  config = { ...config, systems: systems as SystemName[] };
}
const sizes = flagValue("--sizes");
if (sizes !== undefined) config = { ...config, sizes: sizes.split(",").map(Number) };

const results = await runBenchmarks(config);
const directory = fileURLToPath(new URL("./results/", import.meta.url));
console.log(`\n${await writeResults(results, directory)}`);
console.log(`\nwrote ${directory}latest.json, latest.md${results.workloads.length > 0 ? ", throughput.svg" : ""}`);

// One object grown with the file adapter: batch latency, stalls, snapshots, recovery (bench/growth.ts).
if (only === undefined || only.includes("growth")) await runAndWriteGrowth(mode === "quick");

// The S3 adapter against Ceph on loopback, beside the file adapter (bench/s3.ts).
if (only === undefined || only.includes("s3")) {
  const { writeFile } = await import("node:fs/promises");
  const s3 = await runS3Bench({ quick: mode === "quick" });
  console.log(`\nS3 (Ceph RADOS Gateway on loopback) beside the file adapter:\n${s3.markdown}`);
  await writeFile(`${directory}s3.md`, `${s3.markdown}\n`);
  await writeFile(`${directory}s3.json`, JSON.stringify({ date: new Date().toISOString(), rows: s3.rows }, null, 2));
  console.log(`wrote ${directory}s3.md, s3.json`);
}
