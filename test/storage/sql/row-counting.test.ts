import { describe, expect, test } from "vitest";
import { countingVerdict } from "../../../src/storage/sql/row-counting";
import type { ProgramOp } from "../../../src/storage/sql/sql-program";

type Op = [address: number, opcode: string, p1: number, p2: number, p3?: number];

const program = (ops: Op[], segment = 0): ProgramOp[] =>
  ops.map(([address, opcode, p1, p2, p3]) => ({ address, opcode, p1, p2, p3: p3 ?? 0, p4: null, p5: 0, segment }));

describe("what the cursor reads off a compiled program", () => {
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
    expect(countingVerdict(program(lookup)).atMostOneRow).toBe(true);
    const unionAll: Op[] = [
      [0, "Init", 0, 6],
      [1, "Integer", 1, 1],
      [2, "ResultRow", 1, 1],
      [3, "Integer", 2, 1],
      [4, "ResultRow", 1, 1],
      [5, "Halt", 0, 0],
      [6, "Goto", 0, 1],
    ];
    expect(countingVerdict(program(unionAll)).atMostOneRow).toBe(false);
    const backward: Op[] = [
      [0, "Init", 0, 5],
      [1, "Integer", 1, 1],
      [2, "ResultRow", 1, 1],
      [3, "IfPos", 1, 2, 1],
      [4, "Halt", 0, 0],
      [5, "Goto", 0, 1],
    ];
    expect(countingVerdict(program(backward)).atMostOneRow).toBe(false);
    const scan: Op[] = [
      [0, "Init", 0, 6],
      [1, "OpenRead", 0, 2],
      [2, "Rewind", 0, 5],
      [3, "ResultRow", 1, 1],
      [4, "Next", 0, 3],
      [5, "Halt", 0, 0],
      [6, "Goto", 0, 1],
    ];
    expect(countingVerdict(program(scan)).atMostOneRow).toBe(false);
  });

  test("a second ResultRow behind an unconditional Goto never runs; sub-programs are not the main program", () => {
    const proved: Op[] = [
      [0, "Init", 0, 6],
      [1, "Integer", 1, 1],
      [2, "ResultRow", 1, 1],
      [3, "Goto", 0, 5],
      [4, "ResultRow", 1, 1],
      [5, "Halt", 0, 0],
      [6, "Goto", 0, 1],
    ];
    const trigger: Op[] = [
      [0, "Init", 0, 1],
      [1, "Rewind", 0, 3],
      [2, "Next", 0, 2],
      [3, "Halt", 0, 0],
    ];
    expect(countingVerdict([...program(proved), ...program(trigger, 1)]).atMostOneRow).toBe(true);
    expect(countingVerdict([]).atMostOneRow).toBe(false);
  });
});
