/**
 * A test harness around one stateful object: the object context plus a fake clock, with the things
 * users kept asking local tools for (miniflare#626, #300, #157): fire alarms, move time, read and
 * seed storage directly, and simulate a crash or a restart, all without sleeps.
 */
import type { AlarmInvocationInfo, PlannedAlarm } from "../alarms/alarm-scheduler";
import { isObjectIdOrName, storageOption } from "../context/context-options";
import { ObjectContext, type ObjectContextOptions } from "../context/object-context";
import type { ObjectId } from "../context/object-id";
import type { ObjectState } from "../context/object-state";
import { createMemoryPersistence } from "../durability/memory-persistence";
import type { PersistenceAdapter } from "../durability/persistence";
import { ActorStoreError } from "../errors";
import type { ObjectStorage, ObjectStorageOptions } from "../storage/object-storage";
import { isPersistence, storageSpecWithout } from "../storage/open-options";
import type { ListOptions } from "../storage/options";
import { loadAsyncScope } from "../util/async-scope";
import { type Clock, checkClockStep, checkClockTime, FakeClock } from "../util/clock";
import { checkOptions, is, type OptionCheck } from "../util/options";
import { useFakeDate } from "./date-clock";

type FakeDate = ReturnType<typeof useFakeDate>;

/** A class written for the platform: `constructor(ctx, env)`. */
export type TestObjectClass<Env, I extends object> = new (ctx: ObjectState, env: Env) => I;

/** The names of `I`'s methods (what {@link TestObject.call} accepts). */
export type MethodName<I> = {
  [K in keyof I]: [I[K]] extends [never] ? never : I[K] extends (...args: never[]) => unknown ? K : never;
}[keyof I] &
  string;

/** The parameters of method `K` of `I`. */
export type MethodArgs<I, K extends keyof I> = I[K] extends (...args: infer A) => unknown ? A : never;

/** What method `K` of `I` resolves to. */
export type MethodResult<I, K extends keyof I> = I[K] extends (...args: never[]) => infer R ? Awaited<R> : never;

/** Options of {@link createTestObject}. */
export interface CreateTestObjectOptions<Env> {
  /** The `env` passed to the constructor. */
  env?: Env;
  /** The object's id or name. Default: `"test-object"`. */
  id?: ObjectId | string;
  /** The clock. Default: a new `FakeClock` at 2026-01-01T00:00:00Z. */
  clock?: FakeClock;
  /**
   * Where the commit log lives. Default: a fresh in-memory adapter, which survives
   * {@link TestObject.crash} and {@link TestObject.restart} (they reopen it), not the process.
   */
  persistence?: PersistenceAdapter;
  /** Other storage options (backend, limits, codec, `deleteAllDeletesAlarm` …). */
  storage?: Omit<ObjectStorageOptions, "persistence" | "directory" | "clock">;
  /** Jitter source for alarm retries. Default: `() => 0`, so retries come exactly at 2 s, 4 s, 8 s … */
  random?: () => number;
  /** `blockConcurrencyWhile` timeout in ms (on the fake clock). Default 30,000. */
  blockConcurrencyTimeoutMs?: number;
  /**
   * Makes `Date.now()`, `new Date()` and `Date()` inside the object's code follow the fake clock
   * (default `false`: they read the real clock). Applies to code run through this test object's
   * methods (`fetch`, `call`, `instance`, `advance`, `runDueAlarms`, `fireAlarm` …) and everything
   * it awaits or schedules; the test's own code keeps the real clock. Needs Node's
   * AsyncLocalStorage. See docs/testing.md.
   */
  fakeDate?: boolean;
}

