/**
 * Exact row counters for the sql.js adapter: SQLite counts the platform's reads and writes itself,
 * in a rewritten copy of each statement's compiled program.
 *
 * The platform's counters (a patch to SQLite's opcodes) add a read each time certain opcodes run:
 * a loop start (`Rewind`, `Last`, a sort), a loop step onto a row (`Next`, `Prev`, `SorterNext`), a
 * seek (`SeekRowid`/`NotExists` and the range seeks, once they have moved the cursor; an equality
 * seek on an index only when it finds its key), a `VNext`, and a table's size for `count(*)`
 * (`Count`); and a write for each table or index insert, each delete that counts as a change, each
 * row a `Clear` removes and each virtual-table update, ephemeral tables excepted. sql.js's SQLite
 * has no such counters, so each statement that wants them gets a copy of its program (and of every
 * sub-program: triggers, foreign-key actions) in which
 *
 * - `Rewind` becomes `Sort`: the same code in SQLite, which also counts itself in the statement's
 *   `SQLITE_STMTSTATUS_SORT` counter, next to the real sorts;
 * - loop steps are already counted by SQLite (`Vdbe.aCounter[P5]` of each `Next`/`Prev`/
 *   `SorterNext` that lands on a row);
 * - every other counted opcode moves to a trampoline after the program's end, next to an
 *   `OP_Trace`, which jumps on and increments its own P1 each time it runs: a counter per site.
 *   "Count, then run the opcode" (`Trace` at the opcode's address) counts its runs; "run the
 *   opcode, then count" (`Trace` after it, in the trampoline) counts only the runs that fall through
 *   (an equality seek that found its key, a `SeekRowid` that found its row).
 *
 * The copy lives in memory this module allocates, with the 8-byte size header SQLite's system
 * allocator keeps in front of each block, so that SQLite can free it as its own if it ever
 * recompiles the statement in the middle of a step (it swaps the programs then); otherwise the
 * original program goes back before the statement is finalized and the copy is freed here.
 *
 * What stays approximate (docs/semantics.md, "Row counters"): a seek whose key is not a number
 * gives up before the platform counts it; that is decided from the bound value when the key is a
 * parameter (otherwise the key is taken to be a number); `SeekEnd` (index builds) counts on the
 * platform only when the B-tree cursor lost its position, taken as its first two runs.
 */

import type { EngineValue, RowCounts } from "./engine";
import type { WasmHeap } from "./sqljs";

/** Where a statement keeps its program, and SQLite's opcode numbers (located once per build). */
export interface ProgramLayout {
  /** Byte offset of `Vdbe.aOp` in a statement; `Vdbe.nOp` follows it. */
  readonly opsOffset: number;
  /** Byte offset of `Vdbe.aCounter` (the `sqlite3_stmt_status` counters). */
  readonly counterOffset: number;
  /** `sizeof(Op)`. */
  readonly opSize: number;
  /** Opcode numbers by name, and names by number. */
  readonly opcodes: ReadonlyMap<string, number>;
  readonly names: readonly string[];
  /** The `p4type` of `OP_Program`'s sub-program, and of an index's key description. */
  readonly p4SubProgram: number;
  readonly p4KeyInfo: number;
}

/** What the row counters see of the module. */
export interface CounterModule {
  readonly heap: WasmHeap;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
}

/** The value of a statement's parameter, as bound (see {@link ProgramCounters.counts}). */
export type BoundValue = EngineValue | undefined;

/** No `count(*)` ran (shared: never modified). */
const NO_COUNT_SCANS: ReadonlyMap<number, number> = new Map();
/** `OPFLAG_NCHANGE` (P2 of `OP_Delete`): the delete counts as a change. */
const OPFLAG_NCHANGE = 0x01;

/** Opcodes whose P2 is a jump target (SQLite's opcodes flagged "jump", and `Init`). */
const JUMPS = new Set(
  (
    "Init Goto Gosub InitCoroutine Yield MustBeInt Jump Once If IfNot IsType IfNullRow SeekLT SeekLE SeekGE " +
    "SeekGT IfNoHope NoConflict NotFound Found SeekRowid NotExists Last IfSizeBetween SorterSort Sort Rewind " +
    "IfEmpty SorterNext Prev Next IdxLE IdxGT IdxLT IdxGE RowSetRead RowSetTest Program FkIfZero IsNull " +
    "NotNull Ne Eq Gt Le Lt Ge ElseEq IfPos IfNotZero DecrJumpZero IncrVacuum VNext VFilter Filter " +
    "SequenceTest IfSmaller SeekScan"
  ).split(" "),
);

