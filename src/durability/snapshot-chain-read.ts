/**
 * Reading a snapshot chain of the file adapter (a full image and the deltas on it, see
 * snapshot-delta.ts) into the image of its newest seq, checking every file on the way: each
 * file's CRC-32 against the one in its name, each delta's header against its name and its base's
 * checksum. Used by the directory scan (the newest usable chain) and by `readSnapshot`.
 *
 * @packageDocumentation
 */
import { readInto } from "./crc-off-thread";
import { crc32 } from "./crc32";
import { asPlainBytes } from "./file-layout";
import { applyDelta, DELTA_HEADER_BYTES, type DeltaHeader, parseDeltaHeader } from "./snapshot-delta";

type Fs = typeof import("node:fs/promises");

/** A snapshot file as a chain reader sees it. @internal */
export interface ChainFile {
  name: string;
  seq: number;
  crc: number;
  /** The file's size. */
  bytes: number;
  /** A delta's base seq; `undefined` for a full image. */
  baseSeq?: number | undefined;
  /** The image's size after this snapshot (a full image's is its file's size). */
  imageBytes: number;
}

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
      if (crc32(bytes) !== f.crc) verdict = "it fails its checksum";
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
  async checkDeltas(
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
   * The image of `chain`'s newest seq, or the damage that prevents it. `root` is the full image
   * already read and verified (its first `chain[0].bytes` bytes; it is used in place when it has
   * room for the chain, else copied), or `undefined` to read it here.
   */
  async image(chain: readonly ChainFile[], root?: Uint8Array): Promise<Uint8Array | ChainDamage> {
    const checked = await this.checkDeltas(chain);
    if ("why" in checked) return checked;
    const full = chain[0] as ChainFile;
    let image: Uint8Array;
    if (root !== undefined && root.length >= checked.capacity) image = root;
    else if (root !== undefined) {
      image = new Uint8Array(checked.capacity);
      image.set(root.subarray(0, full.bytes));
    } else {
      image = new Uint8Array(checked.capacity);
      let read: number;
      try {
        read = await readFileInto(this.#fs, this.#file(full.name), image.subarray(0, full.bytes));
      } catch (error) {
        return { file: full, why: `it cannot be read (${error instanceof Error ? error.message : String(error)})` };
      }
      if (read !== full.bytes || crc32(image.subarray(0, full.bytes)) !== full.crc)
        return { file: full, why: "it fails its checksum" };
    }
    let length = full.bytes;
    for (const d of checked.deltas) length = applyDelta(image, length, d.bytes, d.header);
    return image.subarray(0, length);
  }
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
