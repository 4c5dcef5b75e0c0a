/**
 * Incremental snapshots (docs/durability.md, *Incremental snapshots*): a delta holds only the
 * chunks of the database file that changed since its base snapshot, plus the new file size, and
 * names its base by seq and checksum. A full image followed by its deltas in order is a chain;
 * the state of a delta's seq is its chain's full image with each delta applied in turn.
 *
 * This module holds what every adapter with deltas shares: the file format, when a delta may be
 * written instead of a full image, and the chain rules that pruning and thinning follow (a base
 * that a kept delta needs is never deleted).
 *
 * @packageDocumentation
 */

/** What a storage core hands an adapter to write as a delta (see `writeSnapshotDelta`). */
export interface SnapshotDelta {
  /** The seq of the snapshot this delta applies to (it must be stored). */
  baseSeq: number;
  /** The size of the image after the delta, in bytes. */
  byteLength: number;
  /** The size of every chunk but the image's last (chunk `i` starts at byte `i * chunkBytes`). */
  chunkBytes: number;
  /**
   * The chunks that changed, in ascending index order; each holds the image's bytes from
   * `index * chunkBytes` to the next chunk (or the image's end). Every other chunk is as in the base
   * (bytes past the base's end read as zeros).
   */
  chunks: readonly { index: number; bytes: Uint8Array }[];
}

/** A snapshot as the chain rules see it: `baseSeq` is set for a delta. */
export interface ChainLink {
  seq: number;
  /** The seq of the snapshot a delta applies to; `undefined` for a full image. */
  baseSeq?: number | undefined;
  /** Bytes stored (a full image's size, or a delta file's). */
  bytes: number;
}

/**
 * The most deltas a chain holds: the next snapshot after that is a full image. It bounds what an
 * open reads and applies, and how much log a fallback past a damaged full image keeps.
 */
export const MAX_DELTA_CHAIN = 8;

/**
 * How much more than the image an open may read for a chain (its full image and every delta),
 * as a fraction of the image: past that the next snapshot is a full image again, so an open never
 * reads more than 1.25× the image it builds. A database that grows at its end (each delta mostly
 * new chunks) stays well within it for a whole chain; one whose rows are rewritten all over
 * (deltas of the same chunks again and again) gets a full image again soon.
 */
export const MAX_DELTA_FRACTION = 0.25;

/** The limits {@link deltaFits} applies (tests change them to write deltas of small databases). */
let limits = { chain: MAX_DELTA_CHAIN, fraction: MAX_DELTA_FRACTION };

/**
 * Replaces the limits {@link deltaFits} applies (`undefined`: the defaults); returns the previous
 * ones. @internal
 */
export function setDeltaLimits(next: { chain: number; fraction: number } | undefined): {
  chain: number;
  fraction: number;
} {
  const previous = limits;
  limits = next ?? { chain: MAX_DELTA_CHAIN, fraction: MAX_DELTA_FRACTION };
  return previous;
}

/**
 * Whether a delta of `deltaBytes` for an image of `imageBytes` may be written on top of `chain`
 * (its full image first, the delta's base last): the chain stays within {@link MAX_DELTA_CHAIN}
 * deltas, and what an open would read for it (the full image and every delta, this one too)
 * within (1 + {@link MAX_DELTA_FRACTION}) × the image.
 */
export function deltaFits(chain: readonly ChainLink[], deltaBytes: number, imageBytes: number): boolean {
  const root = chain[0];
  if (root === undefined || root.baseSeq !== undefined) return false;
  if (chain.length - 1 >= limits.chain) return false;
  let sum = deltaBytes;
  for (const link of chain) sum += link.bytes;
  return sum <= imageBytes * (1 + limits.fraction);
}

/**
 * The chain that ends at `seq`: its full image first, `seq`'s snapshot last; `undefined` when
 * `seq` is not held or a base on the way is missing (or the links loop).
 */
