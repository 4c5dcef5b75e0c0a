/**
 * Proxies: the platform's serializer (V8's) refuses a `Proxy` anywhere in a value with
 * `DataCloneError`, even one whose target would clone. Plain JavaScript cannot tell a proxy from
 * its target, so the structured codec asks the runtime: Node's `util.types.isProxy`, reached with
 * `process.getBuiltinModule` (synchronous, and invisible to bundlers). Where the runtime offers no
 * such check (browsers), a proxy is encoded as its target would be (docs/values.md).
 */
import type * as NodeUtil from "node:util";
import type * as NodeV8 from "node:v8";

type BuiltinModules = { getBuiltinModule?: (id: string) => unknown };

const builtins = (globalThis as { process?: BuiltinModules }).process;
const nodeUtil = builtins?.getBuiltinModule?.("node:util") as typeof NodeUtil | undefined;

/** Whether `value` is a Proxy (always `false` where the runtime cannot tell). */
export const isProxy: (value: object) => boolean = nodeUtil?.types.isProxy ?? (() => false);

/**
 * How V8 names a proxy in its "could not be cloned" message (`#<Object>`, `[object Array]`, …):
 * asked of V8 itself where `node:v8` is at hand, so the text is the platform's.
 */
export function describeProxy(proxy: object): string {
  const v8 = builtins?.getBuiltinModule?.("node:v8") as typeof NodeV8 | undefined;
  if (v8 !== undefined) {
    try {
      const serializer = new v8.Serializer();
      serializer.writeValue(proxy);
    } catch (error) {
      const match = error instanceof Error ? / could not be cloned\.$/.exec(error.message) : null;
      if (match !== null) return (error as Error).message.slice(0, match.index);
    }
  }
  return Array.isArray(proxy) ? "[object Array]" : "#<Object>";
}
