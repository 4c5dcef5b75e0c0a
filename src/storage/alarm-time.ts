/**
 * Validating an alarm time the way the platform does: a number or a Date, milliseconds since the
 * epoch, fractions truncated, nothing at or before 0, nothing the platform's date type cannot hold.
 */

/** The latest alarm time the platform accepts (its date type ends in 2189; we keep it exact). */
export const MAX_ALARM_TIME_MS = Date.UTC(2189, 11, 31, 23, 59, 59, 999);

/** Converts `setAlarm`'s argument to integer ms, throwing the platform's TypeErrors. */
export function toAlarmTime(scheduledTime: unknown): number {
  let ms: number;
  if (scheduledTime instanceof Date) ms = scheduledTime.getTime();
  else if (typeof scheduledTime === "number") ms = scheduledTime;
  else {
    throw new TypeError("Failed to execute 'setAlarm' on 'DurableObjectStorage': parameter 1 is not of type 'date'.");
  }
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) {
    throw new TypeError("The value cannot be converted because it is not a valid Date.");
  }
  ms = Math.trunc(ms);
  if (ms <= 0) throw new TypeError("setAlarm() cannot be called with an alarm time <= 0");
  if (ms > MAX_ALARM_TIME_MS) {
    throw new TypeError(
      `setAlarm() cannot be called with an alarm time after ${new Date(MAX_ALARM_TIME_MS).toISOString()}; the platform's date type ends in 2189.`,
    );
  }
  return ms;
}
