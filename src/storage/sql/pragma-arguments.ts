/**
 * Arguments of the `pragma_*` table-valued functions, judged as the platform judges them.
 *
 * SQLite runs `PRAGMA name(arg)` for each call of such a function, when the statement runs, with
 * the argument's value at that moment; the platform's authorizer sees that pragma and refuses it
 * (`not authorized: SQLITE_AUTH`, while the statement runs) when the argument names an internal
 * table. An argument written as a literal (a string or a number) that the rule allows is left as
 * it is. Any other argument (a refused literal, a column, a bound parameter, a subquery,
 * `lower('…')`, a concatenation) is checked when the statement runs, as the platform refuses it then:
 * {@link guardPragmaArguments} wraps it in {@link PRAGMA_ARGUMENT_GUARD}, a function every storage
 * connection has (see {@link registerPragmaArgumentGuard}), which applies the same rule to the
 * value SQLite is about to use and fails the statement with the platform's error otherwise.
 *
 * The wrapped text is what SQLite compiles and what the commit log records, so replay checks the
 * same way. `CAST(… AS TEXT)` hands the pragma exactly the text SQLite would have made of the value
 * itself. User SQL cannot call the guard: it is not on the function allow-list, and a statement that
 * names it fails as with any function the platform does not have.
 */
import type { EngineValue, SqlEngine } from "../../engine/engine";
import { decodeUtf8 } from "../../util/utf8";
import { isPragmaAllowed, PRAGMA_FUNCTIONS } from "./allowed-pragmas";
import { PRAGMA_ARGUMENT_REFUSED, SQLITE_AUTH, SQLITE_ERROR, sqliteError } from "./sql-errors";
import type { ProgramOp } from "./sql-program";
import { byteOffset, isKeyword, matchingParen, type SqlToken, tokenize } from "./sql-tokenizer";

/** The run-time check's function name (internal: `_cf_` names are out of user SQL's reach). */
export const PRAGMA_ARGUMENT_GUARD = "_cf_pragma_argument";

/**
 * Registers the guard on a connection of the storage (live connections and replay alike, so that a
 * logged statement that calls it replays the same way).
 */
export function registerPragmaArgumentGuard(engine: SqlEngine): void {
  engine.createFunction(PRAGMA_ARGUMENT_GUARD, 3, (pragma, position, value) => {
    // `value` is already text (CAST in the wrapped call) or NULL (no argument, as SQLite treats it).
    const text =
      value === null ? undefined : value instanceof Uint8Array ? decodeUtf8(value, 0, value.length) : String(value);
    const name = String(pragma);
    const allowed =
      position === 1
        ? text === undefined || text.toLowerCase() === "main"
        : PRAGMA_FUNCTIONS.has(name) && isPragmaAllowed(name, text);
    if (!allowed) throw new Error(PRAGMA_ARGUMENT_REFUSED);
    return value as EngineValue;
  });
}

/** A `pragma_*(…)` call: its pragma name and each argument's first and last token. */
interface PragmaCall {
  readonly name: string;
  readonly args: ReadonlyArray<{ readonly first: number; readonly last: number }>;
}

/** Keywords after which `name(` names an object and its columns, not a call. */
const NAME_BEFORE = new Set(["TABLE", "VIEW", "INDEX", "TRIGGER", "INTO", "ON", "REFERENCES", "EXISTS", "USING"]);

/**
 * Whether `name(` at `k` names an object with a column list: a table, view or index being created
 * (`CREATE TABLE pragma_stats(a)`, also `main.pragma_stats(a)`), an INSERT's target, a foreign
 * key's parent, or a common table expression (`WITH pragma_x(a) AS (…)`). The platform lets user
 * objects have such names; the compiled program's check (see {@link checkPragmaFilters}) still
 * sees any `pragma_*` table it really opens.
 */
function isNamePosition(tokens: readonly SqlToken[], k: number): boolean {
  const before = tokens[k - 1]?.text === "." ? tokens[k - 3] : tokens[k - 1];
  if (isKeywordIn(before, NAME_BEFORE)) return true;
  const close = matchingParen(tokens, k + 1);
  const next = tokens[close + 2];
  return (
    isKeyword(tokens[close + 1], "AS") &&
    (next?.text === "(" || isKeyword(next, "NOT") || isKeyword(next, "MATERIALIZED"))
  );
}

