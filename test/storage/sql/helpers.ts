/** Shared helpers for the SQL facade tests. */
import type { EngineStatement, EngineValue, PreparedHead, SqlEngine } from "../../../src/engine/engine";
import { SqlStorage, type SqlStorageOptions } from "../../../src/storage/sql/sql-storage";
import { FakeHost } from "./fake-host";

/** A fresh fake host and a SqlStorage over it. */
export async function setup(options?: SqlStorageOptions): Promise<{ host: FakeHost; sql: SqlStorage }> {
  const host = await FakeHost.create();
  return { host, sql: new SqlStorage(host, options) };
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
    return this.#inner.prepare(sql);
  }
  prepareHead(sql: string): PreparedHead {
    this.prepared.push(sql);
    return this.#inner.prepareHead(sql);
  }
  exec(sql: string): void {
    this.#inner.exec(sql);
  }
  query(sql: string, params?: readonly EngineValue[]): EngineValue[][] {
    this.queries.push(sql);
    return this.#inner.query(sql, params);
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
