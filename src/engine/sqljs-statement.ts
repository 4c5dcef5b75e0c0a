/**
 * A compiled statement of the sql.js adapter (engine/sqljs-engine.ts; engine/sqljs.ts holds the
 * workarounds; this file only binds, steps and reads through SQLite's C API).
 *
 * sql.js's own Statement API binds whole numbers as INTEGER, resets and re-checks on every bind,
 * copies blobs one byte at a time, and loses the result code of a failed step; these calls go
 * straight to the C functions sql.js exports instead (`_sqlite3_bind_double`, `_sqlite3_step`…).
 */
import { asciiString, decodeUtf8, decodeWtf8, isWellFormed } from "../util/utf8";
import { EngineError, type EngineStatement, type EngineValue, type NumberBinding, type RowCounts } from "./engine";
import type { WasmHeap } from "./sqljs-heap";
import type { ProgramLayout } from "./sqljs-program-rewrite";
import { FixedCounts, programExpired, type RunCounters, recompileUnrun, statementCounters } from "./sqljs-row-counters";

/** The raw C exports of the sql.js module that we call directly. */
export interface RawSqlite {
  _sqlite3_step(stmt: number): number;
  _sqlite3_bind_double(stmt: number, index: number, value: number): number;
  _sqlite3_bind_int(stmt: number, index: number, value: number): number;
  _sqlite3_bind_blob(stmt: number, index: number, ptr: number, bytes: number, destructor: number): number;
  _sqlite3_bind_text(stmt: number, index: number, ptr: number, bytes: number, destructor: number): number;
  _sqlite3_reset(stmt: number): number;
  _sqlite3_clear_bindings(stmt: number): number;
  _sqlite3_column_type(stmt: number, column: number): number;
  _sqlite3_column_double(stmt: number, column: number): number;
  _sqlite3_column_text(stmt: number, column: number): number;
  _sqlite3_column_bytes(stmt: number, column: number): number;
  _sqlite3_column_blob(stmt: number, column: number): number;
  _sqlite3_errmsg(db: number): number;
  _sqlite3_sql(stmt: number): number;
  _sqlite3_changes(db: number): number;
  _sqlite3_data_count(stmt: number): number;
  _sqlite3_result_int64(context: number, value: bigint): void;
  _sqlite3_result_blob(context: number, ptr: number, bytes: number, destructor: number): void;
  _sqlite3_result_double(context: number, value: number): void;
  _sqlite3_result_text(context: number, ptr: number, bytes: number, destructor: number): void;
  _sqlite3_result_null(context: number): void;
  _sqlite3_result_error(context: number, message: number, bytes: number): void;
  _sqlite3_value_type(value: number): number;
  _sqlite3_value_double(value: number): number;
  _sqlite3_value_text(value: number): number;
  _sqlite3_value_blob(value: number): number;
  _sqlite3_value_bytes(value: number): number;
  _sqlite3_create_function_v2(
    db: number,
    name: number,
    arity: number,
    encoding: number,
    app: number,
    fn: number,
    step: number,
    final: number,
    destroy: number,
  ): number;
  _free(ptr: number): void;
  _malloc(bytes: number): number;
  _sqlite3_free(ptr: number): void;
  addFunction(fn: (...args: number[]) => void, signature: string): number;
  removeFunction(ptr: number): void;
  stringToNewUTF8(text: string): number;
  UTF8ToString(ptr: number, maxBytes?: number, ignoreNul?: boolean): string;
  lengthBytesUTF8(text: string): number;
  writeArrayToMemory(bytes: Uint8Array, ptr: number): void;
}

