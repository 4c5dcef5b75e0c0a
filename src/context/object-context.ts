/**
 * The object context: hosts one stateful object. It owns the object's storage (across resets, via
 * one persistence adapter), delivers events (requests, RPC calls, alarms) through the input gate,
 * releases results and outgoing messages through the output gate, and resets the object when a
 * write fails, `abort()` is called, or `blockConcurrencyWhile` fails.
 *
 * A *session* is one instance of the object's class over one opened storage. A reset ends the
 * session; the next event starts a new one over the last confirmed state.
 */
import { type AlarmInvocationInfo, AlarmScheduler } from "../alarms/alarm-scheduler";
import { openFilePersistence } from "../durability/file-persistence";
import { createMemoryPersistence } from "../durability/memory-persistence";
import { isFencedError, type PersistenceAdapter } from "../durability/persistence";
import { ActorStoreError, describeThrown, toError } from "../errors";
import { attachHost, coreOf, ObjectStorage, type ObjectStorageOptions } from "../storage/object-storage";
import type { StorageHost } from "../storage/storage-host";
import { type Clock, nextTurn, scheduleMacrotask, systemClock } from "../util/clock";
import { checkContextOptions } from "./context-options";
import { InputGate } from "./input-gate";
import { ObjectId } from "./object-id";
import { ObjectState } from "./object-state";
import { OutputGate } from "./output-gate";
import { SectionDepth } from "./section-depth";

/** An instance of an object class: any methods, optionally `fetch` and `alarm`. */
export interface ObjectInstance {
  fetch?(request: Request): Response | Promise<Response>;
  alarm?(info: AlarmInvocationInfo): unknown;
}

/** A class written for the platform: `constructor(ctx, env)`. */
export type ObjectClass<Env = unknown, I extends object = object> = new (ctx: ObjectState, env: Env) => I;

/**
 * The time an answer spends on its way out. On the platform an event's result leaves the object
 * only after its own turn: the next queued event, delivered meanwhile, can still reset the object,
 * and then every answer not yet sent fails with the reset (even one whose handler returned without
 * writing anything). Waiting one macrotask puts the next event's first turn (the input gate
 * delivers one event per macrotask) before the answer leaves.
 */
function inFlight(): Promise<void> {
  return new Promise<void>((resolve) => scheduleMacrotask(resolve));
}

/**
 * `work`, or the error that reset `session` if that comes first (`work` is then left to settle
 * unobserved).
 */
function untilBroken<T>(session: { readonly outputGate: OutputGate }, work: T | Promise<T>): Promise<Awaited<T>> {
  return session.outputGate.race(Promise.resolve(work) as Promise<Awaited<T>>);
}

/** What every use of a closed context fails with. */
function closedError(): ActorStoreError {
  return new ActorStoreError("ERR_CLOSED", "This object context was closed; create a new one.");
}

/** Options of {@link ObjectContext.create}. */
export interface ObjectContextOptions<Env> {
  /** The `env` passed to the constructor. */
  env?: Env;
  /** The object's id (or a name to derive it from). Default: a random id. */
  id?: ObjectId | string;
  /** Storage options; `persistence`/`directory` is shared by every session of this object. */
  storage?: ObjectStorageOptions;
  /** The clock for alarms, retries and timeouts. Default: the system clock. */
  clock?: Clock;
  /** Random source in [0, 1) for alarm retry jitter. Default: Math.random. */
  random?: () => number;
  /** How long `blockConcurrencyWhile` may run before the object resets. Default 30,000 ms. */
  blockConcurrencyTimeoutMs?: number;
  /** `ctx.props`. Default: an empty object, as on the platform when a binding gives none. */
  props?: unknown;
  /** Start the alarm scheduler (default true). */
  alarms?: boolean;
  /** Called when the object is reset, with the error its pending and later callers see (the object host uses it). */
  onReset?: (error: Error) => void;
  /**
   * Runs the object's own code that the context starts by itself: its constructor (`instance()`
   * gives `undefined` until the constructor returned) and its alarm handler. The object host uses
   * it to know which instance the running code belongs to. Default: runs `fn`.
   */
  runOwnCode?: <R>(instance: () => object | undefined, fn: () => R) => R;
  /**
   * Awaited before each run of the alarm handler, inside the alarm's event. When it rejects, the
   * handler does not run and the alarm fails with its error (retried as a failed storage operation
   * is, not counted against the retry limit); an `ERR_FENCED` error resets the object as a fenced
   * write does. The cluster uses it so that a holder that lost the object (a paused process another
   * host took the object from) never runs its alarm from the state it held.
   */
  beforeAlarm?: () => Promise<void>;
}

