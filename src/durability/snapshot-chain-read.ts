/**
 * Reading a snapshot chain of the file adapter (a full image and the deltas on it, see
 * snapshot-delta.ts) into the image of its newest seq, checking every file on the way: each
 * file's CRC-32 against the one in its name, each delta's header against its name and its base's
 * checksum. Used by the directory scan (the newest usable chain) and by `readSnapshot`.
 *
 * @packageDocumentation
 */
import { type Piece, readInto, type ScatteredFile } from "./crc-off-thread";
import { crc32 } from "./crc32";
import { asPlainBytes } from "./file-layout";
import { applyDelta, DELTA_HEADER_BYTES, type DeltaHeader, parseDeltaHeader } from "./snapshot-delta";
import { crcMatches, type SnapshotIdentity } from "./snapshot-name-crc";

type Fs = typeof import("node:fs/promises");

/** A snapshot file as a chain reader sees it. @internal */
export interface ChainFile {
  name: string;
  seq: number;
  crc: number;
  /** The file's size. */
  bytes: number;
  /**
   * The time in the file's name: with it, `crc` is a snapshot name's CRC, which covers the file's
   * bytes, then its seq and time (snapshot-name-crc.ts); without, the CRC of its bytes alone.
   */
  timeMs?: number | undefined;
  /** The directory's identity, which the name's CRC covers too (object-identity.ts), if it has one. */
  identity?: SnapshotIdentity | undefined;
  /** A delta's base seq; `undefined` for a full image. */
  baseSeq?: number | undefined;
  /** The image's size after this snapshot (a full image's is its file's size). */
  imageBytes: number;
}

/** The seq and time a file's name CRC covers, if it is a snapshot name's (see {@link ChainFile.timeMs}). */
const namedOf = (f: ChainFile) =>
  f.timeMs === undefined ? undefined : { seq: f.seq, timeMs: f.timeMs, identity: f.identity };

/** Why a chain could not be read: the file at fault and a sentence. @internal */
export interface ChainDamage {
  file: ChainFile;
  why: string;
}

/**
 * Reads a delta file's header (two small reads), for the image size a directory listing reports;
 * a sentence when it cannot be parsed (the file's checksum decides whether it is damaged).
 * @internal
 */
export async function readDeltaHeader(fs: Fs, path: string, fileBytes: number): Promise<DeltaHeader | string> {
  const handle = await fs.open(path, "r");
  try {
    const head = new Uint8Array(DELTA_HEADER_BYTES);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (bytesRead < head.length) return parseDeltaHeader(head.subarray(0, bytesRead), fileBytes);
    const count = new DataView(head.buffer).getUint32(40, true);
    const length = DELTA_HEADER_BYTES + 4 * count;
    if (length > fileBytes) return `the chunk list runs past the file's end (${fileBytes} bytes)`;
    const all = new Uint8Array(length);
    const read = await handle.read(all, 0, length, 0);
    return parseDeltaHeader(all.subarray(0, read.bytesRead), fileBytes);
  } finally {
    await handle.close();
  }
}

/** How to read a chain straight into the image it composes (see {@link layOutChain}). @internal */
export interface ChainLayout {
  /** Every file of the chain, full image first, in pieces. */
  files: ScatteredFile[];
  /** The size of the image of the chain's newest seq. */
  imageBytes: number;
  /** The bytes read only to be checksummed: the deltas' headers and the chunks a newer file rewrites. */
  scratchBytes: number;
}

/**
 * How to read `chain` (its full image first) into the image of its newest seq without building
 * it delta by delta: every file's bytes in file order, each chunk read straight into its place in
 * the image when no newer file of the chain rewrites it, else (and each delta's header) into a
 * scratch buffer that is only checksummed. Every file is read whole, so its CRC can still be
 * checked, and the image holds each byte once, from the newest file that has it: what applying the
 * deltas in turn gives when the image never shrinks on the way (a chunk's newest copy then covers
 * every older one). The headers read here are not yet verified: they only say where bytes go, and
 * the image is used only once every file's CRC matched (the header is part of it).
 *
 * `undefined` when the chain is not of that shape (an image that shrinks on the way, deltas of
 * different chunk sizes, an image larger than the chain's files, a header that does not parse or
 * does not match its name or base): {@link ChainReader.image} then reads it delta by delta, each
 * file checked before it is used, which also names the damage. @internal
 */
