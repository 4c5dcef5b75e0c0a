import { describe, expect, test } from "vitest";
import { pairedRatio, summarize } from "../../bench/lib/stats";

describe("benchmark statistics", () => {
  test("pairedRatio: the median of per-round ratios, so a slow round on both sides cancels out", () => {
    // Round 2 ran while the machine was slow for both systems.
    expect(pairedRatio([100, 100, 50], [50, 50, 25])).toBe(2);
    // Median over median would see 100 / 50 here too, but not when the slow rounds differ:
    expect(pairedRatio([100, 40, 100, 100], [50, 20, 50, 20])).toBe(2);
    expect(summarize([100, 40, 100, 100]).median / summarize([50, 20, 50, 20]).median).toBeCloseTo(2.86, 2);
  });

  test("pairedRatio: median over median when the rounds do not pair up", () => {
    expect(pairedRatio([10, 20, 30], [5, 10])).toBe(20 / 7.5);
  });
});
