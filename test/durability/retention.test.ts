import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CommitTimeline } from "../../src/durability/commit-timeline";
import { DEFAULT_RETENTION_WINDOW_MS, planPrune, RetentionPolicy } from "../../src/durability/retention";
import { FakeClock } from "../../src/util/clock";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);
const snap = (seq: number) => ({ seq, timeMs: T0 + seq, bytes: 1 });

describe("CommitTimeline", () => {
  it("findSeqForTime: the last commit at or before the time", () => {
    const t = new CommitTimeline();
    t.append(1, 100);
    t.append(2, 200);
    t.append(3, 200);
    t.append(4, 300);
    expect(t.findSeqForTime(50)).toBe(0); // before any commit: the empty initial state
    expect(t.findSeqForTime(100)).toBe(1);
    expect(t.findSeqForTime(199)).toBe(1);
    expect(t.findSeqForTime(200)).toBe(3);
    expect(t.findSeqForTime(10_000)).toBe(4);
  });

  it("findSeqForTime: agrees with a linear scan over running-maximum times", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 300 }),
        fc.integer({ min: -10, max: 1010 }),
        (times, q) => {
          const t = new CommitTimeline();
          for (const [i, time] of times.entries()) t.append(i + 1, time);
          let max = Number.NEGATIVE_INFINITY;
          let expected = 0;
          times.forEach((time, i) => {
            max = Math.max(max, time);
            if (max <= q) expected = i + 1;
          });
          expect(t.findSeqForTime(q)).toBe(expected);
        },
      ),
    );
  });

  it("fromLoad: starts at the oldest snapshot; earlier times are unreachable", () => {
    const t = CommitTimeline.fromLoad({
      snapshots: [{ seq: 10, timeMs: 1000, bytes: 1 }],
      records: [{ seq: 11, timeMs: 1100, reset: false, sql: [], kv: [] }],
    });
    expect([t.firstSeq, t.lastSeq]).toEqual([10, 11]);
    expect(t.findSeqForTime(999)).toBeUndefined();
    expect(t.findSeqForTime(1050)).toBe(10);
    expect(t.timeOf(11)).toBe(1100);
    expect(t.timeOf(12)).toBeUndefined();
  });

  it("rebase: forgets states before the new base and keeps working while growing", () => {
    const t = new CommitTimeline();
    for (let s = 1; s <= 1000; s++) {
      t.append(s, s * 10);
      if (s % 100 === 0) t.rebase(s - 50);
    }
    expect(t.firstSeq).toBe(950);
    expect(t.findSeqForTime(9500)).toBe(950);
    expect(t.findSeqForTime(9499)).toBeUndefined();
    expect(t.findSeqForTime(9_999_999)).toBe(1000);
    expect(() => t.append(1002, 0)).toThrow(RangeError);
  });
});

describe("planPrune", () => {
  it("planPrune: keeps the newest snapshot at or before keepFromSeq and everything after", () => {
    expect(planPrune([snap(10), snap(20), snap(30)], 25)).toEqual({
      baseSeq: 20,
      deleteSnapshots: [10],
      dropRecordsThrough: 20,
    });
    expect(planPrune([snap(10), snap(20)], 20)).toEqual({ baseSeq: 20, deleteSnapshots: [10], dropRecordsThrough: 20 });
    expect(planPrune([snap(10)], 9)).toEqual({ baseSeq: null, deleteSnapshots: [], dropRecordsThrough: 0 });
    expect(planPrune([], 100)).toEqual({ baseSeq: null, deleteSnapshots: [], dropRecordsThrough: 0 });
  });
});