const SQLITE_ROW = 100;
const SQLITE_DONE = 101;
const SQLITE_RANGE = 25;
const SQLITE_NOMEM = 7;
const SQLITE_INTEGER = 1;
const SQLITE_FLOAT = 2;
const SQLITE_TEXT = 3;
const SQLITE_BLOB = 4;
/** The second column {@link SqlJsStatement.eachPair} hands over for a row whose second column is not wanted. */
const NO_BYTES = new Uint8Array(0);
/** `sqlite3_bind_text`'s destructor argument: the memory stays valid until the binding is cleared. */
export const SQLITE_STATIC = 0;
/** A destructor argument that makes SQLite copy the bytes before the call returns. */
export const SQLITE_TRANSIENT = -1;

/**
 * Strings are bound from UTF-8 that {@link TextEncoder} writes (natively, ~4x faster than
 * Emscripten's JS encoder for a 100-character string) into this scratch buffer, then copied into
 * the WASM heap. Only well-formed strings take this path: for a lone surrogate TextEncoder writes
 * U+FFFD, where Emscripten's encoder writes WTF-8 (the three bytes of the surrogate's own unit),
 * which is what the platform binds and stores (docs/semantics.md, "Keys with a lone surrogate").
 */
const encoder = new TextEncoder();
const SCRATCH_MAX_BYTES = 1 << 22;
/**
 * Below this length Emscripten's JS encoder (which writes straight into the heap) beats
 * TextEncoder's fixed cost per call; for well-formed text both write the same bytes.
 */
const SHORT_TEXT = 32;
/**
 * Bytes of a statement's own heap block for short bindings (a key and a small value fit): taken
 * once, reused by every bind, freed with the statement.
 */
const BIND_BLOCK_BYTES = 512;
let scratch = new Uint8Array(4096);

/** SQLite's hard upper bound on `?NNN` (SQLITE_MAX_VARIABLE_NUMBER in sql.js's build is 32766). */
const MAX_PARAMETER_PROBE = 32_766;

/** The part of sql.js's Statement object this file still uses. */
export interface StatementHandle {
  getColumnNames(): string[];
  reset(): unknown;
  free(): unknown;
}

/** What a statement needs from the engine that compiled it. */
export interface StatementOwner {
  readonly closed: boolean;
  /** Where a statement keeps its program and counters (see sqljs.ts). */
  readonly programLayout: ProgramLayout;
  forget(stmt: SqlJsStatement): void;
  lastError(rc: number): EngineError;
  /** `sqlite3_step` with SQLite's 'now' pinned to `nowMs` (see sqljs.ts). */
  stepAt(ptr: number, nowMs: number): number;
  /** Runs `fn` and puts back what `changes()` answered before it. */
  keepingChanges<T>(fn: () => T): T;
}

/** Index into `Vdbe.aCounter` (SQLite's `SQLITE_STMTSTATUS_FULLSCAN_STEP`). */
export const STMTSTATUS_FULLSCAN_STEP = 1;
/** The result columns of `EXPLAIN` and `EXPLAIN QUERY PLAN`: their programs only list another one. */
const EXPLAIN_COLUMNS = new Set(["addr,opcode,p1,p2,p3,p4,p5,comment", "id,parent,notused,detail"]);
const NOTHING_COUNTED: RowCounts = Object.freeze({ read: 0, written: 0, countScans: new Map(), clears: 0 });

/** Statements counted by a rewritten copy even when their counts are fixed (see {@link countedByRewrite}). */
const ALWAYS_REWRITTEN = new WeakSet<EngineStatement>();

/**
 * @internal For tests that compare the two ways of counting (sqljs-row-counters.ts): from now on
 * `statement` (not yet counted) is counted by a rewritten copy of its program even when every
 * completed run counts the same ({@link SqlJsStatement.countedBy} tells how a statement is counted).
 */
export function countedByRewrite(statement: EngineStatement): void {
  ALWAYS_REWRITTEN.add(statement);
}

