import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { SqlEngine, SqlEngineFactory } from "../../../src/engine/engine";
import { loadSqlJsEngine } from "../../../src/engine/sqljs";
import { KvTable } from "../../../src/storage/kv-table";
import { PLATFORM_ORDER, utf8Compare } from "./helpers";

let factory: SqlEngineFactory;
beforeAll(async () => {
  factory = await loadSqlJsEngine();
});

const b = (...xs: number[]): Uint8Array => Uint8Array.from(xs);

function open(): { engine: SqlEngine; table: KvTable } {
  const engine = factory.open();
  return { engine, table: new KvTable(engine) };
}

function scanKeys(table: KvTable, start: string, end: string | undefined, reverse: boolean, limit?: number): string[] {
  const keys: string[] = [];
  table.scan(start, end, reverse, limit, (k) => {
    keys.push(k);
    return true;
  });
  return keys;
}

describe("KvTable", () => {
  it("exists: the hidden tables are created lazily, on the first write", () => {
    const { engine, table } = open();
    expect(table.exists()).toBe(false);
    expect(table.get("a")).toBeUndefined();
    expect(table.getAlarm()).toBeNull();
    expect(scanKeys(table, "", undefined, false)).toEqual([]);
    expect(engine.query("SELECT name FROM sqlite_schema")).toEqual([]);
    table.write("a", b(1));
    expect(table.exists()).toBe(true);
  });

  it("ensure: creates _cf_KV WITHOUT ROWID; _cf_METADATA comes with the first alarm, exactly as the platform does", () => {
    // sqlite_master.sql as workerd's tables show it (its CREATE statements' own white space).
    const KV_SQL = "CREATE TABLE _cf_KV (\n        key TEXT PRIMARY KEY,\n        value BLOB\n      ) WITHOUT ROWID";
    const METADATA_SQL = "CREATE TABLE _cf_METADATA (\n        key INTEGER PRIMARY KEY,\n        value BLOB\n      )";
    const { engine, table } = open();
    const tables = () => engine.query("SELECT name, sql FROM sqlite_schema WHERE type = 'table' ORDER BY name");
    table.ensure();
    expect(tables()).toEqual([["_cf_KV", KV_SQL]]);
    table.ensure(); // idempotent
    // Clearing an alarm that was never set creates nothing; setting one creates the table.
    table.setAlarm(null);
    expect(table.getAlarm()).toBeNull();
    expect(tables()).toHaveLength(1);
    table.setAlarm(5);
    expect(tables()).toEqual([
      ["_cf_KV", KV_SQL],
      ["_cf_METADATA", METADATA_SQL],
    ]);
    expect(table.getAlarm()).toBe(5);
    table.setAlarm(null);
    expect(table.getAlarm()).toBeNull();
    expect(tables()).toHaveLength(2);
  });

  it("exists: notices tables created by another KvTable over the same engine", () => {
    const { engine, table } = open();
    new KvTable(engine).write("k", b(7));
    expect(table.exists()).toBe(true);
    expect(table.get("k")).toEqual(b(7));
  });

  it("write: inserts, overwrites and deletes (null)", () => {
    const { table } = open();
    table.write("k", b(1, 2));
    expect(table.get("k")).toEqual(b(1, 2));
    table.write("k", b(3));
    expect(table.get("k")).toEqual(b(3));
    table.write("k", null);
    expect(table.get("k")).toBeUndefined();
    table.write("never-there", null);
    expect(table.get("never-there")).toBeUndefined();
  });

  it("write: the empty key and keys with NUL, combining marks and astral characters are distinct", () => {
    const { table } = open();
    const keys = ["", "a", "a\u0000", "é", "e\u0301", "\uFFFF", "😀"];
    keys.forEach((k, i) => {
      table.write(k, b(i));
    });
    keys.forEach((k, i) => {
      expect(table.get(k), JSON.stringify(k)).toEqual(b(i));
    });
  });

  it("write: stores an empty value as an empty blob", () => {
    const { table } = open();
    table.write("e", new Uint8Array(0));
    expect(table.get("e")).toEqual(new Uint8Array(0));
  });

  it("scan: orders keys by UTF-8 bytes (BINARY collation), ascending and descending", () => {
    const { table } = open();
    for (const k of [...PLATFORM_ORDER].reverse()) table.write(k, b(0));
    expect(scanKeys(table, "", undefined, false)).toEqual(PLATFORM_ORDER);
    expect(scanKeys(table, "", undefined, true)).toEqual([...PLATFORM_ORDER].reverse());
  });

  it("scan: start is inclusive, end exclusive, in both directions; limit counts from the scan's start", () => {
    const { table } = open();
    for (const k of ["a", "ab", "abc", "b", "c"]) table.write(k, b(0));
    expect(scanKeys(table, "ab", "c", false)).toEqual(["ab", "abc", "b"]);
    expect(scanKeys(table, "ab", "c", true)).toEqual(["b", "abc", "ab"]);
    expect(scanKeys(table, "ab", "c", true, 2)).toEqual(["b", "abc"]);
    expect(scanKeys(table, "ab", undefined, false, 2)).toEqual(["ab", "abc"]);
    expect(scanKeys(table, "ab", undefined, true, 1)).toEqual(["c"]);
  });

  it("scan: stops when the visitor returns false", () => {
    const { table } = open();
    for (const k of ["a", "b", "c"]) table.write(k, b(0));
    const seen: string[] = [];
    table.scan("", undefined, false, undefined, (k) => {
      seen.push(k);
      return seen.length < 2;
    });
    expect(seen).toEqual(["a", "b"]);
    // The statement was reset, so the next scan starts over.
    expect(scanKeys(table, "", undefined, false)).toEqual(["a", "b", "c"]);
  });

  it("scan: matches a filter-and-sort over random keys and ranges", () => {
    const { engine, table } = open();
    table.ensure();
    const key = fc.string({ unit: "binary", maxLength: 3 });
    fc.assert(
      fc.property(
        fc.uniqueArray(key, { maxLength: 15 }),
        key,
        fc.option(key, { nil: undefined }),
        fc.boolean(),
        fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
        (keys, start, end, reverse, limit) => {
          engine.exec("DELETE FROM _cf_KV");
          for (const k of keys) table.write(k, b(1));
          let expected = keys
            .filter((k) => utf8Compare(k, start) >= 0 && (end === undefined || utf8Compare(k, end) < 0))
            .sort(utf8Compare);
          if (reverse) expected.reverse();
          if (limit !== undefined) expected = expected.slice(0, limit);
          expect(scanKeys(table, start, end, reverse, limit)).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("setAlarm: stores the time in nanoseconds in _cf_METADATA key 1 and reads it back in ms", () => {
    const { engine, table } = open();
    const ms = 1_767_225_600_123;
    table.setAlarm(ms);
    expect(table.getAlarm()).toBe(ms);
    const [row] = engine.query("SELECT value FROM _cf_METADATA WHERE key = 1");
    expect(row?.[0]).toBeCloseTo(ms * 1_000_000, -4);
    table.setAlarm(null);
    expect(table.getAlarm()).toBeNull();
    expect(engine.query("SELECT value FROM _cf_METADATA WHERE key = 1")).toEqual([[null]]);
  });

  it("setAlarm: round-trips whole milliseconds across the range of plausible times", () => {
    const { table } = open();
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (ms) => {
        table.setAlarm(ms);
        expect(table.getAlarm()).toBe(ms);
      }),
      { numRuns: 300 },
    );
  });

  it("dispose: frees the prepared statements; the table prepares new ones when used again", () => {
    const { table } = open();
    table.write("a", b(1));
    table.dispose();
    expect(table.get("a")).toEqual(b(1));
  });
});
