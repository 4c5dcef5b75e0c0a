/**
 * The floor under the growth bench's batch latency: raw appends of one batch's log bytes to a file
 * in the same temporary directory, each followed by `fdatasync`, as the file adapter does for a
 * commit (`npx tsx bench/fdatasync.ts [appends] [bytes]`, defaults 1,000 appends of 100,000
 * bytes). Prints p50/p90/p99/max of the write, the `fdatasync` and both, and the load average
 * before and after (the disk is shared with everything else on the machine).
 */
import { mkdtemp, open, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const appends = Number(process.argv[2] ?? 1000);
const bytes = Number(process.argv[3] ?? 100_000);
const dir = await mkdtemp(join(tmpdir(), "actorstore-fdatasync-"));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const before = load();
const write: number[] = [];
const sync: number[] = [];
const total: number[] = [];
try {
  const file = await open(join(dir, "log"), "wx");
  const data = new Uint8Array(bytes).fill(0x61);
  let position = 0;
  for (let i = 0; i < appends; i++) {
    const t0 = performance.now();
    await file.write(data, 0, data.length, position);
    const t1 = performance.now();
    await file.datasync();
    const t2 = performance.now();
    position += data.length;
    write.push(t1 - t0);
    sync.push(t2 - t1);
    total.push(t2 - t0);
  }
  await file.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
const q = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0).toFixed(2);
};
console.log(`${appends} appends of ${bytes} bytes + fdatasync in ${dir} (load before: ${before}, after: ${load()})`);
console.log("| | p50 | p90 | p99 | max |\n|---|---:|---:|---:|---:|");
for (const [name, values] of [
  ["write", write],
  ["fdatasync", sync],
  ["write + fdatasync", total],
] as const) {
  console.log(`| ${name} | ${q(values, 0.5)} ms | ${q(values, 0.9)} ms | ${q(values, 0.99)} ms | ${q(values, 1)} ms |`);
}
