/**
 * Checks of what the IndexedDB adapter (indexeddb-persistence.ts) reads back: rows can hold
 * anything (another script of the origin, devtools or a bug may have written them), so each commit
 * frame, snapshot entry and image is checked before it is trusted, and the stored log is walked in
 * order to find where a damaged tail begins (or damage that is not a tail).
 */
import { ActorStoreError } from "../errors";
import type { CommitRecord } from "./commit-record";
import { crc32 } from "./crc32";
import type { SnapshotInfo } from "./persistence";
import { decodeRecords } from "./record-codec";

/** A snapshot's entry in the snapshots store. @internal */
export interface StoredSnapshotInfo extends SnapshotInfo {
  crc: number;
}

/**
 * Whether a stored value is bytes: only a `Uint8Array` is a frame or an image. @internal
 */
export function isBytes(value: unknown): value is Uint8Array {
  return Object.prototype.toString.call(value) === "[object Uint8Array]";
}

/** A stored value as a message shows it (a string quoted, so that "2" is told from 2). @internal */
export function show(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/**
 * Why a stored snapshot entry cannot be used, or `undefined` when it is well formed (under its own
 * seq). @internal
 */
export function badSnapshotInfo(info: unknown, key: IDBValidKey): string | undefined {
  if (typeof info !== "object" || info === null) return "it is not an object";
  const { seq, timeMs, bytes, crc } = info as Partial<StoredSnapshotInfo>;
  if (seq !== key || !Number.isSafeInteger(seq) || (seq as number) < 0) return `its seq is ${show(seq)}`;
  if (typeof timeMs !== "number" || !Number.isFinite(timeMs)) return `its time is ${show(timeMs)}`;
  if (!Number.isSafeInteger(bytes) || (bytes as number) < 0) return `its size is ${show(bytes)}`;
  if (!Number.isInteger(crc) || (crc as number) < 0 || (crc as number) > 0xffffffff)
    return `its checksum is ${show(crc)}`;
  return undefined;
}

/** Whether a stored image is the one its entry describes (bytes of that size and checksum). @internal */
export function imageMatches(image: unknown, info: StoredSnapshotInfo): image is Uint8Array {
  return isBytes(image) && image.length === info.bytes && crc32(image) === info.crc;
}

/**
 * The records of the frames stored for seqs `from + 1..to`, which must all be there, in order.
 * `ERR_CORRUPT` (naming `database`) otherwise. @internal
 */
export function recordsOfFrames(
  database: string,
  frames: readonly unknown[],
  from: number,
  to: number,
): CommitRecord[] {
  const records = frames.flatMap((frame) => (isBytes(frame) ? decodeRecords(frame).records : []));
  if (records.length !== to - from || records.some((r, i) => r.seq !== from + 1 + i))
    throw new ActorStoreError(
      "ERR_CORRUPT",
      `The persisted data in IndexedDB database "${database}" is damaged: records ${from + 1}..${to} are not all readable.`,
    );
  return records;
}

/**
 * Checks the stored log row by row, in key order, as load reads it: the first bad or missing
 * record ends the log, and valid data after it means real damage (`ERR_CORRUPT` naming `database`).
 * The log starts right after the oldest snapshot (a prune keeps every record after it), or at seq 1:
 * `firstAllowed`. @internal
 */
export class StoredLogCheck {
  readonly #database: string;
  readonly #firstAllowed: number;
  #previousKey: IDBValidKey | undefined;
  #index = 0;
  /** The first bad row: its index and why. */
  bad: { at: number; why: string } | undefined;
  /** The stored size of each row checked (0 for one that is not bytes). */
  readonly sizes: number[] = [];
  /** The bytes from the first bad row on. */
  truncatedBytes = 0;

  constructor(database: string, firstAllowed: number) {
    this.#database = database;
    this.#firstAllowed = firstAllowed;
  }

  /** Checks the next row: `frame` stored under `key`. */
  add(key: IDBValidKey, frame: unknown): void {
    const i = this.#index++;
    const firstAllowed = this.#firstAllowed;
    const expected = i === 0 ? undefined : (this.#previousKey as number) + 1;
    this.#previousKey = key;
    if (this.bad === undefined && typeof key === "number" && Number.isSafeInteger(key)) {
      if (expected !== undefined && key !== expected) this.bad = { at: i, why: `record ${expected} is missing` };
      else if (expected === undefined && key > firstAllowed)
        this.bad = {
          at: i,
          why:
            key - 1 === firstAllowed
              ? `record ${firstAllowed} is missing`
              : `records ${firstAllowed}..${key - 1} are missing`,
        };
    }
    const decoded = isBytes(frame) ? decodeRecords(frame) : undefined;
    const record = decoded?.records[0];
    const why =
      typeof key !== "number" || !Number.isSafeInteger(key) || key < 1
        ? `a row is stored under key ${show(key)}`
        : decoded === undefined
          ? `record ${key} is not bytes`
          : record === undefined || decoded.tornTail || decoded.records.length !== 1
            ? `record ${key} does not decode (${decoded.reason ?? "extra bytes"})`
            : record.seq !== key
              ? `record stored under ${key} has seq ${record.seq}`
              : undefined;
    if (why !== undefined) this.bad ??= { at: i, why };
    if (this.bad !== undefined && why === undefined)
      throw new ActorStoreError(
        "ERR_CORRUPT",
        `The persisted data in IndexedDB database "${this.#database}" is damaged: ${this.bad.why}, but record ${key} follows it. Delete the database (or restore it from an export) to start again.`,
      );
    this.sizes.push(isBytes(frame) ? frame.length : 0);
    if (this.bad !== undefined) this.truncatedBytes += isBytes(frame) ? frame.length : 0;
  }
}
