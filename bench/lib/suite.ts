/**
 * The side-by-side suite: for each data size, open every system, fill it with the same data, then
 * for each workload calibrate a round size per system, warm up, and run measured rounds that take
 * turns between the systems (so a noisy moment hurts everyone alike rather than one system).
 */
import type { BenchSystem, SystemFactory, SystemName } from "../systems/system";
import { SYSTEM_NAMES } from "../systems/system";
import { type Summary, summarize } from "./stats";
import type { RoundParams, WorkloadName } from "./workloads";

/** What a workload measures and how to size its rounds. */
export interface WorkloadInfo {
  name: WorkloadName;
  /** One line for the tables. */
  title: string;
  /** What one counted operation is. */
  unit: string;
  /** Round sizes are a multiple of this. */
  step: number;
  /** The largest round for a dataset of `size` keys (distinct-key workloads: `size`). */
  maxN: (size: number) => number;
  /**
   * The round ends with one commit whatever n is (the writes coalesce), so n changes the per-op
   * cost: every system then runs the same n (see `commonRoundSize`).
   */
  sameN?: boolean;
}

/** Every workload, in the order the report shows them. */
export const WORKLOADS: readonly WorkloadInfo[] = [
  { name: "put", title: "awaited put(), then sync()", unit: "puts", step: 1, maxN: () => 1e6, sameN: true },
  {
    name: "put-batch",
    title: "100 put()s with no await between them, then sync()",
    unit: "puts",
    step: 100,
    maxN: () => 1e6,
  },
  {
    name: "put-sync",
    title: "put() then await sync(): one committed batch each",
    unit: "batches",
    step: 1,
    maxN: () => 1e5,
  },
  {
    name: "get-cached",
    title: "awaited get() of cached keys (1,000-key working set)",
    unit: "gets",
    step: 1,
    maxN: () => 1e6,
  },
  {
    name: "get-uncached",
    title: "awaited get() after eviction (distinct keys)",
    unit: "gets",
    step: 1,
    maxN: (s) => s,
  },
  { name: "get-128", title: "get() of 128 keys at once", unit: "calls", step: 1, maxN: () => 1e5 },
  { name: "list-1000", title: "list({ start, limit: 1000 })", unit: "calls", step: 1, maxN: () => 1e4 },
  {
    name: "delete",
    title: "awaited delete() of existing keys, then sync()",
    unit: "deletes",
    step: 1,
    maxN: (s) => s,
    sameN: true,
  },
  { name: "transaction", title: "transaction(): 4 gets + 4 puts", unit: "txns", step: 1, maxN: () => 1e5 },
  {
    name: "sql-insert",
    title: "sql.exec INSERT (coalesced), then sync()",
    unit: "rows",
    step: 1,
    maxN: () => 1e6,
    sameN: true,
  },
  {
    name: "sql-select",
    title: "sql.exec point SELECT by primary key, one()",
    unit: "selects",
    step: 1,
    maxN: () => 1e6,
  },
  { name: "sql-scan", title: "sql.exec 1,000-row range scan, toArray()", unit: "scans", step: 1, maxN: () => 1e4 },
];

/** How long and how often to measure. */
export interface SuiteOptions {
  sizes: number[];
  /** Measured rounds per (workload, size, system). */
  rounds: number;
  /** Unmeasured rounds after calibration. */
  warmupRounds: number;
  /** Calibration grows a round until it takes at least this long. */
  roundTargetMs: number;
  workloads: readonly WorkloadInfo[];
  /** The systems to compare and how to open them. */
  systems: ReadonlyArray<{ name: SystemName; open: SystemFactory }>;
  /** The value every write stores. */
  value: unknown;
  log: (line: string) => void;
}

/** The measurements of one system on one workload at one size. */
export interface Measurement {
  system: SystemName;
  /** Operations per round. */
  n: number;
  /** Operations per second of each measured round. */
  samples: number[];
  summary: Summary;
  /** Median duration of a measured round. */
  medianRoundMs: number;
  /**
   * The rounds were shorter than the system can time reliably (`BenchSystem.minRoundMs`), because
   * the workload caps n (distinct keys); the number is shown but not used for targets.
   */
  belowNoiseFloor: boolean;
}

/** One workload at one size. */
export interface WorkloadAtSize {
  workload: WorkloadName;
  size: number;
  results: Measurement[];
}

/** Runs one round, retrying nothing: a failure is a bug in an adapter or a workload. */
async function timeRound(system: BenchSystem, workload: WorkloadName, params: RoundParams): Promise<number> {
  return system.round(workload, params);
}

/** The largest round allowed for `info` at `size`, a multiple of its step. */
const capOf = (info: WorkloadInfo, size: number): number =>
  Math.max(info.step, Math.floor(info.maxN(size) / info.step) * info.step);

/**
 * Finds a round size that takes about `targetMs` (the calibration rounds double as warm-up).
 * Returns it with the rate it showed, in operations per ms.
 */