/** A compiled statement (see the module comment). */
export class SqlJsStatement implements EngineStatement {
  readonly sql: string;
  readonly #engine: StatementOwner;
  readonly #raw: RawSqlite;
  readonly #heap: WasmHeap;
  readonly #stmt: StatementHandle;
  readonly #ptr: number;
  #freed = false;
  #parameterCount: number | undefined;
  /** WASM-heap copies of bound strings and blobs (see {@link SqlJsStatement.bind}), freed once unbound. */
  readonly #copies: number[] = [];
  /** This statement's binding block in the heap (see {@link SqlJsStatement.#blockRoom}); 0 until first used. */
  #block = 0;
  /** Bytes of the block the current bindings use. */
  #blockUsed = 0;
  /** Rewound with no bindings and not stepped since: binding needs no reset first. */
  #clean = true;
  /** The row counters (sqljs-row-counters.ts), once {@link SqlJsStatement.startCounting} asked; `null`: nothing to count. */
  #counters: RunCounters | null | undefined;
  /** The values last bound (the row counters look at a seek's key). */
  #bound: readonly EngineValue[] = [];
  /**
   * A counted run that has not stepped yet, and whether it may run again from the start (a read):
   * see {@link SqlJsStatement.step}.
   */
  #countedRunStart: "rerunnable" | "once" | undefined;
  /** Whether the running {@link SqlJsStatement.eachPair} read a first column with a lone surrogate. */
  #loneSurrogateRead = false;

  constructor(engine: StatementOwner, raw: RawSqlite, heap: WasmHeap, stmt: StatementHandle, ptr: number, sql: string) {
    this.#engine = engine;
    this.#raw = raw;
    this.#heap = heap;
    this.#stmt = stmt;
    this.#ptr = ptr;
    this.sql = sql;
  }

  get freed(): boolean {
    return this.#freed || this.#engine.closed;
  }

  bind(values: readonly EngineValue[], numbers: NumberBinding): void {
    this.#assertLive();
    if (!this.#clean) this.#clear();
    this.#bound = values;
    if (values.length === 0) return;
    this.#clean = false;
    // Straight through the C API, for every type: sql.js's own bind resets the statement again,
    // checks every result through its error handler, and binds whole numbers as INTEGER.
    const raw = this.#raw;
    const ptr = this.#ptr;
    const real = numbers === "real";
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      let rc = 0;
      if (typeof v === "number") {
        // "integer" binds like sql.js: int32 values as INTEGER, everything else as REAL.
        rc = real || v !== (v | 0) ? raw._sqlite3_bind_double(ptr, i + 1, v) : raw._sqlite3_bind_int(ptr, i + 1, v);
      } else if (typeof v === "string") rc = this.#bindText(i + 1, v);
      else if (v instanceof Uint8Array) rc = this.#bindBlob(i + 1, v);
      // null: the cleared binding already is NULL.
      if (rc !== 0) throw this.#engine.lastError(rc);
    }
  }

  /** Binds bytes as a BLOB from a copy in the WASM heap that lives until the binding is cleared. */
  #bindBlob(index: number, bytes: Uint8Array): number {
    const raw = this.#raw;
    // Never a null pointer: that would bind NULL instead of an empty blob (the block's never is).
    let copy = this.#blockRoom(bytes.byteLength);
    if (copy === 0) {
      copy = raw._malloc(Math.max(1, bytes.byteLength));
      if (copy === 0) throw new EngineError("out of memory", SQLITE_NOMEM);
      this.#copies.push(copy);
    }
    raw.writeArrayToMemory(bytes, copy);
    return raw._sqlite3_bind_blob(this.#ptr, index, copy, bytes.byteLength, SQLITE_STATIC);
  }

