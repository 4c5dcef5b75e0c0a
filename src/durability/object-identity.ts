/**
 * The identity of an object's directory (docs/durability.md, *Files from another object*): a random
 * 128-bit id, kept as the name of an empty file `ident-<32 hex>` (created once, by the first
 * writer's load), that the CRC in every snapshot file's name covers (snapshot-name-crc.ts). A full
 * image or delta copied from another object's directory under its own name then fails its checksum
 * like a damaged or renamed one, instead of opening as a state this object never held.
 *
 * A directory an older version wrote has no identity: the first writer's load of this version
 * *adopts* one, named `ident-<32 hex>-<seq, 16 digits>`, where the seq is the newest the directory
 * held then. Snapshot files without the identity in their checksum are accepted only up to that
 * seq (the files the older version wrote); every file written since carries it. A directory created
 * by this version accepts none.
 *
 * Creating it is crash-safe: the name is the whole content (created exclusively, empty, so a crash
 * leaves it whole or absent), and it is made durable (directory `fsync`) before any file bound to
 * it is written, so no file on disk ever needs an identity that a crash lost.
 *
 * @packageDocumentation
 */
import type { DirectoryScan } from "./directory-scan";
import { IDENT_RE, META_NAME, pad16 } from "./file-layout";
import { frameBinding } from "./log-binding";

/** A directory's identity, as its file names it. @internal */
export interface ObjectIdentity {
  /** The identity file's name. */
  name: string;
  /** The 16 bytes that snapshot name CRCs cover. */
  id: Uint8Array;
  /**
   * Snapshot files of a seq up to this one may lack the identity (files an older version wrote
   * before the identity was adopted); `-1` when none may (the directory was created with it).
   */
  unboundUpTo: number;
}

/** The identity an `ident-…` file name holds, or `undefined` for another name. @internal */
export function parseIdentity(name: string): ObjectIdentity | undefined {
  const m = IDENT_RE.exec(name);
  if (m === null) return undefined;
  const hex = m[1] as string;
  const id = new Uint8Array(16);
  for (let i = 0; i < 16; i++) id[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  const upTo = m[2] === undefined ? -1 : Number(m[2]);
  return { name, id, unboundUpTo: Number.isSafeInteger(upTo) ? upTo : -1 };
}

/**
 * A new identity's file name: a fresh random id; with `adoptedAt` (the newest seq of a directory
 * an older version wrote), snapshot files without it are accepted up to that seq. @internal
 */
export function newIdentityName(adoptedAt: number | undefined): string {
  const id = new Uint8Array(16);
  globalThis.crypto.getRandomValues(id);
  const hex = Array.from(id, (b) => b.toString(16).padStart(2, "0")).join("");
  return adoptedAt === undefined ? `ident-${hex}` : `ident-${hex}-${pad16(adoptedAt)}`;
}

/**
 * Creates the identity file `name` in `directory` (empty, exclusively) and makes it durable before
 * resolving: only then may a file bound to it be written. @internal
 */
export async function createIdentity(
  io: {
    fs: typeof import("node:fs/promises");
    file(name: string): string;
    syncDir(directory: string): Promise<void>;
    directory: string;
  },
  name: string,
): Promise<ObjectIdentity> {
  const identity = parseIdentity(name);
  if (identity === undefined) throw new RangeError(`${name} is not an identity file's name`);
  await io.fs.writeFile(io.file(name), new Uint8Array(0), { flag: "wx" });
  await io.syncDir(io.directory);
  return identity;
}

/**
 * A writer's load of a directory without an identity gives it one before anything is written
 * (durably, so no file is ever bound to an identity a crash lost): a directory with no snapshot and
 * no commit gets a fresh one, one an older version wrote adopts one at its newest seq (its files
 * and meta file stay accepted). The scan is returned with its snapshots bound to the identity. @internal
 */
export async function adoptIdentity(
  io: Parameters<typeof createIdentity>[0],
  scan: DirectoryScan,
): Promise<DirectoryScan> {
  if (scan.identity !== undefined) return scan;
  // Anything an older version wrote, the meta file (a restore request) too, is adopted.
  const meta = await io.fs.stat(io.file(META_NAME)).then(
    () => true,
    () => false,
  );
  const written = scan.lastSeq > 0 || scan.snapshots.length > 0 || scan.damagedSnapshots.length > 0 || meta;
  const identity = await createIdentity(io, newIdentityName(written ? scan.lastSeq : undefined));
  for (const s of [...scan.snapshots, ...scan.damagedSnapshots]) s.identity = identity;
  return { ...scan, identity, binding: frameBinding(identity.id, scan.logBound) };
}
