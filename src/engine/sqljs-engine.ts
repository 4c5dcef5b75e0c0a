/**
 * The sql.js engine: one database as a {@link SqlEngine}. Everything that reaches past sql.js's
 * public API lives in sqljs.ts (which loads sql.js, checks the build once and hands this file a
 * {@link SqlJsModule}); this file is the plain adapter around it.
 *
 * sql.js's public Statement API loses two things the platform needs: the SQLite result code of a
 * failed step (it throws a bare `Error(errmsg)`), and binding a JS number as REAL (it binds
 * int32-valued numbers as INTEGER). Statements therefore go through the raw C functions
 * (sqljs-statement.ts).
 */
import { ActorStoreError } from "../errors";
import { scheduleMacrotask } from "../util/clock";
import { isWellFormed } from "../util/utf8";
import {
  type ConnectionInput,
  type ConnectionInputSource,
  EngineError,
  type EngineFunction,
  type EngineStatement,
  type EngineValue,
  type FrozenImage,
  type FunctionOptions,
  type ImageUse,
  MAX_REAL_TEXT_DIGITS,
  type PreparedHead,
  type RandomSource,
  type SqlEngine,
  type SqlEngineFactory,
} from "./engine";
import type { SqlJsDatabase, SqlJsModule, SqlJsStatementHandle, WasmHeap } from "./sqljs";
import { beginImageCopy, type ImageCopy, type ImageCopyDatabase, type ImageCopyModule } from "./sqljs-image-copy";
import { beginPagedImageCopy } from "./sqljs-paged-copy";
import { FILE_CHUNK_BYTES, PagedFile } from "./sqljs-paged-file";
import { writesReach } from "./sqljs-paged-probe";
import type { ProgramLayout } from "./sqljs-program-rewrite";
import { SqlJsStatement, type StatementOwner } from "./sqljs-statement";

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
 * Single transaction-control statements that `exec` keeps compiled. Their texts come from the
 * storage core (savepoint names carry the nesting depth), so the set stays small.
 */
const TRANSACTION_CONTROL = /^(?:BEGIN|COMMIT|ROLLBACK|SAVEPOINT \w+|RELEASE \w+|ROLLBACK TO \w+)$/;

const templates = new WeakMap<SqlJsModule, Uint8Array>();

/** A valid one-page empty database image: where every image copy's destination starts. */
function templateOf(module: SqlJsModule): Uint8Array {
  let found = templates.get(module);
  if (found === undefined) {
    const { db } = module.openDatabase();
    try {
      db.exec("PRAGMA user_version = 1; PRAGMA user_version = 0");
      found = db.export();
    } finally {
      db.close();
    }
    templates.set(module, found);
  }
  return found;
}

/** One open database of a loaded sql.js module. */
export class SqlJsEngine implements SqlEngine, StatementOwner {
  /** @internal The module's heap (shared by every database of the module). */
  readonly heap: WasmHeap;
  /** @internal Where statements keep their program and counters (see sqljs.ts). */
  readonly programLayout: ProgramLayout;
  readonly #module: SqlJsModule;
  readonly #db: SqlJsDatabase;
  readonly #dbPtr: number;
  /** The connection's counters, read live (made on first use). */
  #counters: ReturnType<SqlJsModule["connectionCounters"]> | undefined;
  readonly #statements = new Set<SqlJsStatement>();
  /** Compiled transaction-control statements (see {@link TRANSACTION_CONTROL}), by text. */
  readonly #control = new Map<string, EngineStatement>();
  readonly #copies = new Set<ImageCopy>();
  /**
   * The database file's storage when it is paged (see sqljs-paged-file.ts); dropped once the file
   * system is found to have taken the file back.
   */
  #file: PagedFile | undefined;
  #closed = false;
  /** Whether the connection has sql.js's legacy extension functions (see {@link SqlEngine.legacyFunctions}). */
  #legacy: boolean;
  /** Keeps sql.js's legacy-function warnings quiet while this connection, given them here, is open. */
  #releaseQuiet: (() => void) | undefined;

  /** A factory of databases of `module`, each limited to `maxDatabaseSize` bytes. */
  static factory(module: SqlJsModule, maxDatabaseSize: number, fileChunkBytes = FILE_CHUNK_BYTES): SqlEngineFactory {
    if (!(Number.isSafeInteger(maxDatabaseSize) && maxDatabaseSize >= 8192)) {
      throw new ActorStoreError(
        "ERR_INVALID_OPTION",
        `maxDatabaseSize must be a whole number of bytes, at least 8192; got ${String(maxDatabaseSize)}.`,
      );
    }
    return {
      open: (bytes?: Uint8Array, use?: ImageUse): SqlEngine =>
        new SqlJsEngine(module, maxDatabaseSize, fileChunkBytes, bytes, use),
    };
  }

