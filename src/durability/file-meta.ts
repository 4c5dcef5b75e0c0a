/**
 * The file adapter's meta file: crc32le, then `ASMV`, the version (float64le), 1 byte
 * present/deleted, then the bytes. A meta file written before versions were kept holds only the
 * crc and the bytes (version 1). In a directory with an identity (object-identity.ts) the CRC
 * covers the identity's 16 bytes after the rest, so a meta file copied from another object's
 * directory fails it; one without (an older version's) is accepted only where the identity was
 * adopted.
 *
 * @packageDocumentation
 */
import { crc32, crc32Update } from "./crc32";
import { corruptError } from "./directory-scan";
import type { ObjectIdentity } from "./object-identity";
import type { VersionedMeta } from "./persistence";

/** Marks a meta file that carries a version. */
const META_MAGIC = [0x41, 0x53, 0x4d, 0x56];
const META_HEADER = META_MAGIC.length + 8 + 1;

/**
 * Whether a meta file's bytes pass their checksum in a directory of `identity`: the CRC over the
 * rest and the identity, or (no identity, or one adopted from an older version's directory) the
 * rest alone. @internal
 */
export function metaChecks(
  bytes: Uint8Array,
  identity: Pick<ObjectIdentity, "id" | "unboundUpTo"> | undefined,
): boolean {
  if (bytes.length < 4) return false;
  const stored = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  const plain = crc32(bytes, 4);
  if (identity !== undefined && stored === crc32Update(plain, identity.id)) return true;
  return (identity === undefined || identity.unboundUpTo >= 0) && stored === plain;
}

/** The metadata and version in a meta file's bytes; `ERR_CORRUPT` when it fails its checksum. @internal */
export function decodeMeta(bytes: Uint8Array, directory: string, identity?: ObjectIdentity): VersionedMeta {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!metaChecks(bytes, identity))
    throw corruptError(
      directory,
      identity === undefined
        ? "the meta file fails its checksum"
        : "the meta file fails its checksum (damaged, or copied from another object's directory: the checksum covers this directory's identity)",
    );
  const payload = bytes.subarray(4);
  // A meta file written before versions were kept holds only the bytes: version 1.
  if (payload.length < META_HEADER || !META_MAGIC.every((b, i) => payload[i] === b))
    return { bytes: payload.slice(), version: 1 };
  const version = view.getFloat64(4 + META_MAGIC.length, true);
  const present = payload[META_MAGIC.length + 8] === 1;
  return { bytes: present ? payload.slice(META_HEADER) : null, version };
}

/**
 * A meta file's bytes for `version` with `bytes` (`null`: a deletion, kept as a tombstone), its CRC
 * covering the directory's identity `id` when it has one. @internal
 */
export function encodeMeta(version: number, bytes: Uint8Array | null, id?: Uint8Array): Uint8Array {
  const payload = new Uint8Array(META_HEADER + (bytes?.length ?? 0));
  payload.set(META_MAGIC, 0);
  new DataView(payload.buffer).setFloat64(META_MAGIC.length, version, true);
  payload[META_MAGIC.length + 8] = bytes === null ? 0 : 1;
  if (bytes !== null) payload.set(bytes, META_HEADER);
  const framed = new Uint8Array(payload.length + 4);
  framed.set(payload, 4);
  const crc = crc32(payload);
  new DataView(framed.buffer).setUint32(0, id === undefined ? crc : crc32Update(crc, id), true);
  return framed;
}
