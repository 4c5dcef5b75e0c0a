/**
 * A persistence wrapper that fails on demand, for fault-injection tests of the object context:
 * "the write of this batch fails; is the object reset and nothing confirmed lost?"
 *
 * @packageDocumentation
 */
import { ActorStoreError } from "../errors";
import type { CommitRecord } from "./commit-record";
import { DelegatingPersistence } from "./delegating-persistence";
import type { LoadResult, PersistenceAdapter } from "./persistence";

/** Where an injected append failure happens relative to the real write. */
export type AppendFailurePoint =
  /** Before the inner adapter sees the records: the batch is certainly not stored. */
  | "before-write"
  /** After the inner append resolved: the batch is stored, but the caller is told it failed. */
  | "after-write";

/** Options of {@link FaultyPersistence.failAppendAt}. */
export interface FailAppendOptions {
  /** Default `"before-write"`. */
  point?: AppendFailurePoint;
}

interface PlannedFailure {
  /** The value of `appendCalls` at which to fail. */
  call: number;
  point: AppendFailurePoint;
}

/**
 * Wraps a {@link PersistenceAdapter} and injects failures. Like a real adapter, once an append has
 * failed every later append rejects until `load()` is called again.
 *
 * @example
 * ```ts
 * const faulty = new FaultyPersistence(createMemoryPersistence());
 * const storage = await ObjectStorage.open({ persistence: faulty });
 * faulty.failNextAppend();
 * storage.put("k", 1);
 * await expect(storage.sync()).rejects.toThrow(); // the object resets; "k" was never confirmed
 * ```
 */
export class FaultyPersistence extends DelegatingPersistence {
  #error: Error | null = null;
  #planned: PlannedFailure[] = [];
  #failSnapshots = false;
  #failMeta = false;
  #failLoads = 0;
  #poisoned: Error | null = null;
  #appendCalls = 0;
  #held: Array<() => void> | null = null;

  constructor(inner: PersistenceAdapter) {
    super(inner);
  }

  /** How many times `append` was called (including failed calls). */
  get appendCalls(): number {
    return this.#appendCalls;
  }

  /** Sets the error injected failures reject with (default: an `EIO`-like `Error`). */
  failWith(error: Error): this {
    this.#error = error;
    return this;
  }

  /** Fails the next call to `append`. */
  failNextAppend(options: FailAppendOptions = {}): this {
    return this.failAppendAt(1, options);
  }

  /** Fails the `n`th call to `append` from now (1 = the next one). */
  failAppendAt(n: number, options: FailAppendOptions = {}): this {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`failAppendAt() needs n ≥ 1; got ${n}.`);
    this.#planned.push({ call: this.#appendCalls + n, point: options.point ?? "before-write" });
    return this;
  }

  /** Makes every `writeSnapshot` fail (or succeed again with `false`). */
  failSnapshots(enabled = true): this {
    this.#failSnapshots = enabled;
    return this;
  }

  /** Makes every `writeMetaIf` fail (or succeed again with `false`). */
  failMetaWrites(enabled = true): this {
    this.#failMeta = enabled;
    return this;
  }

  /** Fails the next `count` calls to `load`. */
  failLoads(count = 1): this {
    this.#failLoads = count;
    return this;
  }

  /** Cancels every planned failure (an adapter poisoned by a failed append stays so until `load`). */
  heal(): this {
    this.#planned = [];
    this.#failSnapshots = false;
    this.#failMeta = false;
    this.#failLoads = 0;
    return this;
  }

  /**
   * Holds every append (before it reaches the inner adapter) until the returned function is
   * called, to test what happens while a write is in flight.
   */
  holdAppends(): () => void {
    const held: Array<() => void> = [];
    this.#held = held;
    return () => {
      if (this.#held === held) this.#held = null;
      for (const release of held.splice(0)) release();
    };
  }

  override async load(): Promise<LoadResult> {
    if (this.#failLoads > 0) {
      this.#failLoads--;
      throw this.#injected("load");
    }
    const result = await this.inner.load();
    this.#poisoned = null;
    return result;
  }

  override async append(records: readonly CommitRecord[]): Promise<void> {
    const call = ++this.#appendCalls;
    const i = this.#planned.findIndex((p) => p.call === call);
    const planned = i === -1 ? undefined : this.#planned.splice(i, 1)[0];
    if (this.#held !== null) {
      const held = this.#held;
      await new Promise<void>((resolve) => held.push(resolve));
    }
    if (this.#poisoned !== null) throw this.#poisoned;
    if (planned?.point === "before-write") throw this.#poison();
    await this.inner.append(records);
    if (planned?.point === "after-write") throw this.#poison();
  }

  override async writeSnapshot(info: { seq: number; timeMs: number }, image: Uint8Array): Promise<void> {
    if (this.#failSnapshots) throw this.#injected("writeSnapshot");
    await this.inner.writeSnapshot(info, image);
  }

  override async writeMetaIf(expectedVersion: number, bytes: Uint8Array | null): Promise<boolean> {
    if (this.#failMeta) throw this.#injected("writeMetaIf");
    return this.inner.writeMetaIf(expectedVersion, bytes);
  }

  #poison(): Error {
    this.#poisoned = new ActorStoreError(
      "ERR_WRITE_FAILED",
      "An earlier append failed (injected by FaultyPersistence); call load() to reopen.",
      { cause: this.#injected("append") },
    );
    return this.#injected("append");
  }

  #injected(method: string): Error {
    if (this.#error !== null) return this.#error;
    const error = new Error(`Injected failure in ${method}() (EIO).`);
    (error as Error & { code?: string }).code = "EIO";
    return error;
  }
}
