/**
 * Telling the engine's "out of stack" error from other errors: V8 and JavaScriptCore throw a
 * RangeError `Maximum call stack size exceeded`, SpiderMonkey an InternalError `too much recursion`.
 */

/** Whether `error` is the engine's stack overflow (which says nothing about the data being read). */
export function isStackOverflow(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof RangeError) return /^Maximum call stack size exceeded\.?$/.test(error.message);
  return error.name === "InternalError" && error.message === "too much recursion";
}
