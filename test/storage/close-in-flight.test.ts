/**
 * close() while work is in flight: every promise settles (none hangs), with ERR_CLOSED where the
 * work did not happen, and what close() committed is what a reopen finds.
 *
 * A transaction still open when close() was called used to be cut off mid-way: the engine closed
 * under it, its closure's end failed with the engine's raw `Database closed` (or broke the storage
 * with the write-failure reset message, which every later call then repeated instead of ERR_CLOSED),
 * and the batch its writes had joined never settled, so `sync()` (and an object's answer, held by
 * the output gate) waited forever. A write issued after close() began was accepted and silently
 * dropped.
 */
import { describe, expect, it } from "vitest";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import { ObjectStorage } from "../../src/storage/object-storage";
import { deferred } from "../../src/util/deferred";

const CLOSED = { code: "ERR_CLOSED", message: "This storage was closed. Open it again to continue." };

/** Tracks whether `p` has settled, and how. */
function track<T>(p: Promise<T>): { readonly state: string; readonly error: unknown; readonly promise: Promise<void> } {
  let state = "pending";
  let error: unknown;
  const promise = p.then(
    () => {
      state = "resolved";
    },
    (e: unknown) => {
      state = "rejected";
      error = e;
    },
  );
  return {
    get state() {
      return state;
    },
    get error() {
      return error;
    },
    promise,
  };
}

/** Lets every macrotask queued so far run (a few turns). */
async function turns(n = 4): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

describe("close() with a transaction open", () => {
  it("a closure that returns after close(): the transaction fails with ERR_CLOSED, its writes are not committed, sync() settles", async () => {
    const persistence = createMemoryPersistence();
    const storage = await ObjectStorage.open({ persistence });
    await storage.put("before", 1);
    const inside = deferred<void>();
    const release = deferred<void>();
    const txn = track(
      storage.transaction(async (t) => {
        await t.put("inside", 1);
        inside.resolve();
        await release.promise;
        return "done";
      }),
    );
    await inside.promise;
    await storage.close();
    release.resolve();
    await txn.promise;
    expect(txn.state).toBe("rejected");
    expect(txn.error).toMatchObject(CLOSED);
    const sync = track(storage.sync());
    await turns();
    expect(sync.state).not.toBe("pending");
    await expect(storage.get("before")).rejects.toMatchObject(CLOSED);

    const reopened = await ObjectStorage.open({ persistence });
    expect(await reopened.get("before")).toBe(1);
    expect(await reopened.get("inside")).toBeUndefined();
    await reopened.close();
  });

  it("a closure that writes after close(): ERR_CLOSED, and the storage stays closed (not broken by it)", async () => {
    const storage = await ObjectStorage.open();
    const inside = deferred<void>();
    const release = deferred<void>();
    const txn = storage.transaction(async (t) => {
      inside.resolve();
      await release.promise;
      await t.put("late", 1);
      return "done";
    });
    await inside.promise;
    await storage.close();
    release.resolve();
    await expect(txn).rejects.toMatchObject(CLOSED);
    await expect(storage.get("late")).rejects.toMatchObject(CLOSED);
    expect(() => storage.sql.exec("SELECT 1")).toThrow(expect.objectContaining(CLOSED));
  });
});

describe("calls made once close() has begun", () => {
  it("a put in the same turn as close() is refused with ERR_CLOSED, not accepted and dropped", async () => {
    const persistence = createMemoryPersistence();
    const storage = await ObjectStorage.open({ persistence });
    await storage.put("a", 1);
    const closing = storage.close();
    const put = track(storage.put("b", 2));
    const sync = track(storage.sync());
    await closing;
    await put.promise;
    await turns();
    expect(put.state).toBe("rejected");
    expect(put.error).toMatchObject(CLOSED);
    expect(sync.state).not.toBe("pending");
    const reopened = await ObjectStorage.open({ persistence });
    expect(await reopened.get(["a", "b"])).toEqual(new Map([["a", 1]]));
    await reopened.close();
  });

  it("close() twice at once: both resolve once the storage is closed, and it is closed once", async () => {
    const persistence = createMemoryPersistence();
    let closes = 0;
    const close = persistence.close.bind(persistence);
    persistence.close = async () => {
      closes++;
      await close();
    };
    const storage = await ObjectStorage.open({ persistence });
    await storage.put("a", 1);
    await Promise.all([storage.close(), storage.close()]);
    expect(closes).toBe(1);
    await storage.close();
    expect(closes).toBe(1);
  });
});

