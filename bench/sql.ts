/**
 * storage.sql versus raw sql.js prepared statements, on the three paths that matter most:
 * a prepared point select, coalesced inserts (many writes committed as one batch), and a
 * 1,000-row range scan. Run with `npx tsx bench/sql.ts`; prints ops/s and our overhead ratio
 * (target ≤ 1.25×). The restriction check is cached, so repeated SQL pays only for the cache hit.
 */
import initSqlJs from "sql.js";
import type { SqlEngine } from "../src/engine/engine";
import { loadSqlJsEngine } from "../src/engine/sqljs";
import { ObjectStorage } from "../src/index";
import type { SqlHost } from "../src/storage/sql/sql-host";
import { SqlStorage } from "../src/storage/sql/sql-storage";
import { SQLJS_NATIVE_FUNCTIONS } from "./lib/sqljs-config";

const ROWS = 10_000;

function measure(name: string, ops: number, fn: () => void): number {
  // warm up, then take the best of five runs (the least disturbed by GC and JIT)
  fn();
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    fn();
    best = Math.min(best, performance.now() - start);
  }
  const perSecond = (ops / best) * 1000;
  console.log(`  ${name.padEnd(34)} ${perSecond.toFixed(0).padStart(10)} ops/s`);
  return perSecond;
}

async function measureAsync(name: string, ops: number, fn: () => Promise<void>): Promise<number> {
  await fn();
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    await fn();
    best = Math.min(best, performance.now() - start);
  }
  const perSecond = (ops / best) * 1000;
  console.log(`  ${name.padEnd(34)} ${perSecond.toFixed(0).padStart(10)} ops/s`);
  return perSecond;
}

function report(raw: number, ours: number): void {
  console.log(`  overhead: ${(raw / ours).toFixed(2)}× (target ≤ 1.25×)\n`);
}

/**
 * The smallest host that makes SqlStorage work (BEGIN on the first write, COMMIT on sync): it
 * isolates the facade's own overhead from the storage core's (commit log, durability).
 */
class MinimalHost implements SqlHost {
  readonly generation = 0;
  readonly schemaEpoch = 0;
  #open = false;
  constructor(readonly engine: SqlEngine) {}
  beforeWrite(): number {
    if (!this.#open) this.engine.exec("BEGIN");
    this.#open = true;
    return 0;
  }
  now() {
    return 0;
  }
  transactionSync<T>(fn: () => T): T {
    return fn();
  }
  assertUsable() {}
  async sync() {
    if (this.#open) this.engine.exec("COMMIT");
    this.#open = false;
  }
}

async function main(): Promise<void> {
  const SQL = await initSqlJs(SQLJS_NATIVE_FUNCTIONS);
  const raw = new SQL.Database();
  const layer = process.argv[2] === "storage" ? "storage" : "facade";
  let sql: SqlStorage;
  let sync: () => Promise<void>;
  if (layer === "storage") {
    const storage = await ObjectStorage.open();
    sql = storage.sql;
    sync = () => storage.sync();
    console.log("through ObjectStorage (facade + storage core)\n");
  } else {
    const host = new MinimalHost((await loadSqlJsEngine()).open());
    sql = new SqlStorage(host);
    sync = () => host.sync();
    console.log("through SqlStorage over a minimal host (the facade alone; `storage` argument: whole core)\n");
  }
  const schema = "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); CREATE TABLE w(id INTEGER PRIMARY KEY, v TEXT)";
  raw.exec(schema);
  sql.exec(schema);
  raw.exec("BEGIN");
  const fill = raw.prepare("INSERT INTO t VALUES (?, ?)");
  for (let i = 1; i <= ROWS; i++) fill.run([i, `value-${i}`]);
  fill.free();
  raw.exec("COMMIT");
  for (let i = 1; i <= ROWS; i++) sql.exec("INSERT INTO t VALUES (?, ?)", i, `value-${i}`);
  await sync();

  console.log("point select: SELECT v FROM t WHERE id = ?");
  const N = 20_000;
  const point = raw.prepare("SELECT v FROM t WHERE id = ?");
  const rawPoint = measure("raw sql.js (prepared)", N, () => {
    for (let i = 0; i < N; i++) {
      point.bind([(i % ROWS) + 1]);
      point.step();
      point.getAsObject();
      point.reset();
    }
  });
  const oursPoint = measure("storage.sql.exec(…).one()", N, () => {
    for (let i = 0; i < N; i++) sql.exec("SELECT v FROM t WHERE id = ?", (i % ROWS) + 1).one();
  });
  report(rawPoint, oursPoint);

  console.log("coalesced insert: 1,000 × INSERT INTO w VALUES (?, ?), one commit");
  const B = 1_000;
  let next = 0;
  const insert = raw.prepare("INSERT INTO w VALUES (?, ?)");
  const rawInsert = measure("raw sql.js (BEGIN … COMMIT)", B, () => {
    raw.exec("BEGIN");
    for (let i = 0; i < B; i++) insert.run([++next, "x"]);
    raw.exec("COMMIT");
  });
  const oursInsert = await measureAsync("storage.sql.exec + sync()", B, async () => {
    for (let i = 0; i < B; i++) sql.exec("INSERT INTO w VALUES (?, ?)", ++next, "x");
    await sync();
  });
  report(rawInsert, oursInsert);

  console.log("range scan: 1,000 rows as objects");
  const S = 50;
  const scan = raw.prepare("SELECT id, v FROM t WHERE id BETWEEN ? AND ?");
  const rawScan = measure("raw sql.js (getAsObject)", S, () => {
    for (let i = 0; i < S; i++) {
      scan.bind([1001, 2000]);
      const rows = [];
      while (scan.step()) rows.push(scan.getAsObject());
      scan.reset();
    }
  });
  const oursScan = measure("storage.sql.exec(…).toArray()", S, () => {
    for (let i = 0; i < S; i++) sql.exec("SELECT id, v FROM t WHERE id BETWEEN ? AND ?", 1001, 2000).toArray();
  });
  report(rawScan, oursScan);

  const rawScanArrays = measure("raw sql.js (get, arrays)", S, () => {
    for (let i = 0; i < S; i++) {
      scan.bind([1001, 2000]);
      const rows = [];
      while (scan.step()) rows.push(scan.get());
      scan.reset();
    }
  });
  const oursScanRaw = measure("storage.sql.exec(…).raw().toArray()", S, () => {
    for (let i = 0; i < S; i++) sql.exec("SELECT id, v FROM t WHERE id BETWEEN ? AND ?", 1001, 2000).raw().toArray();
  });
  report(rawScanArrays, oursScanRaw);
}

await main();
