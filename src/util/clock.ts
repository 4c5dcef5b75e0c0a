/**
 * Injected time. Every timer and every "now" in actorstore goes through a {@link Clock}, so alarms,
 * retention, backoff and timeouts can be tested with {@link FakeClock} instead of sleeps.
 *
 * This is the only module that reads the host's `Date.now` and calls `setTimeout` and
 * `setImmediate` for actorstore's own time. Two other modules touch `Date`, and neither reads the
 * host's time for actorstore: the sql.js adapter (engine/sqljs.ts) replaces `Date.now` for the
 * length of one synchronous SQLite call, because sql.js reads SQLite's 'now' through it (that pins
 * SQL's time to the clock's value, logged with every write for replay); and the test kit's opt-in
 * fake `Date` (testkit/date-clock.ts) replaces the global `Date` so that an object's own code reads
 * its test clock. scripts/check-layers.mjs keeps it that way: any other use of `Date.now`,
 * `setTimeout` or `setInterval` in src/ fails the lint.
 */

/** An opaque handle for a timer created by {@link Clock.setTimer}. */
export interface TimerHandle {
  readonly __timer: unique symbol;
}

/** Options of {@link Clock.setTimer}. */
export interface TimerOptions {
  /**
   * Keep a Node process alive until the timer fires. Off by default: an alarm, a retention sweep or
   * a timeout must not hold a script open. On for a wait that a caller is awaiting, such as the
   * pause between two attempts of a request: without it, a script whose only pending work is that
   * retry exits in the middle of it (code 13, "unsettled top-level await") instead of getting the
   * request's answer or error. A clock without real timers ignores it.
   */
  readonly keepAlive?: boolean;
}

/** The source of time and timers. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `callback` once after `delayMs` milliseconds (clamped at 0). */
  setTimer(callback: () => void, delayMs: number, options?: TimerOptions): TimerHandle;
  /** Cancels a timer; cancelling a fired or cancelled timer does nothing. */
  clearTimer(handle: TimerHandle): void;
}

/**
 * The longest delay `setTimeout` takes: Node and browsers fire a timer with a longer one after
 * 1 ms instead, so {@link systemClock} waits longer in steps of at most this.
 */
const MAX_TIMEOUT_MS = 0x7fffffff;

/** The host's wall clock and timers. A delay past 2^31 - 1 ms (24.8 days) is waited in steps. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(callback, delayMs, options) {
    const handle: { timeout?: ReturnType<typeof setTimeout> } = {};
    const wait = (ms: number) => {
      const step = Math.min(ms, MAX_TIMEOUT_MS);
      const t = setTimeout(() => (ms > step ? wait(ms - step) : callback()), step);
      // Never keep a Node process alive just for an alarm or a retention sweep; only for a wait
      // that a caller awaits (keepAlive).
      if (options?.keepAlive !== true) (t as { unref?: () => void }).unref?.();
      handle.timeout = t;
    };
    wait(Math.max(0, delayMs));
    return handle as unknown as TimerHandle;
  },
  clearTimer(handle) {
    clearTimeout((handle as unknown as { timeout?: ReturnType<typeof setTimeout> }).timeout);
  },
};

/** The largest distance from the epoch, in ms, that a `Date` can hold. */
const MAX_DATE_MS = 8.64e15;

/**
 * Checks a time a fake clock is set or moved to: a finite number of ms that a `Date` can hold.
 * (NaN would fire every pending timer on the way and leave "now" NaN; Infinity would fire timers
 * that rearm themselves forever.) Returns `timeMs`.
 */
export function checkClockTime(where: string, name: string, timeMs: number): number {
  if (typeof timeMs !== "number" || !Number.isFinite(timeMs) || Math.abs(timeMs) > MAX_DATE_MS)
    throw new RangeError(
      `${where}: ${name} must be a time a Date can hold, a finite number of ms within ±${MAX_DATE_MS} of the epoch (got ${String(timeMs)}).`,
    );
  return timeMs;
}

/** Checks a step a fake clock moves forward by (finite, 0 or more) and returns the time it ends at. */
export function checkClockStep(where: string, nowMs: number, ms: number): number {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0)
    throw new RangeError(
      `${where}: ms must be a finite number of milliseconds, 0 or more (got ${String(ms)}); to go back in time use set().`,
    );
  return checkClockTime(where, "the time it moves to", nowMs + ms);
}

interface FakeTimer {
  id: number;
  atMs: number;
  callback: () => void;
}

/**
 * A clock that only moves when told to. Timers fire in time order (ties in creation order) while
 * {@link FakeClock.advance} moves time forward.
 *
 * @example
 * ```ts
 * const clock = new FakeClock(Date.UTC(2026, 0, 1));
 * const storage = await ObjectStorage.open({ clock });
 * await clock.advance(60_000); // fires every timer due in the next minute
 * ```
 */
