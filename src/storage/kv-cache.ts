/**
 * The read cache of clean key-value entries: an LRU bounded by a soft byte limit. Dirty entries
 * never live here (they are in the write buffer until their batch commits), so eviction can never
 * lose a write. Absent keys are cached too (`null`), so repeated misses stay in memory.
 */

/** A clean cached entry: the stored bytes, or `null` for a key known to be absent. */
export interface CacheEntry {
  bytes: Uint8Array | null;
  /** The decoded value when it is a primitive (immutable, so it can be shared between reads). */
  primitive: { value: unknown } | undefined;
  size: number;
}

import { inRange } from "./keys";

/**
 * What one entry costs V8 beyond its key and bytes (a Map slot, the entry object, the Uint8Array
 * object and its backing store header), measured at about 150 bytes: charged so that the limit
 * bounds real memory, not just payload.
 */
const ENTRY_OVERHEAD_BYTES = 150;

/** A key range `[start, end)` whose every stored key is in the cache (`end` undefined = unbounded). */
interface CompleteRange {
  start: string;
  end: string | undefined;
}

/** How many complete ranges we remember (each lookup scans them). */
const MAX_COMPLETE_RANGES = 16;

/**
 * The LRU cache. Map insertion order is the recency order (oldest first).
 *
 * Besides entries, it remembers ranges that a `list()` read completely: a get of a key inside such
 * a range that is not cached is known to be absent without asking SQLite. Evicting or forgetting
 * any key inside a range forgets the range, so the promise "every stored key is cached" holds.
 */
export class KvCache {
  readonly #entries = new Map<string, CacheEntry>();
  #complete: CompleteRange[] = [];
  #bytes = 0;
  #softLimitBytes: number;

  constructor(softLimitBytes: number) {
    this.#softLimitBytes = softLimitBytes;
  }

  /** Bytes currently charged to the cache. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Number of cached entries. */
  get size(): number {
    return this.#entries.size;
  }

  /** The entry for `key` (marking it recently used), or `undefined` when unknown. */
  get(key: string): CacheEntry | undefined {
    const e = this.#entries.get(key);
    if (e !== undefined) {
      // Re-insert to move to the most-recent end.
      this.#entries.delete(key);
      this.#entries.set(key, e);
    }
    return e;
  }

  /** The entry for `key` without marking it recently used (for a caller that just touched it). */
  peek(key: string): CacheEntry | undefined {
    return this.#entries.get(key);
  }

  /** Records the clean state of `key`; evicts down to the soft limit. Returns the entry. */
  set(key: string, bytes: Uint8Array | null, primitive?: { value: unknown }): CacheEntry {
    const size = key.length * 2 + (bytes?.byteLength ?? 0) + ENTRY_OVERHEAD_BYTES;
    const old = this.#entries.get(key);
    if (old !== undefined) {
      // Update in place: a rewritten key keeps its place in the LRU order (a read promotes it),
      // which saves a Map delete and insert on every committed overwrite.
      this.#bytes += size - old.size;
      old.bytes = bytes;
      old.size = size;
      old.primitive = primitive;
      if (this.#bytes > this.#softLimitBytes) this.trim(this.#softLimitBytes - (this.#softLimitBytes >>> 3));
      return old;
    }
    // Always the same shape (primitive present, maybe undefined) so V8 keeps entries monomorphic.
    const entry: CacheEntry = { bytes, primitive, size };
    this.#entries.set(key, entry);
    this.#bytes += size;
    // Evict down to 7/8 of the limit, not just below it: walking the LRU order from its start
    // costs more than the eviction itself, so doing it once per many inserts keeps `set` cheap.
    if (this.#bytes > this.#softLimitBytes) this.trim(this.#softLimitBytes - (this.#softLimitBytes >>> 3));
    return entry;
  }

  /** Whether `bytes` more would still fit under the soft limit without evicting anything. */
  hasRoomFor(bytes: number): boolean {
    return this.#bytes + bytes <= this.#softLimitBytes;
  }

  /** Forgets `key` (used by `noCache` writes once they are clean). */
  delete(key: string): void {
    const old = this.#entries.get(key);
    if (old === undefined) return;
    this.#bytes -= old.size;
    this.#entries.delete(key);
    this.#forgetRangesWith(key);
  }

  /** Records that every stored key in `[start, end)` is now cached. */
  markComplete(start: string, end: string | undefined): void {
    if (this.#complete.length >= MAX_COMPLETE_RANGES) this.#complete.shift();
    this.#complete.push({ start, end });
  }

  /** Whether `key` is in a completely cached range (so, if not cached itself, it is absent). */
  knownAbsent(key: string): boolean {
    for (const r of this.#complete) if (inRange(key, r)) return true;
    return false;
  }

  #forgetRangesWith(key: string): void {
    if (this.#complete.length === 0 || !this.#complete.some((r) => inRange(key, r))) return;
    this.#complete = this.#complete.filter((r) => !inRange(key, r));
  }

  /** Evicts least recently used entries until the cache is within `targetBytes`. */
  trim(targetBytes = this.#softLimitBytes): void {
    // Over the keys, not the entries: destructuring each entry made a pair array per eviction
    // (one per committed new key once the cache is full).
    const entries = this.#entries;
    for (const key of entries.keys()) {
      if (this.#bytes <= targetBytes) break;
      this.#bytes -= (entries.get(key) as CacheEntry).size;
      entries.delete(key);
      this.#forgetRangesWith(key);
    }
  }

  /** Drops everything (deleteAll, reset, restore). */
  clear(): void {
    this.#entries.clear();
    this.#complete = [];
    this.#bytes = 0;
  }

  /** Changes the soft limit (and trims to it). */
  setSoftLimit(bytes: number): void {
    this.#softLimitBytes = bytes;
    this.trim();
  }
}
