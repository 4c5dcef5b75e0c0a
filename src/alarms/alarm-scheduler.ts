/**
 * The alarm scheduler: one alarm per object, fired on the injected clock, delivered as an event
 * through the object context (so the input gate applies), retried with exponential backoff.
 *
 * The alarm itself lives in storage (committed with the other writes of its batch, rolled back with
 * transactions, persisted, covered by point-in-time recovery). The scheduler only follows the
 * committed value: the storage tells it after each commit that changes the alarm.
 */
import type { Clock, TimerHandle } from "../util/clock";
import { backoffDelayMs } from "./backoff";

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
  readonly #maxRetries: number;
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
      this.#plan(null);
      return;
    }
    // A retry of the same scheduled time keeps its backoff; anything else starts fresh.
    if (this.#planned !== null && this.#planned.scheduledTime === timeMs) return;
    this.#plan({ scheduledTime: timeMs, runAtMs: timeMs, retryCount: 0 });
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
    this.#running = this.#attempt().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #attempt(): Promise<void> {
    const planned = this.#planned;
    if (planned === null || this.#storage === undefined) return;
    this.#clearTimer();
    const before = await this.#storage();
    const stored = before.committedAlarm();
    if (stored !== planned.scheduledTime) {
      // Changed since planning (deleted, or moved): follow what is stored.
      this.#plan(stored === null ? null : { scheduledTime: stored, runAtMs: stored, retryCount: 0 });
      return;
    }
    const info: AlarmInvocationInfo = {
      scheduledTime: planned.scheduledTime,
      retryCount: planned.retryCount,
      isRetry: planned.retryCount > 0,
    };
    let ok = true;
    try {
      await this.#deliver(info);
    } catch {
      ok = false;
    }
    this.history.push({ info, ok, atMs: this.#clock.now() });
    if (this.history.length > this.#historyLimit) this.history.splice(0, this.history.length - this.#historyLimit);
    const after = await this.#storage();
    const current = after.currentAlarm();
    if (ok) {
      // Success clears the alarm unless the handler (or anyone) set a new one, or set it again.
      if (current === planned.scheduledTime && !after.handlerSetAlarm?.()) {
        this.#planned = null;
        await after.clearAlarm();
      } else {
        this.#plan(current === null ? null : { scheduledTime: current, runAtMs: current, retryCount: 0 });
      }
      return;
    }
    if (current !== planned.scheduledTime) {
      // deleteAlarm() (or a new setAlarm) during the failing handler cancels the retry.
      this.#plan(current === null ? null : { scheduledTime: current, runAtMs: current, retryCount: 0 });
      return;
    }
    if (planned.retryCount >= this.#maxRetries) {
      // Out of retries: the alarm is abandoned and cleared.
      this.#planned = null;
      await after.clearAlarm();
      return;
    }
    const retryCount = planned.retryCount + 1;
    const runAtMs = this.#clock.now() + backoffDelayMs(planned.retryCount, this.#random);
    this.#plan({ scheduledTime: planned.scheduledTime, runAtMs, retryCount });
  }
}
