/**
 * How the IndexedDB adapter (indexeddb-persistence.ts) opens an object's database: at its version,
 * creating its stores, within a bounded time (an open that another connection blocks gets no event
 * at all), and refusing a database of the origin that it did not create.
 */
import { ActorStoreError } from "../errors";
import type { Clock } from "../util/clock";

/** The stores of an object's database (see indexeddb-persistence.ts for what each holds). @internal */
export const STORES = ["records", "snapshots", "images", "meta"];
/** The version the adapter opens its databases with (it creates the stores above at it). */
const DATABASE_VERSION = 1;

/**
 * Opens the database `name` of `factory` as an object's persistence: `ERR_LOCKED` when the browser
 * has not opened it within `timeoutMs` (on `clock`), `ERR_CORRUPT` when it is not one the adapter
 * created (a newer version, or stores missing; its connection is closed then). @internal
 */
export async function openObjectDatabase(
  factory: IDBFactory,
  name: string,
  timeoutMs: number,
  clock: Clock,
): Promise<IDBDatabase> {
  let db: IDBDatabase;
  try {
    db = await openWithin(factory, name, timeoutMs, clock);
  } catch (error) {
    // IndexedDB's VersionError: the database exists with a higher version than this adapter's.
    if ((error as { name?: unknown } | null)?.name === "VersionError")
      throw new ActorStoreError(
        "ERR_CORRUPT",
        `IndexedDB database "${name}" cannot be opened as an object's persistence: its version is newer than ${DATABASE_VERSION}, the one this adapter creates (a newer actorstore wrote it, or it belongs to other code of the origin). Open it with the version that wrote it, or use another name.`,
        { cause: error },
      );
    throw error;
  }
  const missing = STORES.filter((store) => !db.objectStoreNames.contains(store));
  if (missing.length > 0) {
    db.close();
    throw new ActorStoreError(
      "ERR_CORRUPT",
      `IndexedDB database "${name}" is not one this adapter created: it has no ${missing.join(", ")} store${missing.length > 1 ? "s" : ""} (it belongs to other code of the origin). Use another name for the object (one database per object).`,
    );
  }
  return db;
}

/**
 * Opens the database (creating its stores at {@link DATABASE_VERSION}), or rejects with
 * `ERR_LOCKED` once `timeoutMs` passed without the browser opening it. An open queued behind a
 * `deleteDatabase()` or an upgrade that another connection blocks gets no event until that
 * connection closes; given up, it is not left to open later: a connection it still gets is closed
 * at once, and an upgrade it still gets is aborted, so an abandoned open neither holds the
 * database (blocking the next delete or upgrade in turn) nor creates it.
 */
function openWithin(factory: IDBFactory, name: string, timeoutMs: number, clock: Clock): Promise<IDBDatabase> {
  const open = factory.open(name, DATABASE_VERSION);
  return new Promise<IDBDatabase>((resolve, reject) => {
    let settled = false;
    let blocked = false;
    const timer = clock.setTimer(() => {
      if (settled) return;
      settled = true;
      reject(
        new ActorStoreError(
          "ERR_LOCKED",
          `Opening IndexedDB database "${name}" did not complete within ${timeoutMs} ms: ${
            blocked
              ? "other connections to it (other tabs or workers of this site) did not close for its upgrade"
              : "another connection of this site blocks it (a deleteDatabase() or version upgrade of it from another tab or worker waits for a connection that does not close)"
          }. Close the other tabs of this site that use it (or reload them), then open again.`,
        ),
      );
    }, timeoutMs);
    const settle = () => {
      settled = true;
      clock.clearTimer(timer);
    };
    open.onupgradeneeded = () => {
      if (settled) {
        open.transaction?.abort();
        return;
      }
      for (const store of STORES)
        if (!open.result.objectStoreNames.contains(store)) open.result.createObjectStore(store);
    };
    open.onblocked = () => {
      blocked = true;
    };
    open.onsuccess = () => {
      if (settled) {
        open.result.close();
        return;
      }
      settle();
      resolve(open.result);
    };
    open.onerror = (event) => {
      // An upgrade aborted after the open was given up is expected: not an unhandled error.
      if (settled) {
        event.preventDefault();
        return;
      }
      settle();
      reject(open.error ?? new Error("IndexedDB open failed"));
    };
  });
}
