/**
 * The engine's database file on a paged file (sqljs-paged-file.ts): a database grown over many
 * chunks holds exactly what it was given (exported, reopened, or read straight from the chunks);
 * a new one answers as a new SQLite database; and when the file system takes the file back (a
 * VACUUM truncates it) or never takes the paged file (an empty image), the database keeps working.
 */
import { describe, expect, test } from "vitest";
import type { SqlEngine } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import type { SqlJsEngine } from "../../src/engine/sqljs-engine";

const factory = await loadSqlJsEngine();
const paged = (engine: SqlEngine) => (engine as SqlJsEngine).pagedFile;

/** Inserts rows `from`…`from + count - 1` with values of 700–1,400 bytes (some spill to overflow pages). */
function fill(engine: SqlEngine, from: number, count: number, tag: string): void {
  engine.exec("BEGIN");
  const stmt = engine.prepare("INSERT OR REPLACE INTO t VALUES (?, ?)");
  for (let i = from; i < from + count; i++) {
    stmt.bind([i, `${tag}:${i}:`.padEnd(700 + ((i * 37) % 700), String.fromCharCode(97 + (i % 26)))], "integer");
    while (stmt.step());
    stmt.reset();
  }
  stmt.free();
  engine.exec("COMMIT");
}

const dump = (engine: SqlEngine) => ({
  rows: engine.query("SELECT k, v FROM t ORDER BY k"),
  integrity: engine.query("PRAGMA integrity_check"),
  schema: engine.query("SELECT type, name, sql FROM sqlite_schema ORDER BY name"),
  user: engine.query("PRAGMA user_version"),
});

