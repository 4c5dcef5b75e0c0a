/**
 * The batch's SQL log counts the bytes of its entries as they are logged (for the snapshot
 * schedule): whatever is logged, rolled back and taken, the count is what `sqlWriteBytes` sums over
 * the entries the commit record gets.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { SqlWrite } from "../../src/durability/commit-record";
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
    const bytes = log.bytes;
    const taken = log.take();
    expect(taken).toHaveLength(mark + 2);
    expect(bytes).toBe(sum(taken));
    expect(log.bytes).toBe(0);
    engine.exec("COMMIT");
    engine.close();
  });

  it("starts from nothing after clear()", () => {
    const engine = factory.open();
    const log = new BatchSqlLog(new PerCallChanges());
    log.prepare(engine);
    log.statement(engine, write("INSERT INTO nowhere VALUES (?)", "abc"), 1, undefined);
    expect(log.bytes).toBeGreaterThan(0);
    log.clear();
    expect(log.bytes).toBe(0);
    expect(log.take()).toEqual([]);
    engine.close();
  });
});
