/**
 * The SQL sandbox, attacked systematically (issue 14 §1 and §2), on the real storage core.
 *
 * Attempts are generated from statement templates (reads, writes, DDL of every object kind,
 * indirect paths through views, triggers, CTEs, subqueries and foreign keys, ANALYZE/REINDEX and
 * pragmas) crossed with every spelling SQLite resolves to an internal name: any ASCII case, any
 * quoting (`x`, `"x"`, `[x]`, `` `x` ``, `'x'`) and any schema qualifier. Every attempt must be
 * refused with the platform's error, and afterwards the internal objects, their rows, the key-value
 * data, `sqlite_stat1` and the connection's settings must be exactly what they were.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { EngineValue, SqlEngine, SqlEngineFactory } from "../../../src/engine/engine";
import { loadSqlJsEngine } from "../../../src/engine/sqljs";
import { ActorStoreError, createMemoryPersistence, ObjectStorage } from "../../../src/index";

const REFUSED = /^(?:not authorized|access to _cf_(?:KV|METADATA)\.(?:key|value) is prohibited): SQLITE_AUTH$/;

// A trigger on a table in temp, a REINDEX of a name temp lacks: SQLite's error before the
// authorizer, as on the platform.
const REFUSED_OR_NOT_IN_TEMP = new RegExp(
  `${REFUSED.source}|^no such table: temp\\.|^unable to identify the object to be reindexed: SQLITE_ERROR$|^trigger \\w+ cannot reference objects in database temp at offset \\d+: SQLITE_ERROR$|^cannot create a TEMP index on non-TEMP table "t": SQLITE_ERROR$`,
  "i",
);

/** An ObjectStorage whose engines the test can query directly (trusted, not through the facade). */
async function openWatched(): Promise<{ storage: ObjectStorage; engine: () => SqlEngine }> {
  const real = await loadSqlJsEngine();
  const engines: SqlEngine[] = [];
  const factory: SqlEngineFactory = {
    open(bytes?: Uint8Array) {
      const e = real.open(bytes);
      engines.push(e);
      return e;
    },
  };
  const storage = await ObjectStorage.open({ engineFactory: factory });
  await storage.put("secret", "value-1");
  await storage.put("other", 42);
  await storage.setAlarm(Date.UTC(2100, 0, 1));
  await storage.sync();
  storage.sql.exec("CREATE TABLE t (k, v)");
  storage.sql.exec("INSERT INTO t VALUES ('a', 1)");
  return { storage, engine: () => engines[engines.length - 1] as SqlEngine };
}

/** Connection settings, read straight from the engine; `n/a` where the build has no such pragma. */
const SETTINGS = [
  "writable_schema",
  "query_only",
  "ignore_check_constraints",
  "count_changes",
  "foreign_keys",
  "defer_foreign_keys",
  "recursive_triggers",
  "reverse_unordered_selects",
  "legacy_alter_table",
  "trusted_schema",
  "cell_size_check",
  "automatic_index",
  "full_column_names",
  "short_column_names",
  "empty_result_callbacks",
  "cache_size",
  "cache_spill",
  "hard_heap_limit",
  "soft_heap_limit",
  "threads",
  "temp_store",
  "synchronous",
  "journal_mode",
  "locking_mode",
  "max_page_count",
  "secure_delete",
  "busy_timeout",
  "analysis_limit",
  "user_version",
  "application_id",
];

function query(engine: SqlEngine, sql: string): EngineValue[][] {
  return engine.query(sql);
}

/** Everything an attempt must not change, as one comparable value. */
function fingerprint(engine: SqlEngine): unknown {
  const settings = SETTINGS.map((name) => {
    try {
      return [name, query(engine, `PRAGMA ${name}`)];
    } catch {
      return [name, "n/a"];
    }
  });
  const internal = query(
    engine,
    "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE lower(substr(name, 1, 4)) = '_cf_' OR lower(substr(tbl_name, 1, 4)) = '_cf_' ORDER BY name",
  );
  const hasStat = query(engine, "SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat1'").length > 0;
  return {
    settings,
    internal,
    kv: query(engine, "SELECT key, hex(value) FROM _cf_KV ORDER BY key"),
    metadata: query(engine, "SELECT key, hex(value) FROM _cf_METADATA ORDER BY key"),
    stats: hasStat ? query(engine, "SELECT * FROM sqlite_stat1 WHERE lower(substr(tbl, 1, 4)) = '_cf_'") : [],
    likeIsCaseInsensitive: query(engine, "SELECT 'a' LIKE 'A'"),
  };
}

