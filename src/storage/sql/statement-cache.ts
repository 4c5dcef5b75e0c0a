/**
 * Compiled statements keyed by query text, as on the platform (an LRU bounded by the total size of
 * the cached SQL text, 1 MiB there). An entry keeps every statement of a multi-statement query so
 * that repeating the query compiles nothing, plus each statement's restriction verdict and the
 * schema version the verdict was computed at.
 *
 * Which texts are cached is the platform's (it decides which statement a run finds left at a row,
 * see {@link CachedStatement.leftAtRow}), but a compiled statement costs far more here than its
 * text: about 4.5 KB for `SELECT 1` (sql.js's statement, its program and the counters' copy of it,
 * the JavaScript around them), so 1 MiB of short texts held ~400 MB. So a second bound, on what
 * the compiled statements cost ({@link COMPILED_CACHE_MAX_COST}, estimated by
 * {@link compiledCost}), takes the compiled statements of the least recently used queries back
 * while keeping their texts in the platform's LRU: such a query is compiled again when it runs,
 * as a cached statement is after a schema change. A query that holds a state the platform's cache
 * shows (a cursor still reading it, a statement left at a row) keeps its statements.
 */
import type { EngineStatement } from "../../engine/engine";
import { utf8Length } from "../../util/utf8";
import { type CursorSource, releaseWhenCollected, type SqlStorageCursor } from "./cursor";
import { type CountingVerdict, NO_COUNTING } from "./row-counting";
import type { AccessVerdict } from "./sql-access";
import type { WriteDescription } from "./sql-host";

/** One compiled statement of a cached query. */
export interface CachedStatement {
  /** Its text, as compiled (a `pragma_*` guard included). */
  readonly sql: string;
  /**
   * The compiled statement (compiled again when the schema changed, see sql-storage.ts), or
   * {@link NOT_COMPILED} while the cache holds its text only (see the module comment).
   */
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
  /**
   * Its statements; while the query is not compiled, made anew from {@link CachedQuery.texts} by
   * {@link StatementCache.get}, each {@link NOT_COMPILED} with no verdict.
   */
  statements: readonly CachedStatement[];
  /** Each statement's text while the query is not compiled, else `undefined`. */
  texts: readonly string[] | undefined;
  /** {@link compiledCost} of its statements. */
  readonly cost: number;
  /** Used since it was last looked at when making room (a second chance, see {@link StatementCache}). */
  used: boolean;
}

/**
 * Stands for a statement the cache holds as text only: freed, and every other use is a bug (the
 * facade compiles it again before using it).
 */
export const NOT_COMPILED: EngineStatement = Object.freeze({
  sql: "",
  freed: true,
  free() {},
  reset() {},
  bind: notCompiled,
  step: notCompiled,
  row: notCompiled,
  column: notCompiled,
  readColumn: notCompiled,
  eachPair: notCompiled,
  columnNames: notCompiled,
  startCounting: notCompiled,
  rowCounts: notCompiled,
  parameterCount: notCompiled,
});

function notCompiled(): never {
  throw new Error("actorstore internal error: a cached statement was used while it was not compiled.");
}

/** A statement of the text `sql` as a query not compiled holds it (see {@link CachedQuery.statements}). */
export function uncompiledStatement(sql: string): CachedStatement {
  return {
    sql,
    statement: NOT_COMPILED,
    columnNames: [],
    verdict: undefined as unknown as AccessVerdict,
    counting: NO_COUNTING,
    verdictVersion: -1,
    busy: false,
    evicted: false,
    reader: undefined,
    source: undefined,
    write: undefined,
    leftAtRow: false,
  };
}

/**
 * What compiled statements of these texts cost in memory, estimated from their UTF-8 lengths:
 * measured in Node 20 with sql.js 1.16 (heap and WASM memory together), about 4.5 KB for a short
 * statement and 12 more bytes per byte of text (a 200-byte `SELECT` took 12 KB, a 1,900-byte one 26 KB).
 */
export function compiledCost(texts: readonly string[]): number {
  let cost = 0;
  for (const text of texts) cost += COMPILED_STATEMENT_BASE_COST + 12 * utf8Length(text);
  return cost;
}

/** The fixed part of {@link compiledCost}, per statement. */
export const COMPILED_STATEMENT_BASE_COST = 6 * 1024;

/**
 * Default bound on {@link compiledCost} of the compiled queries (at least the most recent one
 * stays compiled): about 2,700 short statements.
 */
export const COMPILED_CACHE_MAX_COST = 16 * 1024 * 1024;

/**
 * Default bound on the cached SQL text, in UTF-8 bytes as the platform counts it (its
 * `SQL_STATEMENT_CACHE_MAX_SIZE`).
 */
export const STATEMENT_CACHE_MAX_BYTES = 1024 * 1024;

/**
 * An LRU of compiled queries, bounded by their text as the platform's; of these, the compiled
 * ones are bounded by their {@link compiledCost}, taken back in the order they were compiled
 * with a second chance for those used since (which are taken back is not observable). A query
 * taken back costs its text and a map slot; one of several statements, or whose statement's text
 * is not the query's own, also an object that holds their texts.
 */
