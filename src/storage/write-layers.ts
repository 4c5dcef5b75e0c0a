/**
 * The write buffer's layers: writes not yet committed, one layer for the batch and one more for
 * each open savepoint (transaction). Reads look through them top-down before the cache and SQLite;
 * listings merge them over the stored rows.
 */
import { compareKeys, inRange, type KeyRange } from "./keys";

/** A layer of buffered writes: key → bytes, or `null` for a deletion. */
export interface WriteLayer {
  kv: Map<string, Uint8Array | null>;
  /** Pending alarm change in this layer (`undefined` = none). */
  alarm?: number | null;
  /** Length of the batch's SQL log when the layer opened (rolled back to on rollback). */
  sqlMark: number;
  /** The savepoint that backs this layer in the engine, if any. */
  savepoint?: string;
  /**
   * Keys whose row `delete()` already removed in the engine, inside this layer's transaction or
   * savepoint: the commit writes nothing for them while their entry is still a deletion.
   */
  applied?: Set<string>;
}

/** The buffered entries (top layer wins) whose keys fall in `range`. */
export function overlayInRange(layers: readonly WriteLayer[], range: KeyRange): Map<string, Uint8Array | null> {
  const overlay = new Map<string, Uint8Array | null>();
  for (const layer of layers) {
    for (const [k, v] of layer.kv) if (inRange(k, range)) overlay.set(k, v);
  }
  return overlay;
}

/**
 * Merges buffered entries over stored rows (in scan order) and applies the range's order and limit.
 * `stored` must hold at least `limit + overlay.size` rows when the range is limited.
 */
export function mergeListing(
  stored: ReadonlyArray<[string, Uint8Array]>,
  overlay: ReadonlyMap<string, Uint8Array | null>,
  range: KeyRange,
): Array<[string, Uint8Array]> {
  const merged = new Map<string, Uint8Array>();
  for (const [k, v] of stored) if (!overlay.has(k)) merged.set(k, v);
  for (const [k, v] of overlay) if (v !== null) merged.set(k, v);
  const keys = [...merged.keys()].sort(compareKeys);
  if (range.reverse) keys.reverse();
  const n = range.limit === undefined ? keys.length : Math.min(range.limit, keys.length);
  const out: Array<[string, Uint8Array]> = [];
  for (let i = 0; i < n; i++) {
    const k = keys[i] as string;
    out.push([k, merged.get(k) as Uint8Array]);
  }
  return out;
}
