/**
 * Programs whose row counts need no rewritten copy (sqljs-row-counters.ts): those in which every
 * run that completes counts the same reads and writes, so that the counts follow from the run
 * having completed.
 *
 * The copy counts a site each time the opcode at its address runs (sqljs-program-rewrite.ts). A
 * run that completes (its step returns `SQLITE_DONE`) went along one path of the program's control
 * flow, from its first op to a `Halt` whose result is `SQLITE_OK`. When every such path passes the
 * same counted sites the same number of times, every completed run counts the same: a plain
 * `INSERT … VALUES (…)` reads 1 (its rowid check, `NotExists`, runs whether the rowid was given or
 * made) and writes 1 per table and index entry, whatever its values. That is decided here on the
 * control flow graph, for programs made only of the opcodes listed below, whose ways of passing
 * control on are known: each either always falls through, or may fall through or jump to its P2
 * (treating a conditional jump as possibly taken either way only adds paths, which can only make a
 * program fail the check). Any other opcode (loops, sorts, seeks whose count depends on their key,
 * sub-programs for triggers and foreign keys, coroutines, subroutines, `RETURNING`'s rows), a
 * cycle, a jump outside the program, or two completing paths that count differently, and the
 * program is counted by its rewritten copy as before.
 *
 * None of these opcodes moves SQLite's step or sort counters, which the copy's reads also include,
 * so those add nothing to a completed run here. A run that fails counts nothing this way (the copy
 * counts the sites passed before the error); the storage never shows a failed statement's counts.
 */

import type { Op, ProgramLayout, Site } from "./sqljs-program-rewrite";

/** What every completed run of a program counts (see the module comment). */
export interface CountsPerRun {
  readonly read: number;
  readonly written: number;
}

/** Opcodes that always go on to the next op (or fail), and never touch a cursor's position but to write. */
const FALLS_THROUGH = new Set(
  (
    "Transaction OpenWrite SoftNull Variable Integer Int64 Real String8 String Null Blob SCopy Copy " +
    "IntCopy NewRowid MakeRecord Affinity TypeCheck Noop Insert IdxInsert Function PureFunc CollSeq " +
    "Concat Add Subtract Multiply Divide Remainder BitAnd BitOr ShiftLeft ShiftRight BitNot Not Cast " +
    "RealAffinity AddImm ZeroOrNull"
  ).split(" "),
);
/**
 * Opcodes that go on to the next op or jump to their P2 (or fail): the null and type checks,
 * comparisons (CHECK constraints), the rowid check of an insert (`NotExists`), the unique-index
 * checks (`NoConflict`, `Found`, `NotFound`; not counted on the platform), `Once`.
 */
const BRANCHES = new Set(
  "NotNull IsNull NotExists NoConflict Found NotFound Eq Ne Lt Le Gt Ge If IfNot Once IsType".split(" "),
);
/** Programs longer than this are not analysed (the analysis recurses once per op on a path). */
const MAX_OPS = 2_000;

/**
 * What every completed run of the main program `ops` counts, or `undefined` when that is not the
 * same for every run or not known (see the module comment). `sites` are the counting sites the
 * rewrite would give the program (asked for only once its opcodes qualify); any site other than a
 * read or write counted at the op's own address disqualifies it.
 */
export function countsPerRun(
  ops: readonly Op[],
  layout: ProgramLayout,
  sites: () => readonly Site[] | undefined,
): CountsPerRun | undefined {
  const n = ops.length;
  if (n === 0 || n > MAX_OPS) return undefined;
  // Where each op goes next: -1 never falls through, and whether it may end a run that completes.
  const next: number[] = new Array<number>(n);
  const jump: number[] = new Array<number>(n);
  const completes: boolean[] = new Array<boolean>(n);
  for (let a = 0; a < n; a++) {
    const op = ops[a] as Op;
    const name = layout.names[op.opcode] ?? "";
    next[a] = a + 1;
    jump[a] = -1;
    completes[a] = false;
    if (name === "Init" || name === "Goto") {
      next[a] = -1;
      jump[a] = op.p2;
    } else if (name === "Halt") {
      next[a] = -1;
      completes[a] = op.p1 === 0;
    } else if (name === "HaltIfNull") {
      completes[a] = op.p1 === 0;
    } else if (name === "MustBeInt") {
      // With P2 = 0 a value that is no integer fails the run instead of jumping.
      if (op.p2 !== 0) jump[a] = op.p2;
    } else if (BRANCHES.has(name)) {
      jump[a] = op.p2;
    } else if (!FALLS_THROUGH.has(name)) {
      return undefined;
    }
    const to = jump[a] as number;
    if (to !== -1 && (to < 0 || to >= n)) return undefined;
    if (next[a] === n) return undefined; // falls off the end: never in SQLite's programs
  }
  const counted = sites();
  if (counted === undefined) return undefined;
  const reads = new Uint8Array(n);
  const writes = new Uint8Array(n);
  for (const site of counted) {
    if (site.at >= n || (site.kind !== "read" && site.kind !== "write")) return undefined;
    const tally = site.kind === "read" ? reads : writes;
    tally[site.at] = (tally[site.at] as number) + 1;
  }
  // Depth-first from the first op: each op's counts from there to the end of a completed run,
  // the same along every such path, or the program does not qualify.
  const OPEN = 1;
  const DONE = 2;
  const state = new Uint8Array(n);
  // Each op is unseen (0), open (on the current path) or done.
  /** -1: no completing path from the op; -2: paths that count differently (or a cycle). */
  const readFrom = new Int32Array(n);
  const writtenFrom = new Int32Array(n);
  const visit = (a: number): boolean => {
    if (state[a] === DONE) return (readFrom[a] as number) !== -2;
    if (state[a] === OPEN) return false; // a cycle
    state[a] = OPEN;
    let read = -1;
    let written = 0;
    const join = (r: number, w: number): boolean => {
      if (read === -1) {
        read = r;
        written = w;
        return true;
      }
      return read === r && written === w;
    };
    let ok = !completes[a] || join(0, 0);
    for (const to of [next[a] as number, jump[a] as number]) {
      if (!ok || to === -1) continue;
      ok = visit(to);
      const r = readFrom[to] as number;
      if (ok && r >= 0) ok = join(r, writtenFrom[to] as number);
    }
    state[a] = DONE;
    if (!ok) {
      readFrom[a] = -2;
      return false;
    }
    readFrom[a] = read === -1 ? -1 : read + (reads[a] as number);
    writtenFrom[a] = read === -1 ? 0 : written + (writes[a] as number);
    return true;
  };
  if (!visit(0) || (readFrom[0] as number) < 0) return undefined;
  return { read: readFrom[0] as number, written: writtenFrom[0] as number };
}
