/**
 * The options of the persistence factories (`createMemoryPersistence`, `openFilePersistence`,
 * `openIndexedDbPersistence`), checked in one place by the shared validator (util/options.ts): an
 * unknown name, a wrong type or a bad value throws the same `TypeError` (`code: "ERR_INVALID_OPTION"`)
 * as `ObjectStorage.open` does, naming the option, listing the valid ones, with a "did you mean"
 * for a near miss.
 */
import { checkOptions, InvalidOptionError, is, type OptionCheck, type OptionSpec } from "../util/options";
import type { OpenFilePersistenceOptions } from "./file-persistence";
import type { IndexedDbPersistenceOptions } from "./indexeddb-persistence";
import type { MemoryPersistenceOptions } from "./memory-persistence";

/** A spec typed against an options interface: an option missing here fails to compile. */
type SpecOf<T> = { readonly [K in keyof Required<T>]: OptionCheck };

/** `createMemoryPersistence(options)`. */
export const MEMORY_PERSISTENCE_OPTIONS: SpecOf<MemoryPersistenceOptions> = {
  maxHistoryBytes: is.either(is.number({ min: 1, unit: "bytes" }), (v) =>
    v === Number.POSITIVE_INFINITY ? undefined : "Infinity (keep everything the retention window keeps)",
  ),
};

/** `openFilePersistence(directory, options)`. */
export const FILE_PERSISTENCE_OPTIONS: SpecOf<OpenFilePersistenceOptions> = {
  segmentBytes: is.integer({ min: 1, unit: "bytes" }),
  allowUnsyncedWrites: is.boolean(),
  readOnly: is.boolean(),
};

/** `openIndexedDbPersistence(name, options)`. */
export const INDEXEDDB_PERSISTENCE_OPTIONS: SpecOf<IndexedDbPersistenceOptions> = {
  indexedDB: is.implementing("an IndexedDB factory such as the global indexedDB", ["open"]),
  IDBKeyRange: is.implementing("the IDBKeyRange class that goes with it", ["bound", "upperBound"]),
  openTimeoutMs: is.integer({ min: 1, unit: "ms" }),
  clock: is.implementing("a clock such as systemClock or a FakeClock", ["now", "setTimer", "clearTimer"]),
};

/**
 * Checks a factory's arguments: its location (a directory, a database name: a non-empty string,
 * named `parameter` in the message) and its options against `spec`.
 */
export function checkPersistenceArguments(
  where: string,
  parameter: string,
  location: unknown,
  options: unknown,
  spec: OptionSpec,
): void {
  if (parameter !== "" && (typeof location !== "string" || location === "")) {
    throw new InvalidOptionError(
      `${where}: ${parameter} must be a non-empty string; got ${location === "" ? '""' : typeof location}.`,
      parameter,
    );
  }
  checkOptions(where, options, spec);
}
