/**
 * What the CRC-32 in a snapshot file's name covers (docs/durability.md, *Files*): the file's bytes
 * followed by a 20-byte **binding** of the seq and time its name carries (`ASSB`, seq and time as
 * float64le). A file renamed to another seq or time therefore fails its checksum, instead of
 * opening as the state of a seq it never held (a plain SQLite image carries no seq of its own).
 *
 * Files that versions before the binding wrote have the CRC of their bytes alone in their name:
 * they are still accepted (their seq cannot be checked). A file written with the binding, renamed,
 * matches neither sum, except by a one-in-2^32 chance.
 *
 * In a directory with an identity (object-identity.ts), the binding is followed by the identity's 16
 * bytes: a file copied from another object's directory under its own name fails its checksum too.
 * There, a file without the identity (either older sum) is accepted only up to the seq the identity
 * was adopted at (the files an older version wrote before).
 *
 * @packageDocumentation
 */
import { crc32Update } from "./crc32";

/** The identity of the directory a snapshot file is in, as its CRC sees it (object-identity.ts). @internal */
export interface SnapshotIdentity {
  id: Uint8Array;
  /** Files up to this seq may lack the identity (written before it was adopted); -1: none may. */
  unboundUpTo: number;
}

/** `ASSB`: the tag the binding starts with. */
const TAG = [0x41, 0x53, 0x53, 0x42];
/** The binding's size in bytes. @internal */
export const SNAPSHOT_BINDING_BYTES = 20;

/** The bytes a snapshot file's name CRC covers after the file: the tag, `seq` and `timeMs`. @internal */
export function snapshotBinding(seq: number, timeMs: number): Uint8Array {
  const bytes = new Uint8Array(SNAPSHOT_BINDING_BYTES);
  bytes.set(TAG, 0);
  const view = new DataView(bytes.buffer);
  view.setFloat64(4, seq, true);
  view.setFloat64(12, timeMs, true);
  return bytes;
}

/**
 * The CRC-32 a snapshot file whose bytes sum to `fileCrc` has in its name, for `seq` and `timeMs`,
 * in a directory of identity `id` (none: a directory without one). @internal
 */
export function nameCrcOf(fileCrc: number, seq: number, timeMs: number, id?: Uint8Array): number {
  const named = crc32Update(fileCrc, snapshotBinding(seq, timeMs));
  return id === undefined ? named : crc32Update(named, id);
}

/**
 * Whether a file whose bytes sum to `fileCrc` is the one its name (`seq`, `timeMs`, `crc`)
 * describes: the name's CRC covers the bytes and the binding, or (a file an older version wrote)
 * the bytes alone. With `identity`, the name's CRC covers the identity too, and a file without it
 * matches only up to the seq the identity was adopted at. @internal
 */
export function matchesName(
  fileCrc: number,
  named: { seq: number; timeMs: number; crc: number; identity?: SnapshotIdentity | undefined },
): boolean {
  const { identity } = named;
  if (identity !== undefined) {
    if (named.crc === nameCrcOf(fileCrc, named.seq, named.timeMs, identity.id)) return true;
    if (named.seq > identity.unboundUpTo) return false;
  }
  return named.crc === nameCrcOf(fileCrc, named.seq, named.timeMs) || named.crc === fileCrc;
}

/**
 * Whether a file whose bytes sum to `fileCrc` is `f`: with `timeMs`, `f.crc` is a snapshot name's
 * CRC ({@link matchesName}); without, the CRC of the bytes alone. @internal
 */
export function crcMatches(
  fileCrc: number,
  f: { crc: number; seq?: number; timeMs?: number | undefined; identity?: SnapshotIdentity | undefined },
): boolean {
  return f.timeMs === undefined || f.seq === undefined
    ? fileCrc === f.crc
    : matchesName(fileCrc, { seq: f.seq, timeMs: f.timeMs, crc: f.crc, identity: f.identity });
}
