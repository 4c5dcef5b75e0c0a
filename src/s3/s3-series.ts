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
export async function createOwned(
  client: S3Client,
  key: string,
  body: Uint8Array,
  meta: WriterMeta & { version?: string },
): Promise<boolean> {
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
 * The newest object of the metadata series `meta/<index>`. Its body is a tag byte, crc32le of the
 * bytes, the bytes; `x-amz-meta-version` holds the version `writeMetaIf` compares (objects written
 * before it existed: their index). An open's fence copies the newest object to the next index with
 * the same version, so indexes and versions differ.
 * @internal
 */
export interface MetaHead {
  /** Its index in the series (0: the series is empty). */
  index: number;
  /** The version `readMetaVersion` reports. */
  version: number;
  /** The epoch of the writer that created it (0: none). */
  epoch: number;
  /** Its body as stored (for the fence's copy). */
  body: Uint8Array;
  bytes: Uint8Array | null;
}

/** Encodes a metadata body. @internal */
export function encodeMetaBody(bytes: Uint8Array | null): Uint8Array {
  const payload = bytes ?? new Uint8Array(0);
  const body = new Uint8Array(payload.length + 5);
  body[0] = bytes === null ? META_DELETED : META_PRESENT;
  body.set(payload, 5);
  new DataView(body.buffer).setUint32(1, crc32(body, 5), true);
  return body;
}

/** Reads `meta/<index>`, or `null` when it does not exist. @internal */
export async function readMetaAt(
  client: S3Client,
  layout: S3Layout,
  index: number,
  corrupt: (what: string) => Error,
): Promise<MetaHead | null> {
  const found = await client.get(layout.meta(index));
  if (found === null) return null;
  const b = found.body;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (b.length < 5 || view.getUint32(1, true) !== crc32(b, 5) || (b[0] !== META_DELETED && b[0] !== META_PRESENT))
    throw corrupt(`metadata object ${index} fails its checksum`);
  const version = found.meta.version === undefined ? index : Number(found.meta.version);
  if (!Number.isSafeInteger(version) || version < 0 || version > index)
    throw corrupt(`metadata object ${index} has a malformed version`);
  const epoch = Number(found.meta.epoch ?? 0);
  return {
    index,
    version,
    epoch: Number.isSafeInteger(epoch) && epoch > 0 ? epoch : 0,
    body: b,
    bytes: b[0] === META_DELETED ? null : b.slice(5),
  };
}

/** The newest metadata object, searching above `known` (an index known to exist). @internal */
export async function readNewestMeta(
  client: S3Client,
  layout: S3Layout,
  known: number,
  corrupt: (what: string) => Error,
): Promise<MetaHead> {
  const index = await findLast(client, (n) => layout.meta(n), known);
  if (index === 0) return { index, version: 0, epoch: 0, body: encodeMetaBody(null), bytes: null };
  const found = await readMetaAt(client, layout, index, corrupt);
  if (found === null) throw corrupt(`metadata object ${index} vanished`);
  return found;
}

/** Reads the newest metadata and its version. @internal */
export async function readMetaVersion(
  client: S3Client,
  layout: S3Layout,
  known: number,
  corrupt: (what: string) => Error,
): Promise<VersionedMeta & { index: number }> {
  const head = await readNewestMeta(client, layout, known, corrupt);
  return { bytes: head.bytes, version: head.version, index: head.index };
}

/**
 * The metadata's fence, written by each open after its claim: the newest metadata object copied
 * (same bytes, same version) to the next index by epoch `epoch`. An older holder's write creates
 * the index after the newest one it saw, which is taken then, or finds a newer epoch's object as
 * the newest: either way it is fenced and writes nothing, so a request it makes after this open
 * (a restore) never takes effect. `newer` is set when a newer epoch's object was found first.
 * @internal
 */
export async function fenceMeta(
  client: S3Client,
  layout: S3Layout,
  known: number,
  epoch: number,
  meta: WriterMeta,
  corrupt: (what: string) => Error,
): Promise<{ index: number; newer?: number }> {
  let head: MetaHead | null = await readNewestMeta(client, layout, known, corrupt);
  let last = known;
  for (;;) {
    head ??= await readNewestMeta(client, layout, last, corrupt);
    if (head.epoch > epoch) return { index: head.index, newer: head.epoch };
    const index = head.index + 1;
    if (await createOwned(client, layout.meta(index), head.body, { ...meta, version: String(head.version) }))
      return { index };
    last = index;
    head = await readMetaAt(client, layout, index, corrupt);
  }
}

/**
 * `writeMetaIf`: creates the metadata object after the newest one when that one holds
 * `expectedVersion`. The newest written by a newer epoch (its fence or its write) means the
 * writer is fenced (`newer` is set) and nothing is written.
 * @internal
 */
export async function writeMetaIfNewest(
  client: S3Client,
  layout: S3Layout,
  w: { known: number; epoch: number; expectedVersion: number; bytes: Uint8Array | null; meta: WriterMeta },
  corrupt: (what: string) => Error,
): Promise<{ index: number; written: boolean; newer?: number }> {
  const head = await readNewestMeta(client, layout, w.known, corrupt);
  if (head.epoch > w.epoch) return { index: head.index, written: false, newer: head.epoch };
  if (head.version !== w.expectedVersion) return { index: head.index, written: false };
  const index = head.index + 1;
  const version = String(w.expectedVersion + 1);
  if (await createOwned(client, layout.meta(index), encodeMetaBody(w.bytes), { ...w.meta, version }))
    return { index, written: true };
  const other = await readMetaAt(client, layout, index, corrupt);
  if (other !== null && other.epoch > w.epoch) return { index, written: false, newer: other.epoch };
  return { index: head.index, written: false };
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
export function prunedError(fromSeq: number): ActorStoreError {
  return new ActorStoreError(
    "ERR_BOOKMARK",
    `Cannot read records from seq ${fromSeq + 1}: part of that history is not in the log: pruned (outside the retention window), or lost (log objects deleted from the bucket).`,
  );
}
