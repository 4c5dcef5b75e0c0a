/**
 * The sql.js adapter's workarounds, together: the only module that imports sql.js.
 *
 * sql.js's public API lacks what the platform's behaviour needs, so this file reaches past it, and
 * everything that depends on how sql.js or its SQLite build is laid out is here, checked once when
 * a module loads ({@link checkBuild}, the one version check):
 *
 * - **pointer probing**: the raw connection and statement pointers, kept under minified property
 *   names, found by value ({@link locatePointerKeys}); the C functions sql.js exports need them;
 * - **heap capture**: sql.js exports no view of its WASM heap; {@link WasmHeap} (sqljs-heap.ts)
 *   captures it through one `TextDecoder.decode` call of the module's own `UTF8ToString`;
 * - **offsets into SQLite's structs**, read and written through the heap: a statement's
 *   `sqlite3_stmt_status` counters ({@link locateStepCounters}), its program, its registers, its expired flag, the
 *   opcode numbers and a connection's query-only flag ({@link probeProgramLayout},
 *   sqljs-program-layout.ts), a connection's `sqlite3_limit`
 *   values ({@link locateLimits}) and significant digits of a REAL as text ({@link locateFpDigits}),
 *   its change counters and last rowid
 *   ({@link connectionCounterOffsets}), and a function call's user data ({@link locateUserData});
 * - **functions without a WASM module each**: sql.js's `create_function` compiles a new WASM module
 *   per registration; {@link SqlJsModule.registerFunction} registers every function of every
 *   connection through one shared trampoline instead (sqljs-functions.ts);
 * - **pinning 'now'**: SQLite reads the time through Emscripten's clock, which calls `Date.now()`;
 *   {@link SqlJsModule.withNow} replaces it for the length of one synchronous call;
 * - **the database file on chunks of ours**: Emscripten's in-memory file copies the whole file each
 *   time it outgrows its buffer; {@link SqlJsModule.openPagedDatabase} hands it a paged file
 *   instead (sqljs-paged-file.ts, probed here once with the rest).
 *
 * The engine itself (sqljs-engine.ts, sqljs-statement.ts) only calls what this module exports.
 */

import type { Database, SqlJsStatic, Statement } from "sql.js";
import initSqlJs from "sql.js";
import { ActorStoreError } from "../errors";
import { type ImageUse, PLATFORM_REAL_TEXT_DIGITS, SQLJS_REAL_TEXT_DIGITS, type SqlEngineFactory } from "./engine";
import { DEFAULT_MAX_DATABASE_SIZE, SqlJsEngine, type SqlJsLoadOptions } from "./sqljs-engine";
import { type RawFunction, SharedFunctions } from "./sqljs-functions";
import { WasmHeap } from "./sqljs-heap";
import { quietLegacyWarnings } from "./sqljs-legacy-warnings";
import { openOnPagedFile, type PagedFile } from "./sqljs-paged-file";
import { probePagedFiles } from "./sqljs-paged-probe";
import { LAYOUT_PROBE_SCHEMA, locateProgramLayout } from "./sqljs-program-layout";
import type { ProgramLayout } from "./sqljs-program-rewrite";
import { type RawSqlite, STMTSTATUS_FULLSCAN_STEP } from "./sqljs-statement";

export type { Database as SqlJsDatabase, Statement as SqlJsStatementHandle } from "sql.js";
export { DEFAULT_MAX_DATABASE_SIZE, type SqlJsLoadOptions } from "./sqljs-engine";
export type { RawFunction } from "./sqljs-functions";
export { type HeapProbe, WasmHeap } from "./sqljs-heap";

/**
 * Limits that SQLite itself enforces on every connection, as the platform sets them: the largest
 * string or blob (`SQLITE_LIMIT_LENGTH`: `randomblob(1e9)`, `replace()`/`printf()`/`||`/
 * `group_concat` blow-ups, `zeroblob` fail fast with `string or blob too big` instead of allocating)
 * and the trigger recursion depth. The other platform limits are emulated around the engine
 * (storage/sql/sql-limits.ts), where the storage's own statements stay unaffected by them.
 */
export const ENGINE_LIMITS = Object.freeze({ length: 2_200_000, triggerDepth: 10 });

