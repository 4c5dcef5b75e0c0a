/**
 * The small SQL-engine interface that storage code talks to. Only `engine/sqljs.ts` knows sql.js;
 * everything above this line sees {@link SqlEngine} and {@link EngineStatement}.
 */

/** A value as the engine stores it: INTEGER/REAL → number, TEXT → string, BLOB → bytes, NULL. */
export type EngineValue = number | string | Uint8Array | null;

/**
 * Rows a statement read and wrote by the platform's rules (SQLite's opcodes counted as the
 * platform's patched SQLite counts them; engine/sqljs-row-counters.ts).
 */
export interface RowCounts {
  /** Rows read, but those of `count(*)` over a whole table (see {@link RowCounts.countScans}). */
  readonly read: number;
  /** Rows written, but those of a `Clear` (see {@link RowCounts.clears}). */
  readonly written: number;
  /**
   * `count(*)` of a whole table, which the platform counts as reading every row: how often it ran,
   * by the B-tree root page it counted (the table's or one of its indexes').
   */
  readonly countScans: ReadonlyMap<number, number>;
  /**
   * How often a `DELETE` without `WHERE` emptied its table at once (`Clear`); the platform counts
   * each row removed (the statement's changes) as written.
   */
  readonly clears: number;
}

/** How numbers are bound: the platform binds every JS number as REAL; internal code wants INTEGER. */
export type NumberBinding = "real" | "integer";

/** One compiled statement. */
export interface EngineStatement {
  /** The text of this statement (for a script, just this statement). */
  readonly sql: string;
  /** Resets the statement and binds `values` to `?1…?n`. */
  bind(values: readonly EngineValue[], numbers: NumberBinding): void;
  /**
   * Advances to the next row; `false` when done. Throws {@link EngineError} on failure. With
   * `nowMs`, SQLite's 'now' is that time during this step (as {@link SqlEngine.withNow}).
   */
  step(nowMs?: number): boolean;
  /**
   * The current row's values. Blobs are copies the caller owns; small ones may be views into a
   * buffer shared with other copies (mind `byteOffset` when using `.buffer`).
   */
  row(): EngineValue[];
  /**
   * One column of the current row, read as {@link EngineStatement.row} reads it, without reading
   * the others (a caller that may not need a large column reads the small ones first).
   */
  column(index: number): EngineValue;
  /**
   * Hands `read` one column of the current row without copying it when it is a BLOB: the engine's
   * memory itself, with the blob at `[start, end)` of it, valid only while `read` runs. `read` must
   * read nothing outside that range, keep nothing that shares the memory (decode it into fresh
   * objects), and must not call into this engine. Other types are handed over as
   * {@link EngineStatement.column} reads them (a copy, for an empty blob), with `start` 0 and `end`
   * their byte length when they are bytes, else 0.
   */
  readColumn<T>(index: number, read: (value: EngineValue, start: number, end: number) => T): T;
  /**
   * Steps through the remaining rows of a statement of two or more columns, as
   * {@link EngineStatement.step} does, and hands `visit` each row: its first column as
   * {@link EngineStatement.column} reads it, except that TEXT comes back as the string that was
   * bound, a lone surrogate included (it is stored as WTF-8; `column` reads U+FFFD for each of its
   * three bytes, as the platform's SQL API does), so a key scan sees the keys written; its second as {@link EngineStatement.readColumn} hands
   * it over (a blob in place, valid only while `visit` runs, under the same rules). One call for a
   * whole scan instead of a step and two column reads per row (a listing of 1,000 rows). Stops after
   * the row for which `visit` returns `false`; `visit` must not call into this engine. With
   * `wantsSecond`, asked for each row first, a row it answers `false` for is handed over without
   * reading its second column: an empty array as `second`, `start` and `end` 0. Returns whether a
   * first column it handed over had a lone surrogate (so a caller that hands such strings back
   * differently need not look at each string of a scan that had none).
   */
  eachPair(
    visit: (first: EngineValue, second: EngineValue, start: number, end: number) => boolean | undefined,
    wantsSecond?: (first: EngineValue) => boolean,
  ): boolean;
  /** The result column names, also for statements that return no rows. */
  columnNames(): string[];
  /**
   * Starts counting rows read and written the platform's way for the run about to begin: call after
   * {@link EngineStatement.bind} and before the first {@link EngineStatement.step}. The first call
   * prepares the statement for counting (statements that never call it run unchanged).
   * `rerunnable`: the statement only reads, so when SQLite recompiles it inside its first step (a
   * plan that depends on a bound value, such as a LIKE pattern) it may run again from the start to
   * be counted; a statement that may write is recompiled before its first step runs anything
   * instead (docs/sql.md, "rowsRead / rowsWritten").
   */
  startCounting(rerunnable: boolean): void;
  /**
   * The rows read and written since {@link EngineStatement.startCounting} (live while the run goes
   * on). The object may be the statement's own, refilled by the next call: read it at once.
   */
  rowCounts(): RowCounts;
  /** The number of parameters the statement takes (largest `?NNN` index). */
  parameterCount(): number;
  /** Rewinds the statement so it can run again; keeps it compiled. */
  reset(): void;
  /** Releases the statement. Using it afterwards throws. */
  free(): void;
  /** Whether {@link EngineStatement.free} was called (or the engine closed). */
  readonly freed: boolean;
}

