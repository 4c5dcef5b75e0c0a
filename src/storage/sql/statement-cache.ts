/**
 * Compiled statements keyed by query text, as on the platform (an LRU bounded by the total size of
 * the cached SQL text, 1 MiB there). An entry keeps every statement of a multi-statement query so
 * that repeating the query compiles nothing, plus each statement's restriction verdict and the
 * schema version the verdict was computed at.
 */
import type { EngineStatement } from "../../engine/engine";
import { utf8Length } from "../../util/utf8";
import { type CursorSource, releaseWhenCollected, type SqlStorageCursor } from "./cursor";
import type { CountingVerdict } from "./row-counting";
import type { AccessVerdict } from "./sql-access";
import type { WriteDescription } from "./sql-host";

/** One compiled statement of a cached query. */
export interface CachedStatement {
  /** The compiled statement (compiled again when the schema changed, see sql-storage.ts). */
  statement: EngineStatement;
  /** Result column names (sql.js asks SQLite for them on every call, so keep them). */
  columnNames: string[];
  /** The access decision. */
  verdict: AccessVerdict;
  /** What the row counters need from its program. */
  counting: CountingVerdict;
  /** The schema version {@link CachedStatement.verdict} belongs to. */
  verdictVersion: number;
  /** A cursor is still reading it: a second `exec` of the same SQL compiles a one-off copy. */
  busy: boolean;
  /** Evicted while busy: free it when the cursor lets go. */
  evicted: boolean;
  /**
   * The cursor reading it while {@link CachedStatement.busy}, held until the statement is wanted
   * elsewhere (a second `exec` of the text, or eviction): then the cursor is handed to
   * `releaseWhenCollected` instead, so that one dropped unfinished gives the statement back.
   */
  reader: SqlStorageCursor | undefined;
  /** What the cursors over this statement read from (made once, used by one cursor at a time). */
  source: CursorSource | undefined;
  /** What the host decided about its text, once it first ran as a write (SqlHost.describeWrite). */
  write: WriteDescription | undefined;
  /**
   * A statement before the last whose run when its query was compiled stopped at a row. workerd
   * leaves such a statement unreset in its cache (`prepareSql(MULTI)` steps it once and keeps it),
   * so the next cached run of the query fails there with `A SQL prepared statement can only be
   * executed once at a time.` and resets it (sql-storage.ts).
   */
  leftAtRow: boolean;
}

/** The statements of one query text, in order; the last one yields the cursor. */
export interface CachedQuery {
  /** The query text (the cache key). */
  readonly sql: string;
  /** Its statements. */
  readonly statements: readonly CachedStatement[];
}

/**
 * Default bound on the cached SQL text, in UTF-8 bytes as the platform counts it (its
 * `SQL_STATEMENT_CACHE_MAX_SIZE`).
 */
export const STATEMENT_CACHE_MAX_BYTES = 1024 * 1024;

/** An LRU of compiled queries. */
export class StatementCache {
  readonly #maxSize: number;
  // A Map iterates in insertion order; re-inserting on use keeps the least recently used first.
  readonly #entries = new Map<string, CachedQuery>();
  #mostRecent: CachedQuery | undefined;
  #size = 0;

  constructor(maxSize = STATEMENT_CACHE_MAX_BYTES) {
    this.#maxSize = maxSize;
  }

  /** The number of cached queries. */
  get size(): number {
    return this.#entries.size;
  }

  /** The cached query for `sql`, marked most recently used. */
  get(sql: string): CachedQuery | undefined {
    const recent = this.#mostRecent;
    // The same SQL in a loop: usually the very same string, so this compares pointers, not text.
    if (recent !== undefined && recent.sql === sql) return recent;
    const entry = this.#entries.get(sql);
    // Re-inserting moves the entry to the most recent end; skip it when it is already there (the
    // common case of the same SQL run in a loop), which saves two hash lookups per exec.
    if (entry !== undefined && this.#mostRecent !== entry) {
      this.#entries.delete(sql);
      this.#entries.set(sql, entry);
      this.#mostRecent = entry;
    }
    return entry;
  }

  /** Caches `entry`, evicting least recently used queries beyond the size bound. */
  set(entry: CachedQuery): void {
    const old = this.#entries.get(entry.sql);
    if (old !== undefined) this.#drop(old);
    this.#entries.set(entry.sql, entry);
    this.#mostRecent = entry;
    this.#size += utf8Length(entry.sql);
    for (const [, lru] of this.#entries) {
      if (this.#size <= this.#maxSize || lru === entry) break;
      this.#drop(lru);
    }
  }

  /** The cached query texts, least recently used first. */
  queries(): IterableIterator<string> {
    return this.#entries.keys();
  }

  /** Frees every statement that is not in use and forgets everything. */
  clear(): void {
    for (const entry of [...this.#entries.values()]) this.#drop(entry);
  }

  #drop(entry: CachedQuery): void {
    if (this.#mostRecent === entry) this.#mostRecent = undefined;
    this.#entries.delete(entry.sql);
    this.#size -= utf8Length(entry.sql);
    for (const s of entry.statements) {
      if (s.busy) {
        s.evicted = true;
        watchReader(s);
      } else s.statement.free();
    }
  }
}

/**
 * Lets `entry`'s busy statement go back once its cursor is garbage-collected unfinished (the cache
 * stops holding the cursor). Called when someone else wants the statement.
 */
export function watchReader(entry: CachedStatement): void {
  const reader = entry.reader;
  if (reader === undefined) return;
  entry.reader = undefined;
  releaseWhenCollected(reader);
}
