/**
 * The cursor `sql.exec()` returns, behaving like the platform's `SqlStorage.Cursor`:
 *
 * - The first step runs inside `exec()`, so a write without RETURNING is applied even if the
 *   cursor is never read. A statement that may write is stepped to the end inside `exec()` and
 *   its rows (RETURNING) are buffered, so nothing of it is left running when the batch commits.
 * - Like workerd's `iteratorImpl`, every read steps one row ahead: when the last row is handed
 *   out the statement is already finished and goes back to the statement cache, even if the
 *   caller never asks for `{done: true}` (the common `exec(…).one()` / `.next()` case). A
 *   statement that can produce one row at most skips the step that would only reach its end.
 * - `raw()` and `[Symbol.iterator]()` return new iterators over the same position.
 * - After `deleteAll()` an unfinished cursor fails with the platform's "canceled" error.
 * - A cursor dropped unfinished gives its statement back when it is garbage-collected, as workerd's
 *   does (its statement is reset, or freed if it was a one-off copy): see {@link releaseWhenCollected}.
 */
import type { EngineStatement, EngineValue, RowCounts, SqlEngine } from "../../engine/engine";
import { likePlatformPrototype } from "../../util/platform-prototype";
import type { CountingVerdict } from "./row-counting";
import type { RowBuilder } from "./row-objects";
import type { AccessVerdict } from "./sql-access";
import { QUERY_CANCELED_MESSAGE } from "./sql-errors";
import { checkValueSize, type SqlLimits } from "./sql-limits";

/** A value in a result row: INTEGER/REAL → number, TEXT → string, BLOB → ArrayBuffer, NULL → null. */
export type SqlStorageValue = ArrayBuffer | string | number | null;

/** A result row as an object keyed by column name. */
export type SqlStorageRow = Record<string, SqlStorageValue>;

/**
 * What a cursor reads from; built by {@link SqlStorage}, once per cached statement (cursors over
 * the same cached statement take turns: the facade never hands it to two live ones). Not part of
 * the public API.
 * @internal
 */
export interface CursorSource {
  /** The engine the statement belongs to. */
  readonly engine: SqlEngine;
  /** The statement; bound, not yet stepped, when a cursor starts. */
  readonly statement: EngineStatement;
  /** Result column names (shared with the statement cache: never modify). */
  readonly columnNames: readonly string[];
  /** Builds row objects keyed by {@link CursorSource.columnNames} (row-objects.ts). */
  readonly buildRow: RowBuilder;
  /** The limits (values in rows are checked against them). */
  readonly limits: SqlLimits;
  /**
   * Whether the database the statement belongs to is still the current one (false once
   * `deleteAll()` replaced it, and once the storage closed or was aborted).
   */
  isCurrent(): boolean;
  /** Throws the storage's error when it was closed (ERR_CLOSED) or broken (its reset error). */
  assertUsable(): void;
  /** Returns the statement (reset) to the cache, or frees a one-off copy. Called once per cursor. */
  release(): void;
  /** Turns an engine error into the platform's error. */
  translate(error: unknown): unknown;
  /**
   * Rows in the table stored at B-tree root page `root`, or indexed by the index stored there (for
   * `count(*)`, which the platform counts as reading every row).
   */
  countRowsAt(root: number): number;
}

/** A raw iterator: rows as arrays, sharing the cursor's position. */
export interface SqlStorageRawIterator<U extends SqlStorageValue[]> extends IterableIterator<U> {
  /** The remaining rows. */
  toArray(): U[];
  /** The one remaining row; throws when there are none or several. */
  one(): U;
}

/** The runtime's `%IteratorPrototype%`: its iterator helpers where it has them (workerd does). */
const ITERATOR_PROTOTYPE: object = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));

/** Passed by the cursor alone: the iterator classes cannot be constructed from outside, as on the platform. */
const ITERATOR_KEY = Symbol("cursor iterator");

// The cursor's private steps, for its iterators (set in SqlStorageCursor's static block).
let rawRowOf: (cursor: SqlStorageCursor) => SqlStorageValue[] | undefined;
let nextRawRowOf: (cursor: SqlStorageCursor) => SqlStorageValue[] | undefined;
let oneRawRowOf: (cursor: SqlStorageCursor) => SqlStorageValue[];
let watchCursor: (cursor: SqlStorageCursor) => void;

