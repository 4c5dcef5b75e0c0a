/**
 * Checks of what the IndexedDB adapter (indexeddb-persistence.ts) reads back: rows can hold
 * anything (another script of the origin, devtools or a bug may have written them), so each commit
 * frame, snapshot entry and image is checked before it is trusted: the log's keys and last rows
 * when it is loaded (where a damaged tail begins, or damage that is not a tail), each record as it
 * is streamed.
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
 * Why the row stored under `key` is not the one commit record the adapter wrote there (bytes that
 * decode, length and checksum right, to exactly one record of seq `key`), or `undefined` when it
 * is, with that record. @internal
 */
export function checkFrame(key: IDBValidKey, frame: unknown): { why: string } | { record: CommitRecord } {
  if (typeof key !== "number" || !Number.isSafeInteger(key) || key < 1)
    return { why: `a row is stored under key ${show(key)}` };
  if (!isBytes(frame)) return { why: `record ${key} is not bytes` };
  const decoded = decodeRecords(frame);
  const record = decoded.records[0];
  if (record === undefined || decoded.tornTail || decoded.records.length !== 1)
    return { why: `record ${key} does not decode (${decoded.reason ?? "extra bytes"})` };
  if (record.seq !== key) return { why: `record stored under ${key} has seq ${record.seq}` };
  return { record };
}

/** The stored size of a row: its bytes, 0 for a row that is not bytes. @internal */
export function rowBytes(frame: unknown): number {
  return isBytes(frame) ? frame.length : 0;
}

/**
 * Where the stored log's keys stop being what appends leave (consecutive safe integers from 1 up,
 * starting right after the oldest snapshot, or at seq 1: `firstAllowed`), read from the keys
 * alone: the index of the first key that is not, and why; `undefined` when every key is. @internal
 */
export function firstKeyProblem(
  keys: readonly IDBValidKey[],
  firstAllowed: number,
): { at: number; why: string } | undefined {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (typeof key !== "number" || !Number.isSafeInteger(key) || key < 1)
      return { at: i, why: `a row is stored under key ${show(key)}` };
    if (i === 0) {
      if (key > firstAllowed)
        return {
          at: 0,
          why:
            key - 1 === firstAllowed
              ? `record ${firstAllowed} is missing`
              : `records ${firstAllowed}..${key - 1} are missing`,
        };
      continue;
    }
    const expected = (keys[i - 1] as number) + 1;
    if (key !== expected) return { at: i, why: `record ${expected} is missing` };
  }
  return undefined;
}

/** The error for damage that valid data follows (`database` is the IndexedDB database's name). @internal */
export function damagedLog(database: string, why: string, followedBy: number): ActorStoreError {
  return new ActorStoreError(
    "ERR_CORRUPT",
    `The persisted data in IndexedDB database "${database}" is damaged: ${why}, but record ${followedBy} follows it. Delete the database (or restore it from an export) to start again.`,
  );
}

/**
 * The log of `database` ends at record `logEnd` (`damagedAfter`: rows after it are damaged), before
 * its newest snapshot `snapshotSeq`: records the snapshot's commit and any after it are missing.
 * @internal
 */
export function lostLogEnd(
  database: string,
  snapshotSeq: number,
  logEnd: number,
  damagedAfter: boolean,
): ActorStoreError {
  return new ActorStoreError(
    "ERR_CORRUPT",
    `The persisted data in IndexedDB database "${database}" is damaged: snapshot ${snapshotSeq} is newer than the log's end, record ${logEnd}${damagedAfter ? " (the rows after it are damaged)" : ""}, and a snapshot is written only of a confirmed commit: records ${logEnd + 1}..${snapshotSeq} and any after them are missing, so the commits after seq ${snapshotSeq} are lost. Delete the database (or restore it from an export) to start again.`,
  );
}

/**
 * The records of the rows stored for seqs `from + 1..to`, each checked ({@link checkFrame}) as it
 * is read, since a load checks only the log's keys and its last rows: the rows must all be there,
 * in order, each the one record of its seq. `ERR_CORRUPT` (naming `database`) otherwise: the
 * log's last row checked on load follows a row read here, so it is damage, not a tail.
 * @internal
 */
export function recordsOfFrames(
  database: string,
  frames: readonly unknown[],
  from: number,
  to: number,
): CommitRecord[] {
  if (frames.length !== to - from)
    throw new ActorStoreError(
      "ERR_CORRUPT",
      `The persisted data in IndexedDB database "${database}" is damaged: records ${from + 1}..${to} are not all readable.`,
    );
  const records: CommitRecord[] = [];
  for (let i = 0; i < frames.length; i++) {
    const checked = checkFrame(from + 1 + i, frames[i]);
    if ("why" in checked)
      throw new ActorStoreError(
        "ERR_CORRUPT",
        `The persisted data in IndexedDB database "${database}" is damaged: ${checked.why}. Delete the database (or restore it from an export) to start again.`,
      );
    records.push(checked.record);
  }
  return records;
}
