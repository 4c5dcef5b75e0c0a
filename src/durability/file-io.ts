/**
 * The durable file operations of the file adapter in one directory: atomic replace (temp file,
 * fsync, rename, directory fsync), truncation, prefix reads and directory fsyncs. docs/durability.md
 * lists where each is used.
 */
import type { FileHandle } from "node:fs/promises";
import { nextTurn } from "../util/clock";
import { crc32Update } from "./crc32";
import { isErrno, TMP_SUFFIX, writeAll } from "./file-layout";

type Fs = typeof import("node:fs/promises");
type Path = typeof import("node:path");

/** Durable writes in one directory. @internal */
export class DirectoryIo {
  readonly directory: string;
  readonly fs: Fs;
  readonly path: Path;
  /** Whether flushes are made (`allowUnsyncedWrites` turns them off). */
  readonly sync: boolean;
  #dirSyncWorks = true;
  /** Cleared when opening a log segment with `O_DSYNC` failed with `EINVAL` (see {@link openLog}). */
  #dsyncWorks = true;

  constructor(directory: string, fs: Fs, path: Path, sync: boolean) {
    this.directory = directory;
    this.fs = fs;
    this.path = path;
    this.sync = sync;
  }

  /**
   * Opens log segment `name` for positional writes: a new file with `create` (it must not exist yet),
   * else the existing one. With flushes on, where the platform has `O_DSYNC` (Linux, macOS), the
   * file is opened with it: each write returns once its bytes (and the size they give the file) are
   * durable, which is what a write followed by `fdatasync` makes durable, in one system call instead
   * of two round trips through the thread pool. `synced` says so; without it (no `O_DSYNC`, such as on
   * Windows; a file system that refuses it with `EINVAL`; or flushes off) the caller flushes each
   * write with `datasync()`.
   */
  async openLog(name: string, create: boolean): Promise<{ handle: FileHandle; synced: boolean }> {
    const file = this.file(name);
    const flags = this.sync && this.#dsyncWorks ? dsyncFlags(this.fs, create) : undefined;
    if (flags !== undefined) {
      try {
        return { handle: await this.fs.open(file, flags), synced: true };
      } catch (error) {
        if (!isErrno(error, "EINVAL")) throw error;
        this.#dsyncWorks = false;
      }
    }
    return { handle: await this.fs.open(file, create ? "wx" : "r+"), synced: false };
  }

  /** The absolute path of `name` in the directory. */
  file(name: string): string {
    return this.path.join(this.directory, name);
  }

  /** Cuts `name` to `length` bytes, durably. */
  async truncate(name: string, length: number): Promise<void> {
    const handle = await this.fs.open(this.file(name), "r+");
    try {
      await handle.truncate(length);
      if (this.sync) await handle.datasync();
    } finally {
      await handle.close();
    }
  }

  /** The first `length` bytes of `name` (fewer if it is shorter). */
  async readPrefix(name: string, length: number): Promise<Uint8Array> {
    const handle = await this.fs.open(this.file(name), "r");
    try {
      const out = new Uint8Array(length);
      let at = 0;
      while (at < length) {
        const { bytesRead } = await handle.read(out, at, length - at, at);
        if (bytesRead === 0) break;
        at += bytesRead;
      }
      return at === length ? out : out.subarray(0, at);
    } finally {
      await handle.close();
    }
  }

  /**
   * The length and CRC-32 of file `name`, read in slices with a turn between them: a snapshot image
   * is read back this way so that verifying a large one never holds the event loop.
   */
  async crcOfFile(name: string): Promise<{ bytes: number; crc: number }> {
    const handle = await this.fs.open(this.file(name), "r");
    try {
      const slice = new Uint8Array(CRC_SLICE_BYTES);
      let bytes = 0;
      let crc = 0;
      for (;;) {
        const { bytesRead } = await handle.read(slice, 0, slice.length, bytes);
        if (bytesRead === 0) return { bytes, crc };
        crc = crc32Update(crc, slice, 0, bytesRead);
        bytes += bytesRead;
      }
    } finally {
      await handle.close();
    }
  }