export async function layOutChain(
  fs: Fs,
  file: (name: string) => string,
  chain: readonly ChainFile[],
): Promise<ChainLayout | undefined> {
  const full = chain[0];
  if (full === undefined || full.baseSeq !== undefined) return undefined;
  const headers: DeltaHeader[] = [];
  let onDisk = full.bytes;
  let length = full.bytes;
  for (let i = 1; i < chain.length; i++) {
    const f = chain[i] as ChainFile;
    const header = await readDeltaHeader(fs, file(f.name), f.bytes).catch(() => "unreadable");
    if (typeof header === "string") return undefined;
    const base = chain[i - 1] as ChainFile;
    if (header.seq !== f.seq || header.baseSeq !== base.seq || header.baseCrc !== base.crc) return undefined;
    if (header.byteLength < length || header.chunkBytes !== (headers[0] ?? header).chunkBytes) return undefined;
    headers.push(header);
    onDisk += f.bytes;
    length = header.byteLength;
  }
  const chunkBytes = headers[0]?.chunkBytes;
  if (chunkBytes === undefined || length > onDisk) return undefined;
  // The newest file of the chain that holds each chunk (0: the full image).
  const newest = new Int32Array(Math.ceil(length / chunkBytes));
  headers.forEach((h, k) => {
    for (const index of h.indexes) newest[index] = k + 1;
  });
  let scratchBytes = 0;
  const files: ScatteredFile[] = [];
  const place = (pieces: Piece[], offset: number, n: number, index: number, owner: number) => {
    const scratch = newest[index] !== owner;
    const at = scratch ? scratchBytes : index * chunkBytes;
    if (scratch) scratchBytes += n;
    const last = pieces[pieces.length - 1];
    // Runs next to each other in the file and in their buffer are read as one.
    if (last !== undefined && last.scratch === scratch && last.at + last.length === at) last.length += n;
    else pieces.push({ offset, length: n, scratch, at });
  };
  const fullPieces: Piece[] = [];
  for (let index = 0; index * chunkBytes < full.bytes; index++)
    place(fullPieces, index * chunkBytes, Math.min(chunkBytes, full.bytes - index * chunkBytes), index, 0);
  files.push({ path: file(full.name), crc: full.crc, named: namedOf(full), pieces: fullPieces });
  headers.forEach((h, k) => {
    const pieces: Piece[] = [{ offset: 0, length: h.dataOffset, scratch: true, at: scratchBytes }];
    scratchBytes += h.dataOffset;
    let offset = h.dataOffset;
    for (const index of h.indexes) {
      const n = Math.min(chunkBytes, h.byteLength - index * chunkBytes);
      place(pieces, offset, n, index, k + 1);
      offset += n;
    }
    const f = chain[k + 1] as ChainFile;
    files.push({ path: file(f.name), crc: f.crc, named: namedOf(f), pieces });
  });
  return { files, imageBytes: length, scratchBytes };
}

/** Reads chains of one directory; remembers the verdict on each delta it read. @internal */
export class ChainReader {
  readonly #fs: Fs;
  readonly #file: (name: string) => string;
  readonly #deltas = new Map<string, { bytes: Uint8Array; header: DeltaHeader } | string>();

  constructor(fs: Fs, file: (name: string) => string) {
    this.#fs = fs;
    this.#file = file;
  }

