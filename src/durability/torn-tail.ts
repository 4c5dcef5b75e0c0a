/**
 * Telling a torn write from corruption at the end of the newest log segment (docs/durability.md,
 * *Torn writes and corruption*): the bytes from where decoding stopped are a write a crash
 * interrupted only when they cannot be, or hold, a whole frame. And a log that ends before the
 * newest snapshot is never one a crash left (*Lost log segments*). Read by directory-scan.ts.
 *
 * @packageDocumentation
 */
import { crc32 } from "./crc32";
import type { Damage } from "./directory-scan";
import { decodeRecords, type FrameBinding, frameSumMatches, peekPayloadSeq } from "./record-codec";

/**
 * Whether the log may end where it does: a snapshot is written only of a durable commit, and
 * neither prune nor load removes the segment holding the newest commit, so a usable snapshot newer
 * than the log's end means that segments (or the end of one) holding confirmed commits were lost
 * (the newest segment deleted with its head marker, a segment cut at a frame boundary), which would
 * otherwise open as the snapshot's state without a word, the commits after it gone. Only a repair
 * leaves this, and it records it (`logcut-<the log's end>`). `stale`: the records that excuse
 * nothing now (a writer's load removes them). @internal
 */
export function checkLogEnd(
  directory: string,
  snapshots: readonly { name: string; seq: number }[],
  segments: readonly { name: string; lastSeq: number }[],
  logCuts: readonly { name: string; seq: number }[],
): { refused?: { what: string; damage: Damage; advice: string }; stale: string[] } {
  const newest = snapshots[snapshots.length - 1];
  const last = segments[segments.length - 1];
  const logEnd = last?.lastSeq ?? 0;
  const excused = newest !== undefined && newest.seq > logEnd ? logCuts.find((c) => c.seq === logEnd) : undefined;
  const stale = logCuts.filter((c) => c !== excused).map((c) => c.name);
  if (newest === undefined || newest.seq <= logEnd || excused !== undefined) return { stale };
  return {
    stale,
    refused: {
      what: `snapshot ${newest.name} holds the state of seq ${newest.seq}, but the log ends at seq ${logEnd} (${last === undefined ? "no segment is left" : `in ${last.name}`}), and a snapshot is written only of a confirmed commit: the log that held commits ${logEnd + 1} to ${newest.seq} and any after them is missing (its newest segment deleted or moved out of the directory with its head marker, or a segment cut short), so the commits after seq ${newest.seq} it held are lost`,
      damage: { kind: "lostTail", logEnd, snapshotSeq: newest.seq },
      advice: `Put the missing segments back from a backup, or run actorstore-inspect ${directory} repair: it records that the log ends at seq ${logEnd} and the object opens with the state of seq ${newest.seq}, without the commits after it that the missing log held.`,
    },
  };
}

/**
 * Whether the bytes from `at` (where decoding stopped) to the end of the newest segment are a
 * write a crash interrupted: see the module comment. `lastSeq` is the last valid record's seq.
 * @internal
 */
export function isTornTail(bytes: Uint8Array, at: number, lastSeq: number, binding?: FrameBinding): boolean {
  if (bytes.subarray(at).every((b) => b === 0)) return true;
  if (validFrameAfter(bytes, at + 1, lastSeq, binding)) return false;
  const length = readVarint(bytes, at);
  if (length === "incomplete") return true;
  if (length === "bad" || length.value === 0) return false;
  const end = at + length.size + length.value + 4;
  // A frame that fits in the file but fails its checksum (or parses badly) is whole: not torn.
  if (end <= bytes.length) return false;
  return !wholeFrameUnderOtherLength(bytes, at, binding);
}

/** An unsigned LEB128 varint at `at` (at most 5 bytes, minimal), for frame lengths. */
function readVarint(bytes: Uint8Array, at: number): { value: number; size: number } | "incomplete" | "bad" {
  let value = 0;
  let scale = 1;
  for (let p = at; ; p++) {
    if (p >= bytes.length) return "incomplete";
    if (p - at >= 5) return "bad";
    const b = bytes[p] as number;
    value += (b & 0x7f) * scale;
    scale *= 0x80;
    if (b < 0x80) {
      const size = p - at + 1;
      return size > 1 && b === 0 ? "bad" : { value, size };
    }
  }
}

function encodeVarint(value: number): number[] {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

/**
 * Whether some frame starts after `from` and decodes whole, with a seq after `lastSeq` (a record a
 * writer appended later). Candidates are filtered by their length, flags and seq before the
 * checksum, so the scan is linear in practice.
 */
function validFrameAfter(bytes: Uint8Array, from: number, lastSeq: number, binding: FrameBinding | undefined): boolean {
  const maxSeq = lastSeq + Math.ceil(bytes.length / 6) + 1;
  for (let o = from; o < bytes.length; o++) {
    const length = readVarint(bytes, o);
    if (typeof length === "string" || length.value < 2) continue;
    const end = o + length.size + length.value + 4;
    if (end > bytes.length) continue;
    const seq = peekPayloadSeq(bytes, o + length.size);
    if (seq === undefined || seq <= lastSeq || seq > maxSeq) continue;
    const decoded = decodeRecords(bytes.subarray(o, end), 0, Number.POSITIVE_INFINITY, false, binding);
    if (!decoded.tornTail && decoded.records.length === 1) return true;
  }
  return false;
}

/**
 * Whether the bytes from `at` to the end of the file are one whole frame whose length bytes were
 * damaged: for each possible length size, the length that ends the frame exactly at the end of the
 * file, re-encoded, gives the checksum stored in the last four bytes.
 */
function wholeFrameUnderOtherLength(bytes: Uint8Array, at: number, binding: FrameBinding | undefined): boolean {
  const end = bytes.length;
  if (end - at < 7) return false;
  const stored =
    ((bytes[end - 4] as number) |
      ((bytes[end - 3] as number) << 8) |
      ((bytes[end - 2] as number) << 16) |
      ((bytes[end - 1] as number) << 24)) >>>
    0;
  for (let size = 1; size <= 5; size++) {
    const length = end - 4 - at - size;
    if (length < 1) break;
    const prefix = encodeVarint(length);
    if (prefix.length !== size) continue;
    const frame = new Uint8Array(size + length);
    frame.set(prefix, 0);
    frame.set(bytes.subarray(at + size, end - 4), size);
    if (
      binding === undefined
        ? crc32(frame) === stored
        : frameSumMatches(frame, 0, size, frame.length, stored, binding) === undefined
    )
      return true;
  }
  return false;
}
