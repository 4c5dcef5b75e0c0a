/**
 * The performance targets of issues 2, 3, 5 and 9, evaluated on one run. A ratio target holds only
 * if it holds at every data size where both systems were measured: the worst size decides.
 */
import type { SystemName } from "../systems/system";
import type { BenchResults, TargetResult } from "./results";
import { formatBytes, formatRatio, formatSize, pairedRatio } from "./stats";
import type { WorkloadName } from "./workloads";

type Measured = Omit<BenchResults, "targets" | "meta">;

/** Sizes skipped because a round was below its system's noise floor, for the "measured" text. */
function skippedNote(r: Measured, workload: WorkloadName, peer: SystemName, minSize = 0): string {
  const skipped = r.workloads
    .filter((w) => w.workload === workload && w.size >= minSize)
    .filter((w) => w.results.some((m) => (m.system === "actorstore" || m.system === peer) && m.belowNoiseFloor))
    .map((w) => formatSize(w.size));
  return skipped.length === 0 ? "" : ` (not counted at ${skipped.join(", ")}: rounds below the timing noise floor)`;
}

/** ours/peer throughput at each size ({@link pairedRatio}), leaving out rounds below a noise floor. */
function ratios(r: Measured, workload: WorkloadName, peer: SystemName, minSize = 0): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const w of r.workloads) {
    if (w.workload !== workload || w.size < minSize) continue;
    const ours = w.results.find((m) => m.system === "actorstore");
    const theirs = w.results.find((m) => m.system === peer);
    if (ours === undefined || theirs === undefined || ours.belowNoiseFloor || theirs.belowNoiseFloor) continue;
    if (theirs.summary.median > 0) out.push([w.size, pairedRatio(ours.samples, theirs.samples)]);
  }
  return out;
}

/** actorstore at least `min`× the peer's throughput. */
function atLeast(
  r: Measured,
  id: string,
  description: string,
  workload: WorkloadName,
  peer: SystemName,
  min: number,
  minSize = 0,
): TargetResult {
  const rs = ratios(r, workload, peer, minSize);
  if (rs.length === 0) return { id, description, status: "N/A", measured: "not measured in this run" };
  const measured =
    rs.map(([size, x]) => `${formatRatio(x)} at ${formatSize(size)}`).join(", ") +
    skippedNote(r, workload, peer, minSize);
  return { id, description, status: rs.every(([, x]) => x >= min) ? "PASS" : "FAIL", measured };
}

/** actorstore's overhead over raw sql.js (raw throughput / ours) at most `max`. */
function overhead(r: Measured, id: string, description: string, workload: WorkloadName, max: number): TargetResult {
  const rs = ratios(r, workload, "raw-sqljs");
  if (rs.length === 0) return { id, description, status: "N/A", measured: "not measured in this run" };
  const measured = rs.map(([size, x]) => `${formatRatio(1 / x)} at ${formatSize(size)}`).join(", ");
  return { id, description, status: rs.every(([, x]) => 1 / x <= max) ? "PASS" : "FAIL", measured };
}

