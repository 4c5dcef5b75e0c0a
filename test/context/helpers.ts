/**
 * Helpers for the object-context and alarm tests: trigger promises to force interleavings, a
 * persistence adapter whose appends are confirmed by hand, and a way to let queued macrotasks run.
 */
import type { CommitRecord } from "../../src/durability/commit-record";
import { DelegatingPersistence } from "../../src/durability/delegating-persistence";
import { createMemoryPersistence, type MemoryPersistence } from "../../src/durability/memory-persistence";
import type { LoadResult } from "../../src/durability/persistence";
import { nextTurn } from "../../src/util/clock";

export { type Trigger, triggerPromise } from "../helpers/trigger";

/**
 * Lets the event loop run `turns` macrotasks: enough for the input gate to deliver queued events
 * and for scheduled commits to reach the persistence adapter.
 */
export async function turns(n = 10): Promise<void> {
  for (let i = 0; i < n; i++) await nextTurn();
}

/** Tracks whether a promise has settled, without awaiting it. */
export function track<T>(p: Promise<T>): { readonly settled: boolean; readonly promise: Promise<T> } {
  const state = { settled: false, promise: p };
  p.then(
    () => {
      state.settled = true;
    },
    () => {
      state.settled = true;
    },
  );
  return state;
}

/** The message of a rejection (fails the test if `p` resolves). */
export async function rejectionOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Error) return e;
    throw new Error(`rejected with a non-Error: ${String(e)}`);
  }
  throw new Error("expected a rejection, but the promise resolved");
}

interface PendingAppend {
  records: readonly CommitRecord[];
  confirm(): void;
  fail(error: Error): void;
}

/**
 * A persistence adapter whose appends can be held and then confirmed (or failed) one by one, in
 * order. Records reach the inner in-memory adapter only when confirmed, so `durableKeys` is exactly
 * what a restart would see.
 */
export class ManualPersistence extends DelegatingPersistence<MemoryPersistence> {
  /** Every append call's records, in call order. */
  readonly appends: CommitRecord[][] = [];
  /** Keys whose latest durable record wrote a value (not a deletion). */
  readonly durableKeys = new Set<string>();
  #holding = false;
  #pending: PendingAppend[] = [];
  #chain: Promise<void> = Promise.resolve();
  #poisoned: Error | null = null;

  constructor() {
    super(createMemoryPersistence());
  }

  /** Holds every later append until {@link ManualPersistence.confirmNext} or `fail`. */
  hold(): void {
    this.#holding = true;
  }

  /** Stops holding; appends already held stay held until confirmed. */
  autoConfirm(): void {
    this.#holding = false;
  }

  /** How many appends wait for a decision. */
  get pendingCount(): number {
    return this.#pending.length;
  }

  /** Confirms the oldest held append (it becomes durable). */
  async confirmNext(): Promise<void> {
    const next = this.#pending.shift();
    if (next === undefined) throw new Error("no held append to confirm");
    next.confirm();
    await this.#chain;
  }

  /** Fails the oldest held append (nothing of it is stored; later appends fail too until load()). */
  failNext(error = new Error("Injected failure in append() (EIO).")): void {
    const next = this.#pending.shift();
    if (next === undefined) throw new Error("no held append to fail");
    next.fail(error);
    // Like the real adapters, appends queued behind a failed one fail with it.
    for (const queued of this.#pending.splice(0)) queued.fail(error);
  }

  override async load(): Promise<LoadResult> {
    this.#poisoned = null;
    return this.inner.load();
  }

  override append(records: readonly CommitRecord[]): Promise<void> {
    this.appends.push([...records]);
    return new Promise<void>((resolve, reject) => {
      const pending: PendingAppend = {
        records,
        confirm: () => {
          // Appends become durable in call order, like a log file.
          this.#chain = this.#chain.then(async () => {
            if (this.#poisoned !== null) {
              reject(this.#poisoned);
              return;
            }
            try {
              await this.inner.append(records);
            } catch (e) {
              reject(e);
              return;
            }
            for (const r of records) {
              if (r.reset) this.durableKeys.clear();
              for (const w of r.kv) {
                if (w.value === null) this.durableKeys.delete(w.key);
                else this.durableKeys.add(w.key);
              }
            }
            resolve();
          });
        },
        fail: (error) => {
          this.#poisoned = error;
          reject(error);
        },
      };
      if (this.#holding) this.#pending.push(pending);
      else pending.confirm();
    });
  }
}
