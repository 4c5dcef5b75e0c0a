/**
 * A copy of a live sql.js database image made a few pages at a time, with SQLite's backup API.
 *
 * sql.js's `export()` copies the whole database in one backup step, then hands out the scratch
 * file: at 1 GB that is hundreds of milliseconds during which nothing else of the object runs. The
 * backup API can copy any number of pages per step, and when the source is changed through the
 * same connection, SQLite writes the change into the copy too; so a copy stepped between
 * transactions, over many turns, ends holding exactly the committed state of the moment its last
 * step ran.
 *
 * sql.js exports `sqlite3_backup_init/step/finish` but not its file system, so the copy's bytes
 * could not be read back except by another whole-image `export()`. The destination is therefore
 * opened from a one-page template whose `slice`/`subarray` hand Emscripten's in-memory file system
 * a buffer of ours, with room for the whole image: that file system keeps writing into the buffer
 * it was given for as long as the file fits in it. Whether it still did at the end is checked, not
 * assumed: two writes of the header's user-version field must both show up in our buffer (a
 * reallocation, on growth past the room or on truncation, would leave our buffer behind).
 * When that check fails the copy falls back to `export()` of the finished copy.
 *
 * @packageDocumentation
 */

/** What of the sql.js module the copy uses. */
export interface ImageCopyModule {
  _sqlite3_backup_init(dest: number, destName: number, source: number, sourceName: number): number;
  _sqlite3_backup_step(backup: number, pages: number): number;
  _sqlite3_backup_finish(backup: number): number;
  stringToNewUTF8(text: string): number;
  _free(ptr: number): void;
}

/** A sql.js `Database` as far as the copy uses it. */
export interface ImageCopyDatabase {
  exec(sql: string): { values: unknown[][] }[];
  export(): Uint8Array;
  close(): void;
}

/** A copy in progress (see {@link SqlEngine.beginImageCopy}). */
export interface ImageCopy {
  /**
   * Copies up to `pages` more pages. Call it only between transactions of the source. Returns
   * true when the copy is complete: it then holds the source's state as of this call, and
   * {@link ImageCopy.image} may be called.
   */
  step(pages: number): boolean;
  /** The finished image (once, after `step` returned true); releases the copy's database. */
  image(): Uint8Array;
  /** Stops the copy and releases it (also safe after `image()`). */
  abandon(): void;
}

const SQLITE_OK = 0;
const SQLITE_DONE = 101;
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;

/**
 * Starts a copy of the main database of `sourcePtr` into a new database made with `open`.
 * `template` is a valid one-page database image; `roomBytes` the buffer size to offer.
 */
export function beginImageCopy(
  module: ImageCopyModule,
  sourcePtr: number,
  open: (bytes: Uint8Array) => ImageCopyDatabase,
  pointerOf: (db: ImageCopyDatabase) => number,
  template: Uint8Array,
  roomBytes: number,
  onEnd: () => void,
): ImageCopy {
  const room = new Uint8Array(Math.max(roomBytes, template.length));
  let handed = false;
  const seed = new Uint8Array(template);
  const give = (start = 0, end = seed.length): Uint8Array => {
    // Emscripten's file system copies the initial contents with slice() (or keeps a subarray()
    // when it may own them): either way it keeps what we return as the file's storage.
    room.set(template.subarray(start, end), 0);
    handed = true;
    return room;
  };
  Object.defineProperty(seed, "slice", { value: give });
  Object.defineProperty(seed, "subarray", { value: give });
  const dest = open(seed);
  let backup = 0;
  let finished = false;
  let done = false;
  const release = () => {
    if (finished) return;
    finished = true;
    if (backup !== 0) module._sqlite3_backup_finish(backup);
    backup = 0;
    dest.close();
    onEnd();
  };
  try {
    dest.exec("PRAGMA journal_mode = OFF; PRAGMA locking_mode = EXCLUSIVE; PRAGMA synchronous = OFF");
    const main = module.stringToNewUTF8("main");
    try {
      backup = module._sqlite3_backup_init(pointerOf(dest), main, sourcePtr, main);
    } finally {
      module._free(main);
    }
    if (backup === 0) throw new Error("sqlite3_backup_init failed");
  } catch (e) {
    release();
    throw e;
  }
  return {
    step(pages: number): boolean {
      if (finished || done) return done;
      const rc = module._sqlite3_backup_step(backup, pages);
      if (rc === SQLITE_DONE) {
        done = true;
        return true;
      }
      if (rc === SQLITE_OK || rc === SQLITE_BUSY || rc === SQLITE_LOCKED) return false;
      release();
      throw new Error(`sqlite3_backup_step failed (${rc})`);
    },
    image(): Uint8Array {
      if (!done || finished) throw new Error("the image copy is not complete");
      const rc = module._sqlite3_backup_finish(backup);
      backup = 0;
      try {
        if (rc !== SQLITE_OK) throw new Error(`sqlite3_backup_finish failed (${rc})`);
        const pageCount = Number(dest.exec("PRAGMA page_count")[0]?.values[0]?.[0]);
        const pageSize = Number(dest.exec("PRAGMA page_size")[0]?.values[0]?.[0]);
        const size = pageCount * pageSize;
        if (handed && size <= room.length && writesLandInRoom(dest, room)) return room.subarray(0, size);
        return dest.export();
      } finally {
        release();
      }
    },
    abandon: release,
  };
}

/**
 * Whether the file system still writes the copy into `room`: the user-version header field (bytes
 * 60–63, big-endian) is set to another value and back, and both writes must show in `room`.
 */
function writesLandInRoom(dest: ImageCopyDatabase, room: Uint8Array): boolean {
  const view = new DataView(room.buffer, room.byteOffset, Math.min(room.byteLength, 100));
  if (view.byteLength < 100) return false;
  const version = Number(dest.exec("PRAGMA user_version")[0]?.values[0]?.[0]);
  if (view.getInt32(60) !== version) return false;
  const probe = version === 0x7fffffff ? version - 1 : version + 1;
  dest.exec(`PRAGMA user_version = ${probe}`);
  const moved = view.getInt32(60) === probe;
  dest.exec(`PRAGMA user_version = ${version}`);
  return moved && view.getInt32(60) === version;
}