/**
 * Gives back the statements of cursors that were dropped before they finished. Registering costs
 * more than a point query itself, so a cursor is registered only when its statement is wanted
 * elsewhere or would otherwise never be freed (see {@link releaseWhenCollected}); until then the
 * statement cache holds it.
 */
const ABANDONED = new FinalizationRegistry<CursorSource>((source) => {
  // Its cursor is gone, so no one can read on: reset the statement (or free a one-off copy).
  // Harmless when the engine was replaced or closed meanwhile (the statement is freed already).
  source.release();
});

/**
 * Makes `cursor`'s statement go back (reset, or freed when it is a one-off copy or was evicted
 * from the statement cache) once `cursor` is garbage-collected unfinished, as workerd's cursor does
 * when V8 collects it; a cursor that finishes first gives it back then, as always. Without this a
 * dropped half-read cursor kept its compiled statement (and a one-off copy's WebAssembly memory)
 * for the life of the storage. Nothing happens for a finished cursor.
 * @internal
 */
export function releaseWhenCollected(cursor: SqlStorageCursor): void {
  watchCursor(cursor);
}

/**
 * What `cursor.raw()` returns: rows as arrays, sharing the cursor's position. Like the platform's
 * `RawIterator` it has no members of its own and inherits `%IteratorPrototype%`; `toArray` and
 * `one` are on its prototype (the storage interface's raw iterator has both).
 */
class RawIterator<U extends SqlStorageValue[]> implements SqlStorageRawIterator<U> {
  static {
    likePlatformPrototype(this.prototype, "RawIterator");
    Object.setPrototypeOf(this.prototype, ITERATOR_PROTOTYPE);
  }

  readonly #cursor: SqlStorageCursor;

  constructor(cursor: SqlStorageCursor, key: symbol) {
    if (key !== ITERATOR_KEY) throw new TypeError("Illegal constructor");
    this.#cursor = cursor;
  }

