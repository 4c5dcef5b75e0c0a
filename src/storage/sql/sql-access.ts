/**
 * The access decision: whether user SQL may run, as the platform's authorizer decides it.
 *
 * workerd installs an SQLite authorizer that SQLite consults while compiling. sql.js offers none
 * (its build exports no `sqlite3_set_authorizer`), so each statement is judged three times over,
 * once per statement text and schema version (the facade caches the verdict, so repeated SQL
 * costs nothing):
 *
 * 0. before SQLite compiles it ({@link checkBeforeCompile}): a PRAGMA acts while compiling, so
 *    pragmas, and the names DDL names, are judged from the tokens of the text alone;
 * 1. by its text ({@link tokenize}): the statement kind (transaction statements, ATTACH/DETACH,
 *    TEMP objects, schemas), the names a CREATE/DROP/ALTER/REINDEX names, pragma names and their
 *    arguments, and function calls written in definitions (CHECK, DEFAULT, index expressions)
 *    that only run later;
 * 2. by its compiled program ({@link explainProgram}): every B-tree the program opens
 *    (`OpenRead`/`OpenWrite` root pages, named through {@link SqlCatalog}), every function it
 *    calls (`Function`, `AggStep`… operands), every virtual table it opens (`VOpen`), and whatever
 *    writes or changes the schema. The program includes what the text hides: views, triggers
 *    (their sub-programs), CTEs, subqueries and foreign-key actions. This is what makes the `_cf_`
 *    protection independent of how a name is spelled.
 *
 * The row counters read the same program (row-counting.ts); this file only decides.
 */
import type { SqlEngine } from "../../engine/engine";
import { ActorStoreError } from "../../errors";
import { TIME_FUNCTIONS } from "./allowed-functions";
import { ALLOWED_PRAGMAS, isPragmaAllowed } from "./allowed-pragmas";
import { checkSchemaSpelling, refusedCallBeforeUpdate } from "./authorizer-order";
import {
  checkInlineFunctionCalls,
  checkWrittenFunctionCalls,
  deniedFunction,
  isAllowedFunction,
} from "./function-calls";
import { isAllowedName } from "./internal-names";
import { checkPragmaFilters, checkPragmaFunctions } from "./pragma-arguments";
import { type ProtectedRead, ROWID_COLUMN, readDenied } from "./read-denied";
import { analyzesTemp, isKnownSchema, isTempSchema, namesNothing, unknownDatabase } from "./schema-names";
import type { SchemaObject, SqlCatalog } from "./sql-catalog";
import { SQLITE_AUTH, sqliteError, TRANSACTION_STATEMENT_MESSAGE } from "./sql-errors";
import { checkProgramSize, checkStatementText, checkTableColumns, type SqlLimits } from "./sql-limits";
import { explainProgram, OPFLAG_P2ISREG, type ProgramOp } from "./sql-program";
import { isKeyword, type SqlToken, tokenize, tokenizeFirstStatement } from "./sql-tokenizer";

/** Statement kinds the facade distinguishes. */
export const STATEMENT_KINDS = [
  "select",
  "insert",
  "update",
  "delete",
  "create",
  "drop",
  "alter",
  "pragma",
  "analyze",
  "reindex",
  "vacuum",
  "explain",
  "other",
] as const;

/** One of {@link STATEMENT_KINDS}. */
export type StatementKind = (typeof STATEMENT_KINDS)[number];

/** The access decision about an allowed statement (a refused one throws instead). */
export interface AccessVerdict {
  /** The statement kind. */
  readonly kind: StatementKind;
  /** Not proven read-only: the facade calls `host.beforeWrite` and runs it to completion in `exec`. */
  readonly mayWrite: boolean;
  /** Changes the schema or compilation-affecting state: cached verdicts must be recomputed. */
  readonly changesSchema: boolean;
  /** Calls a date/time function, so its steps must see the host's 'now'. */
  readonly usesTime: boolean;
  /** An INSERT/UPDATE/DELETE with RETURNING. */
  readonly returning: boolean;
  /** Parameter numbers used as LIKE/GLOB patterns (their length is checked at bind time). */
  readonly likeParameters: readonly number[];
  /**
   * ANALYZE or `PRAGMA optimize`: may write row counts of internal tables into `sqlite_stat1`,
   * which the facade removes right after (see docs/sql.md).
   */
  readonly writesStatistics: boolean;
}

