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

/** A snapshot as {@link planThinning} sees it. */
export interface ThinningCandidate {
  /** The snapshot's seq. */
  seq: number;
  /** Its image size in bytes. */
  bytes: number;
  /**
   * How many log bytes the object had written (counted from any fixed origin of this session) when
   * the state this snapshot holds was committed; `undefined` when not known (a snapshot taken
   * before this session), which keeps it.
   */
  logBytesAt: number | undefined;
}

/** The spacing {@link planThinning} keeps between the snapshots it leaves. */
export interface ThinningSpacing {
  /** The most log bytes a restore may replay between kept snapshots, given the later image's size. */
  maxLogBytes(imageBytes: number): number;
  /** The most commits a restore may replay between kept snapshots. */
  maxRecords: number;
}

/**
 * Plans which snapshots inside the retention window may go when snapshots are taken more often
 * than restores need them (a fixed log cap takes one every few MiB of log, whatever the database's
 * size): every record after the base stays, so each state stays reachable exactly from any older
 * snapshot, and only the distance a restore replays grows. A snapshot is deleted only when the
 * kept snapshot before it and the snapshot after it are at most `spacing` apart (log bytes for the
 * later image's size, and commits), so a restore never replays more than that between kept ones.
 * Never deleted: the base (the newest snapshot at or before `keepFromSeq`, or the oldest when none
 * is), anything older (that is {@link planPrune}'s), the two newest (the open's image and its
 * fallback) and any snapshot whose log position is unknown.
 *
 * @example
 * ```ts
 * // Snapshots every 1 MiB of log, thinned to one per 4 MiB:
 * planThinning(snaps, keepFrom, { maxLogBytes: () => 4 * 2 ** 20, maxRecords: 10_000 });
 * ```
 */
export function planThinning(
  snapshots: readonly ThinningCandidate[],
  keepFromSeq: number,
  spacing: ThinningSpacing,
): number[] {
  const sorted = [...snapshots].sort((a, b) => a.seq - b.seq);
  let baseIndex = 0;
  for (const [i, s] of sorted.entries()) if (s.seq <= keepFromSeq) baseIndex = i;
  const doomed: number[] = [];
  let kept = sorted[baseIndex];
  for (let i = baseIndex + 1; i < sorted.length - 2; i++) {
    const s = sorted[i] as ThinningCandidate;
    const next = sorted[i + 1] as ThinningCandidate;
    const from = kept?.logBytesAt;
    const ok =
      kept !== undefined &&
      from !== undefined &&
      s.logBytesAt !== undefined &&
      next.logBytesAt !== undefined &&
      next.logBytesAt - from <= spacing.maxLogBytes(next.bytes) &&
      next.seq - kept.seq <= spacing.maxRecords;
    if (ok) doomed.push(s.seq);
    else kept = s;
  }
  return doomed;
}

/**
 * Of the snapshots `asked` to go by `thinSnapshots`, the ones an adapter holding `held` may delete:
 * never the oldest (the base of the history it holds) nor the two newest (the open's image and its
 * fallback).
 */
export function thinnableSeqs(held: readonly number[], asked: readonly number[]): number[] {
  const sorted = [...held].sort((a, b) => a - b);
  const spared = new Set([sorted[0], sorted[sorted.length - 1], sorted[sorted.length - 2]]);
  const present = new Set(sorted);
  return [...new Set(asked)].filter((seq) => present.has(seq) && !spared.has(seq)).sort((a, b) => a - b);
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
   * not there (lost, or pruned under a shorter window: the time passed the window check), or (a
   * timeline from seq 0) when the time is before the object's first state.
   */
  seqForTime(timeline: CommitTimeline, timeMs: number): number {
    this.checkTime(timeMs);
    const seq = timeline.findSeqForTime(timeMs);
    if (seq === undefined) {
      // A timeline that still starts at seq 0 lost nothing: the time is before the object existed.
      const why =
        timeline.firstSeq === 0
          ? `this object's history starts at ${isoOrNumber(timeline.firstTimeMs)}, when its storage was first opened; there is no earlier state.`
          : `the history before ${isoOrNumber(timeline.firstTimeMs)} is not there, although it is inside the retention window of ${formatDuration(this.windowMs)}: a prune under this window keeps it, so it was lost (log files deleted from outside, or removed by a repair) or pruned under a shorter window.`;
      throw new ActorStoreError("ERR_BOOKMARK", `Cannot get a bookmark for ${isoOrNumber(timeMs)}: ${why}`);
    }
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

/** A window length for messages: whole days as days ("30 days"), anything else in ms. */
export function formatDuration(ms: number): string {
  const days = ms / 86_400_000;
  return Number.isInteger(days) ? `${days} day${days === 1 ? "" : "s"}` : `${ms} ms`;
}
