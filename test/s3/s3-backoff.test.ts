/**
 * The S3 adapter's retry backoff: its jitter comes from the injected `random` option (default
 * `Math.random`), and its waits are timers of the injected clock. A `fetch` that answers every
 * request 503 makes each attempt fail transiently; time is a FakeClock, so each wait is read off
 * the pending timer and passed by advancing the clock (no sleeps, no real store).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { s3Persistence } from "../../src/s3/index";
import type { S3PersistenceOptions } from "../../src/s3/options";
import { retryDelayMs } from "../../src/s3/s3-client";
import { FakeClock, type TimerHandle } from "../../src/util/clock";

afterEach(() => {
  vi.restoreAllMocks();
});

function options(clock: FakeClock, calls: { n: number }, extra: Partial<S3PersistenceOptions>): S3PersistenceOptions {
  return {
    endpoint: "http://127.0.0.1:9",
    bucket: "objects",
    prefix: "backoff/",
    credentials: { accessKeyId: "AKFAKE", secretAccessKey: "backoff-secret" },
    requestTimeoutMs: Number.POSITIVE_INFINITY,
    clock,
    fetch: async () => {
      calls.n++;
      return new Response("<Error><Code>SlowDown</Code></Error>", { status: 503 });
    },
    ...extra,
  };
}

/** A FakeClock that says when a timer is set: the request under test is then waiting on it. */
class WatchedClock extends FakeClock {
  #onTimer: (() => void) | undefined;
  override setTimer(callback: () => void, delayMs: number): TimerHandle {
    const handle = super.setTimer(callback, delayMs);
    this.#onTimer?.();
    return handle;
  }
  /** Resolves once a timer is pending (at once if one is). */
  timerSet(): Promise<void> {
    if (this.pendingTimers > 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#onTimer = () => {
        this.#onTimer = undefined;
        resolve();
      };
    });
  }
}

/** The waits between the attempts of one failing `load()`, in ms of `clock`, and the error it ended with. */
async function waitsOfFailingLoad(
  clock: WatchedClock,
  extra: Partial<S3PersistenceOptions>,
): Promise<{ waits: number[]; attempts: number; error: unknown }> {
  const calls = { n: 0 };
  const adapter = s3Persistence(options(clock, calls, extra));
  let settled = false;
  let error: unknown;
  const loading: Promise<void> = adapter.load().then(
    () => {
      settled = true;
    },
    (e: unknown) => {
      settled = true;
      error = e;
    },
  );
  const waits: number[] = [];
  for (;;) {
    await Promise.race([clock.timerSet(), loading]);
    if (settled) break;
    expect(clock.pendingTimers).toBe(1);
    const due = clock.nextTimerAt() as number;
    waits.push(due - clock.now());
    await clock.advanceTo(due);
  }
  await loading;
  return { waits, attempts: calls.n, error };
}

describe("s3: retry backoff", () => {
  it("draws its jitter from the injected random source: each wait is min(1000, 10·2ⁿ)·(0.5 + r/2)", async () => {
    const draws = [0, 0.5, 0.25, 0.75];
    const random = vi.fn(() => draws.shift() as number);
    const mathRandom = vi.spyOn(Math, "random");
    const { waits, attempts, error } = await waitsOfFailingLoad(new WatchedClock(0), { retries: 4, random });
    expect(waits).toEqual([10 * 0.5, 20 * 0.75, 40 * 0.625, 80 * 0.875]);
    expect(attempts).toBe(5);
    expect(random).toHaveBeenCalledTimes(4);
    expect(mathRandom).not.toHaveBeenCalled();
    expect(String(error)).toMatch(/HTTP 503 SlowDown/);
  });

  it("the same source gives the same waits; a different one gives different waits", async () => {
    const run = (r: number) => waitsOfFailingLoad(new WatchedClock(0), { retries: 3, random: () => r });
    const low = await run(0);
    const again = await run(0);
    const high = await run(0.999);
    expect(low.waits).toEqual([5, 10, 20]);
    expect(again.waits).toEqual(low.waits);
    expect(high.waits).toEqual([10 * 0.9995, 20 * 0.9995, 40 * 0.9995]);
  });

  it("defaults to Math.random", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.5);
    const { waits } = await waitsOfFailingLoad(new WatchedClock(0), { retries: 2 });
    expect(waits).toEqual([7.5, 15]);
  });

  it("caps the wait at 1 s and clamps a source that leaves [0, 1)", () => {
    expect(retryDelayMs(20, () => 0.999)).toBeCloseTo(999.5, 9);
    expect(retryDelayMs(0, () => 7)).toBe(10);
    expect(retryDelayMs(0, () => -3)).toBe(5);
    expect(retryDelayMs(0, () => Number.NaN)).toBe(5);
  });

  it("refuses a random option that is not a function", () => {
    const calls = { n: 0 };
    expect(() => s3Persistence(options(new WatchedClock(0), calls, { random: 0.5 as never }))).toThrow(
      /^s3Persistence\(\): option "random" must be a function returning a number in \[0, 1\)/,
    );
  });
});
