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
 * `--gate` (with `--slice`): each slice's write and flush first wait for the log's write + flush in
 * flight, as the file adapter paces a snapshot. `--gap <ms>`: that much CPU (a busy loop) before each
 * append, a batch's own work between its flushes. `--prezero`: the log file is written with zeros
 * (512 MiB) and fsynced first, so that appends overwrite allocated blocks and `fdatasync` has no
 * size change to commit (an experiment; the file adapter appends).
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
/** CPU spent between appends (ms, busy loop): a batch's own work between its flushes. */
const gapMs = flag("--gap") ?? 0;
/** The snapshot's slices wait while a log write + flush is in flight (with --slice). */
const gate = process.argv.includes("--gate");
/** The log file is written with zeros to its final size first, so appends overwrite. */
const prezero = process.argv.includes("--prezero");
let logBusy = false;
const logIdle: Array<() => void> = [];
/** As the file adapter's pacing: waits for the log's write + flush in flight, if any (once). */
const whenLogIdle = async (): Promise<void> => {
  if (logBusy) await new Promise<void>((r) => logIdle.push(r));
};
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
      if (gate) await whenLogIdle();
      const end = Math.min(data.length, at + slice);
      for (let w = at; w < end; ) w += (await handle.write(data, w, end - w, w)).bytesWritten;
      if (gate) await whenLogIdle();
      if (sliceBytes !== undefined && end < data.length) await handle.datasync();
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  besideMs = performance.now() - t;
}

async function append(file: FileHandle, data: Uint8Array, position: number): Promise<void> {
  if (gapMs > 0) {
    const until = performance.now() + gapMs;
    while (performance.now() < until);
  }
  logBusy = true;
  const t0 = performance.now();
  await file.write(data, 0, data.length, position);
  const t1 = performance.now();
  await file.datasync();
  const t2 = performance.now();
  logBusy = false;
  for (const wake of logIdle.splice(0)) wake();
  write.push(t1 - t0);
  sync.push(t2 - t1);
  total.push(t2 - t0);
}

try {
  const file = await open(join(dir, "log"), "wx");
  const data = new Uint8Array(bytes).fill(0x61);
  let position = 0;
  if (prezero) {
    const zeros = new Uint8Array(64 * 1024 * 1024);
    for (let i = 0; i < 8; i++) await file.write(zeros, 0, zeros.length, i * zeros.length);
    await file.sync();
  }
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
    : `${gapMs > 0 ? `, ${gapMs} ms CPU between appends` : ""}${gate ? ", slices gated on the log" : ""}${prezero ? ", log prezeroed" : ""}, while ${besideMb} MB were written beside (${sliceMib === undefined ? "whole" : `${sliceMib} MiB slices`}) in ${besideMs.toFixed(0)} ms`;
console.log(`${total.length} appends of ${bytes} bytes + fdatasync${what} (load before: ${before}, after: ${load()})`);
console.log("| | p50 | p90 | p99 | max |\n|---|---:|---:|---:|---:|");
for (const [name, values] of [
  ["write", write],
  ["fdatasync", sync],
  ["write + fdatasync", total],
] as const) {
  console.log(`| ${name} | ${q(values, 0.5)} ms | ${q(values, 0.9)} ms | ${q(values, 0.99)} ms | ${q(values, 1)} ms |`);
}
