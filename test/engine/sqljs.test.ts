import fc from "fast-check";
import { beforeEach, describe, expect, test } from "vitest";
import { EngineError, type SqlEngine } from "../../src/engine/engine";
import type { WasmHeap } from "../../src/engine/sqljs";
import { loadSqlJsEngine } from "../../src/engine/sqljs";

let engine: SqlEngine;

beforeEach(async () => {
  engine = (await loadSqlJsEngine()).open();
});

const NOW_SQL = "SELECT CAST(strftime('%s', 'now') AS INTEGER) * 1000";

describe("sql.js engine", () => {
  test("bind: numbers as REAL or INTEGER, strings (with NULs and lone surrogates), NULL, blobs", () => {
    const s = engine.prepare("SELECT typeof(?1), typeof(?2), ?3, length(?3), ?4, ?5");
    s.bind([1, 1, "a\u0000b", null, new Uint8Array([1, 2])], "real");
    expect(s.step()).toBe(true);
    const row = s.row();
    expect(row.slice(0, 4)).toEqual(["real", "real", "a\u0000b", 1]);
    expect(row[4]).toBeNull();
    expect([...(row[5] as Uint8Array)]).toEqual([1, 2]);
    s.bind([1], "integer");
    s.step();
    expect(s.row()[0]).toBe("integer");
    s.bind(["\uD800x"], "real");
    s.step();
    expect(s.row()[2]).toBeNull(); // ?3 unbound after a rebind: NULL
    s.free();
  });

  test("bind: rebinding fewer values leaves the rest NULL, also after a step", () => {
    const s = engine.prepare("SELECT ?1, ?2");
    s.bind(["x", 2], "real");
    s.step();
    expect(s.row()).toEqual(["x", 2]);
    s.bind(["y"], "real");
    s.step();
    expect(s.row()).toEqual(["y", null]);
    s.reset();
    s.bind([], "real");
    s.step();
    expect(s.row()).toEqual([null, null]);
    s.free();
  });

  test("blobs of every size come back exactly, also after the WASM memory grew", () => {
    engine.exec("CREATE TABLE b (k INTEGER PRIMARY KEY, v BLOB)");
    const insert = engine.prepare("INSERT INTO b VALUES (?, ?)");
    const sizes = [0, 1, 64, 65, 1000, 100_000];
    const blobs = sizes.map((n, i) => Uint8Array.from({ length: n }, (_, j) => (i * 31 + j) & 0xff));
    for (const [i, blob] of blobs.entries()) {
      insert.bind([i, blob], "integer");
      insert.step();
    }
    const read = () => engine.query("SELECT v FROM b ORDER BY k").map((row) => [...(row[0] as Uint8Array)]);
    expect(read()).toEqual(blobs.map((b) => [...b]));
    const before = (engine as unknown as { heap: WasmHeap }).heap.bytes;
    // Copying 64 MiB into the heap to bind it makes Emscripten grow the memory (detaching the old
    // buffer); SQLite then refuses the value (over the platform's 2,200,000-byte limit).
    expect(() => insert.bind([99, new Uint8Array(64 * 1024 * 1024)], "integer")).toThrow(/too big/);
    expect(before.byteLength).toBe(0);
    expect(read()).toEqual(blobs.map((b) => [...b]));
    const [row] = engine.query("SELECT v FROM b WHERE k = 5");
    const bytes = row?.[0] as Uint8Array;
    expect(bytes.byteOffset).toBe(0);
    expect(bytes.buffer.byteLength).toBe(100_000); // a buffer of its own, not a view of the heap
    insert.free();
  });

  test("readColumn: a blob as its range of the heap while the callback runs, other types as column() reads them", () => {
    engine.exec("CREATE TABLE r (k INTEGER PRIMARY KEY, v)");
    const insert = engine.prepare("INSERT INTO r VALUES (?, ?)");
    const blob = Uint8Array.from({ length: 5000 }, (_, j) => (j * 7) & 0xff);
    const rows: Array<[number, Uint8Array | string | number | null]> = [
      [1, blob],
      [2, new Uint8Array(0)],
      [3, "téxt\u0000"],
      [4, 2.5],
      [5, null],
    ];
    for (const [k, v] of rows) {
      insert.bind([k, v], "real");
      insert.step();
    }
    insert.free();
    const heap = (engine as unknown as { heap: WasmHeap }).heap;
    const s = engine.prepare("SELECT v FROM r ORDER BY k");
    s.bind([], "real");
    const seen: unknown[] = [];
    while (s.step()) {
      const column = s.column(0);
      seen.push(
        s.readColumn(0, (v, start, end) => {
          if (!(v instanceof Uint8Array)) {
            expect([start, end]).toEqual([0, 0]);
            expect(v).toEqual(column);
            return v;
          }
          // A non-empty blob: the heap itself (no copy, no view), the blob at [start, end) of it.
          if (end > start) expect(v).toBe(heap.bytes);
          else expect(v).toEqual(new Uint8Array(0));
          expect(v.subarray(start, end)).toEqual(column);
          return [...v.subarray(start, end)];
        }),
      );
    }
    s.free();
    expect(seen).toEqual([[...blob], [], "téxt\u0000", 2.5, null]);
  });

  test("eachPair hands every row as step(), column(0) and readColumn(1) read it, stops where the visit says, and skips declined second columns", () => {
    engine.exec("CREATE TABLE p (i INTEGER PRIMARY KEY, a, b)");
    const insert = engine.prepare("INSERT INTO p VALUES (?, ?, ?)");
    const text = fc.string({ unit: "binary", maxLength: 40 });
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.integer({ min: 0, max: 9000 }).map((n) => Uint8Array.from({ length: n }, (_, j) => (j * 13 + n) & 0xff)),
    );
    const cell = fc.oneof(text, bytes, fc.double({ noNaN: true }), fc.constant(null));
    const heap = (engine as unknown as { heap: WasmHeap }).heap;
    const s = engine.prepare("SELECT a, b FROM p ORDER BY i");
    fc.assert(
      fc.property(fc.array(fc.tuple(cell, cell), { maxLength: 30 }), fc.nat(40), (rows, stopAt) => {
        engine.exec("DELETE FROM p");
        for (const [i, [a, b]] of rows.entries()) {
          insert.bind([i, a, b], "real");
          insert.step();
        }
        // What the per-row calls read: the first column, the second as a fresh copy of its bytes.
        const expected: unknown[] = [];
        s.bind([], "real");
        while (s.step()) {
          expected.push([
            s.column(0),
            s.readColumn(1, (v, start, end) => (v instanceof Uint8Array ? [...v.subarray(start, end)] : v)),
          ]);
        }
        const seen: unknown[] = [];
        s.bind([], "real");
        s.eachPair((first, second, start, end) => {
          if (second instanceof Uint8Array) {
            if (end > start) expect(second).toBe(heap.bytes);
            else expect([second.byteLength, start, end]).toEqual([0, 0, 0]);
            seen.push([first, [...second.subarray(start, end)]]);
          } else {
            expect([start, end]).toEqual([0, 0]);
            seen.push([first, second]);
          }
          return seen.length <= stopAt;
        });
        expect(seen).toEqual(expected.slice(0, Math.min(expected.length, stopAt + 1)));
        // After a stop the statement is where step() would be: the next step reads the next row.
        if (stopAt + 1 < expected.length) {
          expect(s.step()).toBe(true);
          expect(s.column(0)).toEqual((expected[stopAt + 1] as unknown[])[0]);
        }
        s.reset();
        // With wantsSecond, the rows it declines come without their second column, the others as before.
        const wanted = (first: unknown): boolean => JSON.stringify(first).length % 2 === 0;
        const partial: unknown[] = [];
        s.bind([], "real");
        s.eachPair(
          (first, second, start, end) => {
            if (!wanted(first)) {
              expect([second instanceof Uint8Array && second.byteLength, start, end]).toEqual([0, 0, 0]);
              partial.push([first, "declined"]);
            } else partial.push([first, second instanceof Uint8Array ? [...second.subarray(start, end)] : second]);
            return true;
          },
          (first) => wanted(first),
        );
        expect(partial).toEqual(
          expected.map((row) => {
            const [first, second] = row as [unknown, unknown];
            return [first, wanted(first) ? second : "declined"];
          }),
        );
        s.reset();
      }),
      { numRuns: 40 },
    );
    s.free();
    insert.free();
  });

  test("eachPair: first-column TEXT comes back as bound (a lone surrogate kept, stored as WTF-8), column() reads U+FFFD; returns whether it met one", () => {
    engine.exec("CREATE TABLE w (k TEXT PRIMARY KEY, v)");
    const insert = engine.prepare("INSERT INTO w VALUES (?, ?)");
    const keys = ["a\uD800b", "a\uFFFDb", `${"x".repeat(40)}\uDC00`, "\uDBFF\uDBFF", "plain", "é\uFFFD"];
    for (const k of keys) {
      insert.bind([k, 1], "integer");
      insert.step();
    }
    insert.free();
    expect(engine.query("SELECT hex(k) FROM w WHERE v = 1 AND k LIKE 'a%' ORDER BY k")).toEqual([
      ["61EDA08062"],
      ["61EFBFBD62"],
    ]);
    const scan = (sql: string) => {
      const s = engine.prepare(sql);
      s.bind([], "integer");
      const firsts: unknown[] = [];
      const lone = s.eachPair((first) => void firsts.push(first));
      s.free();
      return { firsts, lone };
    };
    const all = scan("SELECT k, v FROM w ORDER BY rowid");
    expect(all).toEqual({ firsts: keys, lone: true });
    expect(scan("SELECT k, v FROM w WHERE k IN ('plain', 'a\uFFFDb', 'é\uFFFD') ORDER BY k")).toEqual({
      firsts: ["a\uFFFDb", "plain", "é\uFFFD"],
      lone: false,
    });
    expect(engine.query("SELECT k FROM w WHERE v = 1 ORDER BY rowid LIMIT 1")).toEqual([["a\uFFFD\uFFFD\uFFFDb"]]);
  });

  test("eachPair: a step that fails mid-scan throws the engine's error after the rows before it", () => {
    engine.exec("CREATE TABLE f (i INTEGER PRIMARY KEY, v)");
    engine.exec("INSERT INTO f VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    const s = engine.prepare("SELECT i, CASE WHEN i = 3 THEN abs(-9223372036854775808) ELSE v END FROM f ORDER BY i");
    s.bind([], "real");
    const seen: unknown[] = [];
    expect(() => s.eachPair((first, second) => void seen.push([first, second]))).toThrow(EngineError);
    expect(seen).toEqual([
      [1, "a"],
      [2, "b"],
    ]);
    s.free();
    expect(() => s.eachPair(() => true)).toThrow(/closed/);
  });

  test("step(nowMs) pins SQLite's 'now' for that step only and restores Date.now", () => {
    const original = Date.now;
    const s = engine.prepare(NOW_SQL);
    s.bind([], "real");
    expect(s.step(86_400_000)).toBe(true);
    expect(s.row()).toEqual([86_400_000]);
    expect(Date.now).toBe(original);
    s.reset();
    s.step();
    expect(Number(s.row()[0])).toBeGreaterThan(1_700_000_000_000);
    s.free();
  });

  test("withNow nests with step(nowMs): the inner time applies inside, the outer one after", () => {
    const original = Date.now;
    const s = engine.prepare(NOW_SQL);
    const seen = engine.withNow(2_000_000, () => {
      s.bind([], "real");
      s.step(5_000_000);
      const inner = s.row()[0];
      s.reset();
      s.step();
      return [inner, s.row()[0], Date.now()];
    });
    expect(seen).toEqual([5_000_000, 2_000_000, 2_000_000]);
    expect(Date.now).toBe(original);
    s.free();
  });

  test("a failing step restores Date.now and reports SQLite's result code", () => {
    const original = Date.now;
    engine.exec("CREATE TABLE t (x UNIQUE)");
    engine.exec("INSERT INTO t VALUES (1)");
    const s = engine.prepare("INSERT INTO t VALUES (?)");
    s.bind([1], "integer");
    let error: unknown;
    try {
      s.step(1_000);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).resultCode).toBe(19);
    expect((error as EngineError).sqliteMessage).toBe("UNIQUE constraint failed: t.x");
    expect(Date.now).toBe(original);
    s.free();
  });

  test("exec: transaction control runs compiled once, repeatedly, with SQLite's errors", () => {
    engine.exec("CREATE TABLE t (x)");
    for (let i = 0; i < 3; i++) {
      engine.exec("BEGIN");
      engine.exec("SAVEPOINT sp_0");
      engine.exec(`INSERT INTO t VALUES (${i})`);
      engine.exec("ROLLBACK TO sp_0");
      engine.exec("RELEASE sp_0");
      engine.exec(`INSERT INTO t VALUES (${i})`);
      engine.exec(i === 1 ? "ROLLBACK" : "COMMIT");
    }
    expect(engine.query("SELECT x FROM t ORDER BY x")).toEqual([[0], [2]]);
    let error: unknown;
    try {
      engine.exec("COMMIT");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).sqliteMessage).toBe("cannot commit - no transaction is active");
    expect((error as EngineError).resultCode).toBe(1);
    engine.exec("BEGIN"); // the failed COMMIT left the compiled statement usable
    engine.exec("COMMIT");
  });

  test("parameterCount: the largest ?NNN; prepareHead: one statement and the rest", () => {
    expect(engine.prepare("SELECT ?, ?5").parameterCount()).toBe(5);
    expect(engine.prepare("SELECT 1").parameterCount()).toBe(0);
    const head = engine.prepareHead("SELECT 1; SELECT 2");
    expect(head.statement?.sql).toBe("SELECT 1;");
    expect(head.tail).toBe(" SELECT 2");
    expect(engine.prepareHead("  -- nothing\n").statement).toBeNull();
    // SQLite's input ends at a NUL; what follows is still unparsed remainder, not dropped.
    const cut = engine.prepareHead("SELECT 1; SELECT 2\0; DROP TABLE t");
    expect(cut.statement?.sql).toBe("SELECT 1;");
    expect(cut.tail).toBe(" SELECT 2\0; DROP TABLE t");
  });

  test("freed statements and a closed engine refuse work with SQLITE_MISUSE", () => {
    const s = engine.prepare("SELECT 1");
    s.free();
    expect(s.freed).toBe(true);
    expect(() => s.step()).toThrow("Statement closed");
    const t = engine.prepare("SELECT 1");
    engine.close();
    expect(t.freed).toBe(true);
    expect(() => engine.prepare("SELECT 1")).toThrow("Database closed");
  });
});

