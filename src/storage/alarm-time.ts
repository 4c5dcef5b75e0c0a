/**
 * Validating an alarm time the way the platform does: a number or a Date, milliseconds since the
 * epoch, fractions truncated, nothing at or before 0, nothing the platform's date type (signed
 * 64-bit nanoseconds since the epoch) cannot hold.
 */

/**
 * The latest time the platform's date type holds: 2^63 - 1 ns = 2262-04-11T23:47:16.854Z. Its
 * error message says "2189", but the check is on the nanosecond range; we follow the check.
 */
export const MAX_ALARM_TIME_MS = 9_223_372_036_854.775;

/** Converts `setAlarm`'s argument to integer ms, throwing the platform's TypeErrors. */
export function toAlarmTime(scheduledTime: unknown): number {
  let ms: number;
  if (scheduledTime instanceof Date) ms = scheduledTime.getTime();
  else if (typeof scheduledTime === "number") ms = scheduledTime;
  else {
    throw new TypeError("Failed to execute 'setAlarm' on 'DurableObjectStorage': parameter 1 is not of type 'date'.");
  }
  if (!Number.isFinite(ms)) throw new TypeError("The value cannot be converted because it is not a valid Date.");
  // The range checks come first, as the platform converts to its date type before comparing.
  if (ms > MAX_ALARM_TIME_MS) throw new TypeError("This API doesn't support dates after 2189.");
  if (ms < -MAX_ALARM_TIME_MS) throw new TypeError("This API doesn't support dates before 1687.");
  ms = Math.trunc(ms);
  if (ms <= 0) throw new TypeError("setAlarm() cannot be called with an alarm time <= 0");
  return ms;
}
