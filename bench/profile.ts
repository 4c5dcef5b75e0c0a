/**
 * Runs one workload on one in-process system for a few seconds, for CPU profiling:
 *
 *   node --cpu-prof --cpu-prof-dir=bench/results/profiles --import tsx bench/profile.ts sql-select
 *   node --import tsx bench/profile-summary.ts bench/results/profiles/<file>.cpuprofile
 *
 * Options: `--system actorstore|raw-sqljs|miniflare2` (default actorstore), `--size N` (10,000),
 * `--seconds S` (3), `--before W1,W2` (run those workloads for `--before-seconds S` each, default 3,
 * after the fill and before the profiled loop: `npm run bench` runs `put` before `list-1000`, which
 * leaves the read cache and the heap in another state than a fresh fill), `--profile FILE` (write a
 * `.cpuprofile` of the profiled loop alone, started through `node:inspector`, instead of using
 * `--cpu-prof` for the whole process).
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
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

const before = (flag("before")?.split(",") ?? []).map((name) => {
  const w = WORKLOADS.find((x) => x.name === name);
  if (w === undefined) throw new Error(`unknown --before workload ${name}`);
  return w;
});
const beforeSeconds = Number(flag("before-seconds") ?? 3);
const profileFile = flag("profile");

const system = await open();
await fill(system, size, value);

/** Runs `w` for `s` seconds of measured time; its rate. */
async function run(w: (typeof WORKLOADS)[number], s: number): Promise<number> {
  const n = Math.min(w.maxN(size), w.name === "list-1000" || w.name === "sql-scan" ? 20 : 1000);
  let ops = 0;
  let ms = 0;
  for (let r = 0; ms < s * 1000; r++) {
    ms += await system.round(w.name, { n, size, offset: (r * 104_729) % size, value });
    ops += n;
  }
  return (ops / ms) * 1000;
}

for (const w of before) {
  const rate = await run(w, beforeSeconds);
  console.log(`before: ${w.name} ${Math.round(rate).toLocaleString("en-US")} ${w.unit}/s`);
}
const session = profileFile === undefined ? undefined : new Session();
if (session !== undefined) {
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
}
const rate = await run(info, seconds);
if (session !== undefined && profileFile !== undefined) {
  const { profile } = await session.post("Profiler.stop");
  writeFileSync(profileFile, JSON.stringify(profile));
  session.disconnect();
}
console.log(`${systemName} ${info.name} @ ${size}: ${Math.round(rate).toLocaleString("en-US")} ${info.unit}/s`);
await system.close();
