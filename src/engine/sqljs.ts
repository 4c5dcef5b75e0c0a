/**
 * The sql.js adapter: the only module that imports sql.js.
 *
 * sql.js's public Statement API loses two things the platform needs: the SQLite result code of a
 * failed step (it throws a bare `Error(errmsg)`), and binding a JS number as REAL (it binds
 * int32-valued numbers as INTEGER). Both are available through the raw C functions that sql.js
 * exports on its module (`_sqlite3_step`, `_sqlite3_bind_double`), which need the raw statement
 * and connection pointers. sql.js keeps those in minified property names, so we find them once,
 * by value, and verify them (see {@link locatePointerKeys}). The sql.js version is pinned exactly.
 */

import type { Database, SqlJsStatic, Statement } from "sql.js";
import initSqlJs from "sql.js";
import { isWellFormed } from "../util/utf8";
import {
  type ConnectionInput,
  type ConnectionInputSource,
  EngineError,
  type EngineFunction,
  type EngineStatement,
  type EngineValue,
  type NumberBinding,
  type PreparedHead,
  type RandomSource,
  type SqlEngine,
  type SqlEngineFactory,
} from "./engine";
import { WasmHeap } from "./wasm-heap";

/** Options for loading sql.js (needed in browsers to find the WASM file). */
export interface SqlJsLoadOptions {
  /** Maps `sql-wasm.wasm` to a URL or path, as sql.js's own `locateFile`. */
  locateFile?: (file: string) => string;
  /** The WASM bytes, if already loaded. */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

/** The raw C exports of the sql.js module that we call directly. */
interface RawSqlite {
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
/** `sqlite3_bind_text`'s destructor argument: the memory stays valid until the binding is cleared. */
const SQLITE_STATIC = 0;

/**
 * Strings are bound from UTF-8 that {@link TextEncoder} writes (natively, ~4x faster than
 * Emscripten's JS encoder for a 100-character string) into this scratch buffer, then copied into
 * the WASM heap. Only well-formed strings take this path: for a lone surrogate TextEncoder writes
 * U+FFFD, where Emscripten's encoder (and so sql.js until now) writes something else.
 */
const encoder = new TextEncoder();
const SCRATCH_MAX_BYTES = 1 << 22;
/**
 * Below this length Emscripten's JS encoder (which writes straight into the heap) beats
 * TextEncoder's fixed cost per call; for well-formed text both write the same bytes.
 */
const SHORT_TEXT = 32;
let scratch = new Uint8Array(4096);
/**
 * Single transaction-control statements that `exec` keeps compiled. Their texts come from the
 * storage core (savepoint names carry the nesting depth), so the set stays small.
 */
const TRANSACTION_CONTROL = /^(?:BEGIN|COMMIT|ROLLBACK|SAVEPOINT \w+|RELEASE \w+|ROLLBACK TO \w+)$/;
/** SQLite's hard upper bound on `?NNN` (SQLITE_MAX_VARIABLE_NUMBER in sql.js's build is 32766). */
const MAX_PARAMETER_PROBE = 32_766;

let modulePromise: Promise<SqlJsStatic> | undefined;

/**
 * Loads sql.js once per process (or per distinct options) and returns a factory for databases.
 *
 * @example
 * ```ts
 * const factory = await loadSqlJsEngine();
 * const db = factory.open();
 * db.exec("CREATE TABLE t(x)");
 * ```
 */
export async function loadSqlJsEngine(options: SqlJsLoadOptions = {}): Promise<SqlEngineFactory> {
  const custom = options.locateFile !== undefined || options.wasmBinary !== undefined;
  const load = () =>
    initSqlJs({
      ...(options.locateFile ? { locateFile: options.locateFile } : {}),
      ...(options.wasmBinary ? { wasmBinary: options.wasmBinary as ArrayBuffer } : {}),
    });
  const sql = custom ? await load() : await (modulePromise ??= load());
  const keys = locatePointerKeys(sql);
  const { heap, counterOffset } = heapOf(sql, keys);
  return {
    open(bytes?: Uint8Array): SqlEngine {
      return new SqlJsEngine(sql, keys, heap, counterOffset, bytes);
    },
  };
}

interface PointerKeys {
  database: string;
  statement: string;
}

let cachedKeys: PointerKeys | undefined;

/**
 * Finds the property names under which sql.js keeps the raw connection and statement pointers.
 * Each candidate is verified through the C API (`sqlite3_sql` must give back the statement's text,
 * `sqlite3_errmsg` must answer for the connection), so a mismatch fails loudly at load time.
 */
function locatePointerKeys(sql: SqlJsStatic): PointerKeys {
  if (cachedKeys) return cachedKeys;
  const raw = sql as unknown as RawSqlite;
  const db = new sql.Database();
  try {
    const probeSql = "SELECT 1 AS actorstore_probe";
    const stmt = db.prepare(probeSql);
    try {
      const statementKey = Object.keys(stmt).find((k) => {
        const v = (stmt as unknown as Record<string, unknown>)[k];
        return typeof v === "number" && v > 1024 && raw.UTF8ToString(raw._sqlite3_sql(v)) === probeSql;
      });
      const databaseKey = Object.keys(db).find((k) => {
        const v = (db as unknown as Record<string, unknown>)[k];
        return typeof v === "number" && v > 1024 && raw.UTF8ToString(raw._sqlite3_errmsg(v)).length > 0;
      });
      if (statementKey === undefined || databaseKey === undefined) {
        throw new Error(
          "actorstore could not find sql.js's raw pointers; this version of sql.js is not supported. Install the version actorstore pins.",
        );
      }
      cachedKeys = { database: databaseKey, statement: statementKey };
      return cachedKeys;
    } finally {
      stmt.free();
    }
  } finally {
    db.close();
  }
}

/**
 * Where SQLite keeps a statement's `sqlite3_stmt_status` counters (`Vdbe.aCounter`), as a byte
 * offset from the statement pointer. sql.js does not export `sqlite3_stmt_status`, so the counters
 * are read from the heap: the array sits right before `Vdbe.zSql`, whose value `sqlite3_sql`
 * returns, which finds the offset; a full scan of a known table then checks it (FULLSCAN_STEP must
 * count the rows after the first, RUN must be 1).
 */
function locateStepCounters(sql: SqlJsStatic, keys: PointerKeys, heap: WasmHeap): number {
  const raw = sql as unknown as RawSqlite;
  const db = new sql.Database();
  try {
    db.exec("CREATE TABLE probe (x); INSERT INTO probe VALUES (1), (2), (3), (4), (5), (6), (7);");
    const stmt = db.prepare("SELECT x FROM probe");
    try {
      const ptr = (stmt as unknown as Record<string, number>)[keys.statement] as number;
      const zSql = raw._sqlite3_sql(ptr);
      let offset = -1;
      for (let at = 36; at < 1024 && offset < 0; at += 4) if (heap.u32(ptr + at) === zSql) offset = at - 36;
      while (stmt.step()) {
        // a full scan: 7 rows
      }
      const counter = (index: number) => heap.u32(ptr + offset + 4 * index);
      if (offset < 0 || counter(STMTSTATUS_FULLSCAN_STEP) !== 6 || counter(STMTSTATUS_RUN) !== 1) {
        throw new Error(
          "actorstore could not locate SQLite's statement counters in sql.js; this version of sql.js is not supported. Install the version actorstore pins.",
        );
      }
      return offset;
    } finally {
      stmt.free();
    }
  } finally {
    db.close();
  }
}

/** Indexes into `Vdbe.aCounter` (SQLite's `SQLITE_STMTSTATUS_*`; slot 0 counts the other steps). */
const STMTSTATUS_FULLSCAN_STEP = 1;
const STMTSTATUS_RUN = 6;

const heaps = new WeakMap<SqlJsStatic, { heap: WasmHeap; counterOffset: number }>();

/**
 * The heap of a loaded sql.js module (see wasm-heap.ts) and where its statements keep their
 * counters, located once per module (every `ObjectStorage.open` loads the engine).
 */
function heapOf(sql: SqlJsStatic, keys: PointerKeys): { heap: WasmHeap; counterOffset: number } {
  let found = heaps.get(sql);
  if (found === undefined) {
    const heap = new WasmHeap(sql as unknown as RawSqlite);
    found = { heap, counterOffset: locateStepCounters(sql, keys, heap) };
    heaps.set(sql, found);
  }
  return found;
}

class SqlJsEngine implements SqlEngine {
  /** @internal The module's heap (shared by every database of the module). */
  readonly heap: WasmHeap;
  /** @internal See {@link locateStepCounters}. */
  readonly counterOffset: number;
  readonly #raw: RawSqlite;
  readonly #keys: PointerKeys;
  readonly #db: Database;
  readonly #dbPtr: number;
  readonly #statements = new Set<SqlJsStatement>();
  /** Compiled transaction-control statements (see {@link TRANSACTION_CONTROL}), by text. */
  readonly #control = new Map<string, EngineStatement>();
  readonly #rawFunctions: number[] = [];
  #closed = false;

