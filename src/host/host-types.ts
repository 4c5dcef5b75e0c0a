/**
 * The object host's public types: the classes it runs, its options, and what `objects()` and
 * `stats()` report (the entry points export them beside the host).
 */
import type { ObjectState } from "../context/object-state";
import type { ObjectStorageOptions } from "../storage/object-storage";
import type { Clock } from "../util/clock";
import type { AlarmIndex } from "./alarm-index";
import type { ObjectNamespace } from "./namespace";
import type { PersistenceFactory } from "./options";

/** A class the host can run: `constructor(ctx, env)`. */
export type HostedClass = new (ctx: ObjectState, env: never) => object;

/** The namespaces of a host: binding name → class. */
export type NamespaceClasses = Record<string, HostedClass>;

/** The `env` the host's objects (and its user) see: the given env plus one namespace per class. */
export type HostEnv<N extends NamespaceClasses, E = object> = E & {
  readonly [K in keyof N]: ObjectNamespace<InstanceType<N[K]>>;
};

/** The platform's idle time before an object without events is evicted. */
export const DEFAULT_IDLE_TIMEOUT_MS = 10_000;

/** Options of {@link ObjectHost}. */
export interface ObjectHostOptions<N extends NamespaceClasses, E = object> {
  /** The classes to run, by binding name: `{ COUNTER: Counter }` gives `host.env.COUNTER`. */
  namespaces: N;
  /** More bindings for `env` (the objects' constructors get `env` with the namespaces added). */
  env?: E;
  /** Opens one object's persistence. Default: {@link memoryPerObject}. */
  persistence?: PersistenceFactory;
  /** The clock for alarms, timeouts and eviction. Default: the system clock. */
  clock?: Clock;
  /** Evict an object after this many ms without events. Default 10,000; `Infinity` never evicts. */
  idleTimeoutMs?: number;
  /** Storage options for every object (backend, limits, codec …). */
  storage?: Omit<ObjectStorageOptions, "persistence" | "directory" | "clock">;
  /** Random source in [0, 1) for alarm retry jitter. Default: Math.random. */
  random?: () => number;
  /** How long `blockConcurrencyWhile` may run before the object resets. Default 30,000 ms. */
  blockConcurrencyTimeoutMs?: number;
  /**
   * Where the objects' pending alarms are recorded, so that a host started later (or another host
   * taking objects over) wakes them when due. Default: the index that goes with the persistence
   * factory (`memoryPerObject`, `directoryPerObject` and the cluster's bucket factory have one);
   * `false` keeps none (an evicted object's alarm then fires only while this host runs).
   */
  alarmIndex?: AlarmIndex | false;
}

/** Where one object is in its life. */
export type HostedObjectState = "starting" | "active" | "stopping" | "sleeping";

/** One object the host holds (see {@link ObjectHost.objects}). */
export interface HostedObjectInfo {
  readonly namespace: string;
  readonly id: string;
  readonly name?: string;
  /** `sleeping`: evicted, with an alarm the host will wake it for. */
  readonly state: HostedObjectState;
  /** Events being delivered now. */
  readonly inFlight: number;
  /** When the object's next alarm attempt is due, if it has one. */
  readonly alarmAtMs: number | null;
}

/** Counters of a host (see {@link ObjectHost.stats}). */
export interface HostStats {
  /** Objects with an open context (starting, active or stopping). */
  readonly live: number;
  /** Evicted objects the host keeps a wake-up timer for (their alarm). */
  readonly sleeping: number;
  /** Objects started since the host was created (a wake after an eviction counts again). */
  readonly starts: number;
  /** Evictions so far. */
  readonly evictions: number;
  /** Alarm wake-ups so far. */
  readonly alarmWakes: number;
  /** Starts that failed (persistence factory or constructor errors), including alarm wake-ups. */
  readonly failedStarts: number;
  /** Alarm index reads or writes that failed (a read is tried again a minute later). */
  readonly alarmIndexErrors: number;
  /**
   * Objects whose close failed, at an eviction or at `close()`: the final commit of writes made
   * with `allowUnconfirmed` could not be made durable, or the persistence adapter's `close()`
   * rejected. The object is stopped all the same; its next event starts it from what is durable.
   */
  readonly closeErrors: number;
}
