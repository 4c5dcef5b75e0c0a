/**
 * fast-check arbitraries for differential transcripts: random key-value op sequences over a small,
 * order-sensitive key space, and random SQL workloads.
 *
 * Everything generated stays inside what the platform and the storage interface agree on: keys are tiny, values
 * small, multi-key ops short. Over-limit inputs are not generated here; they are
 * {@link import("./known-deviations").KNOWN_DEVIATIONS} and tested separately.
 *
 * @example
 * ```ts
 * fc.assert(fc.asyncProperty(kvTranscript(), async (ops) => { … }), { seed: 42, numRuns: 40 });
 * ```
 */
import fc from "fast-check";
import type { KeyArg, KvOp, Op, SqlReadMode, SyncOp } from "./ops";
import { SQL_READ_MODES } from "./ops";
import { createTranscriptCodec, type Encoded } from "./transcript-codec";

const codec = createTranscriptCodec();
const encode = (value: unknown): Encoded => codec.encode(value);

/**
 * Keys whose UTF-8 byte order differs from UTF-16 order or from naive normalisation: the empty
 * key, an embedded NUL, precomposed vs combining é, the last BMP code point vs an astral one, and
 * keys with a lone surrogate (stored as its three WTF-8 bytes, listed back with U+FFFD as the
 * platform lists them) beside the key that reads alike once listed.
 */
export const KEY_SPACE = [
  "",
  "a\u0000",
  "é",
  "e\u0301",
  "\uFFFF",
  "😀",
  "a",
  "ab",
  "b",
  "a\uD800b",
  "a\uFFFDb",
  "\uDFFF",
] as const;

/** A key from {@link KEY_SPACE}, rarely a number (storage converts it with `String()`). */
export function keyArb(): fc.Arbitrary<KeyArg> {
  return fc.oneof(
    { weight: 20, arbitrary: fc.constantFrom(...KEY_SPACE) },
    { weight: 1, arbitrary: fc.constantFrom(1, 2.5) },
  );
}

const stringKeyArb = fc.constantFrom(...KEY_SPACE);

/** Bounds for list-option strings: the key space plus prefixes that cut between its keys. */
const boundArb = fc.constantFrom(...KEY_SPACE, "a\u0000b", "e", "\uFFFF\uFFFF", "c", "😀😀", "a\uDBFF", "\uD83D");

const stringArb = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.string({ maxLength: 4, unit: "binary" }),
  fc.constantFrom("", "\u0000", "\uD800", "a\uDFFFb", "😀", "é"),
);

const numberArb = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2 ** 53 + 2),
);

const errorArb = fc
  .tuple(fc.constantFrom("Error", "RangeError", "TypeError", "SyntaxError", "CustomError"), fc.string({ maxLength: 6 }))
  .map(([name, message]) => {
    if (name === "RangeError") return new RangeError(message);
    if (name === "TypeError") return new TypeError(message);
    if (name === "SyntaxError") return new SyntaxError(message);
    const error = new Error(message);
    if (name !== "Error") error.name = name;
    return error;
  });

const binaryArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.uint8Array({ maxLength: 8 }).map((a) => a.buffer),
  fc.uint8Array({ maxLength: 8 }),
  fc.int16Array({ maxLength: 4 }),
  fc.float64Array({ maxLength: 3 }),
  fc.bigInt64Array({ maxLength: 2 }),
  fc.uint8Array({ minLength: 4, maxLength: 8 }).map((a) => new Uint8Array(a.buffer, 1, 2)),
  fc.uint8Array({ maxLength: 4 }).map((a) => new DataView(a.buffer)),
);

/** Leaf values of every structured-clone kind the platform round-trips. */
const leafArb: fc.Arbitrary<unknown> = fc.oneof(
  stringArb,
  numberArb,
  fc.boolean(),
  fc.constant(null),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.date({ noInvalidDate: false }),
  fc.constantFrom(/a+b/g, /é/iu, /(?:)/),
  errorArb,
  binaryArb,
);

