/**
 * SQL's connection counters as the platform's key-value calls leave them. On the platform each
 * `put()`, each key of a `delete()` and each alarm change is one SQL statement, run at the call:
 * it adds its changes to `total_changes()` and sets `changes()`. Here those writes are buffered and
 * reach the engine later, once per key (storage-core.ts). What SQL can observe is kept the same:
 *
 * - `total_changes()`: {@link PerCallChanges.ahead} is how many changes the platform's statements
 *   counted that the engine's writes did not (a key written twice between two SQL statements is
 *   written once here); the function answers the engine's own count plus that (session-log.ts).
 * - `changes()`: when a key-value call came after the engine's last statement, the engine's value
 *   is made the one that call's statement left, right before the next SQL statement, by one more
 *   write that leaves every stored value as it is ({@link PerCallChanges.matchLast}).
 * - `last_insert_rowid()`: only the alarm's row is inserted into a rowid table, and buffered writes
 *   (the alarm included) reach the engine before any SQL statement and before a savepoint opens, so
 *   the engine's value is the platform's.
 *
 * The cost on the key-value path is three field writes per call; the engine does extra work only
 * when SQL runs after such calls.
 */
import type { SqlEngine } from "../engine/engine";
import type { KvTable } from "./kv-table";

/** What the storage core's key-value calls did to SQL's counters, against what the engine did. */
export class PerCallChanges {
  /** Changes the platform's per-call statements counted that the engine's writes did not. */
  ahead = 0;
  /** The key of the last call whose statement is still the platform's latest (`null`: the alarm). */
  #lastKey: string | null = null;
  /** What that statement left in `changes()` (0 or 1), or -1 when a SQL statement came after it. */
  #lastChanges = -1;

  /** A key-value call ran its statement on the platform: `key` (`null`: the alarm) changed `changes` rows. */
  called(key: string | null, changes: 0 | 1): void {
    this.ahead += changes;
    this.#lastKey = key;
    this.#lastChanges = changes;
  }

  /** The engine's own writes changed `rows` rows (they stand for calls already counted). */
  engineChanged(rows: number): void {
    this.ahead -= rows;
  }

  /** A new connection (deleteAll replaced the database): both counters start from zero. */
  reset(): void {
    this.ahead = 0;
    this.#lastChanges = -1;
  }

  /** Whether a key-value call came after the engine's last statement and `changes()` may need matching. */
  get pending(): boolean {
    return this.#lastChanges >= 0;
  }

  /**
   * Before a SQL statement, with every buffered write in the engine: makes the engine's `changes()`
   * what the last call's statement left there, by one write that stores what is stored already:
   * the last key's value again (1), a delete of the absent last key (0), or, when the last call
   * deleted a key that existed (1), a row written and deleted again; the alarm's row again (1).
   * `begin` opens the batch's transaction, only when a write is needed.
   */
  matchLast(engine: SqlEngine, table: KvTable, alarm: number | null, begin: () => void): void {
    const key = this.#lastKey;
    const want = this.#lastChanges;
    this.#lastChanges = -1;
    if (want < 0 || engine.changes() === want) return;
    begin();
    if (key === null) {
      table.setAlarm(alarm);
      return;
    }
    if (want === 0) {
      table.remove(key);
      return;
    }
    const stored = table.get(key);
    table.write(key, stored ?? new Uint8Array(0));
    if (stored === undefined) table.remove(key);
  }
}
