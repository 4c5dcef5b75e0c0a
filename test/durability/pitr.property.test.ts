/**
 * Point-in-time recovery as a property (the workload and the property are in pitr-workload.ts):
 * restoring any bookmark of a random mixed key-value + SQL history, in any order and undoing
 * restores, reproduces the bookmark's full logical dump; reopening reproduces the live database.
 */
import fc from "fast-check";
import { describe, test } from "vitest";
import { pitrProperty } from "./pitr-workload";

describe("point-in-time recovery (property)", () => {
  test("onNextSessionRestoreBookmark: restoring any bookmark, in any order, reproduces its dump exactly", async () => {
    await fc.assert(pitrProperty({ strict: true, rowidOverflow: false }), { numRuns: 60 });
  });
});