/**
 * The sql.js release every workaround in this file was written and checked against (package.json
 * pins it exactly). The workarounds do not trust the number: each locates what it needs by value
 * and verifies it through the C API when a module loads ({@link checkBuild}).
 */
export const SUPPORTED_SQLJS_VERSION = "1.16.0";

/** @internal The one error a sql.js build that the workarounds do not fit gets (see {@link checkBuild}). */
export function unsupportedBuild(what: string): Error {
  return new Error(
    `actorstore could not locate ${what} in sql.js; this build of sql.js is not supported. Install sql.js ${SUPPORTED_SQLJS_VERSION}, the version actorstore pins.`,
  );
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
  return loadSqlJsEngineWithChunks(options);
}

/** @internal {@link loadSqlJsEngine} with files in chunks of `fileChunkBytes` (tests). */
export async function loadSqlJsEngineWithChunks(
  options: SqlJsLoadOptions,
  fileChunkBytes?: number,
): Promise<SqlEngineFactory> {
  const custom = options.locateFile !== undefined || options.wasmBinary !== undefined;
  // Where sql.js looked for its WASM file, for the error when it cannot load it. sql.js calls
  // locateFile(file, prefix) once, and without one uses prefix + file: the same, recorded.
  let located: { file: string; url: string } | undefined;
  const locate = options.locateFile as ((file: string, prefix: string) => string) | undefined;
  const config: Parameters<typeof initSqlJs>[0] & { useOldExtensionFunctions: boolean } = {
    // sql.js otherwise registers its legacy extension functions on every connection, which
    // replace SQLite's own math functions (`log(100)` 4.6 instead of the platform's 2).
    useOldExtensionFunctions: false,
    locateFile: (file: string, prefix: string) => {
      const url = locate === undefined ? prefix + file : locate(file, prefix);
      located = { file, url: String(url) };
      return url;
    },
    ...(options.wasmBinary ? { wasmBinary: options.wasmBinary as ArrayBuffer } : {}),
  };
  const load = () => {
    const abort = catchSqlJsAbort(config);
    return initSqlJs(config).then(
      (sql) => {
        abort.release();
        return sql;
      },
      (cause: unknown) => {
        // Without an abort there is no dropped rejection to wait for.
        if (!abort.aborted()) abort.release();
        throw wasmLoadError(cause, options.wasmBinary === undefined ? (located ?? "unknown") : "wasmBinary");
      },
    );
  };
  const sql = custom ? await load() : await (modulePromise ??= load());
  const module = checkBuild(sql);
  return SqlJsEngine.factory(module, options.maxDatabaseSize ?? DEFAULT_MAX_DATABASE_SIZE, fileChunkBytes);
}

let modulePromise: Promise<SqlJsStatic> | undefined;

/** The part of Node's `process` that {@link catchSqlJsAbort} uses, where there is one. */
type RejectionEvents = {
  on(event: "unhandledRejection", listener: (reason: unknown) => void): unknown;
  off(event: "unhandledRejection", listener: (reason: unknown) => void): unknown;
  listenerCount(event: "unhandledRejection"): number;
};
/** The part of a browser's global scope that {@link catchSqlJsAbort} uses. */
type RejectionTarget = {
  addEventListener(
    type: "unhandledrejection",
    listener: (event: { reason: unknown; preventDefault(): void }) => void,
  ): void;
  removeEventListener(
    type: "unhandledrejection",
    listener: (event: { reason: unknown; preventDefault(): void }) => void,
  ): void;
};

/**
 * When sql.js cannot load its WASM file, it rejects the promise `initSqlJs` returned (which the
 * caller gets, as {@link wasmLoadError}) and also throws the same failure, as a
 * `RuntimeError: Aborted(<cause>)`, out of an async function whose promise nobody holds: an
 * unhandled rejection, which ends a Node process by default (a server whose caller caught the
 * error died of it) and is reported as an uncaught error in a page. sql.js also prints the cause
 * twice to `console.error`. This hooks the load: it records the cause sql.js aborts with
 * (`onAbort`), keeps those two lines off the console (`printErr`; other lines are printed as
 * before), and takes that one rejection (recognised by its message) off the runtime's
 * unhandled-rejection report, Node's `unhandledRejection` or the page's `unhandledrejection`,
 * until it has been seen. Any other unhandled rejection meanwhile is left as it was: in Node, when
 * no other listener is there to take it, it is thrown again, as Node would have.
 */
