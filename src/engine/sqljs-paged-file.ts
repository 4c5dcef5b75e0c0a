/**
 * The live database's file on storage of ours, in fixed-size chunks, so that growing it never
 * copies it.
 *
 * sql.js keeps each database file in Emscripten's in-memory file system (MEMFS), whose file is one
 * `Uint8Array`: when a write goes past its capacity, MEMFS allocates one 12.5% larger and copies
 * the whole file into it, synchronously, inside whichever `sqlite3_step` wrote the page. At 1 GB
 * that is a 1 GB copy every ~125 MB of growth, on the event loop.
 *
 * MEMFS uses little of the object it keeps as a file's contents: `length` (its capacity), `set`
 * (a write), and `subarray` (a read, or the old contents when it reallocates). A {@link PagedFile}
 * offers that surface over a list of chunks: its `length` is a capacity as large as the database
 * may ever be, so MEMFS never reallocates; a write lands in the chunks it covers, allocating the
 * ones it reaches first; a read within one chunk is a view of it (SQLite reads whole pages, and a
 * chunk holds whole pages), a read across chunks a copy.
 *
 * MEMFS takes the object when the file is created from a database image: it stores a copy made
 * with the image's `slice()`, so {@link openOnPagedFile} hands it a view of the image whose
 * `slice` returns the paged file (loaded with the image). A new database is opened from the image
 * of an empty one ({@link freshImage}). Whether MEMFS still writes into the paged file is never
 * assumed where it matters: {@link probePagedFiles} checks the whole path once per loaded module
 * (from sqljs.ts's one build check), and a database whose file MEMFS did not take, or took back
 * (it reallocates a file that is truncated, which SQLite does only for VACUUM, or that outgrows
 * the capacity), keeps working on MEMFS's own storage, only without the benefit.
 *
 * @packageDocumentation
 */

import type { FrozenImage, ImageUse } from "./engine";
import { dropped, newChunk } from "./sqljs-paged-chunks";

/** Bytes per chunk of a database file: a multiple of every SQLite page size (at most 64 KiB). */
export const FILE_CHUNK_BYTES = 256 * 1024;

/** The least a first chunk is allocated with; it then doubles up to a whole chunk. */
const FIRST_CHUNK_MIN = 8192;

/** At most this many chunks are prepared ahead of the file's end (4 MiB with the default chunk). */
const PREPARE_AHEAD_MAX_CHUNKS = 16;

/** How many of the latest chunk writes a freeze copies ahead of the next ones (see `freeze`). */
const RECENT_WRITES = 32;

/** A chunk is a view of an image the caller of `adopt` keeps. */
const SHARED = 1;
/** A chunk is held by a freeze that was not released. */
const FROZEN = 2;

/** Runs a task on a later turn of the event loop. */
export type TurnScheduler = (task: () => void) => void;

/**
 * A file's bytes in chunks, behind the part of the `Uint8Array` surface MEMFS uses for a file's
 * contents. Indexes beyond what was written read as zeros.
 */
export class PagedFile {
  /** Bytes per chunk. */
  readonly chunkBytes: number;
  /** The capacity MEMFS sees (it reallocates only for a write that goes past it). */
  readonly length: number;
  readonly #chunks: (Uint8Array | undefined)[] = [];
  /**
   * Per chunk, why it must be copied before its next write (0: it need not): {@link SHARED} while
   * it is a view of an image its caller keeps (see {@link PagedFile.adopt}), {@link FROZEN} while
   * a {@link PagedFile.freeze} may still hold it. `undefined` when no chunk is either.
   */
  #shared: Uint8Array | undefined;
  /** Freezes not yet released. */
  #freezes = 0;
  /** The chunk indexes of the last {@link RECENT_WRITES} chunk writes (-1: none), a ring; `#recentAt` is next. */
  readonly #recent = new Int32Array(RECENT_WRITES).fill(-1);
  #recentAt = 0;
  #size = 0;
  #writes = 0;
  /**
   * Change marks: per chunk, the {@link PagedFile.#epoch} of its last write (0: not written since
   * the contents were loaded). A freeze takes the current epoch as its mark and starts the next, so
   * the chunks changed since a freeze are those stamped after its mark (see {@link PagedFile.freeze}).
   */
  #stamps = new Uint32Array(0);
  #epoch = 1;
  /** Marks older than this are of contents replaced since (a load, an adopt, a dispose). */
  #marksFrom = 1;
  readonly #watchers = new Set<(first: number, last: number) => void>();
  readonly #later: TurnScheduler | undefined;
  #prepareScheduled = false;
  /**
   * The size when chunks were last prepared (or before the first growth seen): the growth since
   * then is how far ahead to prepare. -1 until the file first grows.
   */
  #preparedAtSize = -1;

