/**
 * actorstore, in memory (`ObjectStorage.open({ backend: "sqlite" })`, the default in-memory
 * persistence), and with the Node file adapter (`directory`: every commit is fdatasync'ed).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ObjectStorage,
  type ObjectStorageOptions,
  openFilePersistence,
  type PersistenceAdapter,
} from "../../src/index";
import { coreOf } from "../../src/storage/object-storage";
import type { KvStore, SqlStore, WorkloadName } from "../lib/workloads";
import { populateKv, populateSql } from "../lib/workloads";
import { sharedRound } from "./in-process";
import type { BenchSystem, SystemName } from "./system";

/**
 * The file adapter differs from the in-memory one only in what a commit costs (an fdatasync), so it
 * runs the workload where every operation is one commit. In the others a round's n operations
 * share one commit, and the number would mostly say how large n was.
 */
const FILE_WORKLOADS: ReadonlySet<WorkloadName> = new Set<WorkloadName>(["put-sync"]);

/** An actorstore storage behind the benchmark interface. */
export class ActorstoreSystem implements BenchSystem {
  readonly name: SystemName;
  readonly #storage: ObjectStorage;
  readonly #directory: string | undefined;
  readonly #persistence: PersistenceAdapter | undefined;

  constructor(name: SystemName, storage: ObjectStorage, file?: { directory: string; persistence: PersistenceAdapter }) {
    this.name = name;
    this.#storage = storage;
    this.#directory = file?.directory;
    this.#persistence = file?.persistence;
  }

  /** The storage itself (the memory probe reads its cache). */
  get storage(): ObjectStorage {
    return this.#storage;
  }

  supports(workload: WorkloadName): boolean {
    return this.#directory === undefined || FILE_WORKLOADS.has(workload);
  }

  fillKeys(from: number, to: number, value: unknown): Promise<void> {
    const kv: KvStore = this.#storage;
    return populateKv(kv, { from, to, value });
  }

  fillRows(from: number, to: number, value: unknown): Promise<void> {
    const sql: SqlStore = this.#storage;
    return populateSql(sql, { from, to, value });
  }

  round(workload: WorkloadName, params: Parameters<BenchSystem["round"]>[1]): Promise<number> {
    // "After eviction": the read cache starts each round empty, so every read goes to SQLite.
    if (workload === "get-uncached") coreOf(this.#storage).cache.clear();
    return sharedRound(workload, this.#storage, this.#storage, params);
  }

  async close(): Promise<void> {
    await this.#storage.close();
    // ObjectStorage.close() also releases the persistence (docs/benchmarks-history.md, *What was fixed
    // after the first run*); this system opened it, so it closes it too.
    await this.#persistence?.close();
    if (this.#directory !== undefined) await rm(this.#directory, { recursive: true, force: true });
  }
}

/** actorstore with the default in-memory persistence. */
export async function openActorstore(options: ObjectStorageOptions = {}): Promise<ActorstoreSystem> {
  const storage = await ObjectStorage.open({ backend: "sqlite", ...options });
  return new ActorstoreSystem("actorstore", storage);
}

/**
 * actorstore with the file adapter in a fresh temporary directory (fdatasync on every commit).
 * Same as `ObjectStorage.open({ directory })`, except that we hold the adapter so we can close it.
 */
export async function openActorstoreFile(options: ObjectStorageOptions = {}): Promise<ActorstoreSystem> {
  const directory = await mkdtemp(join(tmpdir(), "actorstore-bench-"));
  const persistence = await openFilePersistence(directory);
  const storage = await ObjectStorage.open({ backend: "sqlite", ...options, persistence });
  return new ActorstoreSystem("actorstore-file", storage, { directory, persistence });
}