/** Evaluates every target that this run measured. */
export function evaluateTargets(r: Measured): TargetResult[] {
  const t: TargetResult[] = [
    atLeast(r, "get-cached-vs-workerd", "cached get() ≥ 2× workerd (issue 9)", "get-cached", "workerd", 2),
    atLeast(r, "get-cached-vs-miniflare2", "cached get() ≥ 2× Miniflare 2 (issue 9)", "get-cached", "miniflare2", 2),
    atLeast(r, "get-cached-vs-raw", "cached get() ≥ 3× raw sql.js point reads (issue 2)", "get-cached", "raw-sqljs", 3),
    atLeast(r, "put-vs-workerd", "awaited put() ≥ 1.5× workerd (issue 9)", "put", "workerd", 1.5),
    atLeast(r, "put-vs-miniflare2", "awaited put() ≥ 2× Miniflare 2 (issue 9)", "put", "miniflare2", 2),
    atLeast(
      r,
      "list-vs-workerd",
      "list({ limit: 1000 }) over ≥ 10k keys ≥ 1× workerd (issue 9)",
      "list-1000",
      "workerd",
      1,
      10_000,
    ),
    atLeast(
      r,
      "list-vs-miniflare2",
      "list({ limit: 1000 }) over ≥ 10k keys ≥ 10× Miniflare 2 (issue 9)",
      "list-1000",
      "miniflare2",
      10,
      10_000,
    ),
    atLeast(r, "sql-select-vs-workerd", "SQL point select ≥ 1× workerd (issue 9)", "sql-select", "workerd", 1),
    atLeast(r, "sql-insert-vs-workerd", "SQL insert ≥ 1× workerd (issue 9)", "sql-insert", "workerd", 1),
    overhead(r, "put-overhead", "awaited put() overhead over raw sql.js ≤ 1.3× (issue 2)", "put", 1.3),
    overhead(r, "list-overhead", "list() overhead over raw sql.js ≤ 1.3× (issue 2)", "list-1000", 1.3),
  ];
  const sameWork: WorkloadName[] = [
    "put",
    "put-batch",
    "get-uncached",
    "get-128",
    "list-1000",
    "delete",
    "transaction",
    "sql-insert",
    "sql-select",
    "sql-scan",
  ];
  for (const w of sameWork) {
    const issue = w.startsWith("sql-") ? "issues 3 and 9" : "issue 9";
    t.push(overhead(r, `${w}-overhead-1.25`, `${w}: overhead over raw sql.js ≤ 1.25× (${issue})`, w, 1.25));
  }
  for (const rec of r.recovery) {
    const where = `${rec.persistence} persistence, ${formatBytes(rec.databaseBytes)}, ${rec.batchesAfterSnapshot.toLocaleString("en-US")} batches after the snapshot`;
    t.push({
      id: `recovery-${rec.persistence}`,
      description: `recovery < 300 ms (${where}; issue 5)`,
      status: rec.recovery.median < 300 ? "PASS" : "FAIL",
      measured: `${rec.recovery.median.toFixed(0)} ms median (${rec.recovery.min.toFixed(0)}–${rec.recovery.max.toFixed(0)})`,
    });
    t.push({
      id: `restore-${rec.persistence}`,
      description: `restore to a bookmark < 300 ms (${where}; issue 5)`,
      status: rec.restore.median < 300 ? "PASS" : "FAIL",
      measured: `${rec.restore.median.toFixed(0)} ms median (${rec.restore.min.toFixed(0)}–${rec.restore.max.toFixed(0)})`,
    });
  }
  if (r.logCost.length > 0) {
    const worst = r.logCost.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    t.push({
      id: "log-bytes",
      description: "log bytes per committed batch ≤ 2× the changed data (issue 5)",
      status: r.logCost.every((c) => c.ratio <= 2) ? "PASS" : "FAIL",
      measured: `worst ${formatRatio(worst.ratio)} (${worst.shape})`,
    });
  }
  for (const m of r.memory.filter((x) => x.system === "actorstore" || x.system === "actorstore-file")) {
    const kind = m.system === "actorstore" ? "in-memory persistence" : "file persistence";
    for (const [what, bytes] of [
      ["live heap + external", m.heapBytes],
      ["RSS", m.rssBytes],
    ] as const) {
      t.push({
        id: `memory-${m.system}-${what === "RSS" ? "rss" : "heap"}`,
        description: `memory for ${formatSize(m.keys)} keys ≤ 2× raw data (${kind}, ${what}, cache at its soft limit; issue 9)`,
        status: bytes <= 2 * m.rawBytes ? "PASS" : "FAIL",
        measured: `${formatBytes(bytes)} = ${formatRatio(bytes / m.rawBytes)} of ${formatBytes(m.rawBytes)}`,
      });
    }
  }
  return t;
}