/** Structured-clone values: leaves inside Maps, Sets, dense and sparse arrays, objects, cycles. */
export function valueArb(): fc.Arbitrary<unknown> {
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      { weight: 6, arbitrary: leafArb },
      fc.array(tie("value"), { maxLength: 4 }),
      fc.sparseArray(tie("value"), { maxLength: 5 }),
      fc.array(fc.constant(undefined), { minLength: 1, maxLength: 2 }),
      fc
        .array(fc.tuple(fc.constantFrom("x", "y", "1", "0", "z"), tie("value")), { maxLength: 3 })
        .map((entries) => Object.fromEntries(entries)),
      fc.array(fc.tuple(fc.oneof(stringArb, numberArb), tie("value")), { maxLength: 3 }).map((e) => new Map(e)),
      fc.array(fc.oneof(stringArb, numberArb), { maxLength: 4 }).map((items) => new Set(items)),
      tie("value").map((inner) => {
        const cyclic: Record<string, unknown> = { inner };
        cyclic.self = cyclic;
        return cyclic;
      }),
    ),
  }));
  return value;
}

/** A value to put: mostly storable, rarely `undefined` or unclonable (functions, symbols). */
export function putValueArb(): fc.Arbitrary<Encoded> {
  return fc
    .oneof(
      { weight: 30, arbitrary: valueArb() },
      { weight: 1, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom<unknown>(() => 1, Symbol("x"), { f: Symbol("y") }) },
    )
    .map(encode);
}

/** List options, including invalid ones that must reject with the platform's message. */
export function listOptionsArb(): fc.Arbitrary<Encoded | undefined> {
  const limitArb = fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 1, max: 6 }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom<unknown>(0, -1, 1.7, "2", Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, undefined),
    },
  );
  const options = fc
    .record(
      {
        start: boundArb,
        startAfter: boundArb,
        end: boundArb,
        prefix: fc.constantFrom("", "a", "e", "\uFFFF", "a\u0000", "é", "😀", "a\uD800", "\uD83D"),
        reverse: fc.boolean(),
        limit: limitArb,
        noCache: fc.boolean(),
      },
      { requiredKeys: [] },
    )
    // Drop start+startAfter most of the time: the combination always errors, so it would
    // otherwise mask the interesting range logic.
    .chain((o) =>
      fc.boolean().map((keepBoth) => {
        if (keepBoth || o.start === undefined || o.startAfter === undefined) return o;
        const { startAfter: _dropped, ...rest } = o;
        return rest;
      }),
    );
  return fc.option(options.map(encode), { nil: undefined, freq: 6 });
}

const multiKeysArb = fc.array(keyArb(), { maxLength: 6 });

/** Far-future alarm times (past times are clamped to "now", which no transcript can compare). */
const alarmTimeArb = fc
  .oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: 10 ** 9 }).map((ms) => Date.UTC(2100, 0, 1) + ms) },
    { weight: 1, arbitrary: fc.constant(Date.UTC(2100, 0, 1) + 0.7) },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: 10 ** 6 }).map((ms) => new Date(Date.UTC(2100, 0, 1) + ms)) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(0, -5, Number.NaN, new Date(Number.NaN)) },
  )
  .map(encode);