/** An allowed statement's verdict and the program it was judged by (none for pragmas). */
export interface AccessDecision {
  readonly verdict: AccessVerdict;
  readonly program: readonly ProgramOp[];
}

/**
 * The decision that must come before SQLite compiles the first statement of `sql`. SQLite applies
 * a PRAGMA while compiling it (flag pragmas such as `writable_schema` or `query_only`, heap
 * limits, cache sizes), before any program exists to inspect, so a PRAGMA, also behind `EXPLAIN`,
 * is judged from its text here and a refused one never reaches the engine: the connection stays
 * exactly as it was. No other statement acts while compiling.
 */
export { isAllowedName };

export function checkBeforeCompile(sql: string, catalog: SqlCatalog): void {
  const tokens = tokenizeFirstStatement(sql);
  let at = 0;
  while (isKeyword(tokens[at], "EXPLAIN")) {
    at += isKeyword(tokens[at + 1], "QUERY") && isKeyword(tokens[at + 2], "PLAN") ? 3 : 1;
  }
  const statement = at === 0 ? tokens : tokens.slice(at);
  const first = statement[0];
  switch (first?.kind === "identifier" && !first.quoted ? first.text.toUpperCase() : "") {
    case "PRAGMA":
      checkPragma(sql, statement, []);
      break;
    // The platform's authorizer runs while SQLite resolves these names, before SQLite checks
    // whether the object exists: `CREATE TABLE "_CF_KV"` is refused, not "already exists".
    case "CREATE":
      checkCreateNames(statement);
      break;
    case "DROP":
      checkDrop(statement, catalog);
      break;
    case "ALTER":
      checkAlterNames(statement, catalog);
      break;
    case "REINDEX":
    case "ANALYZE":
      checkTargetTable(statement, catalog);
      break;
  }
}

const notAuthorized = () => sqliteError("not authorized", SQLITE_AUTH);

const SCHEMA_OPCODES = new Set([
  "SetCookie",
  "CreateBtree",
  "Destroy",
  "ParseSchema",
  "DropTable",
  "DropIndex",
  "DropTrigger",
  "VCreate",
  "VDestroy",
  "Expire",
  "RenameTable",
]);
const WRITE_OPCODES = new Set(["Vacuum", "IncrVacuum", "VUpdate", "JournalMode", "Clear", "ResetSorter"]);
const FUNCTION_OPCODES = new Set([
  "Function",
  "PureFunc",
  "Function0",
  "PureFunc0",
  "AggStep",
  "AggStep1",
  "AggFinal",
  "AggValue",
  "AggInverse",
]);

interface OpenCursor {
  readonly object: SchemaObject | undefined;
  readonly write: boolean;
}

/**
 * Decides statements. Stateless apart from its limits; schema facts come from the catalog.
 *
 * @example
 * ```ts
 * const { verdict } = new SqlAccess(DEFAULT_SQL_LIMITS).check(engine, catalog, "SELECT * FROM t");
 * verdict.mayWrite; // false
 * ```
 */
export class SqlAccess {
  readonly #limits: SqlLimits;

  constructor(limits: SqlLimits) {
    this.#limits = limits;
  }

