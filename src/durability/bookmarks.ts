/**
 * Bookmark strings: names of committed states, in the platform's shape
 * (`xxxxxxxx-xxxxxxxx-xxxxxxxx-` + 32 hex digits, lowercase, fixed width).
 *
 * ```
 * SSSSSSSS-SSSSSSSS-TTTTTTTT-TTTTTTTTEEEEEEEEVVVVVVVVCCCCCCCC
 * └── seq (u64) ──┘ └──── timeMs (u64) ───┘│       │       └ CRC-32 of the 24 bytes before it
 *                                          │       └ layout version (1; 2 = before the next restore)
 *                                          └ epoch (u32, caller-defined, 0 by default)
 * ```
 *
 * Every field is big-endian hex, most significant first, and the seq leads, so plain string
 * comparison (`<`, `Array.prototype.sort()`) orders bookmarks of one object by commit order. The
 * checksum makes a mistyped or truncated bookmark fail loudly instead of naming some other state.
 *
 * @packageDocumentation
 */
import { ActorStoreError } from "../errors";
import { crc32 } from "./crc32";

/** The layout version of a bookmark that names its commit's state. */
export const BOOKMARK_VERSION = 1;
/**
 * The layout version of a bookmark that names the state just before the first restore applied
 * after its commit (what `onNextSessionRestoreBookmark()` returns).
 */
export const BEFORE_NEXT_RESTORE_VERSION = 2;

/** What a bookmark names. */
export interface BookmarkFields {
  /** The commit whose resulting state the bookmark names (0 = the empty initial state). */
  seq: number;
  /** That commit's time (ms since epoch, whole ms; fractions are dropped when formatting). */
  timeMs: number;
  /**
   * A caller-defined 32-bit number that sorts after seq and time, for example an id of the object's
   * history so bookmarks of another object can be told apart. 0 when omitted.
   */
  epoch?: number;
  /**
   * When true, the bookmark names a state that may not exist yet: the one just before the first
   * point-in-time restore applied after commit `seq` (or, while that restore is still pending, the
   * end of the current session). `onNextSessionRestoreBookmark()` returns such a bookmark, so that
   * writes confirmed after the request and before the restore are part of what it undoes. Written
   * as layout version 2; `false` when omitted.
   */
  beforeNextRestore?: boolean;
}

const SHAPE = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;
const EXAMPLE = "00000000-0000002a-0000019b-76daa80000000000000000013aea1403";
const TWO_32 = 0x1_0000_0000;

function hex8(n: number): string {
  return n.toString(16).padStart(8, "0");
}

/** The 24 bytes the checksum covers: seq, time, epoch, version as big-endian u32 words. */
function fieldWords(seq: number, timeMs: number, epoch: number, version: number): Uint8Array {
  const bytes = new Uint8Array(24);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, Math.floor(seq / TWO_32));
  view.setUint32(4, seq % TWO_32);
  view.setUint32(8, Math.floor(timeMs / TWO_32));
  view.setUint32(12, timeMs % TWO_32);
  view.setUint32(16, epoch);
  view.setUint32(20, version);
  return bytes;
}

/**
 * Formats a bookmark. Throws a `RangeError` when `seq` or `timeMs` is not a non-negative safe
 * integer (`timeMs` is floored first) or `epoch` is not a u32.
 *
 * @example
 * ```ts
 * formatBookmark({ seq: 42, timeMs: Date.UTC(2026, 0, 1) });
 * // "00000000-0000002a-0000019b-76daa80000000000000000013aea1403"
 * ```
 */
