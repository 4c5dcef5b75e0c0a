/**
 * Exact row counters for the sql.js adapter: SQLite counts the platform's reads and writes itself,
 * in a rewritten copy of each statement's compiled program (the rewrite and what it counts:
 * sqljs-program-rewrite.ts). This module installs the copies and counts each run; a program whose
 * every completed run counts the same (sqljs-program-paths.ts) gets no copy ({@link FixedCounts}).
 *
 * The copy lives in memory this module allocates, with the 8-byte size header SQLite's system
 * allocator keeps in front of each block, so that SQLite can free it as its own if it ever
 * recompiles the statement in the middle of a step (it swaps the programs then); otherwise the
 * original program goes back before the statement is finalized and the copy is freed here.
 *
 * A rowid seek whose key is not an integer (a range seek: not a number) gives up before the
 * platform counts it; that is decided from the bound value when the key is a parameter or constant,
 * and in the copy as the seek runs otherwise (through a scratch register: see
 * {@link ProgramCounters.instrument}). `SeekEnd` (index builds) counts when the index's cursor lost its
 * position, as the copy tells it (sqljs-program-rewrite.ts).
 */

import type { RowCounts } from "./engine";
import type { WasmHeap } from "./sqljs-heap";
import { type CountsPerRun, countsPerRun } from "./sqljs-program-paths";
import {
  type BoundValue,
  cString,
  type Op,
  type ProgramLayout,
  readOps,
  rewrite,
  type Site,
  writeOp,
} from "./sqljs-program-rewrite";

/** What the row counters see of the module. */
export interface CounterModule {
  readonly heap: WasmHeap;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
}

/** No `count(*)` ran (shared: never modified). */
const NO_COUNT_SCANS: ReadonlyMap<number, number> = new Map();

/**
 * How a statement's runs are counted: by a rewritten copy of its program ({@link ProgramCounters}),
 * or from the run having completed, for a program whose every completed run counts the same
 * ({@link FixedCounts}). Both answer the same for every run that completes.
 */
export interface RunCounters {
  /** Whether the counters still watch the statement's program (false once SQLite recompiled it). */
  readonly live: boolean;
  /** Starts a run: every count from zero. False (and nothing started) when no longer {@link RunCounters.live}. */
  begin(): boolean;
  /** A step of the run returned `SQLITE_DONE`: the run completed. */
  completed(): void;
  /** The counts since {@link RunCounters.begin} (an object the next call refills). */
  counts(bound: readonly BoundValue[]): RowCounts;
  /** Puts the original program back (call before the statement is finalized). */
  release(): void;
}

/** Reads `Vdbe.aCounter` slots 0–3 (loop steps and sorts: reads, see {@link ProgramCounters.begin}). */
function steps(words: Uint32Array, c: number): number {
  return (words[c] as number) + (words[c + 1] as number) + (words[c + 2] as number) + (words[c + 3] as number);
}

/**
 * The counts of a statement whose every completed run counts the same reads and writes (decided
 * on its control flow: sqljs-program-paths.ts), such as a plain `INSERT … VALUES (…)`: its program
 * runs as SQLite compiled it, and a run counts those once it completed (no earlier moment of such
 * a run is observable: its program returns no rows). Counted this way, a run adds no ops to the
 * program and no heap reads but the check that SQLite did not swap in a new program.
 *
 * When SQLite did (it recompiled the statement during a step), the run is counted as a rewritten
 * copy counts it then: the steps SQLite counted, nothing written.
 */
