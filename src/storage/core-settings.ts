/**
 * The storage core's settings, and the messages of the failures it reports (platform texts where
 * the platform has one).
 */
import type { PersistenceAdapter } from "../durability/persistence";
import type { SqlEngineFactory } from "../engine/engine";
import type { StorageLimits } from "../limits";
import type { Clock } from "../util/clock";

/** How `StorageCore.open` opens. */
export interface CoreOpenOptions {
  /** Reads a restore requested by the previous session: the seq to restore to, if any. */
  restoreTarget?: () => Promise<number | undefined>;
}

/** Settings of the core, resolved by `ObjectStorage.open`. */
export interface CoreSettings {
  engineFactory: SqlEngineFactory;
  persistence: PersistenceAdapter;
  clock: Clock;
  limits: StorageLimits;
  cacheSoftLimitBytes: number;
  deleteAllDeletesAlarm: boolean;
  /** Take a snapshot after this many records since the last one. */
  snapshotEveryRecords: number;
  /**
   * Also after this many logged bytes (approximate: changed data) since the last one, or half the
   * database's size when larger (the spacing retention thins snapshots to).
   */
  snapshotEveryBytes: number;
  /** But at the latest after this many logged bytes, whatever the database's size. */
  snapshotLogCapBytes: number;
}

/** Why a transaction whose outer transaction already ended cannot continue. */
export const ORPHANED_TRANSACTION_MESSAGE =
  "This transaction was rolled back because its outer transaction's closure returned before it finished. Await nested transactions inside the closure.";

/** Why an outer transaction failed while a nested one still ran. */
export const NESTED_STILL_RUNNING_MESSAGE =
  "A nested transaction was still running when its outer transaction's closure returned, so both were rolled back. Await nested transactions inside the closure.";

/** The platform's message when a write failure reset the object. */
export const WRITE_FAILED_MESSAGE = "Internal error in Durable Object storage write caused object to be reset.";

/**
 * The error a failed commit resets the object with, as on the platform: a deferred constraint
 * that fails at commit gets its own message (foreign keys with the extended code); anything else
 * is a write failure. `e` is what the engine or the persistence threw.
 */
export function commitFailure(e: unknown): Error {
  const message = e instanceof Error ? e.message : String(e);
  if (!/constraint/i.test(message)) return new Error(WRITE_FAILED_MESSAGE, { cause: e });
  const code = /FOREIGN KEY/i.test(message)
    ? "SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_FOREIGNKEY)"
    : "SQLITE_CONSTRAINT";
  return new Error(
    `Durable Object was reset and rolled back to its last known good state because the application left the database in a state where constraints were violated: ${message}: ${code}`,
  );
}
