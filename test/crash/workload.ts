/**
 * The crash test's workload, shared by the child (worker.ts) and the parent's checks: batch `n`
 * writes `n` everywhere at once — a row `log(n, payload)`, all three rows of `cur`, keys `a`, `b`,
 * `c` and a payload key `p` — in one of several ways, so a recovered state is all-or-nothing exactly
 * when every place holds the same `n` and `log` holds `1..n`.
 */
import type { ObjectStorage } from "../../src/storage/object-storage";
import { coreOf } from "../../src/storage/object-storage";

/** What the child recovered, as the parent checks it. */
export interface RecoveredState {
  /** The newest batch in `log` (0 when only the setup batch, -1 when nothing at all). */
  m: number;
  /** Every place holds `m` and `log` holds exactly `1..m`. */
  consistent: boolean;
  /** The raw facts, for the failure message. */
  detail: string;
}

/** Reads the state of a storage: every place a batch writes to. */
export async function summarize(storage: ObjectStorage): Promise<RecoveredState> {
  const engine = coreOf(storage).engine;
  const exists = engine.query("SELECT count(*) FROM sqlite_schema WHERE name IN ('log', 'cur')")[0]?.[0] === 2;
  const kv = await storage.get<number>(["a", "b", "c", "p"]);
  if (!exists) {
    return { m: -1, consistent: kv.size === 0, detail: `no tables; kv ${JSON.stringify([...kv.keys()])}` };
  }
  const [count, min, max] = (engine.query("SELECT count(*), min(id), max(id) FROM log")[0] ?? []) as number[];
  const m = (max as number | null) ?? 0;
  const cur = engine.query("SELECT id FROM cur ORDER BY slot").map((r) => r[0]);
  const payload = kv.get("p") as unknown as Uint8Array | undefined;
  const logPayload = engine.query("SELECT length(payload) FROM log WHERE id = ?", [m])[0]?.[0] ?? 0;
  const places = [kv.get("a"), kv.get("b"), kv.get("c"), ...cur];
  const consistent =
    count === m &&
    (m === 0 || min === 1) &&
    cur.length === 3 &&
    places.every((x) => x === m) &&
    payload !== undefined &&
    payload.length === logPayload &&
    (payload.length === 0 || payload[0] === m % 256);
  const detail = `log count ${count} min ${min} max ${max}; cur ${JSON.stringify(cur)}; kv ${JSON.stringify(places.slice(0, 3))}; payload ${payload?.length} vs ${logPayload}`;
  return { m, consistent, detail };
}

function payloadOf(n: number, size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.fill(n % 256);
  return bytes;
}

export const SETUP = `CREATE TABLE IF NOT EXISTS log(id INTEGER PRIMARY KEY, payload BLOB);
CREATE TABLE IF NOT EXISTS cur(slot INTEGER PRIMARY KEY, id INTEGER);
INSERT OR IGNORE INTO cur VALUES (1, 0), (2, 0), (3, 0)`;

/**
 * Issues batch `n` in the given way. Returns once its writes are issued (not confirmed); the
 * caller makes sure the next batch starts on a later turn, so batches are separate commits or
 * coalesce whole (either way all-or-nothing).
 */
export async function writeBatch(storage: ObjectStorage, n: number, way: number, size: number): Promise<void> {
  const sql = storage.sql;
  const p = payloadOf(n, size);
  switch (way) {
    case 0:
      void storage.put({ a: n, b: n, c: n, p });
      sql.exec("INSERT INTO log VALUES (?, zeroblob(?))", n, size);
      sql.exec("UPDATE cur SET id = ?", n);
      return;
    case 1:
      await storage.transaction(async (txn) => {
        sql.exec("INSERT INTO log VALUES (?, zeroblob(?))", n, size);
        await txn.put({ a: n, b: n });
        sql.exec("UPDATE cur SET id = ?", n);
        await txn.put({ c: n, p });
      });
      return;
    case 2:
      storage.transactionSync(() => {
        storage.kv.put("a", n);
        sql.exec("INSERT INTO log VALUES (?, zeroblob(?))", n, size);
        storage.kv.put("b", n);
        sql.exec("UPDATE cur SET id = ? WHERE slot <= 2", n);
        storage.kv.put("c", n);
        sql.exec("UPDATE cur SET id = ? WHERE slot = 3", n);
        storage.kv.put("p", p);
      });
      return;
    default:
      void storage.put("a", n);
      sql.exec("INSERT INTO log VALUES (?, zeroblob(?))", n, size);
      void storage.put("b", n);
      void storage.put("c", n);
      sql.exec("UPDATE cur SET id = ?", n);
      void storage.put("p", p);
  }
}
