/**
 * The file adapter's snapshot files (file-persistence.ts): the list of those held, writing one
 * (full image or delta) durably and reading it back, reading one (through its chain for a delta),
 * and removing some. The log, the lock and the order of maintenance stay with the adapter, which
 * calls these one at a time.
 *
 * @packageDocumentation
 */
import type { OffThreadCrc } from "./crc-off-thread";
import { crc32 } from "./crc32";
import { corruptError, type StoredSnapshot } from "./directory-scan";
import { crc32InTurns, type DirectoryIo, snapshotSliceBytes, type WritePacing } from "./file-io";
import { asPlainBytes, DELTA_RE, isErrno, SNAPSHOT_RE } from "./file-layout";
import type { ObjectIdentity } from "./object-identity";
import { missingSnapshot, snapshotTimeMs } from "./persistence";
import { ChainReader, checksumFailure } from "./snapshot-chain-read";
import { chainOf } from "./snapshot-delta";
import { crcMatches, nameCrcOf } from "./snapshot-name-crc";

/** A snapshot file just written and read back (see {@link SnapshotFiles.write}). */
export interface WrittenSnapshot {
  name: string;
  seq: number;
  timeMs: number;
  bytes: number;
  /** The CRC-32 in its name (its bytes, then its seq and time and the directory's identity: snapshot-name-crc.ts). */
  crc: number;
  /** The directory's identity its name's CRC covers. */
  identity: ObjectIdentity | undefined;
}

/** The snapshot files of one directory. */
export class SnapshotFiles {
  readonly #io: DirectoryIo;
  /** Sums large images and read-backs on another thread, where there is one. */
  readonly #offThreadCrc: OffThreadCrc | undefined;
  /** Resolves when a slice of a snapshot may be written (the log's write + flush in flight is done). */
  readonly #turn: () => Promise<void>;
  #list: StoredSnapshot[] = [];
  /** The newest snapshot's image as load() verified it, handed to the first read of it. */
  #verified: { seq: number; image: Uint8Array } | undefined;
  /** The directory's identity, which every snapshot written is bound to (object-identity.ts). */
  #identity: ObjectIdentity | undefined;

  constructor(io: DirectoryIo, offThreadCrc: OffThreadCrc | undefined, turn: () => Promise<void>) {
    this.#io = io;
    this.#offThreadCrc = offThreadCrc;
    this.#turn = turn;
  }

  /** The snapshots held, oldest first. */
  get list(): readonly StoredSnapshot[] {
    return this.#list;
  }

  /** What a load found (or nothing, before a load and after close). */
  reset(found?: {
    snapshots: StoredSnapshot[];
    verified?: { seq: number; image: Uint8Array } | undefined;
    identity?: ObjectIdentity | undefined;
  }): void {
    this.#list = found?.snapshots ?? [];
    this.#verified = found?.verified;
    this.#identity = found?.identity;
  }

  /** Forgets the image load() verified (a new load, or close). */
  forgetVerified(): void {
    this.#verified = undefined;
  }

