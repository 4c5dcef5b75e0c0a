/**
 * The file adapter's directory layout (file names and their patterns) and the small byte and I/O
 * helpers it uses. docs/durability.md describes the layout.
 */
import type { FileHandle } from "node:fs/promises";

export const SEGMENT_RE = /^log-(\d{16})\.seg$/;
export const SNAPSHOT_RE = /^snap-(\d{16})-(\d{16})-([0-9a-f]{8})\.sqlite$/;
/** A delta snapshot (snapshot-delta.ts): its seq, time, the file's CRC-32 and its base's seq. */
export const DELTA_RE = /^snap-(\d{16})-(\d{16})-([0-9a-f]{8})-(\d{16})\.delta$/;
/**
 * The log's head marker: an empty file named after the first seq of the newest segment this adapter
 * wrote commits to (see docs/durability.md, *Lost log segments*). A segment from that seq on must
 * exist: without one, the newest segment was lost.
 */
export const HEAD_RE = /^head-(\d{16})$/;
/** The directory's identity (object-identity.ts): an empty file named after a random id (and, when adopted, a seq). */
export const IDENT_RE = /^ident-([0-9a-f]{32})(?:-(\d{16}))?$/;
/**
 * The log's binding marker (log-binding.ts): an empty file named after the seq after which every
 * frame's CRC covers the directory's identity.
 */
export const LOG_BOUND_RE = /^logbound-(\d{16})$/;
/**
 * A repair's record that it left the log ending before the newest snapshot (docs/durability.md,
 * *Lost log segments*): an empty file named after the seq the log ends at. Without it, a usable
 * snapshot newer than the log's end means that log segments (or the end of one) were lost.
 */
export const LOG_CUT_RE = /^logcut-(\d{16})$/;
export const META_NAME = "meta";
export const TMP_SUFFIX = ".tmp";

/** Whether `name` is one of an object directory's files (a segment, a snapshot, the head marker, the identity, the log's binding marker, a repair's log cut, the meta or a lock generation). */
export function isObjectFile(name: string): boolean {
  return (
    SEGMENT_RE.test(name) ||
    SNAPSHOT_RE.test(name) ||
    DELTA_RE.test(name) ||
    HEAD_RE.test(name) ||
    IDENT_RE.test(name) ||
    LOG_BOUND_RE.test(name) ||
    LOG_CUT_RE.test(name) ||
    name === META_NAME ||
    /^lock-\d{16}$/.test(name)
  );
}

export const pad16 = (n: number): string => String(n).padStart(16, "0");
export const segmentName = (firstSeq: number): string => `log-${pad16(firstSeq)}.seg`;
export const headName = (firstSeq: number): string => `head-${pad16(firstSeq)}`;
export const logBoundName = (afterSeq: number): string => `logbound-${pad16(afterSeq)}`;
export const logCutName = (endSeq: number): string => `logcut-${pad16(endSeq)}`;
export const snapshotName = (seq: number, timeMs: number, crc: number): string =>
  `snap-${pad16(seq)}-${pad16(timeMs)}-${crc.toString(16).padStart(8, "0")}.sqlite`;
export const deltaName = (seq: number, timeMs: number, crc: number, baseSeq: number): string =>
  `snap-${pad16(seq)}-${pad16(timeMs)}-${crc.toString(16).padStart(8, "0")}-${pad16(baseSeq)}.delta`;

/** Whether `error` is a Node system error with this `code` (ENOENT, EEXIST, …). */
export function isErrno(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}

/**
 * The first path on the way to `directory` (from the root down, `directory` included) that exists
 * and is not a directory, or `undefined`.
 */
export async function fileOnPath(
  directory: string,
  fs: typeof import("node:fs/promises"),
  path: typeof import("node:path"),
): Promise<string | undefined> {
  const ancestors: string[] = [];
  for (let p = path.resolve(directory); ; p = path.dirname(p)) {
    ancestors.unshift(p);
    if (path.dirname(p) === p) break;
  }
  for (const p of ancestors) {
    const info = await fs.stat(p).catch(() => undefined);
    if (info === undefined) return undefined;
    if (!info.isDirectory()) return p;
  }
  return undefined;
}

/** Writes all of `data` at `position` (a single write may write less). */
export async function writeAll(handle: FileHandle, data: Uint8Array, position: number): Promise<void> {
  let at = 0;
  // write() may write less than asked (large buffers, some file systems): loop until done.
  while (at < data.length) {
    const { bytesWritten } = await handle.write(data, at, data.length - at, position + at);
    at += bytesWritten;
  }
}

/** A plain `Uint8Array` view of a Node `Buffer` (no copy), so callers never get Buffer semantics. */
export function asPlainBytes(buffer: Uint8Array): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}
