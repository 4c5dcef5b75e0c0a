/**
 * What the live path logs about connection state, so that replay runs every write exactly as it
 * ran (see connection-defaults.ts for the settings, replay.ts for the other side):
 *
 * - a {@link SessionMark} on the first record of a session (a new connection: the defaults) and on
 *   the first record after a snapshot (the settings in force when it was taken), with the digits
 *   of a REAL turned into text (the platform's 15; marks written before the engine set them have
 *   none, and replay runs those sessions with sql.js's 17, as they ran) and whether the session
 *   runs with SQLite's own math functions (`nativeFunctions`, read from the engine when the mark
 *   is committed; marks without it are of sessions that ran with sql.js's legacy ones);
 * - the settings right after every statement that may change them (SQLite applies a pragma when it
 *   compiles it, which may be before the batch's transaction begins, so only reading them back
 *   tells what it did), and after a rolled-back savepoint that ran one (a rollback does not undo a
 *   setting);
 * - what `changes()`, `total_changes()` and `last_insert_rowid()` returned while each logged
 *   statement ran (`total_changes()` answers as the platform's per-call key-value statements leave
 *   it: per-call-changes.ts);
 * - what `PRAGMA optimize` analyzed (it picks the tables this connection used), as the ANALYZE
 *   statements replay runs instead.
 */
import type { CommitRecord, ConnectionSettings, SessionMark, SqlWrite } from "../durability/commit-record";
import { INPUT_HELD_BYTES, SETTINGS_HELD_BYTES } from "../durability/held-bytes";
import {
  type ConnectionInput,
  type ConnectionInputSource,
  PLATFORM_REAL_TEXT_DIGITS,
  type SqlEngine,
} from "../engine/engine";
import { DEFAULT_CONNECTION_SETTINGS, readConnectionSettings } from "./connection-defaults";
import { analyzedSince, readStatistics, type Statistics } from "./optimize-effect";
import type { PerCallChanges } from "./per-call-changes";

/** Only a pragma changes a connection setting, and its text says so. */
const MAY_CHANGE_SETTINGS = /pragma/i;

/**
 * Whether a statement with text `sql` may change a connection setting. It depends on the text
 * alone, so a caller that runs the same compiled statement again may decide it once.
 */
export function mayChangeSettings(sql: string): boolean {
  return MAY_CHANGE_SETTINGS.test(sql);
}
const OPTIMIZE = /optimize/i;

/** A mark saying whether a session starts and which settings (copied) are in force. */
function sessionMark(start: boolean, settings: ConnectionSettings): SessionMark {
  return { start, settings: { ...settings }, realTextDigits: PLATFORM_REAL_TEXT_DIGITS };
}

/** The live side of connection-state logging for one storage core. */
export class SessionLog implements ConnectionInputSource {
  /** The mark the next record carries; set at a session start and after each snapshot. */
  #mark: SessionMark | undefined = sessionMark(true, DEFAULT_CONNECTION_SETTINGS);
  /** The settings as of the last commit. */
  #committed: ConnectionSettings = { ...DEFAULT_CONNECTION_SETTINGS };
  /** A statement of the open batch may have changed a setting. */
  #dirty = false;
  /** The logged statement that is running (or ran last in this batch). */
  #current: SqlWrite | undefined;
  /** A logged statement that may have changed settings and whose resulting settings are not read yet. */
  #unsettled: SqlWrite | undefined;
  /** A logged `PRAGMA optimize` and the statistics before it ran. */
  #optimize: { entry: SqlWrite; before: Statistics } | undefined;
  readonly #perCall: PerCallChanges | undefined;
  /** What this log added to logged entries since {@link SessionLog.resetHeldBytes} (held-bytes.ts). */
  #addedHeldBytes = 0;

  /** `perCall` says how far the engine's `total_changes()` is behind the platform's. */
  constructor(perCall?: PerCallChanges) {
    this.#perCall = perCall;
  }