export class StatementCache {
  readonly #maxSize: number;
  readonly #maxCost: number;
  /**
   * Every cached query by its text; `null` for a query of one statement, its own text, not
   * compiled. A Map iterates in insertion order; re-inserting on use keeps the least recently
   * used first.
   */
  readonly #entries = new Map<string, CachedQuery | null>();
  /** The compiled queries, in the order they were compiled (or given their second chance). */
  readonly #compiled = new Set<CachedQuery>();
  #mostRecent: CachedQuery | undefined;
  #size = 0;
  #cost = 0;

  constructor(maxSize = STATEMENT_CACHE_MAX_BYTES, maxCost = COMPILED_CACHE_MAX_COST) {
    this.#maxSize = maxSize;
    this.#maxCost = maxCost;
  }

  /** The number of cached queries. */
  get size(): number {
    return this.#entries.size;
  }

  /** The number of cached queries whose statements are compiled. */
  get compiledSize(): number {
    return this.#compiled.size;
  }

  /**
   * The cached query for `sql`, marked most recently used. A query the cache kept as text comes
   * back with statements to compile ({@link uncompiledStatement}).
   */
  get(sql: string): CachedQuery | undefined {
    const recent = this.#mostRecent;
    // The same SQL in a loop: usually the very same string, so this compares pointers, not text.
    if (recent !== undefined && recent.sql === sql) {
      recent.used = true;
      return recent;
    }
    const found = this.#entries.get(sql);
    if (found === undefined) return undefined;
    // Re-inserting moves the entry to the most recent end (the most recent one returned above).
    this.#entries.delete(sql);
    let entry: CachedQuery;
    if (found === null) {
      entry = { sql, statements: [uncompiledStatement(sql)], texts: undefined, cost: compiledCost([sql]), used: false };
    } else {
      entry = found;
      const texts = entry.texts;
      if (texts !== undefined) {
        entry.statements = texts.map(uncompiledStatement);
        entry.texts = undefined;
      }
    }
    this.#entries.set(sql, entry);
    this.#mostRecent = entry;
    if (entry.statements.length > 0 && !this.#compiled.has(entry)) this.#charge(entry);
    else entry.used = true;
    return entry;
  }

  /**
   * Caches `sql` with its compiled `statements`, evicting least recently used queries beyond the
   * size bound, and taking compiled statements back beyond the cost bound.
   */
  set(sql: string, statements: readonly CachedStatement[]): void {
    const entry: CachedQuery = {
      sql,
      statements,
      texts: undefined,
      cost: compiledCost(statements.map((s) => s.sql)),
      used: false,
    };
    const old = this.#entries.get(sql);
    if (old !== undefined) this.#drop(sql, old);
    this.#entries.set(sql, entry);
    this.#mostRecent = entry;
    this.#size += utf8Length(sql);
    for (const [text, lru] of this.#entries) {
      if (this.#size <= this.#maxSize || lru === entry) break;
      this.#drop(text, lru);
    }
    this.#charge(entry);
  }

  /** The cached query texts, least recently used first. */
  queries(): IterableIterator<string> {
    return this.#entries.keys();
  }

  /** Frees every statement that is not in use and forgets everything. */
  clear(): void {
    for (const [text, entry] of [...this.#entries]) this.#drop(text, entry);
  }

  /** Counts `entry` as compiled, and takes other queries' statements back beyond the cost bound. */
  #charge(entry: CachedQuery): void {
    this.#compiled.add(entry);
    this.#cost += entry.cost;
    // Each query is looked at twice at most: one used since gets a second chance (to the end).
    let budget = 2 * this.#compiled.size;
    for (const lru of this.#compiled) {
      if (this.#cost <= this.#maxCost) break;
      if (lru === entry) continue;
      if (budget-- === 0) break;
      this.#compiled.delete(lru);
      if (lru.used || !this.#uncompile(lru)) {
        lru.used = false;
        this.#compiled.add(lru);
      }
    }
  }

  /**
   * Frees `entry`'s statements and keeps their texts, unless one of them holds a state the
   * platform's cache shows (a cursor reading it, a row it was left at): then returns `false`.
   */
  #uncompile(entry: CachedQuery): boolean {
    const statements = entry.statements;
    for (const s of statements) if (s.busy || s.leftAtRow) return false;
    for (const s of statements) s.statement.free();
    this.#cost -= entry.cost;
    const sql = entry.sql;
    if (statements.length === 1 && (statements[0] as CachedStatement).sql === sql) {
      this.#entries.set(sql, null);
    } else {
      entry.texts = statements.map((s) => s.sql);
      entry.statements = NO_STATEMENTS;
    }
    return true;
  }

  #drop(sql: string, entry: CachedQuery | null): void {
    this.#entries.delete(sql);
    this.#size -= utf8Length(sql);
    if (entry === null) return;
    if (this.#mostRecent === entry) this.#mostRecent = undefined;
    if (this.#compiled.delete(entry)) this.#cost -= entry.cost;
    for (const s of entry.statements) {
      if (s.busy) {
        s.evicted = true;
        watchReader(s);
      } else s.statement.free();
    }
  }
}

const NO_STATEMENTS: readonly CachedStatement[] = Object.freeze([]);

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