/** What {@link createTestObject} accepts, name by name. */
const TEST_OBJECT_OPTIONS_SPEC: { readonly [K in keyof Required<CreateTestObjectOptions<unknown>>]: OptionCheck } = {
  env: is.any(),
  id: isObjectIdOrName,
  clock: (v) => (v instanceof FakeClock ? undefined : "a FakeClock (from actorstore/testkit)"),
  persistence: isPersistence,
  storage: storageOption(storageSpecWithout("persistence", "directory", "clock")),
  random: is.function("a function returning a number in [0, 1)"),
  blockConcurrencyTimeoutMs: is.number({ min: 1, unit: "milliseconds" }),
  fakeDate: is.boolean(),
};

/** Options of {@link TestObject.restart}. */
export interface RestartOptions {
  /** Commit pending writes before restarting (a clean shutdown). Default `false`: they are lost, as in a crash. */
  graceful?: boolean;
}

/** Most alarm attempts {@link TestObject.runDueAlarms} runs before it suspects an endless loop. */
const MAX_ALARM_RUNS = 1_000;

/**
 * One object under test. Created by {@link createTestObject}.
 *
 * @example
 * ```ts
 * const counter = await createTestObject(Counter);
 * await counter.call("increment");
 * expect(await counter.get("count")).toBe(1);
 * await counter.advance(60_000); // fires the alarm the object set, and its retries
 * ```
 */
export class TestObject<Env, I extends object> {
  /** The fake clock everything runs on. */
  readonly clock: FakeClock;
  /** The persistence adapter shared by every session and restart. */
  readonly persistence: PersistenceAdapter;
  readonly #class: TestObjectClass<Env, I>;
  readonly #options: ObjectContextOptions<Env>;
  #context: ObjectContext<Env, I>;
  #restarts = 0;
  readonly #dates: FakeDate | undefined;

  /** @internal Use {@link createTestObject}. */
  constructor(
    objectClass: TestObjectClass<Env, I>,
    options: ObjectContextOptions<Env>,
    context: ObjectContext<Env, I>,
    clock: FakeClock,
    persistence: PersistenceAdapter,
    dates?: FakeDate,
  ) {
    this.#dates = dates;
    this.#class = objectClass;
    this.#options = options;
    this.#context = context;
    this.clock = clock;
    this.persistence = persistence;
  }

  /** The object context (for anything the kit does not wrap). Changes on {@link TestObject.restart}. */
  get context(): ObjectContext<Env, I> {
    return this.#context;
  }

  // ---------------------------------------------------------------- events

  /**
   * Sends an HTTP request to the object's `fetch()` through the gates. A string is a URL (a path is
   * resolved against `http://object/`).
   */
  fetch(input: Request | string, init?: RequestInit): Promise<Response> {
    const request = typeof input === "string" ? new Request(new URL(input, "http://object/"), init) : input;
    return this.#inScope(() => this.#context.fetch(request));
  }

  /** Calls a method of the object (an RPC call) through the gates, typed after the class. */
  call<K extends MethodName<I>>(method: K, ...args: MethodArgs<I, K>): Promise<MethodResult<I, K>> {
    return this.#inScope(() => this.#context.call<MethodResult<I, K>>(method, ...args));
  }

  /** The live instance (built if needed), for assertions on in-memory state. */
  instance(): Promise<I> {
    return this.#inScope(() => this.#context.instance());
  }

  // ---------------------------------------------------------------- time and alarms

  /** The next planned alarm attempt (`runAtMs` is later than `scheduledTime` for a retry), or `null`. */
  nextAlarm(): PlannedAlarm | null {
    return this.#context.alarms.next();
  }

  /** Every alarm attempt so far in this context: what the handler got and whether it succeeded. */
  get alarmHistory(): ReadonlyArray<{ info: AlarmInvocationInfo; ok: boolean; atMs: number }> {
    return this.#context.alarms.history;
  }

  /**
   * Runs every alarm attempt that is due now (including an alarm that sets another due alarm), without
   * moving the clock. Returns how many attempts ran. A failing handler's retry lies in the future, so
   * it does not run here: {@link TestObject.advance} past it.
   */
  runDueAlarms(): Promise<number> {
    return this.#inScope(() => this.#runDueAlarms());
  }