  constructor(sql: SqlJsStatic, keys: PointerKeys, heap: WasmHeap, counterOffset: number, bytes?: Uint8Array) {
    this.#raw = sql as unknown as RawSqlite;
    this.heap = heap;
    this.counterOffset = counterOffset;
    this.#keys = keys;
    this.#db = new sql.Database(bytes);
    this.#dbPtr = (this.#db as unknown as Record<string, number>)[keys.database] as number;
    // Durability comes from actorstore's own commit log, not from SQLite's journal, and no other
    // connection ever opens this in-memory file. With the default modes, every read asks
    // Emscripten's file system about a hot journal and every write transaction creates and
    // deletes one: measured 30-40 % of a point read. An exclusive lock and a journal in memory
    // keep rollback and savepoints working without any of that.
    this.#db.exec("PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = MEMORY;");
  }

  get closed(): boolean {
    return this.#closed;
  }

  prepare(sql: string): EngineStatement {
    this.#assertOpen();
    let stmt: Statement;
    try {
      stmt = this.#db.prepare(sql);
    } catch (e) {
      throw this.#error(e);
    }
    return this.#wrap(stmt, sql);
  }

  prepareHead(sql: string): PreparedHead {
    this.#assertOpen();
    const it = this.#db.iterateStatements(sql);
    let result: IteratorResult<Statement>;
    try {
      result = it.next();
    } catch (e) {
      throw this.#error(e);
    }
    if (result.done) return { statement: null, tail: "" };
    const tail = it.getRemainingSQL();
    const text = this.#raw.UTF8ToString(this.#raw._sqlite3_sql(this.#stmtPtr(result.value)));
    // The iterator owns (and frees) its statement; compile our own copy of the same text so its
    // lifetime is ours. This costs a second compile only for scripts, which callers cache.
    (it as unknown as { return(): void }).return();
    return { statement: this.prepare(text), tail };
  }