function catchSqlJsAbort(config: { onAbort?: (cause: unknown) => void; printErr?: (text: string) => void }): {
  release(): void;
  aborted(): boolean;
} {
  let aborted: string | undefined;
  const host = globalThis as { process?: Partial<RejectionEvents> } & Partial<RejectionTarget>;
  const node = host.process;
  const isOurs = (reason: unknown) =>
    aborted !== undefined &&
    reason instanceof Error &&
    reason.name === "RuntimeError" &&
    reason.message.startsWith(`Aborted(${aborted})`);
  let release = () => {};
  if (typeof node?.on === "function" && typeof node.off === "function" && typeof node.listenerCount === "function") {
    const events = node as RejectionEvents;
    const listener = (reason: unknown) => {
      if (isOurs(reason)) {
        release();
        return;
      }
      if (events.listenerCount("unhandledRejection") === 1) throw reason;
    };
    events.on("unhandledRejection", listener);
    release = () => events.off("unhandledRejection", listener);
  } else if (typeof host.addEventListener === "function" && typeof host.removeEventListener === "function") {
    const target = host as RejectionTarget;
    const listener = (event: { reason: unknown; preventDefault(): void }) => {
      if (!isOurs(event.reason)) return;
      event.preventDefault();
      release();
    };
    target.addEventListener("unhandledrejection", listener);
    release = () => target.removeEventListener("unhandledrejection", listener);
  }
  const print = config.printErr ?? ((text: string) => console.error(text));
  config.onAbort = (cause: unknown) => {
    aborted = String(cause);
  };
  config.printErr = (text: string) => {
    // The cause is in the error the caller gets; these two lines only repeat it.
    if (aborted === undefined && text.startsWith("failed to asynchronously prepare wasm: ")) return;
    if (aborted !== undefined && text === `Aborted(${aborted})`) return;
    print(text);
  };
  return { release: () => release(), aborted: () => aborted !== undefined };
}

/**
 * The error of a sql.js module that did not load: sql.js's own (a bare "both async and sync
 * fetching of the wasm failed") names neither the file nor the fix. The URL is shown without its
 * query and fragment, which may carry a token.
 */
function wasmLoadError(
  cause: unknown,
  from: { file: string; url: string } | "wasmBinary" | "unknown",
): ActorStoreError {
  const why = cause instanceof Error ? cause.message : String(cause);
  const kept = "sql.js keeps this failure until the page is reloaded (or the process restarted).";
  if (from === "wasmBinary") {
    return new ActorStoreError(
      "ERR_INVALID_OPTION",
      `sql.js could not load the WebAssembly module given as sqlJs.wasmBinary (${why}). Pass the bytes of the file sql.js ${SUPPORTED_SQLJS_VERSION} ships (node_modules/sql.js/dist/sql-wasm.wasm, or sql-wasm-browser.wasm for its browser build), or leave wasmBinary out to have sql.js load it. ${kept}`,
      { cause },
    );
  }
  const where = from === "unknown" ? "" : ` from "${from.url.replace(/[?#].*$/s, "")}"`;
  const file = from === "unknown" ? "sql-wasm.wasm (sql-wasm-browser.wasm for its browser build)" : from.file;
  return new ActorStoreError(
    "ERR_INVALID_OPTION",
    `sql.js could not load its WebAssembly file${where} (${why}). Serve node_modules/sql.js/dist/${file} and point the sqlJs.locateFile option at it (for example sqlJs: { locateFile: (file) => \`/assets/\${file}\` }), or pass its bytes as sqlJs.wasmBinary. ${kept}`,
    { cause },
  );
}

// ------------------------------------------------------------------ the module, as the engine uses it

