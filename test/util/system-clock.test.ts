/**
 * The system clock's timers, over vitest's fake timers (which, like Node, fire a setTimeout of more
 * than 2^31 - 1 ms after 1 ms).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../../src/util/clock";

const DAY = 86_400_000;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("systemClock", () => {
  it("a timer 30 days ahead (past setTimeout's 2^31 - 1 ms) fires after 30 days, not at once", () => {
    const fired = vi.fn();
    systemClock.setTimer(fired, 30 * DAY);
    vi.advanceTimersByTime(1_000);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(30 * DAY - 1_001);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(100 * DAY);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it("a long timer cleared before it fires, in its first step or a later one, never fires", () => {
    const early = vi.fn();
    const late = vi.fn();
    const a = systemClock.setTimer(early, 60 * DAY);
    const b = systemClock.setTimer(late, 60 * DAY);
    systemClock.clearTimer(a);
    vi.advanceTimersByTime(40 * DAY);
    systemClock.clearTimer(b);
    vi.advanceTimersByTime(100 * DAY);
    expect(early).not.toHaveBeenCalled();
    expect(late).not.toHaveBeenCalled();
  });

  it("short timers are unchanged: they fire after their delay", () => {
    const fired = vi.fn();
    systemClock.setTimer(fired, 500);
    vi.advanceTimersByTime(499);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
  });
});
