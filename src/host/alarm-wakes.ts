/**
 * The object host's use of the alarm index (alarm-index.ts): writing one object's entry in commit
 * order, reading the index to plan a wake-up for each sleeping object with an alarm, and the timer
 * that starts such an object when its alarm is due.
 *
 * It keeps no objects of its own: it works on the host's entries through {@link WakeHost}.
 */
import type { ObjectId } from "../context/object-id";
import type { Clock, TimerHandle } from "../util/clock";
import type { AlarmIndex, AlarmIndexEntry } from "./alarm-index";

/** The key of one object in the host's entries. @internal */
export function entryKey(namespace: string, id: ObjectId): string {
  return `${namespace}\u0000${id.toString()}`;
}

/** What the wake-ups read and set of one object's entry in the host. @internal */
export interface WakeEntry {
  readonly key: string;
  readonly namespace: string;
  readonly id: ObjectId;
  /** The live instance's context, if any (only its presence matters here). */
  readonly context: object | null;
  readonly opening: Promise<void> | null;
  readonly closing: Promise<void> | null;
  wakeTimer: TimerHandle | undefined;
  wakeAtMs: number | null;
}

/** What the wake-ups need of the host. @internal */
export interface WakeHost<E extends WakeEntry> {
  readonly clock: Clock;
  /** The host's idle timeout (bounds the delay before a failed wake-up is tried again). */
  readonly idleTimeoutMs: number;
  /** The host's entries, by {@link entryKey}. */
  readonly entries: Map<string, E>;
  isClosed(): boolean;
  /** The registered namespaces' names. */
  namespaces(): Iterable<string>;
  /** The namespace registered as `name`, to rebuild an indexed object's id. */
  namespace(name: string): { idFromName(name: string): ObjectId; idFromString(id: string): ObjectId };
  /** The entry of an object, created if the host has none. */
  entry(namespace: string, id: ObjectId): E;
  /** Whether an entry holds nothing (no instance, no start or stop, no event, no wake timer). */
  holdsNothing(entry: E): boolean;
  /** Starts an object through the host's router (in a cluster, its owner may be another host). */
  start(namespace: string, id: ObjectId): Promise<unknown>;
}

/** The alarm index work of one host. @internal */
export class AlarmWakes<E extends WakeEntry> {
  readonly #host: WakeHost<E>;
  readonly #index: AlarmIndex | undefined;
  /** Index writes of each object, one at a time in commit order. */
  readonly #chains = new Map<string, Promise<void>>();
  #scan: Promise<void> = Promise.resolve();
  /** The next read of the alarm index after one failed, while it is planned. */
  #rescanTimer: TimerHandle | undefined;
  #errors = 0;
  #wakes = 0;

  constructor(host: WakeHost<E>, index: AlarmIndex | undefined) {
    this.#host = host;
    this.#index = index;
  }

  /** Index reads or writes that failed. */
  get errors(): number {
    return this.#errors;
  }

  /** Alarm wake-ups so far. */
  get wakes(): number {
    return this.#wakes;
  }

  /** The latest read of the index (resolves once its wake-ups are planned). */
  get scanning(): Promise<void> {
    return this.#scan;
  }