/** A loaded, checked sql.js module: everything the engine needs beyond sql.js's public API. */
export interface SqlJsModule {
  /** The raw C exports. */
  readonly raw: RawSqlite;
  /** The module's heap. */
  readonly heap: WasmHeap;
  /** Where a statement keeps its `sqlite3_stmt_status` counters (see {@link locateStepCounters}). */
  readonly counterOffset: number;
  /** Where a statement keeps its program, and the opcode numbers (see {@link probeProgramLayout}). */
  readonly programLayout: ProgramLayout;
  /** Opens a database (from the bytes of a SQLite file) with {@link ENGINE_LIMITS} set. */
  openDatabase(bytes?: Uint8Array): { db: Database; ptr: number };
  /**
   * Opens a database as {@link SqlJsModule.openDatabase} does, offering `file` as the storage of
   * its file (sqljs-paged-file.ts); `paged` says whether the database uses it.
   */
  openPagedDatabase(
    bytes: Uint8Array | undefined,
    file: PagedFile,
    use?: ImageUse,
  ): { db: Database; ptr: number; paged: boolean };
  /** The raw pointer of a sql.js statement. */
  statementPointer(stmt: Statement): number;
  /** Registers a scalar function on the connection `dbPtr` (UTF-8, not deterministic). */
  registerFunction(dbPtr: number, name: string, arity: number, impl: RawFunction, directOnly?: boolean): void;
  /** Forgets every function registered on `dbPtr` (call when it closes). */
  forgetFunctions(dbPtr: number): void;
  /**
   * `changes()`, `total_changes()` and `last_insert_rowid()` of connection `dbPtr`, read live,
   * `reset()`, which sets all three to 0 (as on a connection just opened), `setChanges()`, which
   * puts back what `changes()` answered, and `set()`, which puts back all three.
   */
  connectionCounters(dbPtr: number): {
    changes(): bigint;
    total_changes(): bigint;
    last_insert_rowid(): bigint;
    reset(): void;
    setChanges(value: bigint): void;
    /** Sets all three (`keepConnectionCounters`). */
    set(changes: bigint, totalChanges: bigint, lastInsertRowid: bigint): void;
  };
  /**
   * Whether every connection of this module opens with sql.js's legacy extension functions (the
   * module was initialized before actorstore loaded it, without `useOldExtensionFunctions: false`):
   * probed once, at load ({@link probeLegacyFunctions}).
   */
  readonly legacyByDefault: boolean;
  /**
   * Registers sql.js's legacy extension functions on connection `dbPtr` (they replace SQLite's own
   * math functions; nothing removes them again).
   */
  registerLegacyFunctions(dbPtr: number): void;
  /**
   * Drops sql.js's "legacy function … is deprecated" console warnings until the returned release
   * is called (held while a connection that {@link SqlJsModule.registerLegacyFunctions} gave them
   * is open).
   */
  quietLegacyWarnings(): () => void;
  /** Sets `sqlite3.nFpDigit` of connection `dbPtr` (see {@link locateFpDigits}). */
  setRealTextDigits(dbPtr: number, digits: number): void;
  /** `sqlite3_step` with SQLite's 'now' pinned to `nowMs`. */
  stepAt(ptr: number, nowMs: number): number;
  /** Runs `fn` with SQLite's 'now' pinned to `nowMs`. */
  withNow<T>(nowMs: number, fn: () => T): T;
}

/**
 * The platform's runtime switches its database to WAL mode right after opening it, and a
 * connection's first read in WAL mode counts as seeing a change: its `PRAGMA data_version` starts
 * at 2 where a rollback-journal connection starts at 1. An in-memory file has no shared memory for
 * WAL, so the connection takes that one step in exclusive WAL mode and leaves WAL for a journal in
 * memory: `data_version` then answers as on the platform, and the file's bytes are unchanged (a
 * fresh database gets its header page, which its first table writes anyway; leaving WAL sets the
 * header's format bytes back).
 *
 * The connection stays in exclusive locking mode with its journal in memory. Durability comes from
 * actorstore's own commit log, not from SQLite's journal, and no other connection ever opens this
 * in-memory file. With the default modes, every read asks Emscripten's file system about a hot
 * journal and every write transaction creates and deletes one: measured 30-40 % of a point read.
 * An exclusive lock and a journal in memory keep rollback and savepoints working without any of
 * that. (Going through the rollback journal and normal locking first, as this once did, ended in
 * the same state, `data_version` and bytes, and cost more than the rest of an open.)
 */
const AS_THE_PLATFORM_OPENS = [
  "PRAGMA locking_mode = EXCLUSIVE",
  "PRAGMA journal_mode = WAL",
  "SELECT 1 FROM sqlite_schema LIMIT 0",
  "PRAGMA journal_mode = MEMORY",
].join(";\n");

const checked = new WeakMap<SqlJsStatic, SqlJsModule>();