export function formatBookmark(fields: BookmarkFields): string {
  const { seq } = fields;
  const timeMs = Math.floor(fields.timeMs);
  const epoch = fields.epoch ?? 0;
  if (!Number.isSafeInteger(seq) || seq < 0)
    throw new RangeError(`A bookmark's seq must be a safe integer ≥ 0; got ${seq}.`);
  if (!Number.isSafeInteger(timeMs) || timeMs < 0)
    throw new RangeError(`A bookmark's time must be a non-negative safe integer of ms; got ${fields.timeMs}.`);
  if (!Number.isInteger(epoch) || epoch < 0 || epoch >= TWO_32)
    throw new RangeError(`A bookmark's epoch must be an unsigned 32-bit integer; got ${epoch}.`);
  const version = fields.beforeNextRestore === true ? BEFORE_NEXT_RESTORE_VERSION : BOOKMARK_VERSION;
  const words = fieldWords(seq, timeMs, epoch, version);
  const view = new DataView(words.buffer);
  const w = (i: number) => hex8(view.getUint32(i * 4));
  return `${w(0)}-${w(1)}-${w(2)}-${w(3)}${w(4)}${w(5)}${hex8(crc32(words))}`;
}

function invalid(bookmark: string, why: string): ActorStoreError {
  const shown = bookmark.length > 80 ? `${bookmark.slice(0, 80)}…` : bookmark;
  return new ActorStoreError(
    "ERR_BOOKMARK",
    `Invalid bookmark "${shown}": ${why} Use a string returned by getCurrentBookmark() or getBookmarkForTime(), for example "${EXAMPLE}".`,
  );
}

/**
 * Parses and validates a bookmark made by {@link formatBookmark}. Strict: anything else (wrong
 * shape, uppercase, a bad checksum, an unknown version) throws `ActorStoreError` `ERR_BOOKMARK`
 * with a message that says what is wrong. Whether the object still keeps that state is the
 * caller's question.
 *
 * @example
 * ```ts
 * const { seq, timeMs } = parseBookmark(await storage.getCurrentBookmark());
 * ```
 */
export function parseBookmark(bookmark: string): Required<BookmarkFields> {
  if (typeof bookmark !== "string") throw invalid(String(bookmark), "a bookmark is a string.");
  if (!SHAPE.test(bookmark)) {
    const why = SHAPE.test(bookmark.toLowerCase())
      ? "bookmarks are lowercase hex."
      : "expected four dash-separated groups of 8, 8, 8 and 32 hex digits.";
    throw invalid(bookmark, why);
  }
  const digits = bookmark.replaceAll("-", "");
  const words = new Uint8Array(24);
  const view = new DataView(words.buffer);
  for (let i = 0; i < 6; i++) view.setUint32(i * 4, Number.parseInt(digits.slice(i * 8, i * 8 + 8), 16));
  const check = Number.parseInt(digits.slice(48, 56), 16);
  if (crc32(words) !== check) throw invalid(bookmark, "its checksum does not match, so it was changed or mistyped.");
  const version = view.getUint32(20);
  if (version !== BOOKMARK_VERSION && version !== BEFORE_NEXT_RESTORE_VERSION)
    throw invalid(
      bookmark,
      `it has layout version ${version}; this version of actorstore reads versions ${BOOKMARK_VERSION} and ${BEFORE_NEXT_RESTORE_VERSION}.`,
    );
  const seq = view.getUint32(0) * TWO_32 + view.getUint32(4);
  const timeMs = view.getUint32(8) * TWO_32 + view.getUint32(12);
  if (!Number.isSafeInteger(seq) || !Number.isSafeInteger(timeMs))
    throw invalid(bookmark, "its seq or time is out of range.");
  return { seq, timeMs, epoch: view.getUint32(16), beforeNextRestore: version === BEFORE_NEXT_RESTORE_VERSION };
}

/**
 * Whether `value` is a well-formed bookmark (shape, version and checksum), without throwing.
 *
 * @example
 * ```ts
 * if (!isBookmark(input)) return new Response("bad bookmark", { status: 400 });
 * ```
 */
export function isBookmark(value: unknown): value is string {
  if (typeof value !== "string") return false;
  try {
    parseBookmark(value);
    return true;
  } catch {
    return false;
  }
}
