/**
 * The object host: runs many objects of registered classes in one process, the way the platform
 * runs a Durable Object namespace.
 *
 * - Each registered class gets a namespace (`host.env.NAME`, shaped like `DurableObjectNamespace`).
 * - An object starts on its first event (a stub call, or its alarm): the host opens its persistence
 *   from the factory and creates an {@link ObjectContext} for it.
 * - After `idleTimeoutMs` without events (10 s by default, about what the platform waits) the host
 *   evicts it: it waits for `waitUntil` work and a running alarm, commits, and closes the context,
 *   which closes its database engine. An evicted object holds nothing but what its persistence keeps
 *   (nothing in memory with a directory per object). If it has an alarm, the host keeps one timer for
 *   it and wakes the object when the alarm is due.
 * - An object whose alarm is being retried is not evicted until the retries end (an eviction would
 *   otherwise restart the backoff).
 * - Pending alarms are recorded in an alarm index beside the objects' data (alarm-index.ts): a host
 *   that starts reads it and wakes exactly the objects whose alarms come due, without starting the
 *   others (alarm-wakes.ts).
 *
 * All timers are on the injected clock.
 */
import { type CriticalSections, ObjectContext } from "../context/object-context";
import type { ObjectId } from "../context/object-id";
import type { ObjectState } from "../context/object-state";
import { isFencedError } from "../durability/persistence";
import { ActorStoreError } from "../errors";
import { type Clock, systemClock, type TimerHandle } from "../util/clock";
import { type AlarmIndex, withAlarmIndex } from "./alarm-index";
import { AlarmWakes, entryKey, type WakeEntry } from "./alarm-wakes";
import { errorAcross } from "./boundary";
import {
  DEFAULT_IDLE_TIMEOUT_MS,
  type HostEnv,
  type HostedClass,
  type HostedObjectInfo,
  type HostedObjectState,
  type HostStats,
  type NamespaceClasses,
  type ObjectHostOptions,
} from "./host-types";
import {
  applyOperation,
  type Dispatcher,
  instanceGoneError,
  ObjectNamespace,
  type StubBinding,
  type StubOperation,
} from "./namespace";
import { checkOptions, indexOf, memoryPerObject, type PersistenceFactory } from "./options";
import { loadSideScope, runOnSide, type Side } from "./rpc-references";

interface Entry extends WakeEntry {
  context: ObjectContext<unknown, object> | null;
  opening: Promise<void> | null;
  closing: Promise<void> | null;
  inFlight: number;
  idleTimer: TimerHandle | undefined;
  /** The current instance's token: stubs bound to it fail once it carries the reset's error. */
  token: { error: Error | null };
  /**
   * Set when an eviction was asked for while events were in flight (a cluster handing the object
   * over): once the last of them ends, the object is evicted if this still says so.
   */
  leaveWhenIdle: (() => boolean) | null;
}

/** What the cluster layer needs from a host, beyond its public API. @internal */
export interface HostInternals {
  /** Runs an operation on a local object (a forwarded one uses a fresh binding). */
  dispatch: Dispatcher["dispatch"];
  /**
   * Evicts one object if it is live and idle; resolves with whether it did. With `whenIdle`, an
   * object that was busy is evicted as soon as its last event in flight ends, if `whenIdle()` still
   * says so then.
   */
  evict(namespace: string, id: ObjectId, whenIdle?: () => boolean): Promise<boolean>;
  /** The objects with a live context. */
  held(): Array<{ namespace: string; id: ObjectId }>;
  /** Whether the object has a live context now. */
  holds(namespace: string, id: ObjectId): boolean;
  /** Drops a live object whose persistence was found fenced (as a fenced write would). */
  dropFenced(namespace: string, id: ObjectId): void;
  /**
   * Whether `error` failed an operation before the object saw it: the object could not start (its
   * load failed), so the operation did not run and may be sent elsewhere.
   */
  undelivered(error: unknown): boolean;
  /**
   * Reads the alarm index and plans a wake-up for every indexed object `owns` accepts that is not
   * live. Resolves once planned.
   */
  scanAlarms(owns: (namespace: string, id: ObjectId) => boolean): Promise<void>;
}