  async #runDueAlarms(): Promise<number> {
    let runs = 0;
    await this.#context.alarms.idle();
    while (await this.#context.alarms.runDue()) {
      if (++runs >= MAX_ALARM_RUNS)
        throw new ActorStoreError(
          "ERR_INVALID_OPTION",
          `runDueAlarms() ran ${runs} alarm attempts without the alarm settling: does the handler keep setting an alarm in the past?`,
        );
    }
    return runs;
  }

  /**
   * Runs the planned alarm attempt now even if it is not due yet (the clock does not move).
   * Returns whether there was one.
   */
  fireAlarm(): Promise<boolean> {
    return this.#inScope(async () => {
      await this.#context.alarms.idle();
      return this.#context.alarms.runDue({ force: true });
    });
  }

  /**
   * Moves the fake clock forward by `ms`, stopping at each timer on the way (alarms, retries,
   * `blockConcurrencyWhile` timeouts) and waiting for what it starts to finish before going on, so
   * a handler's retry planned during the advance also fires if it falls inside it.
   */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(checkClockStep("advance(ms)", this.clock.now(), ms));
  }

  /**
   * Like {@link TestObject.advance}, to an absolute time in ms since the epoch (an earlier time leaves
   * the clock where it is).
   */
  async advanceTo(targetMs: number): Promise<void> {
    checkClockTime("advanceTo(targetMs)", "targetMs", targetMs);
    return this.#inScope(() => this.#advanceTo(targetMs));
  }

  async #advanceTo(targetMs: number): Promise<void> {
    for (;;) {
      await this.#context.alarms.idle();
      const next = this.clock.nextTimerAt();
      if (next === null || next > targetMs) break;
      await this.clock.advanceTo(next);
    }
    await this.clock.advanceTo(targetMs);
    await this.#context.alarms.idle();
  }

  // ---------------------------------------------------------------- storage

  /** The live session's storage, for direct reads and writes (writes bypass the object's code). */
  storage(): Promise<ObjectStorage> {
    return this.#context.storage();
  }

  /** Reads a key directly. */
  async get<T = unknown>(key: string): Promise<T | undefined> {
    return (await this.storage()).get<T>(key);
  }

  /** Lists entries directly. */
  async list<T = unknown>(options?: ListOptions): Promise<Map<string, T>> {
    return (await this.storage()).list<T>(options);
  }

  /** Runs SQL directly (`backend: "sqlite"`) and returns every row. */
  async sql<T extends Record<string, ArrayBuffer | string | number | null>>(
    query: string,
    ...bindings: unknown[]
  ): Promise<T[]> {
    return (await this.storage()).sql.exec<T>(query, ...bindings).toArray();
  }

  /**
   * Seeds key-value entries (any number; written 128 at a time in one batch) and waits until they are
   * durable, so they survive a {@link TestObject.crash}.
   */
  async seed(entries: Record<string, unknown>): Promise<void> {
    const storage = await this.storage();
    const all = Object.entries(entries);
    const puts: Array<Promise<void>> = [];
    // Issued in one turn, so they form one atomic batch; awaited together so a rejection surfaces.
    for (let i = 0; i < all.length; i += 128) puts.push(storage.put(Object.fromEntries(all.slice(i, i + 128))));
    await Promise.all(puts);
    await storage.sync();
  }

  /** Resolves when every write issued so far is durable. */
  async sync(): Promise<void> {
    await (await this.storage()).sync();
  }

  // ---------------------------------------------------------------- failures and lifecycle

  /**
   * Simulates a crash of the object (what `ctx.abort()` or an eviction does): writes not yet
   * committed are dropped, held responses are discarded, and the next event builds a fresh instance
   * over the last confirmed state (applying a pending bookmark restore).
   */
  crash(reason = "Simulated crash."): void {
    this.#context.abort(reason);
  }

  /**
   * Simulates a process restart: the object, its alarm scheduler and every cache are gone, writes
   * not yet committed are lost, and a new context opens over the same persistence. A pending alarm is
   * re-armed; one whose time passed fires once, as soon as the clock is advanced or
   * {@link TestObject.runDueAlarms} runs.
   */
  async restart(options: RestartOptions = {}): Promise<void> {
    checkOptions("restart()", options, { graceful: is.boolean() });
    const old = this.#context;
    old.alarms.stop();
    // close() commits what is pending; a crash-like restart drops it first.
    if (!options.graceful) old.abort("Simulated restart.");
    await old.close();
    this.#context = await ObjectContext.create(this.#class, this.#options);
    this.#restarts++;
  }

  /** How many times the object was reset in the current context (crashes, aborts, failed writes). */
  get resets(): number {
    return this.#context.resets;
  }

  /** How many times {@link TestObject.restart} ran. */
  get restarts(): number {
    return this.#restarts;
  }

  /** Resolves when every promise passed to `ctx.waitUntil()` has settled. */
  waitUntilSettled(): Promise<void> {
    return this.#context.waitUntilSettled();
  }

  /** Commits what is pending and closes the object (and gives `Date` back, with `fakeDate`). */
  async close(): Promise<void> {
    try {
      await this.#context.close();
    } finally {
      this.#dates?.release();
    }
  }

  /** Runs `fn` with `Date` following the fake clock when `fakeDate` is on. */
  #inScope<R>(fn: () => R): R {
    return this.#dates === undefined ? fn() : this.#dates.run(fn);
  }
}