/** Options of {@link ObjectContext.deliver}. */
export interface DeliverOptions {
  /** Critical sections (from {@link ObjectContext.criticalSections}) the event runs inside. */
  readonly within?: CriticalSections;
}

/**
 * The critical sections (`blockConcurrencyWhile`, `transaction()`) running at one moment, from
 * {@link ObjectContext.criticalSections}: an event delivered with it runs inside them while one of
 * them still runs.
 */
export interface CriticalSections {
  readonly sections: ReadonlyArray<object>;
}

interface Session<I extends object> {
  storage: ObjectStorage;
  state: ObjectState;
  instance: I | undefined;
  outputGate: OutputGate;
  broken: Error | null;
  constructing: boolean;
  /** blockConcurrencyWhile calls made by the constructor: the first event waits for them. */
  init: Array<Promise<unknown>>;
}

/** The default reason of `abort()`. */
export const ABORT_MESSAGE = "Application called abort() to reset Durable Object.";
/** The message when blockConcurrencyWhile exceeds its timeout. */
export const BLOCK_CONCURRENCY_TIMEOUT_MESSAGE =
  "A call to blockConcurrencyWhile() in a Durable Object waited for too long. The call was canceled and the Durable Object was reset.";

/**
 * Hosts one object: create it, send it events, and it behaves like the platform's Durable Object.
 *
 * @example
 * ```ts
 * class Counter {
 *   constructor(private ctx: ObjectState) {}
 *   async fetch() {
 *     const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + 1;
 *     await this.ctx.storage.put("n", n);
 *     return new Response(String(n));
 *   }
 * }
 * const counter = await ObjectContext.create(Counter, { id: "counter-1" });
 * const res = await counter.fetch(new Request("http://do/"));
 * ```
 */
export class ObjectContext<Env = unknown, I extends object = object> {
  /** The object's id (`ctx.id` inside it): `options.id` (an `ObjectId`, or a name it is made from), else a new unique one. */
  readonly id: ObjectId;
  /** The clock its alarms and timeouts run on (`options.clock`, else `options.storage.clock`, else the system clock). */
  readonly clock: Clock;
  /** Its alarm scheduler: the next attempt, the history, and running due alarms by hand. */
  readonly alarms: AlarmScheduler;
  readonly #class: ObjectClass<Env, I>;
  readonly #env: Env;
  readonly #props: unknown;
  readonly #storageOptions: ObjectStorageOptions;
  readonly #persistence: PersistenceAdapter;
  readonly #inputGate = new InputGate();
  /** The live session's critical sections (a fresh set after each reset). */
  #sections = new SectionDepth();
  readonly #bcwTimeoutMs: number;
  readonly #waitUntil = new Set<Promise<unknown>>();
  readonly #onReset: ((error: Error) => void) | undefined;
  #session: Session<I> | null = null;
  #opening: Promise<Session<I>> | null = null;
  #closed = false;
  /** Set when the persistence was fenced by a newer holder: the object is dropped, never reopened. */
  #fenced: Error | null = null;
  #resets = 0;
  #previousStorage: ObjectStorage | undefined;
  readonly #runOwnCode: <R>(instance: () => object | undefined, fn: () => R) => R;
  readonly #beforeAlarm: (() => Promise<void>) | undefined;
  #lastResetError: Error | null = null;
  /**
   * Errors that reset the object because its storage failed (a write not confirmed, a session
   * that could not open), not because of what its code did: an alarm attempt failing with one of
   * them does not count against the retry limit, as on the platform.
   */
  readonly #storageFailures = new WeakSet<object>();