/** What a cluster asks of a routed host. @internal */
export interface RouterHooks {
  /** Where operations go instead of straight to the local objects. */
  router: (local: Dispatcher) => Dispatcher;
  /**
   * Called when an object's persistence was fenced (a newer holder claimed it). The host drops the
   * object at once instead of keeping a fenced instance (or reloading it, which would take the
   * object back from its new holder).
   */
  onFenced?: (namespace: string, id: ObjectId) => void;
  /**
   * Awaited before a live object's alarm handler runs (the context's `beforeAlarm`): rejects with
   * `ERR_FENCED` when a newer holder claimed the object, which drops it as a fenced write does.
   */
  beforeAlarm?: (namespace: string, id: ObjectId) => Promise<void>;
}

let internalsOf: (host: ObjectHost) => HostInternals;
const routers = new WeakMap<object, RouterHooks>();

/**
 * Builds a host whose namespaces (in its `env`, which its objects see too) send operations through
 * `router` instead of straight to the local objects. @internal
 */
export function createRoutedHost<N extends NamespaceClasses, E>(
  options: ObjectHostOptions<N, E>,
  hooks: RouterHooks,
): ObjectHost<N, E> {
  const copy = { ...options };
  routers.set(copy, hooks);
  return new ObjectHost(copy);
}

/** The internals of `host`. @internal */
export function hostInternals(host: ObjectHost<NamespaceClasses, unknown>): HostInternals {
  return internalsOf(host as ObjectHost);
}

const HOST_OPTIONS = {
  namespaces: "object",
  env: "object",
  persistence: "function",
  clock: "object",
  idleTimeoutMs: "number",
  storage: "object",
  random: "function",
  blockConcurrencyTimeoutMs: "number",
  alarmIndex: "any",
} as const;

/**
 * Runs many objects: one namespace per registered class, objects started on demand and evicted when
 * idle.
 *
 * @example
 * ```ts
 * class Counter extends DurableObject {
 *   async increment(by: number): Promise<number> {
 *     const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + by;
 *     await this.ctx.storage.put("n", n);
 *     return n;
 *   }
 * }
 * const host = new ObjectHost({ namespaces: { COUNTER: Counter }, persistence: directoryPerObject("./data") });
 * const counter = host.env.COUNTER.getByName("a");
 * await counter.increment(2); // 2
 * await host.close();
 * ```
 */
export class ObjectHost<N extends NamespaceClasses = NamespaceClasses, E = object> {
  /** The env: the given bindings plus one namespace per registered class. */
  readonly env: HostEnv<N, E>;
  /** The clock everything runs on. */
  readonly clock: Clock;
  /** Evict after this many ms without events. */
  readonly idleTimeoutMs: number;
  readonly #classes = new Map<string, HostedClass>();
  readonly #entries = new Map<string, Entry>();
  readonly #persistence: PersistenceFactory;
  /** Where operations go: the local objects, or a cluster's router. */
  readonly #router: Dispatcher;
  readonly #storage: ObjectHostOptions<N, E>["storage"];
  readonly #random: (() => number) | undefined;
  readonly #bcwTimeoutMs: number | undefined;
  readonly #alarmIndex: AlarmIndex | undefined;
  readonly #wakes: AlarmWakes<Entry>;
  readonly #onFenced: RouterHooks["onFenced"];
  readonly #beforeAlarm: RouterHooks["beforeAlarm"];
  /** The errors that reset an object (their callers' copies say `durableObjectReset`). */
  readonly #resetErrors = new WeakSet<Error>();
  /** Errors of failed starts: the operations they failed never reached the object. */
  readonly #undelivered = new WeakSet<object>();
  #closed = false;
  #starts = 0;
  #evictions = 0;
  #failedStarts = 0;
  #closeErrors = 0;

