/**
 * Miniflare 2's pure-TypeScript `DurableObjectStorage` (2.14.4) over its `MemoryStorage`.
 *
 * Constructed directly, outside any request context: the input and output gates are then no-ops
 * (`runWithInputGateClosed` and `waitUntilOnOutputGate` find no gate and just run the closure), and
 * no alarm bridge is needed since the workloads set no alarm. That is slightly kinder to Miniflare 2
 * than running it inside its own `DurableObjectState`; see bench/README.md. It has no SQL API.
 */
import { DurableObjectStorage } from "@miniflare/durable-objects";
import { MemoryStorage } from "@miniflare/storage-memory";
import { KV_WORKLOAD_FNS, type KvStore, populateKv, type WorkloadName } from "../lib/workloads";
import { sharedRound } from "./in-process";
import type { BenchSystem } from "./system";

class Miniflare2System implements BenchSystem {
  readonly name = "miniflare2" as const;
  readonly #storage: KvStore;

  constructor(storage: KvStore) {
    this.#storage = storage;
  }

  supports(workload: WorkloadName): boolean {
    return workload in KV_WORKLOAD_FNS;
  }

  fillKeys(from: number, to: number, value: unknown): Promise<void> {
    return populateKv(this.#storage, { from, to, value });
  }

  async fillRows(): Promise<void> {}

  round(workload: WorkloadName, params: Parameters<BenchSystem["round"]>[1]): Promise<number> {
    return sharedRound(workload, this.#storage, undefined, params);
  }

  async close(): Promise<void> {}
}

/** A fresh Miniflare 2 object storage over an empty MemoryStorage. */
export async function openMiniflare2(): Promise<BenchSystem> {
  const storage = new DurableObjectStorage(new MemoryStorage());
  // Miniflare 2's transaction type is its own class, structurally the platform's minus the alarm
  // options' exact types; the workloads only call get/put/list/delete/transaction/sync.
  return new Miniflare2System(storage as unknown as KvStore);
}
