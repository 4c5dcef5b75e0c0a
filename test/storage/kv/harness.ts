/**
 * Opening storages for the key-value tests, and a recording persistence adapter that shows what
 * reached the commit log (one `append` per committed batch) and can hold appends back on demand.
 */
import type { CommitRecord } from "../../../src/durability/commit-record";
import { DelegatingPersistence } from "../../../src/durability/delegating-persistence";
import { createMemoryPersistence, type MemoryPersistence } from "../../../src/durability/memory-persistence";
import { ObjectStorage, type ObjectStorageOptions } from "../../../src/storage/object-storage";
import { type Trigger, triggerPromise } from "./helpers";

/** A persistence adapter that records every append and can delay them. */
export class RecordingPersistence extends DelegatingPersistence<MemoryPersistence> {
  /** The records of each append call, in call order. */
  readonly appends: CommitRecord[][] = [];
  /** Appends that have resolved (are durable), in order. */
  durableAppends = 0;
  #gate: Trigger | undefined;
  #tail: Promise<void> = Promise.resolve();
  #failure: Error | undefined;

  constructor() {
    super(createMemoryPersistence());
  }

  /** Holds every later append until the returned trigger is resolved. */
  hold(): Trigger {
    const gate = triggerPromise();
    this.#gate = gate;
    return gate;
  }

  /** Makes the next append fail with `error` (after recording it). */
  failNext(error: Error): void {
    this.#failure = error;
  }

  /** Stops holding appends (appends already waiting still wait for their trigger). */
  release(): void {
    this.#gate = undefined;
  }

  /** Every key-value write that reached the log, per append. */
  get kvWrites(): Array<Array<[string, boolean]>> {
    return this.appends.map((records) =>
      records.flatMap((r) => r.kv.map((w): [string, boolean] => [w.key, w.value !== null])),
    );
  }
  override append(records: readonly CommitRecord[]): Promise<void> {
    this.appends.push([...records]);
    const gate = this.#gate;
    const failure = this.#failure;
    this.#failure = undefined;
    // Appends stay queued in call order, as the adapter contract requires, even while one is held.
    const done = this.#tail.then(async () => {
      if (gate !== undefined) await gate.promise;
      if (failure !== undefined) throw failure;
      await this.inner.append(records);
      this.durableAppends++;
    });
    this.#tail = done.catch(() => {});
    return done;
  }
}

/** The backends every behaviour is checked on. */
export const BACKENDS = ["sqlite", "kv"] as const;

/** Opens an in-memory storage (sqlite backend unless told otherwise). */
export function openStorage(options: ObjectStorageOptions = {}): Promise<ObjectStorage> {
  return ObjectStorage.open({ backend: "sqlite", ...options });
}

/** Opens a storage over a fresh {@link RecordingPersistence}. */
export async function openRecorded(
  options: ObjectStorageOptions = {},
): Promise<{ storage: ObjectStorage; log: RecordingPersistence }> {
  const log = new RecordingPersistence();
  const storage = await openStorage({ ...options, persistence: log });
  return { storage, log };
}

/** Keys of a Map, in iteration order. */
export function keysOf(map: Map<string, unknown>): string[] {
  return [...map.keys()];
}
