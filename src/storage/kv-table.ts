/**
 * The hidden tables, as one schema constant plus a table of named prepared statements
 * (the Miniflare 4 `keyvalue.worker.ts` shape). Key-value data lives in `_cf_KV`, exactly as on the
 * platform, so SQL's BINARY collation gives the UTF-8 key order; the alarm lives in `_cf_METADATA`.
 */
import type { EngineStatement, EngineValue, SqlEngine } from "../engine/engine";
import { copyPooled } from "../util/byte-pool";

/**
 * The platform's key-value table, made on the first write. `WITHOUT ROWID` keeps it a clustered
 * B-tree on the key. Its text, white space included, is workerd's (`sqlite-kv.c++`): SQLite keeps
 * it in `sqlite_master.sql`, which user SQL reads.
 */
export const KV_SCHEMA = `CREATE TABLE IF NOT EXISTS _cf_KV (
        key TEXT PRIMARY KEY,
        value BLOB
      ) WITHOUT ROWID`;

/**
 * The platform's metadata table, made (as there) only when an alarm is first set; its text is
 * workerd's (`sqlite-metadata.c++`), as `sqlite_master.sql` shows it.
 */
export const METADATA_SCHEMA = `CREATE TABLE IF NOT EXISTS _cf_METADATA (
        key INTEGER PRIMARY KEY,
        value BLOB
      )`;

/** `_cf_METADATA` key of the alarm time, stored in nanoseconds like the platform (NULL = none). */
export const METADATA_ALARM = 1;

const NS_PER_MS = 1_000_000;

/**
 * A row of a scan: its key and its stored value, `bytes[start, end)`. The bytes may be the engine's
 * memory itself, valid only until the visit returns: keep a copy ({@link copyStored}), or decode them
 * into values that share no memory with them, before returning. Returns `false` to stop the scan.
 */
export type RowVisit = (key: string, bytes: Uint8Array, start: number, end: number) => boolean | undefined;

/** A copy of the stored bytes `bytes[start, end)` that the caller owns (small ones share a pooled slab). */
export function copyStored(bytes: Uint8Array, start: number, end: number): Uint8Array {
  return start === end ? new Uint8Array(0) : copyPooled(bytes.subarray(start, end), end - start);
}

/** Named statements over the hidden tables of one engine. */
export class KvTable {
  readonly #engine: SqlEngine;
  #ready = false;
  #metadataReady = false;
  readonly #statements = new Map<string, EngineStatement>();
  readonly #putArgs: EngineValue[] = [null, null];

  readonly #onCreate: (() => void) | undefined;

  /** `onCreate` runs when this creates the hidden tables (a schema change SQL caches must see). */
  constructor(engine: SqlEngine, onCreate?: () => void) {
    this.#engine = engine;
    this.#onCreate = onCreate;
  }

