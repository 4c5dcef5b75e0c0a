/**
 * The program rewrite behind the row counters (sqljs-row-counters.ts): a copy of a compiled program
 * in which SQLite counts the platform's reads and writes itself.
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
 *   (an equality seek that found its key, a `SeekRowid` that found its row);
 * - a rowid seek or rowid range seek on a key computed at run time goes through a trampoline that
 *   counts it when the key, under numeric affinity, has a type the seek goes on with (tested on a
 *   copy in a scratch register, so that the key keeps its type);
 * - `SeekEnd` (index builds) counts when the index's cursor lost its position, told by a `Prev` and
 *   a `Next` back ahead of it.
 *
 * This module only reads, rewrites and writes ops; where the copy lives and how a run is counted
 * is sqljs-row-counters.ts, and how the layout is found is sqljs-program-layout.ts.
 */

import { decodeUtf8 } from "../util/utf8";
import type { EngineValue } from "./engine";
import type { WasmHeap } from "./sqljs-heap";

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
  /** Byte offset in a statement of the byte whose two low bits are `Vdbe.expired`. */
  readonly expiredByte: number;
  /**
   * Byte offset in a connection (`Vdbe.db`, a statement's first word, points to it) of the byte of
   * `sqlite3.flags` that holds `SQLITE_QueryOnly`, and that flag's bit in it.
   */
  readonly queryOnlyByte: number;
  readonly queryOnlyBit: number;
  /**
   * Address of a NUL-terminated `"C"` (`SQLITE_AFF_NUMERIC`) that lives as long as the module: the
   * P4 of the `OP_Affinity` the copies use to tell a run-time seek key's type (see {@link rewrite}).
   */
  readonly numericAffinity: number;
  /** Byte offset of `Vdbe.aMem` (the main program's registers) in a statement, and `sizeof(Mem)`. */
  readonly registersOffset: number;
  readonly registerSize: number;
}

/** The value of a statement's parameter, as bound (see `ProgramCounters.counts`, sqljs-row-counters.ts). */
export type BoundValue = EngineValue | undefined;

/** `OP_IsType`'s P5 bits: one per SQLite type code (INTEGER 1 … NULL 5), from 0x01. */
const SQLITE_INTEGER_TYPE = 0x01;
const SQLITE_FLOAT_TYPE = 0x02;
const ALL_TYPES = 0x1f;
/**
 * The `Vdbe.aCounter` slot the copies' own `Prev`/`Next` steps land in (`SQLITE_STMTSTATUS_FILTER_HIT`,
 * which the read count leaves out: it sums slots 0–3).
 */
const UNCOUNTED_STEPS = 8;
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
export interface Site {
  /** Address of the counting `Trace` in the copy. */
  readonly at: number;
  readonly kind: "read" | "write" | "clear" | "count" | "rowidSeek" | "rowidRange";
  /** For `rowidSeek`: the `Trace` that counts found rows; for `count`: the root page. */
  readonly extra: number;
  /** For `rowidSeek`/`rowidRange`: where the key comes from, when the program shows it. */
  readonly key: KeySource | undefined;
}

/** A seek's key as the program loads it: a parameter (1-based) or a constant. */
export type KeySource = { readonly parameter: number } | { readonly value: BoundValue };

/** One op of a program, as the rewrite reads and writes it (`Op` in SQLite). */
export interface Op {
  opcode: number;
  p4type: number;
  p5: number;
  p1: number;
  p2: number;
  p3: number;
  p4: number;
}