  /** Records a connection input into the running statement's log entry. */
  value(name: ConnectionInput, live: () => bigint): bigint {
    const ahead = name === "total_changes" ? (this.#perCall?.ahead ?? 0) : 0;
    const v = ahead === 0 ? live() : live() + BigInt(ahead);
    if (this.#current !== undefined) {
      (this.#current.inputs ??= []).push(v);
      this.#addedHeldBytes += INPUT_HELD_BYTES;
    }
    return v;
  }

  /**
   * The bytes (as held-bytes.ts counts them) that the inputs and settings this log wrote into
   * logged entries added since {@link SessionLog.resetHeldBytes}.
   */
  get addedHeldBytes(): number {
    return this.#addedHeldBytes;
  }

  /** The batch's entries were taken or dropped: {@link SessionLog.addedHeldBytes} counts from 0 again. */
  resetHeldBytes(): void {
    this.#addedHeldBytes = 0;
  }

  /**
   * A statement was logged and is about to run (it is compiled already). `settingsMayChange` is
   * {@link mayChangeSettings} of its text.
   */
  logged(engine: SqlEngine, entry: SqlWrite, settingsMayChange = mayChangeSettings(entry.sql)): void {
    this.settle(engine);
    this.#current = entry;
    if (settingsMayChange) {
      this.#dirty = true;
      this.#unsettled = entry;
      if (OPTIMIZE.test(entry.sql)) this.#optimize = { entry, before: readStatistics(engine) };
    }
  }

  /**
   * Reads the settings after a statement that may have changed them into its entry. Runs before
   * anything else uses the connection: the next logged statement, a rollback, the COMMIT.
   */
  settle(engine: SqlEngine): void {
    if (this.#optimize !== undefined) {
      const { entry, before } = this.#optimize;
      this.#optimize = undefined;
      entry.replay = analyzedSince(engine, before, entry.sql);
    }
    if (this.#unsettled === undefined) return;
    if (this.#unsettled.settings === undefined) this.#addedHeldBytes += SETTINGS_HELD_BYTES;
    this.#unsettled.settings = readConnectionSettings(engine);
    this.#unsettled = undefined;
  }

  /**
   * A savepoint rolled back the logged statements `removed`: when one of them may have changed a
   * setting, the entry to log in their place, which sets the settings the rollback left.
   */
  rolledBack(engine: SqlEngine, removed: readonly SqlWrite[], nowMs: number): SqlWrite | undefined {
    this.#current = undefined;
    if (this.#unsettled !== undefined && removed.includes(this.#unsettled)) this.#unsettled = undefined;
    if (this.#optimize !== undefined && removed.includes(this.#optimize.entry)) this.#optimize = undefined;
    if (!removed.some((w) => w.settings !== undefined || MAY_CHANGE_SETTINGS.test(w.sql))) return undefined;
    this.#dirty = true;
    return { sql: "", bindings: [], nowMs, settings: readConnectionSettings(engine) };
  }

  /** The batch of `record` committed (the engine's COMMIT ran): adds the pending mark to it. */
  committed(engine: SqlEngine, record: CommitRecord): void {
    this.#current = undefined;
    this.#unsettled = undefined;
    this.#optimize = undefined;
    if (this.#mark !== undefined) {
      // The connection's functions are the module's (sqljs.ts): replay must run them as they ran.
      if (!engine.legacyFunctions) this.#mark.nativeFunctions = true;
      record.session = this.#mark;
      this.#mark = undefined;
    }
    if (this.#dirty) {
      this.#committed = readConnectionSettings(engine);
      this.#dirty = false;
    }
  }

  /** A snapshot of the last committed state was taken: the next record says what the settings are. */
  snapshotTaken(): void {
    this.#mark = sessionMark(this.#mark?.start ?? false, this.#committed);
  }

  /** The database was replaced by a fresh one (deleteAll): a new connection, with the defaults. */
  connectionReplaced(): void {
    this.#current = undefined;
    this.#unsettled = undefined;
    this.#optimize = undefined;
    this.#dirty = false;
    this.#committed = { ...DEFAULT_CONNECTION_SETTINGS };
    if (this.#mark !== undefined) this.#mark = sessionMark(this.#mark.start, DEFAULT_CONNECTION_SETTINGS);
  }
}