/** Runs one statement through the facade to its end; returns the error message, or undefined. */
function run(storage: ObjectStorage, sql: string): string | undefined {
  try {
    storage.sql.exec(sql).toArray();
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

// ------------------------------------------------------------------ name spellings

const INTERNAL_TABLES = ["_cf_KV", "_cf_METADATA"] as const;
const CASES = [
  (s: string) => s,
  (s: string) => s.toLowerCase(),
  (s: string) => s.toUpperCase(),
  (s: string) => [...s].map((c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join(""),
  (s: string) => `_Cf_${s.slice(4)}`,
];
const QUOTES = [(s: string) => s, (s: string) => `"${s}"`, (s: string) => `[${s}]`, (s: string) => `\`${s}\``];
/** `'x'`: SQLite accepts a string where it expects a name in most places (as an identifier fallback). */
const STRING_QUOTE = (s: string) => `'${s}'`;
const SCHEMAS = ["", "main.", "MAIN.", '"main".', "[Main].", "temp."];

interface Spelling {
  /** The bare name as written (quoted, maybe qualified). */
  readonly text: string;
  /** Which internal table it names. */
  readonly table: (typeof INTERNAL_TABLES)[number];
  readonly qualified: boolean;
}

const spellingArb: fc.Arbitrary<Spelling> = fc
  .record({
    table: fc.constantFrom(...INTERNAL_TABLES),
    caseIndex: fc.nat(CASES.length - 1),
    quoteIndex: fc.nat(QUOTES.length),
    schema: fc.constantFrom(...SCHEMAS),
  })
  .map(({ table, caseIndex, quoteIndex, schema }) => {
    const cased = (CASES[caseIndex] as (s: string) => string)(table);
    const quoted = (QUOTES[quoteIndex] ?? STRING_QUOTE)(cased);
    return { text: schema + quoted, table, qualified: schema !== "" };
  });

/** A fixed, exhaustive-enough list of spellings for the deterministic sweep. */
function sweepSpellings(): Spelling[] {
  const out: Spelling[] = [];
  for (const table of INTERNAL_TABLES) {
    CASES.forEach((c, i) => {
      const quote = i === 4 ? STRING_QUOTE : (QUOTES[i % QUOTES.length] as (s: string) => string);
      out.push({ text: quote(c(table)), table, qualified: false });
    });
    out.push({ text: `main."${table.toUpperCase()}"`, table, qualified: true });
    out.push({ text: `temp.${table}`, table, qualified: true });
  }
  return out;
}

// ------------------------------------------------------------------ templates

interface Template {
  readonly name: string;
  /** Statements run first (allowed or not, their result is not judged). */
  readonly setup?: (n: string, s: Spelling) => string[];
  /** The attempt: must be refused. */
  readonly attack: (n: string, s: Spelling) => string;
  /** Only where SQLite's grammar takes a qualified name there. */
  readonly unqualifiedOnly?: boolean;
  /** SQLite's own error that comes before the platform's refusal, as there (besides the refusal). */
  readonly sqliteFirst?: RegExp;
}

/** `x'01'`-style literal values that fit both internal tables' key and value columns. */
const TEMPLATES: readonly Template[] = [
  // reads
  { name: "select *", attack: (n) => `SELECT * FROM ${n}` },
  { name: "select column", attack: (n) => `SELECT value FROM ${n} WHERE key IS NOT NULL` },
  { name: "count(*)", attack: (n) => `SELECT count(*) FROM ${n}` },
  { name: "exists", attack: (n) => `SELECT EXISTS (SELECT 1 FROM ${n})` },
  { name: "aggregate", attack: (n) => `SELECT group_concat(hex(value)) FROM ${n}` },
  { name: "scalar subquery", attack: (n) => `SELECT (SELECT max(key) FROM ${n})` },
  { name: "IN subquery", attack: (n) => `SELECT * FROM t WHERE v IN (SELECT value FROM ${n})` },
  { name: "join", attack: (n) => `SELECT x.key FROM t JOIN ${n} AS x ON t.k = x.key` },
  { name: "CTE", attack: (n) => `WITH c AS (SELECT key, value FROM ${n}) SELECT * FROM c` },
  {
    name: "recursive CTE",
    attack: (n) => `WITH RECURSIVE r(x) AS (SELECT key FROM ${n} UNION ALL SELECT x FROM r LIMIT 3) SELECT * FROM r`,
  },
  { name: "window", attack: (n) => `SELECT key, row_number() OVER (ORDER BY key) FROM ${n}` },
  { name: "insert … select", attack: (n) => `INSERT INTO t SELECT key, value FROM ${n}` },
  { name: "create table as", attack: (n) => `CREATE TABLE copy AS SELECT * FROM ${n}` },
  { name: "update from subquery", attack: (n) => `UPDATE t SET v = (SELECT value FROM ${n} LIMIT 1)` },
  { name: "EXPLAIN", attack: (n) => `EXPLAIN SELECT * FROM ${n}` },
  // writes
  { name: "insert", attack: (n) => `INSERT INTO ${n} (key, value) VALUES (7, x'01')` },
  { name: "insert or replace", attack: (n) => `INSERT OR REPLACE INTO ${n} (key, value) VALUES (1, x'02')` },
  { name: "replace", attack: (n) => `REPLACE INTO ${n} (key, value) VALUES (2, x'03')` },
  { name: "upsert", attack: (n) => `INSERT INTO ${n} (key, value) VALUES (1, x'04') ON CONFLICT DO NOTHING` },
  { name: "update", attack: (n) => `UPDATE ${n} SET value = NULL` },
  { name: "delete all", attack: (n) => `DELETE FROM ${n}` },
  { name: "delete where", attack: (n) => `DELETE FROM ${n} WHERE key = 'secret' RETURNING key` },
  // DDL on the internal table
  { name: "drop table", attack: (n) => `DROP TABLE ${n}` },
  { name: "drop table if exists", attack: (n) => `DROP TABLE IF EXISTS ${n}` },
  { name: "rename table", attack: (n) => `ALTER TABLE ${n} RENAME TO stolen` },
  { name: "rename column", attack: (n) => `ALTER TABLE ${n} RENAME COLUMN value TO v2` },
  { name: "add column", attack: (n) => `ALTER TABLE ${n} ADD COLUMN spy` },
  { name: "drop column", attack: (n) => `ALTER TABLE ${n} DROP COLUMN value` },
  { name: "create index on", attack: (n) => `CREATE INDEX spy_i ON ${n} (value)`, unqualifiedOnly: true },
  {
    name: "create unique index on",
    attack: (n) => `CREATE UNIQUE INDEX IF NOT EXISTS spy_u ON ${n} (key, value)`,
    unqualifiedOnly: true,
  },
  {
    name: "trigger on",
    attack: (n) => `CREATE TRIGGER spy_t AFTER INSERT ON ${n} BEGIN INSERT INTO t VALUES (new.key, new.value); END`,
  },
  {
    name: "trigger on update of",
    attack: (n) => `CREATE TRIGGER spy_u BEFORE UPDATE OF value ON ${n} BEGIN SELECT 1; END`,
  },
  { name: "analyze", attack: (n) => `ANALYZE ${n}` },
  { name: "reindex", attack: (n) => `REINDEX ${n}` },
  { name: "pragma table_info", attack: (n) => `PRAGMA table_info(${n})`, unqualifiedOnly: true },
  { name: "pragma index_list", attack: (n) => `PRAGMA index_list = ${n}`, unqualifiedOnly: true },
  { name: "pragma foreign_key_list", attack: (n) => `PRAGMA foreign_key_list(${n})`, unqualifiedOnly: true },
  // objects given an internal name (pre-creating one before the library does, or shadowing it)
  { name: "create table named", attack: (n) => `CREATE TABLE ${n} (key, value)` },
  { name: "create table if not exists named", attack: (n) => `CREATE TABLE IF NOT EXISTS ${n} (a)` },
  { name: "create view named", attack: (n) => `CREATE VIEW ${n} AS SELECT 1` },
  {
    name: "create index named",
    attack: (n) => `CREATE INDEX ${n} ON t (k)`,
    // SQLite checks an index's name against the tables before the authorizer sees it (workerd says so).
    sqliteFirst: /^there is already a table named (_cf_KV|_cf_METADATA): SQLITE_ERROR$/i,
  },
  { name: "create trigger named", attack: (n) => `CREATE TRIGGER ${n} AFTER INSERT ON t BEGIN SELECT 1; END` },
  {
    name: "rename to",
    attack: (n) => `ALTER TABLE t RENAME TO ${n}`,
    unqualifiedOnly: true,
    // SQLite checks the new name is free before the authorizer sees the ALTER (workerd says so).
    sqliteFirst: /^there is already another table or index with this name: (_cf_KV|_cf_METADATA): SQLITE_ERROR$/i,
  },
  // indirect paths: the object is created (or not) first, then used
  {
    name: "view over",
    setup: (n) => [`CREATE VIEW spy_v AS SELECT * FROM ${n}`],
    attack: () => "SELECT * FROM spy_v",
  },
  {
    name: "trigger writes into",
    setup: (n) => [`CREATE TRIGGER spy_w AFTER INSERT ON t BEGIN DELETE FROM ${n}; END`],
    attack: () => "INSERT INTO t VALUES ('b', 2)",
    // SQLite allows no qualified table name in a trigger's INSERT, UPDATE or DELETE.
    unqualifiedOnly: true,
  },
  {
    name: "trigger copies from",
    setup: (n) => [`CREATE TRIGGER spy_c AFTER UPDATE ON t BEGIN INSERT INTO t SELECT key, value FROM ${n}; END`],
    attack: () => "UPDATE t SET v = 3",
  },
  {
    name: "foreign key into",
    setup: (n, s) => [
      `CREATE TABLE child (x REFERENCES ${s.qualified ? s.text.slice(s.text.indexOf(".") + 1) : n}(key) ON DELETE CASCADE)`,
    ],
    attack: () => "INSERT INTO child VALUES ('secret')",
  },
];

function attemptsFor(template: Template, spelling: Spelling): boolean {
  return !(template.unqualifiedOnly && spelling.qualified);
}

/** Runs one attempt and checks every invariant; returns the attack's error for counting. */
function attempt(storage: ObjectStorage, engine: () => SqlEngine, template: Template, spelling: Spelling): string {
  const before = fingerprint(engine());
  for (const statement of template.setup?.(spelling.text, spelling) ?? []) run(storage, statement);
  const sql = template.attack(spelling.text, spelling);
  const error = run(storage, sql);
  // `temp._cf_KV` names nothing (user SQL cannot create temp objects): "no such table" is right,
  // and `DROP TABLE IF EXISTS` of it does nothing without an error, as on the platform.
  if (spelling.text.startsWith("temp.") && template.name === "drop table if exists") {
    expect(error, `${template.name}: ${sql}`).toBeUndefined();
  } else {
    const expected = spelling.text.startsWith("temp.") ? REFUSED_OR_NOT_IN_TEMP : REFUSED;
    const sqliteFirst = template.sqliteFirst;
    const taken = sqliteFirst?.exec(error ?? "")?.[1];
    if (taken !== undefined) expect(taken.toLowerCase()).toBe(spelling.table.toLowerCase());
    else expect(error, `${template.name}: ${sql}`).toMatch(expected);
  }
  expect(fingerprint(engine()), `${template.name}: ${sql}`).toEqual(before);
  return error as string;
}

/** After any number of attempts the key-value data, the alarm and the SQL data are intact. */
async function expectIntact(storage: ObjectStorage): Promise<void> {
  expect(await storage.get("secret")).toBe("value-1");
  expect(await storage.get("other")).toBe(42);
  expect(await storage.getAlarm()).toBe(Date.UTC(2100, 0, 1));
  await storage.put("after", "still works");
  await storage.sync();
  expect(await storage.get("after")).toBe("still works");
  expect(storage.sql.exec("SELECT k FROM t WHERE k = 'a'").toArray()).toEqual([{ k: "a" }]);
}

describe("the SQL sandbox: internal objects, every statement kind and spelling (§2)", () => {
  test("a sweep of every template over fixed spellings (each refused, nothing changed)", async () => {
    let count = 0;
    for (const template of TEMPLATES) {
      // A fresh object per template: setups of one template must not help or hinder another.
      const { storage, engine } = await openWatched();
      for (const spelling of sweepSpellings()) {
        if (!attemptsFor(template, spelling)) continue;
        attempt(storage, engine, template, spelling);
        count++;
      }
      await expectIntact(storage);
      await storage.close();
    }
    expect(count).toBeGreaterThanOrEqual(400);
  });

  test("random sequences of attempts on one object (property)", async () => {
    let count = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(TEMPLATES.length - 1), spellingArb), { minLength: 1, maxLength: 8 }),
        async (steps) => {
          const { storage, engine } = await openWatched();
          for (const [index, spelling] of steps) {
            const template = TEMPLATES[index] as Template;
            if (!attemptsFor(template, spelling)) continue;
            attempt(storage, engine, template, spelling);
            count++;
          }
          await expectIntact(storage);
          await storage.close();
        },
      ),
      { numRuns: 50, seed: 1414 },
    );
    expect(count).toBeGreaterThan(100);
  });

  test("ANALYZE keeps internal row counts out of sqlite_stat1 (also PRAGMA optimize)", async () => {
    const { storage, engine } = await openWatched();
    storage.sql.exec("CREATE INDEX t_k ON t (k)");
    storage.sql.exec("ANALYZE");
    expect(storage.sql.exec("SELECT tbl, idx FROM sqlite_stat1 ORDER BY tbl").toArray()).toEqual([
      { tbl: "t", idx: "t_k" },
    ]);
    expect(query(engine(), "SELECT count(*) FROM sqlite_stat1 WHERE tbl LIKE '\\_cf\\_%' ESCAPE '\\'")).toEqual([[0]]);
    storage.sql.exec("PRAGMA case_sensitive_like = ON; ANALYZE main; PRAGMA optimize");
    expect(query(engine(), "SELECT count(*) FROM sqlite_stat1 WHERE lower(tbl) LIKE '_cf_%'")).toEqual([[0]]);
    // The removal is logged like any write: after a restart the statistics are the same.
    await storage.sync();
    await expectIntact(storage);
  });

  test("REINDEX of every index, or by collation, runs as on the platform; naming an internal object is refused", async () => {
    // The platform judges REINDEX by each index's name, and `_cf_KV`'s key index is
    // sqlite_autoindex__cf_KV_1: a bare REINDEX rebuilds it too. Until 2026-11-27 both were refused.
    const { storage, engine } = await openWatched();
    storage.sql.exec("CREATE UNIQUE INDEX t_k ON t (k); CREATE INDEX t_v ON t (v COLLATE NOCASE)");
    const before = fingerprint(engine());
    for (const q of ["REINDEX", "REINDEX BINARY", "REINDEX nocase", "REINDEX t", "REINDEX t_k"]) {
      expect(run(storage, q)).toBeUndefined();
      expect(fingerprint(engine())).toEqual(before);
    }
    expect(query(engine(), "PRAGMA integrity_check")).toEqual([["ok"]]);
    for (const q of [
      "REINDEX _cf_KV",
      "REINDEX main._CF_kv",
      "REINDEX sqlite_autoindex__cf_KV_1",
      "REINDEX _cf_METADATA",
    ]) {
      expect(run(storage, q)).toBe("not authorized: SQLITE_AUTH");
    }
    await expectIntact(storage);
    await storage.close();
  });
});