  /** The next row as an array, or `{done: true}`. */
  next(): IteratorResult<U, undefined> {
    const row = rawRowOf(this.#cursor);
    return row === undefined ? done() : { done: false, value: row as U };
  }

  /** The remaining rows. */
  toArray(): U[] {
    const rows: U[] = [];
    for (let row = rawRowOf(this.#cursor); row !== undefined; row = nextRawRowOf(this.#cursor)) rows.push(row as U);
    return rows;
  }

  /** The one remaining row; throws when there are none or several. */
  one(): U {
    return oneRawRowOf(this.#cursor) as U;
  }

  /** Itself (declared for the type; the runtime's `%IteratorPrototype%` answers it). */
  declare [Symbol.iterator]: () => RawIterator<U>;
}

/** What `cursor[Symbol.iterator]()` returns, as the platform's `RowIterator`: `next` and `%IteratorPrototype%`. */
class RowIterator<T extends Record<string, SqlStorageValue>> implements IterableIterator<T> {
  static {
    likePlatformPrototype(this.prototype, "RowIterator");
    Object.setPrototypeOf(this.prototype, ITERATOR_PROTOTYPE);
  }

  readonly #cursor: SqlStorageCursor<T>;

  constructor(cursor: SqlStorageCursor<T>, key: symbol) {
    if (key !== ITERATOR_KEY) throw new TypeError("Illegal constructor");
    this.#cursor = cursor;
  }

  /** The next row object, or `{done: true}`. */
  next(): IteratorResult<T, undefined> {
    return this.#cursor.next();
  }

  /** Itself (declared for the type; the runtime's `%IteratorPrototype%` answers it). */
  declare [Symbol.iterator]: () => RowIterator<T>;
}

/** The (never modified) buffer of a write that returned no rows. */
const NO_ROWS: SqlStorageValue[][] = [];

/** A finished cursor answers a new `{ done: true, value: undefined }` each time, as workerd does. */
const done = (): IteratorReturnResult<undefined> => ({ done: true, value: undefined });

/**
 * The result of `sql.exec()`: an iterable, an iterator of row objects, and the rows-read and
 * rows-written counters. Constructed only by `SqlStorage.exec` (`new` throws, as on the platform).
 *
 * @example
 * ```ts
 * const cursor = storage.sql.exec("SELECT id, name FROM users WHERE id > ?", 10);
 * for (const row of cursor) console.log(row.id, row.name);
 * cursor.rowsRead; // grows while iterating
 * ```
 */
export class SqlStorageCursor<T extends Record<string, SqlStorageValue> = SqlStorageRow> {
  static {
    likePlatformPrototype(this.prototype, "Cursor");
  }

  #columnNames: string[] | undefined;
  readonly #sharedColumnNames: readonly string[];
  readonly #buildRow: RowBuilder;
  readonly #verdict: AccessVerdict;
  readonly #counting: CountingVerdict;
  readonly #nowMs: number | undefined;
  /** Set while unfinished (statement running or buffered rows left): `deleteAll()` cancels it then. */
  #source: CursorSource | undefined;
  #pending: SqlStorageValue[] | undefined;
  #buffer: SqlStorageValue[][] | undefined;
  #bufferIndex = 0;
  #returned = 0;
  #changes = 0;
  /** Rows a write returned (RETURNING), all produced inside `exec()`. */
  #returnedByWrite = 0;
  /**
   * The counters once the statement finished (it goes back to the cache and may run for others):
   * `#frozen` says they are set. Fields, not an object, so a write's finish allocates nothing.
   */
  #frozen = false;
  #finalRead = 0;
  #finalWritten = 0;
  #statementDone = false;
  /** Registered in {@link ABANDONED} (unregistered when it finishes). */
  #watched = false;

  /**
   * @internal Use `sql.exec()`. `verdict` is the statement's access verdict (kind, writes),
   * `counting` what its row counters need; `nowMs` the 'now' its steps must see, or `undefined`
   * when it reads no time.
   */
  constructor(source?: CursorSource, verdict?: AccessVerdict, counting?: CountingVerdict, nowMs?: number) {
    if (source === undefined || verdict === undefined || counting === undefined) {
      throw new TypeError("Illegal constructor");
    }
    this.#source = source;
    this.#verdict = verdict;
    this.#counting = counting;
    this.#nowMs = nowMs;
    this.#sharedColumnNames = source.columnNames;
    this.#buildRow = source.buildRow;
    this.#start(source);
  }

  /**
   * The result column names (all of them, duplicates included), also when there are no rows.
   * The array is this cursor's own (copied on first access), so changing it affects nothing else.
   */
  get columnNames(): string[] {
    this.#columnNames ??= this.#sharedColumnNames.slice();
    return this.#columnNames;
  }

  /** Rows read so far, by the platform's counting rules as far as sql.js shows them (docs/sql.md). */
  get rowsRead(): number {
    this.#assertNotCanceled();
    return this.#liveRead();
  }

  /** Rows written so far, table and index entries (docs/sql.md). */
  get rowsWritten(): number {
    this.#assertNotCanceled();
    return this.#liveWritten();
  }

  /** The next row, or `{done: true}` (repeatably) after the last. */
  next(): IteratorResult<T, undefined> {
    const row = this.#nextRaw();
    return row === undefined ? done() : { done: false, value: this.#toObject(row) as T };
  }

  /** The remaining rows. */
  toArray(): T[] {
    const rows: T[] = [];
    // No SQL function calls back into user code, so nothing can cancel the cursor mid-loop.
    for (let row = this.#nextRaw(); row !== undefined; row = this.#advance()) rows.push(this.#toObject(row) as T);
    return rows;
  }

  /** The one remaining row. Throws the platform's errors for none and for several (ending the query). */
  one(): T {
    return this.#toObject(this.#oneRaw()) as T;
  }

  /**
   * An iterator of rows as arrays of column values, sharing this cursor's position: a
   * `RawIterator`, which inherits the runtime's iterator helpers (`map`, `take`…) as the
   * platform's does.
   */
  raw<U extends SqlStorageValue[]>(): SqlStorageRawIterator<U> {
    return new RawIterator<U>(this, ITERATOR_KEY);
  }

  /**
   * A new iterator of row objects over the same position (not the cursor itself, as on the
   * platform): a `RowIterator`, which inherits the runtime's iterator helpers.
   */
  [Symbol.iterator](): IterableIterator<T> {
    return new RowIterator<T>(this, ITERATOR_KEY);
  }

  static {
    rawRowOf = (cursor) => cursor.#nextRaw();
    nextRawRowOf = (cursor) => cursor.#advance();
    oneRawRowOf = (cursor) => cursor.#oneRaw();
    watchCursor = (cursor) => {
      const source = cursor.#source;
      if (cursor.#statementDone || cursor.#watched || source === undefined) return;
      cursor.#watched = true;
      // The held value is the source, which never refers to the cursor (that would keep it alive).
      ABANDONED.register(cursor, source, cursor);
    };
  }

  #start(source: CursorSource): void {
    const verdict = this.#verdict;
    source.statement.startCounting(!verdict.mayWrite);
    if (verdict.mayWrite) {
      // Run writes to completion now: the batch may commit before the caller reads, and replay
      // reseeds random() per statement, so no statement may stay half-run.
      // Most writes return no rows: allocate the buffer only for RETURNING.
      let rows: SqlStorageValue[][] = NO_ROWS;
      while (this.#step(source)) {
        if (rows === NO_ROWS) rows = [];
        rows.push(this.#readRow(source));
      }
      this.#changes = isDml(verdict) ? source.engine.changes() : 0;
      this.#buffer = rows;
      this.#returnedByWrite = rows.length;
      this.#finishStatement();
      this.#advanceBuffer();
    } else {
      this.#advanceStatement(source);
    }
  }

  #nextRaw(): SqlStorageValue[] | undefined {
    this.#assertNotCanceled();
    return this.#advance();
  }

  /** {@link SqlStorageCursor.#nextRaw} without the cancellation check (the caller made it). */
  #advance(): SqlStorageValue[] | undefined {
    const row = this.#pending;
    if (row === undefined) return undefined;
    this.#returned++;
    if (this.#buffer !== undefined) this.#advanceBuffer();
    else if (this.#counting.atMostOneRow) {
      // Its one row is out: the program can only halt now, so finish without stepping there.
      this.#pending = undefined;
      this.#finishStatement();
    } else if (this.#source !== undefined) this.#advanceStatement(this.#source);
    return row;
  }

  #oneRaw(): SqlStorageValue[] {
    const row = this.#nextRaw();
    if (row === undefined) throw new Error("Expected exactly one result from SQL query, but got no results.");
    if (this.#pending !== undefined) {
      // The platform stepped to the second row to find it (so its RETURNING read counts it), then
      // ended the query: the row stays counted as seen, not as unread.
      this.#returned++;
      this.#pending = undefined;
      this.#buffer = undefined;
      this.#finishStatement();
      throw new Error("Expected exactly one result from SQL query, but got multiple results.");
    }
    return row;
  }

  /** Steps one row ahead (see the module comment). */
  #advanceStatement(source: CursorSource): void {
    this.#pending = this.#step(source) ? this.#readRow(source) : undefined;
    if (this.#pending === undefined) this.#finishStatement();
  }

  #advanceBuffer(): void {
    const buffer = this.#buffer as SqlStorageValue[][];
    this.#pending = buffer[this.#bufferIndex++];
    if (this.#pending === undefined) {
      this.#buffer = undefined;
      this.#finish();
    }
  }

  #step(source: CursorSource): boolean {
    try {
      return source.statement.step(this.#nowMs);
    } catch (e) {
      this.#pending = undefined;
      this.#buffer = undefined;
      this.#finishStatement();
      throw source.translate(e);
    }
  }

  #readRow(source: CursorSource): SqlStorageValue[] {
    const values = source.statement.row() as (EngineValue | ArrayBuffer)[];
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (typeof v === "string") {
        if (v.length * 3 > source.limits.maxValueBytes) this.#checkValue(source, v);
      } else if (v instanceof Uint8Array) {
        this.#checkValue(source, v);
        // sql.js hands out a fresh copy of the blob; reuse its buffer when it is exactly the blob.
        values[i] =
          v.byteOffset === 0 && v.byteLength === v.buffer.byteLength ? (v.buffer as ArrayBuffer) : v.slice().buffer;
      }
    }
    return values as SqlStorageValue[];
  }

  #checkValue(source: CursorSource, value: string | Uint8Array): void {
    try {
      checkValueSize(value, source.limits);
    } catch (e) {
      // The query ends here: nothing more comes from this cursor (and the statement goes back).
      this.#pending = undefined;
      this.#buffer = undefined;
      this.#finishStatement();
      throw e;
    }
  }

  /** The statement has no more rows: hand it back; counters freeze when nothing is pending. */
  #finishStatement(): void {
    if (!this.#statementDone) {
      this.#statementDone = true;
      if (this.#watched) {
        this.#watched = false;
        ABANDONED.unregister(this);
      }
      // Freeze the counts before the statement goes back to the cache and runs for others.
      this.#freezeCounts();
      // Every caller has just used the statement (or checked for cancellation), so it is current;
      // and releasing a canceled one is harmless (its statement is already freed).
      this.#source?.release();
    }
    if (this.#pending === undefined && this.#buffer === undefined) this.#finish();
  }

  /** The counters stop moving here: everything they are computed from is final once finished. */
  #finish(): void {
    this.#source = undefined;
  }

  #assertNotCanceled(): void {
    // Only while unfinished (statement running or buffered rows left): `deleteAll()` cancels it,
    // and so does closing (or aborting) the storage, whose error the read then fails with: the
    // engine is gone, and its freed statement would otherwise answer with SQLite's misuse error.
    const source = this.#source;
    if (source !== undefined && !source.isCurrent()) {
      source.assertUsable();
      throw new Error(QUERY_CANCELED_MESSAGE);
    }
  }

