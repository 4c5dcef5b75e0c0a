/**
 * The commit times of an object's retained history, for `getBookmarkForTime` and retention: which
 * seq was current at a given time. Seqs are contiguous, so only times are stored (8 bytes a commit).
 *
 * @packageDocumentation
 */
import { ActorStoreError } from "../errors";
import type { CommitRecord } from "./commit-record";
import type { SnapshotInfo } from "./persistence";

/**
 * Commit times from a base state onward.
 *
 * Times are kept as a running maximum: if the clock stepped backwards, a commit is treated as
 * happening at the latest earlier commit time, so the times are non-decreasing and a binary search
 * finds "the last commit at or before t" in O(log n).
 *
 * @example
 * ```ts
 * const timeline = CommitTimeline.fromLoad(await loadWithRecords(persistence));
 * timeline.append(record.seq, record.timeMs); // after each commit
 * timeline.findSeqForTime(Date.parse("2026-01-02T00:00:00Z")); // a seq, or undefined if pruned
 * ```
 */
export class CommitTimeline {
  #baseSeq: number;
  #baseTimeMs: number;
  /** Times of seqs `baseSeq + 1 + start …`; `#start` lets prefixes be dropped without copying. */
  #times = new Float64Array(64);
  #start = 0;
  #end = 0;

  /**
   * @param baseSeq the oldest reachable state (a snapshot's seq, or 0 for the empty database).
   * @param baseTimeMs when that state was committed (`-Infinity` for seq 0: it is older than any time).
   */
  constructor(baseSeq = 0, baseTimeMs = Number.NEGATIVE_INFINITY) {
    this.#baseSeq = baseSeq;
    this.#baseTimeMs = baseTimeMs;
  }

  /**
   * Builds the timeline of a history held in memory (see `loadWithRecords`): from the oldest
   * snapshot (or seq 0) through its records. Opening an object builds it while streaming instead.
   */
  static fromLoad(result: { snapshots: readonly SnapshotInfo[]; records: readonly CommitRecord[] }): CommitTimeline {
    const oldest = result.snapshots[0];
    let timeline = oldest === undefined ? new CommitTimeline() : new CommitTimeline(oldest.seq, oldest.timeMs);
    for (const r of result.records) {
      if (r.seq !== timeline.lastSeq + 1) {
        // A gap: the log restarted after a snapshot newer than its end (a damaged tail was cut
        // off while a snapshot already covered it; adapters accept that). The states inside the
        // gap are gone, so the timeline restarts at that snapshot instead of refusing to open.
        const covering = result.snapshots.find((s) => s.seq === r.seq - 1);
        if (covering === undefined || covering.seq < timeline.lastSeq)
          throw new ActorStoreError(
            "ERR_CORRUPT",
            `The stored history is incomplete: the log jumps from commit ${timeline.lastSeq} to commit ${r.seq}, and no snapshot holds the state in between (a snapshot file is missing, or log files were deleted). The commits after ${timeline.lastSeq} cannot be rebuilt; restore the directory from a backup.`,
          );
        timeline = new CommitTimeline(covering.seq, covering.timeMs);
      }
      timeline.append(r.seq, r.timeMs);
    }
    // Same when the log ends before the newest snapshot: the next commit follows the snapshot.
    const newest = result.snapshots[result.snapshots.length - 1];
    if (newest !== undefined && newest.seq > timeline.lastSeq) timeline = new CommitTimeline(newest.seq, newest.timeMs);
    return timeline;
  }

  /** The oldest reachable seq. */
  get firstSeq(): number {
    return this.#baseSeq;
  }

  /** The commit time of {@link CommitTimeline.firstSeq}. */
  get firstTimeMs(): number {
    return this.#baseTimeMs;
  }

  /** The newest seq. */
  get lastSeq(): number {
    return this.#baseSeq + (this.#end - this.#start);
  }

  /** Records a commit; `seq` must be `lastSeq + 1`. Accepts a record for convenience. */
  append(seq: number | CommitRecord, timeMs?: number): void {
    if (typeof seq !== "number") {
      timeMs = seq.timeMs;
      seq = seq.seq;
    }
    if (seq !== this.lastSeq + 1)
      throw new RangeError(`CommitTimeline.append() expected seq ${this.lastSeq + 1} but got ${seq}.`);
    if (this.#end === this.#times.length) this.#grow();
    const previous = this.#end > this.#start ? (this.#times[this.#end - 1] as number) : this.#baseTimeMs;
    this.#times[this.#end++] = Math.max(previous, timeMs ?? previous);
  }

  /** The (running-maximum) commit time of `seq`, or `undefined` outside the timeline. */
  timeOf(seq: number): number | undefined {
    if (seq === this.#baseSeq) return this.#baseTimeMs;
    const i = this.#start + (seq - this.#baseSeq - 1);
    if (!Number.isInteger(seq) || i < this.#start || i >= this.#end) return undefined;
    return this.#times[i];
  }

  /**
   * The last seq committed at or before `timeMs`, or `undefined` when `timeMs` is before the
   * oldest reachable state.
   */
  findSeqForTime(timeMs: number): number | undefined {
    if (timeMs < this.#baseTimeMs) return undefined;
    // Upper bound: the first index whose time is > timeMs.
    let lo = this.#start;
    let hi = this.#end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#times[mid] as number) <= timeMs) lo = mid + 1;
      else hi = mid;
    }
    return this.#baseSeq + (lo - this.#start);
  }

  /**
   * Forgets states before `seq` after a prune: `seq` becomes the base. Does nothing if `seq` is at
   * or before the current base or beyond the last seq.
   */
  rebase(seq: number): void {
    if (seq <= this.#baseSeq || seq > this.lastSeq) return;
    const i = this.#start + (seq - this.#baseSeq - 1);
    this.#baseTimeMs = this.#times[i] as number;
    this.#baseSeq = seq;
    this.#start = i + 1;
  }

  #grow(): void {
    const live = this.#end - this.#start;
    // Compact instead of growing when most of the array is dropped history.
    const size = live * 2 > this.#times.length ? this.#times.length * 2 : this.#times.length;
    const next = new Float64Array(size);
    next.set(this.#times.subarray(this.#start, this.#end));
    this.#times = next;
    this.#start = 0;
    this.#end = live;
  }
}
