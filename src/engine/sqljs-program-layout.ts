/**
 * Locating, once per build, where a statement keeps its program and SQLite's opcode numbers (what
 * the row counters rewrite: sqljs-program-rewrite.ts, sqljs-row-counters.ts), on a scratch
 * connection `sqljs.ts` opens; the counting is checked end to end before the layout is used.
 */

import type { WasmHeap } from "./sqljs-heap";
import type { ProgramLayout } from "./sqljs-program-rewrite";
import { type CounterModule, ProgramCounters, recompileUnrun } from "./sqljs-row-counters";

/** A scratch connection to probe the build with (see {@link locateProgramLayout}). */
export interface LayoutProbe {
  /** Compiles `sql` on the scratch connection; returns the statement pointer. */
  compile(sql: string): number;
  /** `EXPLAIN sql`: address, opcode, p1, p2, p3, p4, p5 per row. */
  explain(sql: string): (string | number | null)[][];
  /** Runs `sql` on the scratch connection; throws its error. */
  exec(sql: string): void;
  /** The scratch connection's pointer. */
  readonly database: number;
}

/** The C functions the probe calls. */
interface ProbeFunctions {
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  _sqlite3_free(ptr: number): void;
  _sqlite3_reset(stmt: number): number;
  _sqlite3_bind_double(stmt: number, index: number, value: number): number;
  _sqlite3_bind_text(stmt: number, index: number, ptr: number, bytes: number, destructor: number): number;
  _sqlite3_step(stmt: number): number;
  stringToNewUTF8(text: string): number;
}

