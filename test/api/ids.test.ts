import { describe, expect, it } from "vitest";
import {
  formatMicrosecondTimestamp,
  isHexId,
  isMicrosecondTimestamp,
  randomHexId,
  sequentialHexIds,
} from "../../src/api/ids";

describe("ids", () => {
  it("randomHexId: returns 32 lower-case hex characters", () => {
    for (let i = 0; i < 50; i++) expect(isHexId(randomHexId())).toBe(true);
  });
  it("sequentialHexIds: counts up from start", () => {
    const next = sequentialHexIds(255);
    expect(next()).toBe(`${"0".repeat(30)}ff`);
    expect(next()).toBe(`${"0".repeat(29)}100`);
  });
  it.each([
    ["372e67954025e0ba6aaa6d586b9e0b59", true],
    ["372E67954025E0BA6AAA6D586B9E0B59", false],
    ["372e67954025e0ba6aaa6d586b9e0b5", false],
    ["zone", false],
    [42, false],
  ])("isHexId: %s → %s", (value, expected) => {
    expect(isHexId(value)).toBe(expected);
  });
});

describe("timestamps", () => {
  it.each([
    ["2022-12-09T23:11:06.010263Z", true],
    ["2024-02-29T00:00:00.000000Z", true],
    ["2023-02-29T00:00:00.000000Z", false],
    ["2022-12-09T23:11:06Z", false],
    ["2022-12-09T23:11:06.010Z", false],
    ["2022-12-09T23:11:06.010263+00:00", false],
    ["2022-12-09 23:11:06.010263Z", false],
    ["2022-13-09T23:11:06.010263Z", false],
    ["2022-12-09T24:11:06.010263Z", false],
    [null, false],
  ])("isMicrosecondTimestamp: %s → %s", (value, expected) => {
    expect(isMicrosecondTimestamp(value)).toBe(expected);
  });
  it("formatMicrosecondTimestamp: pads milliseconds to six digits", () => {
    expect(formatMicrosecondTimestamp(Date.UTC(2022, 11, 9, 23, 11, 6, 10))).toBe("2022-12-09T23:11:06.010000Z");
    expect(isMicrosecondTimestamp(formatMicrosecondTimestamp(0))).toBe(true);
  });
});
