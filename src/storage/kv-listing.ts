/**
 * Reading a key range for `list()`: committed rows of `_cf_KV` in key order, the write buffer's
 * layers merged over them, and the read cache on both sides of the scan.
 *
 * With nothing buffered in the range (the common case), one pass over the rows builds the answer:
 * a row whose key the read cache holds takes the cached bytes (and the cached decoded value, when
 * it is a primitive) instead of copying its value out of the engine and decoding it again; the
 * cache is authoritative for the keys it holds, so both are what the row stores. Rows the cache
 * does not hold go into it while it has room.
 */

import { type KeyRange, listedKey } from "./keys";
import type { CacheEntry, KvCache } from "./kv-cache";
import { copyStored, type KvTable } from "./kv-table";
import { isPrimitive } from "./value-io";
import { mergeListing, overlayInRange, type WriteLayer } from "./write-layers";

/**
 * A listing stops asking the read cache once its misses exceed this many plus twice its hits: a
 * lookup that misses costs about as much as the read it could have saved (measured at 100k keys,
 * where the 4 MiB cache holds few of them and a lookup in its large Map misses the CPU's caches),
 * so asking pays only while at least about a third of the rows are cached.
 */
const GIVE_UP_AFTER_MISSES = 32;

/** What a listing reads: the table, the read cache, and the write buffer's layers (bottom first). */
export interface ListingSource {
  readonly table: KvTable;
  readonly cache: KvCache;
  readonly layers: readonly WriteLayer[];
}

/**
 * Turns the stored bytes at `bytes[start, end)` into a fresh value that shares no memory with
 * `bytes` (throws the platform's error on undecodable bytes).
 */
export type ValueDecoder = (bytes: Uint8Array, start: number, end: number) => unknown;

/** Entries in `range` as stored bytes (buffered writes merged over committed data), in order, limited. */
export function listEntries(source: ListingSource, range: KeyRange, noCache: boolean): Array<[string, Uint8Array]> {
  if (range.empty) return [];
  const overlay = overlayInRange(source.layers, range);
  if (overlay.size > 0) return mergedEntries(source, range, overlay);
  const out: Array<[string, Uint8Array]> = [];
  scanCommitted(source, range, noCache, (key, entry, bytes, start, end) => {
    out.push([key, entry === undefined ? copyStored(bytes, start, end) : (entry.bytes as Uint8Array)]);
  });
  return out;
}

/**
 * Entries in `range` with decoded values, as `list()` answers: a new Map in the range's order, every
 * value a fresh copy (primitives, being immutable, may be shared with the cache). A value that
 * cannot be decoded fails the whole call, as on the platform. Keys are as the platform reads them
 * back ({@link listedKey}): keys with lone surrogates that read back alike are one entry of the
 * Map, at the first one's place with the last one's value, as there; `limit` counts stored keys.
 *
 * A row neither cached nor going into the cache is decoded straight from the engine's memory, by
 * offset (no copy of its bytes, no view of them): `decode` reads only the row's range and builds
 * fresh objects (strings, and array buffers it copies), so nothing it returns shares that memory.
 */
export function listValues(
  source: ListingSource,
  range: KeyRange,
  noCache: boolean,
  decode: ValueDecoder,
): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (range.empty) return out;
  const overlay = overlayInRange(source.layers, range);
  if (overlay.size > 0) {
    for (const [key, bytes] of mergedEntries(source, range, overlay)) {
      out.set(listedKey(key), decode(bytes, 0, bytes.byteLength));
    }
    return out;
  }
  const loneSurrogates = scanCommitted(source, range, noCache, (key, entry, bytes, start, end) => {
    if (entry === undefined) {
      out.set(key, decode(bytes, start, end));
      return;
    }
    const known = entry.primitive;
    if (known !== undefined) {
      out.set(key, known.value);
      return;
    }
    const cached = entry.bytes as Uint8Array;
    const decoded = decode(cached, 0, cached.byteLength);
    if (isPrimitive(decoded)) entry.primitive = { value: decoded };
    out.set(key, decoded);
  });
  // Keys are stored keys, each its own entry; only a scan that read a key with a lone surrogate
  // has keys to hand back otherwise (the scan tells, so other listings look at no key).
  return loneSurrogates ? withListedKeys(out) : out;
}