/** The first statement of a script and the text after it. */
export interface PreparedHead {
  /** `null` when the text holds no statement (only whitespace, comments or `;`). */
  statement: EngineStatement | null;
  /** The unparsed remainder of the script. */
  tail: string;
}

/** A user-defined scalar SQL function. */
export type EngineFunction = (...args: EngineValue[]) => EngineValue;

/** How SQL may use a function registered with {@link SqlEngine.createFunction}. */
export interface FunctionOptions {
  /**
   * Only in statements: a view, trigger, CHECK, DEFAULT, generated column or index expression that
   * calls it fails with `unsafe use of <name>()`, as SQLite's `SQLITE_DIRECTONLY` functions do.
   */
  readonly directOnly?: boolean;
}

/** Where `random()` and `randomblob()` take their values from. */
export interface RandomSource {
  /** A signed 64-bit integer. */
  nextInt64(): bigint;
  /** `length` random bytes. */
  nextBytes(length: number): Uint8Array;
}

/**
 * The SQL functions whose value is connection state rather than database state: what the last
 * statement changed, what the connection changed in total, the last rowid it inserted.
 */
export type ConnectionInput = "changes" | "total_changes" | "last_insert_rowid";

/**
 * Decides what {@link ConnectionInput} functions return, so that a write which stores their value
 * can be replayed exactly on another connection (see `setConnectionInputs`).
 */
export interface ConnectionInputSource {
  /** The value `name()` returns now; `live()` reads this connection's own value. */
  value(name: ConnectionInput, live: () => bigint): bigint;
}

import type { ImageCopy } from "./sqljs-image-copy";

export type { ImageCopy };

/**
 * A database image held in place (see {@link SqlEngine.freezeImage}): the concatenation of
 * `parts` is a standard SQLite database file, unchanged until `release()` is called.
 */
export interface FrozenImage {
  /** The image's bytes in order (views of the engine's storage: never write into them). */
  readonly parts: readonly Uint8Array[];
  /** The sum of the parts' lengths. */
  readonly byteLength: number;
  /** The parts are no longer read: later writes may land in that storage again. Idempotent. */
  release(): void;
  /**
   * This freeze's change mark: pass it to a later {@link SqlEngine.freezeImage} of the same engine
   * to learn which parts changed since this one. Absent when the engine does not track changes.
   */
  readonly mark?: number;
  /**
   * The indexes into `parts` whose bytes may differ from the image of the freeze whose mark was
   * asked for (every part is `chunkBytes` long but the last); absent when that is not known (no
   * mark asked for, or the mark is of contents the database no longer descends from). A part
   * not listed holds the same bytes as in that image (bytes past that image's end read as zeros).
   */
  readonly changed?: readonly number[];
  /** The length of every part but the last (present with `mark`). */
  readonly chunkBytes?: number;
}

/** The significant digits the platform's SQLite writes a REAL with as text (`0.1 + 0.2` → `'0.3'`). */
export const PLATFORM_REAL_TEXT_DIGITS = 15;

/**
 * The significant digits sql.js's SQLite writes a REAL with as text by default
 * (`0.30000000000000004`): what every session logged before the engine set the platform's ran with.
 */
export const SQLJS_REAL_TEXT_DIGITS = 17;

/** The most significant digits SQLite writes a REAL with as text (its `nFpDigit` takes 1 to 23). */
export const MAX_REAL_TEXT_DIGITS = 23;