describe("functions of many connections through one trampoline (sqljs.ts)", () => {
  test("createFunction: every value type in and out, errors as SQL errors, any arity", () => {
    const seen: unknown[][] = [];
    engine.createFunction("echo", 1, (v) => {
      seen.push([v]);
      return v;
    });
    engine.createFunction("fail", 0, () => {
      throw new Error("refused by the function");
    });
    engine.createFunction("five", 5, (...args) => args.length);
    const [row] = engine.query("SELECT echo(NULL), echo(7), echo(2.5), echo(?), echo(x'00ff'), five(1,2,3,4,5)", [
      "tëxt\u0000x",
    ]);
    expect(row?.slice(0, 4)).toEqual([null, 7, 2.5, "tëxt\u0000x"]);
    expect([...((row?.[4] ?? new Uint8Array(1)) as Uint8Array)]).toEqual([0, 255]);
    expect(row?.[5]).toBe(5);
    expect(engine.query("SELECT typeof(echo(7)), typeof(echo('a')), typeof(echo(x'01'))")).toEqual([
      ["real", "text", "blob"],
    ]);
    expect(seen.length).toBe(8);
    let error: unknown;
    try {
      engine.query("SELECT fail()");
    } catch (e) {
      error = e;
    }
    expect((error as EngineError).sqliteMessage).toBe("refused by the function");
  });

  test("createFunction with directOnly: callable in a statement, refused in a view or a trigger", () => {
    engine.createFunction("direct_only", 1, (v) => v, { directOnly: true });
    expect(engine.query("SELECT direct_only(3)")).toEqual([[3]]);
    engine.exec("CREATE VIEW uses_direct AS SELECT direct_only(1) AS v");
    engine.exec("CREATE TABLE direct_t (a)");
    engine.exec("CREATE TRIGGER direct_tr AFTER INSERT ON direct_t BEGIN SELECT direct_only(NEW.a); END");
    const message = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return (e as EngineError).sqliteMessage;
      }
      return undefined;
    };
    expect(message(() => engine.query("SELECT * FROM uses_direct"))).toBe("unsafe use of direct_only()");
    expect(message(() => engine.exec("INSERT INTO direct_t VALUES (1)"))).toBe("unsafe use of direct_only()");
    engine.exec("DROP VIEW uses_direct; DROP TABLE direct_t");
  });

  test("each connection's random(), randomblob() and connection inputs answer from its own sources", async () => {
    const factory = await loadSqlJsEngine();
    const engines = Array.from({ length: 40 }, (_, i) => {
      const e = factory.open();
      e.setRandomSource({
        nextInt64: () => BigInt(i) * 1_000_000_000_000n,
        nextBytes: (n) => new Uint8Array(n).fill(i),
      });
      e.setConnectionInputs({ value: (name, live) => (name === "changes" ? BigInt(1000 + i) : live()) });
      return e;
    });
    // Close every other one: the rest keep their own functions.
    for (const [i, e] of engines.entries()) if (i % 2 === 1) e.close();
    for (const [i, e] of engines.entries()) {
      if (i % 2 === 1) continue;
      e.exec("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)");
      const [row] = e.query("SELECT random(), typeof(random()), hex(randomblob(2)), changes(), total_changes()");
      expect(row).toEqual([
        i * 1e12,
        "integer",
        (i.toString(16).padStart(2, "0") + "").repeat(2).toUpperCase(),
        1000 + i,
        2,
      ]);
    }
    for (const e of engines) e.close();
  });

  test("randomblob beyond the length limit fails before the source is asked", () => {
    let asked = 0;
    engine.setRandomSource({
      nextInt64: () => 1n,
      nextBytes: (n) => {
        asked++;
        return new Uint8Array(n);
      },
    });
    expect(() => engine.query("SELECT randomblob(1e9)")).toThrow(/too big/);
    expect(asked).toBe(0);
    expect(engine.query("SELECT length(randomblob(0)), length(randomblob(-5)), length(randomblob(3))")).toEqual([
      [1, 1, 3],
    ]);
  });
});

