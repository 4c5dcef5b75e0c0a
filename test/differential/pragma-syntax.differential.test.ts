/**
 * A PRAGMA that SQLite cannot parse fails with SQLite's parse error on workerd, even when the
 * pragma or its value would be refused: SQLite parses the statement before the platform's
 * authorizer sees the pragma. `PRAGMA foreign_keys = x'01'` is `near "x'01'": syntax error`, not
 * `not authorized`. A refused PRAGMA that parses is still `not authorized`, and the guard never
 * compiles the refused text to find out (pragma-syntax.ts). Compared through Miniflare.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Op } from "./ops";
import { runOnSubject } from "./subject";
import { startWorkerd, type WorkerdHandle } from "./workerd";

let workerd: WorkerdHandle;
beforeAll(async () => {
  workerd = await startWorkerd();
});
afterAll(async () => {
  await workerd?.dispose();
});

/** Each statement alone on a fresh object, then `PRAGMA foreign_keys` to show what it left set. */
async function expectSameAsWorkerd(queries: readonly string[]): Promise<void> {
  for (const query of queries) {
    const ops: Op[] = [
      { op: "sql", query, read: "toArray" },
      { op: "sql", query: "PRAGMA foreign_keys", read: "toArray" },
    ];
    const expected = await workerd.run(ops);
    expect({ query, result: await runOnSubject(ops) }).toEqual({ query, result: expected });
  }
}

describe("sql differential: PRAGMA values SQLite's grammar has no place for", () => {
  it("a blob, NULL, a parameter, a parenthesized or negated word: SQLite's parse error, with its offset", async () => {
    await expectSameAsWorkerd([
      "PRAGMA foreign_keys = x'01'",
      "PRAGMA foreign_keys = X'00'",
      "PRAGMA foreign_keys(x'01')",
      "PRAGMA foreign_keys = NULL",
      "PRAGMA foreign_keys = ?",
      "PRAGMA foreign_keys = :a",
      "PRAGMA foreign_keys = (1)",
      "PRAGMA foreign_keys = -on",
      "PRAGMA foreign_keys = -'on'",
      "PRAGMA foreign_keys = -x'01'",
      "PRAGMA foreign_keys = x'zz'",
      "PRAGMA foreign_keys = 'x' x'01'",
      "PRAGMA foreign_keys = x'01'; SELECT 1",
      "PRAGMA foreign_keys = x'01'  -- a comment",
    ]);
  }, 120_000);

  it("also behind a schema, a quoted name, EXPLAIN, or for a pragma refused by name", async () => {
    await expectSameAsWorkerd([
      "PRAGMA main.foreign_keys = x'01'",
      "PRAGMA temp.foreign_keys = x'01'",
      "PRAGMA nosuch.foreign_keys = x'01'",
      "PRAGMA \"foreign_keys\" = x'01'",
      "PRAGMA 'foreign_keys' = x'01'",
      "EXPLAIN PRAGMA writable_schema = x'01'",
      "PRAGMA writable_schema = x'01'",
      "PRAGMA main.writable_schema = x'01'",
      "PRAGMA optimize = x'01'",
      "PRAGMA data_version = x'01'",
      "PRAGMA select = x'01'",
      "PRAGMA",
    ]);
  }, 120_000);

  it("a refused PRAGMA that parses is still not authorized, and changes nothing", async () => {
    await expectSameAsWorkerd([
      "PRAGMA writable_schema = 1",
      "PRAGMA main.writable_schema = ON",
      "PRAGMA temp.foreign_keys = 1",
      "PRAGMA foreign_keys = 'x'",
      "PRAGMA foreign_keys = .5",
      "PRAGMA foreign_keys = CURRENT_TIME",
      "PRAGMA foreign_keys = 1.5",
      "PRAGMA foreign_keys = 0x1",
    ]);
  }, 120_000);
});