/** One counting site: a `Trace` whose P1 counts. */
interface Site {
  /** Address of the counting `Trace` in the copy. */
  readonly at: number;
  readonly kind: "read" | "write" | "seekEnd" | "clear" | "count" | "rowidSeek" | "rowidRange";
  /** For `rowidSeek`: the `Trace` that counts found rows; for `count`: the root page. */
  readonly extra: number;
  /** For `rowidSeek`/`rowidRange`: where the key comes from, when the program shows it. */
  readonly key: KeySource | undefined;
}

/** A seek's key as the program loads it: a parameter (1-based) or a constant. */
type KeySource = { readonly parameter: number } | { readonly value: BoundValue };

interface Op {
  opcode: number;
  p4type: number;
  p5: number;
  p1: number;
  p2: number;
  p3: number;
  p4: number;
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
}

/** Reads a program's ops. */
function readOps(heap: WasmHeap, layout: ProgramLayout, at: number, count: number): Op[] {
  const bytes = heap.bytes;
  const ops: Op[] = new Array<Op>(count);
  for (let i = 0; i < count; i++) {
    const b = at + i * layout.opSize;
    ops[i] = {
      opcode: bytes[b] as number,
      p4type: ((bytes[b + 1] as number) << 24) >> 24,
      p5: (bytes[b + 2] as number) | ((bytes[b + 3] as number) << 8),
      p1: heap.u32(b + 4) | 0,
      p2: heap.u32(b + 8) | 0,
      p3: heap.u32(b + 12) | 0,
      p4: heap.u32(b + 16),
    };
  }
  return ops;
}

function writeOp(heap: WasmHeap, at: number, op: Op, opSize: number): void {
  const bytes = heap.bytes;
  bytes.fill(0, at, at + opSize);
  bytes[at] = op.opcode;
  bytes[at + 1] = op.p4type & 0xff;
  bytes[at + 2] = op.p5 & 0xff;
  bytes[at + 3] = (op.p5 >> 8) & 0xff;
  heap.setU32(at + 4, op.p1 >>> 0);
  heap.setU32(at + 8, op.p2 >>> 0);
  heap.setU32(at + 12, op.p3 >>> 0);
  heap.setU32(at + 16, op.p4 >>> 0);
}

/**
 * A site that {@link ProgramCounters.counts} cannot simply add up, by its heap words: `word` holds
 * its runs, `found` (for `rowidSeek`) the runs that found their row.
 */
interface SpecialSite {
  readonly kind: "seekEnd" | "clear" | "count" | "rowidSeek" | "rowidRange";
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
export class ProgramCounters {
  readonly #module: CounterModule;
  readonly #programs: Rewritten[];
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

