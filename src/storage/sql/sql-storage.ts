/**
 * `storage.sql`: the platform's SQL API over the storage core's engine.
 *
 * The facade owns compilation (a statement cache keyed by query text), the restriction checks
 * ({@link SqlAccess} and the row-counting facts, cached per statement and schema version), the
 * limits and the cursors. The
 * core ({@link SqlHost}) owns the engine, the implicit transaction, the commit log and time:
 * before anything that may write runs, the facade calls `host.beforeWrite`, exactly once per
 * statement. The facade never issues BEGIN/COMMIT itself.
 */
import { EngineError, type EngineStatement, type EngineValue, type SqlEngine } from "../../engine/engine";
import { ActorStoreError } from "../../errors";
import { likePlatformPrototype } from "../../util/platform-prototype";
import { refusalBeforeCompileError } from "./authorizer-order";
import {
  type CursorSource,
  releaseWhenCollected,
  SqlStorageCursor,
  type SqlStorageRow,
  type SqlStorageValue,
} from "./cursor";
import { hideInternalStatistics, showInternalStatistics } from "./internal-statistics";
import { guardPragmaArguments } from "./pragma-arguments";
import { isParseError, pragmaParseProbe } from "./pragma-syntax";
import { countingVerdict } from "./row-counting";
import { type RowBuilder, rowBuilderFor } from "./row-objects";
import { type AccessVerdict, checkBeforeCompile, SqlAccess } from "./sql-access";
import { toEngineValuesInPlace } from "./sql-bindings";
import { SqlCatalog } from "./sql-catalog";
import { type ErrorContext, isCriticalEngineError, translateEngineError } from "./sql-errors";
import type { SqlHost, WriteDescription } from "./sql-host";
import {
  checkLikePattern,
  checkResultColumns,
  checkSqlLength,
  checkStatementText,
  checkValueSize,
  DEFAULT_SQL_LIMITS,
  type SqlLimits,
} from "./sql-limits";
import { SqlStorageStatement } from "./sql-statement";
import { tokenize } from "./sql-tokenizer";
import { addColumnTableErrorFirst, sqliteErrorBeforeAuthorizer } from "./sqlite-checks-first";
import {
  type CachedStatement,
  COMPILED_CACHE_MAX_COST,
  NOT_COMPILED,
  STATEMENT_CACHE_MAX_BYTES,
  StatementCache,
  uncompiledStatement,
  watchReader,
} from "./statement-cache";

/** Options for {@link SqlStorage}. */
export interface SqlStorageOptions {
  /** Overrides of the platform's limits (for tests; the defaults are the platform's). */
  limits?: Partial<SqlLimits>;
  /** Bound on the cached SQL text, in UTF-8 bytes (default 1 MiB, as on the platform). */
  statementCacheSize?: number;
  /**
   * Bound on the estimated memory of the cached statements kept compiled (statement-cache.ts
   * `compiledCost`; default `COMPILED_CACHE_MAX_COST`, 16 MiB). Beyond it the least recently used
   * are compiled again when they next run; which texts are cached stays the platform's.
   */
  compiledCacheCost?: number;
  /**
   * `false` on storage without SQL (`backend: "kv"`): every call then throws an
   * `ERR_BACKEND_UNSUPPORTED` error that names the option to change. Default `true`.
   */
  enabled?: boolean;
}

/** Everything that belongs to one engine (one `host.generation`). */
interface EngineState {
  readonly generation: number;
  readonly engine: SqlEngine;
  readonly catalog: SqlCatalog;
  readonly cache: StatementCache;
  /** Bumped by every schema-changing statement and by host epoch / cookie changes. */
  schemaVersion: number;
  /** The host's epoch (or SQLite's schema cookie) last seen. */
  epoch: number;
  cookieStatement: EngineStatement | undefined;
  /**
   * Queries cached before `deleteAll()` replaced the engine. workerd keeps its cached statements
   * across the reset and compiles each again (a statement before the last on its own), so their
   * next run leaves none at a row; compiled here anew, they get no {@link CachedStatement.leftAtRow}.
   */
  readonly cachedBeforeReset: Set<string>;
}

