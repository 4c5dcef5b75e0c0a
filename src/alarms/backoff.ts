/**
 * Retry delays for failed alarm handlers, as the platform computes them: 2 s doubled per retry
 * (capped at 2 s << 9), plus uniform jitter of up to 25 % of the delay.
 */

/** First retry delay. */
export const ALARM_RETRY_START_MS = 2_000;
/** Largest exponent of the doubling. */
export const ALARM_RETRY_MAX_BACKOFF = 9;

/**
 * The delay before retry number `retryIndex + 1` (0 → about 2 s, 1 → about 4 s, 2 → about 8 s).
 * `random` returns a number in [0, 1) (inject a fixed one in tests).
 */
export function backoffDelayMs(retryIndex: number, random: () => number): number {
  const base = ALARM_RETRY_START_MS * 2 ** Math.min(Math.max(0, retryIndex), ALARM_RETRY_MAX_BACKOFF);
  const r = Math.min(Math.max(random(), 0), 0.999_999);
  return Math.floor(base + base * 0.25 * r);
}
