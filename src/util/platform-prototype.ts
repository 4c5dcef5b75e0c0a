/**
 * Prototypes shaped like the platform's: what `Object.prototype.toString()`, `String(x)` and a
 * `for … in` loop show of an object's API.
 * @internal
 * @module
 */

/**
 * Gives a class's prototype the platform's shape for its counterpart: the platform's class name as
 * a `Symbol.toStringTag` data property (`Object.prototype.toString.call(ctx.storage)` is
 * `"[object DurableObjectStorage]"` in both), and every method and getter enumerable, as the
 * platform's bindings define them. Called from the class's static block, so a bundler cannot drop
 * it apart from the class. Members named in `hidden` stay non-enumerable (a getter that throws,
 * which a loop reading every member it visits would otherwise trip over).
 */
export function likePlatformPrototype(prototype: object, tag: string, hidden: readonly string[] = []): void {
  for (const name of Object.getOwnPropertyNames(prototype)) {
    if (name !== "constructor" && !hidden.includes(name)) Object.defineProperty(prototype, name, { enumerable: true });
  }
  Object.defineProperty(prototype, Symbol.toStringTag, { value: tag, writable: true, configurable: true });
}
