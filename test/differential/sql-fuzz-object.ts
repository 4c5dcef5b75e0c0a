/**
 * The object the SQL fuzzer (`sql-fuzz.differential.test.ts`) runs in both worlds: one JavaScript
 * class, as source text, run inline in a Miniflare worker (real workerd) and, through
 * `classFromSource`, inside an `ObjectContext` here (see `same-source.ts`). A request to
 * `/run?p=<steps as JSON>` performs the steps on `ctx.storage` and answers what each one gave; a
 * request to `/dump` answers the object's durable state (schema, every user table's rows, the
 * key-value pairs), read by a new request, so after whatever commit or reset the steps caused.
 *
 * Values cross as JSON with tags for what JSON cannot hold: `{"$b": hex}` an ArrayBuffer,
 * `{"$u": 1}` undefined, `{"$n": "NaN" | "Infinity" | "-Infinity" | "-0"}` such numbers,
 * `{"$big": "5"}` a BigInt (bindings only).
 *
 * @example
 * ```ts
 * const steps: FuzzStep[] = [{ k: "exec", sql: "SELECT 1 AS a", plan: ["toArray"] }];
 * const outcome = await side.request(fuzzRunPath(steps));
 * ```
 */

/**
 * What to do with a cursor, one after another; each gives its own result. Not `raw().one()`: the
 * storage interface gives the raw iterator a `one()`, workerd's has none (a deliberate difference).
 */
export const FUZZ_CURSOR_ACTIONS = [
  "next",
  "rawNext",
  "toArray",
  "rawToArray",
  "one",
  "columnNames",
  "counters",
  "forBreak",
] as const;
/** One of {@link FUZZ_CURSOR_ACTIONS}. */
export type FuzzCursorAction = (typeof FUZZ_CURSOR_ACTIONS)[number];

/** A binding or key-value value, tagged as described in the module comment. */
export type FuzzValue = null | boolean | number | string | { readonly [tag: string]: string | number };

/** One step of a request. */
export type FuzzStep =
  /** `sql.exec`, then `plan` on the cursor; `hold` keeps the cursor in that slot for later `cursor` steps. */
  | {
      readonly k: "exec";
      readonly sql: string;
      readonly args?: readonly FuzzValue[];
      readonly plan: readonly FuzzCursorAction[];
      readonly hold?: number;
    }
  /** More actions on a held cursor (of this request). */
  | { readonly k: "cursor"; readonly slot: number; readonly plan: readonly FuzzCursorAction[] }
  | { readonly k: "kvPut"; readonly key: string; readonly value: FuzzValue }
  | { readonly k: "kvGet"; readonly key: string }
  | { readonly k: "kvDelete"; readonly key: string }
  | { readonly k: "put"; readonly key: string; readonly value: FuzzValue }
  | { readonly k: "get"; readonly key: string }
  | { readonly k: "deleteAll" }
  | { readonly k: "sync" }
  /** `transactionSync` over `steps` (synchronous ones only); `throwAtEnd` rolls it back. */
  | { readonly k: "txSync"; readonly steps: readonly FuzzStep[]; readonly throwAtEnd: boolean }
  /** `transaction()` over `steps`; `throwAtEnd` rolls it back. */
  | { readonly k: "txn"; readonly steps: readonly FuzzStep[]; readonly throwAtEnd: boolean };

/** The request path that runs `steps`. */
export function fuzzRunPath(steps: readonly FuzzStep[]): string {
  return `/run?p=${encodeURIComponent(JSON.stringify(steps))}`;
}

