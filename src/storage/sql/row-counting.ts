/**
 * What the row counters need to know about a compiled program, beyond what SQLite counts itself.
 *
 * The platform's counters (libSQL's patch) add a read each time certain opcodes run: a loop start
 * (`Rewind`, `Last`, a sort), a loop step onto a row, a seek (an equality seek on an index only when
 * it finds its key), a `VNext`, and a table's size for `count(*)`; and a write for each table or
 * index insert and each delete that counts as a change. SQLite counts the loop steps and the sorts
 * itself (`EngineStatement.scanSteps`, `sortRuns`); the other starts and seeks are read off the
 * program (`EXPLAIN`) here, once per statement: a positioning opcode outside any loop runs once; one
 * inside a loop runs once per iteration of that loop (a join's inner seek), which is known exactly
 * only when the program has a single loop (its iterations are its steps plus one), or when the loop
 * is an UPDATE's or DELETE's pass over the rows it changed. Sub-programs (triggers, foreign-key
 * actions) are not followed: their counts are missing (docs/sql.md lists where).
 */

import type { SchemaObject, SqlCatalog } from "./sql-catalog";
import { OPFLAG_P2ISREG, type ProgramOp } from "./sql-program";

/** Opcodes that position a cursor on a row (or find there is none): each counts one row read. */
const POSITIONING_OPCODES = new Set([
  "Rewind",
  "Last",
  "SeekRowid",
  "NotExists",
  "SeekGE",
  "SeekGT",
  "SeekLE",
  "SeekLT",
]);
/**
 * Sorts (`Sort`, `SorterSort`) position a sorter on its first row and count like a `Rewind`; SQLite
 * counts how often they run (`EngineStatement.sortRuns`), so they are taken from there, exactly,
 * also when a sort runs once per group of rows (an ORDER BY that an index half satisfies).
 */
const SORT_OPCODES = new Set(["Sort", "SorterSort"]);
/** Opcodes that step a loop (counted by SQLite; they jump back to the loop's body). */
const LOOP_OPCODES = new Set(["Next", "Prev", "SorterNext"]);

/** Positionings of one program, for `rowsRead`. */
export interface PositioningFacts {
  /** Positioning opcodes outside every loop (each runs at most once per run). */
  readonly positionings: number;
  /**
   * Equality seeks outside every loop (`SeekGE`/`SeekLE` with `OPFLAG_SEEKEQ`): the platform counts
   * one only when it finds a match, which we take as "the statement found a row".
   */
  readonly equalitySeeks: number;
  /** Positioning opcodes inside a loop (each runs once per iteration of its loop). */
  readonly nestedPositionings: number;
  /** Loops in the program (backward-jumping `Next`/`Prev`/`SorterNext`). */
  readonly loops: number;
  /**
   * Positioning opcodes inside a loop that a backward `Goto` closes (an UPDATE's or DELETE's second
   * pass over the rows it collected, `RowSetRead`): each runs once per changed row.
   */
  readonly perChangedRow: number;
  /**
   * The program can produce at most one row: one `ResultRow`, no backward jump (but the prologue's
   * jump back to the start), no subroutines or coroutines. Its cursor need not step past that row
   * to learn there is no other.
   */
  readonly atMostOneRow: boolean;
  /**
   * The program runs each opcode at most once: no loop, no backward jump (but the prologue's), no
   * subroutine, coroutine or sub-program. An INSERT of this shape tries exactly one row.
   */
  readonly straightLine: boolean;
  /**
   * Whether the program sorts (its sorts are counted by SQLite, see {@link SORT_OPCODES}).
   */
  readonly sorts: boolean;
  /**
   * Loops over a virtual table (`VNext`: the pragma functions). The platform counts every `VNext`,
   * the one that finds the end included: one per row the table produced.
   */
  readonly virtualLoops: number;
}

/** A program that positions nothing (no table access, or not analysed). */
export const NO_POSITIONING: PositioningFacts = Object.freeze({
  positionings: 0,
  equalitySeeks: 0,
  nestedPositionings: 0,
  loops: 0,
  perChangedRow: 0,
  atMostOneRow: false,
  straightLine: false,
  sorts: false,
  virtualLoops: 0,
});
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
/** `OPFLAG_SEEKEQ` in P5 of a seek: only an equal key will do. */
const OPFLAG_SEEKEQ = 0x02;

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

