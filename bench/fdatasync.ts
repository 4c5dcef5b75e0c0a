/**
 * The floor under the growth bench's batch latency: raw appends of one batch's log bytes to a file
 * in the same temporary directory, each followed by `fdatasync`, as the file adapter does for a
 * commit (`npx tsx bench/fdatasync.ts [appends] [bytes]`, defaults 1,000 appends of 100,000
 * bytes). Prints p50/p90/p99/max of the write, the `fdatasync` and both, and the load average
 * before and after (the disk is shared with everything else on the machine).
 *
 * `--beside <MB> [--slice <MiB>]`: instead, appends in a loop while a file of that size is written
 * beside the log and fsynced, as the file adapter writes a snapshot (whole, or in slices each
 * `fdatasync`ed before the next); prints the appends' latency during that write and its duration.
 */
import { type FileHandle, mkdtemp, open, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const flag = (name: string): number | undefined => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : Number(process.argv[i + 1]);
};
const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--") && !all[i - 1]?.startsWith("--"));
const appends = Number(positional[0] ?? 1000);
const bytes = Number(positional[1] ?? 100_000);
const besideMb = flag("--beside");
const sliceMib = flag("--slice");
const dir = await mkdtemp(join(tmpdir(), "actorstore-fdatasync-"));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const before = load();
const write: number[] = [];
const sync: number[] = [];
const total: number[] = [];
let besideMs = 0;

async function writeBeside(megabytes: number, sliceBytes: number | undefined): Promise<void> {
  const data = new Uint8Array(megabytes * 1_000_000).fill(7);
  const t = performance.now();
  const handle = await open(join(dir, "snapshot.tmp"), "w");
  try {
    const slice = sliceBytes ?? data.length;
    for (let at = 0; at < data.length; at += slice) {
      const end = Math.min(data.length, at + slice);
      for (let w = at; w < end; ) w += (await handle.write(data, w, end - w, w)).bytesWritten;
      if (sliceBytes !== undefined && end < data.length) await handle.datasync();
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  besideMs = performance.now() - t;
}

async function append(file: FileHandle, data: Uint8Array, position: number): Promise<void> {
  const t0 = performance.now();
  await file.write(data, 0, data.length, position);
  const t1 = performance.now();
  await file.datasync();
  const t2 = performance.now();
  write.push(t1 - t0);
  sync.push(t2 - t1);
  total.push(t2 - t0);
}

try {
  const file = await open(join(dir, "log"), "wx");
  const data = new Uint8Array(bytes).fill(0x61);
  let position = 0;
  if (besideMb === undefined) {
    for (let i = 0; i < appends; i++, position += data.length) await append(file, data, position);
  } else {
    let done = false;
    const beside = writeBeside(besideMb, sliceMib === undefined ? undefined : sliceMib * 1024 * 1024).finally(() => {
      done = true;
    });
    while (!done) {
      await append(file, data, position);
      position += data.length;
    }
    await beside;
  }
  await file.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
const q = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0).toFixed(2);
};
const what =
  besideMb === undefined
    ? ""
    : `, while ${besideMb} MB were written beside (${sliceMib === undefined ? "whole" : `${sliceMib} MiB slices`}) in ${besideMs.toFixed(0)} ms`;
console.log(`${total.length} appends of ${bytes} bytes + fdatasync${what} (load before: ${before}, after: ${load()})`);
console.log("| | p50 | p90 | p99 | max |\n|---|---:|---:|---:|---:|");
for (const [name, values] of [
  ["write", write],
  ["fdatasync", sync],
  ["write + fdatasync", total],
] as const) {
  console.log(`| ${name} | ${q(values, 0.5)} ms | ${q(values, 0.9)} ms | ${q(values, 0.99)} ms | ${q(values, 1)} ms |`);
}
