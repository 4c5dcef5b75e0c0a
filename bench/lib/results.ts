/** The shape of bench/results/latest.json. */
import type { SystemName } from "../systems/system";
import type { LogCostResult, RecoveryResult } from "./durability-costs";
import type { MemoryProbeResult } from "./memory";
import type { WorkloadAtSize } from "./suite";

/** How the run was made, so a reader can judge the numbers. */
export interface RunMeta {
  date: string;
  mode: "quick" | "default" | "full";
  node: string;
  platform: string;
  cpuModel: string;
  cpus: number;
  /** 1-minute load average when the run started and ended: above `cpus`, other work competed. */
  loadAverage: { start: number; end: number };
  sizes: number[];
  rounds: number;
  warmupRounds: number;
  roundTargetMs: number;
  systems: SystemName[];
  /** What every write stores. */
  value: string;
  /** The codec actorstore wrote values with. */
  actorstoreCodec: string;
  versions: Record<string, string>;
  durationMs: number;
}

/** One target of issues 2, 3, 5 and 9, evaluated on this run. */
export interface TargetResult {
  id: string;
  /** The requirement in words, with its source issue. */
  description: string;
  status: "PASS" | "FAIL" | "N/A";
  /** The measured value(s), e.g. `1.8× at 1k, 2.3× at 10k`. */
  measured: string;
}

/** Everything one run produced. */
export interface BenchResults {
  meta: RunMeta;
  workloads: Array<WorkloadAtSize & { title: string; unit: string }>;
  recovery: RecoveryResult[];
  logCost: LogCostResult[];
  memory: MemoryProbeResult[];
  targets: TargetResult[];
}
