/**
 * A small-multiples SVG: throughput (log scale) against data size (log scale), one panel per
 * workload, one line per system. Written by hand so the suite needs no charting dependency.
 */
import { SYSTEM_NAMES, type SystemName } from "../systems/system";
import type { BenchResults } from "./results";
import { formatRate, formatSize } from "./stats";

const COLORS: Record<SystemName, string> = {
  actorstore: "#d1495b",
  "actorstore-file": "#edae49",
  workerd: "#00798c",
  miniflare2: "#30638e",
  "raw-sqljs": "#6c757d",
};

const PANEL_W = 260;
const PANEL_H = 170;
const MARGIN = { left: 48, right: 12, top: 26, bottom: 28 };
const COLUMNS = 4;

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The chart as SVG text. */
export function throughputChart(r: BenchResults): string {
  const names = [...new Set(r.workloads.map((w) => w.workload))];
  const rowsCount = Math.ceil(names.length / COLUMNS);
  const legendH = 28;
  const width = COLUMNS * PANEL_W;
  const height = rowsCount * PANEL_H + legendH;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="10">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
  ];
  SYSTEM_NAMES.forEach((s, i) => {
    const x = 10 + i * 150;
    parts.push(`<line x1="${x}" y1="14" x2="${x + 20}" y2="14" stroke="${COLORS[s]}" stroke-width="2.5"/>`);
    parts.push(`<text x="${x + 25}" y="18">${esc(s)}</text>`);
  });
  names.forEach((name, index) => {
    const entries = r.workloads.filter((w) => w.workload === name).sort((a, b) => a.size - b.size);
    const ox = (index % COLUMNS) * PANEL_W;
    const oy = legendH + Math.floor(index / COLUMNS) * PANEL_H;
    const plotW = PANEL_W - MARGIN.left - MARGIN.right;
    const plotH = PANEL_H - MARGIN.top - MARGIN.bottom;
    const sizes = entries.map((e) => e.size);
    const values = entries.flatMap((e) => e.results.map((m) => m.summary.median)).filter((v) => v > 0);
    if (sizes.length === 0 || values.length === 0) return;
    const lx = (s: number) => Math.log10(s);
    const [xMin, xMax] = [lx(Math.min(...sizes)), lx(Math.max(...sizes))];
    const yMin = Math.floor(Math.log10(Math.min(...values)));
    const yMax = Math.ceil(Math.log10(Math.max(...values)));
    const px = (s: number) => ox + MARGIN.left + (xMax === xMin ? plotW / 2 : ((lx(s) - xMin) / (xMax - xMin)) * plotW);
    const py = (v: number) => oy + MARGIN.top + plotH - ((Math.log10(v) - yMin) / Math.max(1, yMax - yMin)) * plotH;
    const unit = entries[0]?.unit ?? "ops";
    parts.push(`<text x="${ox + MARGIN.left}" y="${oy + 14}" font-weight="bold">${esc(name)} (${esc(unit)}/s)</text>`);
    parts.push(
      `<rect x="${ox + MARGIN.left}" y="${oy + MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#ccc"/>`,
    );
    for (let e = yMin; e <= yMax; e++) {
      const y = py(10 ** e);
      parts.push(`<line x1="${ox + MARGIN.left}" y1="${y}" x2="${ox + MARGIN.left + plotW}" y2="${y}" stroke="#eee"/>`);
      parts.push(`<text x="${ox + MARGIN.left - 4}" y="${y + 3}" text-anchor="end">${formatRate(10 ** e)}</text>`);
    }
    for (const s of sizes) {
      parts.push(`<text x="${px(s)}" y="${oy + PANEL_H - 12}" text-anchor="middle">${formatSize(s)}</text>`);
    }
    for (const system of SYSTEM_NAMES) {
      const points = entries
        .map((e) => [e.size, e.results.find((m) => m.system === system)?.summary.median] as const)
        .filter((p): p is readonly [number, number] => p[1] !== undefined && p[1] > 0);
      if (points.length === 0) continue;
      const d = points.map(([s, v], i) => `${i === 0 ? "M" : "L"}${px(s).toFixed(1)},${py(v).toFixed(1)}`).join(" ");
      parts.push(`<path d="${d}" fill="none" stroke="${COLORS[system]}" stroke-width="2"/>`);
      for (const [s, v] of points) {
        parts.push(`<circle cx="${px(s).toFixed(1)}" cy="${py(v).toFixed(1)}" r="2.5" fill="${COLORS[system]}"/>`);
      }
    }
  });
  parts.push("</svg>");
  return parts.join("\n");
}