  /**
   * A paged file that MEMFS may grow to `capacity` bytes, in chunks of `chunkBytes`. With `later`,
   * a write that grows the file schedules the chunks its next growth will need to be allocated and
   * touched on a later turn ({@link prepareAhead}), instead of inside the write that reaches them.
   */
  constructor(capacity: number, chunkBytes: number = FILE_CHUNK_BYTES, later?: TurnScheduler) {
    if (!(Number.isSafeInteger(chunkBytes) && chunkBytes > 0)) throw new RangeError("chunkBytes must be positive");
    if (!(Number.isSafeInteger(capacity) && capacity >= 0)) throw new RangeError("capacity must be a byte count");
    this.chunkBytes = chunkBytes;
    this.length = capacity;
    this.#later = later;
  }

  /** One past the highest byte ever written (or loaded). */
  get size(): number {
    return this.#size;
  }

  /** How many writes reached this file (a write that MEMFS sends elsewhere does not count). */
  get writes(): number {
    return this.#writes;
  }

  /** How many chunks hold storage. */
  get allocatedChunks(): number {
    let n = 0;
    for (const c of this.#chunks) if (c !== undefined) n++;
    return n;
  }

  /** How many chunks are still views of a shared image (see {@link PagedFile.adopt}). */
  get sharedChunks(): number {
    return this.#flagged(SHARED);
  }

  /** How many chunks a freeze still holds (each is copied before its next write). */
  get frozenChunks(): number {
    return this.#flagged(FROZEN);
  }

  /** How many chunks have `flag` set. */
  #flagged(flag: number): number {
    let n = 0;
    const shared = this.#shared;
    if (shared !== undefined) for (let i = 0; i < shared.length; i++) if ((shared[i] as number) & flag) n++;
    return n;
  }

