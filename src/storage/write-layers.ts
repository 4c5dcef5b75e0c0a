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
   * Writes the engine already holds, made inside this layer's transaction or savepoint: the value
   * written for each key (`null`: the row was deleted), by `delete()` of a key only the engine knew
   * and by {@link applyBuffered} before a SQL statement. The commit writes nothing for a key while
   * its buffered entry is still the value applied.
   */
  applied?: Map<string, Uint8Array | null>;
  /** The alarm the engine holds from a write made inside this layer's transaction or savepoint, if any. */
  appliedAlarm?: number | null;
  /** The session's count of alarm calls when this layer's savepoint opened (restored by its rollback). */
  alarmCallsAtOpen?: number;
}

/** The buffered value of `key` (top layer wins; `null` is a deletion), or `undefined` when none. */
export function bufferedValue(layers: readonly WriteLayer[], key: string): Uint8Array | null | undefined {
  for (let i = layers.length - 1; i >= 0; i--) {
    const v = (layers[i] as WriteLayer).kv.get(key);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** The buffered alarm change (top layer wins; `null` clears it), or `undefined` when none. */
export function bufferedAlarm(layers: readonly WriteLayer[]): number | null | undefined {
  for (let i = layers.length - 1; i >= 0; i--) {
    const a = (layers[i] as WriteLayer).alarm;
    if (a !== undefined) return a;
  }
  return undefined;
}

/**
 * What the engine holds for `key` from writes applied in the open batch (the latest applied write
 * is in the topmost layer that has one), or `undefined` when none was applied.
 */
function appliedValue(layers: readonly WriteLayer[], key: string): Uint8Array | null | undefined {
  for (let i = layers.length - 1; i >= 0; i--) {
    const applied = (layers[i] as WriteLayer).applied;
    if (applied?.has(key)) return applied.get(key);
  }
  return undefined;
}

/**
 * Whether the commit can skip `key`'s entry `value` of the base layer: the engine holds it already.
 */
export function isApplied(base: WriteLayer, key: string, value: Uint8Array | null): boolean {
  return base.applied?.has(key) === true && base.applied.get(key) === value;
}

/**
 * Writes the buffered values of `keys` that the engine does not hold yet into `table`, and
 * records each as applied in the top layer, so that a savepoint rollback forgets it together with
 * the engine's write (its keys must then be applied again: see the storage core's unwind).
 */
export function applyBuffered(
  layers: readonly WriteLayer[],
  keys: Iterable<string>,
  table: { write(key: string, value: Uint8Array | null): void },
): void {
  const top = layers[layers.length - 1] as WriteLayer;
  for (const key of keys) {
    const value = bufferedValue(layers, key);
    if (value === undefined || appliedValue(layers, key) === value) continue;
    table.write(key, value);
    (top.applied ??= new Map()).set(key, value);
  }
}

/** The open savepoint layer `handle` (never the batch's base layer), or `undefined` when it is closed. */
export function openLayer(layers: readonly WriteLayer[], handle: object): WriteLayer | undefined {
  const i = layers.indexOf(handle as WriteLayer);
  return i > 0 ? (layers[i] as WriteLayer) : undefined;
}

/** A released savepoint's layer joins `parent`: its writes, applied writes and alarm change. */
export function mergeLayer(layer: WriteLayer, parent: WriteLayer): void {
  for (const [k, v] of layer.kv) parent.kv.set(k, v);
  for (const [k, v] of layer.applied ?? []) (parent.applied ??= new Map()).set(k, v);
  if (layer.appliedAlarm !== undefined) parent.appliedAlarm = layer.appliedAlarm;
  if (layer.alarm !== undefined) parent.alarm = layer.alarm;
}

/** The keys that `layers` wrote into the engine (a rollback of them undoes those writes). */
export function appliedKeys(layers: readonly WriteLayer[]): string[] {
  const keys: string[] = [];
  for (const layer of layers) for (const k of layer.applied?.keys() ?? []) keys.push(k);
  return keys;
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
