/**
 * A new session of an object starts on a new connection on the platform: `changes()`,
 * `total_changes()` and `last_insert_rowid()` read 0 there, whatever the session before ran. Here a
 * new session may reuse the connection (after `abort()`) or open one that replayed the log (a
 * restart, a restored bookmark), so the engine's counters are set back to 0 when a session starts
 * (batch-sql-log.ts, docs/semantics.md).
 *
 * workerd's side: `ctx.abort()` resets the object, and the next request runs on a new instance
 * with a new connection. The same class runs in an ObjectContext here; what clients see is compared.
 * A restart from the commit log (with and without a snapshot) and a restored bookmark are compared
 * with the state workerd's new connection shows.
 */
import { randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import type { PersistenceAdapter } from "../../src/durability/persistence";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";
import { classFromSource, objectWorker, ourSide, startMiniflare, workerdSide } from "./same-source";
import { DEFAULT_COMPATIBILITY_DATE } from "./workerd";

const SOURCE = `
class CounterProbe {
  constructor(ctx) {
    this.ctx = ctx;
  }
  async fetch(request) {
    const sql = this.ctx.storage.sql;
    const state = () => {
      const cursor = sql.exec("SELECT changes() AS c, total_changes() AS t, last_insert_rowid() AS r");
      return { ...cursor.one(), read: cursor.rowsRead, written: cursor.rowsWritten };
    };
    switch (new URL(request.url).pathname) {
      case "/write":
        sql.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v)");
        sql.exec("INSERT INTO t (v) VALUES (1), (2), (3)");
        return Response.json(state());
      case "/kv":
        await this.ctx.storage.put("k", 1);
        return Response.json(state());
      case "/state":
        return Response.json(state());
      case "/abort":
        this.ctx.abort();
        return Response.json(null);
    }
    return new Response("unknown path", { status: 404 });
  }
}`;

const PATHS = ["/kv", "/write", "/state", "/abort", "/state", "/write", "/abort", "/kv", "/state", "/abort", "/state"];

let mf: Miniflare;

beforeAll(async () => {
  mf = await startMiniflare([objectWorker("counters", SOURCE, "CounterProbe", DEFAULT_COMPATIBILITY_DATE)]);
});

afterAll(async () => {
  await mf.dispose();
});

describe("connection counters of a new session, against workerd", () => {
  it("after abort(), changes(), total_changes() and last_insert_rowid() read as on workerd's new connection", async () => {
    const workerd = await workerdSide(mf, "counters", randomUUID());
    const context = await ObjectContext.create(classFromSource(SOURCE, "CounterProbe"), { id: randomUUID() });
    const ours = ourSide(context);
    const theirs = [];
    const seen = [];
    for (const path of PATHS) {
      theirs.push({ path, outcome: await workerd.request(path) });
      seen.push({ path, outcome: await ours.request(path) });
    }
    // The session before the first abort() changed all three: the comparison is not of zeros only.
    expect(theirs[2]?.outcome).toMatchObject({ ok: true, body: { c: 3, t: 4, r: 3 } });
    expect(seen).toEqual(theirs);
  });

  it("after a restart from the log (with and without a snapshot) and a restored bookmark, they read as on workerd's new connection", async () => {
    const workerd = await workerdSide(mf, "counters", randomUUID());
    await workerd.request("/write");
    await workerd.request("/abort");
    const fresh = await workerd.request("/state");
    expect(fresh.ok).toBe(true);
    const expected = fresh.ok ? fresh.body : undefined;

    const clock = new FakeClock();
    const persistence = createMemoryPersistence();
    const engineFactory = await loadSqlJsEngine();
    const open = (p: PersistenceAdapter) => ObjectStorage.open({ persistence: p, clock, engineFactory });
    const state = (storage: ObjectStorage) => {
      const cursor = storage.sql.exec<{ c: number; t: number; r: number }>(
        "SELECT changes() AS c, total_changes() AS t, last_insert_rowid() AS r",
      );
      return { ...cursor.one(), read: cursor.rowsRead, written: cursor.rowsWritten };
    };
    const restart = async (storage: ObjectStorage) => {
      storage.abort();
      await coreOf(storage).settled();
      return open(persistence);
    };
    const write = async (storage: ObjectStorage) => {
      await storage.put("k", 1);
      storage.sql.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v)");
      storage.sql.exec("INSERT INTO t (v) VALUES (1), (2), (3)");
      await storage.sync();
    };

    let storage = await open(persistence);
    await write(storage);
    const bookmark = await storage.getCurrentBookmark();
    expect(state(storage)).toMatchObject({ c: 3, t: 4, r: 3 });
    storage = await restart(storage); // replays the log
    const afterReplay = state(storage);
    await write(storage);
    await coreOf(storage).snapshot();
    await write(storage);
    storage = await restart(storage); // opens the snapshot, replays what follows it
    const afterSnapshot = state(storage);
    await storage.onNextSessionRestoreBookmark(bookmark);
    storage = await restart(storage);
    const afterRestore = state(storage);
    expect({ afterReplay, afterSnapshot, afterRestore }).toEqual({
      afterReplay: expected,
      afterSnapshot: expected,
      afterRestore: expected,
    });
  });
});
