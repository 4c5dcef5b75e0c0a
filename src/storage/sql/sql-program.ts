/**
 * A statement's compiled program, as `EXPLAIN` lists it: the one input that both the access
 * decision (sql-access.ts) and the row counting (row-counting.ts) read, compiled once per
 * statement text and schema version.
 */
import type { SqlEngine } from "../../engine/engine";

/** One opcode of a program. */
export interface ProgramOp {
  readonly address: number;
  readonly opcode: string;
  readonly p1: number;
  readonly p2: number;
  readonly p3: number;
  readonly p4: unknown;
  readonly p5: number;
  /**
   * 0 for the main program; sub-programs (triggers, foreign-key actions) follow it, each starting
   * again at address 0 with cursor numbers of its own, and get 1, 2, …
   */
  readonly segment: number;
}

/** `OPFLAG_P2ISREG`: P2 of an `Open*` opcode is a register, not a root page. */
export const OPFLAG_P2ISREG = 0x10;

/** The program of `sql` (one statement SQLite has already compiled once). */
export function explainProgram(engine: SqlEngine, sql: string): ProgramOp[] {
  const ops: ProgramOp[] = [];
  let segment = 0;
  let previousAddress = -1;
  for (const row of engine.query(`EXPLAIN ${sql}`)) {
    const address = Number(row[0]);
    if (address <= previousAddress) segment++;
    previousAddress = address;
    ops.push({
      address,
      opcode: String(row[1]),
      p1: Number(row[2]),
      p2: Number(row[3]),
      p3: Number(row[4]),
      p4: row[5],
      p5: Number(row[6]),
      segment,
    });
  }
  return ops;
}
