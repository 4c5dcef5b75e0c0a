/**
 * What the storage needs to know about a statement's program for its row counters and cursor,
 * beyond what the engine counts itself.
 *
 * The counts themselves come from the engine: SQLite counts the platform's reads and writes in a
 * rewritten copy of the program as it runs (engine/sqljs-row-counters.ts). What is left here is
 * one fact read off the program (`EXPLAIN`): whether it can produce at most one row, so that the
 * cursor need not step past that row to learn there is no other.
 */

import type { ProgramOp } from "./sql-program";

/** The counting facts of one program. */
export interface CountingVerdict {
  /**
   * The program can produce at most one row: one `ResultRow`, no backward jump (but the prologue's
   * jump back to the start), no subroutines, coroutines or loops. Its cursor need not step past that
   * row to learn there is no other.
   */
  readonly atMostOneRow: boolean;
}

/** A statement without a program of its own to analyse (pragmas, EXPLAIN). */
export const NO_COUNTING: CountingVerdict = Object.freeze({ atMostOneRow: false });

/** Opcodes that can run code more than once, or whose jump targets are dynamic. */
const REPEATING_OPCODES = new Set([
  "Gosub",
  "Return",
  "Yield",
  "InitCoroutine",
  "EndCoroutine",
  "Program",
  "Jump",
  "VNext",
]);
/**
 * Opcodes after which execution never falls through to the next address. (`Return` may: with P3
 * set it falls through when its subroutine was entered in line.)
 */
const NO_FALL_THROUGH = new Set([
  "Goto",
  "Halt",
  "Init",
  // Falls through only while a foreign-key violation is outstanding (a deferred one, or one an
  // earlier row left): the parent-key re-check behind it normally never runs.
  "FkIfZero",
]);
/**
 * Opcodes whose P2 is a jump target (SQLite's opcodes flagged "jump", plus `Init`). Any other
 * opcode's P2 is a register, a flag or a root page, not an address.
 */
const JUMP_OPCODES = new Set([
  "Goto",
  "Gosub",
  "InitCoroutine",
  "Init",
  "Once",
  "If",
  "IfNot",
  "IsNull",
  "NotNull",
  "IsType",
  "Eq",
  "Ne",
  "Lt",
  "Le",
  "Gt",
  "Ge",
  "ElseEq",
  "Jump",
  "IfPos",
  "IfNotZero",
  "DecrJumpZero",
  "IfNullRow",
  "IfNoHope",
  "IfSmaller",
  "IfEmpty",
  "MustBeInt",
  "SeekScan",
  "Filter",
  "FkIfZero",
  "SequenceTest",
  "RowSetRead",
  "RowSetTest",
  "Program",
  "VFilter",
  "VNext",
  "Rewind",
  "Last",
  "Next",
  "Prev",
  "SorterNext",
  "SorterSort",
  "Sort",
  "SeekRowid",
  "NotExists",
  "NotFound",
  "Found",
  "NoConflict",
  "SeekGE",
  "SeekGT",
  "SeekLE",
  "SeekLT",
  "IdxGE",
  "IdxGT",
  "IdxLE",
  "IdxLT",
  "Yield",
]);

/**
 * Reads the counting facts off the main program. Code that SQLite compiled but can never run (a
 * loop behind an unconditional `Goto`, as for a WHERE clause it proved false) is left out.
 */
export function countingVerdict(program: readonly ProgramOp[]): CountingVerdict {
  const main = program.filter((op) => op.segment === 0);
  if (main.length === 0) return NO_COUNTING;
  const reachable = reachableAddresses(main);
  let resultRows = 0;
  let repeats = false;
  for (const op of main) {
    if (!reachable.has(op.address)) continue;
    if (op.opcode === "ResultRow") resultRows++;
    // The prologue (`Init` to the end, `Goto` back to 1) is the one backward jump every program has.
    // A jump opcode with P2 = 0 does not jump (MustBeInt then raises an error instead).
    const backward =
      JUMP_OPCODES.has(op.opcode) && op.p2 > 0 && op.p2 <= op.address && !(op.opcode === "Goto" && op.p2 === 1);
    if (backward || REPEATING_OPCODES.has(op.opcode)) repeats = true;
  }
  return { atMostOneRow: resultRows === 1 && !repeats };
}

/** Addresses reachable from the start (over-approximated where the target is dynamic). */
function reachableAddresses(program: readonly ProgramOp[]): Set<number> {
  const byAddress = new Map(program.map((op) => [op.address, op]));
  const seen = new Set<number>();
  const todo = [0];
  for (let at = todo.pop(); at !== undefined; at = todo.pop()) {
    const op = byAddress.get(at);
    if (op === undefined || seen.has(at)) continue;
    seen.add(at);
    if (!NO_FALL_THROUGH.has(op.opcode)) todo.push(at + 1);
    if (JUMP_OPCODES.has(op.opcode)) todo.push(op.p2);
    // Jump has three targets; InitCoroutine's body starts at P3; Return, EndCoroutine and Yield
    // go back to wherever they were called from, which is reachable already.
    if (op.opcode === "Jump") todo.push(op.p1, op.p3);
    if (op.opcode === "InitCoroutine") todo.push(op.p3);
  }
  return seen;
}
