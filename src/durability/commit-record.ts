/**
 * The unit of durability: one committed batch. Every batch of writes (key-value, SQL, alarm)
 * that commits to the engine becomes exactly one record, appended to the commit log before the
 * batch counts as confirmed. Replaying records in order over a snapshot reproduces the database.
 */
import type { EngineValue } from "../engine/engine";

/** A SQL statement that may have written, as it ran (text, bindings, and the "now" it saw). */
export interface SqlWrite {
  /** One statement's text. */
  sql: string;
  /** The bound values, in order. */
  bindings: EngineValue[];
  /** The time SQLite saw as 'now' while it ran (ms since epoch). */
  nowMs: number;
  /**
   * What `changes()`, `total_changes()` and `last_insert_rowid()` returned while it ran, in call
   * order (connection state a fresh connection does not have); replay answers them from here.
   */
  inputs?: bigint[];
  /**
   * The connection settings right after this statement ran (logged after statements that may
   * change them: pragmas). An entry with empty `sql` runs nothing and only sets them (after a
   * rolled-back savepoint changed one, which a rollback does not undo).
   */
  settings?: ConnectionSettings;
  /**
   * Statements replay runs instead of `sql`, when what `sql` did depended on connection state the
   * log cannot restore: `PRAGMA optimize` analyzes only the tables this connection has used, so its
   * log entry names the ANALYZE statements it ran.
   */
  replay?: string[];
}

/**
 * The per-connection settings that change what a write does. SQLite keeps them outside the
 * database file, so neither a snapshot image nor a fresh connection has them: the log carries
 * them (see {@link SessionMark}). The order is the bit order of the log format.
 */
export const CONNECTION_SETTING_NAMES = [
  "foreign_keys",
  "defer_foreign_keys",
  "case_sensitive_like",
  "ignore_check_constraints",
  "legacy_alter_table",
  "recursive_triggers",
  "reverse_unordered_selects",
] as const;

/** One of {@link CONNECTION_SETTING_NAMES}. */
export type ConnectionSetting = (typeof CONNECTION_SETTING_NAMES)[number];

/** A value for every connection setting. */
export type ConnectionSettings = Record<ConnectionSetting, boolean>;

/**
 * The connection state a record starts from, when it is not simply the previous record's: the
 * first record of a session (a new connection, so the defaults), and the first record after a
 * snapshot (whose image holds no connection state, so replay starting there needs it).
 */
export interface SessionMark {
  /** The record is the first of a session. */
  start: boolean;
  /** The settings in force before the record's SQL ran. */
  settings: ConnectionSettings;
  /**
   * How many significant digits a REAL turned into text had in the session (the platform's 15).
   * Absent in records written before the engine set the platform's number: those sessions ran with
   * sql.js's SQLite's 17 (`0.30000000000000004`), and replay runs them so, since what they stored
   * was confirmed.
   */
  realTextDigits?: number;
  /**
   * The session ran with SQLite's own math functions, as the platform's (`log(100)` is 2). Absent:
   * the session ran with sql.js's legacy extension functions (`log(100)` 4.605…, `ceil(0.5)` an
   * INTEGER): every session logged before the engine left them out, and those of a process whose
   * sql.js was initialized with them (docs/sql.md); replay runs it with them, since what it stored
   * was confirmed.
   */
  nativeFunctions?: true;
}

/** A key-value write: a value (encoded bytes) or a deletion (`null`). */
export interface KvWrite {
  key: string;
  value: Uint8Array | null;
}

/** One committed batch. */
export interface CommitRecord {
  /** 1, 2, 3 … with no gaps; the commit's position in the object's history. */
  seq: number;
  /** When the batch committed, by the injected clock (ms since epoch). */
  timeMs: number;
  /**
   * Set when the batch began with `deleteAll()` on the SQLite backend: the database was replaced
   * by an empty one (the alarm is carried over unless the batch also changes it).
   */
  reset: boolean;
  /**
   * When set, this commit is a point-in-time restore: the state becomes the state after
   * `restoreToSeq`. Its `alarm` then repeats the restored state's alarm for readers of the log (a
   * host's alarm index); replay ignores it.
   */
  restoreToSeq?: number;
  /** Set on the first record of a session and the first after a snapshot (see {@link SessionMark}). */
  session?: SessionMark;
  /** SQL writes, in execution order. Each is replayed with `random()` seeded from (seq, index). */
  sql: SqlWrite[];
  /** Key-value writes (the final value of each key in this batch), applied after the SQL writes. */
  kv: KvWrite[];
  /** The alarm after this batch: a time in ms, `null` for none, `undefined` for unchanged. */
  alarm?: number | null;
}
