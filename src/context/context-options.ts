/**
 * What {@link ObjectContext.create} accepts, as a spec for the options validator (the test kit
 * builds its own from the same pieces).
 */
import { checkStorageOptions, isClock, STORAGE_OPTIONS_SPEC } from "../storage/open-options";
import { checkOptions, is, type OptionCheck, type OptionSpec } from "../util/options";
import type { ObjectContextOptions } from "./object-context";
import { ObjectId } from "./object-id";

/** `id`: an `ObjectId` or a name to derive one from. */
export const isObjectIdOrName: OptionCheck = (v) =>
  v instanceof ObjectId || typeof v === "string" ? undefined : "an ObjectId or a name (string)";

/** A nested `storage` option checked against `spec` (the storage options, or a subset). */
export function storageOption(spec: OptionSpec): OptionCheck {
  return (v, path, where) => {
    checkStorageOptions(where, v, spec, path);
    return undefined;
  };
}

/**
 * The options of `ObjectContext.create()`, name by name. Typed against the options interface, so a
 * new option that is not added here fails to compile instead of being refused at run time.
 */
export const CONTEXT_OPTIONS_SPEC: { readonly [K in keyof Required<ObjectContextOptions<unknown>>]: OptionCheck } = {
  env: is.any(),
  id: isObjectIdOrName,
  storage: storageOption(STORAGE_OPTIONS_SPEC),
  clock: isClock,
  random: is.function("a function returning a number in [0, 1)"),
  blockConcurrencyTimeoutMs: is.number({ min: 1, unit: "milliseconds" }),
  props: is.any(),
  alarms: is.boolean(),
  onReset: is.function("a function (error) => void"),
  runOwnCode: is.function("a function (instance, fn) => fn()"),
  beforeAlarm: is.function("a function () => Promise<void>"),
};

/** Validates the options of `ObjectContext.create()`. */
export function checkContextOptions(where: string, options: unknown): void {
  checkOptions(where, options, CONTEXT_OPTIONS_SPEC);
}
