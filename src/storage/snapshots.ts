/**
 * Taking snapshots: the first one of a new object, and the copy of a large database made a few
 * pages per turn so that a snapshot never holds the event loop for the whole image.
 */
import type { CommitRecord, SqlWrite } from "../durability/commit-record";
import type { LoadResult } from "../durability/persistence";
import type { ImageCopy, SqlEngine } from "../engine/engine";
import { nextTurn } from "../util/clock";
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

/**
 * Pages copied per turn: 256 pages of 4 KiB (1 MiB) took 5–20 ms on a loaded 2-core machine. A
 * step of 64 pages was tried to shorten the wait of a batch behind a step, and was taken back: at
 * one step per turn the copy then fell behind a database growing by ~450 KB per batch, outgrew its
 * room and started over, and no snapshot of the growth workload ever finished (the log, and the
 * replay at the next open, grew without bound). How fast a copy must go depends on how fast the
 * object writes; see docs/benchmarks-history.md, *What changed (issue 20)*.
 */
export const COPY_PAGES_PER_TURN = 256;

/** Databases smaller than this are exported in one go (one turn costs less than the bookkeeping). */
export const COPY_IN_TURNS_FROM_BYTES = 16 * 1024 * 1024;

/**
 * Copies the engine's image a few pages per turn. `between` says whether the source is between
 * transactions (a step must not copy uncommitted pages); `finished` runs in the turn of the last
 * step, when the copy holds the committed state of that moment. Resolves with the image, or with
 * null when the engine closed (or was replaced) first.
 */
export async function copyImageInTurns(
  engine: SqlEngine,
  copy: ImageCopy,
  between: () => boolean,
  finished: () => void,
): Promise<Uint8Array | null> {
  try {
    for (;;) {
      await nextTurn();
      if (engine.closed) return null;
      if (!between()) continue;
      if (copy.step(COPY_PAGES_PER_TURN)) break;
    }
    finished();
    return copy.image();
  } finally {
    copy.abandon();
  }
}

/**
 * A snapshot of a large database: the image copied a few pages per turn between batches, then
 * written. `taken` runs in the turn the copy finished (the copy holds that turn's committed state)
 * and names its seq and time.
 */
export async function snapshotInTurns<At>(
  engine: SqlEngine,
  between: () => boolean,
  taken: () => At,
  write: (at: At, image: Uint8Array) => Promise<void>,
): Promise<void> {
  const copy = engine.beginImageCopy?.();
  if (copy === undefined) return;
  let at: At | undefined;
  const image = await copyImageInTurns(engine, copy, between, () => {
    at = taken();
  });
  if (image !== null && at !== undefined) await write(at, image);
}

/**
 * The size of the image a snapshot would copy now. The last snapshot's size is a lower bound that
 * costs nothing; below the stepped-copy threshold the database may have grown past it since (one
 * statement can add tens of megabytes), so the engine is asked (two pragmas, only when a snapshot
 * is due). Deciding by the last snapshot's size alone exported a 25–50 MB database in one turn.
 */
export function imageBytesNow(engine: SqlEngine, lastImageBytes: number): number {
  if (lastImageBytes >= COPY_IN_TURNS_FROM_BYTES) return lastImageBytes;
  const [row] = engine.query("SELECT (SELECT * FROM pragma_page_count) * (SELECT * FROM pragma_page_size)");
  return Math.max(lastImageBytes, Number(row?.[0] ?? 0));
}

/**
 * The default of `snapshotLogCapBytes`: 64 MiB of log since the newest snapshot makes one due,
 * whatever the database's size, so the replay of an open stays bounded as the database grows
 * (docs/durability.md, *When snapshots are taken*). 16 MiB was measured too: at 0.5–1 GB under a
 * write-heavy load its snapshots ran back to back, median batches were 3–4× slower, and the replay
 * after a crash was no shorter (docs/benchmarks-history.md, *Recovery with the log cap*).
 */
export const DEFAULT_SNAPSHOT_LOG_CAP_BYTES = 64 * 1024 * 1024;

/**
 * The log a snapshot saves replaying when restores and opens start from it: half the database
 * (at least `snapshotEveryBytes`). Snapshots were due at this distance before the log cap, and
 * retention thins the ones taken closer than this (see {@link snapshotDueBytes}).
 */
export function restoreSpacingBytes(settings: CoreSettings, imageBytes: number): number {
  return Math.max(settings.snapshotEveryBytes, imageBytes / 2);
}

/**
 * Snapshots bound recovery time: one is due once the log since the last one reaches this many
 * bytes — half the database (at least `snapshotEveryBytes`, so a snapshot never costs much more
 * than the log it saves replaying) or the fixed `snapshotLogCapBytes`, whichever is smaller — or
 * after `snapshotEveryRecords` commits (snapshot-schedule.ts works both out once per image, not per
 * commit). The cap is what bounds an open's replay of a large database.
 */
export function snapshotDueBytes(settings: CoreSettings, lastImageBytes: number): number {
  return Math.min(settings.snapshotLogCapBytes, restoreSpacingBytes(settings, lastImageBytes));
}

/** What one SQL write counts toward the log since a snapshot: its text and its bindings. */
export function sqlWriteBytes(op: SqlWrite): number {
  let bytes = op.sql.length + 16;
  for (const b of op.bindings) bytes += typeof b === "string" ? b.length : b instanceof Uint8Array ? b.byteLength : 8;
  return bytes;
}

/**
 * What a record counts toward the log since a snapshot (the storage core counts the same while it
 * commits): keys, values and SQL writes, an approximation of the record's encoded size.
 */
export function loggedBytes(record: CommitRecord): number {
  let bytes = 0;
  for (const w of record.kv) bytes += w.key.length + (w.value?.byteLength ?? 0);
  for (const op of record.sql) bytes += sqlWriteBytes(op);
  return bytes;
}