const MULTI_PARAMETERS_MESSAGE =
  "When executing multiple SQL statements in a single call, only the last statement can have parameters.";

/** workerd's error for a statement it left unreset at a row (see {@link CachedStatement.leftAtRow}). */
const STATEMENT_BUSY_MESSAGE = "A SQL prepared statement can only be executed once at a time.";

/**
 * The SQL API of one object's storage (`storage.sql`), behaving like the platform's `SqlStorage`.
 *
 * @example
 * ```ts
 * sql.exec("CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY, name TEXT)");
 * sql.exec("INSERT INTO users (name) VALUES (?)", "Ada");
 * const { n } = sql.exec<{ n: number }>("SELECT count(*) AS n FROM users").one();
 * ```
 */
export class SqlStorage {
  static {
    // sql.Cursor and sql.Statement live on the prototype, as the platform's do.
    for (const [name, value] of [
      ["Cursor", SqlStorageCursor],
      ["Statement", SqlStorageStatement],
    ] as const) {
      Object.defineProperty(this.prototype, name, { value, writable: true, configurable: true });
    }
    likePlatformPrototype(this.prototype, "SqlStorage");
  }

  /** The cursor class (`sql.Cursor`), as on the platform. */
  static readonly Cursor = SqlStorageCursor;
  /** The prepared-statement class (`sql.Statement`), as on the platform. */
  static readonly Statement = SqlStorageStatement;
  /** The cursor class, also reachable from an instance as on the platform. */
  declare readonly Cursor: typeof SqlStorageCursor;
  /** The prepared-statement class, also reachable from an instance. */
  declare readonly Statement: typeof SqlStorageStatement;

  readonly #host: SqlHost;
  readonly #limits: SqlLimits;
  readonly #access: SqlAccess;
  readonly #cacheSize: number;
  readonly #compiledCost: number;
  readonly #enabled: boolean;
  #state: EngineState | undefined;

  constructor(host: SqlHost, options: SqlStorageOptions = {}) {
    this.#host = host;
    this.#limits = Object.freeze({ ...DEFAULT_SQL_LIMITS, ...options.limits });
    this.#access = new SqlAccess(this.#limits);
    this.#cacheSize = options.statementCacheSize ?? STATEMENT_CACHE_MAX_BYTES;
    this.#compiledCost = options.compiledCacheCost ?? COMPILED_CACHE_MAX_COST;
    this.#enabled = options.enabled ?? true;
  }

