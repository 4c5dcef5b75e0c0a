/**
 * When the storage core takes a snapshot, and the bookkeeping of the ones it took: the log grown
 * since the last snapshot, the snapshot in flight (at most one), and the snapshots the adapter
 * holds as far as this core knows. The copy itself (in one go, or a few pages per turn for a large
 * database) is in snapshots.ts.
 */
import { thinsSnapshots } from "../durability/delegating-persistence";
import { handOverWrittenImage } from "../durability/image-handover";
import type { SnapshotInfo } from "../durability/persistence";
import { planThinning, type ThinningCandidate } from "../durability/retention";
import type { SqlEngine } from "../engine/engine";
import type { CoreSettings } from "./core-settings";
import {
  COPY_IN_TURNS_FROM_BYTES,
  imageBytesNow,
  restoreSpacingBytes,
  snapshotDueBytes,
  snapshotInTurns,
} from "./snapshots";

/** What the schedule needs from the storage core. */
export interface SnapshotSource {
  /** The engine that holds the data now. */
  engine(): SqlEngine;
  /** Whether no batch or transaction is open, so the engine holds only committed pages. */
  between(): boolean;
  /**
   * The image is being taken now: the core forgets the connection state it kept for the log and
   * names the newest committed seq and its time (the state the image holds).
   */
  taken(): readonly [seq: number, timeMs: number];
}

/** The snapshot schedule of one storage core. See the module comment. */
export class SnapshotSchedule {
  readonly #settings: CoreSettings;
  readonly #source: SnapshotSource;
  #recordsSince = 0;
  #bytesSince = 0;
  /** The log bytes counted this session (from the newest snapshot loaded), for thinning. */
  #logBytes = 0;
  /** Where in {@link SnapshotSchedule.#logBytes} each snapshot known this session was taken. */
  readonly #logBytesAt = new Map<number, number>();
  #inFlight: Promise<void> | null = null;
  #lastImageBytes = 0;
  /**
   * When the next snapshot is due (`snapshotDueBytes`, snapshots.ts), worked out when the last image's
   * size changes rather than on every commit: after this many log bytes, or this many records.
   */
  #dueBytes: number;
  readonly #dueRecords: number;
  /**
   * The last snapshot written in place by this schedule, with the engine's change mark of its
   * freeze: the next one may be written as a delta on it (the chunks changed since). Any other
   * snapshot (an export, a copy, another engine) ends it.
   */
  #deltaBase: { engine: SqlEngine; mark: number; seq: number; byteLength: number } | undefined;
  /** The snapshots the adapter holds (as far as this core knows), oldest first. */
  snapshots: SnapshotInfo[] = [];
  /** Called after each snapshot is durable (retention pruning hooks in here). */
  onSnapshot: ((seq: number) => void) | undefined;

  constructor(settings: CoreSettings, source: SnapshotSource) {
    this.#settings = settings;
    this.#source = source;
    this.#dueBytes = snapshotDueBytes(settings, 0);
    this.#dueRecords = settings.snapshotEveryRecords;
  }

