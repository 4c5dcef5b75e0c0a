/**
 * What the restriction check needs to know about the database, answered by trusted queries on the
 * engine and memoized until the schema changes: which object owns each B-tree root page (so that
 * `OpenRead`/`OpenWrite` in a compiled program can be named), column and primary-key lists, the
 * functions the engine knows, and the identity of the virtual tables user SQL may open.
 */

import type { SqlEngine } from "../../engine/engine";
import { PRAGMA_FUNCTIONS } from "./allowed-pragmas";

/** A row of `sqlite_schema`. */
export interface SchemaObject {
  /** The object's name. */
  readonly name: string;
  /** `table`, `index`, `view` or `trigger`. */
  readonly type: string;
  /** The table the object belongs to (itself for tables). */
  readonly table: string;
}

/** Root page of `sqlite_schema` itself. */
const SCHEMA_ROOT_PAGE = 1;

/** Schema facts of one engine; call {@link SqlCatalog.invalidate} when the schema may have changed. */
export class SqlCatalog {
  readonly #engine: SqlEngine;
  #byRoot: Map<number, SchemaObject> | undefined;
  #byName: Map<string, SchemaObject> | undefined;
  readonly #columns = new Map<string, string[]>();
  readonly #primaryKeys = new Map<string, string[]>();
  #functions: Set<string> | undefined;
  #allowedVirtualTables: Set<string> | undefined;
  #pragmaVirtualTables: Map<string, string> | undefined;

  constructor(engine: SqlEngine) {
    this.#engine = engine;
  }

  /** Forgets everything that depends on the schema. */
  invalidate(): void {
    this.#byRoot = undefined;
    this.#byName = undefined;
    this.#columns.clear();
    this.#primaryKeys.clear();
  }

  /** The object stored at B-tree root page `root` of the main database. */
  byRoot(root: number): SchemaObject | undefined {
    if (root === SCHEMA_ROOT_PAGE) return { name: "sqlite_schema", type: "table", table: "sqlite_schema" };
    let found = this.#load().byRoot.get(root);
    if (found === undefined) {
      // Created since we looked (the core's own tables, or earlier in this batch): look again once.
      this.invalidate();
      found = this.#load().byRoot.get(root);
    }
    return found;
  }

  /** The object called `name` (case-insensitive, as SQLite resolves names). */
  byName(name: string): SchemaObject | undefined {
    return this.#load().byName.get(name.toLowerCase());
  }

  /**
   * The column names of a table, in storage order, or of an index (its key columns, then the row
   * key), as a program's `Column` opcode numbers them.
   */
  columns(object: SchemaObject): string[] {
    let cols = this.#columns.get(object.name);
    if (cols === undefined) {
      // Rowid tables store columns in declaration order; WITHOUT ROWID tables put the primary key
      // first; an index holds its key columns, then the row's key.
      let sql = "SELECT name FROM pragma_table_xinfo(?) ORDER BY cid";
      if (object.type === "index") sql = "SELECT coalesce(name, 'rowid') FROM pragma_index_xinfo(?) ORDER BY seqno";
      else if (this.#withoutRowid(object.name)) sql = "SELECT name FROM pragma_table_xinfo(?) ORDER BY pk = 0, pk, cid";
      const rows = this.#engine.query(sql, [object.name]);
      cols = rows.map((r) => String(r[0]));
      this.#columns.set(object.name, cols);
    }
    return cols;
  }

  /** The primary-key columns of `table`, in key order (empty when it has none). */
  primaryKey(table: string): string[] {
    let pk = this.#primaryKeys.get(table);
    if (pk === undefined) {
      const rows = this.#engine.query("SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", [table]);
      pk = rows.map((r) => String(r[0]));
      this.#primaryKeys.set(table, pk);
    }
    return pk;
  }

  /** Every scalar, aggregate and window function name the engine knows (lower case). */
  get functionNames(): ReadonlySet<string> {
    this.#functions ??= new Set(
      this.#engine.query("SELECT DISTINCT lower(name) FROM pragma_function_list").map((r) => String(r[0])),
    );
    return this.#functions;
  }

  /**
   * The `VOpen` operands (`vtab:<address>`) of the virtual tables user SQL may read: the eponymous
   * `json_each` and `json_tree`, and the `pragma_*` table-valued functions of reading pragmas
   * ({@link PRAGMA_FUNCTIONS}), which SQLite connects once per connection. Any other virtual
   * table (other pragmas, fts3/fts4) is refused.
   */
  get allowedVirtualTables(): ReadonlySet<string> {
    this.#loadVirtualTables();
    return this.#allowedVirtualTables as ReadonlySet<string>;
  }

  /**
   * The pragma each allowed `pragma_*` virtual table runs, by its `VOpen` operand: its arguments
   * (the hidden `arg` and `schema` columns) reach it through `VFilter`, which the access check judges.
   */
  get pragmaVirtualTables(): ReadonlyMap<string, string> {
    this.#loadVirtualTables();
    return this.#pragmaVirtualTables as ReadonlyMap<string, string>;
  }

  #loadVirtualTables(): void {
    if (this.#allowedVirtualTables !== undefined) return;
    const found = new Set<string>();
    const pragmas = new Map<string, string>();
    for (const fn of ["json_each", "json_tree", ...[...PRAGMA_FUNCTIONS].map((p) => `pragma_${p}`)]) {
      const pragma = fn.startsWith("pragma_") ? fn.slice("pragma_".length) : undefined;
      const call = pragma !== undefined ? fn : `${fn}('[]')`;
      for (const row of this.#engine.query(`EXPLAIN SELECT * FROM ${call}`)) {
        if (row[1] !== "VOpen") continue;
        found.add(String(row[5]));
        if (pragma !== undefined) pragmas.set(String(row[5]), pragma);
      }
    }
    this.#pragmaVirtualTables = pragmas;
    this.#allowedVirtualTables = found;
  }

  #withoutRowid(table: string): boolean {
    const rows = this.#engine.query("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", [table]);
    return /WITHOUT\s+ROWID\s*$/i.test(String(rows[0]?.[0] ?? ""));
  }

  #load(): { byRoot: Map<number, SchemaObject>; byName: Map<string, SchemaObject> } {
    if (this.#byRoot === undefined || this.#byName === undefined) {
      this.#byRoot = new Map();
      this.#byName = new Map();
      for (const [name, type, table, root] of this.#engine.query(
        "SELECT name, type, tbl_name, rootpage FROM sqlite_schema",
      )) {
        const object: SchemaObject = { name: String(name), type: String(type), table: String(table) };
        if (typeof root === "number" && root > 0) this.#byRoot.set(root, object);
        this.#byName.set(object.name.toLowerCase(), object);
      }
    }
    return { byRoot: this.#byRoot, byName: this.#byName };
  }
}