  /**
   * Runs `query` (one or more statements; only the last may take `bindings`) and returns a cursor
   * over the last statement's rows. The first step runs now: a write is applied even if the
   * cursor is never read.
   */
  exec<T extends Record<string, SqlStorageValue> = SqlStorageRow>(
    query: string,
    ...bindings: unknown[]
  ): SqlStorageCursor<T> {
    if (typeof query !== "string") {
      // The platform's binding refuses only a missing query; any other value becomes its string
      // (`new String(…)`, a number, `undefined`…), and a Symbol throws as in a template literal.
      // biome-ignore lint/complexity/noArguments: an explicit `undefined` is converted, a missing query is refused
      if (arguments.length === 0) {
        throw new TypeError("Failed to execute 'exec' on 'SqlStorage': parameter 1 is not of type 'JsString'.");
      }
      query = `${query}`;
    }
    // `bindings` is this call's own array (rest parameters): convert it in place.
    const values = toEngineValuesInPlace(bindings);
    this.#assertEnabled("sql.exec()");
    this.#host.assertUsable();
    this.#host.beforeStatement?.();
    const state = this.#current();
    checkSqlLength(query, this.#limits);
    const cached = state.cache.get(query);
    if (cached !== undefined) {
      const statements = cached.statements;
      const last = statements.length - 1;
      // While a cursor reads the last statement, workerd compiles the whole query anew as a one-off
      // (none of its cached statements runs); otherwise a statement left at a row fails, once.
      const oneOff = (statements[last] as CachedStatement).busy;
      for (let i = 0; i < last; i++) {
        const entry = statements[i] as CachedStatement;
        if (entry.leftAtRow && !oneOff) {
          entry.leftAtRow = false;
          // workerd resets it as it fails: from here on nothing holds its table.
          entry.statement.reset();
          throw new Error(STATEMENT_BUSY_MESSAGE);
        }
        this.#runPrelude(state, entry);
      }
      return this.#open<T>(state, statements[last] as CachedStatement, values);
    }
    return this.#compileAndOpen<T>(state, query, values);
  }

  /** The database size in bytes: `(page_count - freelist_count) * page_size`. */
  get databaseSize(): number {
    this.#assertEnabled("sql.databaseSize");
    this.#host.assertUsable();
    this.#host.beforeStatement?.();
    const { engine } = this.#current();
    const [row] = engine.query(
      "SELECT (SELECT * FROM pragma_page_count) - (SELECT * FROM pragma_freelist_count), (SELECT * FROM pragma_page_size)",
    );
    // A database the platform has opened always has its first page; sql.js allocates it lazily.
    return Math.max(1, Number(row?.[0] ?? 0)) * Number(row?.[1] ?? 4096);
  }

  #assertEnabled(what: string): void {
    if (!this.#enabled) {
      throw new ActorStoreError(
        "ERR_BACKEND_UNSUPPORTED",
        `${what} is only available on the SQLite backend. Open the storage with ObjectStorage.open({ backend: "sqlite" }).`,
      );
    }
  }

  /** The state of the current engine, rebuilt when the host replaced it (deleteAll, reset). */
  #current(): EngineState {
    const host = this.#host;
    let state = this.#state;
    if (state === undefined || state.generation !== host.generation) {
      const cachedBeforeReset = new Set(state?.cache.queries());
      state?.cache.clear();
      state = {
        cachedBeforeReset,
        generation: host.generation,
        engine: host.engine,
        catalog: new SqlCatalog(host.engine),
        cache: new StatementCache(this.#cacheSize, this.#compiledCost),
        schemaVersion: 0,
        epoch: Number.NaN,
        cookieStatement: undefined,
      };
      this.#state = state;
    }
    const epoch = host.schemaEpoch ?? this.#schemaCookie(state);
    if (epoch !== state.epoch) {
      state.epoch = epoch;
      this.#schemaChanged(state);
    }
    return state;
  }

