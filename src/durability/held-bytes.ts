/**
 * About how many bytes of memory a commit record holds, as the in-memory persistence's history
 * bound counts them (memory-persistence.ts), and the count a record's writer already made.
 *
 * Counting a batch of 1,000 SQL writes after the fact walked 1,000 entries that were long out of
 * the CPU's cache (about 40 µs a batch, a few percent of a batch of small inserts). The storage
 * core counts each entry while it logs it instead, and hands the sum over with the record
 * ({@link noteHeldBytes}); the persistence takes it ({@link heldBytesOf}) and counts only records
 * that come without one. Both counts use the functions below, so they are the same number.
 */
import type { CommitRecord, SqlWrite } from "./commit-record";

/** What a record holds besides its writes, without a session mark and with one. */
const RECORD_HELD_BYTES = 64;
const SESSION_HELD_BYTES = 96;

/** What a record holds besides its writes (`withSession`: it carries a session mark). */
export function recordOverheadHeldBytes(withSession: boolean): number {
  return withSession ? RECORD_HELD_BYTES + SESSION_HELD_BYTES : RECORD_HELD_BYTES;
}

/** What one key-value write holds: the key's characters (two bytes each), the value's bytes. */
export function kvWriteHeldBytes(key: string, value: Uint8Array | null): number {
  return 48 + key.length * 2 + (value === null ? 0 : value.byteLength);
}

/** What a connection input (`changes()` and the like) adds to its entry. */
export const INPUT_HELD_BYTES = 16;
/** What the settings read after a statement add to its entry. */
export const SETTINGS_HELD_BYTES = 64;

/** What one logged SQL write holds, as it stands (its connection inputs and settings included). */
export function sqlWriteHeldBytes(op: SqlWrite): number {
  let n =
    64 +
    op.sql.length * 2 +
    (op.inputs === undefined ? 0 : INPUT_HELD_BYTES * op.inputs.length) +
    (op.settings ? SETTINGS_HELD_BYTES : 0);
  const bindings = op.bindings;
  for (let i = 0; i < bindings.length; i++) {
    const b = bindings[i];
    n += typeof b === "string" ? 16 + b.length * 2 : b instanceof Uint8Array ? 64 + b.byteLength : 8;
  }
  return n;
}

/**
 * About how many bytes of memory a record holds: its strings (two bytes a character), its bytes,
 * and a fixed cost per object. An estimate (engines differ), but one that grows exactly with what
 * the record holds; it is at least the record's encoded size.
 */
export function recordHeldBytes(record: CommitRecord): number {
  // Every field of the record is read before the loops: V8 optimizes a long loop while the
  // function runs, and code after it that never ran has no type feedback, so the optimized code
  // was thrown away at the loop's end, on every call (a tenth of a batch of 1,000 SQL inserts).
  const { kv, sql, session } = record;
  let n = recordOverheadHeldBytes(session !== undefined);
  for (const w of kv) n += kvWriteHeldBytes(w.key, w.value);
  for (const op of sql) n += sqlWriteHeldBytes(op);
  return n;
}

/** Counts handed over with records, by record (a record is never changed once appended). */
const noted = new WeakMap<CommitRecord, number>();

/**
 * Hands `bytes`, the {@link recordHeldBytes} of `record` as its writer counted it, over with the
 * record. Call when the record is complete, right before appending it.
 */
export function noteHeldBytes(record: CommitRecord, bytes: number): void {
  noted.set(record, bytes);
}

/** The count handed over with `record` ({@link noteHeldBytes}), if any. */
export function notedHeldBytes(record: CommitRecord): number | undefined {
  return noted.get(record);
}

/** {@link recordHeldBytes} of `record`: the count handed over with it, or counted now. */
export function heldBytesOf(record: CommitRecord): number {
  return noted.get(record) ?? recordHeldBytes(record);
}