  /** Cancels a planned read of the index (the host is closing). */
  cancel(): void {
    if (this.#rescanTimer !== undefined) this.#host.clock.clearTimer(this.#rescanTimer);
    this.#rescanTimer = undefined;
  }

  /** Resolves once every index write started so far has ended. */
  async drained(): Promise<void> {
    await Promise.all(this.#chains.values());
  }

  /** Writes one object's index entry, after the ones before it (commit order). */
  write(entry: E, atMs: number | null): Promise<void> {
    const index = this.#index;
    if (index === undefined) return Promise.resolve();
    const object = { id: entry.id.toString(), ...(entry.id.name === undefined ? {} : { name: entry.id.name }) };
    const previous = this.#chains.get(entry.key) ?? Promise.resolve();
    const write = previous.then(() => index.set(entry.namespace, object, atMs));
    const settled = write.then(
      () => {},
      () => {
        this.#errors++;
      },
    );
    this.#chains.set(entry.key, settled);
    void settled.then(() => {
      if (this.#chains.get(entry.key) === settled) this.#chains.delete(entry.key);
    });
    return write;
  }

  /**
   * Reads the index and plans a wake-up for every indexed alarm of an object `owns` accepts that is
   * not live here. Resolves once planned.
   */
  scan(owns: (namespace: string, id: ObjectId) => boolean): Promise<void> {
    const scan = this.#scanAlarms(owns);
    this.#scan = scan;
    return scan;
  }

  async #scanAlarms(owns: (namespace: string, id: ObjectId) => boolean): Promise<void> {
    const index = this.#index;
    if (index === undefined) return;
    const host = this.#host;
    for (const namespace of host.namespaces()) {
      const ns = host.namespace(namespace);
      // Only the entries of objects `owns` may accept are read (the cluster's index reads each one).
      const wanted = (hex: string) => {
        try {
          return owns(namespace, ns.idFromString(hex));
        } catch {
          return true;
        }
      };
      let entries: AlarmIndexEntry[];
      try {
        entries = await index.list(namespace, wanted);
      } catch {
        this.#errors++;
        // Read again later rather than lose the alarms: one timer however many namespaces failed
        // (each read reads them all), cancelled by close().
        this.#rescanTimer ??= host.clock.setTimer(() => {
          this.#rescanTimer = undefined;
          if (!host.isClosed()) this.scan(owns);
        }, 60_000);
        continue;
      }
      if (host.isClosed()) return;
      for (const indexed of entries) {
        let id: ObjectId;
        try {
          id = indexed.name !== undefined ? ns.idFromName(indexed.name) : ns.idFromString(indexed.id);
          if (id.toString() !== indexed.id) id = ns.idFromString(indexed.id);
        } catch {
          continue;
        }
        if (!owns(namespace, id)) continue;
        const existing = host.entries.get(entryKey(namespace, id));
        if (existing !== undefined && (existing.context || existing.opening || existing.closing)) continue;
        if (existing?.wakeTimer !== undefined && (existing.wakeAtMs ?? Infinity) <= indexed.atMs) continue;
        const entry = host.entry(namespace, id);
        if (entry.wakeTimer !== undefined) host.clock.clearTimer(entry.wakeTimer);
        entry.wakeTimer = undefined;
        this.planWake(entry, indexed.atMs);
      }
    }
  }

  /** Keeps one timer for a sleeping object's alarm: the host starts the object when it is due. */
  planWake(entry: E, atMs: number): void {
    const host = this.#host;
    entry.wakeAtMs = atMs;
    entry.wakeTimer = host.clock.setTimer(
      () => {
        entry.wakeTimer = undefined;
        entry.wakeAtMs = null;
        if (host.isClosed() || entry.context || entry.opening || entry.closing) return;
        this.#wakes++;
        // Started through the router: in a cluster, the object's owner may be another host now.
        // The context arms the stored alarm as it opens; an alarm whose time passed fires at once.
        host.start(entry.namespace, entry.id).then(
          () => {
            // Started elsewhere (another host owns it now): forget the local record.
            const current = host.entries.get(entry.key);
            if (current !== undefined && host.holdsNothing(current)) host.entries.delete(entry.key);
          },
          () => {
            // The object could not start (its persistence failed to open, say): try again later
            // rather than lose the alarm.
            if (host.isClosed()) return;
            let current = host.entries.get(entry.key);
            if (current === undefined) host.entries.set(entry.key, (current = entry));
            if (host.holdsNothing(current)) {
              this.planWake(current, host.clock.now() + Math.max(1_000, Math.min(host.idleTimeoutMs, 60_000)));
            }
          },
        );
      },
      Math.max(0, atMs - host.clock.now()),
    );
  }
}