/** The schema the probe statements run on. */
export const LAYOUT_PROBE_SCHEMA =
  "CREATE TABLE probe (x, y); CREATE INDEX probe_y ON probe (y); CREATE TABLE probe_log (z);" +
  "CREATE TRIGGER probe_t AFTER INSERT ON probe BEGIN INSERT INTO probe_log VALUES (new.x); END;" +
  "INSERT INTO probe VALUES (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7);" +
  "CREATE TABLE probe_text (id INTEGER PRIMARY KEY, t TEXT); CREATE INDEX probe_text_t ON probe_text (t);" +
  "INSERT INTO probe_text VALUES (1, 'a'), (2, 'b'), (3, 'ba'), (4, 'c'); PRAGMA case_sensitive_like = ON;";

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
  "Prev",
  "Next",
  "Insert",
  "IdxInsert",
  "VUpdate",
  "Delete",
  "Clear",
  "Count",
  "SeekRowid",
  "IsType",
  "SCopy",
  "Affinity",
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
 * - `SQLITE_QueryOnly` in `sqlite3.flags`: the one bit that `PRAGMA query_only` sets and clears
 *   (found before any probe statement is compiled: the pragma expires every statement), checked by
 *   a write that fails with it set by hand and works without; `Vdbe.db` is a statement's first word;
 * - `Vdbe.expired`: the one bit of a statement that binding its LIKE pattern sets;
 * - `Vdbe.aMem` and `sizeof(Mem)`: where two bound values stepped into registers sit
 *   ({@link locateRegisters}), for the main program's scratch register;
 * - counting: a point lookup reads 1 row, a scan of 7 rows reads 7, an insert that fires a trigger
 *   reads nothing and writes 3 rows (table, index, the trigger's insert), a join onto a rowid
 *   through 7 run-time text keys that read as integers and find no row reads 14 (7 rows, 7 seeks,
 *   told through the scratch register), and a delete whose plan
 *   its bound LIKE pattern changes, recompiled before it runs (`recompileUnrun`), reads 4 and
 *   writes 2 (as on the platform).
 */
export function locateProgramLayout(
  raw: ProbeFunctions,
  heap: WasmHeap,
  counterOffset: number,
  probe: LayoutProbe,
): ProgramLayout | undefined {
  const module: CounterModule = { heap, _malloc: (n) => raw._malloc(n), _free: (p) => raw._free(p) };
  const queryOnly = locateQueryOnly(heap, probe);
  if (queryOnly === undefined) return undefined;
  const lookup = "SELECT x FROM probe WHERE rowid = ?";
  const stmt = probe.compile(lookup);
  if (heap.u32(stmt) !== probe.database) return undefined;
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
  const like = probe.compile("DELETE FROM probe_text WHERE t LIKE ?");
  const pattern = raw.stringToNewUTF8("b%");
  const unbound = heap.bytes.slice(like, like + counterOffset);
  raw._sqlite3_bind_text(like, 1, pattern, -1, -1 /* SQLITE_TRANSIENT */);
  raw._free(pattern);
  const bound = heap.bytes.slice(like, like + counterOffset);
  const changed = [...unbound.keys()].filter((i) => unbound[i] !== bound[i]);
  const expiredByte = changed[0] ?? -1;
  if (
    changed.length !== 1 ||
    ((unbound[expiredByte] as number) & 3) !== 0 ||
    (bound[expiredByte] as number) - (unbound[expiredByte] as number) !== 1
  ) {
    return undefined;
  }
  const registers = locateRegisters(raw, heap, probe);
  if (registers === undefined) return undefined;
  const layout: ProgramLayout = {
    opsOffset,
    counterOffset,
    opSize,
    opcodes,
    names,
    p4SubProgram: p4type(programOp),
    p4KeyInfo: p4type(opAt(seekStmt, indexOpen)),
    expiredByte,
    queryOnlyByte: queryOnly[0],
    queryOnlyBit: queryOnly[1],
    registersOffset: registers[0],
    registerSize: registers[1],
    // SQLITE_AFF_NUMERIC, for the copies' OP_Affinity; kept for the module's life.
    numericAffinity: raw.stringToNewUTF8("C"),
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
  const recompiledAndCounted = () => {
    let counters = ProgramCounters.instrument(module, layout, like);
    if (recompileUnrun(heap, layout, like, () => raw._sqlite3_step(like)) !== "recompiled") {
      counters.release();
      return "";
    }
    raw._sqlite3_reset(like);
    counters = ProgramCounters.instrument(module, layout, like);
    try {
      counters.begin();
      while (raw._sqlite3_step(like) === 100 /* SQLITE_ROW */);
      raw._sqlite3_reset(like);
      const c = counters.counts(["b%"]);
      return [c.read, c.written].join();
    } finally {
      counters.release();
    }
  };
  const scan = probe.compile("SELECT x FROM probe WHERE x > ?");
  const ok =
    counted(stmt, 3).join() === "1,0" &&
    counted(scan, 0).join() === "7,0" &&
    // A rowid seek on keys computed at run time ('10.0' … '70.0': texts that read as integers and
    // find no row), counted by the key's type through the scratch register: 7 rows and 7 seeks.
    counted(
      probe.compile("SELECT probe_text.t FROM probe JOIN probe_text ON probe_text.id = probe.x || ?"),
      0,
    ).join() === "14,0" &&
    counted(insertStmt, 0).join() === "0,3" &&
    recompiledAndCounted() === "4,2";
  return ok ? layout : undefined;
}

/**
 * The byte of `sqlite3.flags` holding `SQLITE_QueryOnly`, and its bit (see
 * {@link locateProgramLayout}); run before the probe compiles any statement.
 */
function locateQueryOnly(heap: WasmHeap, probe: LayoutProbe): readonly [number, number] | undefined {
  const db = probe.database;
  const size = 1024;
  const off = heap.bytes.slice(db, db + size);
  probe.exec("PRAGMA query_only = ON");
  const on = heap.bytes.slice(db, db + size);
  probe.exec("PRAGMA query_only = OFF");
  const back = heap.bytes.slice(db, db + size);
  const fails = (sql: string) => {
    try {
      probe.exec(sql);
      return false;
    } catch (e) {
      return /readonly/.test(String(e));
    }
  };
  for (let at = 0; at < size; at++) {
    const bit = ((on[at] as number) ^ (off[at] as number)) & 0xff;
    const single = bit !== 0 && (bit & (bit - 1)) === 0 && ((off[at] as number) & bit) === 0;
    if (!single || back[at] !== off[at]) continue;
    const write = "UPDATE probe_log SET z = z WHERE 0";
    heap.bytes[db + at] = (off[at] as number) | bit;
    const refused = fails(write);
    heap.bytes[db + at] = off[at] as number;
    if (refused && !fails(write)) return [at, bit];
  }
  return undefined;
}

/**
 * Where a statement keeps its registers (`Vdbe.aMem`) and `sizeof(Mem)`: the pointer in the
 * statement under which two bound values, stepped into registers `EXPLAIN` names, sit one `Mem`
 * apart (a `Mem`'s value comes first).
 */
function locateRegisters(
  raw: ProbeFunctions,
  heap: WasmHeap,
  probe: LayoutProbe,
): readonly [number, number] | undefined {
  const sql = "SELECT ?1, ?2";
  const values = [1234.5, -98765.25];
  const registers = probe
    .explain(sql)
    .filter((r) => r[1] === "Variable")
    .map((r) => Number(r[3]));
  const stmt = probe.compile(sql);
  for (const [i, value] of values.entries()) raw._sqlite3_bind_double(stmt, i + 1, value);
  if (registers.length !== 2 || raw._sqlite3_step(stmt) !== 100 /* SQLITE_ROW */) return undefined;
  const found: [number, number][] = [];
  const f64 = (at: number) => new DataView(heap.bytes.buffer, at, 8).getFloat64(0, true);
  for (let at = 0; at < 512; at += 4) {
    const mems = heap.u32(stmt + at);
    if (mems < 1024 || mems + 1024 > heap.bytes.length) continue;
    for (let size = 24; size <= 64; size += 8) {
      if (registers.every((r, i) => f64(mems + r * size) === values[i])) found.push([at, size]);
    }
  }
  raw._sqlite3_reset(stmt);
  return found.length === 1 ? found[0] : undefined;
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