  private constructor(
    objectClass: ObjectClass<Env, I>,
    options: ObjectContextOptions<Env>,
    persistence: PersistenceAdapter,
  ) {
    this.#class = objectClass;
    this.#env = options.env as Env;
    // The platform's ctx.props is an empty object when the binding gives none.
    this.#props = options.props === undefined ? {} : options.props;
    this.id =
      options.id instanceof ObjectId
        ? options.id
        : options.id !== undefined
          ? ObjectId.fromName(options.id)
          : ObjectId.unique();
    this.clock = options.clock ?? options.storage?.clock ?? systemClock;
    // `directory` was turned into `persistence` by create(); every session shares that adapter.
    const { directory: _directory, ...storageOptions } = options.storage ?? {};
    this.#storageOptions = { ...storageOptions, clock: this.clock, persistence };
    this.#persistence = persistence;
    this.#bcwTimeoutMs = options.blockConcurrencyTimeoutMs ?? 30_000;
    this.#onReset = options.onReset;
    this.#runOwnCode = options.runOwnCode ?? ((_instance, fn) => fn());
    this.#beforeAlarm = options.beforeAlarm;
    this.alarms = new AlarmScheduler({
      clock: this.clock,
      random: options.random ?? Math.random,
      deliver: (info) => this.#deliverAlarm(info),
      countsAgainstLimit: (error) => !(typeof error === "object" && error !== null && this.#storageFailures.has(error)),
      enabled: options.alarms ?? true,
    });
    this.alarms.connect(async () => {
      const core = coreOf(await this.storage());
      return {
        currentAlarm: () => core.currentAlarm(),
        committedAlarm: () => core.committedAlarm,
        handlerSetAlarm: () => core.alarmHandlerMark !== undefined && core.alarmCalls !== core.alarmHandlerMark,
        clearAlarm: async () => {
          core.writeAlarm(null, false);
          await core.sync();
        },
      };
    });
  }

  /** Creates the context and opens the object's storage (the instance is built on the first event). */
  static async create<Env = unknown, I extends object = object>(
    objectClass: ObjectClass<Env, I>,
    options: ObjectContextOptions<Env> = {},
  ): Promise<ObjectContext<Env, I>> {
    if (typeof objectClass !== "function") {
      throw new TypeError(
        `ObjectContext.create(): the first argument must be the object's class; got ${typeof objectClass}.`,
      );
    }
    checkContextOptions("ObjectContext.create()", options);
    const s = options.storage ?? {};
    const persistence =
      s.persistence ?? (s.directory !== undefined ? await openFilePersistence(s.directory) : createMemoryPersistence());
    const context = new ObjectContext(objectClass, options, persistence);
    // Opening the first session arms a pending alarm (also one whose time passed while the object
    // was down, which then fires once, as soon as possible).
    await context.#ensureSession();
    return context;
  }

  // ------------------------------------------------------------------ host-facing API

  /** Delivers an HTTP request to the object's `fetch()`. */
  fetch(request: Request): Promise<Response> {
    return this.deliver((instance) => {
      const handler = (instance as ObjectInstance).fetch;
      if (typeof handler !== "function") throw new TypeError("Handler does not export a fetch() function.");
      return handler.call(instance, request);
    });
  }

  /** Calls a method of the object (an RPC call), through the gates. */
  call<R = unknown>(method: string, ...args: unknown[]): Promise<R> {
    return this.deliver((instance) => {
      const fn = (instance as Record<string, unknown>)[method];
      if (typeof fn !== "function") throw new TypeError(`The object has no method named "${method}".`);
      return (fn as (...a: unknown[]) => unknown).apply(instance, args) as R;
    });
  }

  /**
   * Delivers one event: waits for the input gate, runs `handler` on the instance, and releases its
   * result only after every write issued before the result is confirmed. If the object resets
   * meanwhile, the result is discarded and the promise rejects with the reset's error. With
   * `within` (see {@link ObjectContext.criticalSections}), it runs inside those critical sections
   * while one of them still runs: at once, without waiting for the gate they hold.
   */
  async deliver<R>(
    handler: (instance: I, state: ObjectState) => R | Promise<R>,
    options: DeliverOptions = {},
  ): Promise<Awaited<R>> {
    if (this.#closed) throw closedError();
    const resetsAtArrival = this.#resets;
    // Inside a critical section still running, the event runs at once (its gate is that section's).
    const inside = options.within !== undefined && this.#sections.anyRunning(options.within.sections);
    if (!inside) await this.#inputGate.enter();
    // An event that was waiting when the object reset fails with the reset, as on the platform;
    // only events that arrive afterwards meet the fresh instance.
    if (this.#resets !== resetsAtArrival && this.#lastResetError !== null) throw this.#lastResetError;
    const session = await this.#ensureSession();
    if (!inside || session.instance === undefined) {
      this.#construct(session);
      await untilBroken(session, Promise.all(session.init));
      // The platform commits a turn's writes before it delivers the next event, so a later event
      // (an abort, say) can never take an earlier event's finished writes down with it.
      coreOf(session.storage).commitNow();
    }
    let result: Awaited<R>;
    try {
      if (session.broken) throw session.broken;
      // A reset fails the event at once, as on the platform, even while its handler still waits
      // (for a fetch, a timer, a promise that never settles): its answer is the reset's error.
      result = await untilBroken(session, handler(session.instance as I, session.state));
    } catch (e) {
      // An uncaught exception does not reset the object, but it is an outgoing message too.
      if (session.broken) throw session.broken;
      await session.outputGate.wait().catch(() => {});
      await inFlight();
      if (session.broken) throw session.broken;
      throw e;
    }
    await session.outputGate.wait();
    await inFlight();
    if (session.broken) throw session.broken;
    return result;
  }

  /**
   * The critical sections (`blockConcurrencyWhile`, `transaction()`) running now, or `null`: an
   * event delivered with them (`deliver(handler, { within })`) runs inside them, past the input
   * gate they hold, while one of them still runs (as on the platform, where what an object passes
   * from inside a critical section is called inside it); once they ended, it waits as any event.
   */
  criticalSections(): CriticalSections | null {
    const sections = this.#sections.runningNow();
    return sections === null ? null : { sections };
  }

  /** The current storage (opens a session if none is live). */
  async storage(): Promise<ObjectStorage> {
    return (await this.#ensureSession()).storage;
  }

  /** The current instance (built if needed). */
  async instance(): Promise<I> {
    const session = await this.#ensureSession();
    this.#construct(session);
    await untilBroken(session, Promise.all(session.init));
    if (session.broken) throw session.broken;
    return session.instance as I;
  }

  /** Resets the object from outside (like the platform when it evicts an object): see `ctx.abort()`. */
  abort(reason: string = ABORT_MESSAGE): void {
    if (this.#session) this.#reset(this.#session, new Error(reason));
  }

  /** How many times the object has been reset. */
  get resets(): number {
    return this.#resets;
  }

  /** Resolves when every promise passed to `waitUntil` has settled. */
  async waitUntilSettled(): Promise<void> {
    while (this.#waitUntil.size > 0) await Promise.allSettled([...this.#waitUntil]);
  }

  /**
   * Stops alarms, waits for the work the object handed to `ctx.waitUntil()` (as a host waits before
   * it evicts an object: that work may still write), commits pending writes and closes the storage.
   * New events are refused from the start. Rejects (once everything is closed) when those writes
   * could not be made durable or the persistence adapter's `close()` failed; the context is closed
   * either way.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.alarms.stop();
    await this.waitUntilSettled();
    // A session still opening closes its storage itself when it sees #closed (#openSession).
    await this.#opening?.catch(() => {});
    const session = this.#session;
    this.#session = null;
    if (session && !session.broken) await session.storage.close();
    else await this.#persistence.close();
  }

  /** The persistence adapter shared by every session. */
  get persistence(): PersistenceAdapter {
    return this.#persistence;
  }

  // ------------------------------------------------------------------ sessions

  #ensureSession(): Promise<Session<I>> {
    if (this.#session && !this.#session.broken) return Promise.resolve(this.#session);
    // A closed context opens nothing again: that would take the persistence back (a directory's
    // lock included) with nothing left to close it.
    if (this.#closed) return Promise.reject(closedError());
    // Reopening would claim the object back from its new holder: the two would take it from each
    // other on every event. A fenced object stays dropped.
    if (this.#fenced !== null) return Promise.reject(this.#fenced);
    this.#opening ??= this.#openSession()
      .catch((e: unknown) => {
        if (isFencedError(e)) this.#fenced ??= toError(e);
        if (typeof e === "object" && e !== null) this.#storageFailures.add(e);
        throw e;
      })
      .finally(() => {
        this.#opening = null;
      });
    return this.#opening;
  }

  async #openSession(): Promise<Session<I>> {
    // Appends of the previous session must settle before the adapter reloads what is durable.
    if (this.#previousStorage) await coreOf(this.#previousStorage).settled();
    const storage = await ObjectStorage.open(this.#storageOptions);
    if (this.#closed) {
      // close() ran while the storage was opening: it is not this context's to keep.
      await storage.close();
      throw closedError();
    }
    this.#previousStorage = storage;
    const session: Session<I> = {
      storage,
      state: undefined as unknown as ObjectState,
      instance: undefined,
      outputGate: new OutputGate(),
      broken: null,
      constructing: false,
      init: [],
    };
    const host: StorageHost = {
      holdOutput: (confirmation) => session.outputGate.hold(confirmation),
      // A transaction is a critical section like blockConcurrencyWhile, and nests with it.
      // Its closure starts as blockConcurrencyWhile's callback does (after the caller's pending
      // microtasks) and has the same time limit, as on the platform, where transaction() runs in
      // blockConcurrencyWhile; a closure that throws rolls back without a reset.
      criticalSection: (fn) => this.#criticalSection(session, fn, false),
      onBroken: (error) => {
        this.#storageFailures.add(error);
        this.#reset(session, error);
      },
      // Before the instance exists (storage written directly, by the host or the test kit), the
      // class decides.
      hasAlarmHandler: () =>
        session.constructing ||
        typeof ((session.instance ?? this.#class.prototype) as ObjectInstance | undefined)?.alarm === "function",
      onAlarmCommitted: (timeMs) => {
        if (this.#session === session) this.alarms.onAlarmCommitted(timeMs);
      },
    };
    attachHost(storage, host);
    session.state = new ObjectState(
      this.id,
      storage,
      {
        blockConcurrencyWhile: (fn) => {
          const p = this.#blockConcurrencyWhile(session, fn);
          if (session.constructing) session.init.push(p.catch(() => {}));
          return p;
        },
        waitUntil: (promise) => {
          const tracked = Promise.resolve(promise).finally(() => this.#waitUntil.delete(tracked));
          tracked.catch(() => {});
          this.#waitUntil.add(tracked);
        },
        // The platform converts any reason but undefined to a string: abort(null) says "null". A
        // Symbol throws its TypeError here, before anything is reset, as there.
        abort: (reason) => this.#reset(session, new Error(reason === undefined ? ABORT_MESSAGE : (reason as string))),
        sendOutgoing: async (message) => {
          await session.outputGate.wait();
          if (session.broken) throw session.broken;
          return message();
        },
      },
      this.#props,
    );
    this.#session = session;
    // After a reset or a restore the stored alarm may differ from what the scheduler planned.
    this.alarms.onAlarmCommitted(coreOf(storage).committedAlarm);
    return session;
  }

  /**
   * Builds the session's instance if it has none yet: on the session's first event (or the first
   * `instance()` call), never when the storage opens, so whatever was written to storage before
   * (seeded by a test, restored from a bookmark) is what the constructor loads. A constructor that
   * throws resets the object with its error; the next event tries again on a fresh session.
   */
  #construct(session: Session<I>): void {
    if (session.instance !== undefined || session.broken) return;
    session.constructing = true;
    try {
      const Class = this.#class;
      session.instance = this.#runOwnCode(
        () => session.instance,
        () => new Class(session.state, this.#env),
      );
    } catch (e) {
      // The caller gets the error that reset the object (so a host marks it durableObjectReset, as
      // the platform does): the thrown value itself when it is an Error, else the Error made of it.
      const error = e instanceof Error ? e : new Error(describeThrown(e));
      this.#reset(session, error);
      throw error;
    } finally {
      session.constructing = false;
    }
  }

  #blockConcurrencyWhile<T>(session: Session<I>, fn: () => Promise<T>): Promise<T> {
    // As on the platform, the open implicit batch commits before the callback runs, so what the
    // callback does at the connection level (PRAGMA foreign_keys = OFF around a migration) is not
    // swallowed by a transaction that was already open.
    const callback = (): Promise<T> => {
      if (!session.broken) coreOf(session.storage).commitNow();
      return fn();
    };
    return this.#criticalSection(session, callback, true);
  }

  /**
   * Runs `callback` as a critical section of `session` (blockConcurrencyWhile's, or a
   * transaction's): the input gate stays closed until it settles. It starts as on the platform,
   * once it holds the section's lock (after the sibling sections called before it) and on a later
   * turn: the caller's pending microtasks (its code after the call, up to its next real I/O) run
   * first. If it runs longer than the time limit, counted from its start, the object resets with
   * the platform's message; with `resetOnFailure`, a rejection resets it too.
   */
  #criticalSection<T>(session: Session<I>, callback: () => Promise<T>, resetOnFailure: boolean): Promise<T> {
    // The code of an instance that was reset starts nothing: its section would hold the gate of
    // the instance that replaced it.
    if (session.broken) return Promise.reject(session.broken);
    // Too deep a nesting is refused before anything starts: the call rejects, the object lives on.
    const sections = this.#sections;
    const depth = sections.next();
    const refused = sections.refuse(depth);
    if (refused) return Promise.reject(refused);
    return this.#inputGate.runCritical(
      () =>
        new Promise<T>((resolve, reject) => {
          let timer: ReturnType<Clock["setTimer"]> | undefined;
          const timed = (): Promise<T> => {
            timer = this.clock.setTimer(() => {
              this.#reset(session, new Error(BLOCK_CONCURRENCY_TIMEOUT_MESSAGE));
            }, this.#bcwTimeoutMs);
            return callback();
          };
          // A section that ends with its instance reset (it failed, timed out, or something else
          // reset the object meanwhile) never settles, as on the platform, where the reset
          // instance runs no more of its code: a `catch` or `finally` around the call does not
          // run. The instance's events fail with the reset (deliver()), and the gate was reopened.
          sections
            .run(depth, timed, nextTurn())
            .then(
              (value) => {
                if (!session.broken) resolve(value);
              },
              (e: unknown) => {
                if (resetOnFailure) this.#reset(session, toError(e));
                if (!session.broken) reject(e);
              },
            )
            .finally(() => {
              if (timer !== undefined) this.clock.clearTimer(timer);
            });
        }),
    );
  }

  /**
   * Ends a session: held outgoing messages are discarded (their senders get `error`), uncommitted
   * writes are dropped, and the storage closes. The next event opens a fresh session over the
   * confirmed state (and applies a pending point-in-time restore).
   */
  #reset(session: Session<I>, error: Error): void {
    if (session.broken) return;
    session.broken = error;
    if (isFencedError(error)) this.#fenced ??= error;
    session.outputGate.break(error);
    session.storage.abort(error);
    if (this.#session === session) {
      // The fresh instance neither waits for the dead one's critical sections nor nests in them.
      this.#inputGate.reopen();
      this.#sections = new SectionDepth();
      this.#session = null;
      this.#resets++;
      this.#lastResetError = error;
      this.#onReset?.(error);
    }
  }

  async #deliverAlarm(info: AlarmInvocationInfo): Promise<void> {
    await this.deliver(async (instance, state) => {
      const core = coreOf(state.storage);
      const mark = core.alarmCalls;
      core.alarmHandlerMark = mark;
      const handler = (instance as ObjectInstance).alarm;
      if (typeof handler !== "function") return;
      if (this.#beforeAlarm !== undefined) {
        try {
          await this.#beforeAlarm();
        } catch (e) {
          const error = toError(e);
          this.#storageFailures.add(error);
          const session = this.#session;
          if (isFencedError(error) && session !== null && session.state === state) this.#reset(session, error);
          throw error;
        }
      }
      const scheduled = info.scheduledTime;
      // While the handler runs the alarm looks deleted, unless the handler sets or deletes it
      // (setting the very time being handled included, as on the platform).
      core.alarmViewOverride = (current) => (current === scheduled && core.alarmCalls === mark ? null : current);
      try {
        await this.#runOwnCode(
          () => instance,
          () => handler.call(instance, info),
        );
      } finally {
        core.alarmViewOverride = undefined;
      }
    });
  }
}
