/**
 * The alarm scheduler: one alarm per object, fired on the injected clock, delivered as an event
 * through the object context (so the input gate applies), retried with exponential backoff.
 *
 * The alarm itself lives in storage (committed with the other writes of its batch, rolled back with
 * transactions, persisted, covered by point-in-time recovery). The scheduler only follows the
 * committed value: the storage tells it after each commit that changes the alarm.
 */
import type { Clock, TimerHandle } from "../util/clock";
import { ALARM_RETRY_MAX_BACKOFF, backoffDelayMs } from "./backoff";

/** What an alarm handler receives, as on the platform. */
export interface AlarmInvocationInfo {
  /** Whether this attempt is a retry of a failed one. */
  readonly isRetry: boolean;
  /** How many retries came before this attempt (0 on the first). */
  readonly retryCount: number;
  /** The alarm's scheduled time in ms since the epoch. */
  readonly scheduledTime: number;
}

/** The storage view the scheduler needs (the live session's). */
export interface AlarmStorageView {
  /** The alarm as stored now, including uncommitted changes. */
  currentAlarm(): number | null;
  /** The committed alarm. */
  committedAlarm(): number | null;
  /** Clears the alarm (as one write). */
  clearAlarm(): Promise<void>;
  /**
   * Whether the handler that ran last called `setAlarm()` or `deleteAlarm()`. On the platform that
   * cancels the deletion a successful handler would make, so an alarm set to the very time being
   * handled runs again. Absent: the handler did not.
   */
  handlerSetAlarm?(): boolean;
}

/** Options of the scheduler. */
export interface AlarmSchedulerOptions {
  clock: Clock;
  /** Jitter source in [0, 1). */
  random: () => number;
  /** Delivers the alarm event; rejects when the handler failed (or the object reset). */
  deliver: (info: AlarmInvocationInfo) => Promise<void>;
  /**
   * Whether a failure `deliver` rejected with counts against the retry limit. The platform counts
   * what the object's code did (the handler threw, `abort()`, a failing `blockConcurrencyWhile`)
   * and not a reset its storage caused (a write that could not be confirmed): such an attempt is
   * retried with backoff without raising `retryCount`, so an outage of the storage never
   * abandons an alarm. Default: every failure counts.
   */
  countsAgainstLimit?: (error: unknown) => boolean;
  /** The storage of the live session (opening one if needed). */
  storage?: () => Promise<AlarmStorageView>;
  /** Whether timers are armed at all (a test may drive alarms by hand). */
  enabled?: boolean;
  /** Retries after the first attempt before the alarm is abandoned. Default 6, as on the platform. */
  maxRetries?: number;
  /** How many of the latest attempts {@link AlarmScheduler.history} keeps. Default {@link ALARM_HISTORY_LIMIT}. */
  historyLimit?: number;
}

/** How many attempts an alarm scheduler's history keeps by default (the oldest are dropped). */
export const ALARM_HISTORY_LIMIT = 100;

/** The next attempt the scheduler has planned. */
export interface PlannedAlarm {
  /** The alarm's scheduled time. */
  scheduledTime: number;
  /** When the next attempt runs (later than scheduledTime for a retry). */
  runAtMs: number;
  /** How many retries came before it. */
  retryCount: number;
}

/**
 * Schedules and runs the object's alarm.
 *
 * @example
 * ```ts
 * await context.alarms.runDue();      // run a due alarm now, in a test
 * context.alarms.next();              // { scheduledTime, runAtMs, retryCount } | null
 * ```
 */