  /**
   * Replaces `name` with `data` (bytes, or parts written one after another) atomically: temp file,
   * flush, rename, directory flush. With `pacing` (and flushes on), the temp file is written in
   * slices, each flushed before the next and each write and flush started only after
   * `pacing.turn()` resolved (see {@link WritePacing}); the result on disk is the same.
   */
  async writeFileAtomic(name: string, data: Uint8Array | readonly Uint8Array[], pacing?: WritePacing): Promise<void> {
    const tmp = this.file(name + TMP_SUFFIX);
    const handle = await this.fs.open(tmp, "w");
    try {
      const parts = data instanceof Uint8Array ? [data] : data;
      if (pacing !== undefined && this.sync) await writeSlices(handle, parts, pacing);
      else if (data instanceof Uint8Array) await writeAll(handle, data, 0);
      else await writeParts(handle, parts);
      // Full fsync: the file is new, so its size and allocation must be durable before the rename
      // can point at it.
      if (this.sync) await handle.sync();
    } finally {
      await handle.close();
    }
    await this.fs.rename(tmp, this.file(name));
    await this.syncDir(this.directory);
  }

  /**
   * fsyncs a directory so that creates, renames and deletes in it are durable. Some platforms
   * (Windows) cannot open a directory for syncing; there the rename is as durable as the OS makes it.
   */
  async syncDir(dir: string): Promise<void> {
    if (!this.sync || !this.#dirSyncWorks) return;
    let handle: FileHandle;
    try {
      handle = await this.fs.open(dir, "r");
    } catch (error) {
      if (isErrno(error, "EISDIR") || isErrno(error, "EPERM") || isErrno(error, "EACCES")) {
        this.#dirSyncWorks = false;
        return;
      }
      throw error;
    }
    try {
      await handle.sync();
    } catch (error) {
      if (!(isErrno(error, "EINVAL") || isErrno(error, "EPERM") || isErrno(error, "EBADF"))) throw error;
      this.#dirSyncWorks = false;
    } finally {
      await handle.close();
    }
  }
}

/**
 * The numeric open flags of a log segment with `O_DSYNC` (write only, created exclusively; or read
 * and write), or `undefined` where `fs.constants` has no `O_DSYNC`.
 */
function dsyncFlags(fs: Fs, create: boolean): number | undefined {
  const c = (fs as { constants?: Partial<Record<string, number>> }).constants;
  const dsync = c?.O_DSYNC;
  if (c === undefined || typeof dsync !== "number" || dsync === 0) return undefined;
  const { O_WRONLY, O_RDWR, O_CREAT, O_EXCL } = c;
  if (O_WRONLY === undefined || O_RDWR === undefined || O_CREAT === undefined || O_EXCL === undefined) return undefined;
  return (create ? O_WRONLY | O_CREAT | O_EXCL : O_RDWR) | dsync;
}

/** Bytes checksummed per turn: about 4 ms at 1 GB/s. */
const CRC_SLICE_BYTES = 4 * 1024 * 1024;

/**
 * The CRC-32 of `bytes` (or of the concatenation of parts), computed at most a slice per turn (a
 * large snapshot image at once would stall). @internal
 */
export async function crc32InTurns(bytes: Uint8Array | readonly Uint8Array[]): Promise<number> {
  const parts = bytes instanceof Uint8Array ? [bytes] : bytes;
  if (parts.length === 1 && (parts[0] as Uint8Array).length <= CRC_SLICE_BYTES)
    return crc32Update(0, parts[0] as Uint8Array);
  let crc = 0;
  let inTurn = 0;
  for (const part of parts) {
    for (let at = 0; at < part.length; ) {
      const end = Math.min(part.length, at + CRC_SLICE_BYTES - inTurn);
      crc = crc32Update(crc, part, at, end);
      inTurn += end - at;
      at = end;
      if (inTurn >= CRC_SLICE_BYTES) {
        inTurn = 0;
        await nextTurn();
      }
    }
  }
  return crc;
}

/** Parts written per `writev` (a snapshot's chunks are 256 KiB: 16 MiB a call). */
const PARTS_PER_WRITE = 64;

/**
 * How a large file (a snapshot) shares the disk with the log's flushes. Written whole, a snapshot's
 * hundreds of MB sit dirty in the page cache until its final `fsync`, and every log `fdatasync`
 * issued meanwhile queues behind their write-back (100–260 ms at 300 MB on the development VM,
 * docs/benchmarks-history.md, *Snapshot writes paced*). Paced, at most one slice is ever dirty:
 * the slice is written and flushed before the next, and both start only when {@link turn} lets
 * them (the file adapter's resolves once no log write + flush is in flight), so a log flush waits
 * behind at most one slice's write-back. @internal
 */
export interface WritePacing {
  /** Bytes per slice (the last may be shorter); at least 1. */
  readonly sliceBytes: number;
  /** Resolves when the next slice's write, or its flush, may start. */
  turn(): Promise<void>;
}

const SNAPSHOT_SLICE_MIN_BYTES = 1024 * 1024;
const SNAPSHOT_SLICE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Bytes of a snapshot of `imageBytes` written and flushed at a time ({@link WritePacing}): what a
 * log flush may have to wait behind. 1 MiB, larger for images over 256 MiB so that a snapshot takes
 * at most ~256 flushes (each costs a journal commit and a device flush, which is what makes a paced
 * write slower than a whole one), at most 8 MiB. Measured in docs/benchmarks-history.md,
 * *Snapshot writes paced*. @internal
 */
export function snapshotSliceBytes(imageBytes: number): number {
  return Math.min(SNAPSHOT_SLICE_MAX_BYTES, Math.max(SNAPSHOT_SLICE_MIN_BYTES, Math.ceil(imageBytes / 256)));
}

/**
 * Writes `parts` one after another from the start of the file in slices of `pacing.sliceBytes`,
 * each `fdatasync`ed before the next; the caller flushes the whole file after the last.
 */
async function writeSlices(handle: FileHandle, parts: readonly Uint8Array[], pacing: WritePacing): Promise<void> {
  const sliceBytes = Math.max(1, Math.floor(pacing.sliceBytes));
  let position = 0;
  let slice: Uint8Array[] = [];
  let sliceLength = 0;
  const flushSlice = async (last: boolean) => {
    if (sliceLength === 0) return;
    await pacing.turn();
    await writeGroup(handle, slice, position, sliceLength);
    position += sliceLength;
    slice = [];
    sliceLength = 0;
    if (last) return; // the caller's fsync flushes it with the file's size
    await pacing.turn();
    await handle.datasync();
  };
  for (const part of parts) {
    for (let at = 0; at < part.length; ) {
      const end = Math.min(part.length, at + sliceBytes - sliceLength);
      slice.push(part.subarray(at, end));
      sliceLength += end - at;
      at = end;
      if (sliceLength >= sliceBytes) await flushSlice(false);
    }
  }
  await flushSlice(true);
}

/** Writes `parts` one after another from the start of the file, a few per call. */
async function writeParts(handle: FileHandle, parts: readonly Uint8Array[]): Promise<void> {
  let position = 0;
  for (let first = 0; first < parts.length; first += PARTS_PER_WRITE) {
    const group = parts.slice(first, first + PARTS_PER_WRITE).filter((p) => p.length > 0);
    let length = 0;
    for (const p of group) length += p.length;
    if (length === 0) continue;
    await writeGroup(handle, group, position, length);
    position += length;
  }
}

/** Writes `group` (`length` bytes in all) at `position` with `writev`, finishing a short write part by part. */
async function writeGroup(
  handle: FileHandle,
  group: readonly Uint8Array[],
  position: number,
  length: number,
): Promise<void> {
  const { bytesWritten } = await handle.writev(group as Uint8Array[], position);
  if (bytesWritten >= length) return;
  // A short write (rare; some file systems): the rest of the group part by part.
  let skip = bytesWritten;
  let at = position;
  for (const p of group) {
    if (skip >= p.length) {
      skip -= p.length;
      at += p.length;
      continue;
    }
    await writeAll(handle, p.subarray(skip), at + skip);
    at += p.length;
    skip = 0;
  }
}

/** Node's modules the adapter uses, once loaded (see {@link loadNodeModules}). */
let nodeModules:
  | Promise<
      [
        typeof import("node:fs/promises"),
        typeof import("node:path"),
        typeof import("node:os"),
        typeof import("node:fs"),
        typeof import("node:zlib"),
      ]
    >
  | undefined;

/**
 * Node's modules the adapter uses, loaded here, not at the top of the module, so browser bundles
 * never see node: imports; and once per process, not per open: each dynamic import is a round trip
 * through the module loader (under a loader hook, such as tsx's, a message to its thread), which
 * cost more CPU than the rest of opening a small directory. @internal
 */
export function loadNodeModules(): NonNullable<typeof nodeModules> {
  nodeModules ??= Promise.all([
    import("node:fs/promises"),
    import("node:path"),
    import("node:os"),
    import("node:fs"),
    import("node:zlib"),
  ]);
  return nodeModules;
}