// ------------------------------------------------------------------ §1: pragmas decided before compiling

/** Pragmas the platform refuses, with a value that would change something if it took effect. */
const REFUSED_PRAGMAS: readonly [string, string][] = [
  ["writable_schema", "ON"],
  ["query_only", "1"],
  ["count_changes", "1"],
  ["hard_heap_limit", "1024"],
  ["soft_heap_limit", "1024"],
  ["cache_size", "-1"],
  ["trusted_schema", "0"],
  ["automatic_index", "0"],
  ["full_column_names", "1"],
  ["short_column_names", "0"],
  ["empty_result_callbacks", "1"],
  ["cell_size_check", "1"],
  ["threads", "4"],
  ["max_page_count", "1"],
  ["user_version", "7"],
  ["application_id", "9"],
  ["journal_mode", "OFF"],
  ["locking_mode", "NORMAL"],
  ["secure_delete", "1"],
  ["analysis_limit", "1"],
  ["busy_timeout", "5"],
  ["temp_store", "2"],
];

/** Allowed pragmas written in a form the platform refuses (name case, schema, argument). */
const REFUSED_FORMS_OF_ALLOWED: readonly string[] = [
  "PRAGMA IGNORE_CHECK_CONSTRAINTS = 1",
  "PRAGMA Ignore_Check_Constraints(ON)",
  "PRAGMA temp.ignore_check_constraints = 1",
  "PRAGMA ignore_check_constraints = 2",
  "PRAGMA FOREIGN_KEYS = OFF",
  "PRAGMA Recursive_Triggers = ON",
  "PRAGMA temp.recursive_triggers = ON",
  "PRAGMA Case_Sensitive_Like = 1",
  "PRAGMA Legacy_Alter_Table = ON",
  "PRAGMA reverse_unordered_selects = 5",
];

