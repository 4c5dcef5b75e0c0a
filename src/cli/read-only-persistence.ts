/**
 * A read-only view of a persistence adapter, so that `actorstore-inspect keys|get|sql|bookmarks|export`
 * can open an object's directory without ever changing it.
 */
import type { CommitRecord } from "../durability/commit-record";
import {
  type CommitTimes,
  type LoadResult,
  type PersistenceAdapter,
  streamCommitTimes,
  type VersionedMeta,
} from "../durability/persistence";
import { ActorStoreError } from "../errors";

/**
 * Wraps `inner`: reads pass through, every write rejects. A pending restore request is hidden
 * (reported by {@link ReadOnlyPersistence.pendingRestoreMeta} instead), because opening storage
 * would otherwise apply it, which is a write.
 *
 * Open the inner file adapter with `readOnly: true`: then it takes no lock (a live writer may hold
 * the directory) and changes nothing, not even a torn tail.
 *
 * @example
 * ```ts
 * const storage = await ObjectStorage.open({ persistence: new ReadOnlyPersistence(await openFilePersistence(dir)) });
 * ```
 */
export class ReadOnlyPersistence implements PersistenceAdapter {
  readonly #inner: PersistenceAdapter;
  #meta: Uint8Array | null = null;

  constructor(inner: PersistenceAdapter) {
    this.#inner = inner;
  }

  /** The restore request a live session left for the next one, if any (raw metadata bytes). */
  get pendingRestoreMeta(): Uint8Array | null {
    return this.#meta;
  }

  async load(): Promise<LoadResult> {
    const result = await this.#inner.load();
    this.#meta = await this.#inner.readMeta();
    return result;
  }

  append(_records: readonly CommitRecord[]): Promise<void> {
    return Promise.reject(readOnly("append a commit"));
  }

  writeSnapshot(_info: { seq: number; timeMs: number }, _image: Uint8Array): Promise<void> {
    return Promise.reject(readOnly("write a snapshot"));
  }

  readSnapshot(seq: number): Promise<Uint8Array> {
    return this.#inner.readSnapshot(seq);
  }

  readRecords(fromSeq: number, toSeq: number): Promise<CommitRecord[]> {
    return this.#inner.readRecords(fromSeq, toSeq);
  }

  streamRecords(fromSeq: number, toSeq: number): AsyncIterable<readonly CommitRecord[]> {
    return this.#inner.streamRecords(fromSeq, toSeq);
  }
  streamCommitTimes(fromSeq: number, toSeq: number): AsyncIterable<CommitTimes> {
    return streamCommitTimes(this.#inner, fromSeq, toSeq);
  }

  async prune(_keepFromSeq: number): Promise<void> {
    // Retention is the live object's business; the inspector keeps everything.
  }

  async readMeta(): Promise<Uint8Array | null> {
    return null;
  }

  async readMetaVersion(): Promise<VersionedMeta> {
    return { bytes: null, version: 0 };
  }

  writeMetaIf(_expectedVersion: number, _bytes: Uint8Array | null): Promise<boolean> {
    return Promise.reject(readOnly("write metadata"));
  }

  /** A reader claims nothing. */
  get epoch(): number | undefined {
    return undefined;
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

function readOnly(what: string): ActorStoreError {
  return new ActorStoreError(
    "ERR_CLOSED",
    `The inspector opened this directory read-only and cannot ${what}; use the restore command to change it.`,
  );
}
