/**
 * Runs one workload on one in-process system for a few seconds, for CPU profiling:
 *
 *   node --cpu-prof --cpu-prof-dir=bench/results/profiles --import tsx bench/profile.ts sql-select
 *   node --import tsx bench/profile-summary.ts bench/results/profiles/<file>.cpuprofile
 *
 * Options: `--system actorstore|raw-sqljs|miniflare2` (default actorstore), `--size N` (10,000),
 * `--seconds S` (3).
 */
import { fill, WORKLOADS } from "./lib/suite";
import type { WorkloadName } from "./lib/workloads";
import { openActorstore, openActorstoreFile } from "./systems/actorstore";
import { openMiniflare2 } from "./systems/miniflare2";
import { openRawSqlJs } from "./systems/raw-sqljs";
import type { BenchSystem } from "./systems/system";

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const workloadName = process.argv[2] as WorkloadName | undefined;
const info = WORKLOADS.find((w) => w.name === workloadName);
if (info === undefined) {
  console.error(`usage: bench/profile.ts <${WORKLOADS.map((w) => w.name).join("|")}> [--system S] [--size N]`);
  process.exit(2);
}
const openers: Record<string, () => Promise<BenchSystem>> = {
  actorstore: () => openActorstore(),
  "actorstore-file": () => openActorstoreFile(),
  "raw-sqljs": openRawSqlJs,
  miniflare2: openMiniflare2,
};
const systemName = flag("system") ?? "actorstore";
const open = openers[systemName];
if (open === undefined) throw new Error(`unknown system ${systemName}`);
const size = Number(flag("size") ?? 10_000);
const seconds = Number(flag("seconds") ?? 3);
const value = "v".repeat(100);

const system = await open();
await fill(system, size, value);
const n = Math.min(info.maxN(size), info.name === "list-1000" || info.name === "sql-scan" ? 20 : 1000);
let ops = 0;
let ms = 0;
for (let r = 0; ms < seconds * 1000; r++) {
  ms += await system.round(info.name, { n, size, offset: (r * 104_729) % size, value });
  ops += n;
}
console.log(
  `${systemName} ${info.name} @ ${size}: ${Math.round((ops / ms) * 1000).toLocaleString("en-US")} ${info.unit}/s`,
);
await system.close();