describe("the database file on chunks", () => {
  test("a database grown over many chunks dumps identically exported, reopened, and read from the chunks", () => {
    const engine = factory.open();
    const file = paged(engine);
    if (file === undefined) throw new Error("this sql.js build takes the paged file (the load-time probe passed)");
    engine.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT); PRAGMA user_version = 7");
    for (let round = 0; round < 8; round++) {
      fill(engine, round * 800, 800, `r${round}`);
      // Rewrites spread over the file, and deletes (free pages reused by later rounds).
      fill(engine, (round * 331) % 5000, 100, `u${round}`);
      engine.exec(`DELETE FROM t WHERE k % 17 = ${round}`);
    }
    const pageBytes =
      Number(engine.query("PRAGMA page_count")[0]?.[0]) * Number(engine.query("PRAGMA page_size")[0]?.[0]);
    expect(pageBytes).toBeGreaterThan(20 * file.chunkBytes);
    expect(file.size).toBe(pageBytes);
    expect(file.allocatedChunks).toBeGreaterThan(20);
    const expected = dump(engine);
    expect(expected.integrity).toEqual([["ok"]]);

    const exported = factory.open(engine.exportBytes());
    expect(paged(exported)).toBeDefined();
    expect(dump(exported)).toEqual(expected);
    const fromChunks = factory.open(file.slice(0, file.size));
    expect(dump(fromChunks)).toEqual(expected);
    // The reopened database is paged too, and keeps growing there.
    fill(exported, 10_000, 500, "more");
    fill(engine, 10_000, 500, "more");
    expect(dump(exported)).toEqual(dump(engine));
    expect((exported as SqlJsEngine).writesReachPagedFile()).toBe(true);
    for (const e of [engine, exported, fromChunks]) e.close();
  });

  test("a new database on a paged file answers as a new SQLite database", () => {
    const engine = factory.open();
    expect(paged(engine)).toBeDefined();
    // The image it opens from was exported, which moves the schema cookie; it is set back.
    expect(engine.query("PRAGMA schema_version")).toEqual([[0]]);
    expect(engine.query("PRAGMA freelist_count")).toEqual([[0]]);
    engine.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)");
    expect(engine.query("PRAGMA schema_version")).toEqual([[1]]);
    engine.close();
  });

  test("after a VACUUM the file system owns the file again: writes no longer reach the chunks, and nothing is lost", () => {
    const engine = factory.open();
    const file = paged(engine);
    if (file === undefined) throw new Error("expected a paged file");
    engine.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)");
    fill(engine, 0, 3000, "a");
    engine.exec("DELETE FROM t WHERE k >= 500");
    engine.exec("VACUUM");
    const writes = file.writes;
    expect((engine as SqlJsEngine).writesReachPagedFile()).toBe(false);
    fill(engine, 400, 2000, "b");
    expect(file.writes).toBe(writes);
    const reopened = factory.open(engine.exportBytes());
    expect(dump(reopened)).toEqual(dump(engine));
    expect(engine.query("SELECT count(*) FROM t")).toEqual([[2400]]);
    reopened.close();
    engine.close();
  });

  test("an image the file system does not hand to the paged file (empty) opens a working database without it", () => {
    const engine = factory.open(new Uint8Array(0));
    expect(paged(engine)).toBeUndefined();
    engine.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)");
    fill(engine, 0, 4000, "c");
    const reopened = factory.open(engine.exportBytes());
    expect(dump(reopened)).toEqual(dump(engine));
    expect(dump(reopened).integrity).toEqual([["ok"]]);
    reopened.close();
    engine.close();
  });

  test("exportBytes copies the chunks between transactions; inside one it refuses as sql.js's export does", () => {
    const engine = factory.open();
    const file = paged(engine);
    if (file === undefined) throw new Error("expected a paged file");
    engine.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT); PRAGMA user_version = 3");
    fill(engine, 0, 2000, "e");
    const image = engine.exportBytes();
    // Byte for byte (Buffer.equals: a deep comparison of megabytes takes minutes).
    expect(Buffer.from(image).equals(file.slice(0, file.size))).toBe(true);
    const expected = dump(engine);
    engine.exec("BEGIN");
    engine.exec("INSERT INTO t VALUES (5000, 'inside'); PRAGMA user_version = 4");
    expect(() => engine.exportBytes()).toThrow(/busy|locked/i);
    engine.exec("ROLLBACK");
    expect(dump(engine)).toEqual(expected);
    const reopened = factory.open(image);
    expect(dump(reopened)).toEqual(expected);
    reopened.close();
    engine.close();
  });
  test("freezeImage holds the committed image in place while the database keeps changing; none inside a transaction", () => {
    const engine = factory.open();
    const file = paged(engine);
    if (file === undefined) throw new Error("expected a paged file");
    engine.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT); PRAGMA user_version = 7");
    fill(engine, 0, 2000, "f");
    const expected = dump(engine);
    const frozen = (engine as SqlJsEngine).freezeImage();
    if (frozen === undefined) throw new Error("expected a frozen image");
    // The file's bytes at the freeze (each freeze or export rewrites a header field first, which
    // moves the file change counter: the same moment's bytes are the file's, not another export's).
    const exported = file.slice(0, file.size);
    const image = () => new Uint8Array(Buffer.concat(frozen.parts.map((p) => Buffer.from(p))));
    expect(frozen.byteLength).toBe(exported.length);
    expect(Buffer.from(image()).equals(exported)).toBe(true);
    expect(file.frozenChunks).toBe(Math.ceil(exported.length / file.chunkBytes));
    // Rewrites all over the file, growth past the frozen end, then a VACUUM (the file system takes
    // the file back): the frozen image never changes.
    fill(engine, 0, 500, "rewritten");
    fill(engine, 5000, 2000, "grown");
    engine.exec("DELETE FROM t WHERE k % 3 = 0; PRAGMA user_version = 8");
    const after = dump(engine);
    engine.exec("VACUUM");
    expect(Buffer.from(image()).equals(exported)).toBe(true);
    const reopened = factory.open(image());
    expect(dump(reopened)).toEqual(expected);
    reopened.close();
    frozen.release();
    expect(dump(engine)).toEqual(after);
    // After the VACUUM the chunks are no longer the file: nothing to freeze in place.
    expect((engine as SqlJsEngine).freezeImage()).toBeUndefined();
    engine.close();

    const busy = factory.open();
    busy.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)");
    busy.exec("BEGIN");
    busy.exec("INSERT INTO t VALUES (1, 'inside')");
    // Inside a transaction the header rewrite waits for the commit: the file is not the committed state.
    expect((busy as SqlJsEngine).freezeImage()).toBeUndefined();
    busy.exec("ROLLBACK");
    expect(busy.query("SELECT count(*) FROM t")).toEqual([[0]]);
    busy.close();
  });

  test("an image opened with 'share' is read in place and never changed; with 'take' it becomes the file", () => {
    const engine = factory.open();
    engine.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT); PRAGMA user_version = 5");
    fill(engine, 0, 3000, "s");
    const image = engine.exportBytes();
    const expected = dump(engine);
    const pristine = image.slice();

    const shared = factory.open(image, "share");
    const sharedFile = paged(shared);
    if (sharedFile === undefined) throw new Error("expected a paged file");
    // Nothing but the header's chunk was copied at open (opening as the platform does switches the
    // journal mode, which writes page 1): every other chunk is still a view of the caller's image.
    const chunks = Math.ceil(image.length / sharedFile.chunkBytes);
    expect(chunks).toBeGreaterThan(4);
    expect(sharedFile.sharedChunks).toBeGreaterThanOrEqual(chunks - 1);
    expect(dump(shared)).toEqual(expected);
    fill(shared, 100, 400, "w");
    fill(shared, 9000, 2000, "grow");
    shared.exec("DELETE FROM t WHERE k % 5 = 0; PRAGMA user_version = 6");
    fill(engine, 100, 400, "w");
    fill(engine, 9000, 2000, "grow");
    engine.exec("DELETE FROM t WHERE k % 5 = 0; PRAGMA user_version = 6");
    expect(dump(shared)).toEqual(dump(engine));
    expect(Buffer.from(image).equals(pristine)).toBe(true);
    // The image still opens as the state it held.
    const again = factory.open(image, "share");
    expect(dump(again)).toEqual(expected);

    const taken = factory.open(pristine, "take");
    const takenFile = paged(taken);
    if (takenFile === undefined) throw new Error("expected a paged file");
    expect(takenFile.sharedChunks).toBe(0);
    expect(takenFile.subarray(0, 16).buffer).toBe(pristine.buffer);
    taken.exec("PRAGMA user_version = 9");
    expect(new DataView(pristine.buffer, pristine.byteOffset).getInt32(60)).toBe(9);
    expect(dump(taken)).toEqual({ ...expected, user: [[9]] });
    for (const e of [engine, shared, again, taken]) e.close();
  });
});