interface CollectedOp {
  readonly address: number;
  readonly opcode: string;
  readonly p1: number;
  readonly p2: number;
  readonly p3: number;
  readonly p5: number;
  readonly skip: boolean;
}

/**
 * Collects the positionings of a main program, opcode by opcode, in address order. Code that
 * SQLite compiled but can never run (a loop behind an unconditional `Goto`, as for a WHERE clause
 * it proved false) is left out.
 */
export class PositioningCollector {
  readonly #ops: CollectedOp[] = [];

  /** Records one opcode of the main program. `skip` leaves a positioning out (counted elsewhere). */
  add(address: number, opcode: string, p1: number, p2: number, p3: number, p5: number, skip = false): void {
    this.#ops.push({ address, opcode, p1, p2, p3, p5, skip });
  }

  /** The totals. */
  facts(): PositioningFacts {
    const reachable = this.#reachable();
    const loops: Array<[number, number]> = [];
    const gotoLoops: Array<[number, number]> = [];
    const positions: CollectedOp[] = [];
    let resultRows = 0;
    let repeats = false;
    let virtualLoops = 0;
    let sorts = false;
    for (const op of this.#ops) {
      if (!reachable.has(op.address)) continue;
      if (POSITIONING_OPCODES.has(op.opcode) && !op.skip) positions.push(op);
      else if (LOOP_OPCODES.has(op.opcode) && op.p2 <= op.address) loops.push([op.p2, op.address]);
      else if (op.opcode === "Goto" && op.p2 <= op.address && op.p2 !== 1) gotoLoops.push([op.p2, op.address]);
      if (op.opcode === "ResultRow") resultRows++;
      if (op.opcode === "VNext") virtualLoops++;
      if (SORT_OPCODES.has(op.opcode)) sorts = true;
      // The prologue (`Init` to the end, `Goto` back to 1) is the one backward jump every program has.
      // A jump opcode with P2 = 0 does not jump (MustBeInt then raises an error instead).
      const backward =
        JUMP_OPCODES.has(op.opcode) && op.p2 > 0 && op.p2 <= op.address && !(op.opcode === "Goto" && op.p2 === 1);
      if (backward || REPEATING_OPCODES.has(op.opcode)) repeats = true;
    }
    let positionings = 0;
    let equalitySeeks = 0;
    let nested = 0;
    let perChangedRow = 0;
    const inside = (ranges: Array<[number, number]>, address: number) =>
      ranges.some(([from, to]) => address >= from && address <= to);
    for (const op of positions) {
      if (inside(loops, op.address)) nested++;
      else if (inside(gotoLoops, op.address)) perChangedRow++;
      else if (this.#isEqualitySeek(op)) equalitySeeks++;
      else positionings++;
    }
    const atMostOneRow = resultRows === 1 && !repeats;
    return {
      positionings,
      equalitySeeks,
      nestedPositionings: nested,
      loops: loops.length,
      perChangedRow,
      atMostOneRow,
      straightLine: !repeats && loops.length === 0,
      sorts,
      virtualLoops,
    };
  }

  /**
   * Whether a seek only stops on an equal key. SQLite marks such seeks (`OPFLAG_SEEKEQ`), and a
   * marked seek is always followed by the range check on the same cursor and key (`IdxGT` after
   * `SeekGE`, `IdxLT` after `SeekLE`). The platform's newer SQLite marks every seek of that shape,
   * the equality lookup on an index (`WHERE indexed = ?`), where sql.js's leaves some unmarked; the
   * shape decides, so both count the same: nothing when no equal key exists.
   */
  #isEqualitySeek(op: CollectedOp): boolean {
    if (op.opcode !== "SeekGE" && op.opcode !== "SeekLE") return false;
    if ((op.p5 & OPFLAG_SEEKEQ) !== 0) return true;
    const check = this.#ops.find((o) => o.address === op.address + 1);
    const closing = op.opcode === "SeekGE" ? "IdxGT" : "IdxLT";
    return check !== undefined && check.opcode === closing && check.p1 === op.p1 && check.p3 === op.p3;
  }

  /** Whether the opcode at `address` can run (call after the last {@link PositioningCollector.add}). */
  reachable(address: number): boolean {
    this.#reachableCache ??= this.#reachable();
    return this.#reachableCache.has(address);
  }

  #reachableCache: Set<number> | undefined;

