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
import { ActorStoreError } from "../errors";
import {
  type ConnectionInput,
  type ConnectionInputSource,
  EngineError,
  type EngineFunction,
  type EngineStatement,
  type EngineValue,
  type PreparedHead,
  type RandomSource,
  type SqlEngine,
  type SqlEngineFactory,
} from "./engine";
import {
  type RawSqlite,
  SQLITE_STATIC,
  SQLITE_TRANSIENT,
  SqlJsStatement,
  STMTSTATUS_FULLSCAN_STEP,
  type StatementOwner,
} from "./sqljs-statement";
import { WasmHeap } from "./wasm-heap";

/** Options for loading sql.js (needed in browsers to find the WASM file). */
export interface SqlJsLoadOptions {
  /** Maps `sql-wasm.wasm` to a URL or path, as sql.js's own `locateFile`. */
  locateFile?: (file: string) => string;
  /** The WASM bytes, if already loaded. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /**
   * The most bytes one database may hold (default {@link DEFAULT_MAX_DATABASE_SIZE}). A write that
   * would grow it further fails with SQLite's `database or disk is full` (`SQLITE_FULL`), as the
   * platform's 10 GB limit does; every database of a process shares one WASM heap (at most 4 GiB),
   * so the default is far lower.
   */
  maxDatabaseSize?: number;
}

/**
 * The default of {@link SqlJsLoadOptions.maxDatabaseSize}: 1 GiB. The platform allows 10 GB per
 * object, but all databases of a process live in one WASM heap of at most 4 GiB.
 */
export const DEFAULT_MAX_DATABASE_SIZE = 1 << 30;

/**
 * Limits that SQLite itself enforces on every connection, as the platform sets them: the largest
 * string or blob (`SQLITE_LIMIT_LENGTH`: `randomblob(1e9)`, `replace()`/`printf()`/`||`/
 * `group_concat` blow-ups, `zeroblob` fail fast with `string or blob too big` instead of allocating)
 * and the trigger recursion depth. The other platform limits are emulated around the engine
 * (storage/sql/sql-limits.ts), where the storage's own statements stay unaffected by them.
 */
export const ENGINE_LIMITS = Object.freeze({ length: 2_200_000, triggerDepth: 10 });

/** Indexes into `sqlite3.aLimit` (SQLite's `SQLITE_LIMIT_*`). */
const SQLITE_LIMIT_LENGTH = 0;
const SQLITE_LIMIT_TRIGGER_DEPTH = 10;
/** `Vdbe.aCounter[SQLITE_STMTSTATUS_RUN]`: how often the statement ran (see locateStepCounters). */
const STMTSTATUS_RUN = 6;
/**
 * Single transaction-control statements that `exec` keeps compiled. Their texts come from the
 * storage core (savepoint names carry the nesting depth), so the set stays small.
 */
const TRANSACTION_CONTROL = /^(?:BEGIN|COMMIT|ROLLBACK|SAVEPOINT \w+|RELEASE \w+|ROLLBACK TO \w+)$/;

let modulePromise: Promise<SqlJsStatic> | undefined;

/**
 * The sql.js release every workaround in this file was written and checked against (package.json
 * pins it exactly). The workarounds do not trust the number: each locates what it needs by value
 * and verifies it through the C API when a module loads, and any mismatch fails loudly with
 * {@link UNSUPPORTED_BUILD}'s message, which is this module's one version check.
 */
export const SUPPORTED_SQLJS_VERSION = "1.16.0";

/** The one error every failed probe of a sql.js build throws. */
function UNSUPPORTED_BUILD(what: string): string {
  return `actorstore could not locate ${what} in sql.js; this build of sql.js is not supported. Install sql.js ${SUPPORTED_SQLJS_VERSION}, the version actorstore pins.`;
}

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
  const layout = layoutOf(sql, keys);
  const maxDatabaseSize = options.maxDatabaseSize ?? DEFAULT_MAX_DATABASE_SIZE;
  if (!(Number.isSafeInteger(maxDatabaseSize) && maxDatabaseSize >= 8192)) {
    throw new ActorStoreError(
      "ERR_INVALID_OPTION",
      `maxDatabaseSize must be a whole number of bytes, at least 8192; got ${String(maxDatabaseSize)}.`,
    );
  }
  return {
    open(bytes?: Uint8Array): SqlEngine {
      return new SqlJsEngine(sql, keys, layout, maxDatabaseSize, bytes);
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
        throw new Error(UNSUPPORTED_BUILD("the raw connection and statement pointers"));
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
        throw new Error(UNSUPPORTED_BUILD("SQLite's statement counters"));
      }
      return offset;
    } finally {
      stmt.free();
    }
  } finally {
    db.close();
  }
}

/**
 * Where `sqlite3.aLimit` (the connection's `sqlite3_limit` values) sits, as a byte offset from the
 * connection pointer. sql.js exports no `sqlite3_limit`; the array is found by its compiled-in
 * defaults (LENGTH and SQL_LENGTH 1e9, COLUMN 2000, EXPR_DEPTH 1000, COMPOUND_SELECT 500), then
 * checked: with LENGTH set to 1000, `zeroblob(1000)` must work and `zeroblob(1001)` must fail.
 */