export function chainOf<T extends ChainLink>(held: readonly T[], seq: number): T[] | undefined {
  const bySeq = new Map(held.map((s) => [s.seq, s]));
  const chain: T[] = [];
  let at = bySeq.get(seq);
  while (at !== undefined) {
    chain.push(at);
    if (at.baseSeq === undefined) return chain.reverse();
    if (at.baseSeq >= at.seq || chain.length > held.length) return undefined;
    at = bySeq.get(at.baseSeq);
  }
  return undefined;
}

/** Every snapshot that a snapshot of `kept` needs on its way to its full image (not `kept` itself). */
export function basesNeeded(held: readonly ChainLink[], kept: Iterable<number>): Set<number> {
  const bySeq = new Map(held.map((s) => [s.seq, s]));
  const needed = new Set<number>();
  for (const seq of kept) {
    let base = bySeq.get(seq)?.baseSeq;
    while (base !== undefined && !needed.has(base)) {
      needed.add(base);
      base = bySeq.get(base)?.baseSeq;
    }
  }
  return needed;
}

/**
 * Of the snapshots `doomed` (by a prune or by thinning), the ones that may go: none that a
 * snapshot staying needs as its base. Returned newest first, the order to delete them in (a delta
 * goes before its base, so an interrupted deletion never leaves a delta without its base).
 */
export function deletableInChains(held: readonly ChainLink[], doomed: Iterable<number>): number[] {
  const asked = new Set(doomed);
  const needed = new Set<number>();
  const out: number[] = [];
  for (const s of [...held].sort((a, b) => b.seq - a.seq)) {
    if (asked.has(s.seq) && !needed.has(s.seq)) {
      out.push(s.seq);
      continue;
    }
    if (s.baseSeq !== undefined) needed.add(s.baseSeq);
  }
  return out;
}

/**
 * The seq from which a prune keeps every record so that a damaged newest snapshot can be replaced:
 * the snapshot before the newest (a damaged newest delta), and the newest snapshot older than the
 * newest chain's full image (a damaged full image takes every delta on it along). `undefined` with
 * a single snapshot.
 */
export function fallbackSeq(held: readonly ChainLink[]): number | undefined {
  const sorted = [...held].sort((a, b) => a.seq - b.seq);
  const newest = sorted[sorted.length - 1];
  if (newest === undefined) return undefined;
  const rootSeq = chainOf(sorted, newest.seq)?.[0]?.seq ?? newest.seq;
  let before: number | undefined;
  for (const s of sorted) if (s.seq < rootSeq) before = s.seq;
  const second = sorted[sorted.length - 2]?.seq;
  if (before === undefined) return second;
  return second === undefined ? before : Math.min(before, second);
}

// -- the file format ---------------------------------------------------------------------------

const MAGIC = [0x41, 0x53, 0x44, 0x4c]; // "ASDL"
const VERSION = 1;
/** magic, version + 3 reserved, seq, base seq, base crc, chunk bytes, image bytes, chunk count. */
export const DELTA_HEADER_BYTES = 4 + 4 + 8 + 8 + 4 + 4 + 8 + 4;

/** A delta file's header, as parsed. */
export interface DeltaHeader {
  seq: number;
  baseSeq: number;
  /** The base snapshot's CRC-32 (the one in its file name). */
  baseCrc: number;
  chunkBytes: number;
  byteLength: number;
  /** Chunk indexes, ascending. */
  indexes: number[];
  /** Where the first chunk's bytes start in the file. */
  dataOffset: number;
}

/**
 * The bytes of a delta file, as parts written one after another: the header (with the chunk
 * indexes), then each chunk's bytes. The file's CRC-32 (in its name) covers all of it.
 */
