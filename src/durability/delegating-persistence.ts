/**
 * A persistence adapter that forwards every call to another one. Extend it to change one or two
 * behaviours (inject failures, hold appends, record what was written) without restating the
 * rest of the interface.
 */
import type { CommitRecord } from "./commit-record";
import {
  type CommitTimes,
  type KeptHistory,
  type LoadResult,
  type PersistenceAdapter,
  streamCommitTimes,
  type VersionedMeta,
} from "./persistence";

/**
 * Forwards every {@link PersistenceAdapter} call to `inner`.
 *
 * @example
 * ```ts
 * class CountingPersistence extends DelegatingPersistence {
 *   appends = 0;
 *   override append(records: readonly CommitRecord[]) {
 *     this.appends++;
 *     return super.append(records);
 *   }
 * }
 * const storage = await ObjectStorage.open({ persistence: new CountingPersistence(createMemoryPersistence()) });
 * ```
 */
export class DelegatingPersistence<Inner extends PersistenceAdapter = PersistenceAdapter>
  implements PersistenceAdapter
{
  /** The adapter every call goes to. */
  readonly inner: Inner;

  constructor(inner: Inner) {
    this.inner = inner;
  }

  load(): Promise<LoadResult> {
    return this.inner.load();
  }
  append(records: readonly CommitRecord[]): Promise<void> {
    return this.inner.append(records);
  }
  writeSnapshot(info: { seq: number; timeMs: number }, image: Uint8Array): Promise<void> {
    return this.inner.writeSnapshot(info, image);
  }
  readSnapshot(seq: number): Promise<Uint8Array> {
    return this.inner.readSnapshot(seq);
  }
  readRecords(fromSeq: number, toSeq: number): Promise<CommitRecord[]> {
    return this.inner.readRecords(fromSeq, toSeq);
  }
  streamRecords(fromSeq: number, toSeq: number): AsyncIterable<readonly CommitRecord[]> {
    return this.inner.streamRecords(fromSeq, toSeq);
  }
  streamCommitTimes(fromSeq: number, toSeq: number): AsyncIterable<CommitTimes> {
    return streamCommitTimes(this.inner, fromSeq, toSeq);
  }
  prune(keepFromSeq: number): Promise<void> {
    return this.inner.prune(keepFromSeq);
  }
  thinSnapshots(seqs: readonly number[]): Promise<number[]> {
    return this.inner.thinSnapshots?.(seqs) ?? Promise.resolve([]);
  }
  readMeta(): Promise<Uint8Array | null> {
    return this.inner.readMeta();
  }
  readMetaVersion(): Promise<VersionedMeta> {
    return this.inner.readMetaVersion();
  }
  writeMetaIf(expectedVersion: number, bytes: Uint8Array | null): Promise<boolean> {
    return this.inner.writeMetaIf(expectedVersion, bytes);
  }
  get epoch(): number | undefined {
    return this.inner.epoch;
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  keptHistory(): KeptHistory | undefined {
    return this.inner.keptHistory?.();
  }
}

/**
 * Whether `adapter` deletes the snapshots it is asked to (`thinSnapshots`), also behind wrappers:
 * a {@link DelegatingPersistence} that does not override `thinSnapshots` thins only if the adapter
 * behind it does (its own method then answers "nothing deleted"). @internal
 */
export function thinsSnapshots(adapter: PersistenceAdapter): boolean {
  if (typeof adapter.thinSnapshots !== "function") return false;
  if (
    adapter instanceof DelegatingPersistence &&
    adapter.thinSnapshots === DelegatingPersistence.prototype.thinSnapshots
  )
    return thinsSnapshots(adapter.inner);
  return true;
}
