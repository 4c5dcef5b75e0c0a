/**
 * Turns a run's results into text: one table per workload (sizes down, systems across, then the
 * ratio of actorstore to each peer), the actorstore-only measurements, memory, and the targets.
 * The same rows serve the console (aligned columns) and Markdown (pipe tables).
 */
import { SYSTEM_NAMES, type SystemName } from "../systems/system";
import type { BenchResults } from "./results";
import { formatBytes, formatRate, formatRatio, formatSize, pairedRatio } from "./stats";

type Table = { title: string; note?: string; header: string[]; rows: string[][] };

const PEERS: SystemName[] = ["workerd", "miniflare2", "raw-sqljs"];

/** The per-workload tables. */
function workloadTables(r: BenchResults): Table[] {
  const tables: Table[] = [];
  const names = [...new Set(r.workloads.map((w) => w.workload))];
  for (const name of names) {
    const entries = r.workloads.filter((w) => w.workload === name);
    const first = entries[0];
    if (first === undefined) continue;
    const systems = SYSTEM_NAMES.filter((s) => entries.some((e) => e.results.some((m) => m.system === s)));
    const peers = PEERS.filter((p) => systems.includes(p));
    const header = ["keys", ...systems.map((s) => `${s} ${first.unit}/s`), ...peers.map((p) => `actorstore / ${p}`)];
    const rows = entries.map((e) => {
      const cell = (s: SystemName): string => {
        const m = e.results.find((x) => x.system === s);
        if (m === undefined) return "–";
        const mark = m.belowNoiseFloor ? "≈" : "";
        return `${mark}${formatRate(m.summary.median)} (${formatRate(m.summary.min)}–${formatRate(m.summary.max)})`;
      };
      const ours = e.results.find((m) => m.system === "actorstore")?.samples;
      const ratio = (p: SystemName): string => {
        const theirs = e.results.find((m) => m.system === p)?.samples;
        return ours === undefined || theirs === undefined ? "–" : formatRatio(pairedRatio(ours, theirs));
      };
      return [formatSize(e.size), ...systems.map(cell), ...peers.map(ratio)];
    });
    const ns = entries.map((e) => `${formatSize(e.size)}: n=${e.results.map((m) => `${m.system} ${m.n}`).join(", ")}`);
    const noisy = entries.some((e) => e.results.some((m) => m.belowNoiseFloor))
      ? "; ≈ = rounds shorter than the system can time reliably (n is capped by the key count): not used for targets"
      : "";
    tables.push({ title: `${name}: ${first.title}`, note: `ops per round — ${ns.join("; ")}${noisy}`, header, rows });
  }
  return tables;
}

function durabilityTables(r: BenchResults): Table[] {
  const tables: Table[] = [];
  if (r.recovery.length > 0) {
    tables.push({
      title: "actorstore: recovery and restore (ms, median (min–max))",
      note: "recovery = open: newest snapshot + replay of every batch after it; restore = open with a pending restore to the bookmark taken halfway through the batches",
      header: ["persistence", "database", "keys", "batches after snapshot", "recovery ms", "restore ms"],
      rows: r.recovery.map((x) => [
        x.persistence,
        formatBytes(x.databaseBytes),
        x.keys.toLocaleString("en-US"),
        x.batchesAfterSnapshot.toLocaleString("en-US"),
        `${x.recovery.median.toFixed(0)} (${x.recovery.min.toFixed(0)}–${x.recovery.max.toFixed(0)})`,
        `${x.restore.median.toFixed(0)} (${x.restore.min.toFixed(0)}–${x.restore.max.toFixed(0)})`,
      ]),
    });
  }
  if (r.logCost.length > 0) {
    tables.push({
      title: "actorstore: log bytes per committed batch",
      note: "changed data = key bytes + encoded value bytes (key-value), or the row's values (SQL: 8-byte integer + text)",
      header: ["batch", "changed bytes", "log bytes", "log / changed"],
      rows: r.logCost.map((c) => [
        c.shape,
        c.changedBytesPerBatch.toFixed(0),
        c.logBytesPerBatch.toFixed(0),
        formatRatio(c.ratio),
      ]),
    });
  }
  if (r.memory.length > 0) {
    tables.push({
      title: "memory for key-value data (growth over the empty store, after a full GC)",
      note: "raw data = keys × (12-byte key + 100-byte value); heap = V8 heap + external (ArrayBuffers, sql.js's WASM heap)",
      header: ["system", "keys", "raw data", "RSS", "peak RSS", "heap + external", "heap / raw", "notes"],
      rows: r.memory.map((m) => [
        m.system,
        formatSize(m.keys),
        formatBytes(m.rawBytes),
        formatBytes(m.rssBytes),
        formatBytes(m.peakRssBytes),
        formatBytes(m.heapBytes),
        Number.isFinite(m.heapBytes) ? formatRatio(m.heapBytes / m.rawBytes) : "–",
        [m.cacheBytes === undefined ? "" : `cache ${formatBytes(m.cacheBytes)}`, m.note].filter(Boolean).join("; "),
      ]),
    });
  }
  return tables;
}