const PRAGMA_FORMS: readonly ((name: string, value: string) => string)[] = [
  (n, v) => `PRAGMA ${n} = ${v}`,
  (n, v) => `pragma ${n.toUpperCase()}=${v}`,
  (n, v) => `PRAGMA ${n}(${v})`,
  (n, v) => `PRAGMA main.${n} = ${v}`,
  (n, v) => `PRAGMA "main".${n}(${v})`,
  (n, v) => `PRAGMA temp.${n} = ${v}`,
  (n, v) => `PRAGMA "${n}" = '${v}'`,
  (n, v) => `/* c */ PRAGMA -- line\n ${n} /* x */ = /* y */ ${v}`,
  (n, v) => `EXPLAIN PRAGMA ${n} = ${v}`,
  (n, v) => `EXPLAIN QUERY PLAN PRAGMA ${n}(${v})`,
  (n, v) => `;; PRAGMA ${n} = ${v}`,
  (n, v) => `SELECT 1; PRAGMA ${n} = ${v}; SELECT 2`,
  (n, v) => `\tPRAGMA\n[${n}]\r=\f${v} ;`,
];

describe("refused pragmas never take effect (§1)", () => {
  test("every refused pragma in every form leaves the connection exactly as it was", async () => {
    const { storage, engine } = await openWatched();
    let count = 0;
    const statements = [
      ...REFUSED_PRAGMAS.flatMap(([name, value]) => PRAGMA_FORMS.map((form) => form(name, value))),
      ...REFUSED_FORMS_OF_ALLOWED,
    ];
    for (const sql of statements) {
      const before = fingerprint(engine());
      expect(run(storage, sql), sql).toMatch(REFUSED);
      expect(fingerprint(engine()), sql).toEqual(before);
      count++;
    }
    expect(count).toBeGreaterThanOrEqual(290);
    await expectIntact(storage);
  });

  test("writable_schema refused: sqlite_master stays read-only", async () => {
    const { storage } = await openWatched();
    for (const form of PRAGMA_FORMS) {
      run(storage, form("writable_schema", "ON"));
      expect(run(storage, "UPDATE sqlite_master SET sql = 'CREATE TABLE t (k, v, w)' WHERE name = 't'")).toBe(
        "table sqlite_master may not be modified: SQLITE_ERROR",
      );
    }
    expect(run(storage, "PRAGMA writable_schema = ON; UPDATE sqlite_master SET name = 'x' WHERE name = 't'")).toMatch(
      REFUSED,
    );
    await expectIntact(storage);
  });

  test("ignore_check_constraints in a refused spelling does not switch CHECK off", async () => {
    const { storage } = await openWatched();
    storage.sql.exec("CREATE TABLE c (x CHECK (x > 0))");
    for (const sql of REFUSED_FORMS_OF_ALLOWED) run(storage, sql);
    expect(run(storage, "INSERT INTO c VALUES (-1)")).toMatch(/^CHECK constraint failed/);
    expect(run(storage, "SELECT 'a' LIKE 'A' AS x")).toBeUndefined();
    expect(storage.sql.exec("SELECT 'a' LIKE 'A' AS x").one().x).toBe(1);
  });

  test("refused heap limits do not reach other objects in the process", async () => {
    const { storage } = await openWatched();
    for (const form of PRAGMA_FORMS) {
      run(storage, form("hard_heap_limit", "1024"));
      run(storage, form("soft_heap_limit", "1024"));
    }
    // Another object of the same process allocates freely.
    const other = await ObjectStorage.open();
    other.sql.exec("CREATE TABLE big (b)");
    other.sql.exec("INSERT INTO big VALUES (randomblob(1000000))");
    other.sql.exec("INSERT INTO big SELECT randomblob(1000000) FROM big");
    expect(other.sql.exec("SELECT count(*) AS n FROM big").one().n).toBe(2);
    await other.put("k", "x".repeat(100_000));
    await other.sync();
    await other.close();
    await expectIntact(storage);
  });

  test("query_only in any refused form: writes still work", async () => {
    const { storage } = await openWatched();
    for (const form of PRAGMA_FORMS) run(storage, form("query_only", "ON"));
    expect(run(storage, "INSERT INTO t VALUES ('q', 1)")).toBeUndefined();
    await expectIntact(storage);
  });
});

