/**
 * Numbered series of create-only objects (claims, manifests, metadata versions): `<base>1`,
 * `<base>2`, … each created only after its predecessor exists and never deleted, so "the newest" is
 * found by an exponential then binary search of HEAD requests, which are strongly consistent,
 * instead of by a LIST, which some stores answer from a stale view.
 *
 * @packageDocumentation
 */
import { crc32 } from "../durability/crc32";
import type { VersionedMeta } from "../durability/persistence";
import { ActorStoreError } from "../errors";
import type { S3Client } from "./s3-client";
import type { S3Layout } from "./s3-layout";

/**
 * The highest `n ≥ 1` for which `keyOf(n)` exists (0 when none), starting the search above `known`
 * (a number known to exist).
 * @internal
 */
export async function findLast(client: S3Client, keyOf: (n: number) => string, known = 0): Promise<number> {
  let lo = known;
  let step = 1;
  let hi = known + step;
  while (await client.exists(keyOf(hi))) {
    lo = hi;
    step *= 2;
    hi = known + step;
    if (hi > Number.MAX_SAFE_INTEGER / 2) throw new ActorStoreError("ERR_CORRUPT", "A numbered series never ends.");
  }
  // Invariant: lo exists (or is `known`/0), hi does not.
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (await client.exists(keyOf(mid))) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** The metadata `x-amz-meta-*` of objects a writer creates: whose and which epoch. @internal */
export interface WriterMeta {
  epoch: string;
  writer: string;
}

/**
 * Creates `key` only if absent. When the key is taken and an earlier attempt of this call may have
 * landed, reads it back: it is ours when its writer id and bytes match. Returns whether this call
 * owns the object now.
 * @internal
 */
export async function createOwned(client: S3Client, key: string, body: Uint8Array, meta: WriterMeta): Promise<boolean> {
  const put = await client.putIfAbsent(key, body, { ...meta });
  if (put.outcome === "created") return true;
  if (!put.ambiguous) return false;
  const found = await client.get(key);
  return found !== null && found.meta.writer === meta.writer && sameBytes(found.body, body);
}

/** Byte equality. @internal */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const META_DELETED = 0;
const META_PRESENT = 1;

/**
 * Reads the newest metadata version (`meta/<n>`: a tag byte, crc32le of the bytes, the bytes).
 * Versions are never deleted, so `expected + 1` can be created exactly when `expected` is newest.
 * @internal
 */
export async function readMetaVersion(
  client: S3Client,
  layout: S3Layout,
  known: number,
  corrupt: (what: string) => Error,
): Promise<VersionedMeta> {
  const version = await findLast(client, (n) => layout.meta(n), known);
  if (version === 0) return { bytes: null, version };
  const found = await client.get(layout.meta(version));
  if (found === null) throw corrupt(`metadata version ${version} vanished`);
  const b = found.body;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (b.length < 5 || view.getUint32(1, true) !== crc32(b, 5))
    throw corrupt(`metadata version ${version} fails its checksum`);
  return { bytes: b[0] === META_DELETED ? null : b.slice(5), version };
}

/** Creates metadata version `expected + 1`; false when it exists (another write came first). @internal */
export async function writeMetaVersion(
  client: S3Client,
  layout: S3Layout,
  expected: number,
  bytes: Uint8Array | null,
  meta: WriterMeta,
): Promise<boolean> {
  const payload = bytes ?? new Uint8Array(0);
  const body = new Uint8Array(payload.length + 5);
  body[0] = bytes === null ? META_DELETED : META_PRESENT;
  body.set(payload, 5);
  new DataView(body.buffer).setUint32(1, crc32(body, 5), true);
  return createOwned(client, layout.meta(expected + 1), body, meta);
}

/** A random writer id (hex). @internal */
export function randomId(): string {
  const bytes = new Uint8Array(12);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** @internal */
export function sameSegment(
  a: { lastPosition: number; firstSeq: number },
  b: { lastPosition: number; firstSeq: number } | undefined,
): boolean {
  return b !== undefined && a.lastPosition === b.lastPosition && a.firstSeq === b.firstSeq;
}

/** @internal */
export function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** @internal */
export function prunedError(fromSeq: number): ActorStoreError {
  return new ActorStoreError(
    "ERR_BOOKMARK",
    `Cannot read records from seq ${fromSeq + 1}: part of that history was pruned (outside the retention window).`,
  );
}
