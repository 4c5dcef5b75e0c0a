/**
 * The file adapter's meta file: crc32le, then `ASMV`, the version (float64le), 1 byte
 * present/deleted, then the bytes. A meta file written before versions were kept holds only the
 * crc and the bytes (version 1).
 *
 * @packageDocumentation
 */
import { crc32 } from "./crc32";
import { corruptError } from "./directory-scan";
import type { VersionedMeta } from "./persistence";

/** Marks a meta file that carries a version. */
const META_MAGIC = [0x41, 0x53, 0x4d, 0x56];
const META_HEADER = META_MAGIC.length + 8 + 1;

/** The metadata and version in a meta file's bytes; `ERR_CORRUPT` when it fails its checksum. @internal */
export function decodeMeta(bytes: Uint8Array, directory: string): VersionedMeta {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 4 || view.getUint32(0, true) !== crc32(bytes, 4))
    throw corruptError(directory, "the meta file fails its checksum");
  const payload = bytes.subarray(4);
  // A meta file written before versions were kept holds only the bytes: version 1.
  if (payload.length < META_HEADER || !META_MAGIC.every((b, i) => payload[i] === b))
    return { bytes: payload.slice(), version: 1 };
  const version = view.getFloat64(4 + META_MAGIC.length, true);
  const present = payload[META_MAGIC.length + 8] === 1;
  return { bytes: present ? payload.slice(META_HEADER) : null, version };
}

/** A meta file's bytes for `version` with `bytes` (`null`: a deletion, kept as a tombstone). @internal */
export function encodeMeta(version: number, bytes: Uint8Array | null): Uint8Array {
  const payload = new Uint8Array(META_HEADER + (bytes?.length ?? 0));
  payload.set(META_MAGIC, 0);
  new DataView(payload.buffer).setFloat64(META_MAGIC.length, version, true);
  payload[META_MAGIC.length + 8] = bytes === null ? 0 : 1;
  if (bytes !== null) payload.set(bytes, META_HEADER);
  const framed = new Uint8Array(payload.length + 4);
  framed.set(payload, 4);
  new DataView(framed.buffer).setUint32(0, crc32(payload), true);
  return framed;
}
