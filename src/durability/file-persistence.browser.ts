/**
 * `openFilePersistence` in the browser build. tsup.config.ts builds the `browser` export condition
 * with this module in place of file-persistence.ts: file persistence needs Node's file system, so
 * this one checks its arguments as the Node one does and rejects saying so, and the file adapter
 * (its directory lock, directory scan, segment writer and checksum worker), which could never run
 * there, stays out of the browser bundle.
 *
 * @packageDocumentation
 */
import type { FilePersistence, OpenFilePersistenceOptions } from "./file-persistence-types";
import { checkPersistenceArguments, FILE_PERSISTENCE_OPTIONS } from "./persistence-options";

export type { FilePersistence, FilePersistenceStats, OpenFilePersistenceOptions } from "./file-persistence-types";

/**
 * Rejects: file persistence needs Node.js. A misspelled option or a bad directory is still the
 * `TypeError` the Node build throws.
 *
 * @example
 * ```ts
 * // In a browser, keep an object's data in IndexedDB instead:
 * const persistence = await openIndexedDbPersistence("actorstore:room-1");
 * ```
 */
export async function openFilePersistence(
  directory: string,
  options: OpenFilePersistenceOptions = {},
): Promise<FilePersistence> {
  checkPersistenceArguments("openFilePersistence()", "directory", directory, options, FILE_PERSISTENCE_OPTIONS);
  throw new Error(
    "node:fs/promises is not available in actorstore's browser build: file persistence and the v8 codec need Node.js; in a browser use openIndexedDbPersistence() and the structured codec.",
  );
}
