/**
 * The demo's stateful object: one warehouse's inventory, written exactly as a class for the
 * platform would be (`constructor(ctx, env)`, `fetch`, RPC methods, `alarm`).
 *
 * - Stock and reservations live in SQL tables; the visit counter and the run counter in key-value
 *   storage, so the demo exercises both APIs over the one database.
 * - `reserve()` checks stock and writes the reservation in one `transaction()`: either both the
 *   stock decrement and the reservation row commit, or neither does.
 * - Reservations expire: the earliest expiry is the object's alarm. The alarm handler "calls the
 *   supplier" to release stock, and the supplier is down on the first attempt, so the platform-style
 *   retry with backoff does the work.
 */
import type { AlarmInvocationInfo } from "../src/alarms/alarm-scheduler";
import type { ObjectState } from "../src/context/object-state";

/** How long a reservation holds stock before the alarm releases it. */
export const RESERVATION_TTL_MS = 30_000;

/** What `reserve()` answers. */
export type ReserveResult = { ok: true; reservationId: number; left: number } | { ok: false; reason: string };

/** What the object gets as `env`: time is injected so that a test (or the demo) can fake it. */
export interface InventoryEnv {
  /** Milliseconds since the epoch (the platform code would call `Date.now()`). */
  now(): number;
}

/** A row of the `items` table. */
export interface ItemRow extends Record<string, string | number | null> {
  sku: string;
  name: string;
  stock: number;
}

/**
 * A warehouse with reservations.
 *
 * @example
 * ```ts
 * const warehouse = await ObjectContext.create(Inventory, { id: "warehouse-1" });
 * await warehouse.call("reserve", "widget", 1);
 * ```
 */
export class Inventory {
  readonly #ctx: ObjectState;
  readonly #env: InventoryEnv;

  constructor(ctx: ObjectState, env: InventoryEnv) {
    this.#ctx = ctx;
    this.#env = env;
    // Schema first: no event runs until this is done (the platform's idiom for migrations).
    void ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec(`
        CREATE TABLE IF NOT EXISTS items (sku TEXT PRIMARY KEY, name TEXT NOT NULL, stock INTEGER NOT NULL CHECK (stock >= 0));
        CREATE TABLE IF NOT EXISTS reservations (
          id INTEGER PRIMARY KEY AUTOINCREMENT, sku TEXT NOT NULL, qty INTEGER NOT NULL,
          expires_at_ms INTEGER NOT NULL, released INTEGER NOT NULL DEFAULT 0);
      `);
    });
  }

  /** Counts runs of the demo (key-value), so a second run shows that the data survived. */
  async startRun(): Promise<{ run: number; reservationsOnRecord: number }> {
    const run = ((await this.#ctx.storage.get<number>("runs")) ?? 0) + 1;
    await this.#ctx.storage.put("runs", run);
    const { n } = this.#ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM reservations").one();
    return { run, reservationsOnRecord: n };
  }

  /** Puts the catalogue back to known stock levels (an upsert, so it is safe to run every time). */
  restock(items: ReadonlyArray<{ sku: string; name: string; stock: number }>): void {
    for (const { sku, name, stock } of items) {
      this.#ctx.storage.sql.exec(
        "INSERT INTO items (sku, name, stock) VALUES (?, ?, ?) ON CONFLICT (sku) DO UPDATE SET name = excluded.name, stock = excluded.stock",
        sku,
        name,
        stock,
      );
    }
  }

  /** HTTP: `GET /visit` bumps a page counter with a read-modify-write over async key-value calls. */
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname !== "/visit") return new Response("not found", { status: 404 });
    // No lock, no transaction: the input gate holds other events while this read is pending, so
    // concurrent visits cannot lose updates (as on the platform).
    const visits = ((await this.#ctx.storage.get<number>("visits")) ?? 0) + 1;
    await this.#ctx.storage.put("visits", visits);
    return Response.json({ visits });
  }

  /** Reserves `qty` of `sku` if there is stock, atomically, and arms the expiry alarm. */
  async reserve(sku: string, qty: number): Promise<ReserveResult> {
    const storage = this.#ctx.storage;
    return storage.transaction(async (txn) => {
      const item = storage.sql.exec<ItemRow>("SELECT sku, name, stock FROM items WHERE sku = ?", sku).toArray()[0];
      if (item === undefined) return { ok: false, reason: `unknown sku ${sku}` };
      if (item.stock < qty) return { ok: false, reason: `only ${item.stock} left` };
      const expiresAtMs = Math.trunc(this.#env.now() + RESERVATION_TTL_MS);
      storage.sql.exec("UPDATE items SET stock = stock - ? WHERE sku = ?", qty, sku);
      const { id } = storage.sql
        .exec<{ id: number }>(
          "INSERT INTO reservations (sku, qty, expires_at_ms) VALUES (?, ?, ?) RETURNING id",
          sku,
          qty,
          expiresAtMs,
        )
        .one();
      // The alarm is part of the transaction too: it rolls back with it.
      const alarm = await txn.getAlarm();
      if (alarm === null || alarm > expiresAtMs) await txn.setAlarm(expiresAtMs);
      return { ok: true, reservationId: id, left: item.stock - qty };
    });
  }

  /** Current stock per sku. */
  stock(): Record<string, number> {
    const rows = this.#ctx.storage.sql.exec<ItemRow>("SELECT sku, name, stock FROM items ORDER BY sku").toArray();
    return Object.fromEntries(rows.map((r) => [r.sku, r.stock]));
  }

  /** The visit counter. */
  async visits(): Promise<number> {
    return (await this.#ctx.storage.get<number>("visits")) ?? 0;
  }

  /** A bookmark naming the current state (point-in-time recovery). */
  bookmark(): Promise<string> {
    return this.#ctx.storage.getCurrentBookmark();
  }

  /** The kind of mistake a restore exists for: a bulk update without a WHERE clause. */
  zeroAllStock(): void {
    this.#ctx.storage.sql.exec("UPDATE items SET stock = 0");
  }

  /** Asks for the whole database to go back to `bookmark`, then resets to apply it. */
  async restoreTo(bookmark: string): Promise<string> {
    const undo = await this.#ctx.storage.onNextSessionRestoreBookmark(bookmark);
    // The restore happens when the next session starts; abort() ends this one now.
    this.#ctx.abort("Restoring to a bookmark.");
    return undo;
  }

  /**
   * Releases expired reservations. The supplier is "down" on the first attempt, so this throws and
   * the alarm is retried with backoff; `info` says which attempt this is.
   */
  async alarm(info: AlarmInvocationInfo): Promise<void> {
    if (!info.isRetry) throw new Error("supplier API unavailable (simulated outage)");
    const storage = this.#ctx.storage;
    storage.transactionSync(() => {
      const expired = storage.sql
        .exec<{ id: number; sku: string; qty: number }>(
          "SELECT id, sku, qty FROM reservations WHERE released = 0 AND expires_at_ms <= ?",
          info.scheduledTime,
        )
        .toArray();
      for (const r of expired) {
        storage.sql.exec("UPDATE items SET stock = stock + ? WHERE sku = ?", r.qty, r.sku);
        storage.sql.exec("UPDATE reservations SET released = 1 WHERE id = ?", r.id);
      }
    });
    await storage.put("lastRelease", { atMs: info.scheduledTime, attempt: info.retryCount + 1 });
  }
}