describe("fts5 (issue 15)", () => {
  test("CREATE VIRTUAL TABLE … USING fts5 fails before compiling with this library's own error", async () => {
    const { storage, engine } = await openWatched();
    const before = fingerprint(engine());
    for (const sql of [
      "CREATE VIRTUAL TABLE docs USING fts5(body)",
      "create virtual table if not exists main.docs using FTS5 (title, body)",
      "CREATE VIRTUAL TABLE v USING fts5vocab(docs, row)",
    ]) {
      let error: unknown;
      try {
        storage.sql.exec(sql);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ActorStoreError);
      expect((error as ActorStoreError).code).toBe("ERR_NOT_IMPLEMENTED");
      expect((error as Error).message).toMatch(/built without fts5.*LIKE, instr\(\) or a table of terms/);
    }
    // Other virtual tables stay refused as on the platform.
    expect(run(storage, "CREATE VIRTUAL TABLE d USING fts4(body)")).toBe("not authorized: SQLITE_AUTH");
    expect(fingerprint(engine())).toEqual(before);
  });
});

describe("pragma_* arguments computed while the statement runs (§2: checked at run time, as the platform's authorizer does)", () => {
  /** The functions whose argument names a table or an index (each refuses an internal one). */
  const NAMED = [
    "table_info",
    "table_xinfo",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "foreign_key_check",
    "quick_check",
  ];
  /** Ways to compute a name at run time; `n` is the internal name in some case. */
  const COMPUTED: ReadonlyArray<(n: string) => { from: string; arg: string; bindings?: string[] }> = [
    (n) => ({ from: "", arg: `lower('${n.toUpperCase()}')` }),
    (n) => ({ from: "", arg: `upper('${n}')` }),
    (n) => ({ from: "", arg: `'${n.slice(0, 3)}' || '${n.slice(3)}'` }),
    (n) => ({ from: "", arg: `(SELECT '${n}')` }),
    (n) => ({ from: "", arg: "?", bindings: [n] }),
    (n) => ({ from: "", arg: "?1", bindings: [n] }),
    (n) => ({ from: "", arg: ":name", bindings: [n] }),
    (n) => ({ from: "", arg: `substr('x${n}', 2)` }),
    (n) => ({ from: "", arg: `replace('${n.replace("_cf_", "_xx_")}', '_xx_', '_cf_')` }),
    (n) => ({ from: "", arg: `trim('  ${n}  ')` }),
    (n) => ({ from: "", arg: `char(${[...n].map((c) => c.charCodeAt(0)).join(", ")})` }),
    (n) => ({ from: "", arg: `CAST(x'${Buffer.from(n).toString("hex")}' AS TEXT)` }),
    (n) => ({ from: "", arg: `x'${Buffer.from(n).toString("hex")}'` }),
    (n) => ({ from: "", arg: `coalesce(NULL, '${n}')` }),
    (n) => ({ from: "", arg: `printf('%s', '${n}')` }),
    (n) => ({ from: "", arg: `iif(1, '${n}', 't')` }),
    (n) => ({ from: "", arg: `CASE WHEN 1 THEN '${n}' END` }),
    (n) => ({ from: "", arg: `('${n}')` }),
    (n) => ({ from: "", arg: `+'${n}'` }),
    (n) => ({ from: "", arg: `'${n}' COLLATE NOCASE` }),
    (n) => ({ from: `(SELECT '${n}' AS nm) s, `, arg: "s.nm" }),
    (n) => ({ from: `(SELECT '${n}' AS nm), `, arg: "nm" }),
    (n) => ({ from: `(SELECT 't' AS nm UNION ALL SELECT '${n}') s, `, arg: "s.nm" }),
    (n) => ({ from: "", arg: `(SELECT name FROM sqlite_master WHERE lower(name) = lower('${n}'))` }),
    (n) => ({
      from: "",
      arg: `(SELECT name FROM pragma_table_list WHERE lower(name) = lower('${n}'))`,
    }),
  ];
  const CASED = (n: string) => [n, n.toLowerCase(), n.toUpperCase(), `_Cf_${n.slice(4)}`];

  test("every computed spelling of an internal name, in every name-taking pragma_* function, is refused and changes nothing", async () => {
    const { storage, engine } = await openWatched();
    const before = fingerprint(engine());
    let count = 0;
    for (const fn of NAMED) {
      for (const table of INTERNAL_TABLES) {
        for (const name of CASED(table)) {
          for (const make of COMPUTED) {
            const { from, arg, bindings = [] } = make(name);
            for (const sql of [
              `SELECT * FROM ${from}pragma_${fn}(${arg})`,
              `SELECT * FROM ${from}PRAGMA_${fn.toUpperCase()}(${arg}, 'main')`,
              `INSERT INTO t SELECT 'x', 1 FROM ${from}pragma_${fn}(${arg})`,
            ]) {
              let error: string | undefined;
              try {
                storage.sql.exec(sql, ...bindings).toArray();
              } catch (e) {
                error = (e as Error).message;
              }
              expect(error, sql).toBe("not authorized: SQLITE_AUTH");
              count++;
            }
          }
        }
      }
    }
    expect(count).toBeGreaterThanOrEqual(2000);
    expect(fingerprint(engine())).toEqual(before);
    expect(storage.sql.exec("SELECT count(*) AS n FROM t").one().n).toBe(1);
    await expectIntact(storage);
    await storage.close();
  });

  test("a computed schema argument other than main is refused; computed allowed names work as on the platform", async () => {
    const { storage } = await openWatched();
    const { sql } = storage;
    for (const schema of ["lower('TEMP')", "'te' || 'mp'", "?"]) {
      const bindings = schema === "?" ? ["temp"] : [];
      expect(run2(() => sql.exec(`SELECT * FROM pragma_table_info('t', ${schema})`, ...bindings).toArray())).toBe(
        "not authorized: SQLITE_AUTH",
      );
    }
    const columns = [{ name: "k" }, { name: "v" }];
    expect(sql.exec("SELECT name FROM pragma_table_info(lower('T'))").toArray()).toEqual(columns);
    expect(sql.exec("SELECT name FROM pragma_table_info(?)", "t").toArray()).toEqual(columns);
    expect(sql.exec("SELECT name FROM pragma_table_info(?, lower('MAIN'))", "t").toArray()).toEqual(columns);
    expect(sql.exec("SELECT * FROM pragma_quick_check(lower('T'))").toArray()).toEqual([{ quick_check: "ok" }]);
    // What SQLite itself does with a computed number is unchanged by the check.
    expect(run2(() => sql.exec("SELECT * FROM pragma_quick_check(2 + 3)").toArray())).toBe(
      "no such table: 5: SQLITE_ERROR",
    );
    // The introspection idiom (a join on sqlite_master) works when it leaves internal tables out,
    // and fails at the internal table's row when it does not: the rows before it were read.
    const all = sql.exec(
      "SELECT m.name AS tbl, c.name AS col FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name = 't' DESC LIMIT 10) m JOIN pragma_table_info(m.name) c",
    );
    expect(all.next().value).toEqual({ tbl: "t", col: "k" });
    expect(run2(() => all.toArray())).toBe("not authorized: SQLITE_AUTH");
    await storage.close();
  });

  test("views and triggers that compute the argument check it each time they run", async () => {
    const { storage, engine } = await openWatched();
    const { sql } = storage;
    sql.exec("CREATE TABLE names(n)");
    sql.exec("CREATE VIEW cols AS SELECT n, c.name FROM names, pragma_table_info(names.n) c");
    sql.exec(
      "CREATE TABLE log(n, col); CREATE TRIGGER spy AFTER INSERT ON names BEGIN INSERT INTO log SELECT NEW.n, name FROM pragma_table_info(NEW.n); END",
    );
    sql.exec("INSERT INTO names VALUES ('t')");
    expect(sql.exec("SELECT * FROM cols").toArray()).toEqual([
      { n: "t", name: "k" },
      { n: "t", name: "v" },
    ]);
    const before = fingerprint(engine());
    for (const name of CASED("_cf_KV")) {
      expect(run(storage, `INSERT INTO names VALUES ('${name}')`)).toBe("not authorized: SQLITE_AUTH");
    }
    expect(fingerprint(engine())).toEqual(before);
    expect(sql.exec("SELECT count(*) AS n FROM log").one().n).toBe(2);
    await expectIntact(storage);
    await storage.close();
  });

  test("the run-time check cannot be called, or named, by user SQL", async () => {
    const { storage } = await openWatched();
    for (const sql of [
      "SELECT _cf_pragma_argument('table_info', 0, '_cf_KV')",
      "SELECT \"_CF_PRAGMA_ARGUMENT\"('table_info', 0, 't')",
      "SELECT * FROM pragma_table_info(_cf_pragma_argument('table_info', 0, 't'))",
      "CREATE VIEW g AS SELECT _cf_pragma_argument('x', 1, 'main')",
    ]) {
      expect(run(storage, sql), sql).toMatch(/^no such function: _cf_pragma_argument at offset \d+: SQLITE_ERROR$/i);
    }
    await storage.close();
  });

  test("a write that computes a pragma argument replays to the same rows after a restart", async () => {
    const persistence = createMemoryPersistence();
    const storage = await ObjectStorage.open({ persistence });
    storage.sql.exec("CREATE TABLE t(a, b); CREATE TABLE cols(name)");
    storage.sql.exec("INSERT INTO cols SELECT name FROM pragma_table_info(lower('T'))");
    expect(run2(() => storage.sql.exec("INSERT INTO cols SELECT name FROM pragma_table_info(?)", "_cf_KV"))).toBe(
      "not authorized: SQLITE_AUTH",
    );
    await storage.sync();
    const rows = storage.sql.exec("SELECT name FROM cols ORDER BY name").toArray();
    expect(rows).toEqual([{ name: "a" }, { name: "b" }]);
    storage.abort();
    const again = await ObjectStorage.open({ persistence });
    expect(again.sql.exec("SELECT name FROM cols ORDER BY name").toArray()).toEqual(rows);
    await again.close();
  });
});

function run2(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}