  /** The last image (loaded or taken) is `bytes` long: when the next snapshot is due follows from it. */
  #imageBytes(bytes: number): void {
    this.#lastImageBytes = bytes;
    this.#dueBytes = snapshotDueBytes(this.#settings, bytes);
  }

  /** Starts from what the adapter loaded: its snapshots and the records replayed after the newest. */
  loaded(snapshots: readonly SnapshotInfo[], recordsSinceSnapshot: number, bytesSinceSnapshot: number): void {
    this.snapshots = snapshots.map((x) => ({ ...x }));
    this.#recordsSince = recordsSinceSnapshot;
    this.#bytesSince = this.#logBytes = bytesSinceSnapshot;
    this.#logBytesAt.clear();
    const newest = snapshots[snapshots.length - 1];
    if (newest !== undefined) this.#logBytesAt.set(newest.seq, 0);
    this.#imageBytes(newest?.bytes ?? 0);
    this.#deltaBase = undefined;
  }

  /**
   * The snapshots held, with where in the log each was taken as far as this session knows
   * (snapshots older than the newest one loaded are not known: thinning keeps them).
   */
  thinningCandidates(): ThinningCandidate[] {
    return this.snapshots.map((s) => ({ seq: s.seq, bytes: s.bytes, logBytesAt: this.#logBytesAt.get(s.seq) }));
  }

  /** Forgets snapshots deleted by a prune or by thinning. */
  forget(seqs: Iterable<number>): void {
    const gone = new Set(seqs);
    this.snapshots = this.snapshots.filter((x) => !gone.has(x.seq));
    for (const seq of gone) this.#logBytesAt.delete(seq);
  }

  /**
   * A batch committed as `seq` (its log record is about `changedBytes` long): takes a snapshot
   * when one is due and none is in flight.
   */
  committed(seq: number, timeMs: number, changedBytes: number): void {
    this.#recordsSince++;
    this.#bytesSince += changedBytes;
    this.#logBytes += changedBytes;
    if (this.#inFlight) return;
    if (this.#bytesSince < this.#dueBytes && this.#recordsSince < this.#dueRecords) return;
    const engine = this.#source.engine();
    if (this.#takeInPlace(engine, [seq, timeMs])) return;
    if (engine.beginImageCopy === undefined || imageBytesNow(engine, this.#lastImageBytes) < COPY_IN_TURNS_FROM_BYTES) {
      void this.take([seq, timeMs]);
      return;
    }
    this.#recordsSince = this.#bytesSince = 0;
    const between = () => this.#source.between() && this.#source.engine() === engine;
    const taken = () => [...this.#source.taken(), this.#logBytes] as const;
    this.#track(snapshotInTurns(engine, between, taken, (at, image) => this.#write(at[0], at[1], image, at[2])));
  }

  /**
   * A snapshot written in place (docs/durability.md, *Snapshots written in place*): where the
   * adapter writes an image given in parts and the engine can hold its own storage unchanged, the
   * committed state of this turn is frozen (no copy: later writes copy the chunks they change
   * first) and written from there; the hold ends when the write settles. Whatever the database's
   * size, nothing is copied in turns and no second image is allocated. Where the adapter also
   * writes deltas and the previous snapshot was frozen from this engine, only the chunks changed
   * since are written (docs/durability.md, *Incremental snapshots*), unless the adapter asks for a
   * full image, or `full` asks for one. Returns false when either side cannot (then the image is
   * exported or copied).
   */
  #takeInPlace(engine: SqlEngine, at?: readonly [seq: number, timeMs: number], full = false): boolean {
    const persistence = this.#settings.persistence;
    if (persistence.writeSnapshotParts === undefined || engine.freezeImage === undefined) return false;
    if (!this.#source.between()) return false;
    const base = this.#deltaBase?.engine === engine ? this.#deltaBase : undefined;
    const frozen = engine.freezeImage(base?.mark);
    if (frozen === undefined) return false;
    const [newestSeq, newestTimeMs] = this.#source.taken();
    const [seq, timeMs] = at ?? [newestSeq, newestTimeMs];
    const logBytesAt = this.#logBytes;
    this.#before(frozen.byteLength, logBytesAt);
    const write = async (): Promise<void> => {
      try {
        const { changed, chunkBytes } = frozen;
        let wrote = false;
        if (!full && persistence.writeSnapshotDelta !== undefined && base !== undefined && base.seq < seq)
          if (changed !== undefined && chunkBytes !== undefined) {
            const chunks = deltaChunks(changed, frozen.parts, chunkBytes, base.byteLength);
            const delta = { baseSeq: base.seq, byteLength: frozen.byteLength, chunkBytes, chunks };
            wrote = await persistence.writeSnapshotDelta({ seq, timeMs }, delta);
          }
        if (!wrote) await persistence.writeSnapshotParts?.({ seq, timeMs }, frozen.parts);
      } finally {
        frozen.release();
      }
      const { mark, byteLength } = frozen;
      this.#deltaBase = mark === undefined ? undefined : { engine, mark, seq, byteLength };
      this.#after(seq, timeMs, frozen.byteLength, logBytesAt);
    };
    this.#track(write());
    return true;
  }

  /**
   * Writes a snapshot of the committed state now (right after a commit, before new writes begin),
   * as of `at` when given (else the newest commit): in place where it can be (see
   * {@link SnapshotSchedule.#takeInPlace}), else exported.
   */
  take(at?: readonly [seq: number, timeMs: number]): Promise<void> {
    // Written in place where both sides can (no export; a delta where one fits).
    if (this.#takeInPlace(this.#source.engine(), at)) return this.settled();
    const image = this.#source.engine().exportBytes();
    const [seq, timeMs] = this.#source.taken();
    return this.#track(this.#write(at?.[0] ?? seq, at?.[1] ?? timeMs, image, this.#logBytes));
  }

  /**
   * Deletes the snapshots taken closer together than restores need (`planThinning`, retention.ts):
   * with the log cap they come every few MiB of log, while half the database of log between two
   * is as far as a restore needs to replay. Every state with seq ≥ `keepFromSeq` stays reachable.
   */
  async thin(keepFromSeq: number): Promise<void> {
    const persistence = this.#settings.persistence;
    if (!thinsSnapshots(persistence) || persistence.thinSnapshots === undefined) return;
    const doomed = planThinning(this.thinningCandidates(), keepFromSeq, {
      maxLogBytes: (imageBytes) => restoreSpacingBytes(this.#settings, imageBytes),
      maxRecords: this.#settings.snapshotEveryRecords,
    });
    if (doomed.length === 0) return;
    this.forget(await persistence.thinSnapshots(doomed));
  }

  /**
   * The storage is closing (its last batch is committed and no snapshot is in flight): where
   * snapshots are written in place, one of the final state is written when the log since the
   * newest snapshot holds at least `snapshotEveryBytes` (the least a snapshot is ever due for), so
   * that the next open reads that image instead of replaying up to the log cap. That snapshot is
   * always a full image, never a delta: an open reads one file into the engine, where a chain
   * costs it a read, a checksum and a copy per delta (at 1 GB, 20 s against 6 s). It costs the
   * close the image's write (no copy); elsewhere nothing changes. Resolves when it is settled.
   */
  async closing(): Promise<void> {
    await this.settled();
    if (this.#bytesSince < this.#settings.snapshotEveryBytes) return;
    if (this.#takeInPlace(this.#source.engine(), undefined, true)) await this.settled();
  }

  /** Resolves when no snapshot is in flight (success or not). */
  async settled(): Promise<void> {
    await this.#inFlight;
  }

  /** A failed snapshot loses nothing (the log has every record); a later one tries again. */
  #track(write: Promise<void>): Promise<void> {
    const p: Promise<void> = write
      .catch(() => {})
      .finally(() => {
        if (this.#inFlight === p) this.#inFlight = null;
      });
    this.#inFlight = p;
    return p;
  }

  async #write(seq: number, timeMs: number, image: Uint8Array, logBytesAt: number): Promise<void> {
    this.#before(image.byteLength, logBytesAt);
    // Not frozen from the engine: no change mark describes this image.
    this.#deltaBase = undefined;
    // Every image here is fresh (an export, or a finished copy) and only its size is read after
    // this: the adapter may keep it without a copy.
    const persistence = this.#settings.persistence;
    await persistence.writeSnapshot({ seq, timeMs }, handOverWrittenImage(persistence, image));
    this.#after(seq, timeMs, image.byteLength, logBytesAt);
  }

  /** Where the log since the snapshot restarts, as its write begins. */
  #before(imageBytes: number, logBytesAt: number): void {
    this.#imageBytes(imageBytes);
    // What was logged after the image's state (while the copy finished) still counts.
    this.#bytesSince = this.#logBytes - logBytesAt;
    this.#recordsSince = 0;
  }

  /** The snapshot is durable: known from now on, and retention may act. */
  #after(seq: number, timeMs: number, imageBytes: number, logBytesAt: number): void {
    this.snapshots = this.snapshots.filter((x) => x.seq !== seq);
    this.snapshots.push({ seq, timeMs, bytes: imageBytes });
    this.#logBytesAt.set(seq, logBytesAt);
    this.onSnapshot?.(seq);
  }
}

/**
 * The chunks a delta writes: those the engine reports changed since the base's freeze, and every
 * chunk from the one holding the base's end onward (bytes the base image did not hold; growth
 * writes them anyway, so this costs nothing, and it never relies on the engine for them).
 */
function deltaChunks(
  changed: readonly number[],
  parts: readonly Uint8Array[],
  chunkBytes: number,
  baseBytes: number,
): { index: number; bytes: Uint8Array }[] {
  const indexes = new Set(changed);
  for (let index = Math.floor(baseBytes / chunkBytes); index < parts.length; index++) indexes.add(index);
  return [...indexes]
    .filter((index) => index < parts.length)
    .sort((a, b) => a - b)
    .map((index) => ({ index, bytes: parts[index] as Uint8Array }));
}
