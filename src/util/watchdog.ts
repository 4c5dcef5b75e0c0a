/**
 * A countdown that aborts one request: armed (and re-armed) for how long the request may go without
 * progress, it aborts the request's `AbortSignal` when it runs out, and {@link Watchdog.race} stops
 * waiting then even for a `fetch` that ignores the signal. Timers come from the injected clock.
 */
import type { Clock, TimerHandle } from "./clock";

/** A timer on the injected clock that aborts an attempt when it makes no progress in time. */
export class Watchdog {
  readonly controller = new AbortController();
  readonly #clock: Clock;
  #timer: TimerHandle | undefined;
  #fired = false;
  #onFire: (() => void) | undefined;
  /** Resolves (never rejects) when the watchdog fires. */
  readonly fired: Promise<void>;

  constructor(clock: Clock) {
    this.#clock = clock;
    this.fired = new Promise<void>((resolve) => {
      this.#onFire = resolve;
    });
  }

  get hasFired(): boolean {
    return this.#fired;
  }

  /** (Re)starts the countdown: `ms` from now (`Infinity`: none). */
  arm(ms: number): void {
    this.stop();
    if (this.#fired || ms === Number.POSITIVE_INFINITY) return;
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      this.#fired = true;
      this.controller.abort();
      this.#onFire?.();
    }, ms);
  }

  stop(): void {
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  /** `p`, or `undefined` once the watchdog fires first (`p` may then never settle: a fetch that ignores the signal). */
  race<T>(p: Promise<T>): Promise<T | undefined> {
    return Promise.race([p, this.fired.then(() => undefined)]);
  }
}