  /**
   * Decides one compiled statement (`sql` is its text). Throws the platform's error when the
   * platform would refuse it; returns the verdict, and the program it read, otherwise.
   */
  check(engine: SqlEngine, catalog: SqlCatalog, sql: string, explained = false): AccessDecision {
    // SQLite skips empty statements (`;`) before the one it compiles and keeps them in its text
    // (`;SELECT 1`, also after `SELECT 0; ` in a script): judge from the first token after them,
    // and list the statement's own program (`EXPLAIN ;SELECT 1` is a syntax error). Offsets stay
    // relative to the whole text, as the platform reports them.
    const all = tokenize(sql);
    let lead = 0;
    while (all[lead]?.text === ";") lead++;
    const tokens = lead === 0 ? all : all.slice(lead);
    const statement = lead === 0 ? sql : sql.slice(tokens[0]?.start ?? sql.length);
    if (isKeyword(tokens[0], "EXPLAIN")) {
      const at = isKeyword(tokens[1], "QUERY") && isKeyword(tokens[2], "PLAN") ? 3 : 1;
      // The listed program never runs: its `pragma_*` tables run no pragma, which is what the
      // platform's authorizer judges of them, so their arguments pass (see checkPragmaFilters).
      const inner = this.check(engine, catalog, sql.slice(tokens[at]?.start ?? sql.length), true).verdict;
      const verdict: AccessVerdict = {
        ...inner,
        kind: "explain",
        mayWrite: false,
        changesSchema: false,
        usesTime: false,
        returning: false,
        writesStatistics: false,
      };
      return { verdict, program: NO_PROGRAM };
    }
    const facts = checkStatementText(sql, tokens, catalog.functionNames, this.#limits);
    const first = tokens[0];
    const word = first?.kind === "identifier" && !first.quoted ? first.text.toUpperCase() : "";
    switch (word) {
      case "BEGIN":
      case "COMMIT":
      case "END":
      case "ROLLBACK":
      case "SAVEPOINT":
      case "RELEASE":
        throw new Error(TRANSACTION_STATEMENT_MESSAGE);
      case "ATTACH":
      case "DETACH":
        throw notAuthorized();
      case "PRAGMA":
        return { verdict: checkPragma(sql, tokens, facts.likeParameters), program: NO_PROGRAM };
      case "CREATE":
        checkCreate(sql, tokens, catalog, this.#limits);
        break;
      case "DROP":
        checkDrop(tokens, catalog);
        break;
      case "ALTER":
        checkAlter(tokens, catalog, this.#limits);
        break;
      case "REINDEX":
      case "ANALYZE":
        checkTargetTable(tokens, catalog);
        break;
    }
    if (!explained) checkPragmaFunctions(tokens);
    checkInlineFunctionCalls(sql, tokens);
    const kind = statementKind(tokens, word);
    const program = explainProgram(engine, statement);
    const decided = decideProgram(catalog, sql, tokens, kind, program, explained);
    checkSchemaSpelling(tokens, program, catalog);
    checkProgramSize(decided.mainOps, this.#limits);
    const verdict: AccessVerdict = {
      kind,
      mayWrite: decided.mayWrite,
      changesSchema: decided.changesSchema,
      usesTime: decided.usesTime,
      returning: (kind === "insert" || kind === "update" || kind === "delete") && hasTopLevel(tokens, "RETURNING"),
      likeParameters: facts.likeParameters,
      writesStatistics: kind === "analyze",
    };
    return { verdict, program };
  }
}

const NO_PROGRAM: readonly ProgramOp[] = Object.freeze([]);

/** The statement kind from its first keyword (for WITH, the first top-level DML keyword). */
function statementKind(tokens: readonly SqlToken[], word: string): StatementKind {
  switch (word) {
    case "SELECT":
    case "VALUES":
      return "select";
    case "INSERT":
    case "REPLACE":
      return "insert";
    case "UPDATE":
      return "update";
    case "DELETE":
      return "delete";
    case "CREATE":
      return "create";
    case "DROP":
      return "drop";
    case "ALTER":
      return "alter";
    case "ANALYZE":
      return "analyze";
    case "REINDEX":
      return "reindex";
    case "VACUUM":
      return "vacuum";
    case "WITH": {
      let depth = 0;
      for (const t of tokens) {
        if (t.text === "(") depth++;
        else if (t.text === ")") depth--;
        else if (depth === 0 && t.kind === "identifier" && !t.quoted) {
          const w = t.text.toUpperCase();
          if (w === "SELECT" || w === "VALUES") return "select";
          if (w === "INSERT" || w === "REPLACE") return "insert";
          if (w === "UPDATE") return "update";
          if (w === "DELETE") return "delete";
        }
      }
      return "select";
    }
    default:
      return "other";
  }
}

function hasTopLevel(tokens: readonly SqlToken[], word: string): boolean {
  let depth = 0;
  for (const t of tokens) {
    if (t.text === "(") depth++;
    else if (t.text === ")") depth--;
    else if (depth === 0 && isKeyword(t, word)) return true;
  }
  return false;
}

/** `[schema.]name` starting at `i`. */
function qualifiedName(
  tokens: readonly SqlToken[],
  i: number,
): { schema: string | undefined; name: string; next: number } | undefined {
  const a = tokens[i];
  if (a === undefined || (a.kind !== "identifier" && a.kind !== "string")) return undefined;
  if (tokens[i + 1]?.text === ".") {
    const b = tokens[i + 2];
    if (b === undefined) return undefined;
    return { schema: a.value, name: b.value, next: i + 3 };
  }
  return { schema: undefined, name: a.value, next: i + 1 };
}

function skipIfExists(tokens: readonly SqlToken[], i: number): number {
  if (isKeyword(tokens[i], "IF")) {
    if (isKeyword(tokens[i + 1], "NOT")) return i + 3;
    return i + 2;
  }
  return i;
}

/** TEMP objects and objects in another schema are refused, as are `_cf_` names. */
function checkSchemaAndName(target: { schema: string | undefined; name: string } | undefined): void {
  if (target === undefined) return;
  if (target.schema !== undefined && target.schema.toLowerCase() !== "main") throw notAuthorized();
  if (!isAllowedName(target.name)) throw notAuthorized();
}

/** `ANALYZE x` / `REINDEX x`: `x` is a table, or an index that stands for its table. */
function checkTargetTable(tokens: readonly SqlToken[], catalog: SqlCatalog): void {
  const target = qualifiedName(tokens, 1);
  if (target === undefined) return;
  // `ANALYZE temp` would create `sqlite_stat1` in temp (schema-names.ts).
  if (isKeyword(tokens[0], "ANALYZE") && analyzesTemp(target)) throw notAuthorized();
  // `ANALYZE _cf_KV` would write internal row counts into sqlite_stat1. A WITHOUT ROWID table's
  // key index has no row in sqlite_schema: its name says its table.
  const table =
    catalog.byName(target.name)?.table ?? /^sqlite_autoindex_(.+)_\d+$/i.exec(target.name)?.[1] ?? target.name;
  if (isAllowedName(target.name) && isAllowedName(table)) return;
  // A schema that does not exist is SQLite's `unknown database nosuch`, found before the
  // platform's authorizer sees the name; so is what names nothing in temp (which holds only its
  // schema table): `no such table: temp._cf_KV`, `unable to identify the object to be reindexed`.
  if (target.schema !== undefined && !/^main$/i.test(target.schema)) {
    if (!/^temp$/i.test(target.schema) || !/^sqlite_(master|schema|temp_master|temp_schema)$/i.test(target.name))
      return;
  }
  // SQLite looks the name up before the platform's authorizer sees it: one that names nothing in
  // main is SQLite's `no such table` (`unable to identify the object to be reindexed`).
  // (A key index's name stands for its table: that B-tree has no row in sqlite_schema.)
  if (target.schema === undefined || target.schema.toLowerCase() === "main") {
    if (catalog.byName(table) === undefined) {
      catalog.invalidate();
      if (catalog.byName(table) === undefined) return;
    }
  }
  throw notAuthorized();
}

interface CreateTarget {
  readonly objectType: string | undefined;
  readonly target: { schema: string | undefined; name: string; next: number } | undefined;
}

/** The names a CREATE statement names: the new object, and the table of an index or trigger. */
function checkCreateNames(tokens: readonly SqlToken[]): CreateTarget {
  let i = 1;
  const temp = isKeyword(tokens[i], "TEMP") || isKeyword(tokens[i], "TEMPORARY");
  if (temp) i++;
  if (isKeyword(tokens[i], "UNIQUE")) i++;
  const virtual = isKeyword(tokens[i], "VIRTUAL");
  if (virtual) i++;
  const objectType = tokens[i]?.text.toUpperCase();
  const target = qualifiedName(tokens, skipIfExists(tokens, i + 1));
  // SQLite fails these while compiling, before the platform's authorizer sees them and before
  // anything can act: a schema it does not know (`unknown database`), a TEMP object qualified by
  // another schema than temp. Its error is the platform's, so they are left to it.
  const schema = target?.schema;
  if (schema !== undefined && (!isKnownSchema(schema) || (temp && !isTempSchema(schema)))) {
    return { objectType, target: undefined };
  }
  if (temp) throw notAuthorized();
  checkSchemaAndName(target);
  if (target === undefined) return { objectType, target };
  if (objectType === "INDEX" && isKeyword(tokens[target.next], "ON")) {
    const table = qualifiedName(tokens, target.next + 1);
    // An index's table takes no schema in SQLite's grammar: `ON s.t` is its syntax error.
    if (table?.schema === undefined) checkSchemaAndName(table);
  }
  if (objectType === "TRIGGER") {
    const on = tokens.findIndex((t, k) => k >= target.next && isKeyword(t, "ON"));
    if (on >= 0) checkSchemaAndName(qualifiedName(tokens, on + 1));
  }
  if (virtual) {
    const module = tokens[target.next + 1];
    const name = module?.value.toLowerCase() ?? "";
    if (!isKeyword(tokens[target.next], "USING") || (name !== "fts5" && name !== "fts5vocab")) throw notAuthorized();
    throw fts5Unavailable(name);
  }
  return { objectType, target };
}

/**
 * The platform allows `fts5` (and `fts5vocab`) virtual tables; sql.js is built without fts5 (it
 * has fts3/fts4, which the platform refuses), so they cannot be created here.
 */
function fts5Unavailable(module: string): Error {
  return new ActorStoreError(
    "ERR_NOT_IMPLEMENTED",
    `CREATE VIRTUAL TABLE … USING ${module} is not available in actorstore: its SQLite (sql.js) is built without fts5, ` +
      "and the platform allows no other full-text module (fts3/fts4 are refused there). " +
      "Search with LIKE, instr() or a table of terms with an index instead, or run full-text queries on the platform.",
  );
}

function checkCreate(sql: string, tokens: readonly SqlToken[], catalog: SqlCatalog, limits: SqlLimits): void {
  const { objectType, target } = checkCreateNames(tokens);
  if (target === undefined) return;
  if (objectType === "TABLE" && tokens[target.next]?.text === "(") {
    checkTableColumns(target.name, countColumnDefinitions(tokens, target.next), limits);
  }
  // CHECK constraints, generated columns and index expressions are resolved (and authorized)
  // while the definition compiles; view and trigger bodies and DEFAULTs only when used, which
  // the program analysis of the using statement covers.
  if (objectType === "TABLE" || objectType === "INDEX") checkWrittenFunctionCalls(sql, tokens, catalog, target.next);
}

/** Column definitions in `( … )` starting at `open`, stopping at the first table constraint. */
function countColumnDefinitions(tokens: readonly SqlToken[], open: number): number {
  let depth = 0;
  let count = 0;
  let atItemStart = true;
  for (let k = open + 1; k < tokens.length; k++) {
    const t = tokens[k] as SqlToken;
    if (t.text === "(") depth++;
    else if (t.text === ")") {
      if (depth === 0) break;
      depth--;
    } else if (t.text === "," && depth === 0) {
      atItemStart = true;
      continue;
    }
    if (atItemStart) {
      atItemStart = false;
      if (["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"].some((w) => isKeyword(t, w))) break;
      count++;
    }
  }
  return count;
}

function checkDrop(tokens: readonly SqlToken[], catalog: SqlCatalog): void {
  const objectType = tokens[1]?.text.toUpperCase();
  const target = qualifiedName(tokens, skipIfExists(tokens, 2));
  // SQLite's error (or nothing, with IF EXISTS), as on the platform.
  if (namesNothing(target, objectType === "TABLE" || objectType === "VIEW")) return;
  // SQLite looks the object up before the platform's authorizer sees the DROP: one that does not
  // exist is SQLite's `no such table` (or nothing, with IF EXISTS), whatever its name.
  if (target !== undefined && droppedObjectMissing(catalog, objectType, target.name)) return;
  // Unqualified, the temp schema's table: SQLite finds it there and the platform's authorizer
  // refuses dropping a temp object before SQLite says it `may not be dropped`.
  const tempSchemaTable = /^sqlite_temp_(?:master|schema)$/i;
  if (objectType !== "INDEX" && target?.schema === undefined && tempSchemaTable.test(target?.name ?? "")) {
    throw notAuthorized();
  }
  checkSchemaAndName(target);
  if (target !== undefined && (objectType === "INDEX" || objectType === "TRIGGER")) {
    const object = catalog.byName(target.name);
    if (object !== undefined && !isAllowedName(object.table)) throw notAuthorized();
  }
}

/**
 * Whether `DROP <objectType> <name>` (or `ALTER TABLE <name>`, as "TABLE") finds nothing in the
 * main schema (its schema tables always exist; `DROP TRIGGER sqlite_master` finds nothing).
 */
function droppedObjectMissing(catalog: SqlCatalog, objectType: string | undefined, name: string): boolean {
  // A schema table always exists; no trigger has a `sqlite_` name (SQLite reserves it).
  if (/^sqlite_/i.test(name) && objectType !== "TRIGGER") return false;
  const kinds = objectType === "INDEX" ? ["index"] : objectType === "TRIGGER" ? ["trigger"] : ["table", "view"];
  const found = (): boolean => kinds.includes(catalog.byName(name)?.type ?? "");
  if (found()) return false;
  // Created earlier in this batch, after the catalog was read: look again once.
  catalog.invalidate();
  return !found();
}

/** The table an ALTER TABLE names, and the new name of a RENAME TO. */
function checkAlterNames(tokens: readonly SqlToken[], catalog: SqlCatalog): ReturnType<typeof qualifiedName> {
  const target = qualifiedName(tokens, 2);
  // SQLite's `no such table: s.x` (or `may not be altered`), as on the platform.
  if (namesNothing(target, false)) return undefined;
  // SQLite looks the table up first: `no such table: _cf_KV` before the key-value table exists.
  if (target !== undefined && droppedObjectMissing(catalog, "TABLE", target.name)) return undefined;
  checkSchemaAndName(target);
  // The new name too: `ALTER TABLE t RENAME TO _cf_KV` would make a user table internal. (A new
  // name with a schema is SQLite's syntax error: RENAME TO takes none.)
  if (target !== undefined && isKeyword(tokens[target.next], "RENAME") && isKeyword(tokens[target.next + 1], "TO")) {
    const renamed = qualifiedName(tokens, target.next + 2);
    if (renamed?.schema === undefined) checkSchemaAndName(renamed);
  }
  return target;
}

function checkAlter(tokens: readonly SqlToken[], catalog: SqlCatalog, limits: SqlLimits): void {
  const target = checkAlterNames(tokens, catalog);
  if (target === undefined) return;
  if (isKeyword(tokens[target.next], "ADD")) {
    const object = catalog.byName(target.name);
    // SQLite checks the column count on its working copy, named sqlite_altertab_<table>.
    if (object !== undefined)
      checkTableColumns(`sqlite_altertab_${object.name}`, catalog.columns(object).length + 1, limits);
  }
}

/**
 * The pragma rules. Pragmas are judged by name and argument alone, as the platform does, once
 * SQLite has found their schema: one it does not know fails first with its own error.
 */
function checkPragma(sql: string, tokens: readonly SqlToken[], likeParameters: readonly number[]): AccessVerdict {
  const target = qualifiedName(tokens, 1);
  if (target === undefined) throw notAuthorized();
  if (target.schema !== undefined && !isKnownSchema(target.schema)) throw unknownDatabase(sql, tokens[1] as SqlToken);
  if (target.schema !== undefined && target.schema.toLowerCase() !== "main") throw notAuthorized();
  let k = target.next;
  let argument: string | undefined;
  const open = tokens[k]?.text;
  if (open === "=" || open === "(") {
    k++;
    let sign = "";
    if (tokens[k]?.text === "-" || tokens[k]?.text === "+") {
      sign = tokens[k]?.text === "-" ? "-" : "";
      k++;
    }
    const value = tokens[k];
    if (value !== undefined) argument = sign + value.value;
  }
  const name = target.name;
  const allowed = isPragmaAllowed(name, argument);
  if (!allowed) throw notAuthorized();
  const boolean = ALLOWED_PRAGMAS.get(name) === "boolean";
  // A boolean pragma with an argument changes connection state that compiled programs depend on
  // (foreign keys, recursive triggers…); `optimize` runs ANALYZE. Both are writes to replay.
  const writes = (boolean && argument !== undefined) || name === "optimize";
  return {
    kind: "pragma",
    mayWrite: writes,
    changesSchema: writes,
    usesTime: false,
    returning: false,
    likeParameters,
    writesStatistics: name === "optimize",
  };
}

interface ProgramFacts {
  mainOps: number;
  mayWrite: boolean;
  changesSchema: boolean;
  usesTime: boolean;
}

/** Walks the compiled program (main program, then trigger sub-programs) and applies the rules. */
/**
 * Whether writing `object`, an internal table or index, is refused. REINDEX is judged as the
 * platform judges it, by the name of the index it rebuilds: a WITHOUT ROWID table's B-tree is its
 * key index, which SQLite names `sqlite_autoindex_<table>_1`.
 */
function isProtectedWrite(object: SchemaObject, kind: StatementKind): boolean {
  return kind !== "reindex" || (object.type === "index" && !isAllowedName(object.name));
}

function decideProgram(
  catalog: SqlCatalog,
  sql: string,
  tokens: readonly SqlToken[],
  kind: StatementKind,
  program: readonly ProgramOp[],
  explained: boolean,
): ProgramFacts {
  // ANALYZE's program calls SQLite's internal stat_* functions and reads every table; neither goes
  // through the platform's authorizer. Nor do REINDEX's reads of the tables whose indexes it
  // rebuilds: the platform judges REINDEX by the name of each index (SQLITE_REINDEX), so a bare
  // `REINDEX` or `REINDEX BINARY` also rebuilds `_cf_KV`'s key index, `sqlite_autoindex__cf_KV_1`.
  const checkReads = kind !== "analyze" && kind !== "reindex";
  const checkFunctions = kind !== "analyze";
  const facts: ProgramFacts = { mainOps: 0, mayWrite: false, changesSchema: false, usesTime: false };
  let segment = 0;
  let cursors = new Map<number, OpenCursor>();
  let protectedWrite = false;
  let deniedFunctionName: string | undefined;
  const protectedReads: ProtectedRead[] = [];
  for (const { opcode, p1, p2, p3, p4, p5, segment: opSegment } of program) {
    // Each sub-program (triggers, foreign-key actions) has cursor numbers of its own.
    if (opSegment !== segment) {
      segment = opSegment;
      cursors = new Map();
    }
    if (segment === 0) facts.mainOps++;
    switch (opcode) {
      case "OpenRead":
      case "ReopenIdx":
      case "OpenWrite": {
        const write = opcode === "OpenWrite";
        if (p3 !== 0) {
          // There is no database but main and temp. User SQL cannot create temp objects, so the
          // temp database holds only its schema table, which SQLite itself protects; ALTER TABLE
          // updates it (the platform allows UPDATE in temp).
          if (p3 !== 1) throw notAuthorized();
          break;
        }
        const object = (p5 & OPFLAG_P2ISREG) !== 0 ? undefined : catalog.byRoot(p2);
        cursors.set(p1, { object, write });
        if (object !== undefined && (!isAllowedName(object.name) || !isAllowedName(object.table))) {
          if (write) protectedWrite ||= isProtectedWrite(object, kind);
          else protectedReads.push({ object, columns: new Set(), counted: false });
        }
        break;
      }
      case "Count": {
        // count(*): reads the B-tree's size, no column (the platform says `not authorized`).
        const cursor = cursors.get(p1);
        const read = protectedReads.find((r) => r.object === cursor?.object);
        if (read !== undefined) read.counted = true;
        break;
      }
      case "Column":
      case "Rowid": {
        const cursor = cursors.get(p1);
        const read = protectedReads.find((r) => r.object === cursor?.object);
        read?.columns.add(opcode === "Rowid" ? ROWID_COLUMN : p2);
        break;
      }
      case "Clear": {
        // DELETE without WHERE empties the B-tree by root page, without opening a cursor.
        const object = p2 === 0 ? catalog.byRoot(p1) : undefined;
        if (object !== undefined && (!isAllowedName(object.name) || !isAllowedName(object.table)))
          protectedWrite ||= isProtectedWrite(object, kind);
        break;
      }
      case "VOpen":
        if (!catalog.allowedVirtualTables.has(String(p4))) throw notAuthorized();
        break;
      case "Transaction":
        if (p2 !== 0) facts.mayWrite = true;
        break;
      case "AutoCommit":
      case "Savepoint":
        throw new Error(TRANSACTION_STATEMENT_MESSAGE);
      default:
        if (FUNCTION_OPCODES.has(opcode) && checkFunctions) {
          const name = String(p4).replace(/\(.*$/, "").toLowerCase();
          if (!isAllowedFunction(name)) deniedFunctionName ??= name;
          if (TIME_FUNCTIONS.has(name)) facts.usesTime = true;
        } else if (SCHEMA_OPCODES.has(opcode)) {
          facts.changesSchema = true;
          facts.mayWrite = true;
        } else if (WRITE_OPCODES.has(opcode)) {
          if (opcode !== "Clear" && opcode !== "ResetSorter") facts.mayWrite = true;
        }
    }
  }
  // An UPDATE is authorized after its first assignment is resolved, a refused call in it first.
  if (protectedWrite)
    throw (deniedFunctionName && kind === "update" && refusedCallBeforeUpdate(sql, catalog)) || notAuthorized();
  if (deniedFunctionName !== undefined) throw deniedFunction(deniedFunctionName, sql);
  if (checkReads && protectedReads.length > 0) throw readDenied(catalog, tokens, protectedReads, kind);
  if (!explained) checkPragmaFilters(program, catalog.pragmaVirtualTables);
  return facts;
}