async function calibrate(
  system: BenchSystem,
  info: WorkloadInfo,
  size: number,
  options: SuiteOptions,
): Promise<{ n: number; perMs: number }> {
  const cap = capOf(info, size);
  let n = info.step;
  const target = () => Math.max(options.roundTargetMs, system.minRoundMs?.() ?? 0);
  for (let attempt = 0; ; attempt++) {
    // The faster of two runs: one scheduling hiccup must not stop the growth of n too early.
    const params = { n, size, offset: 0, value: options.value };
    const ms = Math.min(await timeRound(system, info.name, params), await timeRound(system, info.name, params));
    if (ms >= target() || n >= cap || attempt >= 12) return { n, perMs: n / ms };
    const factor = Math.min(50, Math.max(2, (target() / Math.max(ms, 0.02)) * 1.1));
    n = Math.min(cap, Math.ceil((n * factor) / info.step) * info.step);
  }
}

/**
 * One round size for every system: the median system's rounds take about the target, and the
 * slowest system's at most four times it (so the suite's run time stays bounded).
 */
function commonRoundSize(info: WorkloadInfo, size: number, rates: number[], targetMs: number): number {
  const sorted = [...rates].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 1;
  const slowest = sorted[0] ?? 1;
  const n = Math.min(targetMs * median, 4 * targetMs * slowest, capOf(info, size));
  return Math.max(info.step, Math.round(n / info.step) * info.step);
}

/** A different, deterministic slice of the key space for each round. */
const offsetOf = (round: number, size: number): number => (round * 104_729) % size;

/** Measures one workload on every system that supports it, at one size. */
async function measureWorkload(
  systems: BenchSystem[],
  info: WorkloadInfo,
  size: number,
  options: SuiteOptions,
): Promise<WorkloadAtSize> {
  const participants = systems.filter((s) => s.supports(info.name));
  const ns = new Map<BenchSystem, number>();
  const rates: number[] = [];
  for (const system of participants) {
    const { n, perMs } = await calibrate(system, info, size, options);
    ns.set(system, n);
    rates.push(perMs);
  }
  if (info.sameN === true) {
    const n = commonRoundSize(info, size, rates, options.roundTargetMs);
    for (const system of participants) ns.set(system, n);
  }
  for (const system of participants) {
    const n = ns.get(system) as number;
    for (let w = 0; w < options.warmupRounds; w++) {
      await timeRound(system, info.name, { n, size, offset: offsetOf(w + 1, size), value: options.value });
    }
  }
  const samples = new Map<BenchSystem, number[]>(participants.map((s) => [s, []]));
  const roundMs = new Map<BenchSystem, number[]>(participants.map((s) => [s, []]));
  for (let r = 0; r < options.rounds; r++) {
    // Rotate who goes first, so no system always runs right after the same neighbour.
    for (let i = 0; i < participants.length; i++) {
      const system = participants[(r + i) % participants.length] as BenchSystem;
      const n = ns.get(system) as number;
      const params = { n, size, offset: offsetOf(r + 1 + options.warmupRounds, size), value: options.value };
      const ms = await timeRound(system, info.name, params);
      samples.get(system)?.push((n / ms) * 1000);
      roundMs.get(system)?.push(ms);
    }
  }
  const results = participants.map((system): Measurement => {
    const s = samples.get(system) ?? [];
    const medianRoundMs = summarize(roundMs.get(system) ?? []).median;
    return {
      system: system.name,
      n: ns.get(system) ?? 0,
      samples: s,
      summary: summarize(s),
      medianRoundMs,
      belowNoiseFloor: medianRoundMs < (system.minRoundMs?.() ?? 0),
    };
  });
  results.sort((a, b) => SYSTEM_NAMES.indexOf(a.system) - SYSTEM_NAMES.indexOf(b.system));
  return { workload: info.name, size, results };
}

/** Fills `size` keys and `size` rows, in chunks (workerd requests stay small). */
export async function fill(system: BenchSystem, size: number, value: unknown): Promise<void> {
  for (let from = 0; from < size; from += 20_000) await system.fillKeys(from, Math.min(size, from + 20_000), value);
  for (let from = 0; from < size; from += 20_000) await system.fillRows(from, Math.min(size, from + 20_000), value);
}

/** Runs every workload at every size; returns one entry per (workload, size). */
export async function runSuite(options: SuiteOptions): Promise<WorkloadAtSize[]> {
  const out: WorkloadAtSize[] = [];
  for (const size of options.sizes) {
    const systems: BenchSystem[] = [];
    try {
      for (const { name, open } of options.systems) {
        const t0 = performance.now();
        const system = await open();
        systems.push(system);
        await fill(system, size, options.value);
        options.log(
          `  ${name}: filled ${size.toLocaleString("en-US")} keys in ${Math.round(performance.now() - t0)} ms`,
        );
      }
      for (const info of options.workloads) {
        const t0 = performance.now();
        const result = await measureWorkload(systems, info, size, options);
        out.push(result);
        const cells = result.results.map((m) => `${m.system} ${Math.round(m.summary.median).toLocaleString("en-US")}`);
        options.log(
          `  ${info.name} @ ${size}: ${cells.join(", ")} ${info.unit}/s (${Math.round(performance.now() - t0)} ms)`,
        );
      }
    } finally {
      for (const system of systems) await system.close();
    }
  }
  return out;
}