/** `entries` (stored keys, in listing order) keyed as {@link listedKey} reads them back. */
function withListedKeys(entries: Map<string, unknown>): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [key, value] of entries) out.set(listedKey(key), value);
  return out;
}

/**
 * The committed rows of `range` (nothing buffered overlaps it), each handed to `emit` with, when the
 * read cache holds the key (or it went into the cache now), its cache entry, whose `bytes` are the
 * row's; otherwise `emit` reads the row's value from `bytes[start, end)` before it returns (the
 * engine's memory, see `RowVisit` in kv-table.ts). Returns whether a key had a lone surrogate.
 */
function scanCommitted(
  source: ListingSource,
  range: KeyRange,
  noCache: boolean,
  emit: (key: string, entry: CacheEntry | undefined, bytes: Uint8Array, start: number, end: number) => void,
): boolean {
  const cache = source.cache;
  // Listed rows go into the read cache only while it has room: a large listing would otherwise
  // evict the working set (and pay for the churn) to cache rows that are rarely read again.
  let caching = !noCache;
  let count = 0;
  let last: string | undefined;
  // After the first misses, the cache is asked only while it answers for enough of the rows: a
  // cold range, or one whose keys the cache holds only here and there (after random writes), is
  // then read from the engine only.
  let misses = 0;
  let hits = 0;
  // The entry of the row the scan is at when the cache holds its bytes: found before the row's
  // value is read, so that a cached row costs no read of its value from the engine.
  let entry: CacheEntry | undefined;
  const wantsValue = (key: string): boolean => {
    entry = undefined;
    if (misses < GIVE_UP_AFTER_MISSES + 2 * hits) {
      const cached = cache.peek(key);
      if (cached !== undefined && cached.bytes !== null) {
        hits++;
        entry = cached;
        return false;
      }
      misses++;
    }
    return true;
  };
  const loneSurrogates = source.table.scanRows(
    range.start,
    range.end,
    range.reverse,
    range.limit,
    (key, bytes, start, end) => {
      count++;
      last = key;
      if (entry !== undefined) {
        emit(key, entry, bytes, start, end);
        return true;
      }
      if (caching) {
        if (cache.hasRoomFor(key.length * 2 + (end - start) + 256)) {
          emit(key, cache.set(key, copyStored(bytes, start, end)), bytes, start, end);
          return true;
        }
        caching = false;
      }
      emit(key, undefined, bytes, start, end);
      return true;
    },
    wantsValue,
  );
  // Every stored key of the part of the range we read is now cached: later gets of absent keys in
  // it need no SQLite lookup.
  if (caching) markListed(cache, range, count, last);
  return loneSurrogates;
}

/** Records which part of `range` a listing that cached every row it read has covered. */
function markListed(cache: KvCache, range: KeyRange, count: number, last: string | undefined): void {
  if (range.limit === undefined || count < range.limit || last === undefined)
    cache.markComplete(range.start, range.end);
  else if (range.reverse) cache.markComplete(last, range.end);
  else cache.markComplete(range.start, `${last}\u0000`);
}

/** Stored rows with the buffered entries of `overlay` merged over them. */
function mergedEntries(
  source: ListingSource,
  range: KeyRange,
  overlay: ReadonlyMap<string, Uint8Array | null>,
): Array<[string, Uint8Array]> {
  // Each buffered key can hide at most one stored row, so over-fetch by the overlay size.
  const stored: Array<[string, Uint8Array]> = [];
  const fetchLimit = range.limit === undefined ? undefined : range.limit + overlay.size;
  source.table.scan(range.start, range.end, range.reverse, fetchLimit, (k, v) => {
    stored.push([k, v]);
    return true;
  });
  return mergeListing(stored, overlay, range);
}