/**
 * The one version check: every workaround's probe runs once per loaded module, each verified
 * through the C API, and any mismatch fails here, at load, with one message naming the supported
 * release ({@link unsupportedBuild}) instead of misbehaving later.
 */
function checkBuild(sql: SqlJsStatic): SqlJsModule {
  const known = checked.get(sql);
  if (known !== undefined) return known;
  const raw = sql as unknown as RawSqlite;
  const keys = locatePointerKeys(sql);
  const heap = new WasmHeap(raw, unsupportedBuild);
  const counterOffset = locateStepCounters(sql, keys, heap);
  const programLayout = probeProgramLayout(sql, keys, heap, counterOffset);
  const limitsOffset = locateLimits(sql, keys, heap);
  const fpDigitsOffset = locateFpDigits(sql, keys, heap);
  const counters = connectionCounterOffsets(sql, keys, heap);
  const functions = new SharedFunctions(raw, heap, ENGINE_LIMITS.length);
  functions.userDataAt = locateUserData(sql, keys, heap, functions);
  const legacyByDefault = probeLegacyFunctions(sql);
  const module: SqlJsModule = {
    raw,
    heap,
    counterOffset,
    programLayout,
    legacyByDefault,
    registerLegacyFunctions(dbPtr) {
      const rc = (raw as unknown as LegacyExports)._RegisterExtensionFunctions(dbPtr);
      if (rc !== 0) throw unsupportedBuild("sql.js's legacy extension functions");
    },
    quietLegacyWarnings,
    openDatabase(bytes) {
      const db = new sql.Database(bytes);
      const ptr = handlePointer(db, keys.database);
      heap.setU32(ptr + limitsOffset + 4 * SQLITE_LIMIT_LENGTH, ENGINE_LIMITS.length);
      heap.setU32(ptr + limitsOffset + 4 * SQLITE_LIMIT_TRIGGER_DEPTH, ENGINE_LIMITS.triggerDepth);
      heap.bytes[ptr + fpDigitsOffset] = PLATFORM_REAL_TEXT_DIGITS;
      db.exec(AS_THE_PLATFORM_OPENS);
      return { db, ptr };
    },
    openPagedDatabase: (bytes) => ({ ...module.openDatabase(bytes), paged: false }),
    statementPointer: (stmt) => handlePointer(stmt, keys.statement),
    registerFunction: (db, name, arity, impl, directOnly) => functions.register(db, name, arity, impl, directOnly),
    forgetFunctions: (db) => functions.forget(db),
    setRealTextDigits: (db, digits) => {
      heap.bytes[db + fpDigitsOffset] = digits;
    },
    connectionCounters: (db) => {
      const set = (changes: bigint, totalChanges: bigint, lastInsertRowid: bigint): void => {
        heap.setI64(db + counters.changes, changes);
        heap.setI64(db + counters.totalChanges, totalChanges);
        heap.setI64(db + counters.lastRowid, lastInsertRowid);
      };
      return {
        changes: () => heap.i64(db + counters.changes),
        total_changes: () => heap.i64(db + counters.totalChanges),
        last_insert_rowid: () => heap.i64(db + counters.lastRowid),
        reset: () => set(0n, 0n, 0n),
        setChanges: (value) => heap.setI64(db + counters.changes, value),
        set,
      };
    },
    stepAt(ptr, nowMs) {
      const outer = pinNow(nowMs);
      try {
        return raw._sqlite3_step(ptr);
      } finally {
        unpinNow(outer);
      }
    },
    withNow(nowMs, fn) {
      const outer = pinNow(nowMs);
      try {
        return fn();
      } finally {
        unpinNow(outer);
      }
    },
  };
  // New databases open from this image on a paged file; without it, on MEMFS's own storage.
  const freshImage = probePagedFiles((bytes) => module.openDatabase(bytes).db);
  module.openPagedDatabase = (bytes, file, use) => {
    if (freshImage === undefined) return { ...module.openDatabase(bytes), paged: false };
    // The fresh image is shared by every new database: never taken.
    const { opened, paged } =
      bytes === undefined
        ? openOnPagedFile(freshImage, file, (seed) => module.openDatabase(seed))
        : openOnPagedFile(bytes, file, (seed) => module.openDatabase(seed), use);
    return { ...opened, paged };
  };
  checked.set(sql, module);
  return module;
}

