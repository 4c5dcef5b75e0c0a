/**
 * `npm run bench:host`: the object host's memory with many objects, each mode in a fresh process
 * (bench/host-memory.ts), written to bench/results/host-memory.json and host-memory.md.
 *
 *   npm run bench:host                 # 10,000 objects (directory, memory), 2,000 without eviction
 *   npm run bench:host -- --quick      # 1,000 and 300
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { HostMemoryResult, HostMemorySample } from "./host-memory";

const quick = process.argv.includes("--quick");
const objects = quick ? 1_000 : 10_000;
const runs: Array<[mode: string, objects: number, activeSet: number]> = [
  ["directory", objects, 100],
  ["memory", objects, 100],
  ["no-eviction", quick ? 300 : 2_000, quick ? 300 : 2_000],
];
const script = fileURLToPath(new URL("./host-memory.ts", import.meta.url));
const results: HostMemoryResult[] = [];
for (const [mode, n, active] of runs) {
  console.log(`host-memory ${mode} ${n} objects (active set ${active}) …`);
  const child = spawnSync(
    process.execPath,
    ["--expose-gc", "--import", "tsx", script, String(n), String(active), mode],
    {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  if (child.status !== 0) throw new Error(`host-memory ${mode} failed: ${child.stderr}`);
  const line = child.stdout.trim().split("\n").pop() ?? "";
  results.push(JSON.parse(line) as HostMemoryResult);
}

const mib = (bytes: number) => (bytes / 1_048_576).toFixed(1);
const row = (r: HostMemoryResult, s: HostMemorySample, label?: string) =>
  `| ${r.mode} | ${label ?? s.objects.toLocaleString("en")} | ${s.live} | ${mib(s.heapPlusExternalBytes - r.baseline.heapPlusExternalBytes)} | ${mib(s.rssBytes - r.baseline.rssBytes)} |`;
const lines = [
  "| mode | objects touched | live | JS heap + external over baseline (MiB) | RSS over baseline (MiB) |",
  "|---|---|---|---|---|",
];
for (const r of results) {
  const picks = r.samples.filter(
    (_, i) => i === 0 || i === r.samples.length - 1 || i === Math.floor(r.samples.length / 2),
  );
  for (const s of picks) lines.push(row(r, s));
  lines.push(row(r, r.afterEvictingAll, "after evicting all"));
}
const md = [
  `Object host, objects touched once each (one key-value write and one SQL row), active set ${results[0]?.activeSet} unless`,
  "evictions are off; baseline: sql.js loaded and one object opened and evicted. " +
    `Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; seconds: ${results.map((r) => `${r.mode} ${r.seconds.toFixed(0)}`).join(", ")}.`,
  "",
  ...lines,
  "",
].join("\n");
const dir = fileURLToPath(new URL("./results/", import.meta.url));
writeFileSync(`${dir}host-memory.json`, `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(`${dir}host-memory.md`, md);
console.log(md);