describe("reading TEXT columns", () => {
  test("property: column() and row() read any stored bytes as TextDecoder does, a leading byte-order mark kept (short ASCII without it)", () => {
    // ignoreBOM: a leading U+FEFF is a character of the stored text (the platform returns it).
    const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    const s = engine.prepare("SELECT CAST(?1 AS TEXT), CAST(?2 AS TEXT)");
    // Mostly short ASCII (the fast path), then every kind of byte: NULs, invalid and incomplete
    // sequences, encoded surrogates, byte-order marks, and runs past the fast path's length.
    const ascii = fc.uint8Array({ max: 0x7f, maxLength: 80 });
    const any = fc.array(
      fc.oneof(
        fc.integer({ min: 0, max: 0xff }).map((b) => [b]),
        fc.constantFrom([0xef, 0xbb, 0xbf], [0xed, 0xb0, 0x80], [0xf0, 0x9f, 0x98, 0x80], [0xc3], [0]),
      ),
      { maxLength: 40 },
    );
    const bytes = fc.oneof(
      ascii,
      any.map((p) => new Uint8Array(p.flat())),
    );
    fc.assert(
      fc.property(bytes, bytes, (a, b) => {
        s.bind([a, b], "real");
        expect(s.step()).toBe(true);
        expect(s.column(0)).toBe(decoder.decode(a));
        expect(s.column(1)).toBe(decoder.decode(b));
        expect(s.row()).toEqual([decoder.decode(a), decoder.decode(b)]);
        s.reset();
      }),
      { numRuns: 1500 },
    );
    s.free();
  });
});

