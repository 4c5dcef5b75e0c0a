/**
 * Shared helpers for the SQL facade tests. Every suite runs on the real storage core (an
 * `ObjectStorage` over in-memory persistence, the path users run), with trusted access to its
 * engine and to the commit records it appends.
 */
import type { CommitRecord } from "../../../src/durability/commit-record";
import { DelegatingPersistence } from "../../../src/durability/delegating-persistence";
import type {
  EngineStatement,
  EngineValue,
  PreparedHead,
  SqlEngine,
  SqlEngineFactory,
} from "../../../src/engine/engine";
import { loadSqlJsEngine } from "../../../src/engine/sqljs";
import { createMemoryPersistence, ObjectStorage } from "../../../src/index";
import { coreOf } from "../../../src/storage/object-storage";
import { SqlStorage, type SqlStorageOptions } from "../../../src/storage/sql/sql-storage";
import type { StorageCore } from "../../../src/storage/storage-core";
import { FakeClock } from "../../../src/util/clock";

/** Persistence that keeps every commit record appended to it, in order. */
class RecordingPersistence extends DelegatingPersistence {
  readonly records: CommitRecord[] = [];
  override append(records: readonly CommitRecord[]): Promise<void> {
    this.records.push(...records);
    return super.append(records);
  }
}

/** A SQL statement as the core logged it for durability. */
export interface LoggedWrite {
  sql: string;
  bindings: readonly EngineValue[];
}

/** What {@link setup} gives a test. */
export interface SqlSetup {
  /** The storage (a real core over in-memory persistence). */
  storage: ObjectStorage;
  /** Its core: the facade's host. */
  core: StorageCore;
  /** The SQL facade under test: `storage.sql`, or one over the same core with `options`. */
  sql: SqlStorage;
  /** The storage's clock (SQL's 'now'). */
  clock: FakeClock;
  /** The engine that holds the data now (trusted access, not through the facade). */
  engine(): SqlEngine;
  /** Every engine the storage opened, wrapped to record what reached it (with `record: true`). */
  recorders: RecordingEngine[];
  /** Waits for every write to be durable and returns the SQL statements logged so far. */
  writes(): Promise<LoggedWrite[]>;
}

/** Options of {@link setup}: the facade's own options, and what the test wants to watch. */
export interface SetupOptions extends SqlStorageOptions {
  /** Wrap every engine in a {@link RecordingEngine} (see `recorders`). */
  record?: boolean;
  /** The clock's start (ms since epoch). */
  nowMs?: number;
}

/**
 * A fresh object on the real storage core. With facade options (limits, cache size, `enabled`) the
 * facade is a second `SqlStorage` over the same core, as `ObjectStorage` builds its own.
 */
export async function setup(options: SetupOptions = {}): Promise<SqlSetup> {
  const { record = false, nowMs = 1_700_000_000_000, ...facadeOptions } = options;
  const real = await loadSqlJsEngine();
  const engines: SqlEngine[] = [];
  const recorders: RecordingEngine[] = [];
  const engineFactory: SqlEngineFactory = {
    open(bytes?: Uint8Array): SqlEngine {
      let engine = real.open(bytes);
      if (record) {
        const recorder = new RecordingEngine(engine);
        recorders.push(recorder);
        engine = recorder;
      }
      engines.push(engine);
      return engine;
    },
  };
  const persistence = new RecordingPersistence(createMemoryPersistence());
  const clock = new FakeClock(nowMs);
  const storage = await ObjectStorage.open({ persistence, engineFactory, clock });
  const core = coreOf(storage);
  const sql = Object.keys(facadeOptions).length === 0 ? storage.sql : new SqlStorage(core.sqlHost, facadeOptions);
  return {
    storage,
    core,
    sql,
    clock,
    engine: () => core.engine,
    recorders,
    async writes() {
      await storage.sync();
      return persistence.records
        .flatMap((r) => r.sql)
        .filter((w) => w.sql !== "")
        .map((w) => ({ sql: w.sql, bindings: w.bindings }));
    },
  };
}

/** The error `fn` throws, as `Name: message` (fails the test if nothing is thrown). */
export function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return e instanceof Error ? `${e.name}: ${e.message}` : `thrown: ${String(e)}`;
  }
  throw new Error("expected an error");
}

/** Wraps an engine and records what reached it: every prepared text and every trusted query. */
export class RecordingEngine implements SqlEngine {
  readonly prepared: string[] = [];
  readonly queries: string[] = [];
  /** Every statement `prepare` compiled, held weakly (to see which the storage still keeps). */
  readonly statements: { sql: string; ref: WeakRef<EngineStatement> }[] = [];
  readonly #inner: SqlEngine;

  constructor(inner: SqlEngine) {
    this.#inner = inner;
  }

  get closed(): boolean {
    return this.#inner.closed;
  }

  /** How many EXPLAINs (restriction checks) ran. */
  get explains(): number {
    return this.queries.filter((q) => q.startsWith("EXPLAIN ")).length;
  }

  prepare(sql: string): EngineStatement {
    this.prepared.push(sql);
    const statement = this.#inner.prepare(sql);
    this.statements.push({ sql, ref: new WeakRef(statement) });
    return statement;
  }
  prepareHead(sql: string): PreparedHead {
    this.prepared.push(sql);
    const head = this.#inner.prepareHead(sql);
    if (head.statement !== null) this.statements.push({ sql, ref: new WeakRef(head.statement) });
    return head;
  }
  exec(sql: string): void {
    this.#inner.exec(sql);
  }
  query(sql: string, params?: readonly EngineValue[]): EngineValue[][] {
    this.queries.push(sql);
    return this.#inner.query(sql, params);
  }
  totalChanges(): number {
    return this.#inner.totalChanges();
  }

  resetConnectionCounters(): void {
    this.#inner.resetConnectionCounters();
  }

  keepConnectionCounters<T>(fn: () => T): T {
    return this.#inner.keepConnectionCounters(fn);
  }

  setRealTextDigits(digits: number): void {
    this.#inner.setRealTextDigits(digits);
  }

  get legacyFunctions(): boolean {
    return this.#inner.legacyFunctions;
  }

  setLegacyFunctions(on: boolean): void {
    this.#inner.setLegacyFunctions(on);
  }

  changes(): number {
    return this.#inner.changes();
  }
  exportBytes(): Uint8Array {
    return this.#inner.exportBytes();
  }
  createFunction(...args: Parameters<SqlEngine["createFunction"]>): void {
    this.#inner.createFunction(...args);
  }
  setConnectionInputs(...args: Parameters<SqlEngine["setConnectionInputs"]>): void {
    this.#inner.setConnectionInputs(...args);
  }
  setRandomSource(...args: Parameters<SqlEngine["setRandomSource"]>): void {
    this.#inner.setRandomSource(...args);
  }
  withNow<T>(nowMs: number, fn: () => T): T {
    return this.#inner.withNow(nowMs, fn);
  }
  close(): void {
    this.#inner.close();
  }
}
