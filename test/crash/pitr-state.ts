/**
 * The point-in-time crash test's view of a state: a hash of the whole dump (schema, every row and
 * rowid, every key-value pair, the alarm), shared by the child and the parent.
 */
import { createHash } from "node:crypto";
import type { ObjectStorage } from "../../src/storage/object-storage";
import { dumpStorage } from "../durability/dump";

/**
 * A short hash of everything a state holds. The hidden tables are compared through the API (`kv`,
 * `alarm`): a write issued but not yet applied to them is already visible there.
 */
export async function stateHash(storage: ObjectStorage): Promise<string> {
  const dump = await dumpStorage(storage);
  for (const name of Object.keys(dump.tables)) if (name.startsWith("_cf_")) delete dump.tables[name];
  return createHash("sha1").update(JSON.stringify(dump)).digest("hex").slice(0, 16);
}
