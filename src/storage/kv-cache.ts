/**
 * The read cache of clean key-value entries: an LRU bounded by a soft byte limit. Dirty entries
 * never live here (they are in the write buffer until their batch commits), so eviction can never
 * lose a write. Absent keys are cached too (`null`), so repeated misses stay in memory.
 */

/** A clean cached entry: the stored bytes, or `null` for a key known to be absent. */
export interface CacheEntry {
  bytes: Uint8Array | null;
  /** The decoded value when it is a primitive (immutable, so it can be shared between reads). */
  primitive?: { value: unknown };
  size: number;
}

/** Per-entry bookkeeping overhead we charge, so many tiny entries still count against the limit. */
const ENTRY_OVERHEAD_BYTES = 64;

/** The LRU cache. Map insertion order is the recency order (oldest first). */
export class KvCache {
  readonly #entries = new Map<string, CacheEntry>();
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

  /** Records the clean state of `key`; evicts down to the soft limit. */
  set(key: string, bytes: Uint8Array | null, primitive?: { value: unknown }): void {
    const old = this.#entries.get(key);
    if (old !== undefined) {
      this.#bytes -= old.size;
      this.#entries.delete(key);
    }
    const size = key.length * 2 + (bytes?.byteLength ?? 0) + ENTRY_OVERHEAD_BYTES;
    const entry: CacheEntry = primitive === undefined ? { bytes, size } : { bytes, primitive, size };
    this.#entries.set(key, entry);
    this.#bytes += size;
    if (this.#bytes > this.#softLimitBytes) this.trim();
  }

  /** Forgets `key` (used by `noCache` writes once they are clean). */
  delete(key: string): void {
    const old = this.#entries.get(key);
    if (old === undefined) return;
    this.#bytes -= old.size;
    this.#entries.delete(key);
  }

  /** Evicts least recently used entries until the cache is within `targetBytes`. */
  trim(targetBytes = this.#softLimitBytes): void {
    for (const [key, e] of this.#entries) {
      if (this.#bytes <= targetBytes) break;
      this.#entries.delete(key);
      this.#bytes -= e.size;
    }
  }

  /** Drops everything (deleteAll, reset, restore). */
  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  /** Changes the soft limit (and trims to it). */
  setSoftLimit(bytes: number): void {
    this.#softLimitBytes = bytes;
    this.trim();
  }
}