function isKeywordIn(token: SqlToken | undefined, words: ReadonlySet<string>): boolean {
  return token !== undefined && token.kind === "identifier" && !token.quoted && words.has(token.text.toUpperCase());
}

/** The `pragma_*` calls of a statement's tokens (any case of the name, as SQLite resolves it). */
function pragmaCalls(tokens: readonly SqlToken[]): PragmaCall[] {
  const calls: PragmaCall[] = [];
  for (let k = 0; k + 1 < tokens.length; k++) {
    const t = tokens[k] as SqlToken;
    if (t.kind !== "identifier" || tokens[k + 1]?.text !== "(" || !/^pragma_/i.test(t.value)) continue;
    if (isNamePosition(tokens, k)) continue;
    const args: { first: number; last: number }[] = [];
    let depth = 0;
    let first = k + 2;
    for (let j = k + 1; j < tokens.length; j++) {
      const text = tokens[j]?.text;
      if (text === "(") depth++;
      else if (text === ")" && --depth === 0) {
        if (j > first) args.push({ first, last: j - 1 });
        break;
      } else if (text === "," && depth === 1) {
        args.push({ first, last: j - 1 });
        first = j + 1;
      }
    }
    calls.push({ name: t.value.slice("pragma_".length).toLowerCase(), args });
  }
  return calls;
}

/** A single string or number token: judged from the text, before compiling. */
function isLiteral(tokens: readonly SqlToken[], arg: { first: number; last: number }): boolean {
  const kind = tokens[arg.first]?.kind;
  return arg.first === arg.last && (kind === "string" || kind === "number");
}

/** Whether a literal argument at `position` (0: the pragma's, 1: the schema) passes the pragma's rule. */
function literalAllowed(pragma: string, position: number, value: string): boolean {
  return position === 1 ? value.toLowerCase() === "main" : isPragmaAllowed(pragma, value);
}

/** Whether the argument is exactly a call of the guard (what {@link guardPragmaArguments} wrote). */
function isGuarded(tokens: readonly SqlToken[], arg: { first: number; last: number }): boolean {
  const t = tokens[arg.first];
  return (
    t?.kind === "identifier" &&
    t.value.toLowerCase() === PRAGMA_ARGUMENT_GUARD &&
    tokens[arg.first + 1]?.text === "(" &&
    tokens[arg.last]?.text === ")"
  );
}

/**
 * The text to compile instead of `sql` (one statement), with every non-literal argument of a
 * `pragma_*` call wrapped in the guard; `undefined` when nothing needs wrapping. Throws the
 * platform's "no such function" when the text itself names the guard.
 */
export function guardPragmaArguments(sql: string): string | undefined {
  const mentionsGuard = sql.toLowerCase().includes(PRAGMA_ARGUMENT_GUARD);
  if (!mentionsGuard && !/pragma_/i.test(sql)) return undefined;
  const tokens = tokenize(sql);
  if (mentionsGuard) {
    const k = tokens.findIndex((t) => t.kind === "identifier" && t.value.toLowerCase() === PRAGMA_ARGUMENT_GUARD);
    const t = tokens[k];
    if (t !== undefined) {
      throw sqliteError(`no such function: ${t.value}`, SQLITE_ERROR, { offset: byteOffset(sql, t.start) });
    }
  }
  // Insertions (position, text); spans of nested calls nest strictly, so applying them from the
  // end of the text backwards keeps every position valid.
  const insertions: [number, string][] = [];
  // A view's or trigger's text is stored: a refused literal there is refused when it is created.
  const creates = isKeyword(tokens[0], "CREATE");
  for (const call of pragmaCalls(tokens)) {
    if (!PRAGMA_FUNCTIONS.has(call.name)) continue; // refused by name (checkPragmaFunctions)
    call.args.forEach((arg, position) => {
      // A literal the rule allows needs no check; one it refuses is checked when it runs, as on the
      // platform: a statement whose loop over the call never starts (`WHERE ?1 IS NULL` bound to 1)
      // succeeds there, and a wrong number of bindings is reported first.
      if (
        isLiteral(tokens, arg) &&
        (creates || literalAllowed(call.name, position, (tokens[arg.first] as SqlToken).value))
      )
        return;
      const start = (tokens[arg.first] as SqlToken).start;
      const end = (tokens[arg.last] as SqlToken).end;
      insertions.push([start, `${PRAGMA_ARGUMENT_GUARD}('${call.name}', ${position}, CAST((`]);
      insertions.push([end, ") AS TEXT))"]);
    });
  }
  if (insertions.length === 0) return undefined;
  insertions.sort((a, b) => b[0] - a[0]);
  let out = sql;
  for (const [at, text] of insertions) out = out.slice(0, at) + text + out.slice(at);
  return out;
}