  /**
   * Writes a snapshot file (full or delta) durably and reads it back. `undefined` (nothing
   * written) when a snapshot of that seq is held already and a delta is built on it: its state is
   * stored, and replacing it would break that delta's chain.
   */
  async write(
    info: { seq: number; timeMs: number },
    parts: readonly Uint8Array[],
    nameOf: (timeMs: number, crc: number) => string,
  ): Promise<WrittenSnapshot | undefined> {
    if (this.#list.some((s) => s.baseSeq === info.seq)) return undefined;
    const io = this.#io;
    let length = 0;
    for (const part of parts) length += part.length;
    const crc = (await this.#offThreadCrc?.crcOfParts(parts, length)) ?? (await crc32InTurns(parts));
    const timeMs = snapshotTimeMs(info.timeMs);
    // The name's CRC covers the seq and time and the directory's identity too: a file renamed to
    // another seq, or copied into another object's directory, fails it.
    const identity = this.#identity;
    const nameCrc = nameCrcOf(crc, info.seq, timeMs, identity?.id);
    const name = nameOf(timeMs, nameCrc);
    // Temp file, flushed, then renamed: a crash leaves either no snapshot or a whole one, never a
    // partial image under a real snapshot name. The directory fsync makes the rename durable.
    // In slices flushed one at a time, each started once the log's write + flush in flight (if
    // any) is done, so that a log flush never queues behind a whole image's write-back.
    const pacing: WritePacing = { sliceBytes: snapshotSliceBytes(length), turn: this.#turn };
    await io.writeFileAtomic(name, parts.length === 1 ? (parts[0] as Uint8Array) : parts, pacing);
    // Read back before older snapshots may go: until a newer image is known good, prune keeps
    // the previous one and the log after it (see prune), so a damaged image is never the only one.
    const back = (await this.#offThreadCrc?.crcOfFile(io.file(name), length)) ?? (await io.crcOfFile(name));
    if (back.bytes !== length || back.crc !== crc)
      throw corruptError(io.directory, `snapshot ${name} read back differently than it was written`);
    return { name, seq: info.seq, timeMs, bytes: length, crc: nameCrc, identity };
  }

  /** A snapshot file was written: it replaces any other of its seq. */
  async held(seq: number, snapshot: StoredSnapshot): Promise<void> {
    const replaced = this.#list.filter((s) => s.seq === seq && s.name !== snapshot.name);
    for (const s of replaced) await this.#io.fs.rm(this.#io.file(s.name), { force: true });
    this.#list = this.#list.filter((s) => s.seq !== seq);
    this.#list.push(snapshot);
    this.#list.sort((a, b) => a.seq - b.seq);
  }

  /**
   * The image of snapshot `seq`, checked: a delta's is its chain's full image with each delta
   * applied. A fresh buffer nothing here keeps a reference to.
   */
  async read(seq: number): Promise<Uint8Array> {
    const found = this.#list.find((s) => s.seq === seq);
    if (found === undefined) throw missingSnapshot(seq);
    const verified = this.#verified;
    if (verified !== undefined && verified.seq === seq) {
      this.#verified = undefined; // handed out once: opening reads the image load() verified
      return verified.image;
    }
    const io = this.#io;
    if (found.baseSeq !== undefined) {
      // A delta: its chain's full image with each delta applied, every file checked on the way.
      const chain = chainOf(this.#list, seq);
      if (chain === undefined) throw missingSnapshot(found.baseSeq);
      const image = await new ChainReader(io.fs, (name) => io.file(name)).image(chain);
      if (!(image instanceof Uint8Array))
        throw corruptError(
          io.directory,
          `snapshot ${image.file.name}${image.file === found ? "" : `, which ${found.name} is built on,`} cannot be used: ${image.why}; an older snapshot and the log may still reach this state`,
        );
      return image;
    }
    let bytes: Uint8Array;
    try {
      bytes = asPlainBytes(await io.fs.readFile(io.file(found.name)));
    } catch (error) {
      if (isErrno(error, "ENOENT")) throw missingSnapshot(seq);
      throw error;
    }
    if (!crcMatches(crc32(bytes), found))
      throw corruptError(
        io.directory,
        `snapshot ${found.name} cannot be used: ${checksumFailure(found)}; an older snapshot and the log may still reach this state`,
      );
    return bytes;
  }

  /**
   * Removes the snapshots of `seqs` in that order, each removal made durable before the next (a
   * delta goes before its base: whatever a power loss undoes, no delta is left without its base).
   */
  async remove(seqs: readonly number[]): Promise<void> {
    for (const seq of seqs) {
      const s = this.#list.find((x) => x.seq === seq) as StoredSnapshot;
      await this.#io.fs.rm(this.#io.file(s.name), { force: true });
      this.#list = this.#list.filter((x) => x !== s);
      await this.#io.syncDir(this.#io.directory);
    }
  }

  /**
   * Removes the snapshot files older than `beforeSeq` that are not held (a load skipped them as
   * unusable, or a write failed after its rename), newest first, then makes that durable. Never
   * a file of a held snapshot's seq.
   */
  async removeUnheld(beforeSeq: number): Promise<void> {
    const held = new Set(this.#list.map((s) => s.name));
    const heldSeqs = new Set(this.#list.map((s) => s.seq));
    const doomed: { name: string; seq: number }[] = [];
    for (const name of await this.#io.fs.readdir(this.#io.directory)) {
      const match = SNAPSHOT_RE.exec(name) ?? DELTA_RE.exec(name);
      const seq = Number(match?.[1]);
      if (match === null || held.has(name) || !(seq < beforeSeq) || heldSeqs.has(seq)) continue;
      doomed.push({ name, seq });
    }
    if (doomed.length === 0) return;
    doomed.sort((a, b) => b.seq - a.seq);
    for (const { name } of doomed) await this.#io.fs.rm(this.#io.file(name), { force: true });
    await this.#io.syncDir(this.#io.directory);
  }
}
