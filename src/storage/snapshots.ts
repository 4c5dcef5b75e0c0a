/**
 * Taking snapshots: the first one of a new object, and the copy of a large database made a few
 * pages per turn so that a snapshot never holds the event loop for the whole image.
 */
import type { LoadResult } from "../durability/persistence";
import type { CoreSettings } from "./core-settings";

/**
 * A new object (nothing stored yet): stores its empty database as snapshot 0, so that the whole
 * history stays reachable (load() returns every record after the oldest snapshot) even after
 * later snapshots, until retention prunes it.
 */
export async function ensureFirstSnapshot(settings: CoreSettings, loaded: LoadResult): Promise<void> {
  if (loaded.snapshots.length > 0 || loaded.lastSeq !== 0) return;
  const empty = settings.engineFactory.open();
  const image = empty.exportBytes();
  empty.close();
  const timeMs = settings.clock.now();
  await settings.persistence.writeSnapshot({ seq: 0, timeMs }, image);
  loaded.snapshots.push({ seq: 0, timeMs, bytes: image.byteLength });
}