/** An open database. */
export interface SqlEngine {
  /** Compiles one statement (text after the first statement is ignored). */
  prepare(sql: string): EngineStatement;
  /** Compiles the first statement of a script and returns the rest. */
  prepareHead(sql: string): PreparedHead;
  /** Runs a trusted script (schema, savepoints) and discards results. */
  exec(sql: string): void;
  /** Runs a trusted query and returns all rows. */
  query(sql: string, params?: readonly EngineValue[]): EngineValue[][];
  /** Rows changed by the most recent INSERT, UPDATE or DELETE. */
  changes(): number;
  /** Rows changed by every INSERT, UPDATE and DELETE since the connection opened (`total_changes()`'s own value). */
  totalChanges(): number;
  /**
   * Makes `changes()`, `total_changes()` and `last_insert_rowid()` read 0, as on a connection just
   * opened (a new session of an object starts on one on the platform, whatever this connection ran).
   */
  resetConnectionCounters(): void;
  /**
   * Runs `fn` (statements of the caller's own, which the object must not see the effects of), then
   * puts `changes()`, `total_changes()` and `last_insert_rowid()` back to what they read before it.
   */
  keepConnectionCounters<T>(fn: () => T): T;
  /**
   * Sets how many significant digits SQLite writes a REAL with when it turns it into text (a TEXT
   * column's affinity, `CAST`, `||`, `printf('%s')`). Every connection opens with the platform's
   * {@link PLATFORM_REAL_TEXT_DIGITS}; replay sets what the log says a session ran with
   * (`SessionMark.realTextDigits`). An integer from 1 to {@link MAX_REAL_TEXT_DIGITS}.
   */
  setRealTextDigits(digits: number): void;
  /**
   * Whether this connection has sql.js's legacy extension functions: its `log`, `ceil`, `floor`,
   * `sign`, `sin` … (and `median`, `stdev`, `padl` …) instead of SQLite's built-in math functions,
   * which the platform has (`log(100)` is 4.605… with them, 2 without). Connections open without
   * them, unless sql.js was initialized in this process before actorstore loaded it and without
   * `useOldExtensionFunctions: false` (then every connection has them, docs/sql.md). Sessions logged
   * before the engine left them out ran with them, and replay runs those so
   * (`SessionMark.nativeFunctions`).
   */
  readonly legacyFunctions: boolean;
  /**
   * `true` registers sql.js's legacy extension functions on this connection (see
   * {@link SqlEngine.legacyFunctions}; nothing when it has them). They cannot be taken off a
   * connection again (deleting them leaves no function of those names, not SQLite's own), so
   * `false` on a connection that has them throws a `RangeError`: open a new connection from
   * {@link SqlEngine.exportBytes} instead; on one without them, `false` does nothing.
   */
  setLegacyFunctions(on: boolean): void;
  /** A standard SQLite database file of the current committed state; keeps this connection open. */
  exportBytes(): Uint8Array;
  /**
   * Starts a copy of the database image that is made a few pages at a time (see
   * `sqljs-paged-copy.ts` and `sqljs-image-copy.ts`), for snapshots that must not hold the event
   * loop for the whole image.
   * Optional: an engine without it is snapshotted with {@link SqlEngine.exportBytes}.
   */
  beginImageCopy?(): ImageCopy;
  /**
   * The committed state's image now, without copying it: the database file's own storage, held
   * unchanged (later writes copy what they change first) until {@link FrozenImage.release}. Call
   * it only between transactions (inside one it answers `undefined`). `undefined` also when the
   * file's storage is not the engine's own (then use {@link SqlEngine.exportBytes} or
   * {@link SqlEngine.beginImageCopy}). With `changedSince` (the {@link FrozenImage.mark} of an
   * earlier freeze of this engine), the image also lists the parts changed since that freeze
   * ({@link FrozenImage.changed}), which is what an incremental snapshot writes. Optional.
   */
  freezeImage?(changedSince?: number): FrozenImage | undefined;
  /** Registers (or replaces, including built-ins) a scalar function of fixed arity. */
  createFunction(name: string, arity: number, fn: EngineFunction, options?: FunctionOptions): void;
  /**
   * Replaces SQLite's `random()` and `randomblob(N)` with the given sources, so that SQL using them
   * can be replayed exactly. `random()` keeps its INTEGER type.
   */
  setRandomSource(source: RandomSource): void;
  /**
   * Routes `changes()`, `total_changes()` and `last_insert_rowid()` through `source` (which sees
   * the connection's own value and may record it, or answer a recorded one instead). They keep
   * their INTEGER type.
   */
  setConnectionInputs(source: ConnectionInputSource): void;
  /** Runs `fn` with SQLite's notion of "now" (`datetime('now')`, `CURRENT_TIMESTAMP`) fixed to `nowMs`. */
  withNow<T>(nowMs: number, fn: () => T): T;
  /** Closes the database; every statement is freed. */
  close(): void;
  /** Whether {@link SqlEngine.close} was called. */
  readonly closed: boolean;
}

/**
 * What an engine opened from a database image may do with the image's bytes:
 * - `"copy"`: copy them; the caller keeps them (and may change them).
 * - `"take"`: keep them as the database's file, without a copy: the caller hands them over and
 *   never reads or writes them again (a buffer just read from disk).
 * - `"share"`: read them in place, without a copy, and copy a part before the database's first
 *   write to it: the caller keeps them and never changes them (an adapter's stored image), and
 *   they are never changed.
 */
export type ImageUse = "copy" | "take" | "share";

/** Opens databases. Loading the engine (WASM) is asynchronous; opening is then synchronous. */
export interface SqlEngineFactory {
  /**
   * Opens an empty database, or one from the bytes of a SQLite file, used as `use` allows
   * (default `"copy"`, see {@link ImageUse}).
   */
  open(bytes?: Uint8Array, use?: ImageUse): SqlEngine;
}

/** An error reported by SQLite. */
export class EngineError extends Error {
  /** SQLite's own message (`sqlite3_errmsg`). */
  readonly sqliteMessage: string;
  /** The primary result code, e.g. 19 for SQLITE_CONSTRAINT. */
  readonly resultCode: number;

  constructor(sqliteMessage: string, resultCode: number) {
    super(sqliteMessage);
    Object.setPrototypeOf(this, new.target.prototype);
    this.name = "EngineError";
    this.sqliteMessage = sqliteMessage;
    this.resultCode = resultCode;
  }
}
