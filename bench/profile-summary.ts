/**
 * Summarizes a `.cpuprofile` (from `node --cpu-prof`): the functions with the most self time, and
 * the most inclusive time, with their source location.
 *
 *   node --import tsx bench/profile-summary.ts <file.cpuprofile> [--top=25]
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
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (file === undefined) throw new Error("usage: profile-summary.ts <file.cpuprofile> [--top=25]");
const top = Number(process.argv.find((a) => a.startsWith("--top="))?.slice(6) ?? 25);
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
