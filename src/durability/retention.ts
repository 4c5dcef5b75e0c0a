/**
 * Retention: how much history an object keeps. Every state whose bookmark may still be asked for
 * (any time inside the window, 30 days by default) must stay reachable, which takes a snapshot at or
 * before the window start plus every record after that snapshot. Everything older can go.
 *
 * @packageDocumentation
 */

import { ActorStoreError } from "../errors";
import type { Clock } from "../util/clock";
import type { CommitTimeline } from "./commit-timeline";
import type { SnapshotInfo } from "./persistence";

/** The default retention window: 30 days, as on the platform. */
export const DEFAULT_RETENTION_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

/** What a prune may delete so that every state with seq ≥ `keepFromSeq` stays reachable. */
export interface PrunePlan {
  /** The snapshot every kept state is rebuilt from, or `null` when none is old enough (keep everything). */
  baseSeq: number | null;
  /** Snapshots older than the base, to delete. */
  deleteSnapshots: number[];
  /** Records with seq ≤ this are no longer needed (0 when nothing may go). */
  dropRecordsThrough: number;
}

/**
 * Plans a prune: keep the newest snapshot at or before `keepFromSeq`, every later snapshot and every
 * record after it; everything older is unreachable from any kept state. Both adapters use this, so
 * they agree on what "needed" means.
 *
 * @example
 * ```ts
 * planPrune([{ seq: 10, … }, { seq: 20, … }, { seq: 30, … }], 25);
 * // { baseSeq: 20, deleteSnapshots: [10], dropRecordsThrough: 20 }
 * ```
 */
export function planPrune(snapshots: readonly SnapshotInfo[], keepFromSeq: number): PrunePlan {
  let baseSeq: number | null = null;
  for (const s of snapshots) if (s.seq <= keepFromSeq && (baseSeq === null || s.seq > baseSeq)) baseSeq = s.seq;
  if (baseSeq === null) return { baseSeq, deleteSnapshots: [], dropRecordsThrough: 0 };
  const base = baseSeq;
  const deleteSnapshots = snapshots
    .filter((s) => s.seq < base)
    .map((s) => s.seq)
    .sort((a, b) => a - b);
  return { baseSeq, deleteSnapshots, dropRecordsThrough: base };
}

/** Options of {@link RetentionPolicy}. */
export interface RetentionPolicyOptions {
  /** Where "now" comes from. */
  clock: Clock;
  /** How far back bookmarks reach, in ms. Default {@link DEFAULT_RETENTION_WINDOW_MS}. */
  windowMs?: number;
}

/**
 * The retention window over an injected clock: which times bookmarks may name, and how much history
 * to keep for them.
 *
 * @example
 * ```ts
 * const retention = new RetentionPolicy({ clock, windowMs: 7 * 86_400_000 });
 * const seq = retention.seqForTime(timeline, Date.parse("2026-01-02T00:00:00Z")); // throws ERR_BOOKMARK if out of window
 * await persistence.prune(retention.keepFromSeq(timeline));
 * ```
 */
export class RetentionPolicy {
  /** The window length in ms. */
  readonly windowMs: number;
  readonly #clock: Clock;

  constructor(options: RetentionPolicyOptions) {
    const windowMs = options.windowMs ?? DEFAULT_RETENTION_WINDOW_MS;
    if (!(Number.isFinite(windowMs) && windowMs > 0))
      throw new ActorStoreError(
        "ERR_INVALID_OPTION",
        `The retention window must be a positive number of milliseconds; got ${String(windowMs)}.`,
      );
    this.windowMs = windowMs;
    this.#clock = options.clock;
  }

  /** The oldest time a bookmark may name right now (`now - windowMs`). */
  windowStartMs(): number {
    return this.#clock.now() - this.windowMs;
  }

  /**
   * Rejects times outside `[now - windowMs, now]` with `ERR_BOOKMARK`.
   */
  checkTime(timeMs: number): void {
    const nowMs = this.#clock.now();
    if (timeMs > nowMs)
      throw new ActorStoreError(
        "ERR_BOOKMARK",
        `Cannot get a bookmark for ${isoOrNumber(timeMs)}: it is in the future (now is ${isoOrNumber(nowMs)}).`,
      );
    if (timeMs < nowMs - this.windowMs)
      throw new ActorStoreError(
        "ERR_BOOKMARK",
        `Cannot get a bookmark for ${isoOrNumber(timeMs)}: it is older than the retention window of ${formatDuration(this.windowMs)}; pick a time after ${isoOrNumber(nowMs - this.windowMs)}.`,
      );
  }

  /**
   * The seq whose state was current at `timeMs` (the last commit at or before it), after
   * {@link RetentionPolicy.checkTime}. Rejects with `ERR_BOOKMARK` when the history that far back is
   * no longer kept.
   */
  seqForTime(timeline: CommitTimeline, timeMs: number): number {
    this.checkTime(timeMs);
    const seq = timeline.findSeqForTime(timeMs);
    if (seq === undefined)
      throw new ActorStoreError(
        "ERR_BOOKMARK",
        `Cannot get a bookmark for ${isoOrNumber(timeMs)}: the history before ${isoOrNumber(timeline.firstTimeMs)} was pruned.`,
      );
    return seq;
  }

  /**
   * The oldest seq whose state must stay reachable: the state current at the window start (or the
   * oldest state still kept, if the history does not reach that far). Pass it to `prune()`.
   */
  keepFromSeq(timeline: CommitTimeline): number {
    return timeline.findSeqForTime(this.windowStartMs()) ?? timeline.firstSeq;
  }
}

function isoOrNumber(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}

function formatDuration(ms: number): string {
  const days = ms / 86_400_000;
  return Number.isInteger(days) ? `${days} day${days === 1 ? "" : "s"}` : `${ms} ms`;
}
