/**
 * The buffered writes the engine does not hold yet, and bringing it up to date. Key-value and
 * alarm writes stay buffered (storage-core.ts) until the commit; but before a SQL statement runs,
 * `databaseSize` is read or a savepoint opens, the engine must hold them, as the platform's
 * database holds each write from its call on: so `PRAGMA optimize`, `ANALYZE`, `databaseSize` and
 * the connection counters (per-call-changes.ts) see them, and a savepoint's rollback undoes none of
 * the calls made before it. Written keys stay buffered for reads and the commit record; the commit
 * skips what the engine already holds (`WriteLayer.applied`, `appliedAlarm`).
 */
import type { SqlEngine } from "../engine/engine";
import type { KvTable } from "./kv-table";
import { PerCallChanges } from "./per-call-changes";
import { applyBuffered, type WriteLayer } from "./write-layers";

/** The storage core's writes not yet in the engine. See the module comment. */
export class PendingWrites {
  /** Keys written since the engine last received the buffered writes. */
  readonly keys = new Set<string>();
  /** The alarm changed since then. */
  alarm = false;
  /** SQL's counters as the platform's per-call statements leave them. */
  readonly counts = new PerCallChanges();
  /**
   * deleteAll() kept no alarm, and the platform does not know that yet: until the batch commits,
   * a transaction opens or getAlarm() reads it, its deleteAlarm() writes the alarm's row (NULL),
   * creating `_cf_METADATA` (compared with workerd in kv-counters.differential.test.ts).
   */
  alarmUnknown = false;

  /** A key was written (`put()`, or `delete()` of a key that existed). */
  wrote(key: string): void {
    this.keys.add(key);
    this.counts.called(key, 1);
  }

  /** The alarm was changed (to a time other than the current one). */
  alarmChanged(): void {
    this.alarm = true;
    this.alarmUnknown = false;
    this.counts.called(null, 1);
  }

  /** deleteAll() replaced the database (a new connection); a kept alarm is its first write. */
  replaced(keptAlarm: boolean): void {
    this.keys.clear();
    this.counts.reset();
    this.alarm = false;
    this.alarmUnknown = !keptAlarm;
    if (keptAlarm) this.alarmChanged();
  }

  /** The commit wrote everything buffered, changing `engineChanges` rows. */
  committed(engineChanges: number): void {
    // Only when needed: clearing a Set allocates its table anew, even an empty one's (a batch of
    // SQL alone leaves it empty).
    if (this.keys.size > 0) this.keys.clear();
    this.alarm = false;
    this.counts.engineChanged(engineChanges);
  }

  /** Whether {@link PendingWrites.apply} has anything to do (cheap: asked before every statement). */
  due(beforeStatement: boolean): boolean {
    return this.keys.size > 0 || this.alarm || (beforeStatement && this.counts.pending);
  }

  /**
   * Writes what `engine` does not hold yet (keys into `table`, then `alarm`, the alarm as of now)
   * inside the batch's transaction (`begin` opens it if needed) or the open savepoint, recording
   * them in the top of `layers`; before a SQL statement (`beforeStatement`) also makes `changes()`
   * what the platform's last per-call statement left. Throws what SQLite refused (the database is
   * full); the batch cannot commit then.
   */
  apply(
    engine: SqlEngine,
    table: KvTable,
    layers: readonly WriteLayer[],
    alarm: number | null,
    begin: () => void,
    beforeStatement: boolean,
  ): void {
    const counts = this.counts;
    const before = engine.totalChanges();
    try {
      if (this.keys.size > 0) {
        begin();
        applyBuffered(layers, this.keys, table);
        this.keys.clear();
      }
      if (this.alarm) {
        begin();
        table.setAlarm(alarm);
        (layers[layers.length - 1] as WriteLayer).appliedAlarm = alarm;
        this.alarm = false;
      }
      if (beforeStatement) counts.matchLast(engine, table, alarm, begin);
    } finally {
      if (!engine.closed) counts.engineChanged(engine.totalChanges() - before);
    }
  }
}
