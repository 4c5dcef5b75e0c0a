/**
 * Raw sql.js with prepared statements: the lower bound for anything built on sql.js, actorstore
 * included. The same work as the key-value API, written the direct way: a
 * `kv (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID` table like `_cf_KV`, values serialized with
 * `node:v8` (the format workerd, Miniflare 2 and actorstore's default codec write), and one SQLite
 * transaction wherever the storage API would make one batch (a round of coalesced writes, a
 * `put()`+`sync()`, a `transaction()`). Everything is synchronous: no promises, no cache, no log.
 */
import { deserialize, serialize } from "node:v8";
import initSqlJs, { type Database, type SqlValue, type Statement } from "sql.js";
import { SQLJS_NATIVE_FUNCTIONS } from "../lib/sqljs-config";
import type { RoundParams, WorkloadName } from "../lib/workloads";
import type { BenchSystem } from "./system";

const key = (i: number): string => `key-${String(i).padStart(8, "0")}`;
/** The key a round's op `j` touches, as in workloads.ts. */
const keyAt = (p: RoundParams, j: number): string => key((p.offset + j * 7919) % p.size);

class RawSqlJsSystem implements BenchSystem {
  readonly name = "raw-sqljs" as const;
  readonly #db: Database;
  readonly #get: Statement;
  readonly #put: Statement;
  readonly #del: Statement;
  readonly #range: Statement;
  readonly #insertRow: Statement;
  readonly #selectRow: Statement;
  readonly #scanRows: Statement;

  constructor(db: Database) {
    this.#db = db;
    // The same connection settings actorstore's engine uses (src/engine/sqljs.ts), so the ratio
    // measures actorstore's own overhead, not a setting anyone can copy.
    db.run("PRAGMA locking_mode = EXCLUSIVE");
    db.run("PRAGMA journal_mode = MEMORY");
    db.run("CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID");
    db.run("CREATE TABLE bench_rows (id INTEGER PRIMARY KEY, v TEXT)");
    this.#get = db.prepare("SELECT value FROM kv WHERE key = ?");
    this.#put = db.prepare("INSERT INTO kv VALUES (?, ?) ON CONFLICT DO UPDATE SET value = excluded.value");
    this.#del = db.prepare("DELETE FROM kv WHERE key = ?");
    this.#range = db.prepare("SELECT key, value FROM kv WHERE key >= ? ORDER BY key LIMIT ?");
    this.#insertRow = db.prepare("INSERT INTO bench_rows (id, v) VALUES (?, ?)");
    this.#selectRow = db.prepare("SELECT v FROM bench_rows WHERE id = ?");
    this.#scanRows = db.prepare("SELECT id, v FROM bench_rows WHERE id >= ? ORDER BY id LIMIT 1000");
  }

  supports(_workload: WorkloadName): boolean {
    return true;
  }

