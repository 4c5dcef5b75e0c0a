/**
 * Summarizes a `.cpuprofile` (from `node --cpu-prof`): the functions with the most self time, and
 * the most inclusive time, with their source location.
 *
 *   node --import tsx bench/profile-summary.ts <file.cpuprofile> [--top=25] [--stalls=40]
 *
 * With `--stalls=MS`, it also lists every run of consecutive busy samples (no idle sample between
 * them: one event-loop turn, or several back to back) longer than MS milliseconds, each with the
 * code it spent the most time in (the sampled function, and the nearest two project functions on
 * its stack), to find what a long event-loop stall was doing.
 *
 * (Under tsx, `--cpu-prof` also writes a small profile of the loader thread: pass the large file.)
 */
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (file === undefined) throw new Error("usage: profile-summary.ts <file.cpuprofile> [--top=25]");
const top = Number(process.argv.find((a) => a.startsWith("--top="))?.slice(6) ?? 25);
const stallMs = Number(process.argv.find((a) => a.startsWith("--stalls="))?.slice(9) ?? 0);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});

const label = (f: CallFrame): string => {
  const where = f.url.replace(/^file:\/\/.*?\/(node_modules|src|bench)\//, "$1/");
  return `${f.functionName || "(anonymous)"} ${where ? `${where}:${f.lineNumber + 1}` : ""}`.trim();
};
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
for (const [id, us] of selfUs) {
  total += us;
  const node = byId.get(id);
  if (node === undefined) continue;
  const name = label(node.callFrame);
  self.set(name, (self.get(name) ?? 0) + us);
  // Each distinct function on the stack gets the time once.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur);
    if (n === undefined) break;
    const l = label(n.callFrame);
    if (!seen.has(l)) {
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + us);
    }
  }
}
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (total ${(total / 1000).toFixed(0)} ms)`);
  for (const [name, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${name}`);
  }
};
show("self time", self);
show("inclusive time", inclusive);

if (stallMs > 0) {
  /** The sampled function and the nearest two project functions above it. */
  const where = (id: number): string => {
    const leaf = byId.get(id);
    if (leaf === undefined) return "?";
    const parts = [leaf.callFrame.functionName || "(anonymous)"];
    for (let cur = parent.get(id); cur !== undefined && parts.length < 3; cur = parent.get(cur)) {
      const f = byId.get(cur)?.callFrame;
      if (f !== undefined && /\/(src|bench)\//.test(f.url)) parts.push(label(f));
    }
    return parts.join(" < ");
  };
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  const runs: { startMs: number; ms: number; by: Map<string, number> }[] = [];
  let at = profile.startTime;
  let run: { startMs: number; ms: number; by: Map<string, number> } | undefined;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (idle.has(id)) {
      if (run !== undefined && run.ms >= stallMs) runs.push(run);
      run = undefined;
      return;
    }
    run ??= { startMs: (at - profile.startTime) / 1000, ms: 0, by: new Map() };
    run.ms += delta / 1000;
    const w = where(id);
    run.by.set(w, (run.by.get(w) ?? 0) + delta / 1000);
  });
  if (run !== undefined && run.ms >= stallMs) runs.push(run);
  console.log(`\nbusy runs of ${stallMs} ms or more: ${runs.length}`);
  for (const r of runs) {
    const heaviest = [...r.by].sort((a, b) => b[1] - a[1]).slice(0, 3);
    console.log(`at ${r.startMs.toFixed(0)} ms, ${r.ms.toFixed(0)} ms busy:`);
    for (const [w, ms] of heaviest) console.log(`  ${ms.toFixed(0).padStart(5)} ms  ${w}`);
  }
}