function locateLimits(sql: SqlJsStatic, keys: PointerKeys, heap: WasmHeap): number {
  const db = new sql.Database();
  try {
    const ptr = (db as unknown as Record<string, number>)[keys.database] as number;
    const fails = (q: string) => {
      try {
        db.exec(q);
        return false;
      } catch (e) {
        return /too big/.test(String(e));
      }
    };
    for (let at = 0; at < 1024; at += 4) {
      const a = ptr + at;
      const defaults =
        heap.u32(a) === 1e9 &&
        heap.u32(a + 4) === 1e9 &&
        heap.u32(a + 8) === 2000 &&
        heap.u32(a + 12) === 1000 &&
        heap.u32(a + 16) === 500;
      if (!defaults) continue;
      heap.setU32(a, 1000);
      if (!fails("SELECT zeroblob(1000)") && fails("SELECT zeroblob(1001)")) return at;
      heap.setU32(a, 1e9);
    }
    throw new Error(UNSUPPORTED_BUILD("SQLite's limits"));
  } finally {
    db.close();
  }
}

/** Where the raw structures of one sql.js module are (the same for every database it opens). */
interface ModuleLayout {
  readonly heap: WasmHeap;
  /** See {@link locateStepCounters}. */
  readonly counterOffset: number;
  /** See {@link locateLimits}. */
  readonly limitsOffset: number;
}

const layouts = new WeakMap<SqlJsStatic, ModuleLayout>();

/**
 * The heap of a loaded sql.js module (see wasm-heap.ts), where its statements keep their counters
 * and where its connections keep their limits, located once per module (every
 * `ObjectStorage.open` loads the engine).
 */
function layoutOf(sql: SqlJsStatic, keys: PointerKeys): ModuleLayout {
  let found = layouts.get(sql);
  if (found === undefined) {
    const heap = new WasmHeap(sql as unknown as RawSqlite);
    found = {
      heap,
      counterOffset: locateStepCounters(sql, keys, heap),
      limitsOffset: locateLimits(sql, keys, heap),
    };
    layouts.set(sql, found);
  }
  return found;
}

class SqlJsEngine implements SqlEngine, StatementOwner {
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

  constructor(sql: SqlJsStatic, keys: PointerKeys, layout: ModuleLayout, maxDatabaseSize: number, bytes?: Uint8Array) {
    this.#raw = sql as unknown as RawSqlite;
    this.heap = layout.heap;
    this.counterOffset = layout.counterOffset;
    this.#keys = keys;
    this.#db = new sql.Database(bytes);
    this.#dbPtr = (this.#db as unknown as Record<string, number>)[keys.database] as number;
    const limits = this.#dbPtr + layout.limitsOffset;
    this.heap.setU32(limits + 4 * SQLITE_LIMIT_LENGTH, ENGINE_LIMITS.length);
    this.heap.setU32(limits + 4 * SQLITE_LIMIT_TRIGGER_DEPTH, ENGINE_LIMITS.triggerDepth);
    // Per connection, not stored in the file: every engine (also one opened from a snapshot) sets it.
    const pageSize = Number(this.#db.exec("PRAGMA page_size")[0]?.values[0]?.[0] ?? 4096);
    this.#db.exec(`PRAGMA max_page_count = ${Math.max(2, Math.floor(maxDatabaseSize / pageSize))}`);
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
    this.#createRawFunction("random", 0, fnPtr);
    // randomblob(N) returns max(N, 1) bytes, and refuses more than SQLITE_LIMIT_LENGTH before
    // allocating anything (randomblob(1e9) must not build a gigabyte first): a result longer than
    // the limit makes SQLite report `string or blob too big` (SQLITE_TOOBIG) without reading it.
    const raw = this.#raw;
    const blobPtr = raw.addFunction((context: number, _argc: number, argv: number) => {
      const requested = Math.trunc(raw._sqlite3_value_double(this.heap.u32(argv)));
      const n = Math.max(1, requested || 1);
      if (n > ENGINE_LIMITS.length) {
        raw._sqlite3_result_blob(context, argv, ENGINE_LIMITS.length + 1, SQLITE_STATIC);
        return;
      }
      const bytes = source.nextBytes(n);
      const copy = raw._malloc(n);
      if (copy === 0) {
        raw._sqlite3_result_blob(context, argv, ENGINE_LIMITS.length + 1, SQLITE_STATIC);
        return;
      }
      raw.writeArrayToMemory(bytes, copy);
      raw._sqlite3_result_blob(context, copy, n, SQLITE_TRANSIENT);
      raw._free(copy);
    }, "viii");
    this.#rawFunctions.push(blobPtr);
    this.#createRawFunction("randomblob", 1, blobPtr);
  }

  /** Registers a raw C-ABI function pointer under `name` (UTF-8, not deterministic). */
  #createRawFunction(name: string, arity: number, fnPtr: number): void {
    const namePtr = this.#raw.stringToNewUTF8(name);
    try {
      const SQLITE_UTF8 = 1;
      const rc = this.#raw._sqlite3_create_function_v2(this.#dbPtr, namePtr, arity, SQLITE_UTF8, 0, fnPtr, 0, 0, 0);
      if (rc !== 0) throw this.lastError(rc);
    } finally {
      this.#raw._free(namePtr);
    }
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
  stepAt(ptr: number, nowMs: number): number {
    return stepAt(this.#raw, ptr, nowMs);
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
