/**
 * The IndexedDB adapter against the shared PersistenceAdapter contract, in Node over fake-indexeddb
 * (an in-memory IndexedDB). The real browser run (page reloads, a restore) is in
 * test/browser/recipe.test.ts.
 */

import { forceCloseDatabase, IDBKeyRange, indexedDB } from "fake-indexeddb";
import { describe, expect, it } from "vitest";
import { openIndexedDbPersistence } from "../../src/durability/indexeddb-persistence";
import { loadWithRecords } from "../../src/durability/persistence";
import { ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";
import { describeAdapterContract, kvRecord, range } from "./adapter-contract";

let counter = 0;
const fresh = () => `actorstore-test-${process.pid}-${counter++}`;
const options = { indexedDB, IDBKeyRange };

/** Raw access to the adapter's database, to damage it the way a bug or a tool could. */
async function raw<T>(name: string, store: string, fn: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open(name);
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  try {
    const txn = db.transaction([store], "readwrite");
    const req = fn(txn.objectStore(store));
    const result = await new Promise<T>((resolve, reject) => {
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    await new Promise((resolve) => (txn.oncomplete = resolve));
    return result;
  } finally {
    db.close();
  }
}

/**
 * The fake IndexedDB factory, with `change` called on every transaction its connections open (to
 * make writes fail the way a full disk or a browser would), and `opened` on every connection.
 */
function wrapFactory(
  change: (txn: IDBTransaction, stores: string[], mode: IDBTransactionMode | undefined) => void,
  opened: (db: IDBDatabase) => void = () => undefined,
) {
  return {
    open(dbName: string, version?: number) {
      const req = indexedDB.open(dbName, version);
      req.addEventListener("success", () => {
        const db = req.result;
        opened(db);
        const transaction = db.transaction.bind(db);
        db.transaction = ((stores, mode, opts) => {
          const txn = transaction(stores, mode, opts);
          change(txn, typeof stores === "string" ? [stores] : [...stores], mode);
          return txn;
        }) as IDBDatabase["transaction"];
      });
      return req;
    },
  } as IDBFactory;
}

describeAdapterContract("indexeddb", async () => {
  const name = fresh();
  let adapter = await openIndexedDbPersistence(name, options);
  return {
    adapter,
    async reopen() {
      await adapter.close();
      adapter = await openIndexedDbPersistence(name, options);
      return adapter;
    },
  };
});

describe("IndexedDbPersistence", () => {
  it("rejects a missing name, unknown options and a runtime without IndexedDB", async () => {
    await expect(openIndexedDbPersistence("", options)).rejects.toThrow(TypeError);
    await expect(openIndexedDbPersistence("x", { ...options, indexDB: indexedDB } as never)).rejects.toThrow(
      /unknown option "indexDB" \(did you mean "indexedDB"\?\)\. Valid options: indexedDB, IDBKeyRange, openTimeoutMs, clock\./,
    );
    await expect(openIndexedDbPersistence("x")).rejects.toMatchObject({
      code: "ERR_INVALID_OPTION",
      message: expect.stringMatching(/needs IndexedDB/),
    });
  });

  it("concurrent appends share log transactions (group commit) and keep call order", async () => {
    const adapter = await openIndexedDbPersistence(fresh(), options);
    await adapter.load();
    await Promise.all(range(1, 40).map((seq) => adapter.append([kvRecord(seq)])));
    const stats = await adapter.stats();
    expect(stats).toMatchObject({ records: 40, appends: 40 });
    expect(stats.logFlushes).toBeLessThan(40);
    expect((await adapter.readRecords(0, 40)).map((r) => r.seq)).toEqual(range(1, 40));
  });

  it("a damaged tail is cut off durably on load; damage that valid records follow is ERR_CORRUPT", async () => {
    const name = fresh();
    const adapter = await openIndexedDbPersistence(name, options);
    await adapter.load();
    await adapter.append(range(1, 5).map((s) => kvRecord(s)));
    await adapter.close();
    // The last record's frame loses its final byte (its checksum no longer matches).
    const frame = await raw(name, "records", (s) => s.get(5) as IDBRequest<Uint8Array>);
    await raw(name, "records", (s) => s.put(frame.subarray(0, frame.length - 1).slice(), 5));
    let loaded = await loadWithRecords(adapter);
    expect(loaded.records.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(loaded.truncatedBytes).toBe(frame.length - 1);
    expect(loaded.lastSeq).toBe(4);
    await adapter.append([kvRecord(5)]);
    await adapter.close();
    loaded = await loadWithRecords(adapter);
    expect(loaded.records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(loaded.truncatedBytes).toBe(0);
    await adapter.close();
    // A record in the middle disappears: confirmed commits after it must not be dropped silently.
    await raw(name, "records", (s) => s.delete(3));
    await expect(adapter.load()).rejects.toMatchObject({
      code: "ERR_CORRUPT",
      message: expect.stringMatching(/record 3 is missing, but record 4 follows it/),
    });
  });

  it("a log that ends before the newest snapshot (its last records deleted, or damaged) is ERR_CORRUPT, nothing cut; a damaged tail after it is still cut", async () => {
    const name = fresh();
    const adapter = await openIndexedDbPersistence(name, options);
    await adapter.load();
    for (const s of range(1, 12)) {
      await adapter.append([kvRecord(s)]);
      if (s === 10) await adapter.writeSnapshot({ seq: 10, timeMs: 10 }, new Uint8Array(50).fill(10));
    }
    await adapter.close();
    const keys = () => raw(name, "records", (s) => s.getAllKeys());
    // Row 12 damaged: a tail after the snapshot, cut as before.
    const frame = await raw(name, "records", (s) => s.get(12) as IDBRequest<Uint8Array>);
    await raw(name, "records", (s) => s.put(frame.subarray(0, frame.length - 1).slice(), 12));
    expect((await adapter.load()).lastSeq).toBe(11);
    await adapter.close();
    // Rows 9..11 deleted: the snapshot of 10 is newer than the log's end, and commit 11 is gone.
    await raw(name, "records", (s) => s.delete(IDBKeyRange.bound(9, 11)));
    await expect(adapter.load()).rejects.toMatchObject({
      code: "ERR_CORRUPT",
      message: expect.stringMatching(
        /snapshot 10 is newer than the log's end, record 8, .* records 9\.\.10 and any after them are missing/,
      ),
    });
    // Damaged as well, row 8 is not cut either: the refusal comes first.
    const eight = await raw(name, "records", (s) => s.get(8) as IDBRequest<Uint8Array>);
    await raw(name, "records", (s) => s.put(eight.subarray(0, eight.length - 1).slice(), 8));
    await expect(adapter.load()).rejects.toMatchObject({
      code: "ERR_CORRUPT",
      message: expect.stringMatching(/record 7 \(the rows after it are damaged\)/),
    });
    expect(await keys()).toEqual(range(1, 8));
  });

  it("rows that are not what the adapter wrote (wrong types, stray keys, a missing first record) are damage, never a crash", async () => {
    /** A log of records 1..3 (and a snapshot of 2 when asked), then `damage` on one store. */
    const damaged = async (store: string, damage: (s: IDBObjectStore) => IDBRequest, snapshot = false) => {
      const name = fresh();
      const adapter = await openIndexedDbPersistence(name, options);
      await adapter.load();
      await adapter.append(range(1, 3).map((s) => kvRecord(s)));
      if (snapshot) await adapter.writeSnapshot({ seq: 2, timeMs: 5 }, new Uint8Array([1, 2, 3]));
      await adapter.close();
      await raw(name, store, damage);
      return adapter;
    };
    const corrupt = (message: RegExp) => ({ code: "ERR_CORRUPT", message: expect.stringMatching(message) });
    // The last record is not bytes: a damaged tail, cut off like one that does not decode.
    for (const value of ["hello", 42, null, new ArrayBuffer(8), { seq: 3 }]) {
      const adapter = await damaged("records", (s) => s.put(value, 3));
      const loaded = await loadWithRecords(adapter);
      expect(loaded.records.map((r) => r.seq)).toEqual([1, 2]);
      expect(loaded.lastSeq).toBe(2);
      await adapter.close();
    }
    // In the middle, with a valid record after it: ERR_CORRUPT, naming what is wrong, when the log
    // is read (a load reads the log's keys and its last record only).
    let adapter = await damaged("records", (s) => s.put("hello", 2));
    await adapter.load();
    await expect(loadWithRecords(adapter)).rejects.toMatchObject(
      corrupt(/damaged: record 2 is not bytes\. Delete the database/),
    );
    await adapter.close();
    adapter = await damaged("records", (s) => s.put(new Uint8Array(3), 2.5));
    await expect(adapter.load()).rejects.toMatchObject(
      corrupt(/a row is stored under key 2\.5, but record 3 follows it/),
    );
    // The first record gone with no snapshot before it: the log no longer reaches back to the start.
    adapter = await damaged("records", (s) => s.delete(1));
    await expect(adapter.load()).rejects.toMatchObject(corrupt(/record 1 is missing, but record 2 follows it/));
    // A snapshot entry that is not what writeSnapshot stores would name a state that is not held.
    for (const [entry, why] of [
      [null, "it is not an object"],
      [{ seq: "2", timeMs: 5, bytes: 3, crc: 0 }, 'its seq is "2"'],
      [{ seq: 99, timeMs: 5, bytes: 3, crc: 0 }, "its seq is 99"],
      [{ seq: 2, timeMs: 5, crc: 0 }, "its size is undefined"],
      [{ seq: 2, timeMs: "x", bytes: 3, crc: 0 }, 'its time is "x"'],
    ] as const) {
      adapter = await damaged("snapshots", (s) => s.put(entry, 2), true);
      await expect(adapter.load()).rejects.toMatchObject(corrupt(new RegExp(`the entry of snapshot 2 .*\\(${why}\\)`)));
    }
    // An image that is not bytes fails its check when read (the storage core then passes it over).
    adapter = await damaged("images", (s) => s.put("abc", 2), true);
    await adapter.load();
    await expect(adapter.readSnapshot(2)).rejects.toMatchObject(corrupt(/snapshot 2 fails its checksum/));
    // A record that turned into something else after the load is refused when streamed.
    await raw(adapter.name, "records", (s) => s.put(7, 3));
    await expect(adapter.readRecords(2, 3)).rejects.toMatchObject(corrupt(/damaged: record 3 is not bytes\./));
    await adapter.close();
  });

  it("a database of the origin that the adapter did not create (a newer version, other stores) is refused with a message saying so", async () => {
    const create = (name: string, version: number, stores: string[]) =>
      new Promise<void>((resolve, reject) => {
        const open = indexedDB.open(name, version);
        open.onupgradeneeded = () => {
          for (const store of stores) open.result.createObjectStore(store);
        };
        open.onsuccess = () => {
          open.result.close();
          resolve();
        };
        open.onerror = () => reject(open.error);
      });
    const newer = fresh();
    await create(newer, 2, ["records", "snapshots", "images", "meta"]);
    await expect((await openIndexedDbPersistence(newer, options)).load()).rejects.toMatchObject({
      code: "ERR_CORRUPT",
      message: expect.stringMatching(/its version is newer than 1, .*or use another name/),
      cause: { name: "VersionError" },
    });
    const other = fresh();
    await create(other, 1, ["todos"]);
    const adapter = await openIndexedDbPersistence(other, options);
    await expect(adapter.load()).rejects.toMatchObject({
      code: "ERR_CORRUPT",
      message: expect.stringMatching(
        /is not one this adapter created: it has no records, snapshots, images, meta stores/,
      ),
    });
    // Its connection was closed: the origin can delete that database without being blocked.
    await new Promise<void>((resolve, reject) => {
      const del = indexedDB.deleteDatabase(other);
      del.onsuccess = () => resolve();
      del.onblocked = () => reject(new Error("blocked by the adapter's connection"));
    });
  });

  it("a snapshot image that fails its checksum is ERR_CORRUPT", async () => {
    const name = fresh();
    const adapter = await openIndexedDbPersistence(name, options);
    await adapter.load();
    await adapter.append([kvRecord(1)]);
    await adapter.writeSnapshot({ seq: 1, timeMs: 0 }, new Uint8Array([1, 2, 3]));
    await raw(name, "images", (s) => s.put(new Uint8Array([1, 2, 4]), 1));
    await expect(adapter.readSnapshot(1)).rejects.toMatchObject({ code: "ERR_CORRUPT" });
  });

  it("a failed log write rejects that append and every later one until load()", async () => {
    const name = fresh();
    let failWrites = false;
    // A factory whose connections abort their read-write transactions once armed (a full disk, say).
    const faulty = {
      open(dbName: string, version?: number) {
        const req = indexedDB.open(dbName, version);
        req.addEventListener("success", () => {
          const db = req.result;
          const transaction = db.transaction.bind(db);
          db.transaction = ((stores, mode, opts) => {
            const txn = transaction(stores, mode, opts);
            if (failWrites && mode === "readwrite") queueMicrotask(() => txn.abort());
            return txn;
          }) as IDBDatabase["transaction"];
        });
        return req;
      },
    } as IDBFactory;
    const adapter = await openIndexedDbPersistence(name, { indexedDB: faulty, IDBKeyRange });
    await adapter.load();
    await adapter.append([kvRecord(1)]);
    failWrites = true;
    const failed = adapter.append([kvRecord(2)]);
    const queued = adapter.append([kvRecord(3)]);
    await expect(failed).rejects.toMatchObject({ code: "ERR_WRITE_FAILED" });
    await expect(queued).rejects.toMatchObject({ code: "ERR_WRITE_FAILED" });
    failWrites = false;
    await expect(adapter.append([kvRecord(4)])).rejects.toMatchObject({
      code: "ERR_WRITE_FAILED",
      message: expect.stringMatching(/call load\(\) to reopen/),
    });
    const loaded = await loadWithRecords(adapter);
    expect(loaded.records.map((r) => r.seq)).toEqual([1]);
    await adapter.append([kvRecord(2)]);
    expect((await adapter.readRecords(0, 2)).map((r) => r.seq)).toEqual([1, 2]);
  });

  it("a quota the browser finds full: an open (its claim is a write) and a snapshot are ERR_WRITE_FAILED naming QuotaExceededError and what to do", async () => {
    const name = fresh();
    let full = false;
    // Chromium's QuotaExceededError has no message: the adapter's text must not depend on one.
    const quota = wrapFactory((txn, _stores, mode) => {
      if (!full || mode !== "readwrite") return;
      Object.defineProperty(txn, "error", { value: new DOMException("", "QuotaExceededError") });
      queueMicrotask(() => txn.abort());
    });
    const adapter = await openIndexedDbPersistence(name, { indexedDB: quota, IDBKeyRange });
    await adapter.load();
    await adapter.append([kvRecord(1)]);
    full = true;
    await expect(adapter.writeSnapshot({ seq: 1, timeMs: 0 }, new Uint8Array(8))).rejects.toMatchObject({
      code: "ERR_WRITE_FAILED",
      message: expect.stringMatching(
        /^The writeSnapshot\(\) write to IndexedDB database "[^"]+" failed \(QuotaExceededError: the browser's storage quota for this origin is used up .*navigator\.storage\.persist\(\)\); nothing of it was stored\.$/,
      ),
    });
    await adapter.close();
    const over = await openIndexedDbPersistence(name, { indexedDB: quota, IDBKeyRange });
    await expect(over.load()).rejects.toMatchObject({
      code: "ERR_WRITE_FAILED",
      message: expect.stringMatching(
        /^Opening IndexedDB database "[^"]+" failed: the browser refused the small write that claims it for this writer \(QuotaExceededError: the browser's storage quota/,
      ),
    });
    full = false;
    const loaded = await loadWithRecords(over);
    expect(loaded.snapshots).toEqual([]);
    expect(loaded.records.map((r) => r.seq)).toEqual([1]);
  });

  it("a snapshot queued behind an append whose log write fails is refused: a load does not bring the refused commit back", async () => {
    const name = fresh();
    let failLog = false;
    // Read-write transactions over the log abort once armed (quota exceeded on the log write);
    // the snapshot's own transaction would succeed.
    const faulty = wrapFactory((txn, stores, mode) => {
      if (failLog && mode === "readwrite" && stores.includes("records")) queueMicrotask(() => txn.abort());
    });
    const adapter = await openIndexedDbPersistence(name, { indexedDB: faulty, IDBKeyRange });
    await adapter.load();
    await adapter.append([kvRecord(1)]);
    failLog = true;
    // As the storage core does: the snapshot of the commit's state is asked for before the append settles.
    const appended = adapter.append([kvRecord(2)]);
    const snapshot = adapter.writeSnapshot({ seq: 2, timeMs: 0 }, new Uint8Array([2]));
    await expect(appended).rejects.toMatchObject({ code: "ERR_WRITE_FAILED" });
    await expect(snapshot).rejects.toMatchObject({ code: "ERR_WRITE_FAILED" });
    failLog = false;
    const loaded = await loadWithRecords(adapter);
    expect(loaded.snapshots).toEqual([]);
    expect(loaded.lastSeq).toBe(1);
    expect(loaded.records.map((r) => r.seq)).toEqual([1]);
  });

  it("a request that fails inside a log transaction aborts it: the append is refused, not confirmed", async () => {
    const name = fresh();
    let failPuts = false;
    // A record's put fails as a request (Firefox reports a quota error on the put itself): here an
    // add() over a key that exists, which fails with ConstraintError.
    const faulty = wrapFactory((txn) => {
      const objectStore = txn.objectStore.bind(txn);
      txn.objectStore = (store: string) => {
        const s = objectStore(store);
        if (store === "records" && failPuts) {
          const proto = Object.getPrototypeOf(s) as IDBObjectStore;
          s.put = (value: unknown, key?: IDBValidKey) => {
            proto.put.call(s, new Uint8Array(0), key);
            return proto.add.call(s, value, key);
          };
        }
        return s;
      };
    });
    const adapter = await openIndexedDbPersistence(name, { indexedDB: faulty, IDBKeyRange });
    await adapter.load();
    await adapter.append([kvRecord(1)]);
    failPuts = true;
    await expect(adapter.append([kvRecord(2)])).rejects.toMatchObject({
      code: "ERR_WRITE_FAILED",
      cause: { name: "ConstraintError" },
    });
    failPuts = false;
    // Nothing of the failed transaction stayed (not even the empty frame put before the failure).
    const loaded = await loadWithRecords(adapter);
    expect(loaded).toMatchObject({ lastSeq: 1, truncatedBytes: 0 });
    expect(loaded.records.map((r) => r.seq)).toEqual([1]);
  });

  it("the database deleted by another connection: calls fail with ERR_CLOSED until load()", async () => {
    const name = fresh();
    const adapter = await openIndexedDbPersistence(name, options);
    await adapter.load();
    await adapter.append([kvRecord(1)]);
    // Another connection deletes the database: the adapter's connection is closed under it.
    await new Promise((resolve, reject) => {
      const del = indexedDB.deleteDatabase(name);
      del.onsuccess = resolve;
      del.onerror = () => reject(del.error);
    });
    // The message says what happened: the adapter had been loaded, so "before load()" was wrong.
    await expect(adapter.append([kvRecord(2)])).rejects.toMatchObject({
      code: "ERR_CLOSED",
      message: `Cannot call append(): IndexedDB database "${name}" was closed under this adapter, because another connection deleted or upgraded it (another tab, or other code of the origin). Load (or reload) the persistence to open it again (a deleted database opens empty).`,
    });
    await expect(adapter.stats()).rejects.toMatchObject({
      message: expect.stringMatching(
        /^Cannot call stats\(\): .* was closed under this adapter, because another connection deleted/,
      ),
    });
    const loaded = await adapter.load();
    expect(loaded.lastSeq).toBe(0);
    await adapter.append([kvRecord(1)]);
  });

  it("an open that another connection blocks (a delete it does not let through) fails with ERR_LOCKED after openTimeoutMs, and the abandoned open neither holds nor recreates the database", async () => {
    const name = fresh();
    const setup = await openIndexedDbPersistence(name, options);
    await setup.load();
    await setup.append([kvRecord(1)]);
    await setup.close();
    // Another tab: a connection with no versionchange handler, and a deleteDatabase() it blocks.
    const holder = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open(name);
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    const del = indexedDB.deleteDatabase(name);
    await new Promise((resolve) => (del.onblocked = resolve));
    const deleted = new Promise((resolve, reject) => {
      del.onsuccess = resolve;
      del.onerror = () => reject(del.error);
    });
    const clock = new FakeClock();
    const adapter = await openIndexedDbPersistence(name, { ...options, clock, openTimeoutMs: 5000 });
    let outcome: unknown;
    const loading = adapter.load().then(
      (loaded) => (outcome = loaded),
      (error: unknown) => (outcome = error),
    );
    /** Lets fake-indexeddb run what it has queued (it schedules with setImmediate). */
    const settle = async () => {
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    await settle();
    await clock.advance(4999);
    await settle();
    expect(outcome).toBeUndefined();
    await clock.advance(1);
    await loading;
    expect(outcome).toMatchObject({
      code: "ERR_LOCKED",
      message: `Opening IndexedDB database "${name}" did not complete within 5000 ms: another connection of this site blocks it (a deleteDatabase() or version upgrade of it from another tab or worker waits for a connection that does not close). Close the other tabs of this site that use it (or reload them), then open again.`,
    });
    // The other tab lets go: its delete goes through, and the open given up does not create the
    // database again nor keep a connection to it (a second delete is not blocked).
    holder.close();
    await deleted;
    await settle();
    expect((await indexedDB.databases()).map((d) => d.name)).not.toContain(name);
    await new Promise<void>((resolve, reject) => {
      const again = indexedDB.deleteDatabase(name);
      again.onsuccess = () => resolve();
      again.onblocked = () => reject(new Error("blocked by the abandoned open's connection"));
    });
    // Unblocked, the same adapter opens (the database was deleted: it opens empty).
    expect((await adapter.load()).lastSeq).toBe(0);
    await adapter.close();
  });

  it("a connection the browser closes (site data cleared): writes fail, and load() reopens as its error says", async () => {
    const name = fresh();
    let connection: IDBDatabase | undefined;
    const watched = wrapFactory(
      () => undefined,
      (db) => (connection = db),
    );
    const adapter = await openIndexedDbPersistence(name, { indexedDB: watched, IDBKeyRange });
    await adapter.load();
    await adapter.append([kvRecord(1)]);
    forceCloseDatabase(connection as unknown as Parameters<typeof forceCloseDatabase>[0]);
    await expect(adapter.append([kvRecord(2)])).rejects.toMatchObject({
      code: "ERR_CLOSED",
      message: expect.stringMatching(
        /^Cannot call append\(\): .* was closed under this adapter, because the browser closed the connection \(site data cleared, or a storage error\)\. Load \(or reload\) the persistence to open it again\.$/,
      ),
    });
    const loaded = await loadWithRecords(adapter);
    expect(loaded.records.map((r) => r.seq)).toEqual([1]);
    await adapter.append([kvRecord(2)]);
    expect((await adapter.readRecords(0, 2)).map((r) => r.seq)).toEqual([1, 2]);
    await adapter.close();
  });

  it("stats() reads no record: its counts follow loads, appends, prunes and a cut tail, and equal what is stored", async () => {
    const name = fresh();
    let logReads = 0;
    // Counts every read of the records store (stats() used to read the whole log with getAll()).
    const counting = wrapFactory((txn, stores, mode) => {
      if (mode === "readwrite" || !stores.includes("records")) return;
      const objectStore = txn.objectStore.bind(txn);
      txn.objectStore = (store: string) => {
        if (store === "records") logReads++;
        return objectStore(store);
      };
    });
    /** What the database holds, read raw: the number of records and the bytes of their frames. */
    const stored = async () => {
      const frames = await raw(name, "records", (s) => s.getAll() as IDBRequest<Uint8Array[]>);
      return { records: frames.length, logBytes: frames.reduce((n, f) => n + f.length, 0) };
    };
    const statsWithoutReads = async (adapter: Awaited<ReturnType<typeof openIndexedDbPersistence>>) => {
      const before = logReads;
      const stats = await adapter.stats();
      expect(logReads - before).toBe(0);
      return { records: stats.records, logBytes: stats.logBytes };
    };
    let adapter = await openIndexedDbPersistence(name, { indexedDB: counting, IDBKeyRange });
    await adapter.load();
    expect(await statsWithoutReads(adapter)).toEqual({ records: 0, logBytes: 0 });
    const big = (seq: number) => kvRecord(seq, { kv: [{ key: `k${seq}`, value: new Uint8Array(seq * 100) }] });
    await Promise.all(range(1, 6).map((seq) => adapter.append([big(seq)])));
    expect(await statsWithoutReads(adapter)).toEqual(await stored());
    await adapter.writeSnapshot({ seq: 3, timeMs: 0 }, new Uint8Array([3]));
    await adapter.prune(4);
    expect((await stored()).records).toBe(3);
    expect(await statsWithoutReads(adapter)).toEqual(await stored());
    await adapter.append([big(7)]);
    expect(await statsWithoutReads(adapter)).toEqual(await stored());
    await adapter.close();
    // A torn last record: the next load cuts it, and the counts are of what is left.
    const last = await raw(name, "records", (s) => s.get(7) as IDBRequest<Uint8Array>);
    await raw(name, "records", (s) => s.put(last.subarray(0, 10).slice(), 7));
    adapter = await openIndexedDbPersistence(name, { indexedDB: counting, IDBKeyRange });
    expect((await adapter.load()).truncatedBytes).toBe(10);
    // Opening streams the log, which measures what the load did not read.
    for await (const chunk of adapter.streamRecords(3, 6)) expect(chunk.length).toBe(3);
    expect(await statsWithoutReads(adapter)).toEqual({ records: 3, logBytes: (await stored()).logBytes });
    expect((await stored()).records).toBe(3);
    await adapter.close();
    // After a bare load (no stream), the first stats() reads the records the load did not, once.
    adapter = await openIndexedDbPersistence(name, { indexedDB: counting, IDBKeyRange });
    await adapter.load();
    const before = logReads;
    expect(await adapter.stats()).toMatchObject(await stored());
    expect(logReads - before).toBe(1);
    expect(await statsWithoutReads(adapter)).toEqual(await stored());
    await adapter.close();
  });

  it("reopening reads each stored record once (load reads the keys and the last record; the open's stream checks each record as it replays it)", async () => {
    const name = fresh();
    let rowsRead = 0;
    // Counts the rows read from the records store.
    const counting = wrapFactory((txn, stores) => {
      if (!stores.includes("records")) return;
      const objectStore = txn.objectStore.bind(txn);
      txn.objectStore = (store: string) => {
        const s = objectStore(store);
        if (store !== "records") return s;
        for (const method of ["get", "getAll", "openCursor"] as const) {
          const original = (s[method] as (...args: unknown[]) => IDBRequest).bind(s);
          (s as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
            const req = original(...args);
            req.addEventListener("success", () => {
              const result = req.result as unknown;
              rowsRead += Array.isArray(result) ? result.length : result === undefined ? 0 : 1;
            });
            return req;
          };
        }
        return s;
      };
    });
    const clock = new FakeClock();
    let storage = await ObjectStorage.open({ persistence: await openIndexedDbPersistence(name, options), clock });
    for (let n = 1; n <= 300; n++) {
      await storage.put(`k${n % 7}`, n);
      await storage.sync();
    }
    await storage.close();
    const stored = await raw(name, "records", (s) => s.count());
    expect(stored).toBeGreaterThanOrEqual(300);
    rowsRead = 0;
    storage = await ObjectStorage.open({
      persistence: await openIndexedDbPersistence(name, { indexedDB: counting, IDBKeyRange }),
      clock,
    });
    expect(await storage.get(`k${300 % 7}`)).toBe(300);
    // Each record once, and the last one a second time (load's check of where the log ends).
    expect(rowsRead).toBe(stored + 1);
    await storage.close();
  });

  it("a damaged record in the middle of the log is found as the open replays it: the open fails with ERR_CORRUPT naming it", async () => {
    const name = fresh();
    const clock = new FakeClock();
    let storage = await ObjectStorage.open({ persistence: await openIndexedDbPersistence(name, options), clock });
    for (let n = 1; n <= 20; n++) {
      await storage.put("n", n);
      await storage.sync();
    }
    await storage.close();
    const keys = (await raw(name, "records", (s) => s.getAllKeys())) as number[];
    const middle = keys[Math.floor(keys.length / 2)] as number;
    const frame = await raw(name, "records", (s) => s.get(middle) as IDBRequest<Uint8Array>);
    const flipped = frame.slice();
    const at = Math.floor(flipped.length / 2);
    flipped[at] = (flipped[at] as number) ^ 0x10;
    await raw(name, "records", (s) => s.put(flipped, middle));
    const error = await ObjectStorage.open({ persistence: await openIndexedDbPersistence(name, options), clock }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      code: "ERR_CORRUPT",
      message: `The persisted data in IndexedDB database "${name}" is damaged: record ${middle} does not decode (checksum). Delete the database (or restore it from an export) to start again.`,
    });
    // Put back, the log opens whole.
    await raw(name, "records", (s) => s.put(frame, middle));
    storage = await ObjectStorage.open({ persistence: await openIndexedDbPersistence(name, options), clock });
    expect(await storage.get("n")).toBe(20);
    await storage.close();
  });

  it("ObjectStorage over it: writes survive a reopen, and a bookmark restore applies on the next open", async () => {
    const name = fresh();
    const clock = new FakeClock();
    let storage = await ObjectStorage.open({ persistence: await openIndexedDbPersistence(name, options), clock });
    await storage.put("a", 1);
    storage.sql.exec("CREATE TABLE t (x)");
    storage.sql.exec("INSERT INTO t VALUES (1)");
    clock.advance(1000);
    const bookmark = await storage.getCurrentBookmark();
    await storage.put("a", 2);
    storage.sql.exec("INSERT INTO t VALUES (2)");
    await storage.sync();
    await storage.close();

    storage = await ObjectStorage.open({ persistence: await openIndexedDbPersistence(name, options), clock });
    expect(await storage.get("a")).toBe(2);
    expect(storage.sql.exec("SELECT count(*) AS n FROM t").one().n).toBe(2);
    await storage.onNextSessionRestoreBookmark(bookmark);
    await storage.close();

    storage = await ObjectStorage.open({ persistence: await openIndexedDbPersistence(name, options), clock });
    expect(await storage.get("a")).toBe(1);
    expect(storage.sql.exec("SELECT count(*) AS n FROM t").one().n).toBe(1);
    await storage.close();
  });
});

describe("IndexedDbPersistence: one writer per database", () => {
  it("a second connection's load fences the first: its writes reject with ERR_FENCED and none lands after the claim", async () => {
    const name = fresh();
    const a = await openIndexedDbPersistence(name, options);
    await a.load();
    await a.append([kvRecord(1), kvRecord(2)]);
    // Another tab opens the same object.
    const b = await openIndexedDbPersistence(name, options);
    const claimed = await b.load();
    expect(claimed.epoch).toBeGreaterThan(a.epoch as number);
    for (const call of [
      () => a.append([kvRecord(3)]),
      () => a.append([kvRecord(4)]),
      () => a.writeSnapshot({ seq: 2, timeMs: 0 }, new Uint8Array(1)),
      () => a.writeMetaIf(0, new Uint8Array([1])),
      () => a.load(),
    ])
      await expect(call()).rejects.toMatchObject({ code: "ERR_FENCED" });
    // The new holder sees exactly what was confirmed before its claim, and goes on.
    expect((await loadWithRecords(b)).records.map((r) => r.seq)).toEqual([1, 2]);
    await b.append([kvRecord(3)]);
    expect(await b.writeMetaIf(0, new Uint8Array([9]))).toBe(true);
    expect(await b.readMeta()).toEqual(new Uint8Array([9]));
    await a.close();
    await b.close();
  });

  it("a load that cuts a damaged tail is fenced too: it never deletes what a newer holder wrote there", async () => {
    const name = fresh();
    const setup = await openIndexedDbPersistence(name, options);
    await setup.load();
    await setup.append(range(1, 3).map((s) => kvRecord(s)));
    await setup.close();
    const frame = await raw(name, "records", (s) => s.get(3) as IDBRequest<Uint8Array>);
    await raw(name, "records", (s) => s.put(frame.subarray(0, frame.length - 1).slice(), 3));
    // Tab A's load reads the log's frames; their answer reaches it only once tab B has opened the
    // object, cut the same tail and written its own record 3.
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached = () => {};
    const reading = new Promise<void>((resolve) => (reached = resolve));
    const slow = wrapFactory((txn, stores, mode) => {
      if (mode === "readwrite" || !stores.includes("records")) return;
      const objectStore = txn.objectStore.bind(txn);
      txn.objectStore = (store: string) => {
        const s = objectStore(store);
        if (store !== "records") return s;
        const getAll = s.getAll.bind(s);
        s.getAll = (query?: IDBValidKey | IDBKeyRange | null, count?: number) => {
          const req = getAll(query, count);
          let handler: IDBRequest["onsuccess"] = null;
          Object.defineProperty(req, "onsuccess", {
            configurable: true,
            get: () => handler,
            set: (fn: IDBRequest["onsuccess"]) => {
              handler = fn && ((event: Event) => void gate.then(() => fn.call(req, event)));
            },
          });
          reached();
          return req;
        };
        return s;
      };
    });
    const a = await openIndexedDbPersistence(name, { indexedDB: slow, IDBKeyRange });
    const loadingA = a.load();
    await reading;
    const b = await openIndexedDbPersistence(name, options);
    expect((await b.load()).lastSeq).toBe(2);
    await b.append([kvRecord(3, { kv: [{ key: "b", value: new Uint8Array([3]) }] })]);
    release();
    await expect(loadingA).rejects.toMatchObject({ code: "ERR_FENCED" });
    // B's confirmed record 3 is still there.
    const c = await openIndexedDbPersistence(name, options);
    const loaded = await loadWithRecords(c);
    expect(loaded.records.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(loaded.records[2]?.kv).toEqual([{ key: "b", value: new Uint8Array([3]) }]);
    await Promise.all([a.close(), b.close(), c.close()]);
  });
});