  /**
   * The first `byteLength` bytes as they are now, without copying them: the parts are the chunks
   * themselves (views), and every chunk a part views is copied before its next write (copy on
   * write), so the parts keep these bytes until {@link FrozenImage.release}. What a freeze costs is
   * one array of views, and later one chunk copy per chunk written while it is held. A range never
   * written reads as zeros, in a part of its own. Each part is one chunk. The freeze carries a
   * change mark; with `changedSince` (an earlier freeze's mark) it also lists the chunks written
   * since that freeze (an incremental snapshot writes only those).
   */
  freeze(byteLength: number, changedSince?: number): FrozenImage {
    if (!(Number.isSafeInteger(byteLength) && byteLength >= 0 && byteLength <= this.#size))
      throw new RangeError(`a freeze covers at most the ${this.#size} bytes written; got ${byteLength}`);
    const size = this.chunkBytes;
    const count = Math.ceil(byteLength / size);
    let flags = this.#shared;
    if (flags === undefined || flags.length < count) {
      const grown = new Uint8Array(Math.max(count, this.#chunks.length));
      if (flags !== undefined) grown.set(flags);
      this.#shared = flags = grown;
    }
    const parts: Uint8Array[] = [];
    for (let index = 0; index < count; index++) {
      const need = Math.min(size, byteLength - index * size);
      const chunk = this.#chunks[index];
      if (chunk !== undefined && chunk.length >= need) {
        parts.push(chunk.subarray(0, need));
        flags[index] = (flags[index] as number) | FROZEN;
      } else {
        // Never written (or written only at its start): zeros past what the chunk holds, in a copy.
        const part = new Uint8Array(need);
        if (chunk !== undefined) part.set(chunk);
        parts.push(part);
      }
    }
    this.#freezes++;
    const mark = this.#epoch++;
    const changed = this.#changedSince(changedSince, count);
    if (this.#later !== undefined && count > 1) {
      const ahead = new Set([0, count - 1, count - 2]);
      for (const index of this.#recent) if (index >= 0 && index < count) ahead.add(index);
      this.#copyAheadOnTurns([...ahead]);
    }
    let held = true;
    return {
      parts,
      byteLength,
      mark,
      chunkBytes: size,
      ...(changed === undefined ? {} : { changed }),
      release: () => {
        if (!held) return;
        held = false;
        // No freeze left: nothing views a chunk still flagged, so later writes may land in place.
        if (--this.#freezes === 0 && this.#shared !== undefined) {
          const shared = this.#shared;
          for (let i = 0; i < shared.length; i++) shared[i] = (shared[i] as number) & ~FROZEN;
        }
      },
    };
  }

  /**
   * The chunks below `count` written after the freeze whose mark is `mark`; `undefined` without a
   * mark, or for a mark of contents replaced since.
   */
  #changedSince(mark: number | undefined, count: number): number[] | undefined {
    if (mark === undefined || !Number.isSafeInteger(mark) || mark < this.#marksFrom || mark >= this.#epoch)
      return undefined;
    const changed: number[] = [];
    const stamps = this.#stamps;
    for (let index = 0; index < count && index < stamps.length; index++)
      if ((stamps[index] as number) > mark) changed.push(index);
    return changed;
  }

  /** Chunk `index` was written: stamped with the current epoch. */
  #stamp(index: number): void {
    if (index >= this.#stamps.length) {
      const grown = new Uint32Array(Math.max(index + 1, 2 * this.#stamps.length, 64));
      grown.set(this.#stamps);
      this.#stamps = grown;
    }
    this.#stamps[index] = this.#epoch;
  }

  /** The contents were replaced: no earlier mark describes them any more. */
  #forgetMarks(): void {
    this.#stamps.fill(0);
    this.#marksFrom = ++this.#epoch;
  }

  /** Replaces the contents with a copy of `image` (before MEMFS uses the file). */
  load(image: Uint8Array): void {
    this.#drop();
    this.#forgetMarks();
    this.#shared = undefined;
    this.#size = image.length;
    if (image.length <= this.chunkBytes) {
      // A small database: one chunk, of its size (it grows by doubling, see #chunkFor).
      const chunk = new Uint8Array(Math.min(this.chunkBytes, Math.max(FIRST_CHUNK_MIN, image.length)));
      chunk.set(image);
      this.#chunks.push(chunk);
      return;
    }
    const count = Math.ceil(image.length / this.chunkBytes);
    // One allocation for the whole image; chunks are views of it.
    const store = new Uint8Array(count * this.chunkBytes);
    store.set(image);
    for (let i = 0; i < count; i++) this.#chunks.push(store.subarray(i * this.chunkBytes, (i + 1) * this.chunkBytes));
  }

  /**
   * Replaces the contents with `image` itself, without copying it (before MEMFS uses the file):
   * the chunks are views of it. With `shared` false the caller hands `image` over and never reads
   * or writes it again, so writes land in it. With `shared` true the caller keeps it (and never
   * changes it): a chunk is copied before its first write, so `image` is never changed, and
   * opening costs only the chunks written; {@link PagedFile.own} ends that once the caller lets go.
   */
  adopt(image: Uint8Array, shared: boolean): void {
    this.#drop();
    this.#forgetMarks();
    this.#size = image.length;
    const size = this.chunkBytes;
    const count = Math.ceil(image.length / size);
    for (let i = 0; i < count; i++) this.#chunks.push(image.subarray(i * size, Math.min(image.length, (i + 1) * size)));
    this.#shared = shared && count > 0 ? new Uint8Array(count).fill(SHARED) : undefined;
  }

  /**
   * The file is no longer used (its database closed, or MEMFS took it back): its chunks are
   * garbage once nothing else holds them (a freeze may, until released). Empties the file.
   */
  dispose(): void {
    this.#drop();
    this.#forgetMarks();
    this.#size = 0;
    this.#shared = undefined;
  }

  #drop(): void {
    for (const chunk of this.#chunks) dropped(chunk);
    this.#chunks.length = 0;
  }

  /**
   * The caller of {@link PagedFile.adopt} with `shared` no longer uses the image: chunks still
   * viewing it are this file's own from now on (later writes land in them in place).
   */
  own(): void {
    const shared = this.#shared;
    if (shared === undefined) return;
    for (let i = 0; i < shared.length; i++) shared[i] = (shared[i] as number) & ~SHARED;
  }

  /** Writes `source` at `offset`, as `Uint8Array.prototype.set` (same errors). */
  set(source: ArrayLike<number>, offset = 0): void {
    if (source instanceof Uint8Array && this.#setInPlace(source, offset)) return;
    const bytes = asBytes(source);
    const start = Math.trunc(Number(offset)) || 0;
    if (start < 0 || start + bytes.length > this.length) throw new RangeError("offset is out of bounds");
    const end = start + bytes.length;
    if (bytes.length === 0) return;
    const size = this.chunkBytes;
    for (let at = start; at < end; ) {
      const index = Math.floor(at / size);
      const within = at - index * size;
      const n = Math.min(size - within, end - at);
      // A write within one chunk (SQLite writes whole pages, and a chunk holds whole pages) lands
      // as it came: a view of the part would be one more object per page written.
      const part = n === bytes.length ? bytes : bytes.subarray(at - start, at - start + n);
      this.#chunkFor(index, within + n).set(part, within);
      this.#stamp(index);
      this.#recent[this.#recentAt] = index;
      this.#recentAt = (this.#recentAt + 1) % RECENT_WRITES;
      at += n;
    }
    if (end > this.#size) {
      if (this.#preparedAtSize < 0) this.#preparedAtSize = this.#size;
      this.#size = end;
      this.#schedulePrepare();
    }
    this.#wrote(start, end);
  }

  /**
   * A write of what SQLite nearly always writes, one page at a whole-number offset, into a chunk
   * that already holds it and that no image or freeze holds, done with nothing but the copy and the
   * write's marks (every page of every COMMIT lands here). False, with nothing done, for any other
   * write, which {@link PagedFile.set} then makes as any write.
   */
  #setInPlace(bytes: Uint8Array, offset: number): boolean {
    const n = bytes.length;
    const size = this.chunkBytes;
    if (!(n > 0 && Number.isSafeInteger(offset) && offset >= 0 && offset + n <= this.length)) return false;
    const index = Math.floor(offset / size);
    const within = offset - index * size;
    const chunk = this.#chunks[index];
    const flags = this.#shared;
    if (chunk === undefined || within + n > chunk.length || (flags !== undefined && (flags[index] ?? 0) !== 0))
      return false;
    chunk.set(bytes, within);
    // (`+ 0` makes a -0 offset 0, as `set` resolves it.)
    const start = offset + 0;
    this.#stamp(index);
    this.#recent[this.#recentAt] = index;
    this.#recentAt = (this.#recentAt + 1) % RECENT_WRITES;
    const end = start + n;
    if (end > this.#size) {
      if (this.#preparedAtSize < 0) this.#preparedAtSize = this.#size;
      this.#size = end;
      this.#schedulePrepare();
    }
    this.#wrote(start, end);
    return true;
  }

  /** A write of the bytes from `start` to `end` reached the chunks: counted, and told to watchers. */
  #wrote(start: number, end: number): void {
    this.#writes++;
    if (this.#watchers.size > 0) {
      const size = this.chunkBytes;
      const first = Math.floor(start / size);
      const last = Math.floor((end - 1) / size);
      for (const watch of this.#watchers) watch(first, last);
    }
  }

  /**
   * The bytes from `begin` to `end` (as `Uint8Array.prototype.subarray`, relative to `length`): a
   * view of the chunk when the range lies in one chunk that holds it, else a copy.
   */
  subarray(begin?: number, end?: number): Uint8Array {
    const length = this.length;
    const a = resolveIndex(begin, 0, length);
    const b = Math.max(a, resolveIndex(end, length, length));
    const index = Math.floor(a / this.chunkBytes);
    if (b > a && Math.floor((b - 1) / this.chunkBytes) === index) {
      const chunk = this.#chunks[index];
      const within = a - index * this.chunkBytes;
      if (chunk !== undefined && within + (b - a) <= chunk.length) return chunk.subarray(within, within + (b - a));
    }
    return this.#copy(a, b);
  }

  /** A copy of the bytes from `begin` to `end` (as `Uint8Array.prototype.slice`). */
  slice(begin?: number, end?: number): Uint8Array {
    const length = this.length;
    const a = resolveIndex(begin, 0, length);
    const b = Math.max(a, resolveIndex(end, length, length));
    return this.#copy(a, b);
  }

  /** Copies the bytes from `position` into `target` (all of it; zeros where nothing was written). */
  read(position: number, target: Uint8Array): void {
    const size = this.chunkBytes;
    const end = position + target.length;
    for (let at = position; at < end; ) {
      const index = Math.floor(at / size);
      const within = at - index * size;
      const n = Math.min(size - within, end - at);
      const chunk = this.#chunks[index];
      const have = chunk === undefined ? 0 : Math.max(0, Math.min(n, chunk.length - within));
      if (chunk !== undefined && have > 0) target.set(chunk.subarray(within, within + have), at - position);
      if (have < n) target.fill(0, at - position + have, at - position + n);
      at += n;
    }
  }

  /**
   * Calls `watch(first, last)` with the chunk indexes each later write covers, until the returned
   * function is called.
   */
  watch(watch: (first: number, last: number) => void): () => void {
    this.#watchers.add(watch);
    return () => this.#watchers.delete(watch);
  }

  /**
   * Allocates and touches (writes zeros into, so the OS maps its pages) the first chunk that the
   * file's next growth will reach and that has no storage yet; returns whether more such chunks
   * remain. The next growth is taken to be as large as the growth since the last call (at most 16
   * chunks), so a steady stream of commits finds its chunks ready, and a file that grows slowly
   * gets its next chunk only once its growth is about to reach it. A new chunk's first
   * touches cost far more than writing into it (on a busy VM, 1 MiB of them took tens of
   * milliseconds): done here, on a turn of their own, they no longer land inside the commit that
   * writes the chunk, and they overlap the wait for the log's flush. A file of one chunk (which
   * grows by doubling) is left alone. Nothing readable changes: a prepared chunk reads as zeros,
   * as a missing one does.
   */
  prepareAhead(): boolean {
    const size = this.chunkBytes;
    if (this.#size <= size) return false;
    const grown = this.#size - Math.max(0, this.#preparedAtSize);
    const ahead = Math.min(PREPARE_AHEAD_MAX_CHUNKS * size, Math.max(1, grown));
    const first = Math.floor(this.#size / size);
    const last = Math.min(Math.ceil(this.length / size), Math.ceil((this.#size + ahead) / size)) - 1;
    for (let index = first; index <= last; index++) {
      if (this.#chunks[index] !== undefined) continue;
      while (this.#chunks.length <= index) this.#chunks.push(undefined);
      const chunk = newChunk(size);
      // One write per 4 KiB page maps it (a fill would write every byte, and shared memory is
      // filled a byte at a time).
      for (let at = 0; at < size; at += 4096) chunk[at] = 0;
      this.#chunks[index] = chunk;
      for (let rest = index + 1; rest <= last; rest++) if (this.#chunks[rest] === undefined) return true;
      break;
    }
    this.#preparedAtSize = this.#size;
    return false;
  }

  /**
   * Copies, on later turns and one per turn, the frozen chunks among `indexes` that are still held
   * by a freeze, as their next write would ({@link PagedFile.freeze}'s copy on write, done early):
   * the parts keep the old chunk, the file goes on in the copy, the bytes are the same. The next
   * commits after a freeze write page 1 (chunk 0), the file's last chunks (growth) and mostly the
   * chunks the last commits wrote (a B-tree's right edge and its parents), which `freeze` passes
   * here; copied on these turns, that commit no longer pays the copies and their first touches
   * (76 ms once in a loaded growth run). A chunk released meanwhile is left alone.
   */
  #copyAheadOnTurns(indexes: readonly number[]): void {
    const later = this.#later;
    if (later === undefined) return;
    let next = 0;
    const run = () => {
      while (next < indexes.length) {
        if (this.#copyFrozen(indexes[next++] as number)) {
          if (next < indexes.length) later(run);
          return;
        }
      }
    };
    later(run);
  }

  /** Replaces frozen chunk `index` with a copy of it; false when no freeze holds it. */
  #copyFrozen(index: number): boolean {
    const flags = this.#shared;
    const chunk = this.#chunks[index];
    if (flags === undefined || chunk === undefined || ((flags[index] ?? 0) & FROZEN) === 0) return false;
    if (index === 0 && this.#chunks.length === 1) return false;
    const copy = newChunk(chunk.length);
    copy.set(chunk);
    this.#chunks[index] = copy;
    flags[index] = 0;
    dropped(chunk);
    return true;
  }

  /** Prepares the next growth's chunks on later turns, one chunk per turn (see {@link prepareAhead}). */
  #schedulePrepare(): void {
    const later = this.#later;
    if (later === undefined || this.#prepareScheduled || this.#size <= this.chunkBytes) return;
    this.#prepareScheduled = true;
    const run = () => {
      if (this.prepareAhead()) later(run);
      else this.#prepareScheduled = false;
    };
    later(run);
  }

  #copy(a: number, b: number): Uint8Array {
    const out = new Uint8Array(Math.max(0, b - a));
    if (out.length > 0) this.read(a, out);
    return out;
  }

  /** Chunk `index`, holding at least `needed` bytes. */
  #chunkFor(index: number, needed: number): Uint8Array {
    while (this.#chunks.length <= index) this.#chunks.push(undefined);
    const chunk = this.#chunks[index];
    const shared = this.#shared !== undefined && (this.#shared[index] ?? 0) !== 0;
    if (chunk !== undefined && chunk.length >= needed && !shared) return chunk;
    // A file of one chunk (a small database) grows that chunk by doubling, as MEMFS would; any
    // other chunk is allocated whole, so no copy is ever larger than one chunk. A view of a
    // shared image is copied before its first write (copy on write), at its own size if that
    // holds the write.
    const alone = index === 0 && this.#chunks.length === 1;
    let length = this.chunkBytes;
    if (alone) {
      const have = chunk?.length ?? 0;
      length = Math.max(FIRST_CHUNK_MIN, needed, shared && have >= needed ? have : 2 * have);
      length = Math.min(this.chunkBytes, length);
    }
    const grown = newChunk(length);
    if (chunk !== undefined) grown.set(chunk);
    this.#chunks[index] = grown;
    dropped(chunk);
    if (shared) (this.#shared as Uint8Array)[index] = 0;
    return grown;
  }
}

/** A byte view of `source` (a typed array of bytes is viewed, anything else converted). */
function asBytes(source: ArrayLike<number>): Uint8Array {
  if (source instanceof Uint8Array) return source;
  if (ArrayBuffer.isView(source) && (source as unknown as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT === 1) {
    return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  }
  const bytes = new Uint8Array(source.length);
  bytes.set(source);
  return bytes;
}

/**
 * An index resolved as `TypedArray.prototype.subarray` resolves `begin` or `end` against `length`
 * (`fallback` when undefined). A plain function: MEMFS calls subarray for every page SQLite reads,
 * and a closure and a pair per call showed in the profile of a 100k-key put.
 */
function resolveIndex(v: number | undefined, fallback: number, length: number): number {
  if (v === undefined) return fallback;
  const n = Math.trunc(Number(v)) || 0;
  return n < 0 ? Math.max(length + n, 0) : Math.min(n, length);
}

/**
 * Opens a database from `image` through `open` (which creates a MEMFS file from the bytes it is
 * given), offering `file` as that file's storage. Returns what `open` returned and whether MEMFS
 * took `file` (when it did not, the database works on MEMFS's own copy). `use` says what may
 * happen to `image` ({@link ImageUse}): with `"copy"` (the default) it is not changed and not
 * kept; with `"take"` the file's chunks are views of it and writes land in it; with `"share"` the
 * chunks are views of it and each is copied before its first write, so it is never changed.
 */
export function openOnPagedFile<T>(
  image: Uint8Array,
  file: PagedFile,
  open: (seed: Uint8Array) => T,
  use: ImageUse = "copy",
): { opened: T; paged: boolean } {
  let paged = false;
  const seed = new Uint8Array(image.buffer, image.byteOffset, image.byteLength);
  const give = (start?: number, end?: number): Uint8Array => {
    // MEMFS copies the first write of a new file with slice(0, length) (or keeps subarray() when
    // it may own the bytes): either way, what we return becomes the file's contents.
    if (paged || (start ?? 0) !== 0 || (end ?? image.length) !== image.length) return image.slice(start, end);
    if (use === "copy") file.load(image);
    else file.adopt(image, use === "share");
    paged = true;
    return file as unknown as Uint8Array;
  };
  Object.defineProperty(seed, "slice", { value: give });
  Object.defineProperty(seed, "subarray", { value: give });
  const opened = open(seed);
  return { opened, paged };
}