export class AlarmScheduler {
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #deliver: (info: AlarmInvocationInfo) => Promise<void>;
  readonly #countsAgainstLimit: (error: unknown) => boolean;
  readonly #maxRetries: number;
  /**
   * The exponent of the next retry's delay, as the platform keeps it: it grows with every retry
   * (counted or not, up to {@link ALARM_RETRY_MAX_BACKOFF}) and starts again from 0 when a counted
   * failure follows one that was not counted. A new alarm starts it from 0.
   */
  #backoff = 0;
  #previousCounted = true;
  #storage: (() => Promise<AlarmStorageView>) | undefined;
  #enabled: boolean;
  #timer: TimerHandle | undefined;
  #planned: PlannedAlarm | null = null;
  #running: Promise<void> | null = null;
  #stopped = false;
  readonly #historyLimit: number;
  /**
   * The latest attempts that ran (at most `historyLimit`, oldest first), for tests and the demo. Bounded,
   * so that an object that lives for months with a recurring alarm does not grow without limit.
   */
  readonly history: Array<{ info: AlarmInvocationInfo; ok: boolean; atMs: number }> = [];

  constructor(options: AlarmSchedulerOptions) {
    this.#clock = options.clock;
    this.#random = options.random;
    this.#deliver = options.deliver;
    this.#countsAgainstLimit = options.countsAgainstLimit ?? (() => true);
    this.#storage = options.storage;
    this.#enabled = options.enabled ?? true;
    this.#maxRetries = options.maxRetries ?? 6;
    const limit = options.historyLimit ?? ALARM_HISTORY_LIMIT;
    if (!(Number.isInteger(limit) && limit >= 0)) throw new TypeError("historyLimit must be an integer >= 0.");
    this.#historyLimit = limit;
  }

  /** @internal Connects the scheduler to the storage of the live session. */
  connect(storage: () => Promise<AlarmStorageView>): void {
    this.#storage = storage;
  }

  /** The next planned attempt, or `null`. */
  next(): PlannedAlarm | null {
    return this.#planned === null ? null : { ...this.#planned };
  }

