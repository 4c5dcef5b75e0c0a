import { describe, expect, test } from "vitest";
import { ObjectContext } from "../../../src/context/object-context";
import type { ObjectState } from "../../../src/context/object-state";
import { FaultyPersistence } from "../../../src/durability/faulty-persistence";
import { createMemoryPersistence } from "../../../src/durability/memory-persistence";
import { ObjectStorage } from "../../../src/storage/object-storage";

const VIOLATION =
  "Durable Object was reset and rolled back to its last known good state because the application left the database in a state where constraints were violated: FOREIGN KEY constraint failed: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_FOREIGNKEY)";

function schema(storage: ObjectStorage): void {
  storage.sql.exec("CREATE TABLE parent (id INTEGER PRIMARY KEY)");
  storage.sql.exec("CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id))");
}

describe("implicit transactions: deferred constraints", () => {
  test("commit: a deferred foreign-key violation resets the storage with the platform's message", async () => {
    const persistence = createMemoryPersistence();
    const storage = await ObjectStorage.open({ persistence });
    schema(storage);
    storage.sql.exec("INSERT INTO parent VALUES (1)");
    await storage.put("kept", 1);
    await storage.sync();

    storage.sql.exec("PRAGMA defer_foreign_keys = ON");
    storage.sql.exec("INSERT INTO child VALUES (1, 99)"); // accepted now, checked at commit
    await storage.put("lost", 2);
    await expect(storage.sync()).rejects.toThrow(VIOLATION);
    await expect(storage.get("kept")).rejects.toThrow(VIOLATION);

    // Nothing of the failed batch is visible after reopening: neither the SQL nor the KV write.
    const reopened = await ObjectStorage.open({ persistence });
    expect(await reopened.get("kept")).toBe(1);
    expect(await reopened.get("lost")).toBeUndefined();
    expect(reopened.sql.exec("SELECT count(*) AS n FROM child").one()).toEqual({ n: 0 });
    await reopened.close();
  });

  test("commit: a cursor left open across a failed commit fails at its next read with the reset error", async () => {
    // On the platform no code of the object runs after the failed commit (the object is reset):
    // here the storage stays in the caller's hands, and everything it answers is the reset error,
    // never rows from the engine the failed commit rolled back.
    const storage = await ObjectStorage.open();
    schema(storage);
    storage.sql.exec("INSERT INTO parent VALUES (1), (2), (3)");
    await storage.sync();

    const started = storage.sql.exec<{ id: number }>("SELECT id FROM parent ORDER BY id");
    expect(started.next()).toEqual({ done: false, value: { id: 1 } });
    const unread = storage.sql.exec<{ id: number }>("SELECT id FROM parent ORDER BY id");
    storage.sql.exec("PRAGMA defer_foreign_keys = ON");
    storage.sql.exec("INSERT INTO child VALUES (1, 99)");
    await expect(storage.sync()).rejects.toThrow(VIOLATION);

    expect(() => started.next()).toThrow(VIOLATION);
    expect(() => started.raw().toArray()).toThrow(VIOLATION);
    expect(() => unread.toArray()).toThrow(VIOLATION);
    expect(() => unread.rowsRead).toThrow(VIOLATION);
    expect(() => storage.sql.exec("SELECT 1")).toThrow(VIOLATION);
  });

  test("append: a cursor left open across a failed append fails at its next read with the reset error", async () => {
    const faulty = new FaultyPersistence(createMemoryPersistence());
    const storage = await ObjectStorage.open({ persistence: faulty });
    schema(storage);
    storage.sql.exec("INSERT INTO parent VALUES (1), (2), (3)");
    await storage.sync();

    const started = storage.sql.exec<{ id: number }>("SELECT id FROM parent ORDER BY id");
    expect(started.next()).toEqual({ done: false, value: { id: 1 } });
    faulty.failNextAppend();
    storage.sql.exec("INSERT INTO parent VALUES (4)");
    const failure = await storage.sync().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(() => started.next()).toThrow((failure as Error).message);
  });

  test("foreign keys: are enforced by default, as on the platform", async () => {
    const storage = await ObjectStorage.open();
    schema(storage);
    expect(() => storage.sql.exec("INSERT INTO child VALUES (1, 99)")).toThrow(
      "FOREIGN KEY constraint failed: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_FOREIGNKEY)",
    );
    expect(storage.sql.exec("PRAGMA foreign_keys").one()).toEqual({ foreign_keys: 1 });
    await storage.close();
  });

  test("object context: the request fails, the next one sees the last good state on a fresh instance", async () => {
    let instances = 0;
    class Orders {
      constructor(private readonly ctx: ObjectState) {
        instances++;
      }
      setup(): void {
        schema(this.ctx.storage);
        this.ctx.storage.sql.exec("INSERT INTO parent VALUES (1)");
      }
      orphan(): string {
        this.ctx.storage.sql.exec("PRAGMA defer_foreign_keys = ON");
        this.ctx.storage.sql.exec("INSERT INTO child VALUES (1, 99)");
        return "sent";
      }
      count(): number {
        return this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM child").one().n;
      }
    }
    const context = await ObjectContext.create(Orders);
    await context.call("setup");
    await expect(context.call("orphan")).rejects.toThrow(VIOLATION);
    expect(await context.call("count")).toBe(0);
    expect(instances).toBe(2);
    await context.close();
  });
});