  /** Whether the hidden tables exist yet (the platform creates them lazily, on the first write). */
  exists(): boolean {
    if (this.#ready) return true;
    const rows = this.#engine.query("SELECT 1 FROM sqlite_schema WHERE name = '_cf_KV'");
    this.#ready = rows.length > 0;
    return this.#ready;
  }

  /** Forgets whether the tables exist (after a rollback that may have undone their creation). */
  invalidate(): void {
    this.#ready = false;
    this.#metadataReady = false;
  }

  /** Whether `_cf_METADATA` exists (an alarm was set at some point). */
  metadataExists(): boolean {
    if (this.#metadataReady) return true;
    const rows = this.#engine.query("SELECT 1 FROM sqlite_schema WHERE name = '_cf_METADATA'");
    this.#metadataReady = rows.length > 0;
    return this.#metadataReady;
  }

  /** Creates the hidden tables if needed; call inside the batch's transaction. */
  ensure(): void {
    if (this.#ready) return;
    this.#engine.exec(KV_SCHEMA);
    this.#ready = true;
    this.#onCreate?.();
  }

  /** The stored bytes of `key`, or `undefined`. */
  get(key: string): Uint8Array | undefined {
    if (!this.exists()) return undefined;
    const s = this.#stmt("get", "SELECT value FROM _cf_KV WHERE key = ?");
    s.bind([key], "integer");
    try {
      return s.step() ? toBytes(s.row()[0] ?? null) : undefined;
    } finally {
      s.reset();
    }
  }

  /** Deletes `key` now; whether a row was there. */
  remove(key: string): boolean {
    if (!this.exists()) return false;
    const s = this.#stmt("delete", "DELETE FROM _cf_KV WHERE key = ?");
    s.bind([key], "integer");
    try {
      s.step();
    } finally {
      s.reset();
    }
    return this.#engine.changes() > 0;
  }

  /** Writes or deletes one key (`null` deletes). */
  write(key: string, value: Uint8Array | null): void {
    this.ensure();
    if (value === null) {
      this.remove(key);
    } else {
      const s = this.#stmt("put", "INSERT INTO _cf_KV VALUES (?, ?) ON CONFLICT DO UPDATE SET value = excluded.value");
      // One arguments array for every put: the statement copies what it binds into the heap.
      const args = this.#putArgs;
      args[0] = key;
      args[1] = value;
      s.bind(args, "integer");
      s.step();
      s.reset();
    }
  }

  /**
   * Keys and values in `[start, end)`, ascending or descending, at most `limit` rows.
   * `visit` returns false to stop early.
   */
  scan(
    start: string,
    end: string | undefined,
    reverse: boolean,
    limit: number | undefined,
    visit: (key: string, value: Uint8Array) => boolean | undefined,
  ): void {
    this.scanRows(start, end, reverse, limit, (key, bytes, from, to) => visit(key, copyStored(bytes, from, to)));
  }

  /**
   * As {@link KvTable.scan}, with each value handed over where it is stored (see {@link RowVisit}):
   * a key whose bytes the caller already holds costs no copy, and a value the caller only decodes is
   * decoded straight from the engine's memory. The whole scan is one engine call
   * ({@link EngineStatement.eachPair}). With `wantsValue`, asked for each key first, a row it
   * answers `false` for is visited without its value being read (empty bytes). Returns whether a
   * key it visited has a lone surrogate.
   */
  scanRows(
    start: string,
    end: string | undefined,
    reverse: boolean,
    limit: number | undefined,
    visit: RowVisit,
    wantsValue?: (key: string) => boolean,
  ): boolean {
    if (!this.exists()) return false;
    const order = reverse ? "DESC" : "ASC";
    const name = `scan:${end === undefined ? "open" : "closed"}:${order}`;
    const sql = `SELECT key, value FROM _cf_KV WHERE key >= ?${end === undefined ? "" : " AND key < ?"} ORDER BY key ${order} LIMIT ?`;
    const s = this.#stmt(name, sql);
    s.bind(end === undefined ? [start, limit ?? -1] : [start, end, limit ?? -1], "integer");
    try {
      return s.eachPair(
        (key, value, from, to) => {
          if (value instanceof Uint8Array) return visit(key as string, value, from, to);
          // Not a blob (written by other tools): its bytes, as toBytes reads them.
          const bytes = toBytes(value);
          return visit(key as string, bytes, 0, bytes.byteLength);
        },
        // The key column is TEXT: what the engine reads there is the string `wantsValue` takes.
        wantsValue as ((first: EngineValue) => boolean) | undefined,
      );
    } finally {
      s.reset();
    }
  }

  /** The alarm time in ms, or null. */
  getAlarm(): number | null {
    if (!this.metadataExists()) return null;
    const s = this.#stmt("alarm:get", "SELECT value FROM _cf_METADATA WHERE key = ?");
    s.bind([METADATA_ALARM], "integer");
    try {
      if (!s.step()) return null;
      const v = s.row()[0];
      // Stored as nanoseconds; a double holds them to ±128 ns, so round back to whole ms.
      return typeof v === "number" ? Math.round(v / NS_PER_MS) : null;
    } finally {
      s.reset();
    }
  }

  /** Stores the alarm time (ms) or clears it. */
  setAlarm(timeMs: number | null): void {
    // Clearing an alarm that was never set leaves the schema as it is, as on the platform.
    if (timeMs === null && !this.metadataExists()) return;
    // Only `_cf_METADATA`: an object that never wrote a key has no `_cf_KV`, as on the platform.
    if (!this.metadataExists()) {
      this.#engine.exec(METADATA_SCHEMA);
      this.#metadataReady = true;
      this.#onCreate?.();
    }
    const s = this.#stmt(
      "alarm:set",
      "INSERT INTO _cf_METADATA VALUES (?, ?) ON CONFLICT DO UPDATE SET value = excluded.value",
    );
    s.bind([METADATA_ALARM, timeMs === null ? null : timeMs * NS_PER_MS], "integer");
    s.step();
    s.reset();
  }

  /** Frees the prepared statements (the engine is being replaced or closed). */
  dispose(): void {
    for (const s of this.#statements.values()) s.free();
    this.#statements.clear();
  }

  #stmt(name: string, sql: string): EngineStatement {
    let s = this.#statements.get(name);
    if (s === undefined || s.freed) {
      s = this.#engine.prepare(sql);
      this.#statements.set(name, s);
    }
    return s;
  }
}

function toBytes(v: EngineValue): Uint8Array {
  if (v instanceof Uint8Array) return v;
  if (v === null) return new Uint8Array(0);
  // A value written by other tools as TEXT: hand back its UTF-8 bytes.
  return new TextEncoder().encode(String(v));
}
