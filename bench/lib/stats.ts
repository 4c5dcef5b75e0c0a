/** Small statistics and number formatting for the benchmark tables. */

/** Median, quartiles and extremes of a sample. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  q1: number;
  q3: number;
}

/** The `q` quantile (0..1) of sorted values, interpolated linearly. */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] ?? Number.NaN;
  const b = sorted[hi] ?? Number.NaN;
  return a + (b - a) * (pos - lo);
}

/** Summarizes a sample (NaN fields when it is empty). */
export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    median: quantile(sorted, 0.5),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
  };
}

/**
 * How many times `ours` is `theirs`, from throughput samples of rounds that ran interleaved (round
 * i of each back to back): the median of the per-round ratios, so a slow stretch of the machine or
 * a garbage collection of the shared heap weighs on both sides of a pair. Median over median when
 * the rounds do not pair up.
 */
export function pairedRatio(ours: readonly number[], theirs: readonly number[]): number {
  if (ours.length === 0 || ours.length !== theirs.length) return summarize(ours).median / summarize(theirs).median;
  return summarize(ours.map((x, i) => x / (theirs[i] as number))).median;
}

/** `1234567` → `1.23M`, `45678` → `45.7k`, `12.5` → `12.5`. */
export function formatRate(x: number): string {
  if (!Number.isFinite(x)) return "–";
  const abs = Math.abs(x);
  if (abs >= 1e6) return `${(x / 1e6).toPrecision(3)}M`;
  if (abs >= 1e3) return `${(x / 1e3).toPrecision(3)}k`;
  return x.toPrecision(3);
}

/** A ratio with two decimals and a trailing ×. */
export function formatRatio(x: number): string {
  return Number.isFinite(x) ? `${x >= 10 ? x.toFixed(1) : x.toFixed(2)}×` : "–";
}

/** Bytes in the nearest binary unit. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "–";
  const abs = Math.abs(bytes);
  if (abs >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (abs >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${Math.round(bytes)} B`;
}

/** `1000` → `1k`, `100000` → `100k`, `1000000` → `1M`. */
export function formatSize(size: number): string {
  if (size >= 1e6 && size % 1e6 === 0) return `${size / 1e6}M`;
  if (size >= 1e3 && size % 1e3 === 0) return `${size / 1e3}k`;
  return String(size);
}
