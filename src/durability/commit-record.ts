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
  /** When set, this commit is a point-in-time restore: the state becomes the state after `restoreToSeq`. */
  restoreToSeq?: number;
  /** SQL writes, in execution order. Each is replayed with `random()` seeded from (seq, index). */
  sql: SqlWrite[];
  /** Key-value writes (the final value of each key in this batch), applied after the SQL writes. */
  kv: KvWrite[];
  /** The alarm after this batch: a time in ms, `null` for none, `undefined` for unchanged. */
  alarm?: number | null;
}