  /** SQLite's schema cookie, for hosts that do not report rollbacks through `schemaEpoch`. */
  #schemaCookie(state: EngineState): number {
    if (state.cookieStatement === undefined || state.cookieStatement.freed) {
      state.cookieStatement = state.engine.prepare("PRAGMA schema_version");
    }
    const s = state.cookieStatement;
    try {
      return s.step() ? Number(s.row()[0]) : 0;
    } finally {
      s.reset();
    }
  }

  #schemaChanged(state: EngineState): void {
    state.schemaVersion++;
    state.catalog.invalidate();
  }

  /** First use of `query`: compile statement by statement, running all but the last. */
  #compileAndOpen<T extends Record<string, SqlStorageValue>>(
    state: EngineState,
    query: string,
    values: EngineValue[],
  ): SqlStorageCursor<T> {
    const compiled: CachedStatement[] = [];
    let cachedNow = false;
    let rest = query;
    try {
      for (;;) {
        const head = this.#prepareHead(state, rest);
        if (head.statement === null) throw new Error("SQL code did not contain a statement.");
        const entry: CachedStatement = {
          ...uncompiledStatement(head.statement.sql),
          statement: head.statement,
          columnNames: head.statement.columnNames(),
        };
        compiled.push(entry);
        // Parse-time checks (the guard's text limits) come before the result-set check, as in SQLite.
        this.#ensureVerdict(state, entry);
        checkResultColumns(entry.columnNames.length, this.#limits);
        // Like workerd: skip whitespace (not comments) after the statement; anything left is
        // another statement, and this one runs now.
        const tail = head.tail.replace(/^[ \t\n\r\v\f]+/, "");
        if (tail.length === 0) {
          state.cache.set(query, compiled);
          cachedNow = true;
          if (state.cachedBeforeReset.delete(query)) {
            for (const s of compiled) {
              s.leftAtRow = false;
              s.statement.reset();
            }
          }
          return this.#open<T>(state, entry, values);
        }
        if (head.statement.parameterCount() > 0) throw new Error(MULTI_PARAMETERS_MESSAGE);
        entry.leftAtRow = this.#runPrelude(state, entry, true);
        rest = tail;
      }
    } catch (e) {
      if (!cachedNow) for (const s of compiled) s.statement.free();
      throw e;
    }
  }

  #prepareHead(state: EngineState, sql: string): { statement: EngineStatement | null; tail: string } {
    // Before SQLite sees it: a refused PRAGMA would act while compiling.
    try {
      checkBeforeCompile(sql, state.catalog);
    } catch (refusal) {
      const first = sqliteErrorBeforeAuthorizer(state.engine, sql);
      if (first !== undefined) throw translateEngineError(first, errorContextFor(state, sql));
      throw parseErrorOfRefusedPragma(state, sql) ?? refusal;
    }
    try {
      const head = state.engine.prepareHead(sql);
      // Arguments of pragma_* calls that only have a value at run time are checked then.
      const guarded = head.statement === null ? undefined : guardPragmaArguments(head.statement.sql);
      if (guarded === undefined) return head;
      head.statement?.free();
      return { statement: state.engine.prepare(guarded), tail: head.tail };
    } catch (e) {
      // sql.js's own (much larger) limits may fire first; report the platform's limit instead.
      const first = sql.slice(0, firstStatementEnd(sql));
      checkStatementText(first, tokenize(first), state.catalog.functionNames, this.#limits);
      const context = errorContextFor(state, sql);
      // The platform's authorizer may have refused the statement before SQLite got this far.
      if (e instanceof EngineError) {
        const offsetOf = (error: EngineError) => {
          const translated = translateEngineError(error, context);
          const at = translated instanceof Error ? / at offset (\d+): /.exec(translated.message)?.[1] : undefined;
          return at === undefined ? undefined : Number(at);
        };
        const refusal = refusalBeforeCompileError(state.engine, state.catalog, sql, e, offsetOf);
        if (refusal !== undefined) throw refusal;
        throw translateEngineError(addColumnTableErrorFirst(state.engine, sql, e) ?? e, context);
      }
      throw translateEngineError(e, context);
    }
  }

  /**
   * (Re)decides the statement when the schema changed since it was decided. A statement compiled
   * before the change is compiled again first: SQLite would recompile it at its next step, but its
   * result columns (`SELECT *` after `ADD COLUMN`, after a rollback or a restore) must be known
   * before that, and a cursor still reading the old one keeps it (a busy entry runs as a copy).
   */
  #ensureVerdict(state: EngineState, entry: CachedStatement): AccessVerdict {
    if (entry.verdictVersion !== state.schemaVersion) {
      // A statement the cache keeps as text only (statement-cache.ts) has no verdict either.
      if ((entry.verdictVersion >= 0 && !entry.busy) || entry.statement === NOT_COMPILED) this.#recompile(state, entry);
      const { verdict, program } = this.#access.check(state.engine, state.catalog, entry.sql);
      entry.verdict = verdict;
      entry.counting = countingVerdict(program);
      entry.verdictVersion = state.schemaVersion;
    }
    return entry.verdict;
  }

  #recompile(state: EngineState, entry: CachedStatement): void {
    let fresh: EngineStatement;
    try {
      fresh = state.engine.prepare(entry.sql);
    } catch (e) {
      throw translateEngineError(e, errorContextFor(state, entry.sql));
    }
    entry.statement.free();
    entry.statement = fresh;
    entry.columnNames = fresh.columnNames();
    entry.source = undefined;
    checkResultColumns(entry.columnNames.length, this.#limits);
  }

  /** The host's decision about `entry`'s text, made at its first write (the text never changes). */
  #describeWrite(entry: CachedStatement): WriteDescription | undefined {
    return (entry.write ??= this.#host.describeWrite?.(entry.sql));
  }

  /**
   * Runs a statement that is not the last of its query: one step, rows discarded (as workerd).
   * Returns whether the step stopped at a row. When its query is being compiled (`compiling`), a
   * read that stopped at a row stays there, unreset, as workerd leaves it
   * ({@link CachedStatement.leftAtRow}): it holds its tables' B-trees open, so that `DROP TABLE`
   * of one fails with `database table is locked` until the query runs again. (A write is reset:
   * workerd's commit fails over one left running, see docs/sql.md.)
   */
  #runPrelude(state: EngineState, entry: CachedStatement, compiling = false): boolean {
    const verdict = this.#ensureVerdict(state, entry);
    const shown = verdict.writesStatistics && this.#showInternalStatistics(state, verdict, entry);
    // Still held at a row (a run of its query while its last statement is busy, which workerd
    // compiles anew): a one-off copy runs instead, and the held one keeps its place.
    const held = entry.leftAtRow;
    const statement = held ? this.#prepareCopy(state, entry) : entry.statement;
    const nowMs = verdict.mayWrite
      ? this.#host.beforeWrite(statement.sql, [], this.#describeWrite(entry))
      : verdict.usesTime
        ? this.#host.now()
        : undefined;
    let ran = false;
    let keep = false;
    try {
      statement.bind([], "real");
      const atRow = statement.step(nowMs);
      ran = true;
      keep = compiling && atRow && !verdict.mayWrite && !held;
      return atRow;
    } catch (e) {
      throw translateFailure(this.#host, e, errorContextFor(state, statement.sql));
    } finally {
      if (held) statement.free();
      else if (!keep) statement.reset();
      if (verdict.changesSchema) this.#schemaChanged(state);
      if (verdict.writesStatistics) this.#afterStatistics(state, shown, ran);
    }
  }

  /** A one-off copy of `entry`'s statement (judged already: the same text, the same schema). */
  #prepareCopy(state: EngineState, entry: CachedStatement): EngineStatement {
    try {
      return state.engine.prepare(entry.sql);
    } catch (e) {
      throw translateFailure(this.#host, e, errorContextFor(state, entry.sql));
    }
  }

  /**
   * ANALYZE (and `PRAGMA optimize`) count the rows of every table, internal ones included, into
   * `sqlite_stat1`, which user SQL may read. Before one runs, the internal row SQLite's choices
   * depend on is put back (internal-statistics.ts); after it, the internal rows are taken out
   * again. Each is a write of its own that the host logs like any other, so replay and restore see
   * the same statistics; none counts toward the statement's rows, or shows in `changes()`,
   * `total_changes()` or `last_insert_rowid()`.
   */
  #showInternalStatistics(state: EngineState, verdict: AccessVerdict, entry: CachedStatement): boolean {
    const reload = verdict.kind === "pragma";
    const write = this.#internalWrite(state);
    const shown = state.engine.keepConnectionCounters(() => showInternalStatistics(state.engine, write, reload));
    // The reload expires the compiled `PRAGMA optimize` (it decides what to analyze as it compiles):
    // compiled again before it runs (a busy entry runs a copy compiled after this anyway).
    if (shown && reload && !entry.busy) this.#recompile(state, entry);
    return shown;
  }

  /**
   * Takes the internal rows out after a statement that writes statistics ran (`ran`), or failed
   * (SQLite undid its writes then, not the row put back before it).
   */
  #afterStatistics(state: EngineState, shown: boolean, ran: boolean): void {
    const { engine } = state;
    const hide = () =>
      engine.keepConnectionCounters(() => hideInternalStatistics(engine, this.#internalWrite(state), shown));
    if (ran) {
      hide();
      return;
    }
    if (!shown) return;
    try {
      hide();
    } catch {
      // The statement's own error is the one to report; an object it broke keeps no write.
    }
  }

  /** Logs and runs a statement of the storage's own. */
  #internalWrite(state: EngineState): (sql: string) => void {
    return (sql) => {
      const nowMs = this.#host.beforeWrite(sql, []);
      state.engine.withNow(nowMs, () => state.engine.exec(sql));
    };
  }

  /** Binds and starts the last statement of a query; the cursor takes the first step. */
  #open<T extends Record<string, SqlStorageValue>>(
    state: EngineState,
    entry: CachedStatement,
    values: EngineValue[],
  ): SqlStorageCursor<T> {
    const verdict = this.#ensureVerdict(state, entry);
    if (!verdict.writesStatistics) return this.#openStatement(state, entry, verdict, values);
    const shown = this.#showInternalStatistics(state, verdict, entry);
    let opened = false;
    try {
      const cursor = this.#openStatement<T>(state, entry, verdict, values);
      opened = true;
      return cursor;
    } finally {
      this.#afterStatistics(state, shown, opened);
    }
  }

  /** {@link SqlStorage.#open} once the internal statistics are in place. */
  #openStatement<T extends Record<string, SqlStorageValue>>(
    state: EngineState,
    entry: CachedStatement,
    verdict: AccessVerdict,
    values: EngineValue[],
  ): SqlStorageCursor<T> {
    let source: CursorSource;
    let owner: CachedStatement | undefined;
    if (entry.busy) {
      // An earlier cursor over the same SQL is still reading: run a one-off copy, as workerd does.
      // If that cursor was dropped unfinished, the cached statement comes back once it is collected.
      watchReader(entry);
      const copy = state.engine.prepare(entry.sql);
      source = new StatementSource(this.#host, state, copy, copy.columnNames(), undefined, this.#limits);
    } else {
      owner = entry;
      source = entry.source ??= new StatementSource(
        this.#host,
        state,
        entry.statement,
        entry.columnNames,
        entry,
        this.#limits,
      );
    }
    const statement = source.statement;
    try {
      if (values.length !== statement.parameterCount()) {
        throw new Error("Wrong number of parameter bindings for SQL query.");
      }
      const limits = this.#limits;
      for (let i = 0; i < values.length; i++) checkValueSize(values[i], limits);
      const likes = verdict.likeParameters;
      for (let i = 0; i < likes.length; i++) checkLikePattern(values[(likes[i] as number) - 1], limits);
    } catch (e) {
      if (owner === undefined) statement.free();
      throw e;
    }
    const host = this.#host;
    const nowMs = verdict.mayWrite
      ? host.beforeWrite(statement.sql, values, this.#describeWrite(entry))
      : verdict.usesTime
        ? host.now()
        : undefined;
    try {
      try {
        statement.bind(values, "real");
      } catch (e) {
        source.release();
        throw source.translate(e);
      }
      if (owner !== undefined) owner.busy = true;
      const cursor = new SqlStorageCursor<T>(source, verdict, entry.counting, nowMs);
      // Still reading (its statement is not back yet): the cache holds the cursor until the
      // statement is wanted elsewhere; a one-off copy goes back when its cursor is collected.
      if (owner === undefined) releaseWhenCollected(cursor);
      else if (owner.busy) owner.reader = cursor;
      return cursor;
    } finally {
      if (verdict.changesSchema) this.#schemaChanged(state);
    }
  }
}

/**
 * The platform's error for a failed statement. A critical error breaks the object first (see
 * `SqlHost.onCriticalError`): SQLite may have rolled the implicit transaction back on its own.
 */
function translateFailure(host: SqlHost, error: unknown, context: ErrorContext): unknown {
  const translated = translateEngineError(error, context);
  if (isCriticalEngineError(error) && translated instanceof Error) host.onCriticalError?.(translated);
  return translated;
}

/**
 * SQLite's parse error for `sql` when its first statement is a refused PRAGMA that does not parse,
 * as the platform reports it (its authorizer never sees the pragma); else `undefined`. Found by
 * compiling a probe that cannot act (pragma-syntax.ts), never the refused text.
 */
function parseErrorOfRefusedPragma(state: EngineState, sql: string): unknown {
  const probe = pragmaParseProbe(sql);
  if (probe === undefined) return undefined;
  try {
    state.engine.prepare(probe).free();
    return undefined;
  } catch (e) {
    if (!(e instanceof EngineError) || !isParseError(e.sqliteMessage)) return undefined;
    return translateEngineError(e, errorContextFor(state, sql));
  }
}

/** What error translation may ask the engine (see {@link ErrorContext}). */
function errorContextFor(state: EngineState, sql: string): ErrorContext {
  return {
    statementSql: sql,
    primaryKeyColumns: (table) => state.catalog.primaryKey(table),
    compileError: (text) => {
      try {
        try {
          checkBeforeCompile(text, state.catalog);
        } catch (refusal) {
          // As `#prepareHead`: SQLite's error first where SQLite finds it before the refusal (a
          // parse error of a DROP, say); compiling such a statement changes nothing.
          const first = sqliteErrorBeforeAuthorizer(state.engine, text);
          if (first === undefined) throw refusal;
          return first.sqliteMessage;
        }
        state.engine.prepare(text).free();
        return undefined;
      } catch (e) {
        return e instanceof Error ? ((e as { sqliteMessage?: string }).sqliteMessage ?? e.message) : String(e);
      }
    },
  };
}

/**
 * A compiled statement as its cursors see it: one per cached statement (its cursors take turns,
 * see `CachedStatement.busy`), or one per one-off copy.
 */
class StatementSource implements CursorSource {
  readonly engine: SqlEngine;
  readonly columnNames: readonly string[];
  readonly buildRow: RowBuilder;
  readonly limits: SqlLimits;
  readonly #host: SqlHost;
  readonly #state: EngineState;
  readonly #owner: CachedStatement | undefined;

  constructor(
    host: SqlHost,
    state: EngineState,
    readonly statement: EngineStatement,
    columnNames: readonly string[],
    owner: CachedStatement | undefined,
    limits: SqlLimits,
  ) {
    this.#host = host;
    this.#state = state;
    this.#owner = owner;
    this.engine = state.engine;
    this.limits = limits;
    this.columnNames = columnNames;
    this.buildRow = rowBuilderFor(columnNames);
  }

  isCurrent(): boolean {
    // The host bumps its generation whenever it replaces the engine (SqlHost.generation).
    return this.#host.generation === this.#state.generation;
  }

  assertUsable(): void {
    this.#host.assertUsable();
  }

  release(): void {
    const owner = this.#owner;
    if (owner === undefined) {
      this.statement.free();
      return;
    }
    owner.busy = false;
    owner.reader = undefined;
    if (owner.evicted) this.statement.free();
    else this.statement.reset();
  }

  translate(error: unknown): unknown {
    return translateFailure(this.#host, error, errorContextFor(this.#state, this.statement.sql));
  }

  countRowsAt(root: number): number {
    const table = this.#state.catalog.byRoot(root)?.table;
    if (table === undefined) return 0;
    const [row] = this.engine.query(`SELECT count(*) FROM "${table.replaceAll('"', '""')}"`);
    return Number(row?.[0] ?? 0);
  }
}

/** Where the first statement of `sql` ends (its first top-level `;`), for error reporting only. */
function firstStatementEnd(sql: string): number {
  const semicolon = tokenize(sql).find((t) => t.text === ";");
  return semicolon === undefined ? sql.length : semicolon.end;
}
