/**
 * The file adapter's public types: its options, its stats and the adapter's interface
 * ({@link FilePersistence}). The adapter itself is file-persistence.ts, which re-exports these.
 *
 * @packageDocumentation
 */
import type { PersistenceAdapter, PersistenceStats } from "./persistence";
import type { SnapshotDelta } from "./snapshot-delta";

/** Options of `openFilePersistence` (file-persistence.ts). */
export interface OpenFilePersistenceOptions {
  /**
   * A segment is closed and a new one started once it holds at least this many bytes. Smaller
   * segments let retention free space sooner; larger ones mean fewer files. Default 8 MiB.
   */
  segmentBytes?: number;
  /**
   * Skips every `fsync`/`fdatasync` (appends resolve once the OS has the bytes).
   *
   * **Warning:** weakens durability: a power loss or kernel crash can lose confirmed writes or leave
   * a snapshot or the metadata empty. A process crash alone is still survived. For tests and
   * throwaway data only.
   */
  allowUnsyncedWrites?: boolean;
  /**
   * Opens the directory for reading only: no lock is taken (a live writer may hold it), nothing in
   * the directory is changed (a torn tail is skipped, not cut; leftovers stay), and every write
   * rejects. The directory must exist. This is how `actorstore-inspect` reads.
   */
  readOnly?: boolean;
}

/** Sizes and I/O counts of a file adapter. */
export interface FilePersistenceStats extends PersistenceStats {
  /** Log segment files. */
  segments: number;
  /** Write + flush rounds of the log: several concurrent appends share one (group commit). */
  logFlushes: number;
  /** Appends that resolved. */
  appends: number;
}

/** A {@link PersistenceAdapter} over a directory, with stats. */
export interface FilePersistence extends PersistenceAdapter {
  /** The object's directory (absolute). */
  readonly directory: string;
  /** What the directory holds and how many flushes the log took. */
  stats(): FilePersistenceStats;
  /** Always present here (see {@link PersistenceAdapter.writeSnapshotDelta}). */
  writeSnapshotDelta(info: { seq: number; timeMs: number }, delta: SnapshotDelta): Promise<boolean>;
  /** Always present here (see {@link PersistenceAdapter.thinSnapshots}). */
  thinSnapshots(seqs: readonly number[]): Promise<number[]>;
  /**
   * Whether this adapter still holds the directory's lock (loaded and not closed, and no other
   * process took the lock over). A writer can check this as its fence before a write that must
   * not land after a takeover.
   */
  holdsLock(): Promise<boolean>;
}
