/**
 * The storage core's savepoints: the stack of write layers (write-layers.ts), one for the batch and
 * one more for each open transaction (`transaction()`, `transactionSync()`), each backed by a
 * SQLite savepoint. Opening one applies what the engine is behind on first; releasing one merges
 * its writes into the layer below; rolling one back undoes its SQL, key-value and alarm writes and
 * every savepoint opened after it. The storage core (storage-core.ts) checks whether it is still
 * usable before it hands a call to this stack, and commits the batch once no savepoint is open.
 */

import { NESTED_STILL_RUNNING_MESSAGE, ORPHANED_TRANSACTION_MESSAGE } from "./core-settings";
import type { CoreSqlHost } from "./core-sql-host";
import { appliedKeys, mergeLayer, openLayer, type WriteLayer } from "./write-layers";

/** What the savepoint stack needs from the storage core. */
export interface SavepointCore {
  /** The engine, the SQL log and the writes the engine is behind on. */
  readonly sqlHost: CoreSqlHost;
  /** Opens the batch's implicit transaction, if it is not open yet. */
  begin(): void;
  /** The last savepoint closed: the batch may commit at the end of the turn. */
  scheduleCommit(): void;
  /** The current time. */
  now(): number;
}

/** The batch's own layer, with nothing written yet. */
function baseLayer(): WriteLayer {
  return { kv: new Map(), sqlMark: 0 };
}

/** The write layers and the savepoints behind them. See the module comment. */
export class SavepointStack {
  readonly #core: SavepointCore;
  #layers: WriteLayer[] = [baseLayer()];
  /** How many `setAlarm()`/`deleteAlarm()` calls the session made (see StorageCore.alarmCalls). */
  #alarmCalls = 0;

  constructor(core: SavepointCore) {
    this.#core = core;
  }

  /** The open write layers, the batch's first. */
  get layers(): readonly WriteLayer[] {
    return this.#layers;
  }

  /** The batch's own layer (what commits). */
  get base(): WriteLayer {
    return this.#layers[0] as WriteLayer;
  }

  /** The layer new writes go to: the innermost open savepoint's, else the batch's. */
  get top(): WriteLayer {
    return this.#layers[this.#layers.length - 1] as WriteLayer;
  }

  /** How many savepoints are open (0: none, the batch may commit). */
  get depth(): number {
    return this.#layers.length - 1;
  }

  /** The session's count of alarm calls; a rolled-back savepoint takes back its own. */
  get alarmCalls(): number {
    return this.#alarmCalls;
  }

  /** Counts one `setAlarm()`/`deleteAlarm()` call. */
  countAlarmCall(): void {
    this.#alarmCalls++;
  }

  /** The batch committed: a fresh base layer for the next one. Only with no savepoint open. */
  committed(): void {
    this.#layers = [baseLayer()];
  }

  /** Opens a savepoint named after `prefix` and a write layer for it; the layer is its handle. */
  open(prefix: string): WriteLayer {
    const sqlHost = this.#core.sqlHost;
    // On the platform every call before the savepoint ran at the call: its rollback undoes none of
    // them, and they are not run again (which would count changes again, or set last_insert_rowid).
    sqlHost.applyPending(false);
    sqlHost.pending.alarmUnknown = false;
    this.#core.begin();
    const name = `${prefix}_${this.depth}`;
    sqlHost.engine.exec(`SAVEPOINT ${name}`);
    const layer: WriteLayer = {
      kv: new Map(),
      sqlMark: sqlHost.log.length,
      savepoint: name,
      alarmCallsAtOpen: this.#alarmCalls,
    };
    this.#layers.push(layer);
    return layer;
  }

  /**
   * Releases a savepoint: its writes join the enclosing layer. If nested savepoints are still open
   * (a nested transaction left running when its outer closure returned), everything from this
   * savepoint up is rolled back instead and an error says why.
   */
  release(handle: object): void {
    const layer = openLayer(this.#layers, handle);
    if (layer === undefined) throw new Error(ORPHANED_TRANSACTION_MESSAGE);
    if (this.top !== layer) {
      this.unwind(layer);
      throw new Error(NESTED_STILL_RUNNING_MESSAGE);
    }
    this.#layers.pop();
    this.#core.sqlHost.engine.exec(`RELEASE ${layer.savepoint}`);
    mergeLayer(layer, this.top);
    if (this.depth === 0) this.#core.scheduleCommit();
  }

  /**
   * Rolls back a savepoint: its SQL, key-value and alarm writes are gone. An explicit `rollback()`
   * of an outer transaction while a nested one runs is refused, as on the platform; an outer
   * closure that failed takes its nested savepoints down with it.
   */
  rollback(handle: object, explicit: boolean): void {
    const layer = openLayer(this.#layers, handle);
    if (layer === undefined) return; // already undone with an outer transaction
    if (explicit && this.top !== layer) {
      throw new Error("Cannot roll back an outer transaction while a nested transaction is still running.");
    }
    this.unwind(layer);
  }

  /** Whether a savepoint is still open. */
  isOpen(handle: object): boolean {
    return openLayer(this.#layers, handle) !== undefined;
  }

  /** Rolls back every open savepoint (close() does, before its last commit). */
  unwindAll(): void {
    const outermost = this.#layers[1];
    if (outermost !== undefined) this.unwind(outermost);
  }

  /** Rolls back `layer`'s savepoint and every savepoint opened after it. */
  unwind(layer: WriteLayer): void {
    const sqlHost = this.#core.sqlHost;
    const index = this.#layers.indexOf(layer);
    // The platform ran these layers' calls before rolling them back: their counts stay, and so
    // does what the last call left in changes(), matched now, while the tables those calls may
    // have created still exist (the rollback takes a _cf_KV made inside the savepoint with it).
    sqlHost.applyPending(true);
    sqlHost.engine.exec(`ROLLBACK TO ${layer.savepoint}; RELEASE ${layer.savepoint}`);
    // The rollback undid what these layers applied, lower layers' buffered writes included.
    for (const k of appliedKeys(this.#layers.slice(index))) sqlHost.pending.keys.add(k);
    this.#layers.length = index;
    this.#alarmCalls = layer.alarmCallsAtOpen ?? this.#alarmCalls;
    // The layers below reached the engine before the savepoint opened; the rollback went back to that.
    sqlHost.pending.alarm = false;
    sqlHost.schemaChanged();
    sqlHost.log.rollBackTo(sqlHost.engine, layer.sqlMark, this.#core.now());
    if (this.depth === 0) this.#core.scheduleCommit();
  }
}