  private constructor(module: CounterModule, layout: ProgramLayout, stmt: number, programs: Rewritten[]) {
    this.#module = module;
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

  /** Rewrites the program of the (not yet stepped) statement `stmt`. */
  static instrument(module: CounterModule, layout: ProgramLayout, stmt: number): ProgramCounters {
    const programs: Rewritten[] = [];
    const seen = new Set<number>();
    const rewriteAt = (slot: number, main: boolean) => {
      const heap = module.heap;
      const originalOps = heap.u32(slot);
      const originalCount = heap.u32(slot + 4) | 0;
      const ops = readOps(heap, layout, originalOps, originalCount);
      for (const op of ops) {
        if (op.opcode === layout.opcodes.get("Program") && op.p4type === layout.p4SubProgram && !seen.has(op.p4)) {
          seen.add(op.p4);
          rewriteAt(op.p4, false);
        }
      }
      const { out, sites } = rewrite(ops, layout, main, (ptr) => cString(heap, ptr));
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
      programs.push({ slot, originalOps, originalCount, block, ops: at, count: out.length, sites });
    };
    rewriteAt(stmt + layout.opsOffset, true);
    // The main program was pushed last (sub-programs first): keep it first.
    programs.unshift(programs.pop() as Rewritten);
    return new ProgramCounters(module, layout, stmt, programs);
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
    const c = this.#counterWord;
    // Slots 0, 1 and 3 collect loop steps, 2 sorts (see the module comment): all reads.
    this.#startSteps =
      (words[c] as number) + (words[c + 1] as number) + (words[c + 2] as number) + (words[c + 3] as number);
    return true;
  }

  /**
   * The counts since {@link ProgramCounters.begin}; `bound[i - 1]` is the value bound to `?i`. The
   * object is this statement's own and the next call refills it: read it before counting again.
   */
  counts(bound: readonly BoundValue[]): RowCounts {
    const words = this.#view();
    const c = this.#counterWord;
    const steps = (words[c] as number) + (words[c + 1] as number) + (words[c + 2] as number) + (words[c + 3] as number);
    // SQLite's counters are 32-bit and wrap: the difference modulo 2^32 is the run's.
    let read = (steps - this.#startSteps) >>> 0;
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
        case "seekEnd":
          read += Math.min(runs, 2);
          break;
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

  /** Puts the original programs back and frees the copies (call before the statement is finalized). */
  release(): void {
    if (!this.live) return;
    const heap = this.#module.heap;
    for (const program of this.#programs) {
      heap.setU32(program.slot, program.originalOps);
      heap.setU32(program.slot + 4, program.originalCount);
      this.#module._free(program.block);
    }
    this.#lost = true;
  }
}

/** The NUL-terminated UTF-8 string at `ptr`. */
function cString(heap: WasmHeap, ptr: number): string {
  const bytes = heap.bytes;
  let end = ptr;
  while (end < bytes.length && bytes[end] !== 0) end++;
  return new TextDecoder().decode(bytes.subarray(ptr, end));
}

/** Rewrites one program (see the module comment): the copy's ops and its counting sites. */
function rewrite(
  ops: readonly Op[],
  layout: ProgramLayout,
  main: boolean,
  text: (ptr: number) => string,
): { out: Op[]; sites: Site[] } {
  const code = (name: string) => layout.opcodes.get(name) ?? -1;
  const TRACE = code("Trace");
  const GOTO = code("Goto");
  const HALT = code("Halt");
  const REWIND = code("Rewind");
  const SORT = code("Sort");
  const is = (op: Op | undefined, ...names: string[]) => op !== undefined && names.some((n) => code(n) === op.opcode);
  const ephemeral = new Set<number>();
  const index = new Set<number>();
  const tableRoots = new Map<number, number>();
  for (const op of ops) {
    if (is(op, "OpenEphemeral", "OpenAutoindex", "OpenDup", "SorterOpen", "OpenPseudo")) ephemeral.add(op.p1);
    if (is(op, "OpenRead", "OpenWrite", "ReopenIdx") && op.p4type === layout.p4KeyInfo) index.add(op.p1);
    if (is(op, "OpenRead", "OpenWrite") && op.p3 === 0) tableRoots.set(op.p1, op.p2);
  }
  // Where a seek's key register was loaded, when the program shows it: by the op right before the
  // seek (when nothing jumps to the seek), or among the constants SQLite loads once in the
  // prologue (after `Init`'s target), whose registers hold nothing else.
  const prologue = ops[0]?.p2 ?? ops.length;
  const jumpTargets = new Set(ops.filter((op) => JUMPS.has(layout.names[op.opcode] ?? "")).map((op) => op.p2));
  const loaded = (op: Op | undefined, register: number): KeySource | undefined => {
    if (op === undefined || op.p2 !== register) return undefined;
    const wide = op.p3 * 2 ** 32 + (op.p1 >>> 0);
    if (is(op, "Variable")) return main ? { parameter: op.p1 } : undefined;
    if (is(op, "Integer")) return { value: op.p1 };
    if (is(op, "Int64")) return { value: wide };
    if (is(op, "Real")) {
      const view = new DataView(new ArrayBuffer(8));
      view.setInt32(0, op.p1, true);
      view.setInt32(4, op.p3, true);
      return { value: view.getFloat64(0, true) };
    }
    if (is(op, "String8", "String") && op.p4 !== 0) return { value: text(op.p4) };
    if (is(op, "Null") && op.p3 <= register) return { value: null };
    return undefined;
  };
  const keyOf = (a: number, register: number): KeySource | undefined => {
    const before = a > 0 && !jumpTargets.has(a) ? loaded(ops[a - 1], register) : undefined;
    if (before !== undefined) return before;
    for (let i = prologue; i < ops.length; i++) {
      const source = loaded(ops[i], register);
      if (source !== undefined) return source;
    }
    return undefined;
  };
  const out: Op[] = ops.map((op) => ({ ...op }));
  // Nothing falls off the end into the trampolines (every program ends in Goto or Halt; this is a guard).
  out.push({ opcode: HALT, p4type: 0, p5: 0, p1: 0, p2: 0, p3: 0, p4: 0 });
  const sites: Site[] = [];
  const op = (opcode: number, p2: number): Op => ({ opcode, p4type: 0, p5: 0, p1: 0, p2, p3: 0, p4: 0 });
  /** Count, then run the opcode at `a`. */
  const countRuns = (a: number, kind: Site["kind"], extra = 0, key?: KeySource) => {
    const trampoline = out.length;
    out.push(out[a] as Op, op(GOTO, a + 1));
    out[a] = op(TRACE, trampoline);
    sites.push({ at: a, kind, extra, key });
  };
  for (let a = 0; a < ops.length; a++) {
    const o = ops[a] as Op;
    if (o.opcode === REWIND) (out[a] as Op).opcode = SORT;
    else if (is(o, "Last", "VNext", "NotExists")) countRuns(a, "read");
    else if (is(o, "SeekEnd")) countRuns(a, "seekEnd");
    else if (is(o, "Insert", "IdxInsert", "VUpdate")) {
      // VUpdate's P1 is a flag, not a cursor: a virtual table is never ephemeral.
      if (is(o, "VUpdate") || !ephemeral.has(o.p1)) countRuns(a, "write");
    } else if (is(o, "Delete")) {
      if (!ephemeral.has(o.p1) && (o.p2 & OPFLAG_NCHANGE) !== 0) countRuns(a, "write");
    } else if (is(o, "Clear")) {
      if (o.p3 !== 0) countRuns(a, "clear");
    } else if (is(o, "Count")) {
      if (o.p3 === 0) countRuns(a, "count", tableRoots.get(o.p1) ?? 0);
    } else if (is(o, "SeekRowid")) {
      // Runs counted before, found rows after: which one the platform counts depends on the key.
      const trampoline = out.length;
      out.push({ ...o }, op(TRACE, a + 1));
      out[a] = op(TRACE, trampoline);
      sites.push({ at: a, kind: "rowidSeek", extra: trampoline + 1, key: keyOf(a, o.p3) });
    } else if (is(o, "SeekGE", "SeekGT", "SeekLE", "SeekLT")) {
      const next = ops[a + 1];
      const closing = is(o, "SeekGE") ? "IdxGT" : is(o, "SeekLE") ? "IdxLT" : "";
      const equality =
        next !== undefined && closing !== "" && is(next, closing) && next.p1 === o.p1 && next.p3 === o.p3;
      const before = ops[a - 1];
      if (equality) {
        // Counted only when it finds its key: after the range check (an eqOnly seek skips it itself).
        const scan = is(before, "SeekScan");
        const trampoline = out.length;
        if (scan) out.push(out[a - 1] as Op);
        // The range check stays at a + 1 too (a jump may land there); the copy owns no P4 to free.
        out.push(out[a] as Op, { ...next, p4type: 0 }, op(TRACE, a + 2));
        if (scan) out[a - 1] = op(GOTO, trampoline);
        out[a] = op(GOTO, scan ? trampoline + 1 : trampoline);
        sites.push({ at: out.length - 1, kind: "read", extra: 0, key: undefined });
      } else if (index.has(o.p1) || o.p4type !== 0) countRuns(a, "read");
      else countRuns(a, "rowidRange", 0, keyOf(a, o.p3));
    }
  }
  return { out, sites };
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

// ------------------------------------------------------------------ locating the layout (once per build)

/** A scratch connection to probe the build with (see {@link locateProgramLayout}). */
export interface LayoutProbe {
  /** Compiles `sql` on the scratch connection; returns the statement pointer. */
  compile(sql: string): number;
  /** `EXPLAIN sql`: address, opcode, p1, p2, p3, p4, p5 per row. */
  explain(sql: string): (string | number | null)[][];
}

/** The C functions the probe calls. */
interface ProbeFunctions {
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  _sqlite3_free(ptr: number): void;
  _sqlite3_reset(stmt: number): number;
  _sqlite3_bind_double(stmt: number, index: number, value: number): number;
  _sqlite3_step(stmt: number): number;
}

/** The schema the probe statements run on. */
export const LAYOUT_PROBE_SCHEMA =
  "CREATE TABLE probe (x, y); CREATE INDEX probe_y ON probe (y); CREATE TABLE probe_log (z);" +
  "CREATE TRIGGER probe_t AFTER INSERT ON probe BEGIN INSERT INTO probe_log VALUES (new.x); END;" +
  "INSERT INTO probe VALUES (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7);";

const OPCODES_NEEDED = [
  "Init",
  "Goto",
  "Halt",
  "Trace",
  "Rewind",
  "Sort",
  "Program",
  "Variable",
  "Last",
  "VNext",
  "NotExists",
  "SeekEnd",
  "Insert",
  "IdxInsert",
  "VUpdate",
  "Delete",
  "Clear",
  "Count",
  "SeekRowid",
  "SeekGE",
  "SeekGT",
  "SeekLE",
  "SeekLT",
  "IdxGT",
  "IdxLT",
  "SeekScan",
  "OpenEphemeral",
  "OpenAutoindex",
  "OpenDup",
  "SorterOpen",
  "OpenPseudo",
  "OpenRead",
  "OpenWrite",
  "ReopenIdx",
];

/**
 * Finds where a statement keeps its program and SQLite's opcode numbers, and checks the counting
 * end to end; `undefined` when this build does not fit (the caller reports it).
 *
 * - `Vdbe.aOp`/`nOp`: the pointer and length whose ops match `EXPLAIN`'s P1–P3, which also gives
 *   `sizeof(Op)`;
 * - opcode numbers: SQLite's own table of opcode names (the one `EXPLAIN` prints from), found by
 *   the entries of two opcodes whose numbers a compiled program shows, then checked against
 *   `EXPLAIN` of every probe statement;
 * - the `p4type` of a sub-program and of an index's key, from a trigger and an index seek;
 * - SQLite's allocator keeps an 8-byte size header (a block allocated here with one is freed by
 *   `sqlite3_free` and comes back from the next allocation);
 * - counting: a point lookup reads 1 row, a scan of 7 rows reads 7, an insert that fires a trigger
 *   reads nothing and writes 3 rows (table, index, the trigger's insert).
 */
export function locateProgramLayout(
  raw: ProbeFunctions,
  heap: WasmHeap,
  counterOffset: number,
  probe: LayoutProbe,
): ProgramLayout | undefined {
  const module: CounterModule = { heap, _malloc: (n) => raw._malloc(n), _free: (p) => raw._free(p) };
  const lookup = "SELECT x FROM probe WHERE rowid = ?";
  const stmt = probe.compile(lookup);
  const rows = probe.explain(lookup);
  const matches = (at: number, count: number, size: number, list: (string | number | null)[][]) =>
    count === list.length &&
    list.every((r, i) => {
      const b = at + i * size;
      return (heap.u32(b + 4) | 0) === r[2] && (heap.u32(b + 8) | 0) === r[3] && (heap.u32(b + 12) | 0) === r[4];
    });
  let opsOffset = -1;
  let opSize = 0;
  for (let at = 0; at < 512 && opsOffset < 0; at += 4) {
    const ops = heap.u32(stmt + at);
    if (ops < 1024 || ops + 64 > heap.bytes.length || heap.u32(stmt + at + 4) !== rows.length) continue;
    opSize = [20, 24, 28, 32, 40].find((size) => matches(ops, rows.length, size, rows)) ?? 0;
    if (opSize > 0) opsOffset = at;
  }
  if (opsOffset < 0) return undefined;
  const opcodeAt = (program: number, i: number) => heap.bytes[heap.u32(program + opsOffset) + i * opSize] as number;
  const names = opcodeNames(heap, opcodeAt(stmt, 0), opcodeAt(stmt, rows.length - 1));
  if (names === undefined || rows[0]?.[1] !== "Init" || rows[rows.length - 1]?.[1] !== "Goto") return undefined;
  const opcodes = new Map(names.map((name, i) => [name, i]));
  if (!OPCODES_NEEDED.every((name) => opcodes.has(name))) return undefined;
  // Every probe's opcodes, main program and sub-program, read as EXPLAIN names them.
  const insert = "INSERT INTO probe VALUES (8, 8)";
  const seek = "SELECT x FROM probe WHERE y = ?";
  const insertStmt = probe.compile(insert);
  const seekStmt = probe.compile(seek);
  const sameNames = (program: number, list: (string | number | null)[][]) =>
    list.every((r, i) => names[opcodeAt(program, i)] === r[1]);
  const insertRows = probe.explain(insert);
  const mainLength = heap.u32(insertStmt + opsOffset + 4);
  const seekRows = probe.explain(seek);
  if (
    !sameNames(stmt, rows) ||
    !sameNames(seekStmt, seekRows) ||
    !sameNames(insertStmt, insertRows.slice(0, mainLength))
  ) {
    return undefined;
  }
  const opAt = (program: number, i: number) => heap.u32(program + opsOffset) + i * opSize;
  const programIndex = insertRows.findIndex((r) => r[1] === "Program");
  const indexOpen = seekRows.findIndex((r) => r[1] === "OpenRead" && String(r[5]).startsWith("k("));
  if (programIndex < 0 || indexOpen < 0) return undefined;
  const p4type = (at: number) => ((heap.bytes[at + 1] as number) << 24) >> 24;
  const programOp = opAt(insertStmt, programIndex);
  const sub = heap.u32(programOp + 16);
  if (!matches(heap.u32(sub), heap.u32(sub + 4), opSize, insertRows.slice(mainLength))) return undefined;
  const layout: ProgramLayout = {
    opsOffset,
    counterOffset,
    opSize,
    opcodes,
    names,
    p4SubProgram: p4type(programOp),
    p4KeyInfo: p4type(opAt(seekStmt, indexOpen)),
  };
  if (!allocatorKeepsHeader(raw, heap)) return undefined;
  const counted = (s: number, value: number) => {
    const counters = ProgramCounters.instrument(module, layout, s);
    try {
      counters.begin();
      raw._sqlite3_reset(s);
      raw._sqlite3_bind_double(s, 1, value);
      while (raw._sqlite3_step(s) === 100 /* SQLITE_ROW */);
      raw._sqlite3_reset(s);
      const c = counters.counts([value]);
      return [c.read, c.written];
    } finally {
      counters.release();
    }
  };
  const scan = probe.compile("SELECT x FROM probe WHERE x > ?");
  const ok =
    counted(stmt, 3).join() === "1,0" && counted(scan, 0).join() === "7,0" && counted(insertStmt, 0).join() === "0,3";
  return ok ? layout : undefined;
}

/** SQLite's opcode names by number, found by where `Init` and `Goto` sit in its name table. */
function opcodeNames(heap: WasmHeap, init: number, goto: number): string[] | undefined {
  const bytes = heap.bytes;
  const text = (ptr: number) => {
    let s = "";
    for (let i = ptr; i < bytes.length && (bytes[i] as number) !== 0 && s.length < 32; i++)
      s += String.fromCharCode(bytes[i] as number);
    return s;
  };
  const limit = Math.min(bytes.length, 64 << 20) >>> 2;
  for (let w = 0; w < limit; w++) {
    const ptr = heap.u32(w * 4);
    if (ptr < 1024 || ptr + 5 > bytes.length || bytes[ptr] !== 0x49 /* I */ || text(ptr) !== "Init") continue;
    const base = w * 4 - init * 4;
    if (base < 0 || text(heap.u32(base + goto * 4)) !== "Goto") continue;
    const names: string[] = [];
    for (let i = 0; i < 256; i++) {
      const p = heap.u32(base + i * 4);
      const name = p > 1024 && p < bytes.length ? text(p) : "";
      if (!/^[A-Z][A-Za-z0-9]*$/.test(name)) break;
      names.push(name);
    }
    return names;
  }
  return undefined;
}

/** Whether a block with an 8-byte size header in front is freed by `sqlite3_free` (see the module comment). */
function allocatorKeepsHeader(raw: ProbeFunctions, heap: WasmHeap): boolean {
  const block = raw._malloc(64);
  if (block === 0) return false;
  heap.setU32(block, 56);
  heap.setU32(block + 4, 0);
  raw._sqlite3_free(block + 8);
  const again = raw._malloc(64);
  raw._free(again);
  return again === block;
}