  async fillKeys(from: number, to: number, value: unknown): Promise<void> {
    const bytes = serialize(value);
    this.#inTransaction(() => {
      for (let i = from; i < to; i++) this.#put.run([key(i), bytes]);
    });
  }

  async fillRows(from: number, to: number, value: unknown): Promise<void> {
    this.#inTransaction(() => {
      for (let i = from; i < to; i++) this.#insertRow.run([i, value as SqlValue]);
    });
  }

  #read(k: string): unknown {
    const s = this.#get;
    s.bind([k]);
    try {
      return s.step() ? deserialize(s.get()[0] as Uint8Array) : undefined;
    } finally {
      s.reset();
    }
  }

  #write(k: string, value: unknown): void {
    this.#put.run([k, serialize(value)]);
  }

  #inTransaction(fn: () => void): void {
    this.#db.run("BEGIN");
    fn();
    this.#db.run("COMMIT");
  }

  async round(workload: WorkloadName, p: RoundParams): Promise<number> {
    const start = performance.now();
    this.#run(workload, p);
    const ms = performance.now() - start;
    if (workload === "delete") this.#inTransaction(() => this.#writeRound(p));
    if (workload === "sql-insert") this.#db.run("DELETE FROM bench_rows WHERE id >= 1000000000");
    return ms;
  }

  #writeRound(p: RoundParams): void {
    for (let j = 0; j < p.n; j++) this.#write(keyAt(p, j), p.value);
  }

  #run(workload: WorkloadName, p: RoundParams): void {
    switch (workload) {
      case "put":
        this.#inTransaction(() => this.#writeRound(p));
        return;
      case "put-batch":
        for (let b = 0; b < p.n; b += 100) {
          this.#inTransaction(() => {
            for (let j = b; j < b + 100; j++) this.#write(keyAt(p, j), p.value);
          });
        }
        return;
      case "put-sync":
        // Autocommit: one SQLite transaction per put, like one batch per put()+sync().
        for (let j = 0; j < p.n; j++) this.#write(keyAt(p, j), p.value);
        return;
      case "get-cached": {
        const w = Math.min(p.size, 1000);
        for (let j = 0; j < p.n; j++) {
          if (this.#read(key(((j % w) * 7919) % p.size)) === undefined) throw new Error("missing key");
        }
        return;
      }
      case "get-uncached":
        for (let j = 0; j < p.n; j++) if (this.#read(keyAt(p, j)) === undefined) throw new Error("missing key");
        return;
      case "get-128":
        for (let c = 0; c < p.n; c++) {
          const keys = new Set<string>();
          for (let j = 0; j < 128; j++) keys.add(key((p.offset + (c * 128 + j) * 7919) % p.size));
          const out = new Map<string, unknown>();
          // Sorted like the platform's result (these ASCII keys sort the same in UTF-16 and UTF-8).
          for (const k of [...keys].sort()) {
            const v = this.#read(k);
            if (v !== undefined) out.set(k, v);
          }
          if (out.size === 0) throw new Error("no keys found");
        }
        return;
      case "list-1000": {
        const span = Math.max(1, p.size - 1000);
        const s = this.#range;
        for (let c = 0; c < p.n; c++) {
          const out = new Map<string, unknown>();
          s.bind([key((p.offset + c * 7919) % span), 1000]);
          while (s.step()) {
            const row = s.get();
            out.set(row[0] as string, deserialize(row[1] as Uint8Array));
          }
          s.reset();
          if (out.size !== Math.min(1000, p.size)) throw new Error(`list got ${out.size}`);
        }
        return;
      }
      case "delete":
        this.#inTransaction(() => {
          for (let j = 0; j < p.n; j++) {
            this.#del.run([keyAt(p, j)]);
            if (this.#db.getRowsModified() !== 1) throw new Error("key was missing");
          }
        });
        return;
      case "transaction":
        for (let t = 0; t < p.n; t++) {
          this.#inTransaction(() => {
            for (let j = 0; j < 4; j++) this.#read(key((p.offset + (t * 4 + j) * 7919) % p.size));
            for (let j = 0; j < 4; j++) this.#write(key((p.offset + (t * 4 + j) * 7919) % p.size), p.value);
          });
        }
        return;
      case "sql-insert":
        this.#inTransaction(() => {
          for (let j = 0; j < p.n; j++) this.#insertRow.run([1_000_000_000 + j, p.value as SqlValue]);
        });
        return;
      case "sql-select": {
        const s = this.#selectRow;
        for (let j = 0; j < p.n; j++) {
          s.bind([(p.offset + j * 7919) % p.size]);
          if (!s.step()) throw new Error("missing row");
          s.get();
          s.reset();
        }
        return;
      }
      case "sql-scan": {
        const span = Math.max(1, p.size - 1000);
        const s = this.#scanRows;
        for (let c = 0; c < p.n; c++) {
          const rows: SqlValue[][] = [];
          s.bind([(p.offset + c * 7919) % span]);
          while (s.step()) rows.push(s.get());
          s.reset();
          if (rows.length !== Math.min(1000, p.size)) throw new Error(`scan got ${rows.length}`);
        }
        return;
      }
    }
  }

  async close(): Promise<void> {
    this.#db.close();
  }
}

/** A fresh in-memory sql.js database with the two tables. */
export async function openRawSqlJs(): Promise<BenchSystem> {
  const SQL = await initSqlJs(SQLJS_NATIVE_FUNCTIONS);
  return new RawSqlJsSystem(new SQL.Database());
}