// ------------------------------------------------------------------ legacy extension functions

/** The C export of sql.js that registers its legacy extension functions on one connection. */
interface LegacyExports {
  _RegisterExtensionFunctions(dbPtr: number): number;
}

/**
 * Whether a new connection of `sql` has sql.js's legacy extension functions: `median()` compiles
 * only with them (SQLite has no such function). Compiled, never run, so sql.js warns nothing.
 * sql.js initializes one module per process and the first `initSqlJs` call's options win, so a
 * module some other code initialized first with the defaults has them on every connection.
 */
function probeLegacyFunctions(sql: SqlJsStatic): boolean {
  if (typeof (sql as unknown as Partial<LegacyExports>)._RegisterExtensionFunctions !== "function")
    throw unsupportedBuild("sql.js's legacy extension functions");
  const db = new sql.Database();
  try {
    db.prepare("SELECT median(1)").free();
    return true;
  } catch {
    return false;
  } finally {
    db.close();
  }
}

// ------------------------------------------------------------------ pointer probing

interface PointerKeys {
  database: string;
  statement: string;
}

/** The pointer a sql.js handle keeps under `key` (a minified property name, {@link PointerKeys}). */
function handlePointer(handle: Database | Statement | undefined, key: string): number {
  return (handle as unknown as Record<string, number>)[key] as number;
}

/**
 * Finds the property names under which sql.js keeps the raw connection and statement pointers.
 * Each candidate is verified through the C API (`sqlite3_sql` must give back the statement's text,
 * `sqlite3_errmsg` must answer for the connection).
 */
function locatePointerKeys(sql: SqlJsStatic): PointerKeys {
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
        throw unsupportedBuild("the raw connection and statement pointers");
      }
      return { database: databaseKey, statement: statementKey };
    } finally {
      stmt.free();
    }
  } finally {
    db.close();
  }
}

// ------------------------------------------------------------------ offsets into SQLite's structs

/** Indexes into `sqlite3.aLimit` (SQLite's `SQLITE_LIMIT_*`). */
const SQLITE_LIMIT_LENGTH = 0;
const SQLITE_LIMIT_TRIGGER_DEPTH = 10;
/** `Vdbe.aCounter[SQLITE_STMTSTATUS_RUN]`: how often the statement ran. */
const STMTSTATUS_RUN = 6;

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
      const ptr = handlePointer(stmt, keys.statement);
      const zSql = raw._sqlite3_sql(ptr);
      let offset = -1;
      for (let at = 36; at < 1024 && offset < 0; at += 4) if (heap.u32(ptr + at) === zSql) offset = at - 36;
      while (stmt.step()) {
        // a full scan: 7 rows
      }
      const counter = (index: number) => heap.u32(ptr + offset + 4 * index);
      if (offset < 0 || counter(STMTSTATUS_FULLSCAN_STEP) !== 6 || counter(STMTSTATUS_RUN) !== 1) {
        throw unsupportedBuild("SQLite's statement counters");
      }
      return offset;
    } finally {
      stmt.free();
    }
  } finally {
    db.close();
  }
}

/** A statement's program layout and the opcode numbers (sqljs-program-layout.ts), on a scratch connection. */
function probeProgramLayout(sql: SqlJsStatic, keys: PointerKeys, heap: WasmHeap, counterOffset: number): ProgramLayout {
  const db = new sql.Database();
  const statements: Statement[] = [];
  try {
    db.exec(LAYOUT_PROBE_SCHEMA);
    const layout = locateProgramLayout(sql as unknown as RawSqlite, heap, counterOffset, {
      compile: (text) => {
        statements.push(db.prepare(text));
        return handlePointer(statements.at(-1), keys.statement);
      },
      explain: (text) => (db.exec(`EXPLAIN ${text}`)[0]?.values ?? []) as (string | number | null)[][],
      exec: (text) => void db.exec(text),
      database: handlePointer(db, keys.database),
    });
    if (layout === undefined) throw unsupportedBuild("SQLite's compiled programs");
    return layout;
  } finally {
    for (const stmt of statements) stmt.free();
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
    const ptr = handlePointer(db, keys.database);
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
    throw unsupportedBuild("SQLite's limits");
  } finally {
    db.close();
  }
}