describe("binding from the statement's block", () => {
  test("property: text and small blobs in the binding block, mixed with values that do not fit, come back exactly on every row and after every rebind", () => {
    // ASCII with NULs (the block's path), other well-formed text (encoded into the block while it
    // has room, else into a copy of its own: up to 200 graphemes of up to 4 bytes each, and long
    // ASCII), blobs that fit and that do not.
    const ascii = fc.string({
      unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)),
      maxLength: 40,
    });
    const value = fc.oneof(
      ascii,
      fc.string({ unit: "grapheme", maxLength: 40 }),
      fc.string({ unit: "grapheme", minLength: 20, maxLength: 200 }),
      fc.string({
        unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)),
        minLength: 32,
        maxLength: 400,
      }),
      fc.uint8Array({ maxLength: 300 }),
      fc.uint8Array({ minLength: 300, maxLength: 700 }),
    );
    engine.exec("CREATE TABLE seq (n INTEGER)");
    engine.exec("INSERT INTO seq VALUES (1), (2), (3)");
    // Three rows per run: the bound values are read again on every step.
    const s = engine.prepare("SELECT ?1, ?2, ?3, ?4, ?5 FROM seq");
    const plain = (v: unknown) => (v instanceof Uint8Array ? { blob: [...v] } : v);
    fc.assert(
      fc.property(fc.tuple(value, value, value, value, value), (values) => {
        s.bind(values, "real");
        for (let row = 0; row < 3; row++) {
          expect(s.step()).toBe(true);
          expect(s.row().map(plain)).toEqual(values.map(plain));
        }
        expect(s.step()).toBe(false);
        s.reset();
      }),
      { numRuns: 400 },
    );
    s.free();
  });
});
