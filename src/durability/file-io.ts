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

  constructor(directory: string, fs: Fs, path: Path, sync: boolean) {
    this.directory = directory;
    this.fs = fs;
    this.path = path;
    this.sync = sync;
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
   * flush, rename, directory flush.
   */
  async writeFileAtomic(name: string, data: Uint8Array | readonly Uint8Array[]): Promise<void> {
    const tmp = this.file(name + TMP_SUFFIX);
    const handle = await this.fs.open(tmp, "w");
    try {
      if (data instanceof Uint8Array) await writeAll(handle, data, 0);
      else await writeParts(handle, data);
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

/** Writes `parts` one after another from the start of the file, a few per call. */
async function writeParts(handle: FileHandle, parts: readonly Uint8Array[]): Promise<void> {
  let position = 0;
  for (let first = 0; first < parts.length; first += PARTS_PER_WRITE) {
    const group = parts.slice(first, first + PARTS_PER_WRITE).filter((p) => p.length > 0);
    let length = 0;
    for (const p of group) length += p.length;
    if (length === 0) continue;
    const { bytesWritten } = await handle.writev(group, position);
    if (bytesWritten < length) {
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
    position += length;
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