  /** Binds a string as TEXT from a UTF-8 copy that lives until the binding is cleared. */
  #bindText(index: number, text: string): number {
    const raw = this.#raw;
    if (text.length < SHORT_TEXT) {
      const bound = this.#bindShortAscii(index, text);
      if (bound !== -1) return bound;
    }
    const maxBytes = text.length * 3;
    if (text.length >= SHORT_TEXT && maxBytes <= SCRATCH_MAX_BYTES && isWellFormed(text)) {
      const bound = this.#bindEncodedInBlock(index, text);
      if (bound !== -1) return bound;
      if (scratch.length < maxBytes) scratch = new Uint8Array(Math.max(maxBytes, scratch.length * 2));
      const { written } = encoder.encodeInto(text, scratch);
      const copy = raw._malloc(written + 1);
      if (copy === 0) throw new EngineError("out of memory", SQLITE_NOMEM);
      this.#copies.push(copy);
      raw.writeArrayToMemory(scratch.subarray(0, written), copy);
      return raw._sqlite3_bind_text(this.#ptr, index, copy, written, SQLITE_STATIC);
    }
    const copy = raw.stringToNewUTF8(text);
    this.#copies.push(copy);
    // The copy is NUL-terminated; pass its length only when the text itself contains NULs.
    const bytes = text.includes("\0") ? raw.lengthBytesUTF8(text) : -1;
    return raw._sqlite3_bind_text(this.#ptr, index, copy, bytes, SQLITE_STATIC);
  }

  /**
   * Binds short ASCII text (its bytes are its UTF-8, whatever encoder wrote them) from the binding
   * block, with its length (so NULs are kept, as the length passed for text with NULs keeps them).
   * -1 (nothing bound) when the text has another character or the block has no room.
   */
  #bindShortAscii(index: number, text: string): number {
    const length = text.length;
    for (let i = 0; i < length; i++) if (text.charCodeAt(i) >= 0x80) return -1;
    const at = this.#blockRoom(length + 1);
    if (at === 0) return -1;
    const heap = this.#heap.bytes;
    for (let i = 0; i < length; i++) heap[at + i] = text.charCodeAt(i);
    heap[at + length] = 0;
    return this.#raw._sqlite3_bind_text(this.#ptr, index, at, length, SQLITE_STATIC);
  }

  /**
   * Binds well-formed text from its UTF-8 encoded straight into the binding block (no `malloc`,
   * no copy through the scratch buffer): the same bytes as the scratch path, with their length.
   * -1 (nothing bound) when the block has no room for them.
   */
  #bindEncodedInBlock(index: number, text: string): number {
    const used = this.#blockUsed;
    // Every UTF-16 unit is at least one byte; the block keeps at least that room or is not tried.
    if (used + text.length > BIND_BLOCK_BYTES) return -1;
    if (this.#blockRoom(0) === 0) return -1;
    const at = this.#block + used;
    const { read, written } = encoder.encodeInto(text, this.#heap.bytes.subarray(at, this.#block + BIND_BLOCK_BYTES));
    if (read !== text.length) return -1;
    this.#blockUsed = used + ((written + 7) & ~7);
    return this.#raw._sqlite3_bind_text(this.#ptr, index, at, written, SQLITE_STATIC);
  }

  /**
   * `bytes` bytes of this statement's binding block, or 0 (then the caller allocates a copy): the
   * block is allocated once and reused by every binding, so a short value costs no `malloc` and
   * `free` per bind. What it holds lives until the bindings are cleared (bound `SQLITE_STATIC`).
   */
  #blockRoom(bytes: number): number {
    const used = this.#blockUsed;
    if (used + bytes > BIND_BLOCK_BYTES) return 0;
    if (this.#block === 0) {
      this.#block = this.#raw._malloc(BIND_BLOCK_BYTES);
      if (this.#block === 0) return 0;
    }
    this.#blockUsed = used + ((bytes + 7) & ~7);
    return this.#block + used;
  }

  /** Rewinds the statement and clears its bindings (as sql.js's reset), freeing their copies. */
  #clear(): void {
    this.#countedRunStart = undefined;
    this.#raw._sqlite3_reset(this.#ptr);
    this.#raw._sqlite3_clear_bindings(this.#ptr);
    this.#freeCopies();
    this.#blockUsed = 0;
    this.#clean = true;
  }