  /** Addresses reachable from the start (over-approximated where the target is dynamic). */
  #reachable(): Set<number> {
    const byAddress = new Map(this.#ops.map((op) => [op.address, op]));
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
}

/**
 * Rows read by the platform's rules, from the loop steps taken so far, the program's facts and
 * whether the statement found any row (produced, changed or stepped onto one), and for an UPDATE or
 * DELETE the rows it changed.
 *
 * @example
 * ```ts
 * // SELECT * FROM t (10 rows, a full scan): one Rewind, nine steps.
 * rowsReadOf(9, { ...NO_POSITIONING, positionings: 1, loops: 1 }, true); // 10
 * ```
 */
export function rowsReadOf(steps: number, facts: PositioningFacts, found: boolean, rowsChanged?: number): number {
  // With several loops, an UPDATE or DELETE first collects the rows to change, then visits each
  // with a rowid seek: its nested seeks run once per changed row.
  const iterations = facts.loops === 1 ? steps + 1 : (rowsChanged ?? 1);
  const seeks = found ? facts.equalitySeeks : 0;
  return (
    steps +
    facts.positionings +
    seeks +
    facts.nestedPositionings * iterations +
    facts.perChangedRow * (rowsChanged ?? 1)
  );
}

/**
 * What the row counters need from one statement's program: the one verdict of row counting (the
 * access decision, sql-access.ts, has its own).
 */
export interface CountingVerdict {
  /** B-tree writes the platform counts per changed row (see {@link ROW_WRITE_OPCODES}), for `rowsWritten`. */
  readonly writesPerRow: number;
  /** The table whose rows `count(*)` counts without visiting them (`Count` opcode), if any. */
  readonly countTable: string | undefined;
  /** Rowid lookups per inserted row (`NotExists`: an explicit rowid, a foreign-key parent), for `rowsRead`. */
  readonly seeksPerInsert: number;
  /** Rows the program writes into `sqlite_schema` (CREATE TABLE: its row, written twice, plus one per automatic index). */
  readonly schemaWrites: number;
  /** Loop starts and seeks, for `rowsRead`. */
  readonly positioning: PositioningFacts;
  /**
   * What each sub-program (a trigger, a foreign-key action) adds per changed row, counting only its
   * code outside loops: its table and index writes, and its seeks. The platform counts a
   * sub-program's work like the main program's; its loops (a cascade over child rows) depend on the
   * data and are not modelled.
   */
  readonly perRowSubprogram: { readonly reads: number; readonly writes: number };
  /**
   * The table a `CREATE INDEX` reads to build the index (a scan into a sorter, then one index
   * insert per sorted entry), if the program builds one.
   */
  readonly indexBuild: string | undefined;
}

/** A statement without a program of its own to count (pragmas, EXPLAIN). */
export const NO_COUNTING: CountingVerdict = Object.freeze({
  writesPerRow: 0,
  countTable: undefined,
  seeksPerInsert: 0,
  schemaWrites: 0,
  positioning: NO_POSITIONING,
  perRowSubprogram: { reads: 0, writes: 0 },
  indexBuild: undefined,
});

/**
 * Opcodes the platform counts in `rowsWritten` (measured, see docs/sql.md): every table and index
 * insert, and a table delete only when it counts as a change (`OPFLAG_NCHANGE` in P5: a DELETE's
 * rows, not the old row an UPDATE rewrites or a REPLACE removes). Index deletes are not counted.
 */
const ROW_WRITE_OPCODES = new Set(["Insert", "IdxInsert", "Delete"]);
/** `OPFLAG_NCHANGE`: the write counts as a change (`sqlite3_changes`). */
const OPFLAG_NCHANGE = 0x01;

/** Reads the counting facts off the main program (sub-programs count through SQLite's changes). */
export function countingVerdict(program: readonly ProgramOp[], catalog: SqlCatalog, kind: string): CountingVerdict {
  if (program.length === 0) return NO_COUNTING;
  const positions = new PositioningCollector();
  const cursors = new Map<number, { object: SchemaObject | undefined; write: boolean }>();
  let writesPerRow = 0;
  let countTable: string | undefined;
  let seeksPerInsert = 0;
  let sorter = false;
  let indexBuild: string | undefined;
  /** Where the program writes `sqlite_schema` rows (CREATE TABLE skips its automatic index's row WITHOUT ROWID). */
  const schemaInserts: number[] = [];
  for (const { address, opcode, p1, p2, p3, p5, segment } of program) {
    if (segment !== 0) break;
    // An INSERT's rowid lookups run once per inserted row: counted from the changes instead.
    positions.add(address, opcode, p1, p2, p3, p5, kind === "insert" && opcode === "NotExists");
    switch (opcode) {
      case "OpenRead":
      case "ReopenIdx":
      case "OpenWrite":
        if (p3 === 0) {
          const object = (p5 & OPFLAG_P2ISREG) !== 0 ? undefined : catalog.byRoot(p2);
          cursors.set(p1, { object, write: opcode === "OpenWrite" });
        }
        break;
      case "NotExists":
        seeksPerInsert++;
        break;
      case "Count":
        countTable = cursors.get(p1)?.object?.table;
        break;
      case "SorterOpen":
        sorter = true;
        break;
      case "Rewind":
        // CREATE INDEX: the scan that fills the sorter starts after the sorter opened.
        if (kind === "create" && sorter && indexBuild === undefined) indexBuild = cursors.get(p1)?.object?.table;
        break;
      default:
        if (ROW_WRITE_OPCODES.has(opcode) && (opcode !== "Delete" || (p5 & OPFLAG_NCHANGE) !== 0)) {
          const cursor = cursors.get(p1);
          if (cursor?.write && cursor.object !== undefined) {
            if (cursor.object.table !== "sqlite_schema") writesPerRow++;
            else if (opcode === "Insert") schemaInserts.push(address);
          }
        }
    }
  }
  const schemaWrites = schemaInserts.filter((address) => positions.reachable(address)).length;
  const perRowSubprogram = subprogramCounts(program, catalog);
  return {
    writesPerRow,
    countTable,
    seeksPerInsert,
    schemaWrites,
    positioning: positions.facts(),
    perRowSubprogram,
    indexBuild,
  };
}

/**
 * The counters of a `CREATE INDEX` that built its index: the scan of the table (its `Rewind` and
 * steps), the sorter (its `SorterSort` and steps), one index insert per entry plus the schema row
 * written; and the repositionings of the index cursor before an insert (`SeekEnd` counts when the
 * cursor is not on a row: before the first insert into the empty index, and once more after it,
 * measured on workerd; an index spanning several pages repositions more often, which this does
 * not model).
 *
 * @param steps loop steps taken (table and sorter together)
 * @param tableRows rows in the table
 */
export function indexBuildCounts(steps: number, tableRows: number, schemaWrites: number): [number, number] {
  // Steps are (rows - 1) in the table loop and (entries - 1) in the sorter loop (none when empty).
  const tableSteps = Math.max(tableRows - 1, 0);
  const entries = tableRows === 0 ? 0 : steps - tableSteps + 1;
  return [steps + 2 + Math.min(entries, 2), entries + schemaWrites];
}

/** Positioning opcodes a sub-program's straight-line code can run (each counts one read). */
const SUBPROGRAM_SEEKS = new Set(["SeekRowid", "NotExists", "Rewind", "Last", "SeekGE", "SeekGT", "SeekLE", "SeekLT"]);

/** Sums, over the sub-programs, the reads and writes of their code outside loops (see {@link CountingVerdict}). */
function subprogramCounts(program: readonly ProgramOp[], catalog: SqlCatalog): { reads: number; writes: number } {
  let reads = 0;
  let writes = 0;
  const segments = new Map<number, ProgramOp[]>();
  for (const op of program) {
    if (op.segment === 0) continue;
    let ops = segments.get(op.segment);
    if (ops === undefined) segments.set(op.segment, (ops = []));
    ops.push(op);
  }
  for (const ops of segments.values()) {
    const loops = ops
      .filter((op) => LOOP_OPCODES.has(op.opcode) && op.p2 <= op.address)
      .map((op) => [op.p2, op.address]);
    const inLoop = (address: number) => loops.some(([from, to]) => address >= (from ?? 0) && address <= (to ?? 0));
    const writable = new Set<number>();
    for (const op of ops) {
      if (op.opcode === "OpenWrite" && op.p3 === 0 && (op.p5 & OPFLAG_P2ISREG) === 0) {
        const object = catalog.byRoot(op.p2);
        if (object !== undefined && object.table !== "sqlite_schema") writable.add(op.p1);
      }
      if (inLoop(op.address)) continue;
      if (SUBPROGRAM_SEEKS.has(op.opcode)) reads++;
      else if (ROW_WRITE_OPCODES.has(op.opcode) && writable.has(op.p1)) {
        if (op.opcode !== "Delete" || (op.p5 & OPFLAG_NCHANGE) !== 0) writes++;
      }
    }
  }
  return { reads, writes };
}
