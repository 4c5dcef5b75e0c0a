/**
 * The one small interface every compared system implements. The runner only ever talks to this.
 */
import type { RoundParams, WorkloadName } from "../lib/workloads";

/** The systems, in the order the tables show them. */
export const SYSTEM_NAMES = ["actorstore", "actorstore-file", "workerd", "miniflare2", "raw-sqljs"] as const;
/** One of {@link SYSTEM_NAMES}. */
export type SystemName = (typeof SYSTEM_NAMES)[number];

/** A store of one system, opened and ready to be filled. */
export interface BenchSystem {
  readonly name: SystemName;
  /** Whether this system can run `workload` (Miniflare 2 has no SQL, for example). */
  supports(workload: WorkloadName): boolean;
  /** Writes keys `[from, to)` (`key-00000000` …) with `value`. */
  fillKeys(from: number, to: number, value: unknown): Promise<void>;
  /** Inserts rows `[from, to)` into `bench_rows` (created on `from === 0`); no-op without SQL. */
  fillRows(from: number, to: number, value: unknown): Promise<void>;
  /**
   * Runs one round: the workload's untimed setup, its timed run, its untimed teardown.
   * Returns the milliseconds of the timed part only.
   */
  round(workload: WorkloadName, params: RoundParams): Promise<number>;
  /**
   * The shortest round this system can time reliably (workerd: several empty requests, since an
   * empty request's cost is subtracted and its variance stays). Undefined: no floor.
   */
  minRoundMs?(): number;
  /** Releases everything (files, processes). */
  close(): Promise<void>;
}

/** Opens a fresh, empty store of one system. */
export type SystemFactory = () => Promise<BenchSystem>;