  /** Called when a commit changed the alarm (or at start-up with the stored alarm). */
  onAlarmCommitted(timeMs: number | null): void {
    if (this.#stopped) return;
    if (timeMs === null) {
      this.#planFresh(null);
      return;
    }
    // A retry of the same scheduled time keeps its backoff; anything else starts fresh.
    if (this.#planned !== null && this.#planned.scheduledTime === timeMs) return;
    this.#planFresh(timeMs);
  }

  /**
   * Runs the planned attempt now if it is due (`runAtMs <= now`); with `force`, even if it is not.
   * Resolves when that attempt has finished. Returns whether an attempt ran.
   */
  async runDue(options: { force?: boolean } = {}): Promise<boolean> {
    await this.#running;
    const planned = this.#planned;
    if (planned === null) return false;
    if (!options.force && planned.runAtMs > this.#clock.now()) return false;
    await this.#fire();
    return true;
  }

  /** Resolves when no attempt is running. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Disarms the timer; nothing fires until re-enabled. */
  stop(): void {
    this.#stopped = true;
    this.#clearTimer();
  }

  /** Turns automatic firing on or off (a test may prefer `runDue()`). */
  setEnabled(enabled: boolean): void {
    this.#enabled = enabled;
    if (!enabled) this.#clearTimer();
    else this.#plan(this.#planned);
  }

  /** Plans a first attempt of the alarm `timeMs` (none for `null`), with a fresh backoff. */
  #planFresh(timeMs: number | null): void {
    this.#backoff = 0;
    this.#previousCounted = true;
    this.#plan(timeMs === null ? null : { scheduledTime: timeMs, runAtMs: timeMs, retryCount: 0 });
  }

  #plan(planned: PlannedAlarm | null): void {
    this.#planned = planned;
    this.#clearTimer();
    if (planned === null || !this.#enabled || this.#stopped) return;
    // A time at or before now runs as soon as possible, asynchronously.
    const delay = Math.max(0, planned.runAtMs - this.#clock.now());
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      // A clock's timer that fires early (setTimeout fires a delay past 2^31 - 1 ms after 1 ms; a
      // wall clock set back) must not run the alarm before its time: wait again for what is left.
      if (this.#clock.now() < planned.runAtMs) {
        if (this.#planned === planned) this.#plan(planned);
        return;
      }
      void this.#fire();
    }, delay);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  #fire(): Promise<void> {
    if (this.#running) return this.#running;
    // #attempt handles its own failures; this catch only keeps a defect in it from becoming an
    // unhandled rejection (which ends a Node process) when a timer fired the attempt.
    this.#running = this.#attempt()
      .catch(() => {})
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }

  /**
   * Plans the next attempt of `planned` after a failure: counted (the object's code failed:
   * `retryCount` grows) or not (its storage failed: the same `retryCount` again), after the
   * platform's backoff. A failure when `retryCount` has reached the limit abandons the alarm,
   * counted or not, as on the platform.
   */
  #retryLater(planned: PlannedAlarm, counted: boolean): void {
    let retryCount = planned.retryCount;
    if (counted) {
      retryCount++;
      // A counted failure after uncounted ones starts the doubling again (the platform's rule:
      // the object's own error should not wait as long as a storage outage made the last one).
      if (!this.#previousCounted) this.#backoff = 0;
    }
    this.#previousCounted = counted;
    const runAtMs = this.#clock.now() + backoffDelayMs(this.#backoff, this.#random);
    this.#backoff = Math.min(this.#backoff + 1, ALARM_RETRY_MAX_BACKOFF);
    this.#plan({ scheduledTime: planned.scheduledTime, runAtMs, retryCount });
  }

  async #attempt(): Promise<void> {
    const planned = this.#planned;
    if (planned === null || this.#storage === undefined) return;
    this.#clearTimer();
    let before: AlarmStorageView;
    try {
      before = await this.#storage();
    } catch {
      // The storage cannot be opened (its persistence failed): not the object's failure. Try
      // again later, as the platform retries an alarm it could not run, without counting it.
      this.#retryLater(planned, false);
      return;
    }
    const stored = before.committedAlarm();
    if (stored !== planned.scheduledTime) {
      // Changed since planning (deleted, or moved): follow what is stored.
      this.#planFresh(stored);
      return;
    }
    const info: AlarmInvocationInfo = {
      scheduledTime: planned.scheduledTime,
      retryCount: planned.retryCount,
      isRetry: planned.retryCount > 0,
    };
    let ok = true;
    let counted = true;
    try {
      await this.#deliver(info);
    } catch (e) {
      ok = false;
      counted = this.#countsAgainstLimit(e);
    }
    this.history.push({ info, ok, atMs: this.#clock.now() });
    if (this.history.length > this.#historyLimit) this.history.splice(0, this.history.length - this.#historyLimit);
    try {
      await this.#settle(planned, ok, counted);
    } catch {
      // The storage failed while the alarm was being cleared (after a success, or when it was
      // abandoned): the alarm is still stored, so it runs again later, uncounted. On the
      // platform the deletion commits with the handler's writes, and their failure retries the
      // handler the same way.
      if (this.#planned === null || this.#planned === planned) this.#retryLater(planned, false);
    }
  }

  /** After an attempt: clears, replans or retries the alarm (may reject if the storage fails). */
  async #settle(planned: PlannedAlarm, ok: boolean, counted: boolean): Promise<void> {
    const after = await this.#storage?.();
    if (after === undefined) return;
    const current = after.currentAlarm();
    if (ok) {
      // Success clears the alarm unless the handler (or anyone) set a new one, or set it again.
      if (current === planned.scheduledTime && !after.handlerSetAlarm?.()) {
        this.#planned = null;
        await after.clearAlarm();
      } else {
        this.#planFresh(current);
      }
      return;
    }
    if (current !== planned.scheduledTime) {
      // deleteAlarm() (or a new setAlarm) during the failing handler cancels the retry.
      this.#planFresh(current);
      return;
    }
    if (planned.retryCount >= this.#maxRetries) {
      // Out of retries: the alarm is abandoned and cleared.
      this.#planned = null;
      await after.clearAlarm();
      return;
    }
    this.#retryLater(planned, counted);
  }
}