export function encodeDelta(seq: number, baseCrc: number, delta: SnapshotDelta): Uint8Array[] {
  const count = delta.chunks.length;
  const header = new Uint8Array(DELTA_HEADER_BYTES + 4 * count);
  const view = new DataView(header.buffer);
  header.set(MAGIC, 0);
  header[4] = VERSION;
  view.setFloat64(8, seq, true);
  view.setFloat64(16, delta.baseSeq, true);
  view.setUint32(24, baseCrc >>> 0, true);
  view.setUint32(28, delta.chunkBytes, true);
  view.setFloat64(32, delta.byteLength, true);
  view.setUint32(40, count, true);
  let previous = -1;
  for (let i = 0; i < count; i++) {
    const chunk = delta.chunks[i] as { index: number; bytes: Uint8Array };
    if (chunk.index <= previous || chunk.bytes.length !== chunkLength(delta, chunk.index))
      throw new RangeError(`delta chunk ${chunk.index} is out of order or of the wrong length`);
    previous = chunk.index;
    view.setUint32(DELTA_HEADER_BYTES + 4 * i, chunk.index, true);
  }
  return [header, ...delta.chunks.map((c) => c.bytes)];
}

/** How long chunk `index` of an image of `byteLength` bytes is (0 past its end). */
function chunkLength(d: { byteLength: number; chunkBytes: number }, index: number): number {
  return Math.max(0, Math.min(d.chunkBytes, d.byteLength - index * d.chunkBytes));
}

/**
 * Parses a delta file's header and checks that it describes the file exactly (`fileBytes` long):
 * the header, or a sentence naming the offset where it is inconsistent.
 */
export function parseDeltaHeader(bytes: Uint8Array, fileBytes: number): DeltaHeader | string {
  if (bytes.length < DELTA_HEADER_BYTES) return `the header is cut short (${bytes.length} bytes)`;
  if (!MAGIC.every((b, i) => bytes[i] === b)) return "byte 0 does not start a delta";
  if (bytes[4] !== VERSION) return `byte 4 holds version ${String(bytes[4])}, not ${VERSION}`;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const seq = view.getFloat64(8, true);
  const baseSeq = view.getFloat64(16, true);
  const baseCrc = view.getUint32(24, true);
  const chunkBytes = view.getUint32(28, true);
  const byteLength = view.getFloat64(32, true);
  const count = view.getUint32(40, true);
  if (!Number.isSafeInteger(seq) || !Number.isSafeInteger(baseSeq) || baseSeq < 0 || baseSeq >= seq)
    return "bytes 8–23 hold no valid seq and base seq";
  if (chunkBytes === 0 || !Number.isSafeInteger(byteLength) || byteLength < 0)
    return "bytes 28–39 hold no valid chunk and image size";
  const dataOffset = DELTA_HEADER_BYTES + 4 * count;
  if (bytes.length < dataOffset) return `the chunk list is cut short at byte ${bytes.length}`;
  const indexes: number[] = [];
  let total = dataOffset;
  for (let i = 0; i < count; i++) {
    const index = view.getUint32(DELTA_HEADER_BYTES + 4 * i, true);
    const length = chunkLength({ byteLength, chunkBytes }, index);
    if ((i > 0 && index <= (indexes[i - 1] as number)) || length === 0)
      return `byte ${DELTA_HEADER_BYTES + 4 * i} names chunk ${index}, out of order or past the image's end`;
    indexes.push(index);
    total += length;
  }
  if (total !== fileBytes) return `the chunks end at byte ${total}, but the file holds ${fileBytes} bytes`;
  return { seq, baseSeq, baseCrc, chunkBytes, byteLength, indexes, dataOffset };
}

/**
 * Applies a delta (its whole file's bytes, parsed) to `image`, whose first `length` bytes hold
 * its base: returns the image's new length. `image` must be at least `header.byteLength` long;
 * bytes past the new length are zeroed (a shrunk image that grows again reads zeros there).
 */
export function applyDelta(image: Uint8Array, length: number, file: Uint8Array, header: DeltaHeader): number {
  if (header.byteLength < length) image.fill(0, header.byteLength, length);
  let at = header.dataOffset;
  for (const index of header.indexes) {
    const n = chunkLength(header, index);
    image.set(file.subarray(at, at + n), index * header.chunkBytes);
    at += n;
  }
  return header.byteLength;
}
