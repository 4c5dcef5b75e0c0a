/**
 * Shared round logic for the systems that run in this process (actorstore, Miniflare 2): the same
 * workload functions the workerd object runs, timed with `performance.now()` around `run` only.
 */
import {
  KV_WORKLOAD_FNS,
  type KvStore,
  type RoundParams,
  SQL_WORKLOAD_FNS,
  type SqlStore,
  type WorkloadFns,
  type WorkloadName,
} from "../lib/workloads";

/** Runs setup, the timed run and teardown of `fns`; returns the ms of the run. */
export async function timedRound<S>(fns: WorkloadFns<S>, store: S, params: RoundParams): Promise<number> {
  if (fns.setup !== undefined) await fns.setup(store, params);
  const start = performance.now();
  await fns.run(store, params);
  const ms = performance.now() - start;
  if (fns.teardown !== undefined) await fns.teardown(store, params);
  return ms;
}

/** One round of a shared workload on a DurableObjectStorage-compatible store. */
export function sharedRound(
  workload: WorkloadName,
  kv: KvStore,
  sql: SqlStore | undefined,
  params: RoundParams,
): Promise<number> {
  if (workload in KV_WORKLOAD_FNS) {
    return timedRound(KV_WORKLOAD_FNS[workload as keyof typeof KV_WORKLOAD_FNS] as WorkloadFns<KvStore>, kv, params);
  }
  if (sql === undefined) throw new Error(`${workload} needs the SQL API, which this system does not have.`);
  return timedRound(SQL_WORKLOAD_FNS[workload as keyof typeof SQL_WORKLOAD_FNS] as WorkloadFns<SqlStore>, sql, params);
}
