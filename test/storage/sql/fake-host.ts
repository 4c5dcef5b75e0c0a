/**
 * A small SqlHost over a real sql.js engine, so the SQL facade can be tested without the storage
 * core: BEGIN on the first write of a batch, `commit()` on demand, savepoints for transactionSync,
 * `deleteAll()` replaces the engine (new generation). It records every `beforeWrite` call.
 */
import type { EngineValue, SqlEngine, SqlEngineFactory } from "../../../src/engine/engine";
import { loadSqlJsEngine } from "../../../src/engine/sqljs";
import type { SqlHost } from "../../../src/storage/sql/sql-host";

export interface LoggedWrite {
  sql: string;
  bindings: readonly EngineValue[];
}

export class FakeHost implements SqlHost {
  engine: SqlEngine;
  generation = 0;
  schemaEpoch = 0;
  nowMs = 1_700_000_000_000;
  readonly writes: LoggedWrite[] = [];
  #inTransaction = false;
  #depth = 0;
  #closed = false;
  readonly #factory: SqlEngineFactory;

  private constructor(factory: SqlEngineFactory) {
    this.#factory = factory;
    this.engine = factory.open();
    this.engine.exec(
      "CREATE TABLE _cf_KV (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID; CREATE TABLE _cf_METADATA (key INTEGER PRIMARY KEY, value BLOB);",
    );
  }

  static async create(): Promise<FakeHost> {
    return new FakeHost(await loadSqlJsEngine());
  }

  get inTransaction(): boolean {
    return this.#inTransaction;
  }

  beforeWrite(sql: string, bindings: readonly EngineValue[]): number {
    this.assertUsable();
    if (!this.#inTransaction) {
      this.engine.exec("BEGIN");
      this.#inTransaction = true;
    }
    this.writes.push({ sql, bindings: [...bindings] });
    return this.nowMs;
  }

  now(): number {
    return this.nowMs;
  }

  commit(): void {
    if (this.#inTransaction) {
      this.engine.exec("COMMIT");
      this.#inTransaction = false;
    }
  }

  transactionSync<T>(fn: () => T): T {
    if (!this.#inTransaction) {
      this.engine.exec("BEGIN");
      this.#inTransaction = true;
    }
    const name = `_cf_sync_savepoint_${this.#depth++}`;
    this.engine.exec(`SAVEPOINT ${name}`);
    try {
      const result = fn();
      this.engine.exec(`RELEASE ${name}`);
      return result;
    } catch (e) {
      this.engine.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
      this.schemaEpoch++;
      throw e;
    } finally {
      this.#depth--;
    }
  }

  deleteAll(): void {
    this.engine.close();
    this.engine = this.#factory.open();
    this.#inTransaction = false;
    this.generation++;
  }

  close(): void {
    this.#closed = true;
  }

  assertUsable(): void {
    if (this.#closed) throw new Error("Storage is closed.");
  }
}