describe("close() whose commit fails", () => {
  it("rejects with the write failure (the adapter is still closed) instead of resolving over a lost write", async () => {
    const persistence = createMemoryPersistence();
    const storage = await ObjectStorage.open({ persistence });
    await storage.put("a", 1);
    await storage.sync();
    const append = persistence.append.bind(persistence);
    persistence.append = async () => {
      throw new Error("disk full");
    };
    let adapterClosed = false;
    const close = persistence.close.bind(persistence);
    persistence.close = async () => {
      adapterClosed = true;
      await close();
    };
    await storage.put("b", 2);
    const closing = storage.close();
    await expect(closing).rejects.toThrow("Internal error in Durable Object storage write caused object to be reset.");
    await expect(closing).rejects.toMatchObject({ cause: new Error("disk full") });
    expect(adapterClosed).toBe(true);
    persistence.append = append;
    const reopened = await ObjectStorage.open({ persistence });
    expect(await reopened.get(["a", "b"])).toEqual(new Map([["a", 1]]));
    await reopened.close();
  });

  it("a storage already broken before close() closes quietly (its failure was reported then)", async () => {
    const storage = await ObjectStorage.open();
    storage.abort();
    await expect(storage.close()).resolves.toBeUndefined();
  });
});

describe("an SQL cursor read after its storage closed", () => {
  // The engine is closed under the cursor: its statement is freed, and reading it used to fail with
  // the engine's raw `Statement closed: SQLITE_MISUSE` (documented nowhere), after which one() said
  // `got no results` although the query had rows left.
  async function withCursors() {
    const storage = await ObjectStorage.open();
    storage.sql.exec("CREATE TABLE t(a INTEGER)");
    for (let i = 0; i < 5; i++) storage.sql.exec("INSERT INTO t VALUES(?)", i);
    const started = storage.sql.exec("SELECT a FROM t ORDER BY a");
    expect(started.next()).toEqual({ done: false, value: { a: 0 } });
    const rows = started[Symbol.iterator]();
    const raw = storage.sql.exec("SELECT a FROM t ORDER BY a").raw();
    expect(raw.next()).toEqual({ done: false, value: [0] });
    const unread = storage.sql.exec("SELECT a FROM t ORDER BY a");
    // A write's RETURNING rows are produced inside exec() and buffered: unread ones are unfinished too.
    const returning = storage.sql.exec("INSERT INTO t VALUES (10), (11) RETURNING a");
    const finished = storage.sql.exec("SELECT count(*) AS n FROM t");
    expect(finished.toArray()).toEqual([{ n: 7 }]);
    return { storage, started, rows, raw, unread, returning, finished };
  }

  it("every read of an unfinished cursor fails with ERR_CLOSED, every time", async () => {
    const { storage, started, rows, raw, unread, returning, finished } = await withCursors();
    await storage.close();
    for (let round = 0; round < 2; round++) {
      expect(() => started.next()).toThrow(expect.objectContaining(CLOSED));
      expect(() => rows.next()).toThrow(expect.objectContaining(CLOSED));
      expect(() => raw.next()).toThrow(expect.objectContaining(CLOSED));
      expect(() => unread.toArray()).toThrow(expect.objectContaining(CLOSED));
      expect(() => unread.one()).toThrow(expect.objectContaining(CLOSED));
      expect(() => unread.rowsRead).toThrow(expect.objectContaining(CLOSED));
      expect(() => returning.next()).toThrow(expect.objectContaining(CLOSED));
    }
    // A finished cursor has nothing left to read: it stays done, with its counts.
    expect(finished.next()).toEqual({ done: true });
    expect(finished.rowsRead).toBeGreaterThan(0);
    expect(unread.columnNames).toEqual(["a"]);
  });

  it("after abort(), reads fail with the abort's error; another storage's engine is unaffected", async () => {
    const { storage, started, unread } = await withCursors();
    const other = await ObjectStorage.open();
    other.sql.exec("CREATE TABLE u(b)");
    other.sql.exec("INSERT INTO u VALUES ('kept')");
    const reason = new Error("reset for the test");
    storage.abort(reason);
    expect(() => started.next()).toThrow(reason);
    expect(() => unread.toArray()).toThrow(reason);
    expect(other.sql.exec("SELECT b FROM u").toArray()).toEqual([{ b: "kept" }]);
    await other.close();
  });

  it("deleteAll() still cancels with the platform's error (the storage is open)", async () => {
    const { storage, unread } = await withCursors();
    await storage.deleteAll();
    expect(() => unread.next()).toThrow("SQLite query was canceled because the database was deleted.");
    await storage.close();
  });
});