/** One key-value op (valid at top level and on a `txn`). */
export function kvOpArb(): fc.Arbitrary<KvOp> {
  return fc.oneof(
    { weight: 6, arbitrary: keyArb().map((key): KvOp => ({ op: "get", key })) },
    { weight: 3, arbitrary: multiKeysArb.map((keys): KvOp => ({ op: "getMany", keys })) },
    {
      weight: 8,
      arbitrary: fc.tuple(keyArb(), putValueArb()).map(([key, value]): KvOp => ({ op: "put", key, value })),
    },
    {
      weight: 3,
      arbitrary: fc
        .array(fc.tuple(stringKeyArb, putValueArb()), { maxLength: 5 })
        .map((entries): KvOp => ({ op: "putMany", entries })),
    },
    { weight: 4, arbitrary: keyArb().map((key): KvOp => ({ op: "delete", key })) },
    { weight: 2, arbitrary: multiKeysArb.map((keys): KvOp => ({ op: "deleteMany", keys })) },
    {
      weight: 8,
      arbitrary: listOptionsArb().map((options): KvOp => (options ? { op: "list", options } : { op: "list" })),
    },
    { weight: 1, arbitrary: fc.constant<KvOp>({ op: "deleteAll" }) },
    { weight: 1, arbitrary: fc.constant<KvOp>({ op: "getAlarm" }) },
    { weight: 1, arbitrary: alarmTimeArb.map((time): KvOp => ({ op: "setAlarm", time })) },
    { weight: 1, arbitrary: fc.constant<KvOp>({ op: "deleteAlarm" }) },
  );
}

/** A transaction: KV ops on `txn`, maybe a rollback, maybe a throw, maybe one nested transaction. */
function transactionArb(depth: number): fc.Arbitrary<Op> {
  const innerArb: fc.Arbitrary<Op> =
    depth > 0
      ? fc.oneof({ weight: 12, arbitrary: kvOpArb() }, { weight: 1, arbitrary: transactionArb(depth - 1) })
      : kvOpArb();
  return fc
    .tuple(
      fc.array(innerArb, { maxLength: 6 }),
      fc.constantFrom<"commit" | "rollback" | "throw" | "rollback-then-use">(
        "commit",
        "commit",
        "commit",
        "rollback",
        "throw",
        "rollback-then-use",
      ),
    )
    .map(([ops, ending]): Op => {
      if (ending === "rollback") return { op: "transaction", ops: [...ops, { op: "rollback" }] };
      if (ending === "throw") return { op: "transaction", ops: [...ops, { op: "throw", message: "closure threw" }] };
      if (ending === "rollback-then-use") {
        return { op: "transaction", ops: [{ op: "rollback" }, ...ops.slice(0, 2)] };
      }
      return { op: "transaction", ops };
    });
}

/** A random key-value transcript. */
export function kvTranscriptArb(): fc.Arbitrary<Op[]> {
  return fc.array(
    fc.oneof(
      { weight: 20, arbitrary: kvOpArb() },
      { weight: 2, arbitrary: transactionArb(1) },
      { weight: 1, arbitrary: fc.constant<Op>({ op: "sync" }) },
    ),
    { minLength: 1, maxLength: 25 },
  );
}

/** One call of the synchronous `storage.kv` API (keys and values as in {@link kvOpArb}). */
export function syncKvOpArb(): fc.Arbitrary<SyncOp> {
  return fc.oneof(
    { weight: 5, arbitrary: keyArb().map((key): SyncOp => ({ op: "kvGet", key })) },
    {
      weight: 6,
      arbitrary: fc.tuple(keyArb(), putValueArb()).map(([key, value]): SyncOp => ({ op: "kvPut", key, value })),
    },
    { weight: 3, arbitrary: keyArb().map((key): SyncOp => ({ op: "kvDelete", key })) },
    {
      weight: 5,
      arbitrary: listOptionsArb().map((options): SyncOp => (options ? { op: "kvList", options } : { op: "kvList" })),
    },
  );
}

/**
 * Transcripts that mix the synchronous `storage.kv` API with the asynchronous one on the same keys,
 * `transactionSync` (committed or thrown out of) around synchronous calls, and `transaction()`.
 */
export function mixedKvTranscriptArb(): fc.Arbitrary<Op[]> {
  const syncOp = syncKvOpArb();
  return fc.array(
    fc.oneof(
      { weight: 10, arbitrary: syncOp },
      { weight: 10, arbitrary: kvOpArb() },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.array(syncOp, { maxLength: 4 }), fc.boolean())
          .map(([ops, throwAtEnd]): Op => ({ op: "transactionSync", ops, throwAtEnd })),
      },
      { weight: 1, arbitrary: transactionArb(1) },
      { weight: 1, arbitrary: fc.constant<Op>({ op: "sync" }) },
    ),
    { minLength: 1, maxLength: 25 },
  );
}