export class FixedCounts implements RunCounters {
  readonly #module: CounterModule;
  readonly #perRun: CountsPerRun;
  /** Heap word of `Vdbe.aOp`, and the program it must still hold. */
  readonly #programWord: number;
  readonly #program: number;
  readonly #counterWord: number;
  #startSteps = 0;
  #runs = 0;
  readonly #counts: { read: number; written: number; countScans: ReadonlyMap<number, number>; clears: number } = {
    read: 0,
    written: 0,
    countScans: NO_COUNT_SCANS,
    clears: 0,
  };

  private constructor(module: CounterModule, layout: ProgramLayout, stmt: number, perRun: CountsPerRun) {
    this.#module = module;
    this.#perRun = perRun;
    this.#programWord = (stmt + layout.opsOffset) >>> 2;
    this.#program = module.heap.u32(stmt + layout.opsOffset);
    this.#counterWord = (stmt + layout.counterOffset) >>> 2;
  }

  /** Counts for the (not yet stepped) statement `stmt` whose main program is `ops`, if they are fixed. */
  static of(module: CounterModule, layout: ProgramLayout, stmt: number, ops: readonly Op[]): FixedCounts | undefined {
    const perRun = countsPerRun(ops, layout, () => {
      let scratch = false;
      const { sites } = rewrite(
        ops,
        layout,
        true,
        (ptr) => cString(module.heap, ptr),
        () => {
          scratch = true;
          return 0;
        },
      );
      return scratch ? undefined : sites;
    });
    return perRun === undefined ? undefined : new FixedCounts(module, layout, stmt, perRun);
  }

  get live(): boolean {
    return this.#module.heap.u32(this.#programWord << 2) === this.#program;
  }

  begin(): boolean {
    const words = this.#module.heap.words;
    if (words[this.#programWord] !== this.#program) return false;
    this.#runs = 0;
    this.#startSteps = steps(words, this.#counterWord);
    return true;
  }

  completed(): void {
    this.#runs++;
  }

  counts(): RowCounts {
    const words = this.#module.heap.words;
    const counts = this.#counts;
    if (words[this.#programWord] !== this.#program) {
      counts.read = (steps(words, this.#counterWord) - this.#startSteps) >>> 0;
      counts.written = 0;
    } else {
      counts.read = this.#runs * this.#perRun.read;
      counts.written = this.#runs * this.#perRun.written;
    }
    return counts;
  }

  release(): void {
    // The program is SQLite's own, untouched.
  }
}
/** One rewritten program (main or sub-program). */
interface Rewritten {
  /** Where the pointer to the program and its length live (`Vdbe.aOp` or `SubProgram.aOp`). */
  readonly slot: number;
  readonly originalOps: number;
  readonly originalCount: number;
  /** The copy's memory block (its header first) and its first op. */
  readonly block: number;
  readonly ops: number;
  readonly count: number;
  readonly sites: Site[];
  /** For a sub-program given a scratch register: its `SubProgram.nMem` before (restored on release). */
  readonly registers: number | undefined;
}

/**
 * A site that {@link ProgramCounters.counts} cannot simply add up, by its heap words: `word` holds
 * its runs, `found` (for `rowidSeek`) the runs that found their row.
 */
interface SpecialSite {
  readonly kind: "clear" | "count" | "rowidSeek" | "rowidRange";
  readonly word: number;
  readonly found: number;
  /** For `count`: the table's root page. */
  readonly root: number;
  /**
   * For `rowidSeek`/`rowidRange`, where the key comes from: the (1-based) parameter, 0 for the
   * constant `value`, -1 when the program does not show it.
   */
  readonly parameter: number;
  readonly value: BoundValue;
}

/**
 * The counters of one statement: its program and sub-programs rewritten (see the module comment).
 * Make one with {@link ProgramCounters.instrument}; {@link ProgramCounters.release} before the
 * statement is finalized.
 *
 * Every site is known by the heap word its `Trace` counts in (the copies never move), sorted once
 * by how a run's counts read it, so that starting and reading a run are straight loops over word
 * indexes (a point select's whole counting is a few heap reads and writes).
 */
export class ProgramCounters implements RunCounters {
  readonly #module: CounterModule;
  readonly #programs: Rewritten[];
  /**
   * The main program's scratch register's memory (see {@link ProgramCounters.instrument}), or 0:
   * never SQLite's, so freed here once the copies are gone (released, or freed by SQLite).
   */
  #scratch: number;
  /** Heap word of `Vdbe.aOp`, and the copy it must still hold (see {@link ProgramCounters.live}). */
  readonly #programWord: number;
  readonly #mainOps: number;
  /** Heap word of `Vdbe.aCounter[0]`. */
  readonly #counterWord: number;
  /** Heap words that a run starts from zero: every site's counter. */
  readonly #resets: readonly number[];
  /** Heap words whose runs are reads, or writes, as they stand. */
  readonly #reads: readonly number[];
  readonly #writes: readonly number[];
  readonly #special: readonly SpecialSite[];
  /** The sum of SQLite's step and sort counters when the run started. */
  #startSteps = 0;
  /** What {@link ProgramCounters.counts} returns, refilled by each call (its callers read it at once). */
  readonly #counts: { read: number; written: number; countScans: ReadonlyMap<number, number>; clears: number } = {
    read: 0,
    written: 0,
    countScans: NO_COUNT_SCANS,
    clears: 0,
  };
  /** The heap as words, until the memory grows (which detaches it: its length is 0 then). */
  #words: Uint32Array;
  #lost = false;

  private constructor(
    module: CounterModule,
    layout: ProgramLayout,
    stmt: number,
    programs: Rewritten[],
    scratch: number,
  ) {
    this.#module = module;
    this.#scratch = scratch;
    this.#words = module.heap.words;
    this.#programs = programs;
    this.#programWord = (stmt + layout.opsOffset) >>> 2;
    this.#mainOps = (programs[0] as Rewritten).ops;
    this.#counterWord = (stmt + layout.counterOffset) >>> 2;
    const resets: number[] = [];
    const reads: number[] = [];
    const writes: number[] = [];
    const special: SpecialSite[] = [];
    const wordOf = (program: Rewritten, at: number) => (program.ops + at * layout.opSize + 4) >>> 2;
    for (const program of programs) {
      for (const site of program.sites) {
        const word = wordOf(program, site.at);
        resets.push(word);
        if (site.kind === "read") reads.push(word);
        else if (site.kind === "write") writes.push(word);
        else {
          const found = site.kind === "rowidSeek" ? wordOf(program, site.extra) : 0;
          if (found !== 0) resets.push(found);
          const root = site.kind === "count" ? site.extra : 0;
          const key = site.key;
          const parameter = key === undefined ? -1 : "parameter" in key ? key.parameter : 0;
          const value = key !== undefined && "value" in key ? key.value : undefined;
          special.push({ kind: site.kind, word, found, root, parameter, value });
        }
      }
    }
    this.#resets = resets;
    this.#reads = reads;
    this.#writes = writes;
    this.#special = special;
  }

  /**
   * Rewrites the program of the (not yet stepped) statement `stmt`.
   *
   * A copy that tells a seek key's type as it runs (sqljs-program-rewrite.ts) needs a register the
   * program never uses. A sub-program gets one more register than it had (`SubProgram.nMem`, the
   * word after its length: each run's frame is sized from it, its cursors' cells above its
   * registers move up by one), restored on release. The main program's registers were allocated
   * when it was compiled, so its scratch register is a zeroed `Mem` allocated here, at a whole
   * number of `Mem`s from `Vdbe.aMem` (a register number may be negative): SQLite never sees it as
   * one of its own, so it neither releases it nor lends it to a cursor, and a shallow copy and an
   * affinity leave nothing in it to free.
   */
  static instrument(
    module: CounterModule,
    layout: ProgramLayout,
    stmt: number,
    mainOps: readonly Op[] = mainProgram(module, layout, stmt),
  ): ProgramCounters {
    const programs: Rewritten[] = [];
    const seen = new Set<number>();
    let scratch = 0;
    const mainScratch = () => {
      if (scratch === 0) {
        const size = layout.registerSize;
        scratch = module._malloc(2 * size);
        if (scratch === 0) throw new Error("out of memory");
        module.heap.bytes.fill(0, scratch, scratch + 2 * size);
      }
      const registers = module.heap.u32(stmt + layout.registersOffset);
      return Math.ceil((scratch - registers) / layout.registerSize);
    };
    const rewriteAt = (slot: number, main: boolean) => {
      const heap = module.heap;
      const originalOps = heap.u32(slot);
      const originalCount = heap.u32(slot + 4) | 0;
      const ops = main ? mainOps : readOps(heap, layout, originalOps, originalCount);
      for (const op of ops) {
        if (op.opcode === layout.opcodes.get("Program") && op.p4type === layout.p4SubProgram && !seen.has(op.p4)) {
          seen.add(op.p4);
          rewriteAt(op.p4, false);
        }
      }
      let registers: number | undefined;
      const subScratch = () => {
        registers ??= heap.u32(slot + 8) | 0;
        heap.setU32(slot + 8, registers + 1);
        return registers + 1;
      };
      const { out, sites } = rewrite(ops, layout, main, (ptr) => cString(heap, ptr), main ? mainScratch : subScratch);
      const size = out.length * layout.opSize;
      const block = module._malloc(size + 8);
      if (block === 0) throw new Error("out of memory");
      // SQLite's system allocator keeps each block's size in the 8 bytes before it.
      module.heap.setU32(block, size);
      module.heap.setU32(block + 4, 0);
      const at = block + 8;
      for (let i = 0; i < out.length; i++) writeOp(module.heap, at + i * layout.opSize, out[i] as Op, layout.opSize);
      module.heap.setU32(slot, at);
      module.heap.setU32(slot + 4, out.length);
      programs.push({ slot, originalOps, originalCount, block, ops: at, count: out.length, sites, registers });
    };
    rewriteAt(stmt + layout.opsOffset, true);
    // The main program was pushed last (sub-programs first): keep it first.
    programs.unshift(programs.pop() as Rewritten);
    return new ProgramCounters(module, layout, stmt, programs, scratch);
  }

  /**
   * Whether the counters still watch the statement's program: false once SQLite recompiled it
   * during a step (a schema change it found; the storage recompiles before that normally happens).
   */
  get live(): boolean {
    return this.#watching(this.#view());
  }

  /** The heap's words (nothing may call into the module while they are used: it could grow). */
  #view(): Uint32Array {
    let words = this.#words;
    if (words.length === 0) {
      words = this.#module.heap.words;
      this.#words = words;
    }
    return words;
  }

  #watching(words: Uint32Array): boolean {
    if (!this.#lost && words[this.#programWord] !== this.#mainOps) {
      // SQLite swapped in a new program and freed this copy (and its sub-programs') itself.
      this.#lost = true;
      this.#freeScratch();
    }
    return !this.#lost;
  }

  /**
   * Starts a run: every count from zero. False (and nothing started) when the counters no longer
   * watch the program (see {@link ProgramCounters.live}).
   */
  begin(): boolean {
    const words = this.#view();
    if (!this.#watching(words)) return false;
    const resets = this.#resets;
    for (let i = 0; i < resets.length; i++) words[resets[i] as number] = 0;
    // Slots 0, 1 and 3 collect loop steps, 2 sorts (see the module comment): all reads.
    this.#startSteps = steps(words, this.#counterWord);
    return true;
  }

  completed(): void {
    // The copy counted the run as it went.
  }

  /**
   * The counts since {@link ProgramCounters.begin}; `bound[i - 1]` is the value bound to `?i`. The
   * object is this statement's own and the next call refills it: read it before counting again.
   */
  counts(bound: readonly BoundValue[]): RowCounts {
    const words = this.#view();
    // SQLite's counters are 32-bit and wrap: the difference modulo 2^32 is the run's.
    let read = (steps(words, this.#counterWord) - this.#startSteps) >>> 0;
    if (!this.#watching(words)) return this.#filled(read, 0, NO_COUNT_SCANS, 0);
    const reads = this.#reads;
    for (let i = 0; i < reads.length; i++) read += words[reads[i] as number] as number;
    let written = 0;
    const writes = this.#writes;
    for (let i = 0; i < writes.length; i++) written += words[writes[i] as number] as number;
    let clears = 0;
    let countScans: Map<number, number> | undefined;
    const special = this.#special;
    for (let i = 0; i < special.length; i++) {
      const site = special[i] as SpecialSite;
      const runs = words[site.word] as number;
      switch (site.kind) {
        case "clear":
          clears += runs;
          break;
        case "count":
          if (runs > 0) {
            countScans ??= new Map();
            countScans.set(site.root, (countScans.get(site.root) ?? 0) + runs);
          }
          break;
        case "rowidSeek":
          // A key that is no integer: SeekRowid gives up before the platform counts (and finds nothing).
          read +=
            site.parameter < 0 || isIntegerKey(site.parameter === 0 ? site.value : bound[site.parameter - 1])
              ? runs
              : (words[site.found] as number);
          break;
        case "rowidRange":
          if (site.parameter < 0 || isNumericKey(site.parameter === 0 ? site.value : bound[site.parameter - 1])) {
            read += runs;
          }
          break;
      }
    }
    return this.#filled(read, written, countScans ?? NO_COUNT_SCANS, clears);
  }

  #filled(read: number, written: number, countScans: ReadonlyMap<number, number>, clears: number): RowCounts {
    const counts = this.#counts;
    counts.read = read;
    counts.written = written;
    counts.countScans = countScans;
    counts.clears = clears;
    return counts;
  }

  #freeScratch(): void {
    if (this.#scratch !== 0) this.#module._free(this.#scratch);
    this.#scratch = 0;
  }

  /** Puts the original programs back and frees the copies (call before the statement is finalized). */
  release(): void {
    this.#freeScratch();
    if (!this.live) return;
    const heap = this.#module.heap;
    for (const program of this.#programs) {
      heap.setU32(program.slot, program.originalOps);
      heap.setU32(program.slot + 4, program.originalCount);
      if (program.registers !== undefined) heap.setU32(program.slot + 8, program.registers);
      this.#module._free(program.block);
    }
    this.#lost = true;
  }
}

/**
 * The counters of the (not yet stepped) statement `stmt`: {@link FixedCounts} when every completed
 * run of its program counts the same (and `fixed` allows them), else a rewritten copy
 * ({@link ProgramCounters.instrument}).
 */
export function statementCounters(
  module: CounterModule,
  layout: ProgramLayout,
  stmt: number,
  fixed: boolean,
): RunCounters {
  const ops = mainProgram(module, layout, stmt);
  return (
    (fixed ? FixedCounts.of(module, layout, stmt, ops) : undefined) ??
    ProgramCounters.instrument(module, layout, stmt, ops)
  );
}

/** The ops of `stmt`'s main program. */
function mainProgram(module: CounterModule, layout: ProgramLayout, stmt: number): Op[] {
  const heap = module.heap;
  return readOps(heap, layout, heap.u32(stmt + layout.opsOffset), heap.u32(stmt + layout.opsOffset + 4) | 0);
}

/** `SQLITE_READONLY`: what a write's step returns while its connection is query-only. */
const SQLITE_READONLY = 8;

/**
 * Recompiles a statement whose program SQLite marked expired, without running it, so that the
 * program that will run can be rewritten for counting first.
 *
 * SQLite marks a statement's program expired when a value is bound to a parameter its plan
 * depends on (a LIKE/GLOB pattern, a term a partial index matches: `Vdbe.expmask`) or when the
 * schema changed; its next `sqlite3_step` compiles it again, swaps the new program in and runs it
 * in the same call. That new program was never rewritten, and a statement that may write cannot
 * run again to be counted (a read can: sqljs-statement.ts). So that step is taken here with the
 * connection query-only (`SQLITE_QueryOnly` in `sqlite3.flags`, only for the call): SQLite
 * recompiles, and the new program stops at its first `OP_Transaction` that would write, before
 * any row is touched, with `SQLITE_READONLY` (a statement-level abort: the transaction stays;
 * `changes()` reads 0 until the real run sets it). The statement then needs a reset (which keeps
 * its bindings) and a rewrite of the new program.
 *
 * `step` takes one `sqlite3_step` of `stmt`. Returns `undefined` when the program was not expired
 * (nothing done), `"recompiled"`, or else the step's result: the recompile failed (its error), or
 * the statement only reads and ran uncounted (its row or done) — what a plain first step returns.
 */
export function recompileUnrun(
  heap: WasmHeap,
  layout: ProgramLayout,
  stmt: number,
  step: () => number,
): "recompiled" | number | undefined {
  if (!programExpired(heap, layout, stmt)) return undefined;
  const program = heap.u32(stmt + layout.opsOffset);
  const flags = heap.u32(stmt) + layout.queryOnlyByte;
  const before = heap.bytes[flags] as number;
  heap.bytes[flags] = before | layout.queryOnlyBit;
  let rc: number;
  try {
    rc = step();
  } finally {
    // The step may have grown the memory: `bytes` is looked up again.
    heap.bytes[flags] = before;
  }
  const swapped = heap.u32(stmt + layout.opsOffset) !== program;
  const expired = ((heap.bytes[stmt + layout.expiredByte] as number) & 3) !== 0;
  return rc === SQLITE_READONLY && swapped && !expired ? "recompiled" : rc;
}

/** Whether SQLite marked `stmt`'s program expired: its next step compiles it again (see {@link recompileUnrun}). */
export function programExpired(heap: WasmHeap, layout: ProgramLayout, stmt: number): boolean {
  return ((heap.bytes[stmt + layout.expiredByte] as number) & 3) !== 0;
}

/** Whether SQLite's `SeekRowid` finds an integer in `value` (it converts numeric text and whole reals). */
function isIntegerKey(value: BoundValue): boolean {
  if (typeof value === "number") return Number.isInteger(value) && Math.abs(value) < 2 ** 63;
  if (typeof value === "string") {
    const n = numericText(value);
    return n !== undefined && Number.isInteger(n) && Math.abs(n) < 2 ** 63;
  }
  return false;
}

/** Whether a rowid range seek moves with `value` as its key (a number, or text that reads as one). */
function isNumericKey(value: BoundValue): boolean {
  if (typeof value === "number") return true;
  return typeof value === "string" && numericText(value) !== undefined;
}

/** The number text reads as under SQLite's numeric affinity (surrounding spaces allowed), if any. */
function numericText(text: string): number | undefined {
  const trimmed = text.replace(/^[ \t\n\f\r]+|[ \t\n\f\r]+$/g, "");
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(trimmed) ? Number(trimmed) : undefined;
}