/**
 * The check of a compiled statement's `pragma_*` calls (`tokens` of the text SQLite compiled): the
 * name must be a readable pragma, a literal argument must pass the pragma's rule, a schema must be
 * `main`, and any other argument must be guarded (checked when it runs); anything else is refused.
 */
export function checkPragmaFunctions(tokens: readonly SqlToken[]): void {
  for (const call of pragmaCalls(tokens)) {
    if (!PRAGMA_FUNCTIONS.has(call.name)) throw sqliteError("not authorized", SQLITE_AUTH);
    if (call.args.length === 0 && !isPragmaAllowed(call.name, undefined))
      throw sqliteError("not authorized", SQLITE_AUTH);
    call.args.forEach((arg, position) => {
      if (isGuarded(tokens, arg)) return;
      if (!isLiteral(tokens, arg)) throw sqliteError("not authorized", SQLITE_AUTH);
      if (!literalAllowed(call.name, position, (tokens[arg.first] as SqlToken).value))
        throw sqliteError("not authorized", SQLITE_AUTH);
    });
  }
}

/** Opcodes that write register P2. */
const WRITES_P2 = new Set([
  "Integer",
  "Int64",
  "Real",
  "String8",
  "String",
  "Blob",
  "Variable",
  "SCopy",
  "IntCopy",
  "Rowid",
  "IdxRowid",
  "VRowid",
  "Sequence",
  "NewRowid",
  "RowData",
  "Count",
  "ReadCookie",
  "Pagecount",
  "MaxPgcnt",
  "OffsetLimit",
  "CreateBtree",
  "BeginSubrtn",
  "Not",
  "BitNot",
  "IsTrue",
  "ZeroOrNull",
  "GetSubtype",
  "SetSubtype",
  "Param",
]);
/** Opcodes that write register P3. */
const WRITES_P3 = new Set([
  "Function",
  "PureFunc",
  "Function0",
  "PureFunc0",
  "Column",
  "VColumn",
  "Add",
  "Subtract",
  "Multiply",
  "Divide",
  "Remainder",
  "Concat",
  "BitAnd",
  "BitOr",
  "ShiftLeft",
  "ShiftRight",
  "And",
  "Or",
  "Offset",
  "IfNullRow",
  "AggValue",
]);
/** Opcodes that change register P1 in place. */
const WRITES_P1 = new Set([
  "Cast",
  "RealAffinity",
  "MustBeInt",
  "AddImm",
  "SoftNull",
  "ClrSubtype",
  "AggFinal",
  "Gosub",
  "Yield",
  "InitCoroutine",
  "MemMax",
  "IfPos",
  "DecrJumpZero",
  "IfNotZero",
]);
/** Opcodes that only jump, compare or open, and write no register. */
const WRITES_NONE = new Set([
  "Goto",
  "Once",
  "If",
  "IfNot",
  "IsNull",
  "NotNull",
  "Eq",
  "Ne",
  "Lt",
  "Le",
  "Gt",
  "Ge",
  "Noop",
  "Explain",
  "Init",
  "Halt",
  "Transaction",
  "OpenRead",
  "OpenWrite",
  "OpenEphemeral",
  "VOpen",
  "VFilter",
  "VNext",
  "Rewind",
  "Next",
  "Prev",
  "SeekRowid",
  "NotExists",
  "SeekGE",
  "SeekGT",
  "SeekLE",
  "SeekLT",
  "IdxGE",
  "IdxGT",
  "IdxLE",
  "IdxLT",
  "ResultRow",
]);

