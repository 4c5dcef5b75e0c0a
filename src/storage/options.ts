/**
 * Option types of the storage API. They mirror `@cloudflare/workers-types` field for field, so code
 * written for the platform type-checks against actorstore (a type test proves it).
 */

/** Options of `get()`. */
export interface GetOptions {
  /** Let other events be delivered while this read is pending (the input gate stays open). */
  allowConcurrency?: boolean;
  /** A hint: do not keep the result in the in-memory cache. Never changes results. */
  noCache?: boolean;
}

/** Options of `put()`, `delete()` and `deleteAll()`. */
export interface PutOptions {
  /** Accepted for compatibility; writes never block the input gate. */
  allowConcurrency?: boolean;
  /**
   * Let outgoing messages leave before this write is confirmed.
   * **Warning:** a response may then report a write that a crash later loses.
   */
  allowUnconfirmed?: boolean;
  /** A hint: drop the entry from memory once it is written. Never changes results. */
  noCache?: boolean;
}

/** Options of `list()`: the range options of {@link SyncKvListOptions}, plus the hints. */
export interface ListOptions extends SyncKvListOptions {
  /** See {@link GetOptions.allowConcurrency}. */
  allowConcurrency?: boolean;
  /** See {@link GetOptions.noCache}. */
  noCache?: boolean;
}

/** Options of `getAlarm()`. */
export interface GetAlarmOptions {
  /** See {@link GetOptions.allowConcurrency}. */
  allowConcurrency?: boolean;
}

/** Options of `setAlarm()` and `deleteAlarm()`. */
export interface SetAlarmOptions {
  /** See {@link PutOptions.allowConcurrency}. */
  allowConcurrency?: boolean;
  /** See {@link PutOptions.allowUnconfirmed}. */
  allowUnconfirmed?: boolean;
}

/** Options of the synchronous `kv.list()`, and the range options of `list()`. */
export interface SyncKvListOptions {
  /** Inclusive lowest key. */
  start?: string;
  /** Exclusive lowest key (cannot be combined with `start`). */
  startAfter?: string;
  /** Exclusive highest key. */
  end?: string;
  /** Only keys that start with this. */
  prefix?: string;
  /** Descending order; `start`/`end` keep their meaning and `limit` counts from the high end. */
  reverse?: boolean;
  /** At most this many entries. */
  limit?: number;
}

/** The storage backends. */
export const BACKENDS = ["sqlite", "kv"] as const;

/** `"sqlite"` (key-value, SQL and point-in-time recovery) or `"kv"` (key-value only). */
export type Backend = (typeof BACKENDS)[number];
