/**
 * The test kit's opt-in fake `Date` (`createTestObject(C, { fakeDate: true })`): inside the object's
 * code, `Date.now()` and `new Date()` read the test object's fake clock, so an object that does
 * `setAlarm(Date.now() + 1000)` behaves as expected under `advance()`.
 *
 * How: while at least one such test object is open, the global `Date` is a stand-in that asks an
 * async-context scope (Node's AsyncLocalStorage) for the clock of the object whose code is running;
 * outside every scope (the test's own code, other objects, vitest) it is the real clock. Dates it
 * makes are ordinary `Date` objects (`instanceof Date`, same prototype). Like `util/clock.ts`, this is
 * a clock module: the only other place that reads the host's time.
 */
import type { Clock } from "../util/clock";

interface ScopeLike {
  run<R>(clock: Clock, fn: () => R): R;
  get(): Clock | undefined;
}

const RealDate = globalThis.Date;
let installed = 0;
let scope: ScopeLike | undefined;

function nowMs(): number {
  const clock = scope?.get();
  return clock === undefined ? RealDate.now() : clock.now();
}

/** The stand-in: `Date()`, `new Date()` and `Date.now()` follow the scope's clock. */
function ScopedDate(this: unknown, ...args: unknown[]): unknown {
  if (new.target === undefined) return new RealDate(nowMs()).toString();
  return Reflect.construct(RealDate, args.length === 0 ? [nowMs()] : args, new.target);
}
Object.setPrototypeOf(ScopedDate, RealDate);
ScopedDate.prototype = RealDate.prototype;
Object.defineProperty(ScopedDate, "name", { value: "Date" });
(ScopedDate as unknown as { now: () => number }).now = nowMs;

/**
 * Installs the stand-in (reference-counted) and returns a function that runs code with `clock` as
 * the time source, and a release function for when the test object closes.
 */
export function useFakeDate(clock: Clock, asyncScope: ScopeLike): { run<R>(fn: () => R): R; release(): void } {
  scope ??= asyncScope;
  if (installed++ === 0) globalThis.Date = ScopedDate as unknown as DateConstructor;
  let released = false;
  return {
    run: (fn) => (scope as ScopeLike).run(clock, fn),
    release() {
      if (released) return;
      released = true;
      if (--installed === 0) globalThis.Date = RealDate;
    },
  };
}
