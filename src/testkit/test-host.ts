/**
 * Many objects under test, the way a platform test sees them: `env.COUNTER.get(env.COUNTER.idFromName("a"))`.
 * An {@link ObjectHost} on a fake clock with in-memory persistence per object.
 */

import type { HostEnv, HostedObjectInfo, HostStats, NamespaceClasses } from "../host/host-types";
import { ObjectHost } from "../host/object-host";
import { memoryPerObject, type PersistenceFactory } from "../host/options";
import type { ObjectStorageOptions } from "../storage/object-storage";
import { checkClockStep, FakeClock } from "../util/clock";

/** Options of {@link createTestHost}. */
export interface CreateTestHostOptions<E> {
  /** More bindings for `env`. */
  env?: E;
  /** The clock. Default: a new `FakeClock` at 2026-01-01T00:00:00Z. */
  clock?: FakeClock;
  /** Per-object persistence. Default: in memory, kept across evictions. */
  persistence?: PersistenceFactory;
  /** Idle time before eviction, on the fake clock. Default 10,000 ms, as on the platform. */
  idleTimeoutMs?: number;
  /** Storage options for every object. */
  storage?: Omit<ObjectStorageOptions, "persistence" | "directory" | "clock">;
  /** Jitter source for alarm retries. Default `() => 0`. */
  random?: () => number;
}

/**
 * A host of objects under test. Created by {@link createTestHost}.
 *
 * @example
 * ```ts
 * const { env, advance } = createTestHost({ COUNTER: Counter });
 * const stub = env.COUNTER.get(env.COUNTER.idFromName("a"));
 * expect(await stub.increment(2)).toBe(2);
 * await advance(10_000); // idle: the object is evicted; its next call starts it again
 * ```
 */
export class TestHost<N extends NamespaceClasses, E = object> {
  /** The host. */
  readonly host: ObjectHost<N, E>;
  /** The fake clock everything runs on. */
  readonly clock: FakeClock;

  /** @internal Use {@link createTestHost}. */
  constructor(host: ObjectHost<N, E>, clock: FakeClock) {
    this.host = host;
    this.clock = clock;
    // Bound, so that `const { env, advance, close } = createTestHost(...)` works.
    this.advance = this.advance.bind(this);
    this.close = this.close.bind(this);
  }

  /** The env: one namespace per class, plus the given bindings. */
  get env(): HostEnv<N, E> {
    return this.host.env;
  }

  /**
   * Moves the fake clock forward by `ms`, stopping at each timer on the way (alarms, evictions,
   * wake-ups) and letting what it starts finish before going on.
   */
  async advance(ms: number): Promise<void> {
    const target = checkClockStep("advance(ms)", this.clock.now(), ms);
    for (;;) {
      await this.host.settled();
      const next = this.clock.nextTimerAt();
      if (next === null || next > target) break;
      await this.clock.advanceTo(next);
    }
    await this.clock.advanceTo(target);
    await this.host.settled();
  }

  /** The host's counters: live and sleeping objects, starts, evictions, alarm wake-ups. */
  stats(): HostStats {
    return this.host.stats();
  }

  /** Every object the host knows now, with its state (`active`, `sleeping` …) and next alarm. */
  objects(): HostedObjectInfo[] {
    return this.host.objects();
  }

  /** Closes every object. */
  close(): Promise<void> {
    return this.host.close();
  }
}

/**
 * Creates a host for a test: a fake clock, in-memory persistence per object, the platform's idle
 * eviction on the fake clock.
 *
 * @example
 * ```ts
 * import { createTestHost } from "actorstore/testkit";
 *
 * const { env } = createTestHost({ COUNTER: Counter });
 * const counter = env.COUNTER.getByName("a");
 * await counter.increment(1);
 * ```
 */
export function createTestHost<N extends NamespaceClasses, E = object>(
  namespaces: N,
  options: CreateTestHostOptions<E> = {},
): TestHost<N, E> {
  const clock = options.clock ?? new FakeClock();
  const host = new ObjectHost<N, E>({
    namespaces,
    clock,
    persistence: options.persistence ?? memoryPerObject(),
    random: options.random ?? (() => 0),
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
    ...(options.storage === undefined ? {} : { storage: options.storage }),
  });
  return new TestHost(host, clock);
}