/** Reads a program's ops. */
export function readOps(heap: WasmHeap, layout: ProgramLayout, at: number, count: number): Op[] {
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

/** Writes `op` at `at` (its P4 as a raw word, the rest of the op zeroed). */
export function writeOp(heap: WasmHeap, at: number, op: Op, opSize: number): void {
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

/** The NUL-terminated UTF-8 string at `ptr`. */
export function cString(heap: WasmHeap, ptr: number): string {
  const bytes = heap.bytes;
  let end = ptr;
  while (end < bytes.length && bytes[end] !== 0) end++;
  return decodeUtf8(bytes, ptr, end);
}

/** Rewrites one program (see the module comment): the copy's ops and its counting sites. */
export function rewrite(
  ops: readonly Op[],
  layout: ProgramLayout,
  main: boolean,
  text: (ptr: number) => string,
  scratch: () => number,
): { out: Op[]; sites: Site[] } {
  const code = (name: string) => layout.opcodes.get(name) ?? -1;
  const TRACE = code("Trace");
  const GOTO = code("Goto");
  const HALT = code("Halt");
  const REWIND = code("Rewind");
  const SORT = code("Sort");
  const IS_TYPE = code("IsType");
  const SCOPY = code("SCopy");
  const AFFINITY = code("Affinity");
  const is = (op: Op | undefined, ...names: string[]) => op !== undefined && names.some((n) => code(n) === op.opcode);
  const ephemeral = new Set<number>();
  const index = new Set<number>();
  for (const op of ops) {
    if (is(op, "OpenEphemeral", "OpenAutoindex", "OpenDup", "SorterOpen", "OpenPseudo")) ephemeral.add(op.p1);
    if (is(op, "OpenRead", "OpenWrite", "ReopenIdx") && op.p4type === layout.p4KeyInfo) index.add(op.p1);
  }
  // The table each cursor was last opened on, in program order: a program may open one cursor on
  // several tables in turn (ANALYZE opens each table on the same cursor before its `Count`).
  const tableRoots = new Map<number, number>();
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
  /**
   * Counts the runs of the seek at `a` whose key register (P3), under numeric affinity, has one of
   * the `types` (IsType bits): the seek's own test, taken on a shallow copy of the key in the
   * `scratch()` register (one the program never uses; see `ProgramCounters.instrument`) so that the
   * key keeps its type. A key of one of `types` as it stands skips the copy.
   */
  const countTyped = (a: number, types: number) => {
    const o = ops[a] as Op;
    const r = scratch();
    const t = out.length;
    const isType = (register: number, mask: number, to: number): Op => ({
      opcode: IS_TYPE,
      p4type: 0,
      p5: mask,
      p1: -1,
      p2: to,
      p3: register,
      p4: 0,
    });
    out.push(
      isType(o.p3, types, t + 4),
      { opcode: SCOPY, p4type: 0, p5: 0, p1: o.p3, p2: r, p3: 0, p4: 0 },
      // The copy owns no P4 (the string is the layout's): nothing for SQLite to free.
      { opcode: AFFINITY, p4type: 0, p5: 0, p1: r, p2: 1, p3: 0, p4: layout.numericAffinity },
      isType(r, ALL_TYPES & ~types, t + 5),
      op(TRACE, t + 5),
      { ...o },
      op(GOTO, a + 1),
    );
    out[a] = op(GOTO, t);
    sites.push({ at: t + 4, kind: "read", extra: 0, key: undefined });
  };
  for (let a = 0; a < ops.length; a++) {
    const o = ops[a] as Op;
    if (is(o, "OpenRead", "OpenWrite")) {
      if (o.p3 === 0) tableRoots.set(o.p1, o.p2);
      else tableRoots.delete(o.p1);
    }
    if (o.opcode === REWIND) (out[a] as Op).opcode = SORT;
    else if (is(o, "Last", "VNext", "NotExists")) countRuns(a, "read");
    else if (is(o, "SeekEnd")) {
      // SeekEnd repositions (and the platform counts) only when the cursor lost its position: the
      // first run, and after each insert that rebalanced the B-tree. A valid cursor sits on the last
      // entry (every insert of an index build appends): a Prev that moves there, and a Next back,
      // tell it; one that does not leaves the cursor unpositioned, as SeekEnd then finds it. Their
      // own steps go to an aCounter slot the read count leaves out.
      const t = out.length;
      const step = (name: string, to: number): Op => ({ ...op(code(name), to), p1: o.p1, p5: UNCOUNTED_STEPS });
      out.push(step("Prev", t + 2), op(TRACE, t + 3), step("Next", t + 3), { ...o }, op(GOTO, a + 1));
      out[a] = op(GOTO, t);
      sites.push({ at: t + 1, kind: "read", extra: 0, key: undefined });
    } else if (is(o, "Insert", "IdxInsert", "VUpdate")) {
      // VUpdate's P1 is a flag, not a cursor: a virtual table is never ephemeral.
      if (is(o, "VUpdate") || !ephemeral.has(o.p1)) countRuns(a, "write");
    } else if (is(o, "Delete")) {
      if (!ephemeral.has(o.p1) && (o.p2 & OPFLAG_NCHANGE) !== 0) countRuns(a, "write");
    } else if (is(o, "Clear")) {
      if (o.p3 !== 0) countRuns(a, "clear");
    } else if (is(o, "Count")) {
      if (o.p3 === 0) countRuns(a, "count", tableRoots.get(o.p1) ?? 0);
    } else if (is(o, "SeekRowid")) {
      const key = keyOf(a, o.p3);
      if (key !== undefined) {
        // Runs counted before, found rows after: which one the platform counts depends on the key.
        const trampoline = out.length;
        out.push({ ...o }, op(TRACE, a + 1));
        out[a] = op(TRACE, trampoline);
        sites.push({ at: a, kind: "rowidSeek", extra: trampoline + 1, key });
      } else {
        // A key computed at run time counts when it reads as an integer (SeekRowid gives up on any
        // other before the platform counts: a NULL, a blob, a fractional real, a text that is none).
        countTyped(a, SQLITE_INTEGER_TYPE);
      }
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
      else {
        const key = keyOf(a, o.p3);
        // A rowid range seek moves (and counts) with a key that reads as a number; a NULL, a blob
        // or a text that is no number jumps (or, for SeekLT/LE, ends the scan) before the count.
        if (key !== undefined) countRuns(a, "rowidRange", 0, key);
        else countTyped(a, SQLITE_INTEGER_TYPE | SQLITE_FLOAT_TYPE);
      }
    }
  }
  return { out, sites };
}