  /**
   * The platform counts inside SQLite's opcodes (B-tree moves, inserts and deletes); the engine
   * counts the same opcodes as they run (engine/sqljs-row-counters.ts, docs/semantics.md). What is
   * left here: `count(*)` of a whole table reads its rows, a `DELETE` that empties a table at once
   * writes its changes, and a write's RETURNING rows, which the platform steps through as the
   * caller reads them, where this cursor ran the write to its end inside `exec()`.
   */
  #liveRead(): number {
    const read = this.#frozen ? this.#finalRead : this.#statementCounts(0);
    if (!this.#verdict.returning) return read;
    // The platform's temporary table of returned rows: its Rewind, then one step per row after the
    // first, as the caller reads (the published example: INSERT … RETURNING of 2 rows, 3 after
    // exec and 4 at the end).
    const unread = this.#returnedByWrite - this.#visibleRows();
    return read - Math.max(unread, 0);
  }

  /** Sets the final counts from the statement's (see {@link SqlStorageCursor.#statementCounts}). */
  #freezeCounts(): void {
    this.#frozen = true;
    const source = this.#source;
    const statement = source?.statement;
    if (source === undefined || statement === undefined || statement.freed) return;
    // One read of the statement's counters for both (the object it returns is refilled by the next).
    const counts = statement.rowCounts();
    this.#finalRead = this.#platformRead(counts, source);
    this.#finalWritten = this.#platformWritten(counts);
  }

  /**
   * The statement's counts (by the platform's rules) for this cursor's run, while it runs: rows read
   * (`which` 0) or written (1).
   */
  #statementCounts(which: 0 | 1): number {
    const source = this.#source;
    const statement = source?.statement;
    if (source === undefined || statement === undefined || statement.freed) return 0;
    const counts = statement.rowCounts();
    return which === 0 ? this.#platformRead(counts, source) : this.#platformWritten(counts);
  }

  #platformRead(counts: RowCounts, source: CursorSource): number {
    let read = counts.read;
    if (counts.countScans.size > 0) {
      for (const [root, runs] of counts.countScans) read += runs * source.countRowsAt(root);
    }
    return read;
  }

  #platformWritten(counts: RowCounts): number {
    return counts.written + (counts.clears > 0 ? this.#changes : 0);
  }

  /** Rows handed out, plus the one stepped to ahead of the reader. */
  #visibleRows(): number {
    return this.#returned + (this.#pending === undefined ? 0 : 1);
  }

  /** Rows written so far (see {@link SqlStorageCursor.#liveRead}). */
  #liveWritten(): number {
    return this.#frozen ? this.#finalWritten : this.#statementCounts(1);
  }

  #toObject(row: SqlStorageValue[]): SqlStorageRow {
    return this.#buildRow(row);
  }
}

function isDml(verdict: AccessVerdict): boolean {
  return verdict.kind === "insert" || verdict.kind === "update" || verdict.kind === "delete";
}