/**
 * Creates an object from its class for a test: a fake clock, in-memory persistence that survives
 * simulated crashes and restarts, and no real timers.
 *
 * @example
 * ```ts
 * import { createTestObject } from "actorstore/testkit";
 *
 * const room = await createTestObject(ChatRoom, { env: { MAX_MESSAGES: 10 } });
 * await room.seed({ "message:1": { text: "hi" } });
 * const res = await room.fetch("/messages");
 * room.crash();                             // uncommitted writes are gone
 * expect(await room.get("message:1")).toEqual({ text: "hi" });
 * ```
 */
export async function createTestObject<Env = unknown, I extends object = object>(
  objectClass: TestObjectClass<Env, I>,
  options: CreateTestObjectOptions<Env> = {},
): Promise<TestObject<Env, I>> {
  if (typeof objectClass !== "function") {
    throw new TypeError(
      `createTestObject(): the first argument must be the object's class; got ${typeof objectClass}.`,
    );
  }
  checkOptions("createTestObject()", options, TEST_OBJECT_OPTIONS_SPEC);
  const clock = options.clock ?? new FakeClock();
  const persistence = options.persistence ?? createMemoryPersistence();
  const contextOptions: ObjectContextOptions<Env> = {
    id: options.id ?? "test-object",
    clock,
    random: options.random ?? (() => 0),
    storage: { ...options.storage, persistence },
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.blockConcurrencyTimeoutMs === undefined
      ? {}
      : { blockConcurrencyTimeoutMs: options.blockConcurrencyTimeoutMs }),
  };
  let dates: FakeDate | undefined;
  if (options.fakeDate === true) {
    const scope = await loadAsyncScope<Clock>();
    if (scope === undefined) {
      throw new ActorStoreError(
        "ERR_INVALID_OPTION",
        "createTestObject(): fakeDate needs async context tracking (Node's AsyncLocalStorage), which this runtime does not have. Leave fakeDate off and read time from the clock you pass to the object instead.",
      );
    }
    dates = useFakeDate(clock, scope);
  }
  try {
    const context = await ObjectContext.create(objectClass, contextOptions);
    return new TestObject(objectClass, contextOptions, context, clock, persistence, dates);
  } catch (e) {
    dates?.release();
    throw e;
  }
}
