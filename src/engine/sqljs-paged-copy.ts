/**
 * A snapshot's image copied from a paged database file (sqljs-paged-file.ts) a few chunks per
 * turn, with plain memory copies instead of SQLite's backup API.
 *
 * Between transactions, the database file holds exactly the committed state (the journal is in
 * memory and SQLite writes a transaction's pages at its commit). The copy therefore takes the
 * file's chunks in turn into one buffer, and watches the file: a chunk written after it was copied
 * is copied again. The copy is complete in a step (between transactions, as every step) that finds
 * no chunk left to copy, or so few that copying them then costs little: the buffer then holds the
 * committed state as of that step, which is what {@link ImageCopy} promises. A memory copy of a
 * chunk costs a small part of what the backup API takes for the same pages (it reads each page
 * through SQLite's pager and writes it through the destination's).
 *
 * The copy finishes whatever the object writes meanwhile: each step copies, on top of its budget,
 * the chunks written since the step before, so what is left shrinks at every step; and a copy that
 * had to start over because the database outgrew its room takes steps twice as large from then on.
 * (The backup API's copy, below, has no such guarantee: SQLite's backup restarts at the end of a
 * database that keeps growing.)
 *
 * The file's chunks are only the database's while the file system still writes there: before
 * declaring the copy complete, a header rewrite must reach the file (`writesReach`); if it does not
 * (a VACUUM truncated the file, and the file system took it back), the copy starts over with the
 * backup API.
 *
 * @packageDocumentation
 */
import type { ImageCopy } from "./sqljs-image-copy";
import type { PagedFile } from "./sqljs-paged-file";

/** What the copy needs of the database besides its file. */
export interface PagedCopySource {
  /** The database's size now: page count × page size. */
  databaseBytes(): number;
  /** Whether the file system still writes the database into the file (writes the header page). */
  writesReach(): boolean;
  /** A copy with the backup API, when the file is no longer the database's. */
  backupCopy(): ImageCopy;
}

/**
 * Chunks left to copy at which a step finishes the copy at once, after a first pass over the
 * whole file: that much is a few milliseconds of memory copying.
 */
const FINISH_WITHIN_CHUNKS = 16;
/** Bytes copied, as multiples of the image, after which the next step finishes whatever is left. */
const MAX_PASSES = 4;

/** Room for an image of `bytes` and half as much growth, in whole chunks. */
const roomFor = (bytes: number, chunkBytes: number) => Math.ceil((bytes * 1.5) / chunkBytes + 4) * chunkBytes;

/**
 * Starts a copy of the database in `file`. `pageBytes` is the database's page size (a step of
 * `pages` pages copies that many bytes' worth of chunks, at least one).
 */
export function beginPagedImageCopy(
  file: PagedFile,
  source: PagedCopySource,
  pageBytes: number,
  onEnd: () => void,
): ImageCopy {
  const chunkBytes = file.chunkBytes;
  const startBytes = source.databaseBytes();
  // Room for the image plus growth while the copy runs (untouched room costs no resident memory).
  let image = new Uint8Array(roomFor(startBytes, chunkBytes));
  let pending = new Uint8Array(Math.ceil(image.length / chunkBytes));
  let pendingCount = 0;
  const mark = (first: number, last: number) => {
    if (last >= pending.length) {
      const grown = new Uint8Array(Math.max(last + 1, pending.length * 2));
      grown.set(pending);
      pending = grown;
    }
    for (let i = first; i <= last; i++) {
      if (pending[i] === 0) {
        pending[i] = 1;
        pendingCount++;
      }
    }
  };
  mark(0, Math.max(0, Math.ceil(startBytes / chunkBytes) - 1));
  // Chunks the database wrote (and the copy must take again) since the last step: each step copies
  // those on top of its own budget, so what is left to copy shrinks by that budget at every step,
  // however fast the object writes.
  let writtenSinceStep = 0;
  const unwatch = file.watch((first, last) => {
    const before = pendingCount;
    mark(first, last);
    writtenSinceStep += pendingCount - before;
  });
  // Doubles each time the database outgrows the copy's room: a copy that had to start over because
  // the object grew the database faster than the copy went takes larger steps, so it finishes.
  let boost = 1;
  let cursor = 0;
  let copied = 0;
  let firstPassDone = false;
  let done = false;
  let ended = false;
  let size = 0;
  let backup: ImageCopy | undefined;

  const copyChunk = (index: number) => {
    pending[index] = 0;
    pendingCount--;
    const start = index * chunkBytes;
    const end = Math.min(start + chunkBytes, file.size);
    if (end <= start) return;
    if (end > image.length) {
      // The database outgrew the room (it grew by half while the copy ran): a larger buffer, filled
      // over the next steps like the first one (copying the old buffer over would be a whole
      // image in one turn).
      image = new Uint8Array(roomFor(end, chunkBytes));
      mark(0, Math.ceil(file.size / chunkBytes) - 1);
      firstPassDone = false;
      copied = 0;
      boost *= 2;
      return;
    }
    file.read(start, image.subarray(start, end));
    copied += end - start;
  };
  const copyNext = () => {
    for (let n = 0; n < pending.length; n++) {
      const index = (cursor + n) % pending.length;
      if (pending[index] === 1) {
        cursor = index + 1;
        if (cursor >= pending.length) firstPassDone = true;
        copyChunk(index);
        return;
      }
    }
  };
  const end = () => {
    if (ended) return;
    ended = true;
    unwatch();
    onEnd();
  };

  return {
    step(pages: number): boolean {
      if (backup !== undefined) return backup.step(pages);
      if (ended || done) return done;
      const budget = Math.max(1, Math.ceil((pages * pageBytes) / chunkBytes)) * boost + writtenSinceStep;
      writtenSinceStep = 0;
      for (let n = 0; n < budget && pendingCount > 0; n++) copyNext();
      if (pendingCount === 0) firstPassDone = true;
      const finish =
        firstPassDone && (pendingCount <= FINISH_WITHIN_CHUNKS || copied >= MAX_PASSES * Math.max(startBytes, 1));
      if (!finish) return false;
      // The header rewrite marks the first chunk to copy again: it is copied with the rest.
      if (!source.writesReach()) {
        unwatch();
        backup = source.backupCopy();
        return backup.step(pages);
      }
      while (pendingCount > 0) copyNext();
      size = source.databaseBytes();
      if (size > file.size) throw new Error("the database is larger than its file");
      done = true;
      return true;
    },
    image(): Uint8Array {
      if (backup !== undefined) {
        try {
          return backup.image();
        } finally {
          end();
        }
      }
      if (!done || ended) throw new Error("the image copy is not complete");
      end();
      return image.subarray(0, size);
    },
    abandon(): void {
      backup?.abandon();
      end();
    },
  };
}