  exec(sql: string): void {
    this.#assertOpen();
    if (TRANSACTION_CONTROL.test(sql)) {
      // BEGIN, COMMIT and savepoints run several times per batch: compile each text once.
      let statement = this.#control.get(sql);
      if (statement === undefined || statement.freed) {
        statement = this.prepare(sql);
        this.#control.set(sql, statement);
      }
      try {
        statement.step();
      } finally {
        statement.reset();
      }
      return;
    }
    try {
      this.#db.exec(sql);
    } catch (e) {
      throw this.#error(e);
    }
  }

  query(sql: string, params: readonly EngineValue[] = []): EngineValue[][] {
    const stmt = this.prepare(sql);
    try {
      stmt.bind(params, "integer");
      const rows: EngineValue[][] = [];
      while (stmt.step()) rows.push(stmt.row());
      return rows;
    } finally {
      stmt.free();
    }
  }

  changes(): number {
    this.#assertOpen();
    return this.#raw._sqlite3_changes(this.#dbPtr);
  }

  exportBytes(): Uint8Array {
    this.#assertOpen();
    // sql.js 1.16 exports through the backup API into a scratch database: the live connection,
    // its prepared statements and its functions stay intact.
    return this.#db.export();
  }

  createFunction(name: string, arity: number, fn: EngineFunction): void {
    this.#assertOpen();
    // sql.js registers a function with the arity of the JS function it is given (`fn.length`).
    const call = (...args: unknown[]) => fn(...args.map(normalizeArg));
    const wrapped = fixedArity(arity, call);
    this.#db.create_function(name, wrapped as unknown as (...args: never[]) => never);
  }

