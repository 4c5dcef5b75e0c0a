/**
 * When the storage core takes a snapshot, and the bookkeeping of the ones it took: the log grown
 * since the last snapshot, the snapshot in flight (at most one), and the snapshots the adapter
 * holds as far as this core knows. The copy itself (in one go, or a few pages per turn for a large
 * database) is in snapshots.ts.
 */
import type { SnapshotInfo } from "../durability/persistence";
import type { SqlEngine } from "../engine/engine";
import type { CoreSettings } from "./core-settings";
import { COPY_IN_TURNS_FROM_BYTES, imageBytesNow, snapshotDue, snapshotInTurns } from "./snapshots";

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
  #inFlight: Promise<void> | null = null;
  #lastImageBytes = 0;
  /** The snapshots the adapter holds (as far as this core knows), oldest first. */
  snapshots: SnapshotInfo[] = [];
  /** Called after each snapshot is durable (retention pruning hooks in here). */
  onSnapshot: ((seq: number) => void) | undefined;

  constructor(settings: CoreSettings, source: SnapshotSource) {
    this.#settings = settings;
    this.#source = source;
  }

  /** Starts from what the adapter loaded: its snapshots and the records replayed after the newest. */
  loaded(snapshots: readonly SnapshotInfo[], recordsSinceSnapshot: number): void {
    this.snapshots = snapshots.map((x) => ({ ...x }));
    this.#recordsSince = recordsSinceSnapshot;
    this.#lastImageBytes = snapshots[snapshots.length - 1]?.bytes ?? 0;
  }

  /**
   * A batch committed as `seq` (its log record is about `changedBytes` long): takes a snapshot
   * when one is due and none is in flight.
   */
  committed(seq: number, timeMs: number, changedBytes: number): void {
    this.#recordsSince++;
    this.#bytesSince += changedBytes;
    if (this.#inFlight) return;
    if (!snapshotDue(this.#settings, this.#recordsSince, this.#bytesSince, this.#lastImageBytes)) return;
    const engine = this.#source.engine();
    if (engine.beginImageCopy === undefined || imageBytesNow(engine, this.#lastImageBytes) < COPY_IN_TURNS_FROM_BYTES) {
      void this.take([seq, timeMs]);
      return;
    }
    this.#recordsSince = this.#bytesSince = 0;
    const between = () => this.#source.between() && this.#source.engine() === engine;
    const taken = () => this.#source.taken();
    this.#track(snapshotInTurns(engine, between, taken, (at, image) => this.#write(at[0], at[1], image)));
  }

  /**
   * Writes a snapshot of the committed state now (right after a commit, before new writes begin),
   * as of `at` when given (else the newest commit).
   */
  take(at?: readonly [seq: number, timeMs: number]): Promise<void> {
    const image = this.#source.engine().exportBytes();
    const [seq, timeMs] = this.#source.taken();
    return this.#track(this.#write(at?.[0] ?? seq, at?.[1] ?? timeMs, image));
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

  async #write(seq: number, timeMs: number, image: Uint8Array): Promise<void> {
    this.#lastImageBytes = image.byteLength;
    this.#recordsSince = this.#bytesSince = 0;
    await this.#settings.persistence.writeSnapshot({ seq, timeMs }, image);
    this.snapshots = this.snapshots.filter((x) => x.seq !== seq);
    this.snapshots.push({ seq, timeMs, bytes: image.byteLength });
    this.onSnapshot?.(seq);
  }
}