function targetTable(r: BenchResults): Table {
  return {
    title: "targets",
    header: ["", "target", "measured"],
    rows: r.targets.map((t) => [t.status, t.description, t.measured]),
  };
}

function allTables(r: BenchResults): Table[] {
  return [...workloadTables(r), ...durabilityTables(r), targetTable(r)];
}

function metaLines(r: BenchResults): string[] {
  const m = r.meta;
  return [
    `${m.date} · ${m.mode} run · node ${m.node} · ${m.platform} · ${m.cpus} × ${m.cpuModel}`,
    `load average ${m.loadAverage.start.toFixed(1)} at start, ${m.loadAverage.end.toFixed(1)} at end${
      Math.max(m.loadAverage.start, m.loadAverage.end) > m.cpus
        ? " (above the CPU count: other work competed for the CPUs)"
        : ""
    }`,
    `${m.rounds} measured rounds after ${m.warmupRounds} warm-up round(s) and calibration to ≥ ${m.roundTargetMs} ms per round; cells are median (min–max) ops/s; value: ${m.value}; actorstore codec: ${m.actorstoreCodec}`,
    `versions: ${Object.entries(m.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")} · took ${(m.durationMs / 1000).toFixed(0)} s`,
  ];
}

/** Console text. */
export function formatConsole(r: BenchResults): string {
  const out: string[] = [...metaLines(r), ""];
  for (const t of allTables(r)) {
    out.push(t.title);
    if (t.note !== undefined) out.push(`  (${t.note})`);
    const widths = t.header.map((h, i) => Math.max(h.length, ...t.rows.map((row) => (row[i] ?? "").length)));
    const line = (cells: string[]) =>
      cells
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd();
    out.push(line(t.header));
    for (const row of t.rows) out.push(line(row));
    out.push("");
  }
  const misses = r.targets.filter((t) => t.status === "FAIL");
  out.push(
    misses.length === 0
      ? "Every measured target is met."
      : `${misses.length} of ${r.targets.filter((t) => t.status !== "N/A").length} measured targets are NOT met: ${misses.map((t) => t.id).join(", ")}.`,
  );
  return out.join("\n");
}

const escapeCell = (s: string): string => s.replace(/\|/g, "\\|");

/** Markdown: the results tables and the targets (docs/benchmarks.md includes this file). */
export function formatMarkdown(r: BenchResults): string {
  const out: string[] = ["<!-- generated by `npm run bench`: bench/results/latest.md -->", ""];
  out.push(...metaLines(r).map((l) => `${l}  `), "");
  for (const t of allTables(r)) {
    out.push(`#### ${t.title}`, "");
    if (t.note !== undefined) out.push(`<sub>${escapeCell(t.note)}</sub>`, "");
    out.push(`| ${t.header.map(escapeCell).join(" | ")} |`);
    out.push(`|${t.header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`);
    for (const row of t.rows) out.push(`| ${row.map(escapeCell).join(" | ")} |`);
    out.push("");
  }
  return out.join("\n");
}