  /** A delta's bytes and header, checked against its name; or why it is damaged. */
  async #delta(f: ChainFile): Promise<{ bytes: Uint8Array; header: DeltaHeader } | string> {
    const known = this.#deltas.get(f.name);
    if (known !== undefined) return known;
    let verdict: { bytes: Uint8Array; header: DeltaHeader } | string;
    try {
      const bytes = asPlainBytes(await this.#fs.readFile(this.#file(f.name)));
      const header = parseDeltaHeader(bytes, bytes.length);
      if (!crcMatches(crc32(bytes), f)) verdict = checksumFailure(f);
      else if (typeof header === "string") verdict = header;
      else if (header.seq !== f.seq || header.baseSeq !== f.baseSeq)
        verdict = `its header names seq ${header.seq} on ${header.baseSeq}, not its file name's`;
      else verdict = { bytes, header };
    } catch (error) {
      verdict = `it cannot be read (${error instanceof Error ? error.message : String(error)})`;
    }
    this.#deltas.set(f.name, verdict);
    return verdict;
  }

  /**
   * Checks the deltas of `chain` (its full image first), newest first: the damage found first, or
   * the checked deltas in chain order and the size the image needs on the way.
   */
  async #checkDeltas(
    chain: readonly ChainFile[],
  ): Promise<ChainDamage | { deltas: { bytes: Uint8Array; header: DeltaHeader }[]; capacity: number }> {
    const deltas: { bytes: Uint8Array; header: DeltaHeader }[] = [];
    let capacity = (chain[0] as ChainFile).bytes;
    for (let i = chain.length - 1; i >= 1; i--) {
      const f = chain[i] as ChainFile;
      const base = chain[i - 1] as ChainFile;
      const verdict = await this.#delta(f);
      if (typeof verdict === "string") return { file: f, why: verdict };
      if (verdict.header.baseCrc !== base.crc)
        return { file: f, why: `it applies to a snapshot of seq ${base.seq} with another checksum than ${base.name}` };
      deltas.unshift(verdict);
      capacity = Math.max(capacity, verdict.header.byteLength);
    }
    return { deltas, capacity };
  }

  /**
   * The image of `chain`'s newest seq, or the damage that prevents it: each delta read and checked
   * (newest first), then the full image read into a buffer with room for the chain and checked,
   * then the deltas applied in turn. In line, every file checked before its bytes are used; the
   * open reads a large chain with {@link layOutChain} instead, and comes here when that fails.
   */
  async image(chain: readonly ChainFile[]): Promise<Uint8Array | ChainDamage> {
    const checked = await this.#checkDeltas(chain);
    if ("why" in checked) return checked;
    const full = chain[0] as ChainFile;
    const image = new Uint8Array(checked.capacity);
    let read: number;
    try {
      read = await readFileInto(this.#fs, this.#file(full.name), image.subarray(0, full.bytes));
    } catch (error) {
      return { file: full, why: `it cannot be read (${error instanceof Error ? error.message : String(error)})` };
    }
    if (read !== full.bytes || !crcMatches(crc32(image.subarray(0, full.bytes)), full))
      return { file: full, why: checksumFailure(full) };
    let length = full.bytes;
    for (const d of checked.deltas) length = applyDelta(image, length, d.bytes, d.header);
    return image.subarray(0, length);
  }
}

/**
 * Why a snapshot file whose bytes do not sum to its name's CRC is refused: damaged, or renamed (the
 * CRC covers the seq and time in the name), or (in a directory with an identity) copied from
 * another object's directory; in a directory without an identity file, possibly bound to one that
 * was deleted or not copied along. @internal
 */
export function checksumFailure(f: { timeMs?: number | undefined; identity?: SnapshotIdentity | undefined }): string {
  if (f.timeMs === undefined) return "it fails its checksum";
  return f.identity === undefined
    ? "it fails its checksum (damaged, or renamed: the checksum covers the seq and time in its name; or bound to this directory's identity, whose ident-… file is missing)"
    : "it fails its checksum (damaged, renamed, or copied from another object's directory: the checksum covers the seq and time in its name and this directory's identity)";
}

/** Fills `target` from the start of the file; returns the bytes read. */
async function readFileInto(fs: Fs, path: string, target: Uint8Array): Promise<number> {
  const handle = await fs.open(path, "r");
  try {
    return await readInto(handle, target);
  } finally {
    await handle.close();
  }
}
