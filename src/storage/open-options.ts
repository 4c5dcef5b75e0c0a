/**
 * What {@link ObjectStorage.open} accepts, as one spec for the options validator: the object
 * context and the test kit check their nested `storage` options against the same table.
 */
import { checkOptions, InvalidOptionError, is, type OptionCheck, type OptionSpec } from "../util/options";
import type { ObjectStorageOptions } from "./object-storage";
import { BACKENDS } from "./options";

/** The methods a persistence adapter must have (see `PersistenceAdapter`). */
const PERSISTENCE_METHODS = [
  "load",
  "append",
  "writeSnapshot",
  "readSnapshot",
  "readRecords",
  "streamRecords",
  "prune",
  "readMeta",
  "readMetaVersion",
  "writeMetaIf",
  "close",
] as const;

/** Checks for a `Clock` (`now`, `setTimer`, `clearTimer`). */
export const isClock = is.implementing("a clock such as systemClock or a FakeClock", ["now", "setTimer", "clearTimer"]);

/** Checks for a persistence adapter. */
export const isPersistence = is.implementing(
  "a persistence adapter such as createMemoryPersistence() or await openFilePersistence(dir)",
  PERSISTENCE_METHODS,
);

/** `limits`: each a positive integer. */
const LIMITS_SPEC: OptionSpec = {
  maxKeyBytes: is.integer({ min: 1, unit: "bytes" }),
  maxValueBytes: is.integer({ min: 1, unit: "bytes" }),
  maxKeysPerCall: is.integer({ min: 1 }),
};

/**
 * The options of `ObjectStorage.open()`, name by name. Typed against the options interface, so a
 * new option that is not added here fails to compile instead of being refused at run time.
 */
export const STORAGE_OPTIONS_SPEC: { readonly [K in keyof Required<ObjectStorageOptions>]: OptionCheck } = {
  backend: is.oneOf(BACKENDS),
  persistence: isPersistence,
  directory: is.string({ nonEmpty: true }),
  clock: isClock,
  limits: is.object(LIMITS_SPEC),
  codec: is.oneOf(["structured", "v8"]),
  cacheSoftLimitBytes: is.integer({ min: 0, unit: "bytes" }),
  deleteAllDeletesAlarm: is.boolean(),
  retentionMs: is.number({ min: 1, unit: "milliseconds" }),
  snapshotEveryRecords: is.integer({ min: 1 }),
  snapshotLogCapBytes: is.integer({ min: 1, unit: "bytes" }),
  sqlJs: is.object({
    locateFile: is.function("a function (file name) => URL or path"),
    wasmBinary: (v) =>
      v instanceof ArrayBuffer || v instanceof Uint8Array ? undefined : "an ArrayBuffer or Uint8Array",
  }),
  maxDatabaseSize: is.integer({ min: 8192, unit: "bytes" }),
  engineFactory: is.implementing("an engine factory with open(bytes?)", ["open"]),
};

/**
 * Validates the options of `ObjectStorage.open()` (or a nested `storage` option: pass its `path`
 * and the caller's name as `where`), with the hints a common mistake deserves.
 */
export function checkStorageOptions(
  where: string,
  options: unknown,
  spec: OptionSpec = STORAGE_OPTIONS_SPEC,
  path = "",
): void {
  if (typeof options === "string") {
    const name = path === "" ? "options" : `option "${path}"`;
    throw new InvalidOptionError(
      `${where}: ${name} must be an object, not a string; to keep the data in a directory, pass { directory: ${JSON.stringify(options)} }. Valid options: ${Object.keys(spec).join(", ")}.`,
      path,
    );
  }
  checkOptions(where, options, spec, path);
  const o = options as { persistence?: unknown; directory?: unknown } | undefined;
  if (o?.persistence !== undefined && o.directory !== undefined) {
    throw new InvalidOptionError(
      `${where}: pass either "persistence" or "directory", not both (directory is a shortcut for persistence: await openFilePersistence(directory)).`,
      path === "" ? "directory" : `${path}.directory`,
    );
  }
}

/** The same spec without some names (the test kit owns persistence, directory and the clock). */
export function storageSpecWithout(...names: string[]): OptionSpec {
  return Object.fromEntries(Object.entries(STORAGE_OPTIONS_SPEC).filter(([n]) => !names.includes(n)));
}
