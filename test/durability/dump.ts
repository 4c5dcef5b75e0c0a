/**
 * A full logical dump of one object's storage, for "is this exactly the same state?" assertions in
 * the point-in-time recovery and crash tests.
 *
 * It reads the engine directly (the SQL facade hides `_cf_*` tables and `sqlite_schema`), so the
 * hidden key-value and alarm tables, `sqlite_sequence` (AUTOINCREMENT) and every rowid are part of
 * the comparison. Values go through `quote()`, which prints integers exactly (JS numbers would
 * round the low bits of a 64-bit `random()`), reals, text and blobs (`X'…'`) unambiguously.
 */
import type { EngineValue, SqlEngine } from "../../src/engine/engine";
import type { ObjectStorage } from "../../src/storage/object-storage";
import { coreOf } from "../../src/storage/object-storage";

/** What {@link dumpStorage} returns; compare two with `toEqual`. */
export interface StorageDump {
  /** `type name tbl_name sql` of every schema object, sorted. */
  schema: string[];
  /** Table name → its rows (rowid first where the table has one), each row quoted, sorted. */
  tables: Record<string, string[]>;
  /** Every key-value pair, through the public API (decoded values). */
  kv: Array<[string, unknown]>;
  /** The alarm through the public API. */
  alarm: number | null;
}

const ident = (name: string): string => `"${name.replaceAll('"', '""')}"`;

function text(value: EngineValue): string {
  return value instanceof Uint8Array ? `blob:${Buffer.from(value).toString("hex")}` : String(value);
}

function hasRowid(engine: SqlEngine, table: string): boolean {
  try {
    engine.query(`SELECT rowid FROM ${ident(table)} LIMIT 0`);
    return true;
  } catch {
    return false; // WITHOUT ROWID
  }
}

/** The SQL part of the dump: schema and every row of every table, hidden ones included. */
export function dumpEngine(engine: SqlEngine): Pick<StorageDump, "schema" | "tables"> {
  const schemaRows = engine.query("SELECT type, name, tbl_name, sql FROM sqlite_schema");
  const schema = schemaRows.map((r) => r.map(text).join(" ")).sort();
  const tables: Record<string, string[]> = {};
  const names = engine
    .query("SELECT name FROM sqlite_schema WHERE type = 'table'")
    .map((r) => String(r[0]))
    .sort();
  for (const name of names) {
    const columns = engine.query(`SELECT name FROM pragma_table_info(?)`, [name]).map((r) => String(r[0]));
    const quoted = columns.map((c) => `quote(${ident(c)})`);
    if (hasRowid(engine, name)) quoted.unshift("quote(rowid)");
    const rows = engine.query(`SELECT ${quoted.join(", ")} FROM ${ident(name)}`);
    tables[name] = rows.map((r) => r.map(text).join("|")).sort();
  }
  return { schema, tables };
}

/** The whole dump. Call it when no batch is open (after `sync()`). */
export async function dumpStorage(storage: ObjectStorage): Promise<StorageDump> {
  const { schema, tables } = dumpEngine(coreOf(storage).engine);
  const kv = [...(await storage.list())];
  const alarm = await storage.getAlarm();
  return { schema, tables, kv, alarm };
}