  setRandomSource(source: RandomSource): void {
    this.#assertOpen();
    // random() must stay INTEGER, which sql.js's create_function cannot return (it returns every
    // number as REAL), so register it through the C API and answer with sqlite3_result_int64.
    const fnPtr = this.#raw.addFunction((context: number) => {
      this.#raw._sqlite3_result_int64(context, source.nextInt64());
    }, "viii");
    this.#rawFunctions.push(fnPtr);
    const name = this.#raw.stringToNewUTF8("random");
    try {
      const SQLITE_UTF8 = 1;
      const rc = this.#raw._sqlite3_create_function_v2(this.#dbPtr, name, 0, SQLITE_UTF8, 0, fnPtr, 0, 0, 0);
      if (rc !== 0) throw this.lastError(rc);
    } finally {
      this.#raw._free(name);
    }
    // SQLite's randomblob(N) returns max(N, 1) bytes.
    this.createFunction("randomblob", 1, (n) => source.nextBytes(Math.max(1, Math.trunc(Number(n) || 0))));
  }

  setConnectionInputs(source: ConnectionInputSource): void {
    this.#assertOpen();
    const offsets = connectionCounterOffsets(this.#raw, this.heap, this.#keys);
    const db = this.#dbPtr;
    const live: Record<ConnectionInput, () => bigint> = {
      changes: () => this.heap.i64(db + offsets.changes),
      total_changes: () => this.heap.i64(db + offsets.totalChanges),
      last_insert_rowid: () => this.heap.i64(db + offsets.lastRowid),
    };
    for (const name of Object.keys(live) as ConnectionInput[]) {
      const read = live[name];
      this.#registerInt64Function(name, () => source.value(name, read));
    }
  }

  /** Registers a 0-argument function returning an INTEGER through the C API (see setRandomSource). */
  #registerInt64Function(name: string, fn: () => bigint): void {
    const fnPtr = this.#raw.addFunction((context: number) => {
      this.#raw._sqlite3_result_int64(context, fn());
    }, "viii");
    this.#rawFunctions.push(fnPtr);
    const namePtr = this.#raw.stringToNewUTF8(name);
    try {
      const SQLITE_UTF8 = 1;
      const rc = this.#raw._sqlite3_create_function_v2(this.#dbPtr, namePtr, 0, SQLITE_UTF8, 0, fnPtr, 0, 0, 0);
      if (rc !== 0) throw this.lastError(rc);
    } finally {
      this.#raw._free(namePtr);
    }
  }

  withNow<T>(nowMs: number, fn: () => T): T {
    const outer = pinNow(nowMs);
    try {
      return fn();
    } finally {
      unpinNow(outer);
    }
  }

  close(): void {
    if (this.#closed) return;
    for (const s of this.#statements) s.free();
    this.#statements.clear();
    this.#db.close();
    for (const ptr of this.#rawFunctions) this.#raw.removeFunction(ptr);
    this.#closed = true;
  }

  /** @internal */
  forget(stmt: SqlJsStatement): void {
    this.#statements.delete(stmt);
  }

  /** @internal */
  lastError(rc: number): EngineError {
    return new EngineError(this.#raw.UTF8ToString(this.#raw._sqlite3_errmsg(this.#dbPtr)), rc & 0xff);
  }

  #wrap(stmt: Statement, sql: string): EngineStatement {
    const wrapped = new SqlJsStatement(this, this.#raw, this.heap, stmt, this.#stmtPtr(stmt), sql);
    this.#statements.add(wrapped);
    return wrapped;
  }

  #stmtPtr(stmt: Statement): number {
    return (stmt as unknown as Record<string, number>)[this.#keys.statement] as number;
  }

  #error(e: unknown): EngineError {
    if (e instanceof EngineError) return e;
    const message = e instanceof Error ? e.message : String(e);
    return new EngineError(message, guessResultCode(message));
  }

  #assertOpen(): void {
    if (this.#closed) throw new EngineError("Database closed", 21 /* SQLITE_MISUSE */);
  }
}

class SqlJsStatement implements EngineStatement {
  readonly sql: string;
  readonly #engine: SqlJsEngine;
  readonly #raw: RawSqlite;
  readonly #heap: WasmHeap;
  readonly #stmt: Statement;
  readonly #ptr: number;
  #freed = false;
  #parameterCount: number | undefined;
  /** WASM-heap copies of bound strings and blobs (see {@link SqlJsStatement.bind}), freed once unbound. */
  readonly #copies: number[] = [];
  /** Rewound with no bindings and not stepped since: binding needs no reset first. */
  #clean = true;

  constructor(engine: SqlJsEngine, raw: RawSqlite, heap: WasmHeap, stmt: Statement, ptr: number, sql: string) {
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
    // Never a null pointer: that would bind NULL instead of an empty blob.
    const copy = raw._malloc(Math.max(1, bytes.byteLength));
    if (copy === 0) throw new EngineError("out of memory", SQLITE_NOMEM);
    this.#copies.push(copy);
    raw.writeArrayToMemory(bytes, copy);
    return raw._sqlite3_bind_blob(this.#ptr, index, copy, bytes.byteLength, SQLITE_STATIC);
  }

  /** Binds a string as TEXT from a UTF-8 copy that lives until the binding is cleared. */
  #bindText(index: number, text: string): number {
    const raw = this.#raw;
    const maxBytes = text.length * 3;
    if (text.length >= SHORT_TEXT && maxBytes <= SCRATCH_MAX_BYTES && isWellFormed(text)) {
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

  /** Rewinds the statement and clears its bindings (as sql.js's reset), freeing their copies. */
  #clear(): void {
    this.#raw._sqlite3_reset(this.#ptr);
    this.#raw._sqlite3_clear_bindings(this.#ptr);
    this.#freeCopies();
    this.#clean = true;
  }

  #freeCopies(): void {
    const strings = this.#copies;
    for (let p = strings.pop(); p !== undefined; p = strings.pop()) this.#raw._free(p);
  }

  step(nowMs?: number): boolean {
    this.#assertLive();
    this.#clean = false;
    const rc = nowMs === undefined ? this.#raw._sqlite3_step(this.#ptr) : stepAt(this.#raw, this.#ptr, nowMs);
    if (rc === SQLITE_ROW) return true;
    if (rc === SQLITE_DONE) return false;
    throw this.#engine.lastError(rc);
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
        case SQLITE_TEXT: {
          const text = raw._sqlite3_column_text(ptr, i);
          values[i] = raw.UTF8ToString(text, raw._sqlite3_column_bytes(ptr, i), true);
          break;
        }
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

  columnNames(): string[] {
    this.#assertLive();
    return this.#stmt.getColumnNames();
  }

  scanSteps(): number {
    this.#assertLive();
    const at = this.#ptr + this.#engine.counterOffset;
    // Slot 0 collects the Next/Prev/SorterNext steps SQLite does not file under a named counter.
    return this.#heap.u32(at) + this.#heap.u32(at + 4 * STMTSTATUS_FULLSCAN_STEP);
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
    if (!this.#engine.closed) this.#stmt.free();
    this.#freeCopies();
    this.#engine.forget(this);
  }

  #assertLive(): void {
    if (this.freed) throw new EngineError("Statement closed", 21 /* SQLITE_MISUSE */);
  }
}

/**
 * sql.js reads the time for 'now' through Emscripten's clock, which calls `Date.now()`. Pinning it
 * for the duration of one synchronous engine call makes SQL time deterministic and replayable
 * (durability logs `nowMs` with every SQL write). One pinned function serves every call, so
 * pinning allocates nothing; nested pins restore the outer one.
 */
const pin = { ms: 0, depth: 0, original: Date.now };
const pinnedNow = (): number => pin.ms;

/** Pins 'now' to `nowMs`; returns the time pinned before, for {@link unpinNow}. */
function pinNow(nowMs: number): number {
  const outer = pin.ms;
  if (pin.depth++ === 0) pin.original = Date.now;
  pin.ms = nowMs;
  Date.now = pinnedNow;
  return outer;
}

function unpinNow(outer: number): void {
  pin.ms = outer;
  if (--pin.depth === 0) Date.now = pin.original;
}

/** `sqlite3_step` with 'now' pinned to `nowMs`. */
function stepAt(raw: RawSqlite, ptr: number, nowMs: number): number {
  const outer = pinNow(nowMs);
  try {
    return raw._sqlite3_step(ptr);
  } finally {
    unpinNow(outer);
  }
}

/** A function whose `.length` is `arity` (sql.js derives the SQL arity from it). */
function fixedArity(arity: number, call: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown {
  switch (arity) {
    case 0:
      return () => call();
    case 1:
      return (a: unknown) => call(a);
    case 2:
      return (a: unknown, b: unknown) => call(a, b);
    case 3:
      return (a: unknown, b: unknown, c: unknown) => call(a, b, c);
    default:
      throw new RangeError(`Functions of arity ${arity} are not supported.`);
  }
}

function normalizeArg(value: unknown): EngineValue {
  if (value === undefined) return null;
  return value as EngineValue;
}

/** Maps SQLite's message back to its primary result code where sql.js did not give us one. */
function guessResultCode(message: string): number {
  if (/constraint failed/i.test(message)) return 19;
  if (/too big|too long/i.test(message)) return 18;
  if (/not authorized/i.test(message)) return 23;
  if (/database is locked/i.test(message)) return 5;
  if (/out of memory/i.test(message)) return 7;
  return 1;
}

/** Where the `sqlite3` connection struct keeps its counters, as byte offsets from its pointer. */
interface ConnectionCounterOffsets {
  lastRowid: number;
  changes: number;
  totalChanges: number;
}

const counterOffsets = new WeakMap<object, ConnectionCounterOffsets>();

/**
 * sql.js exports neither `sqlite3_last_insert_rowid` nor `sqlite3_total_changes`, and the SQL
 * functions that read them cannot be called once they are replaced (which replay needs). So the
 * values are read from the connection struct (`sqlite3.lastRowid`, `nChange`, `nTotalChange`, all
 * 64-bit), whose offsets are found once by value on a probe connection and then checked against
 * the built-in functions after further writes: a mismatch fails loudly.
 */
function connectionCounterOffsets(raw: RawSqlite, heap: WasmHeap, keys: PointerKeys): ConnectionCounterOffsets {
  const known = counterOffsets.get(raw);
  if (known !== undefined) return known;
  const sql = raw as unknown as SqlJsStatic;
  const db = new sql.Database();
  try {
    const ptr = (db as unknown as Record<string, number>)[keys.database] as number;
    const scan = (value: bigint, after = 0): number => {
      for (let at = after; at < 512; at += 8) if (heap.i64(ptr + at) === value) return at;
      return -1;
    };
    const builtins = (): bigint[] =>
      (db.exec("SELECT last_insert_rowid(), changes(), total_changes()")[0]?.values[0] ?? []).map((v) =>
        BigInt(v as number),
      );
    db.exec("CREATE TABLE probe(x); INSERT INTO probe(rowid) VALUES (81985529216486895)");
    const lastRowid = scan(81985529216486895n);
    db.exec(
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1234) INSERT INTO probe(x) SELECT i FROM c",
    );
    // nChange (1234) is followed by nTotalChange (1235).
    let changes = scan(1234n);
    while (changes >= 0 && heap.i64(ptr + changes + 8) !== 1235n) changes = scan(1234n, changes + 8);
    const found = { lastRowid, changes, totalChanges: changes + 8 };
    const read = () => [found.lastRowid, found.changes, found.totalChanges].map((o) => heap.i64(ptr + o));
    db.exec("INSERT INTO probe(rowid) VALUES (4242); UPDATE probe SET x = 0 WHERE rowid < 100");
    const ok = lastRowid >= 0 && changes >= 0 && read().every((v, i) => v === builtins()[i]);
    if (!ok) {
      throw new Error(
        "actorstore could not locate SQLite's connection counters in sql.js; this version of sql.js is not supported. Install the version actorstore pins.",
      );
    }
    counterOffsets.set(raw, found);
    return found;
  } finally {
    db.close();
  }
}
