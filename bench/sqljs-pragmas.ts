/**
 * How much sql.js's defaults cost: point selects and one-row transactions on raw sql.js with and
 * without `PRAGMA locking_mode = EXCLUSIVE` and `PRAGMA journal_mode = MEMORY`.
 *
 *   node --import tsx bench/sqljs-pragmas.ts
 *
 * Why it matters: sql.js keeps the database in a file of Emscripten's in-memory file system. With
 * the defaults, every read transaction asks that file system whether a hot journal exists, and
 * every write transaction creates, writes and deletes a rollback journal file there; each of those
 * calls crosses from WASM into Emscripten's JavaScript FS code (`lookup`, `write`, … in CPU
 * profiles). actorstore keeps durability in its own commit log, so neither lock files nor an
 * on-"disk" journal buy it anything.
 */
import initSqlJs from "sql.js";
import { SQLJS_NATIVE_FUNCTIONS } from "./lib/sqljs-config";

const SQL = await initSqlJs(SQLJS_NATIVE_FUNCTIONS);
const ROWS = 10_000;

function measure(pragmas: string[]): { selects: number; txns: number } {
  const db = new SQL.Database();
  for (const p of pragmas) db.run(p);
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  const insert = db.prepare("INSERT INTO t VALUES (?, ?)");
  db.run("BEGIN");
  for (let i = 0; i < ROWS; i++) insert.run([i, "v".repeat(100)]);
  db.run("COMMIT");
  const select = db.prepare("SELECT v FROM t WHERE id = ?");
  const selects: number[] = [];
  const txns: number[] = [];
  for (let round = 0; round < 7; round++) {
    let t = performance.now();
    for (let i = 0; i < 20_000; i++) {
      select.bind([(i * 7919) % ROWS]);
      select.step();
      select.get();
      select.reset();
    }
    selects.push((20_000 / (performance.now() - t)) * 1000);
    t = performance.now();
    for (let i = 0; i < 2_000; i++) {
      db.run("BEGIN");
      insert.run([ROWS + i, "x"]);
      db.run("COMMIT");
    }
    txns.push((2_000 / (performance.now() - t)) * 1000);
    db.run(`DELETE FROM t WHERE id >= ${ROWS}`);
  }
  db.close();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  return { selects: median(selects), txns: median(txns) };
}

const variants: string[][] = [
  [],
  ["PRAGMA locking_mode = EXCLUSIVE"],
  ["PRAGMA journal_mode = MEMORY"],
  ["PRAGMA locking_mode = EXCLUSIVE", "PRAGMA journal_mode = MEMORY"],
];
console.log("pragmas | point selects/s | one-row transactions/s (median of 7 rounds)");
for (const pragmas of variants) {
  const r = measure(pragmas);
  console.log(
    `${pragmas.join("; ") || "(sql.js defaults)"} | ${Math.round(r.selects).toLocaleString("en-US")} | ${Math.round(r.txns).toLocaleString("en-US")}`,
  );
}
