/**
 * Durability layer benchmark: `npx tsx bench/durability.ts`.
 *
 * - file adapter commits/s with fsync: one append at a time (each waits for its own fdatasync) and
 *   with many appends in flight (group commit: one write + fdatasync for everything queued);
 * - memory adapter appends/s (the default adapter, on the commit path of every benchmark);
 * - codec encode/decode speed and load (recovery scan) time for 10,000 logged batches;
 * - log bytes per committed batch against the changed data (keys + values); target ≤ 2×.
 *
 * Numbers depend heavily on the disk's flush latency; the temp directory is under os.tmpdir().
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommitRecord } from "../src/durability/commit-record";
import { openFilePersistence } from "../src/durability/file-persistence";
import { createMemoryPersistence } from "../src/durability/memory-persistence";
import { loadWithRecords } from "../src/durability/persistence";
import { decodeRecords, encodeRecord, encodeRecords } from "../src/durability/record-codec";

const T0 = 1_767_225_600_000;
const encoder = new TextEncoder();

/** A batch of `keys` key-value writes with `valueBytes`-byte values (a serialized small object). */
function kvBatch(seq: number, keys: number, valueBytes: number): CommitRecord {
  return {
    seq,
    timeMs: T0 + seq,
    reset: false,
    sql: [],
    kv: Array.from({ length: keys }, (_, i) => ({
      key: `user:${(seq * 7 + i) % 100_000}:profile`,
      value: encoder.encode(`{"n":${seq},"i":${i}}`.padEnd(valueBytes, " ")),
    })),
  };
}

function sqlBatch(seq: number, rows: number): CommitRecord {
  return {
    seq,
    timeMs: T0 + seq,
    reset: false,
    kv: [],
    sql: Array.from({ length: rows }, (_, i) => ({
      sql: "INSERT INTO orders (id, customer, total, note) VALUES (?, ?, ?, ?)",
      bindings: [seq * 1000 + i, `customer-${i}`, 19.99 + i, "standard shipping"],
      nowMs: T0 + seq,
    })),
  };
}

const fmt = (n: number, digits = 0): string => n.toLocaleString("en-US", { maximumFractionDigits: digits });

async function fileSingle(dir: string, count: number): Promise<number> {
  const adapter = await openFilePersistence(dir);
  await adapter.load();
  const start = performance.now();
  for (let seq = 1; seq <= count; seq++) await adapter.append([kvBatch(seq, 1, 64)]);
  const seconds = (performance.now() - start) / 1000;
  await adapter.close();
  return count / seconds;
}

async function fileGroup(dir: string, count: number, inFlight: number): Promise<{ rate: number; flushes: number }> {
  const adapter = await openFilePersistence(dir);
  await adapter.load();
  let seq = 0;
  const start = performance.now();
  // `inFlight` independent writers, each committing one batch at a time (like many objects' turns
  // or a pipeline of unconfirmed writes): appends issued while a flush runs share the next one.
  const writers = Array.from({ length: inFlight }, async () => {
    while (seq < count) await adapter.append([kvBatch(++seq, 1, 64)]);
  });
  await Promise.all(writers);
  const seconds = (performance.now() - start) / 1000;
  const flushes = adapter.stats().logFlushes;
  await adapter.close();
  return { rate: count / seconds, flushes };
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "actorstore-bench-durability-"));
  try {
    console.log("## Log size per committed batch (target: ≤ 2× changed keys + values)\n");
    console.log("| batch | changed bytes | log bytes | ratio |");
    console.log("|---|---:|---:|---:|");
    const shapes: Array<[string, CommitRecord, number]> = [];
    for (const [keys, valueBytes] of [
      [1, 16],
      [1, 64],
      [1, 1024],
      [10, 64],
      [100, 64],
    ] as const) {
      const r = kvBatch(12_345, keys, valueBytes);
      const changed = r.kv.reduce((n, w) => n + encoder.encode(w.key).length + (w.value?.length ?? 0), 0);
      shapes.push([`kv ${keys} × ${valueBytes} B`, r, changed]);
    }
    const sql = sqlBatch(12_345, 10);
    const sqlChanged = sql.sql.reduce(
      (n, w) => n + w.bindings.reduce<number>((m, b) => m + (typeof b === "string" ? encoder.encode(b).length : 8), 0),
      0,
    );
    shapes.push(["sql 10 INSERT rows (changed = bound values)", sql, sqlChanged]);
    for (const [name, record, changed] of shapes) {
      const size = encodeRecord(record).length;
      console.log(`| ${name} | ${changed} | ${size} | ${(size / changed).toFixed(2)}× |`);
    }

    console.log("\n## Codec\n");
    const records = Array.from({ length: 10_000 }, (_, i) => kvBatch(i + 1, 3, 64));
    let start = performance.now();
    const log = encodeRecords(records);
    const encodeMs = performance.now() - start;
    start = performance.now();
    const decoded = decodeRecords(log);
    const decodeMs = performance.now() - start;
    if (decoded.records.length !== records.length) throw new Error("decode mismatch");
    console.log(`- encode 10,000 batches (3 keys each, ${fmt(log.length / 1024)} KiB): ${encodeMs.toFixed(1)} ms`);
    console.log(`- decode (checksum + parse) the same: ${decodeMs.toFixed(1)} ms`);

    console.log("\n## Memory adapter\n");
    const memory = createMemoryPersistence();
    await memory.load();
    start = performance.now();
    for (const r of records) await memory.append([r]);
    const memSeconds = (performance.now() - start) / 1000;
    console.log(`- append, one batch at a time: ${fmt(records.length / memSeconds)} batches/s`);

    console.log("\n## File adapter (fdatasync before each append resolves)\n");
    const single = await fileSingle(join(root, "single"), 300);
    console.log(`- one append at a time: ${fmt(single)} batches/s (${(1000 / single).toFixed(2)} ms per commit)`);
    for (const inFlight of [8, 64]) {
      const count = 3000;
      const { rate, flushes } = await fileGroup(join(root, `group-${inFlight}`), count, inFlight);
      console.log(
        `- ${inFlight} appends in flight (group commit): ${fmt(rate)} batches/s, ${fmt(count / flushes, 1)} batches per flush`,
      );
    }

    console.log("\n## Load (recovery scan) of 10,000 logged batches\n");
    const dir = join(root, "load");
    const writer = await openFilePersistence(dir);
    await writer.load();
    for (let i = 0; i < records.length; i += 500) await writer.append(records.slice(i, i + 500));
    await writer.close();
    const reader = await openFilePersistence(dir);
    start = performance.now();
    const loaded = await loadWithRecords(reader);
    const loadMs = performance.now() - start;
    await reader.close();
    console.log(
      `- load(): ${loadMs.toFixed(1)} ms for ${fmt(loaded.records.length)} records (${fmt(log.length / 1024)} KiB)`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