/**
 * Where `sqlite3.nFpDigit` sits, as a byte offset from the connection pointer: how many significant
 * digits SQLite writes a REAL with when it turns it into text (a TEXT column's affinity, CAST,
 * `||`, `printf('%s')`). sql.js's SQLite writes 17 and the shortest form that reads back
 * (`0.30000000000000004`); the platform's older SQLite writes 15 (`0.3`). Found as the byte that
 * holds 17 and, set to 15, turns `CAST(0.1 + 0.2 AS TEXT)` into `'0.3'`.
 */
function locateFpDigits(sql: SqlJsStatic, keys: PointerKeys, heap: WasmHeap): number {
  const db = new sql.Database();
  try {
    const ptr = handlePointer(db, keys.database);
    const text = () => db.exec("SELECT CAST(0.1 + 0.2 AS TEXT)")[0]?.values[0]?.[0];
    if (text() !== "0.30000000000000004") throw unsupportedBuild("SQLite's REAL formatting");
    for (let at = 0; at < 1024; at++) {
      if (heap.bytes[ptr + at] !== SQLJS_REAL_TEXT_DIGITS) continue;
      heap.bytes[ptr + at] = PLATFORM_REAL_TEXT_DIGITS;
      if (text() === "0.3") return at;
      heap.bytes[ptr + at] = SQLJS_REAL_TEXT_DIGITS;
    }
    throw unsupportedBuild("SQLite's REAL formatting");
  } finally {
    db.close();
  }
}

/** Where the `sqlite3` connection struct keeps its counters, as byte offsets from its pointer. */
interface ConnectionCounterOffsets {
  lastRowid: number;
  changes: number;
  totalChanges: number;
}

/**
 * sql.js exports neither `sqlite3_last_insert_rowid` nor `sqlite3_total_changes`, and the SQL
 * functions that read them cannot be called once they are replaced (which replay needs). So the
 * values are read from the connection struct (`sqlite3.lastRowid`, `nChange`, `nTotalChange`, all
 * 64-bit), whose offsets are found by value on a probe connection and then checked against the
 * built-in functions after further writes.
 */
function connectionCounterOffsets(sql: SqlJsStatic, keys: PointerKeys, heap: WasmHeap): ConnectionCounterOffsets {
  const db = new sql.Database();
  try {
    const ptr = handlePointer(db, keys.database);
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
    // Written back as zeros (a new session's counters), the built-ins read them.
    for (const offset of ok ? [found.lastRowid, found.changes, found.totalChanges] : []) heap.setI64(ptr + offset, 0n);
    if (!ok || builtins().some((v) => v !== 0n)) throw unsupportedBuild("SQLite's connection counters");
    return found;
  } finally {
    db.close();
  }
}

/**
 * Where a function call finds its user data (`sqlite3_user_data`, which sql.js does not export):
 * `sqlite3_context.pFunc->pUserData`, as byte offsets (context to FuncDef pointer, FuncDef to user
 * data). Found by registering the trampoline with two known values and reading them back in calls.
 */
function locateUserData(
  sql: SqlJsStatic,
  keys: PointerKeys,
  heap: WasmHeap,
  functions: SharedFunctions,
): readonly [number, number] {
  const MAGIC = [0x5a17_c0de, 0x0ac7_0125];
  const db = new sql.Database();
  try {
    const ptr = handlePointer(db, keys.database);
    const seen: number[][] = [];
    functions.onProbe = (context) => {
      const candidates: number[] = [];
      for (let a = 0; a <= 16; a += 4) {
        const fd = heap.u32(context + a);
        for (let b = 0; b <= 16; b += 4) candidates.push(fd === 0 ? -1 : heap.u32(fd + b));
      }
      seen.push(candidates);
    };
    for (const [i, magic] of MAGIC.entries()) functions.registerRaw(ptr, `actorstore_probe_${i}`, 0, magic);
    db.exec("SELECT actorstore_probe_0(), actorstore_probe_1()");
    functions.onProbe = undefined;
    const index = seen[0]?.findIndex((v, i) => v === MAGIC[0] && seen[1]?.[i] === MAGIC[1]) ?? -1;
    if (index < 0) throw unsupportedBuild("a function call's user data");
    return [Math.floor(index / 5) * 4, (index % 5) * 4];
  } finally {
    db.close();
  }
}

// ------------------------------------------------------------------ pinning 'now'

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