  private constructor(
    module: SqlJsModule,
    maxDatabaseSize: number,
    fileChunkBytes: number,
    bytes?: Uint8Array,
    use: ImageUse = "copy",
  ) {
    this.#module = module;
    this.heap = module.heap;
    this.programLayout = module.programLayout;
    // The file on chunks of ours (sqljs-paged-file.ts), with room for the largest the database may
    // grow (and for an image loaded larger than that): growing it never copies it. The chunks a
    // commit's growth will need next are allocated on a later turn, not inside that commit.
    const capacity = Math.max(maxDatabaseSize, bytes?.length ?? 0) + fileChunkBytes;
    const file = new PagedFile(capacity, fileChunkBytes, scheduleMacrotask);
    // An image taken or shared becomes the file's chunks without a copy (sqljs-paged-file.ts).
    const { db, ptr, paged } = module.openPagedDatabase(bytes, file, use);
    this.#file = paged ? file : undefined;
    this.#db = db;
    this.#dbPtr = ptr;
    this.#legacy = module.legacyByDefault;
    // Per connection, not stored in the file: every engine (also one opened from a snapshot) sets it.
    const pageSize = Number(db.exec("PRAGMA page_size")[0]?.values[0]?.[0] ?? 4096);
    db.exec(`PRAGMA max_page_count = ${Math.max(2, Math.floor(maxDatabaseSize / pageSize))}`);
    // The connection is already in exclusive locking mode with its journal in memory (sqljs.ts).
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** @internal The database file's storage, when it is paged (diagnostics and tests). */
  get pagedFile(): PagedFile | undefined {
    return this.#file;
  }

  /**
   * @internal Whether writes still reach the paged file (see `writesReach`; it writes the header
   * page). Only between transactions.
   */
  writesReachPagedFile(): boolean {
    this.#assertOpen();
    return this.#file !== undefined && writesReach(this.#db, this.#file);
  }

  prepare(sql: string): EngineStatement {
    this.#assertOpen();
    let stmt: SqlJsStatementHandle;
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
    let result: IteratorResult<SqlJsStatementHandle>;
    try {
      result = it.next();
    } catch (e) {
      throw this.#error(e);
    }
    if (result.done) return { statement: null, tail: "" };
    // sql.js hands SQLite a C string, so SQLite's input (and sql.js's remainder) ends at the first
    // NUL; the text from that NUL on is unparsed too, and stays part of the remainder.
    const raw = this.#module.raw;
    const head = raw._sqlite3_sql(this.#module.statementPointer(result.value));
    let text: string;
    let tail: string;
    if (isWellFormed(sql)) {
      const nul = sql.indexOf("\0");
      tail = nul < 0 ? it.getRemainingSQL() : it.getRemainingSQL() + sql.slice(nul);
      text = raw.UTF8ToString(head);
    } else {
      // sql.js's strings (the head's text, the remainder) are decoded from SQLite's copy of the
      // text, which reads a lone surrogate as U+FFFD; SQLite got it as WTF-8 (three bytes of its
      // own unit), and compiling the decoded text again would store U+FFFD where a literal had the
      // surrogate. Cut the caller's own string where the head's bytes end instead.
      const at = unitsInBytes(sql, byteLengthAt(this.heap.bytes, head));
      text = sql.slice(0, at);
      tail = sql.slice(at);
    }
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
    // What `changes()` answers is the last statement of the object's own: this internal read
    // leaves it as it was. (`EXPLAIN` of a write, which the access check lists, ends the way the
    // write would, and SQLite sets `changes()` to the 0 rows it changed.)
    return this.keepingChanges(() => {
      const stmt = this.prepare(sql);
      try {
        stmt.bind(params, "integer");
        const rows: EngineValue[][] = [];
        while (stmt.step()) rows.push(stmt.row());
        return rows;
      } finally {
        stmt.free();
      }
    });
  }

  /** @internal Runs `fn` and puts back what `changes()` answered before it (StatementOwner). */
  keepingChanges<T>(fn: () => T): T {
    return this.#keeping(false, fn);
  }

  /**
   * Runs `fn` and puts back what `changes()` answered before it, and with `all` also
   * `total_changes()` and `last_insert_rowid()` (see {@link SqlJsEngine.keepConnectionCounters}).
   */
  #keeping<T>(all: boolean, fn: () => T): T {
    const counters = this.#connectionCounters();
    const changes = counters.changes();
    const total = all ? counters.total_changes() : 0n;
    const last = all ? counters.last_insert_rowid() : 0n;
    try {
      return fn();
    } finally {
      if (all) counters.set(changes, total, last);
      else counters.setChanges(changes);
    }
  }

  /** This connection's counters, looked up on first use. */
  #connectionCounters(): ReturnType<SqlJsModule["connectionCounters"]> {
    return (this.#counters ??= this.#module.connectionCounters(this.#dbPtr));
  }

  changes(): number {
    this.#assertOpen();
    return this.#module.raw._sqlite3_changes(this.#dbPtr);
  }

  totalChanges(): number {
    this.#assertOpen();
    return Number(this.#connectionCounters().total_changes());
  }

  resetConnectionCounters(): void {
    this.#assertOpen();
    this.#connectionCounters().reset();
  }

  keepConnectionCounters<T>(fn: () => T): T {
    this.#assertOpen();
    return this.#keeping(true, fn);
  }

  setRealTextDigits(digits: number): void {
    this.#assertOpen();
    if (!(Number.isInteger(digits) && digits >= 1 && digits <= MAX_REAL_TEXT_DIGITS)) {
      throw new RangeError(
        `REAL-as-text digits must be an integer from 1 to ${MAX_REAL_TEXT_DIGITS}; got ${String(digits)}.`,
      );
    }
    this.#module.setRealTextDigits(this.#dbPtr, digits);
  }

  get legacyFunctions(): boolean {
    return this.#legacy;
  }

  setLegacyFunctions(on: boolean): void {
    this.#assertOpen();
    if (on === this.#legacy) return;
    if (!on) {
      throw new RangeError(
        "sql.js's legacy extension functions cannot be taken off a connection; open a new one from exportBytes().",
      );
    }
    this.#module.registerLegacyFunctions(this.#dbPtr);
    this.#legacy = true;
    // Only replay gives a connection these functions (for sessions logged with them): sql.js warns
    // once per call, which would print a line per replayed row.
    this.#releaseQuiet = this.#module.quietLegacyWarnings();
  }

  exportBytes(): Uint8Array {
    this.#assertOpen();
    const file = this.#file;
    // The paged file holds the committed state whenever a header rewrite reaches it (not during a
    // write transaction, nor once the file system took the file back): one copy of its bytes.
    if (file !== undefined && writesReach(this.#db, file)) {
      const size = this.#pragma("page_count") * this.#pragma("page_size");
      if (size <= file.size) return file.slice(0, size);
    }
    // sql.js 1.16 exports through the backup API into a scratch database: the live connection,
    // its prepared statements and its functions stay intact.
    return this.#db.export();
  }

  freezeImage(changedSince?: number): FrozenImage | undefined {
    this.#assertOpen();
    const file = this.#file;
    // As exportBytes: the chunks hold the committed state only while a header rewrite reaches them.
    if (file === undefined || !writesReach(this.#db, file)) return undefined;
    const size = this.#pragma("page_count") * this.#pragma("page_size");
    return size <= file.size ? file.freeze(size, changedSince) : undefined;
  }

  #pragma(name: string): number {
    return Number(this.#db.exec(`PRAGMA ${name}`)[0]?.values[0]?.[0] ?? 0);
  }

  beginImageCopy(): ImageCopy {
    this.#assertOpen();
    const file = this.#file;
    if (file === undefined) return this.#backupCopy();
    // The file is ours: its chunks are copied with plain memory copies (sqljs-paged-copy.ts).
    const pragma = (name: string) => this.#pragma(name);
    const copy = beginPagedImageCopy(
      file,
      {
        databaseBytes: () => pragma("page_count") * pragma("page_size"),
        writesReach: () => {
          if (writesReach(this.#db, file)) return true;
          // The file system took the file back (and never gives it again): copy with the backup API.
          this.#file = undefined;
          return false;
        },
        backupCopy: () => this.#backupCopy(),
      },
      pragma("page_size"),
      () => this.#copies.delete(copy),
    );
    this.#copies.add(copy);
    return copy;
  }

  /** A copy made with SQLite's backup API (sqljs-image-copy.ts). */
  #backupCopy(): ImageCopy {
    const module = this.#module;
    const pages = Number(this.#db.exec("PRAGMA page_count")[0]?.values[0]?.[0] ?? 0);
    const pageSize = Number(this.#db.exec("PRAGMA page_size")[0]?.values[0]?.[0] ?? 4096);
    // Room for the image plus growth while the copy runs (untouched room costs no resident memory).
    const room = Math.ceil(pages * 1.25 + 256) * pageSize;
    const dests = new Map<ImageCopyDatabase, number>();
    const open = (bytes: Uint8Array): ImageCopyDatabase => {
      const { db, ptr } = module.openDatabase(bytes);
      dests.set(db, ptr);
      return db;
    };
    const started: ImageCopy[] = [];
    const end = () => {
      for (const c of started) this.#copies.delete(c);
    };
    const raw = module.raw as unknown as ImageCopyModule;
    const copy: ImageCopy = beginImageCopy(
      raw,
      this.#dbPtr,
      open,
      (db) => dests.get(db) ?? 0,
      templateOf(module),
      room,
      end,
    );
    started.push(copy);
    this.#copies.add(copy);
    return copy;
  }

  createFunction(name: string, arity: number, fn: EngineFunction, options: FunctionOptions = {}): void {
    this.#assertOpen();
    if (!(Number.isInteger(arity) && arity >= 0 && arity <= 127)) {
      throw new RangeError(`Functions of arity ${arity} are not supported.`);
    }
    this.#module.registerFunction(this.#dbPtr, name, arity, { kind: "values", fn }, options.directOnly === true);
  }

  setRandomSource(source: RandomSource): void {
    this.#assertOpen();
    // random() stays INTEGER; randomblob(N) refuses more than SQLITE_LIMIT_LENGTH before
    // allocating anything (see sqljs.ts).
    this.#module.registerFunction(this.#dbPtr, "random", 0, { kind: "int64", fn: () => source.nextInt64() });
    this.#module.registerFunction(this.#dbPtr, "randomblob", 1, { kind: "blob", fn: (n) => source.nextBytes(n) });
  }

  setConnectionInputs(source: ConnectionInputSource): void {
    this.#assertOpen();
    const live = this.#module.connectionCounters(this.#dbPtr);
    for (const name of ["changes", "total_changes", "last_insert_rowid"] as const satisfies ConnectionInput[]) {
      const read = live[name];
      this.#module.registerFunction(this.#dbPtr, name, 0, { kind: "int64", fn: () => source.value(name, read) });
    }
  }

  withNow<T>(nowMs: number, fn: () => T): T {
    return this.#module.withNow(nowMs, fn);
  }

  close(): void {
    if (this.#closed) return;
    // A backup handle must be finished before its source connection closes.
    for (const copy of [...this.#copies]) copy.abandon();
    for (const s of this.#statements) s.free();
    this.#statements.clear();
    this.#db.close();
    // sql.js removed the file: its chunks are garbage (V8 is told about shared ones, sqljs-paged-file.ts).
    this.#file?.dispose();
    this.#module.forgetFunctions(this.#dbPtr);
    this.#releaseQuiet?.();
    this.#releaseQuiet = undefined;
    this.#closed = true;
  }

  /** @internal */
  stepAt(ptr: number, nowMs: number): number {
    return this.#module.stepAt(ptr, nowMs);
  }

  /** @internal */
  forget(stmt: SqlJsStatement): void {
    this.#statements.delete(stmt);
  }

  /** @internal */
  lastError(rc: number): EngineError {
    const raw = this.#module.raw;
    return new EngineError(raw.UTF8ToString(raw._sqlite3_errmsg(this.#dbPtr)), rc & 0xff);
  }

  #wrap(stmt: SqlJsStatementHandle, sql: string): EngineStatement {
    const module = this.#module;
    const wrapped = new SqlJsStatement(this, module.raw, this.heap, stmt, module.statementPointer(stmt), sql);
    this.#statements.add(wrapped);
    return wrapped;
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

/** Maps SQLite's message back to its primary result code where sql.js did not give us one. */
function guessResultCode(message: string): number {
  if (/constraint failed/i.test(message)) return 19;
  if (/too big|too long/i.test(message)) return 18;
  if (/not authorized/i.test(message)) return 23;
  if (/database is locked/i.test(message)) return 5;
  if (/out of memory/i.test(message)) return 7;
  return 1;
}

/** The length of the NUL-terminated string at `ptr` of `heap`, in bytes. */
function byteLengthAt(heap: Uint8Array, ptr: number): number {
  const nul = heap.indexOf(0, ptr);
  return (nul < 0 ? heap.length : nul) - ptr;
}

/** How many UTF-16 units of `s` its first `bytes` bytes of UTF-8 (WTF-8 for a lone surrogate) hold. */
function unitsInBytes(s: string, bytes: number): number {
  let i = 0;
  for (let n = 0; n < bytes && i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return i;
}