export class FakeClock implements Clock {
  #nowMs: number;
  #nextId = 1;
  #timers: FakeTimer[] = [];

  constructor(startMs = 1_767_225_600_000 /* 2026-01-01T00:00:00Z */) {
    this.#nowMs = checkClockTime("new FakeClock(startMs)", "startMs", startMs);
  }

  now(): number {
    return this.#nowMs;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    const timer: FakeTimer = { id: this.#nextId++, atMs: this.#nowMs + Math.max(0, delayMs), callback };
    this.#timers.push(timer);
    return timer.id as unknown as TimerHandle;
  }

  clearTimer(handle: TimerHandle): void {
    const id = handle as unknown as number;
    this.#timers = this.#timers.filter((t) => t.id !== id);
  }

  /** The time of the earliest pending timer, or `null`. */
  nextTimerAt(): number | null {
    let min: number | null = null;
    for (const t of this.#timers) if (min === null || t.atMs < min) min = t.atMs;
    return min;
  }

  /** How many timers are pending. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /**
   * Moves time forward by `ms`, firing each due timer at its own time, and lets the work those
   * timers start settle (macrotask turns) before moving on. `ms` must be finite and not negative
   * (a `RangeError` otherwise).
   */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(checkClockStep("FakeClock.advance(ms)", this.#nowMs, ms));
  }

  /**
   * Moves time forward to `targetMs` (never backwards: an earlier time leaves it unchanged), firing
   * due timers in order. `targetMs` must be a time a `Date` can hold (a `RangeError` otherwise).
   */
  async advanceTo(targetMs: number): Promise<void> {
    checkClockTime("FakeClock.advanceTo(targetMs)", "targetMs", targetMs);
    await settle();
    for (;;) {
      const due = this.#earliestDue(targetMs);
      if (due === undefined) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#nowMs = Math.max(this.#nowMs, due.atMs);
      due.callback();
      await settle();
    }
    this.#nowMs = Math.max(this.#nowMs, targetMs);
    await settle();
  }

  /** Sets the time without firing timers (for example to simulate a machine that was down). */
  set(ms: number): void {
    this.#nowMs = checkClockTime("FakeClock.set(ms)", "ms", ms);
  }

  #earliestDue(targetMs: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.#timers) {
      if (t.atMs <= targetMs && (best === undefined || t.atMs < best.atMs || (t.atMs === best.atMs && t.id < best.id)))
        best = t;
    }
    return best;
  }
}

type MacrotaskScheduler = (callback: () => void) => void;

const scheduleMacrotaskImpl: MacrotaskScheduler = (() => {
  const g = globalThis as { setImmediate?: (cb: () => void) => unknown };
  if (typeof g.setImmediate === "function") {
    const setImmediateFn = g.setImmediate;
    return (cb: () => void) => {
      setImmediateFn(cb);
    };
  }
  if (typeof MessageChannel === "function") {
    // Browsers: a MessageChannel message is a macrotask without setTimeout's 4 ms clamping.
    const channel = new MessageChannel();
    const queue: Array<() => void> = [];
    channel.port1.onmessage = () => queue.shift()?.();
    return (cb: () => void) => {
      queue.push(cb);
      channel.port2.postMessage(null);
    };
  }
  return (cb: () => void) => {
    setTimeout(cb, 0);
  };
})();

/**
 * Runs `callback` on a later turn of the event loop (a macrotask, after all pending microtasks).
 * This is task scheduling, not time: it is what makes writes issued in one turn one atomic batch.
 */
export function scheduleMacrotask(callback: () => void): void {
  scheduleMacrotaskImpl(callback);
}

/**
 * Runs `callback` once, at the end of the current turn: on the next macrotask, and in any case
 * before any timer created after this call fires. The storage core commits batches with it.
 *
 * Why both a macrotask and a 0 ms timer: Node does not order `setImmediate` against an expired
 * `setTimeout(…, 0)`, but it fires timers of equal delay in creation order. A batch's commit must
 * precede the timers the object's code sets after writing (the platform commits before delivering
 * any later event), so we race the fast macrotask with a timer created before the user's.
 */
export function scheduleTurnEnd(callback: () => void): void {
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    callback();
  };
  const timer = setTimeout(run, 0);
  (timer as { unref?: () => void }).unref?.();
  scheduleMacrotaskImpl(run);
}

/** Resolves on a later macrotask turn. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => scheduleMacrotask(resolve));
}

/** Lets queued macrotasks and microtasks run a few turns (used by {@link FakeClock}). */
async function settle(turns = 4): Promise<void> {
  for (let i = 0; i < turns; i++) await nextTurn();
}
