/**
 * Validating an alarm time the way the platform does: a number or a Date, milliseconds since the
 * epoch, fractions truncated, nothing at or before 0, nothing the platform's date type (signed
 * 64-bit nanoseconds since the epoch) cannot hold. `getBookmarkForTime` converts its time the same
 * way ({@link toPlatformDate}).
 */
import { type AsyncApiInterface, argumentTypeError } from "./argument-types";

/**
 * The platform's date type holds signed 64-bit nanoseconds since the epoch (up to
 * 2262-04-11T23:47:16.854Z). It converts ms to ns in floating point and refuses what does not fit,
 * so `9223372036854.775` (whose product rounds to 2^63) is refused. Its error message says "2189",
 * but the check is on the nanosecond range; we follow the check.
 */
const NS_RANGE = 2 ** 63;

/**
 * The time of a real Date, from any realm (a vm context, an iframe), as the platform's binding
 * recognises one (V8's IsDate); `undefined` for anything else, including an object made from
 * `Date.prototype` or a Proxy, whose `getTime()` throws.
 */
function dateValue(value: unknown): number | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  try {
    return Date.prototype.getTime.call(value);
  } catch {
    return undefined;
  }
}

/**
 * Converts `setAlarm`'s argument to integer ms as the platform converts its parameter 1, throwing
 * its TypeErrors (which name the interface whose `setAlarm` was called: the storage's or a
 * transaction's). The check that the time is positive comes later, see {@link checkAlarmTime}.
 */
export function toAlarmTime(scheduledTime: unknown, on: AsyncApiInterface = "DurableObjectStorage"): number {
  return toPlatformDate(scheduledTime, "setAlarm", on);
}

/**
 * Converts parameter 1 of `method` (a number or a Date, as the platform's date type) to integer ms,
 * throwing the platform's TypeErrors: not a number or a Date, not finite, or outside the signed
 * 64-bit nanoseconds the type holds. `setAlarm` and `getBookmarkForTime` take their time this way.
 *
 * @example
 * ```ts
 * toPlatformDate(new Date("2026-01-01"), "getBookmarkForTime"); // 1767225600000
 * toPlatformDate("2026-01-01", "getBookmarkForTime"); // TypeError: … parameter 1 is not of type 'date'.
 * ```
 */
export function toPlatformDate(value: unknown, method: string, on: AsyncApiInterface = "DurableObjectStorage"): number {
  return convertPlatformDate(value, () => argumentTypeError(method, on, 1, "date"));
}

/**
 * The conversion of {@link toPlatformDate}, with the TypeError for a value that is neither a number
 * nor a Date made by `notADate` (a parameter and a dictionary member word it differently).
 */
export function convertPlatformDate(value: unknown, notADate: () => TypeError): number {
  const ms = typeof value === "number" ? value : dateValue(value);
  if (ms === undefined) throw notADate();
  if (!Number.isFinite(ms)) throw new TypeError("The value cannot be converted because it is not a valid Date.");
  // The range checks come first, as the platform converts to its date type before comparing.
  const ns = ms * 1e6;
  if (ns >= NS_RANGE) throw new TypeError("This API doesn't support dates after 2189.");
  if (ns < -NS_RANGE) throw new TypeError("This API doesn't support dates before 1687.");
  return Math.trunc(ms);
}

/**
 * `setAlarm()`'s own check, made after all its arguments are converted (a bad options argument is
 * reported first, as on the platform).
 */
export function checkAlarmTime(ms: number): void {
  if (ms <= 0) throw new TypeError("setAlarm() cannot be called with an alarm time <= 0");
}