describe("RetentionPolicy", () => {
  function history(clock: FakeClock, days: number): CommitTimeline {
    // One commit a day, each at noon, starting `days` days before now.
    const t = new CommitTimeline();
    const start = clock.now() - days * DAY;
    for (let i = 1; i <= days; i++) t.append(i, start + (i - 1) * DAY + DAY / 2);
    return t;
  }

  it("constructor: 30 days by default; rejects a window that is not positive", () => {
    const clock = new FakeClock(T0);
    expect(new RetentionPolicy({ clock }).windowMs).toBe(DEFAULT_RETENTION_WINDOW_MS);
    expect(DEFAULT_RETENTION_WINDOW_MS).toBe(30 * DAY);
    for (const windowMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => new RetentionPolicy({ clock, windowMs })).toThrow(
        expect.objectContaining({ code: "ERR_INVALID_OPTION" }),
      );
  });

  it("checkTime: the window's edges are inside; a millisecond beyond is rejected", async () => {
    const clock = new FakeClock(T0 + 100 * DAY);
    const r = new RetentionPolicy({ clock });
    const now = clock.now();
    expect(() => r.checkTime(now)).not.toThrow();
    expect(() => r.checkTime(now - 30 * DAY)).not.toThrow();
    expect(() => r.checkTime(now + 1)).toThrow(/in the future/);
    expect(() => r.checkTime(now - 30 * DAY - 1)).toThrow(/older than the retention window of 30 days/);
    await clock.advance(DAY);
    expect(() => r.checkTime(now - 30 * DAY)).toThrow(expect.objectContaining({ code: "ERR_BOOKMARK" }));
  });

  it("seqForTime: finds the state at a time inside the window", () => {
    const clock = new FakeClock(T0 + 100 * DAY);
    const r = new RetentionPolicy({ clock });
    const t = history(clock, 60);
    const now = clock.now();
    // Commit i happened at now - (60 - i + 1) days + 12 h.
    expect(r.seqForTime(t, now)).toBe(60);
    expect(r.seqForTime(t, now - 10 * DAY)).toBe(50);
    expect(r.seqForTime(t, now - 30 * DAY)).toBe(30);
  });

  it("seqForTime: a past missing inside the window is ERR_BOOKMARK, which says it is not there (lost, or pruned under a shorter window)", () => {
    const clock = new FakeClock(T0 + 100 * DAY);
    const r = new RetentionPolicy({ clock });
    const t = new CommitTimeline(5, clock.now() - DAY);
    // A prune under this window keeps every state since its start, so "was pruned" would be false.
    expect(() => r.seqForTime(t, clock.now() - 2 * DAY)).toThrow(
      /the history before .* is not there, although it is inside the retention window of 30 days: .*lost .*or pruned under a shorter window/,
    );
  });

  it("seqForTime: before the first state of a history that starts at seq 0 says so, not that it was pruned", () => {
    // Regression: an object first opened an hour ago, asked for two hours ago, was told its history was pruned.
    const clock = new FakeClock(T0 + 100 * DAY);
    const r = new RetentionPolicy({ clock });
    const t = new CommitTimeline(0, clock.now() - HOUR);
    t.append(1, clock.now() - HOUR / 2);
    expect(r.seqForTime(t, clock.now() - HOUR)).toBe(0);
    let error: unknown;
    try {
      r.seqForTime(t, clock.now() - 2 * HOUR);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "ERR_BOOKMARK" });
    expect((error as Error).message).toMatch(
      /history starts at .*when its storage was first opened; there is no earlier state/,
    );
    expect((error as Error).message).not.toMatch(/pruned/);
  });

  it("keepFromSeq: the state current at the window start stays reachable as time moves", async () => {
    const clock = new FakeClock(T0 + 100 * DAY);
    const r = new RetentionPolicy({ clock, windowMs: 7 * DAY });
    const t = history(clock, 20);
    // The window starts 7 days ago at this instant; the last commit before it was 8 days ago at noon: seq 13.
    expect(r.keepFromSeq(t)).toBe(13);
    await clock.advance(DAY / 2);
    expect(r.keepFromSeq(t)).toBe(14);
    // With less history than the window, everything is kept (seq 0 = the empty initial state).
    expect(new RetentionPolicy({ clock, windowMs: 365 * DAY }).keepFromSeq(t)).toBe(0);
  });

  it("keepFromSeq + planPrune: every bookmark inside the window keeps a base snapshot and its records", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3 * DAY }), { minLength: 1, maxLength: 60 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.integer({ min: 1, max: 5 * DAY }),
        fc.integer({ min: 1, max: 10 * DAY }),
        (gaps, snapPicks, windowMs, later) => {
          const clock = new FakeClock(T0);
          const t = new CommitTimeline();
          let time = T0;
          gaps.forEach((g, i) => {
            time += g;
            t.append(i + 1, time);
          });
          clock.set(time + later);
          const snapshots = [...new Set(snapPicks.map((p) => p % (gaps.length + 1)))].map((seq) => ({
            seq,
            timeMs: t.timeOf(seq) ?? 0,
            bytes: 1,
          }));
          const r = new RetentionPolicy({ clock, windowMs });
          const plan = planPrune(snapshots, r.keepFromSeq(t));
          const kept = snapshots.filter((s) => !plan.deleteSnapshots.includes(s.seq)).map((s) => s.seq);
          // Every time in the window maps to a seq reachable from a kept snapshot (or seq 0) plus kept records.
          for (let q = clock.now() - windowMs; q <= clock.now(); q += Math.max(1, Math.floor(windowMs / 7))) {
            const seq = t.findSeqForTime(q) as number;
            const base = Math.max(0, ...kept.filter((s) => s <= seq));
            expect(base === 0 ? plan.dropRecordsThrough === 0 : plan.dropRecordsThrough <= base).toBe(true);
          }
        },
      ),
    );
  });
});