/** The class, `SqlFuzzObject`, as source text (plain JavaScript, globals only). */
export const SQL_FUZZ_SOURCE = String.raw`
class SqlFuzzObject {
  constructor(ctx) {
    this.ctx = ctx;
  }

  static enc(v) {
    if (v === undefined) return { $u: 1 };
    if (typeof v === "number") {
      if (Number.isNaN(v) || !Number.isFinite(v)) return { $n: String(v) };
      if (Object.is(v, -0)) return { $n: "-0" };
      return v;
    }
    if (typeof v === "bigint") return { $big: String(v) };
    if (v instanceof ArrayBuffer) {
      return { $b: [...new Uint8Array(v)].map((b) => b.toString(16).padStart(2, "0")).join("") };
    }
    if (Array.isArray(v)) return v.map((x) => SqlFuzzObject.enc(x));
    if (v !== null && typeof v === "object") {
      const out = {};
      for (const [key, x] of Object.entries(v)) out[key] = SqlFuzzObject.enc(x);
      return out;
    }
    return v;
  }

  static dec(v) {
    if (v === null || typeof v !== "object") return v;
    if ("$u" in v) return undefined;
    if ("$n" in v) return Number(v.$n);
    if ("$big" in v) return BigInt(v.$big);
    if ("$b" in v) {
      const hex = v.$b;
      const bytes = new Uint8Array(hex.length / 2);
      for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
      return bytes.buffer;
    }
    return v;
  }

  static err(e) {
    if (e !== null && typeof e === "object" && "message" in e) return { e: [String(e.name), String(e.message)] };
    return { e: ["(thrown " + typeof e + ")", String(e)] };
  }

  static attempt(fn) {
    try {
      return { v: SqlFuzzObject.enc(fn()) };
    } catch (e) {
      return SqlFuzzObject.err(e);
    }
  }

  static act(c, action) {
    return SqlFuzzObject.attempt(() => {
      switch (action) {
        case "next": return c.next();
        case "rawNext": return c.raw().next();
        case "toArray": return c.toArray();
        case "rawToArray": return c.raw().toArray();
        case "one": return c.one();
        case "columnNames": return c.columnNames;
        case "counters": return [c.rowsRead, c.rowsWritten];
        case "forBreak": {
          for (const row of c) return ["row", row];
          return ["none"];
        }
      }
      throw new Error("unknown action " + action);
    });
  }

  runSync(step, slots) {
    const storage = this.ctx.storage;
    const dec = SqlFuzzObject.dec;
    switch (step.k) {
      case "exec": {
        let c;
        try {
          c = storage.sql.exec(step.sql, ...(step.args ?? []).map(dec));
        } catch (e) {
          return SqlFuzzObject.err(e);
        }
        if (step.hold !== undefined) slots[step.hold] = c;
        return { a: step.plan.map((action) => SqlFuzzObject.act(c, action)) };
      }
      case "cursor": {
        const c = slots[step.slot];
        if (c === undefined) return { none: 1 };
        return { a: step.plan.map((action) => SqlFuzzObject.act(c, action)) };
      }
      case "kvPut": return SqlFuzzObject.attempt(() => storage.kv.put(step.key, dec(step.value)));
      case "kvGet": return SqlFuzzObject.attempt(() => storage.kv.get(step.key));
      case "kvDelete": return SqlFuzzObject.attempt(() => storage.kv.delete(step.key));
      case "txSync": {
        const inner = [];
        try {
          const v = storage.transactionSync(() => {
            for (const s of step.steps) inner.push(this.runSync(s, slots));
            if (step.throwAtEnd) throw new Error("rolled back by the fuzzer");
            return inner.length;
          });
          return { v: SqlFuzzObject.enc(v), inner };
        } catch (e) {
          return { ...SqlFuzzObject.err(e), inner };
        }
      }
    }
    return undefined;
  }

  async runStep(step, slots) {
    const storage = this.ctx.storage;
    const dec = SqlFuzzObject.dec;
    const sync = this.runSync(step, slots);
    if (sync !== undefined) return sync;
    try {
      switch (step.k) {
        case "put": return { v: SqlFuzzObject.enc(await storage.put(step.key, dec(step.value))) };
        case "get": return { v: SqlFuzzObject.enc(await storage.get(step.key)) };
        case "deleteAll": return { v: SqlFuzzObject.enc(await storage.deleteAll()) };
        case "sync": return { v: SqlFuzzObject.enc(await storage.sync()) };
        case "txn": {
          const inner = [];
          try {
            const v = await storage.transaction(async () => {
              for (const s of step.steps) inner.push(await this.runStep(s, slots));
              if (step.throwAtEnd) throw new Error("rolled back by the fuzzer");
              return inner.length;
            });
            return { v: SqlFuzzObject.enc(v), inner };
          } catch (e) {
            return { ...SqlFuzzObject.err(e), inner };
          }
        }
      }
    } catch (e) {
      return SqlFuzzObject.err(e);
    }
    return { e: ["fuzzer", "unknown step " + step.k] };
  }

  dump() {
    const sql = this.ctx.storage.sql;
    const schema = sql
      .exec("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
      .toArray();
    const tables = {};
    for (const entry of schema) {
      const name = entry.name;
      if (entry.type !== "table" || /^_cf_/i.test(name)) continue;
      // The platform keeps rows for its internal tables in sqlite_stat1; actorstore does not
      // (docs/sql.md, known differences).
      const where = name === "sqlite_stat1" ? " WHERE tbl NOT LIKE '\\_cf\\_%' ESCAPE '\\'" : "";
      try {
        const rows = sql.exec('SELECT * FROM "' + name.replace(/"/g, '""') + '"' + where).raw().toArray();
        tables[name] = rows.map((r) => JSON.stringify(SqlFuzzObject.enc(r))).sort();
      } catch (e) {
        tables[name] = SqlFuzzObject.err(e);
      }
    }
    const kv = [...this.ctx.storage.kv.list()].map(([k, v]) => [k, SqlFuzzObject.enc(v)]);
    return { schema, tables, kv };
  }

  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/dump") return Response.json(this.dump());
    const steps = JSON.parse(url.searchParams.get("p"));
    const slots = {};
    const results = [];
    for (const step of steps) results.push(await this.runStep(step, slots));
    return Response.json(results);
  }
}`;