/** Whether `op` may write register `r` (an opcode this list does not know counts if it names `r`). */
function writesRegister(op: ProgramOp, r: number): boolean {
  const { opcode, p1, p2, p3 } = op;
  if (WRITES_P2.has(opcode)) return p2 === r;
  if (WRITES_P3.has(opcode)) return p3 === r;
  if (WRITES_P1.has(opcode)) return p1 === r;
  if (WRITES_NONE.has(opcode)) return false;
  switch (opcode) {
    case "Null":
      return r >= p2 && r <= Math.max(p2, p3);
    case "Copy":
      return r >= p2 && r <= p2 + p3;
    case "Move":
      return r >= p2 && r < p2 + p3;
    case "Affinity":
      return r >= p1 && r < p1 + p2;
    default:
      return p1 === r || p2 === r || p3 === r;
  }
}

/** How an argument of a `pragma_*` virtual table gets its value. */
type ArgumentSource = { readonly kind: "guarded" } | { readonly kind: "constant"; readonly value: string | undefined };

/**
 * The op that last sets register `r` before the op at `before` (straight-line code of the same
 * program segment, which starts at `from`), as a source the check can judge; `undefined` for
 * anything else (a column, a bound parameter, another function, a copy).
 */
function argumentSource(
  program: readonly ProgramOp[],
  from: number,
  before: number,
  r: number,
): ArgumentSource | undefined {
  for (let k = before - 1; k >= from; k--) {
    const op = program[k] as ProgramOp;
    if (!writesRegister(op, r)) continue;
    switch (op.opcode) {
      case "Function":
      case "PureFunc":
      case "Function0":
      case "PureFunc0":
        return String(op.p4).replace(/\(.*$/, "").toLowerCase() === PRAGMA_ARGUMENT_GUARD && op.p3 === r
          ? { kind: "guarded" }
          : undefined;
      case "String8":
      case "String":
      case "Int64":
        return { kind: "constant", value: String(op.p4) };
      case "Integer":
        return { kind: "constant", value: String(op.p1) };
      case "Null":
        return { kind: "constant", value: undefined };
      default:
        return undefined;
    }
  }
  return undefined;
}

/**
 * The check of the arguments each `pragma_*` virtual table of a compiled program receives
 * (`pragmaTables` names the pragma of each `VOpen` operand). SQLite passes them at `VFilter`, one
 * per constrained hidden column (`arg`, then `schema`), whether the text wrote a call
 * (`pragma_table_info('t')`) or a constraint (`FROM pragma_table_info WHERE arg = 't'`, a join
 * `ON arg = …`); the platform's authorizer judges the pragma SQLite then runs, with those values or
 * with none. A constant is judged here, a call's computed argument is guarded (checked when it
 * runs); any other source (a constraint on a column, a bound parameter or an expression) is refused.
 */
export function checkPragmaFilters(program: readonly ProgramOp[], pragmaTables: ReadonlyMap<string, string>): void {
  let segment = -1;
  let from = 0;
  let cursors = new Map<number, string>();
  for (let i = 0; i < program.length; i++) {
    const op = program[i] as ProgramOp;
    if (op.segment !== segment) {
      segment = op.segment;
      from = i;
      cursors = new Map();
    }
    if (op.opcode === "VOpen") {
      const pragma = pragmaTables.get(String(op.p4));
      if (pragma === undefined) cursors.delete(op.p1);
      else cursors.set(op.p1, pragma);
      continue;
    }
    if (op.opcode !== "VFilter") continue;
    const pragma = cursors.get(op.p1);
    if (pragma === undefined) continue;
    const count = argumentSource(program, from, i, op.p3 + 1);
    const argc = count?.kind === "constant" ? Number(count.value) : Number.NaN;
    if (!(argc >= 0 && argc <= 2)) throw sqliteError("not authorized", SQLITE_AUTH);
    if (argc === 0 && !isPragmaAllowed(pragma, undefined)) throw sqliteError("not authorized", SQLITE_AUTH);
    for (let position = 0; position < argc; position++) {
      const source = argumentSource(program, from, i, op.p3 + 2 + position);
      if (source?.kind === "guarded") continue;
      if (source === undefined) throw sqliteError("not authorized", SQLITE_AUTH);
      const value = source.value;
      const allowed =
        position === 1 ? value === undefined || value.toLowerCase() === "main" : isPragmaAllowed(pragma, value);
      if (!allowed) throw sqliteError("not authorized", SQLITE_AUTH);
    }
  }
}