  #freeCopies(): void {
    const strings = this.#copies;
    for (let p = strings.pop(); p !== undefined; p = strings.pop()) this.#raw._free(p);
  }

  step(nowMs?: number): boolean {
    this.#assertLive();
    this.#clean = false;
    // Only a counted run's first step has more to do; every later one (each row of a scan) is plain.
    const rc = this.#countedRunStart === undefined ? this.#stepRaw(nowMs) : this.#firstCountedStep(nowMs);
    if (rc === SQLITE_ROW) return true;
    if (rc === SQLITE_DONE) {
      this.#counters?.completed();
      return false;
    }
    throw this.#engine.lastError(rc);
  }

  /** The first step of a counted run (see {@link SqlJsStatement.startCounting}): its result code. */
  #firstCountedStep(nowMs: number | undefined): number {
    const start = this.#countedRunStart;
    let first: number | "recompiled" | undefined;
    if (start === "once" && programExpired(this.#heap, this.#engine.programLayout, this.#ptr)) {
      // A run that cannot be repeated: a program SQLite would recompile inside this step is
      // recompiled first without running (sqljs-row-counters.ts), then rewritten and counted.
      // The recompiling step is refused on purpose, and a refused write sets `changes()` to its 0
      // rows: the count the statement before it left is put back, for this run to see.
      first = this.#engine.keepingChanges(() =>
        recompileUnrun(this.#heap, this.#engine.programLayout, this.#ptr, () => this.#stepRaw(nowMs)),
      );
      if (first === "recompiled") {
        this.#raw._sqlite3_reset(this.#ptr); // keeps the bindings
        this.#instrument();
        this.#counters?.begin();
      }
    }
    let rc = typeof first === "number" ? first : this.#stepRaw(nowMs);
    this.#countedRunStart = undefined;
    // SQLite recompiled the statement inside this first step (its plan depends on a bound value,
    // such as a LIKE pattern, or the schema changed), so the new program ran without counting. A
    // read runs again from the start, counted: nothing of its first run was handed out.
    if (start === "rerunnable" && (rc === SQLITE_ROW || rc === SQLITE_DONE) && this.#counters?.live === false) {
      this.#raw._sqlite3_reset(this.#ptr); // keeps the bindings
      this.#instrument();
      this.#counters?.begin();
      rc = this.#stepRaw(nowMs);
    }
    return rc;
  }

  #stepRaw(nowMs: number | undefined): number {
    return nowMs === undefined ? this.#raw._sqlite3_step(this.#ptr) : this.#engine.stepAt(this.#ptr, nowMs);
  }

  row(): EngineValue[] {
    this.#assertLive();
    // As sql.js's get(), minus its per-call bookkeeping and its byte-by-byte blob copy.
    const raw = this.#raw;
    const ptr = this.#ptr;
    const n = raw._sqlite3_data_count(ptr);
    const values = new Array<EngineValue>(n);
    for (let i = 0; i < n; i++) {
      switch (raw._sqlite3_column_type(ptr, i)) {
        case SQLITE_INTEGER:
        case SQLITE_FLOAT:
          values[i] = raw._sqlite3_column_double(ptr, i);
          break;
        case SQLITE_TEXT:
          values[i] = this.#text(i);
          break;
        case SQLITE_BLOB: {
          // The pointer first, then the size (SQLite's advice); the heap view after both.
          const blob = raw._sqlite3_column_blob(ptr, i);
          values[i] = this.#heap.copy(blob, raw._sqlite3_column_bytes(ptr, i));
          break;
        }
        default:
          values[i] = null;
      }
    }
    return values;
  }

  column(index: number): EngineValue {
    this.#assertLive();
    return this.#column(index);
  }

  /** One column as row() reads it (row() keeps its own loop: it is the SQL cursor's hot path). */
  #column(index: number): EngineValue {
    const raw = this.#raw;
    const ptr = this.#ptr;
    switch (raw._sqlite3_column_type(ptr, index)) {
      case SQLITE_INTEGER:
      case SQLITE_FLOAT:
        return raw._sqlite3_column_double(ptr, index);
      case SQLITE_TEXT:
        return this.#text(index);
      case SQLITE_BLOB: {
        const blob = raw._sqlite3_column_blob(ptr, index);
        return this.#heap.copy(blob, raw._sqlite3_column_bytes(ptr, index));
      }
      default:
        return null;
    }
  }

  /**
   * A TEXT column as a string: its UTF-8 bytes, NULs included, decoded as a TextDecoder does but
   * keeping a leading U+FEFF (sql.js's UTF8ToString drops it as a byte-order mark; the platform
   * returns the text as stored, and list() must answer a key that starts with it as it was put).
   * Short ASCII text, such as most keys, is built without a decoder call.
   */
  #text(index: number): string {
    const raw = this.#raw;
    // The pointer first, then the size (SQLite's advice); the heap view after both.
    const text = raw._sqlite3_column_text(this.#ptr, index);
    const length = raw._sqlite3_column_bytes(this.#ptr, index);
    const heap = this.#heap.bytes;
    return asciiString(heap, text, length) ?? decodeUtf8(heap, text, text + length);
  }

  /**
   * The first column of {@link SqlJsStatement.eachPair}: as {@link SqlJsStatement.#column} reads it,
   * except that TEXT is read back exactly as a string was bound (WTF-8, see `decodeWtf8`).
   */
  #exactFirst(): EngineValue {
    const raw = this.#raw;
    if (raw._sqlite3_column_type(this.#ptr, 0) !== SQLITE_TEXT) return this.#column(0);
    const ptr = raw._sqlite3_column_text(this.#ptr, 0);
    const length = raw._sqlite3_column_bytes(this.#ptr, 0);
    const heap = this.#heap.bytes;
    const ascii = asciiString(heap, ptr, length);
    if (ascii !== undefined) return ascii;
    const text = decodeUtf8(heap, ptr, ptr + length);
    // Only text with a U+FFFD can hold an encoded surrogate (valid UTF-8 decodes without one).
    if (text.indexOf("\uFFFD") === -1) return text;
    const exact = decodeWtf8(heap, ptr, ptr + length);
    if (exact !== text) this.#loneSurrogateRead = true;
    return exact;
  }

  readColumn<T>(index: number, read: (value: EngineValue, start: number, end: number) => T): T {
    this.#assertLive();
    const raw = this.#raw;
    const ptr = this.#ptr;
    if (raw._sqlite3_column_type(ptr, index) !== SQLITE_BLOB) {
      const value = this.column(index);
      return read(value, 0, value instanceof Uint8Array ? value.byteLength : 0);
    }
    // No copy and no view: the heap is valid while `read` runs, as nothing in between can grow it.
    const blob = raw._sqlite3_column_blob(ptr, index);
    const length = raw._sqlite3_column_bytes(ptr, index);
    if (length === 0) return read(new Uint8Array(0), 0, 0);
    return read(this.#heap.bytes, blob, blob + length);
  }

  eachPair(
    visit: (first: EngineValue, second: EngineValue, start: number, end: number) => boolean | undefined,
    wantsSecond?: (first: EngineValue) => boolean,
  ): boolean {
    this.#assertLive();
    this.#clean = false;
    this.#loneSurrogateRead = false;
    const raw = this.#raw;
    const ptr = this.#ptr;
    // The first step as step() takes it (a counted run's first step has more to do), the rest plain.
    let rc = this.#countedRunStart === undefined ? raw._sqlite3_step(ptr) : this.#firstCountedStep(undefined);
    while (rc === SQLITE_ROW) {
      const first = this.#exactFirst();
      let keep: boolean | undefined;
      if (wantsSecond !== undefined && !wantsSecond(first)) {
        keep = visit(first, NO_BYTES, 0, 0);
      } else if (raw._sqlite3_column_type(ptr, 1) === SQLITE_BLOB) {
        // As readColumn: the pointer first, then the size; the heap itself, valid while visit runs.
        const blob = raw._sqlite3_column_blob(ptr, 1);
        const length = raw._sqlite3_column_bytes(ptr, 1);
        keep =
          length === 0 ? visit(first, new Uint8Array(0), 0, 0) : visit(first, this.#heap.bytes, blob, blob + length);
      } else {
        keep = visit(first, this.#column(1), 0, 0);
      }
      if (keep === false) return this.#loneSurrogateRead;
      rc = raw._sqlite3_step(ptr);
    }
    if (rc !== SQLITE_DONE) throw this.#engine.lastError(rc);
    return this.#loneSurrogateRead;
  }

  columnNames(): string[] {
    this.#assertLive();
    return this.#stmt.getColumnNames();
  }

  startCounting(rerunnable: boolean): void {
    this.#assertLive();
    const counters = this.#counters;
    // begin() refuses when SQLite recompiled the statement (and freed the copy): rewrite the new program.
    if (counters === undefined || (counters !== null && !counters.begin())) {
      this.#instrument();
      this.#counters?.begin();
    }
    this.#countedRunStart = rerunnable ? "rerunnable" : "once";
  }

  /**
   * Prepares the statement's current program for counting (sqljs-row-counters.ts): fixed counts
   * when every completed run counts the same, else a rewritten copy; EXPLAIN's not at all.
   */
  #instrument(): void {
    const explain = EXPLAIN_COLUMNS.has(this.#stmt.getColumnNames().join());
    this.#counters = explain
      ? null
      : statementCounters(
          { heap: this.#heap, _malloc: (n) => this.#raw._malloc(n), _free: (p) => this.#raw._free(p) },
          this.#engine.programLayout,
          this.#ptr,
          !ALWAYS_REWRITTEN.has(this),
        );
  }

  /** @internal How the current program is counted (see {@link countedByRewrite}). */
  get countedBy(): "fixed counts" | "rewrite" | "nothing" | undefined {
    const counters = this.#counters;
    if (counters === undefined) return undefined;
    return counters === null ? "nothing" : counters instanceof FixedCounts ? "fixed counts" : "rewrite";
  }

  rowCounts(): RowCounts {
    this.#assertLive();
    return this.#counters?.counts(this.#bound) ?? NOTHING_COUNTED;
  }

  parameterCount(): number {
    this.#assertLive();
    if (this.#parameterCount !== undefined) return this.#parameterCount;
    // sqlite3_bind_parameter_count is not exported; binding NULL past the last parameter
    // returns SQLITE_RANGE, so find the first index that does (binary search).
    let lo = 0;
    let hi = MAX_PARAMETER_PROBE;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      const rc = this.#raw._sqlite3_bind_blob(this.#ptr, mid, 0, 0, 0);
      if (rc === SQLITE_RANGE) hi = mid - 1;
      else lo = mid;
    }
    this.#stmt.reset();
    this.#clean = false; // conservative: the next bind runs #clear, which frees any string copies
    this.#parameterCount = lo;
    return lo;
  }

  reset(): void {
    if (this.freed) return;
    this.#clear();
  }

  free(): void {
    if (this.#freed) return;
    this.#freed = true;
    // The original program goes back before SQLite finalizes the statement (it frees that one).
    if (!this.#engine.closed) {
      this.#counters?.release();
      this.#stmt.free();
    }
    this.#freeCopies();
    if (this.#block !== 0) this.#raw._free(this.#block);
    this.#block = 0;
    this.#blockUsed = 0;
    this.#engine.forget(this);
  }

  #assertLive(): void {
    if (this.freed) throw new EngineError("Statement closed", 21 /* SQLITE_MISUSE */);
  }
}
