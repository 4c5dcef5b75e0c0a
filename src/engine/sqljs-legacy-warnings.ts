/**
 * sql.js prints a `console.warn` line each time one of its legacy extension functions runs ("legacy
 * function …() is deprecated"). Replay gives a connection those functions for sessions logged with
 * them (sqljs.ts, `registerLegacyFunctions`), and would print a line per replayed row; this filter
 * drops those lines, and only those, while such a connection is open. It needs no sql.js import,
 * so it lives beside the engine's other workarounds of that kind.
 *
 * @packageDocumentation
 */

/** The start of the warning sql.js prints each time a legacy extension function runs. */
const LEGACY_WARNING = "sql.js: legacy function ";

/** How many {@link quietLegacyWarnings} holds are open, the `console.warn` they installed and the one it wraps. */
let quietHolds = 0;
let quietWarn: typeof console.warn | undefined;
let loudWarn: typeof console.warn | undefined;

/**
 * Makes `console.warn` drop sql.js's "legacy function …() is deprecated" lines (one per call of
 * such a function: a query over 10,000 rows printed 10,000) until the returned release is called;
 * every other warning goes through. Holds nest: the last release puts `console.warn` back (unless
 * something else replaced it meanwhile, which is then left alone; a hold taken after such a
 * replacement wraps the new one).
 */
export function quietLegacyWarnings(): () => void {
  quietHolds++;
  if (console.warn !== quietWarn) {
    const warn = console.warn;
    loudWarn = warn;
    quietWarn = function quiet(...args: unknown[]) {
      if (typeof args[0] === "string" && args[0].startsWith(LEGACY_WARNING)) return;
      warn.apply(console, args);
    };
    console.warn = quietWarn;
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--quietHolds === 0) {
      if (console.warn === quietWarn && loudWarn !== undefined) console.warn = loudWarn;
      loudWarn = undefined;
      quietWarn = undefined;
    }
  };
}
