/**
 * The batch's SQL log counts the bytes of its entries as they are logged (for the snapshot
 * schedule), and what they hold in memory (for the in-memory persistence's history bound), both in
 * one pass: whatever is logged, rolled back and taken, the counts are what `sqlWriteBytes` and
 * `sqlWriteHeldBytes` sum over the entries the commit record gets, and reading them changes nothing.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { SqlWrite } from "../../src/durability/commit-record";
import { sqlWriteHeldBytes } from "../../src/durability/held-bytes";
import type { EngineValue, SqlEngineFactory } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { BatchSqlLog } from "../../src/storage/batch-sql-log";
import { PerCallChanges } from "../../src/storage/per-call-changes";
import { sqlWriteBytes } from "../../src/storage/snapshots";

let factory: SqlEngineFactory;
beforeAll(async () => {
  factory = await loadSqlJsEngine();
});

const sum = (entries: readonly SqlWrite[]): number => entries.reduce((n, e) => n + sqlWriteBytes(e), 0);
const held = (entries: readonly SqlWrite[]): number => entries.reduce((n, e) => n + sqlWriteHeldBytes(e), 0);
const write = (sql: string, ...bindings: EngineValue[]): SqlWrite => ({ sql, bindings, nowMs: 0 });

describe("BatchSqlLog.bytes", () => {
  it("is the sum over the entries the record takes, through savepoint rollbacks that log a settings entry", () => {
    const engine = factory.open();
    const log = new BatchSqlLog(new PerCallChanges());
    log.prepare(engine);
    engine.exec("BEGIN");
    engine.exec("CREATE TABLE t (a, b)");
    log.internal(engine, write("CREATE TABLE t (a, b)"));
    const insert = "INSERT INTO t VALUES (?, ?)";
    log.statement(engine, write(insert, 1, "x".repeat(100)), 1, undefined);
    const mark = log.length;
    engine.exec("SAVEPOINT s");
    log.statement(engine, write(insert, 2, new Uint8Array(300)), 1, undefined);
    log.statement(engine, write("PRAGMA case_sensitive_like = ON"), 1, undefined);
    engine.exec("PRAGMA case_sensitive_like = ON");
    expect(log.bytes).toBe(
      sqlWriteBytes(write("CREATE TABLE t (a, b)")) +
        sqlWriteBytes(write(insert, 1, "x".repeat(100))) +
        sqlWriteBytes(write(insert, 2, new Uint8Array(300))) +
        sqlWriteBytes(write("PRAGMA case_sensitive_like = ON")),
    );
    engine.exec("ROLLBACK TO s; RELEASE s");
    // The rolled-back pragma's setting stays: the log replaces the two entries by one that sets it.
    log.rollBackTo(engine, mark, 0);
    expect(log.length).toBe(mark + 1);
    log.statement(engine, write(insert, 3, null), 1, { mayChangeSettings: false });
    log.settle(engine);
    const bytes = log.bytes;
    const heldBytes = log.heldBytes;
    expect(log.heldBytes).toBe(heldBytes);
    const taken = log.take();
    expect(taken).toHaveLength(mark + 2);
    expect(bytes).toBe(sum(taken));
    expect(heldBytes).toBe(held(taken));
    expect(log.bytes).toBe(0);
    expect(log.heldBytes).toBe(0);
    engine.exec("COMMIT");
    engine.close();
  });

  it("counts the connection inputs a statement read while it ran, also of entries a rollback removed", () => {
    const engine = factory.open();
    const log = new BatchSqlLog(new PerCallChanges());
    log.prepare(engine);
    engine.exec("BEGIN");
    engine.exec("CREATE TABLE t (a, b, c)");
    log.internal(engine, write("CREATE TABLE t (a, b, c)"));
    const reads = "INSERT INTO t VALUES (changes(), total_changes(), ?)";
    log.statement(engine, write(reads, "kept"), 1, undefined);
    engine.exec(reads.replace("?", "'kept'"));
    const mark = log.length;
    engine.exec("SAVEPOINT s");
    log.statement(engine, write(reads, "gone"), 1, undefined);
    engine.exec(reads.replace("?", "'gone'"));
    engine.exec("ROLLBACK TO s; RELEASE s");
    log.rollBackTo(engine, mark, 0);
    log.statement(engine, write(reads, "last"), 1, undefined);
    engine.exec(reads.replace("?", "'last'"));
    log.settle(engine);
    const heldBytes = log.heldBytes;
    const taken = log.take();
    // The inputs were written into the entries while they ran, after they were logged.
    expect(taken.map((e) => e.inputs?.length ?? 0)).toEqual([0, 2, 2]);
    expect(heldBytes).toBe(held(taken));
    engine.exec("COMMIT");
    engine.close();
  });

  it("starts from nothing after clear()", () => {
    const engine = factory.open();
    const log = new BatchSqlLog(new PerCallChanges());
    log.prepare(engine);
    log.statement(engine, write("INSERT INTO nowhere VALUES (?)", "abc"), 1, undefined);
    expect(log.bytes).toBeGreaterThan(0);
    expect(log.heldBytes).toBeGreaterThan(0);
    log.clear();
    expect(log.bytes).toBe(0);
    expect(log.heldBytes).toBe(0);
    expect(log.take()).toEqual([]);
    engine.close();
  });
});