// ---------------------------------------------------------------------------------------------
// SQL workloads

const TABLES = ["t0", "t1", "t2"] as const;
const COLUMN_TYPES = ["INTEGER", "REAL", "TEXT", "BLOB", "ANY", "NUMERIC", ""] as const;

interface Column {
  readonly name: string;
  readonly type: (typeof COLUMN_TYPES)[number];
  readonly constraint: "" | " NOT NULL" | " UNIQUE" | " PRIMARY KEY";
}

interface Table {
  readonly name: string;
  readonly columns: readonly Column[];
}

const tableArb: fc.Arbitrary<Table> = fc
  .tuple(
    fc.constantFrom(...TABLES),
    fc.array(
      fc.record({
        type: fc.constantFrom(...COLUMN_TYPES),
        constraint: fc.constantFrom<Column["constraint"]>("", "", "", " NOT NULL", " UNIQUE", " PRIMARY KEY"),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  )
  .map(([name, specs]) => {
    let hasPrimaryKey = false;
    const columns = specs.map((spec, i): Column => {
      // Only one PRIMARY KEY per table; later ones degrade to UNIQUE so the schema still compiles.
      let constraint = spec.constraint;
      if (constraint === " PRIMARY KEY") {
        if (hasPrimaryKey) constraint = " UNIQUE";
        hasPrimaryKey = true;
      }
      return { name: `c${i}`, type: spec.type, constraint };
    });
    return { name, columns };
  });

/** Binding values: numbers (bound as REAL by workerd), strings, null/undefined, blobs, booleans, BigInt. */
export function bindingArb(): fc.Arbitrary<Encoded> {
  return fc
    .oneof(
      { weight: 4, arbitrary: fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double(), fc.constant(2 ** 53 + 1)) },
      { weight: 4, arbitrary: fc.string({ maxLength: 6 }) },
      { weight: 2, arbitrary: fc.constantFrom<unknown>(null, undefined) },
      {
        weight: 2,
        arbitrary: fc.oneof(
          fc.uint8Array({ maxLength: 6 }).map((a) => a.buffer),
          fc.uint8Array({ maxLength: 6 }),
          fc.uint8Array({ maxLength: 4 }).map((a) => new DataView(a.buffer)),
        ),
      },
      { weight: 1, arbitrary: fc.boolean() },
      { weight: 1, arbitrary: fc.constantFrom<unknown>(5n, [1, 2], { a: 1 }, new Date(0)) },
    )
    .map(encode);
}

const literalArb = fc.oneof(
  fc.integer({ min: -50, max: 50 }).map(String),
  fc.constantFrom("NULL", "'x'", "''", "X'00FF'", "1.5", "-0.0", "9007199254740993", "'5'", "1e308 * 10"),
);

const readArb = fc.constantFrom(...SQL_READ_MODES);

function sqlOp(query: string, bindings: readonly Encoded[], read: SqlReadMode): SyncOp {
  return { op: "sql", query, bindings, read };
}

/** SQL statements over one table: inserts (bound and literal), selects, updates, deletes, errors. */
function statementArb(table: Table): fc.Arbitrary<SyncOp> {
  const names = table.columns.map((c) => c.name);
  const column = fc.constantFrom(...names);
  const placeholders = names.map(() => "?").join(", ");
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(fc.array(bindingArb(), { minLength: names.length, maxLength: names.length }), readArb)
        .map(([bindings, read]) =>
          sqlOp(`INSERT INTO ${table.name} (${names.join(", ")}) VALUES (${placeholders})`, bindings, read),
        ),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.array(literalArb, { minLength: names.length, maxLength: names.length }), readArb)
        .map(([values, read]) =>
          sqlOp(`INSERT OR REPLACE INTO ${table.name} VALUES (${values.join(", ")}) RETURNING *`, [], read),
        ),
    },
    {
      weight: 5,
      arbitrary: fc
        .tuple(column, readArb, fc.boolean())
        .map(([c, read, desc]) =>
          sqlOp(
            `SELECT *, typeof(${c}) AS type FROM ${table.name} ORDER BY ${c} ${desc ? "DESC" : "ASC"}, rowid`,
            [],
            read,
          ),
        ),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(column, bindingArb(), readArb)
        .map(([c, b, read]) =>
          sqlOp(`SELECT ${c}, ${c} AS ${c} FROM ${table.name} WHERE ${c} = ? ORDER BY rowid`, [b], read),
        ),
    },
    {
      weight: 2,
      arbitrary: readArb.map((read) =>
        sqlOp(`SELECT count(*) AS n, count(${names[0]}) AS nonNull FROM ${table.name}`, [], read),
      ),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(column, bindingArb(), readArb)
        .map(([c, b, read]) => sqlOp(`UPDATE ${table.name} SET ${c} = ? WHERE rowid % 2 = 0`, [b], read)),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(column, readArb)
        .map(([c, read]) => sqlOp(`DELETE FROM ${table.name} WHERE ${c} IS NULL`, [], read)),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        sqlOp(`SELEC * FROM ${table.name}`, [], "toArray"),
        sqlOp("SELECT * FROM missing_table", [], "toArray"),
        sqlOp(`SELECT * FROM ${table.name} WHERE ${names[0]} = ?`, [], "toArray"),
        sqlOp(`SELECT ?, ?`, [encode(1)], "toArray"),
        sqlOp(`INSERT INTO ${table.name} DEFAULT VALUES; SELECT count(*) FROM ${table.name}`, [], "one"),
        sqlOp(`SELECT 1; SELECT ?`, [encode("x")], "raw"),
        sqlOp(`SELECT ?; SELECT 2`, [encode("x")], "raw"),
        sqlOp("", [], "toArray"),
        sqlOp("-- nothing", [], "toArray"),
        sqlOp("BEGIN TRANSACTION", [], "toArray"),
        sqlOp("SELECT * FROM _cf_KV", [], "toArray"),
        sqlOp("SELECT sqlite_version()", [], "toArray"),
        sqlOp(`SELECT * FROM ${table.name} WHERE rowid = 1`, [], "one"),
        sqlOp("SELECT 1 AS a, 2 AS a", [], "toArray"),
        sqlOp("SELECT 1 AS a, 2 AS a", [], "raw"),
        sqlOp("PRAGMA table_info(t0)", [], "toArray"),
        sqlOp("PRAGMA page_size", [], "toArray"),
      ),
    },
  );
}

/** A random SQL workload: one or two tables, then statements over them, optionally some in transactionSync. */
export function sqlTranscriptArb(): fc.Arbitrary<Op[]> {
  return fc.uniqueArray(tableArb, { minLength: 1, maxLength: 2, selector: (t) => t.name }).chain((tables) => {
    const creates: Op[] = tables.map((t) =>
      sqlOp(
        `CREATE TABLE ${t.name} (${t.columns.map((c) => `${c.name} ${c.type}${c.constraint}`.trim()).join(", ")})`,
        [],
        "toArray",
      ),
    );
    const statement = fc.oneof(...tables.map((t) => statementArb(t)));
    const step: fc.Arbitrary<Op> = fc.oneof(
      { weight: 12, arbitrary: statement },
      {
        weight: 1,
        arbitrary: fc
          .tuple(fc.array(statement, { maxLength: 3 }), fc.boolean())
          .map(([ops, throwAtEnd]): Op => ({ op: "transactionSync", ops, throwAtEnd })),
      },
    );
    return fc.array(step, { minLength: 1, maxLength: 20 }).map((steps) => [...creates, ...steps]);
  });
}