  constructor(options: ObjectHostOptions<N, E>) {
    checkOptions("ObjectHost", options, HOST_OPTIONS);
    if (options === undefined || options.namespaces === undefined) {
      throw new TypeError('ObjectHost: option "namespaces" is required ({ NAME: Class }).');
    }
    const idle = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    if (!(idle >= 0)) throw new TypeError('ObjectHost: option "idleTimeoutMs" must be a number >= 0 (or Infinity).');
    if (options.blockConcurrencyTimeoutMs !== undefined && !(options.blockConcurrencyTimeoutMs > 0)) {
      throw new TypeError('ObjectHost: option "blockConcurrencyTimeoutMs" must be a number > 0.');
    }
    this.idleTimeoutMs = idle;
    this.clock = options.clock ?? systemClock;
    this.#persistence = options.persistence ?? memoryPerObject();
    this.#storage = options.storage;
    this.#random = options.random;
    this.#bcwTimeoutMs = options.blockConcurrencyTimeoutMs;
    const index = options.alarmIndex;
    if (
      index !== undefined &&
      index !== false &&
      (typeof index !== "object" ||
        index === null ||
        typeof index.set !== "function" ||
        typeof index.list !== "function")
    ) {
      throw new TypeError('ObjectHost: option "alarmIndex" must be an AlarmIndex ({ set, list }) or false.');
    }
    this.#alarmIndex = index === false ? undefined : (index ?? indexOf(this.#persistence));
    const hooks = routers.get(options);
    this.#onFenced = hooks?.onFenced;
    this.#beforeAlarm = hooks?.beforeAlarm;
    const env: Record<string, unknown> = { ...(options.env as object | undefined) };
    // One host in one process passes functions and RpcTargets by reference; a cluster's router
    // (calls may cross processes) does not.
    const local: Dispatcher = {
      dispatch: (ns, id, binding, op) => this.#dispatch(ns, id, binding, op),
      references: true,
    };
    const dispatcher = hooks?.router(local) ?? local;
    this.#router = dispatcher;
    for (const [name, objectClass] of Object.entries(options.namespaces)) {
      if (typeof objectClass !== "function") {
        throw new TypeError(`ObjectHost: namespace "${name}" must be a class with a (ctx, env) constructor.`);
      }
      if (name in env) throw new TypeError(`ObjectHost: namespace "${name}" has the name of an env binding.`);
      this.#classes.set(name, objectClass);
      env[name] = new ObjectNamespace(name, name, dispatcher);
    }
    this.env = Object.freeze(env) as HostEnv<N, E>;
    this.#wakes = new AlarmWakes<Entry>(
      {
        clock: this.clock,
        idleTimeoutMs: this.idleTimeoutMs,
        entries: this.#entries,
        isClosed: () => this.#closed,
        namespaces: () => this.#classes.keys(),
        namespace: (name) => this.namespace(name),
        entry: (namespace, id) => this.#entry(namespace, id),
        holdsNothing: (entry) => this.#holdsNothing(entry),
        start: (namespace, id) => this.#router.dispatch(namespace, id, { token: null }, { kind: "start" }),
      },
      this.#alarmIndex,
    );
    // A host on its own wakes every indexed alarm; a cluster scans for the objects it owns.
    if (hooks === undefined) void this.#wakes.scan(() => true);
  }

  static {
    internalsOf = (host) => ({
      dispatch: (ns, id, binding, op) => host.#dispatch(ns, id, binding, op),
      evict: async (ns, id, whenIdle) => {
        const entry = host.#entries.get(entryKey(ns, id));
        if (entry === undefined) return false;
        const evicted = await host.#evict(entry, true);
        if (!evicted && whenIdle !== undefined && entry.context !== null && !entry.closing) {
          entry.leaveWhenIdle = whenIdle;
          // Busy only with its own work (waitUntil, an alarm) when asked: try once more now that it settled.
          if (entry.inFlight === 0) host.#afterEvents(entry);
        }
        return evicted;
      },
      held: () =>
        [...host.#entries.values()]
          .filter((e) => e.context !== null)
          .map((e) => ({ namespace: e.namespace, id: e.id })),
      holds: (ns, id) => host.#entries.get(entryKey(ns, id))?.context != null,
      dropFenced: (ns, id) => {
        const entry = host.#entries.get(entryKey(ns, id));
        if (entry !== undefined) host.#dropFenced(entry);
      },
      undelivered: (error) => typeof error === "object" && error !== null && host.#undelivered.has(error),
      scanAlarms: (owns) => host.#wakes.scan(owns),
    });
  }

  /** The namespace registered as `name`. */
  namespace<K extends keyof N & string>(name: K): ObjectNamespace<InstanceType<N[K]>> {
    const ns = (this.env as Record<string, unknown>)[name];
    if (!(ns instanceof ObjectNamespace) || !this.#classes.has(name)) {
      throw new TypeError(`ObjectHost: no namespace named "${name}".`);
    }
    return ns as ObjectNamespace<InstanceType<N[K]>>;
  }

  /** What the host holds now: every live object and every sleeping one with an alarm. */
  objects(): HostedObjectInfo[] {
    const out: HostedObjectInfo[] = [];
    for (const e of this.#entries.values()) {
      const state: HostedObjectState = e.closing
        ? "stopping"
        : e.context
          ? "active"
          : e.opening
            ? "starting"
            : e.wakeTimer !== undefined
              ? "sleeping"
              : "stopping";
      const planned = e.context?.alarms.next() ?? null;
      out.push({
        namespace: e.namespace,
        id: e.id.toString(),
        ...(e.id.name === undefined ? {} : { name: e.id.name }),
        state,
        inFlight: e.inFlight,
        alarmAtMs: planned?.runAtMs ?? e.wakeAtMs,
      });
    }
    return out;
  }

  /** Counters: how many objects are live and sleeping, and how many starts and evictions happened. */
  stats(): HostStats {
    let live = 0;
    let sleeping = 0;
    for (const e of this.#entries.values()) {
      if (e.context || e.opening || e.closing) live++;
      else if (e.wakeTimer !== undefined) sleeping++;
    }
    return {
      live,
      sleeping,
      starts: this.#starts,
      evictions: this.#evictions,
      alarmWakes: this.#wakes.wakes,
      failedStarts: this.#failedStarts,
      alarmIndexErrors: this.#wakes.errors,
      closeErrors: this.#closeErrors,
    };
  }

  /**
   * Evicts every live object with no event in flight now, whatever its idle time (for memory
   * pressure, or a test). Resolves with how many were evicted, once they are closed.
   */
  async evictIdle(): Promise<number> {
    const evictions = [...this.#entries.values()].map((e) => this.#evict(e, true));
    return (await Promise.all(evictions)).filter(Boolean).length;
  }

  /** Resolves when no object is starting or stopping and every running alarm has finished. */
  async settled(): Promise<void> {
    await this.#wakes.scanning;
    for (;;) {
      const pending: Array<Promise<unknown>> = [];
      for (const e of this.#entries.values()) {
        if (e.opening) pending.push(e.opening.catch(() => {}));
        if (e.closing) pending.push(e.closing);
        if (e.context) pending.push(e.context.alarms.idle());
      }
      if (pending.length === 0) return;
      await Promise.all(pending);
      if (![...this.#entries.values()].some((e) => e.opening || e.closing)) return;
    }
  }

  /**
   * Closes every object (committing what is pending) and cancels every timer. When an object's
   * close fails, the others are closed all the same, and then it rejects with the first failure
   * (each counted in `stats().closeErrors`).
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#wakes.cancel();
    const closing: Array<Promise<unknown>> = [];
    for (const e of this.#entries.values()) {
      this.#clearTimers(e);
      if (e.opening) closing.push(e.opening.catch(() => {}));
      if (e.closing) closing.push(e.closing);
    }
    await Promise.all(closing);
    const closed = await Promise.allSettled([...this.#entries.values()].map((e) => e.context?.close()));
    this.#entries.clear();
    await this.#wakes.drained();
    const failures = closed.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    this.#closeErrors += failures.length;
    if (failures[0] !== undefined) throw failures[0].reason;
  }

  // ------------------------------------------------------------------ events

  async #dispatch(namespace: string, id: ObjectId, binding: StubBinding, operation: StubOperation): Promise<unknown> {
    if (this.#closed) throw new ActorStoreError("ERR_CLOSED", "This object host was closed; create a new one.");
    // An error that reset the object reaches its callers marked so, as on the platform; a stub bound to
    // a reset instance fails before anything is delivered (so not `remote`, even for fetch).
    const across = (e: unknown, delivered: boolean) =>
      errorAcross(e, {
        reset: e instanceof Error && this.#resetErrors.has(e),
        fetch: delivered && operation.kind === "fetch",
      });
    if (binding.token?.error) throw across(binding.token.error, false);
    // A call on a function or RpcTarget an instance passed: never starts a new instance for it (nor
    // leaves an entry behind for an evicted object).
    if (operation.kind === "invoke") {
      const live = this.#entries.get(entryKey(namespace, id));
      if (live === undefined || live.context === null || live.closing !== null) throw instanceGoneError();
    }
    const entry = this.#entry(namespace, id);
    entry.inFlight++;
    if (entry.idleTimer !== undefined) {
      this.clock.clearTimer(entry.idleTimer);
      entry.idleTimer = undefined;
    }
    try {
      let context: ObjectContext<unknown, object>;
      try {
        context = await this.#open(entry);
      } catch (e) {
        if (typeof e === "object" && e !== null) this.#undelivered.add(e);
        throw e;
      }
      if (binding.token?.error) throw across(binding.token.error, false);
      binding.token = entry.token;
      let result: unknown;
      await loadSideScope();
      // The object's code runs as its own side: a function or RpcTarget it passes in a call it makes
      // (to another object, say) is called back as an event on this instance.
      const token = entry.token;
      try {
        result = await context.deliver(
          (instance) =>
            runOnSide(
              this.#sideOf(
                entry,
                token,
                () => context.criticalSections(),
                () => instance,
              ),
              () => applyOperation(instance, operation),
            ),
          operation.kind === "invoke" && operation.within !== undefined ? { within: operation.within } : {},
        );
      } catch (e) {
        throw across(e, true);
      }
      // Woken for an indexed alarm that is no longer stored (deleted by a restore, or a commit
      // that failed after its index update): forget it, so it is not woken again.
      if (operation.kind === "start" && context.alarms.next() === null) void this.#wakes.write(entry, null);
      return result;
    } finally {
      entry.inFlight--;
      if (entry.inFlight === 0) this.#afterEvents(entry);
    }
  }

  /**
   * The side of one instance of `entry`'s object (`instance()`, `undefined` while its constructor
   * runs), bound to its `token`: a call on what it passes is an invoke event on that instance,
   * inside the critical sections (`within`) it was passed from while they last.
   */
  #sideOf(
    entry: Entry,
    token: Entry["token"],
    sectionsNow: () => CriticalSections | null,
    instance: () => object | undefined,
    within?: CriticalSections,
  ): Side {
    const side: Side = {
      run: (thunk) =>
        this.#dispatch(
          entry.namespace,
          entry.id,
          { token },
          // A constructor that threw passed nothing that lives: no instance matches this owner.
          { kind: "invoke", owner: instance() ?? {}, thunk, ...(within === undefined ? {} : { within }) },
        ),
      pin: () => {
        const sections = sectionsNow();
        return sections === null && within === undefined
          ? side
          : this.#sideOf(entry, token, sectionsNow, instance, sections ?? undefined);
      },
    };
    return side;
  }

  #entry(namespace: string, id: ObjectId): Entry {
    const key = entryKey(namespace, id);
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = {
        key,
        namespace,
        id,
        context: null,
        opening: null,
        closing: null,
        inFlight: 0,
        idleTimer: undefined,
        wakeTimer: undefined,
        wakeAtMs: null,
        token: { error: null },
        leaveWhenIdle: null,
      };
      this.#entries.set(key, entry);
    }
    return entry;
  }

  /** Waits for a stopping instance to finish, then returns the live context (starting one if needed). */
  async #open(entry: Entry): Promise<ObjectContext<unknown, object>> {
    for (;;) {
      if (this.#closed) throw new ActorStoreError("ERR_CLOSED", "This object host was closed; create a new one.");
      if (entry.closing) {
        await entry.closing;
        continue;
      }
      if (entry.context) return entry.context;
      entry.opening ??= this.#start(entry).finally(() => {
        entry.opening = null;
      });
      await entry.opening;
    }
  }

  async #start(entry: Entry): Promise<void> {
    entry.leaveWhenIdle = null;
    // A sleeping object's alarm: planned again if the object does not start.
    const wakeAtMs = entry.wakeTimer !== undefined ? entry.wakeAtMs : null;
    if (entry.wakeTimer !== undefined) {
      this.clock.clearTimer(entry.wakeTimer);
      entry.wakeTimer = undefined;
      entry.wakeAtMs = null;
    }
    const objectClass = this.#classes.get(entry.namespace) as HostedClass;
    await loadSideScope();
    try {
      const opened = await this.#persistence(entry.id, entry.namespace);
      const persistence =
        this.#alarmIndex === undefined ? opened : withAlarmIndex(opened, (atMs) => this.#wakes.write(entry, atMs));
      let created: ObjectContext<unknown, object> | undefined;
      const context = await ObjectContext.create<unknown, object>(
        objectClass as new (
          ctx: ObjectState,
          env: unknown,
        ) => object,
        {
          id: entry.id,
          env: this.env as unknown,
          clock: this.clock,
          storage: { ...this.#storage, persistence },
          onReset: (error) => {
            this.#resetErrors.add(error);
            entry.token.error = error;
            entry.token = { error: null };
            if (this.#onFenced !== undefined && isFencedError(error)) this.#dropFenced(entry);
          },
          // Its constructor and alarm handler are its own code too (what they pass is called back
          // as an event on the instance), whatever code started them.
          runOwnCode: (instance, fn) =>
            runOnSide(
              this.#sideOf(entry, entry.token, () => created?.criticalSections() ?? null, instance),
              fn,
            ),
          ...(this.#beforeAlarm === undefined
            ? {}
            : {
                beforeAlarm: () =>
                  (this.#beforeAlarm as NonNullable<RouterHooks["beforeAlarm"]>)(entry.namespace, entry.id),
              }),
          ...(this.#random === undefined ? {} : { random: this.#random }),
          ...(this.#bcwTimeoutMs === undefined ? {} : { blockConcurrencyTimeoutMs: this.#bcwTimeoutMs }),
        },
      );
      created = context;
      if (this.#closed) {
        await context.close();
        return;
      }
      entry.context = context;
      this.#starts++;
    } catch (e) {
      this.#failedStarts++;
      // A newer holder claimed the object while it loaded (in a cluster): the cluster sends its
      // events to that holder instead of starting it again here, which would take it back.
      if (isFencedError(e)) this.#onFenced?.(entry.namespace, entry.id);
      // Started by a call while it slept: its alarm must still wake it (a start for the alarm itself
      // is planned again by the wake-up, later).
      if (wakeAtMs !== null && !this.#closed && entry.wakeTimer === undefined && entry.context === null) {
        this.#wakes.planWake(entry, wakeAtMs);
      }
      throw e;
    }
  }

  /** After the last event in flight: arm the idle timer, or forget an entry that holds nothing. */
  #afterEvents(entry: Entry): void {
    if (this.#closed) return;
    if (entry.context === null && !entry.opening && !entry.closing) {
      if (entry.wakeTimer === undefined) this.#entries.delete(entry.key);
      return;
    }
    const leave = entry.leaveWhenIdle;
    if (leave !== null && entry.context !== null && !entry.closing) {
      // Kept until the eviction happens: an event that arrives while it waits for the object's own
      // work tries again when it ends (an alarm being retried re-arms the idle timer itself).
      if (leave()) {
        void this.#evict(entry, true);
        return;
      }
      entry.leaveWhenIdle = null;
    }
    this.#armIdle(entry);
  }

  #armIdle(entry: Entry): void {
    if (entry.idleTimer !== undefined) this.clock.clearTimer(entry.idleTimer);
    entry.idleTimer = undefined;
    if (!Number.isFinite(this.idleTimeoutMs)) return;
    entry.idleTimer = this.clock.setTimer(() => {
      entry.idleTimer = undefined;
      void this.#evict(entry, false);
    }, this.idleTimeoutMs);
  }

  #clearTimers(entry: Entry): void {
    if (entry.idleTimer !== undefined) this.clock.clearTimer(entry.idleTimer);
    if (entry.wakeTimer !== undefined) this.clock.clearTimer(entry.wakeTimer);
    entry.idleTimer = undefined;
    entry.wakeTimer = undefined;
  }

  /** Evicts `entry` if it is idle; resolves with whether it did. */
  async #evict(entry: Entry, now: boolean): Promise<boolean> {
    const context = entry.context;
    if (context === null || entry.closing || entry.inFlight > 0 || this.#closed) return false;
    // Work the object still does on its own keeps it: waitUntil promises and a running alarm.
    await context.waitUntilSettled();
    await context.alarms.idle();
    if (entry.context !== context || entry.closing || entry.inFlight > 0 || this.#closed) return false;
    // An event came and went meanwhile: its own idle timer decides.
    if (!now && entry.idleTimer !== undefined) return false;
    const planned = context.alarms.next();
    if (planned !== null && planned.retryCount > 0) {
      // Evicting would restart the retry count; stay until the retries are over.
      this.#armIdle(entry);
      return false;
    }
    if (entry.idleTimer !== undefined) this.clock.clearTimer(entry.idleTimer);
    entry.idleTimer = undefined;
    entry.leaveWhenIdle = null;
    entry.context = null;
    entry.closing = (async () => {
      try {
        await context.close();
      } catch {
        // Nobody waits on an eviction's outcome (an idle timer started it): the object is stopped
        // all the same, and the next event starts it from what is durable.
        this.#closeErrors++;
      } finally {
        entry.closing = null;
        this.#evictions++;
        // Pending calls that waited for the close start the object again at once.
        if (entry.inFlight === 0 && !this.#closed) {
          if (planned !== null) this.#wakes.planWake(entry, planned.runAtMs);
          else if (!entry.opening && entry.context === null) this.#entries.delete(entry.key);
        }
      }
    })();
    await entry.closing;
    return true;
  }

  /** Whether an entry has no context, no start or stop under way, no event in flight and no wake timer. */
  #holdsNothing(entry: Entry): boolean {
    return (
      entry.context === null &&
      !entry.opening &&
      !entry.closing &&
      entry.inFlight === 0 &&
      entry.wakeTimer === undefined
    );
  }

  /** A fenced object (in a cluster): drop its instance now; the cluster sends its events to the new holder. */
  #dropFenced(entry: Entry): void {
    const context = entry.context;
    if (context === null || entry.closing) return;
    this.#onFenced?.(entry.namespace, entry.id);
    if (entry.idleTimer !== undefined) this.clock.clearTimer(entry.idleTimer);
    entry.idleTimer = undefined;
    entry.context = null;
    entry.closing = context
      .close()
      .catch(() => {})
      .finally(() => {
        entry.closing = null;
        this.#evictions++;
        if (this.#holdsNothing(entry)) this.#entries.delete(entry.key);
      });
  }
}
