import { describe, expect, test } from "vitest";
import { PositioningCollector, rowsReadOf } from "../../../src/storage/sql/row-counting";

type Op = [address: number, opcode: string, p1: number, p2: number, p3?: number, p5?: number];

function factsOf(program: Op[], skip: (op: Op) => boolean = () => false) {
  const c = new PositioningCollector();
  for (const op of program) c.add(op[0], op[1], op[2], op[3], op[4] ?? 0, op[5] ?? 0, skip(op));
  return c.facts();
}

describe("row counting from a compiled program", () => {
  test("a full scan: one Rewind outside the loop, plus SQLite's steps", () => {
    const facts = factsOf([
      [0, "Init", 0, 6],
      [1, "OpenRead", 0, 2],
      [2, "Rewind", 0, 5],
      [3, "ResultRow", 1, 1],
      [4, "Next", 0, 3],
      [5, "Halt", 0, 0],
      [6, "Transaction", 0, 0],
      [7, "Goto", 0, 1],
    ]);
    expect(facts).toEqual({
      positionings: 1,
      equalitySeeks: 0,
      nestedPositionings: 0,
      loops: 1,
      atMostOneRow: false,
      straightLine: false,
      perChangedRow: 0,
      sorts: false,
      virtualLoops: 0,
    });
    expect(rowsReadOf(9, facts, true)).toBe(10);
  });

  test("code behind an unconditional Goto (a WHERE clause proved false) counts nothing", () => {
    const facts = factsOf([
      [0, "Init", 0, 9],
      [1, "Null", 0, 1],
      [2, "Goto", 0, 8],
      [3, "OpenWrite", 0, 2],
      [4, "Rewind", 0, 8],
      [5, "Rowid", 0, 2],
      [6, "Delete", 0, 1],
      [7, "Next", 0, 5],
      [8, "Halt", 0, 0],
      [9, "Transaction", 0, 1],
      [10, "Goto", 0, 1],
    ]);
    expect(facts).toEqual({
      positionings: 0,
      equalitySeeks: 0,
      nestedPositionings: 0,
      loops: 0,
      atMostOneRow: false,
      straightLine: true,
      perChangedRow: 0,
      sorts: false,
      virtualLoops: 0,
    });
  });

  test("a seek inside the only loop runs once per iteration (a join's inner lookup)", () => {
    const facts = factsOf([
      [0, "Init", 0, 8],
      [1, "Rewind", 0, 7],
      [2, "Rowid", 0, 1],
      [3, "SeekRowid", 1, 6, 1],
      [4, "Column", 1, 1, 2],
      [5, "ResultRow", 1, 2],
      [6, "Next", 0, 2],
      [7, "Halt", 0, 0],
      [8, "Goto", 0, 1],
    ]);
    expect(facts).toEqual({
      positionings: 1,
      equalitySeeks: 0,
      nestedPositionings: 1,
      loops: 1,
      atMostOneRow: false,
      straightLine: false,
      perChangedRow: 0,
      sorts: false,
      virtualLoops: 0,
    });
    // 10 outer rows: Rewind + 9 steps + 10 inner seeks
    expect(rowsReadOf(9, facts, true)).toBe(20);
  });

  test("an index equality seek counts only when the statement found a row", () => {
    const facts = factsOf([
      [0, "Init", 0, 5],
      [1, "SeekGE", 1, 4, 1, 0x02],
      [2, "IdxGT", 1, 4, 1],
      [3, "ResultRow", 1, 1],
      [4, "Halt", 0, 0],
      [5, "Goto", 0, 1],
    ]);
    expect(facts.equalitySeeks).toBe(1);
    expect(rowsReadOf(0, facts, false)).toBe(0);
    expect(rowsReadOf(0, facts, true)).toBe(1);
  });

  test("Return may fall through (a subroutine entered in line), and skipped positionings are left out", () => {
    const facts = factsOf(
      [
        [0, "Init", 0, 7],
        [1, "BeginSubrtn", 0, 2],
        [2, "Once", 0, 3],
        [3, "Return", 2, 3, 1],
        [4, "NotExists", 0, 5, 1],
        [5, "Rewind", 1, 6],
        [6, "Halt", 0, 0],
        [7, "Goto", 0, 1],
      ],
      (op) => op[1] === "NotExists",
    );
    expect(facts).toEqual({
      positionings: 1,
      equalitySeeks: 0,
      nestedPositionings: 0,
      loops: 0,
      atMostOneRow: false,
      straightLine: false,
      perChangedRow: 0,
      sorts: false,
      virtualLoops: 0,
    });
  });

  test("at most one row: one ResultRow and no way back, unlike a compound SELECT or a backward jump", () => {
    const lookup: Op[] = [
      [0, "Init", 0, 7],
      [1, "OpenRead", 0, 2],
      [2, "Variable", 1, 1],
      [3, "SeekRowid", 0, 6, 1],
      [4, "Column", 0, 1, 2],
      [5, "ResultRow", 2, 1],
      [6, "Halt", 0, 0],
      [7, "Transaction", 0, 0],
      [8, "Goto", 0, 1],
    ];
    expect(factsOf(lookup).atMostOneRow).toBe(true);
    const unionAll: Op[] = [
      [0, "Init", 0, 6],
      [1, "Integer", 1, 1],
      [2, "ResultRow", 1, 1],
      [3, "Integer", 2, 1],
      [4, "ResultRow", 1, 1],
      [5, "Halt", 0, 0],
      [6, "Goto", 0, 1],
    ];
    expect(factsOf(unionAll).atMostOneRow).toBe(false);
    const backward: Op[] = [
      [0, "Init", 0, 5],
      [1, "Integer", 1, 1],
      [2, "ResultRow", 1, 1],
      [3, "IfPos", 1, 2, 1],
      [4, "Halt", 0, 0],
      [5, "Goto", 0, 1],
    ];
    expect(factsOf(backward).atMostOneRow).toBe(false);
  });
});
