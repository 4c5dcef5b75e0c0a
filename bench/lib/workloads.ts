/**
 * The workloads, written once against the platform's `DurableObjectStorage` API, so that
 * actorstore, Miniflare 2 and workerd run the very same code: the workerd adapter embeds these
 * functions into its Durable Object by their source text (`embeddedWorkloadSource()`).
 *
 * Every function here must therefore be self-contained: no imports, no module-scope helpers, plain
 * JavaScript once the types are stripped. Keys and values are derived from {@link RoundParams} only.
 *
 * Key `i` of a dataset of `size` keys is `key-` + 8 digits (12 bytes). A round touches the keys
 * `(offset + j * 7919) % size`: 7919 is prime and coprime with every size we use (powers of ten),
 * so `n <= size` consecutive `j` give `n` distinct keys spread over the whole key space.
 */
import type { DurableObjectStorage } from "@cloudflare/workers-types";

/** The storage calls the key-value workloads use (Miniflare 2 offers exactly these). */
export type KvStore = Pick<DurableObjectStorage, "get" | "put" | "delete" | "list" | "transaction" | "sync">;
/** The storage calls the SQL workloads use. */
export type SqlStore = Pick<DurableObjectStorage, "sql" | "sync">;

/** What one round of a workload gets. */
export interface RoundParams {
  /** Operations to run (the unit the table reports). */
  n: number;
  /** Keys (and SQL rows) in the dataset. */
  size: number;
  /** Varies from round to round, so rounds touch different keys. */
  offset: number;
  /** The value every write stores (same shape on every system). */
  value: unknown;
}

/** One workload: an untimed setup, the timed run, an untimed teardown that restores the dataset. */
export interface WorkloadFns<S> {
  setup?: (s: S, p: RoundParams) => Promise<void>;
  run: (s: S, p: RoundParams) => Promise<void>;
  teardown?: (s: S, p: RoundParams) => Promise<void>;
}

/** Key-value workloads. */
export const KV_WORKLOAD_FNS = {
  /** `await put()` n times (they coalesce into one batch on every platform), then `sync()`. */
  put: {
    run: async (s: KvStore, p: RoundParams) => {
      for (let j = 0; j < p.n; j++) {
        await s.put(`key-${String((p.offset + j * 7919) % p.size).padStart(8, "0")}`, p.value);
      }
      await s.sync();
    },
  },
  /** n/100 times: 100 `put()`s with no await between them, then `await sync()`. */
  "put-batch": {
    run: async (s: KvStore, p: RoundParams) => {
      for (let b = 0; b < p.n; b += 100) {
        for (let j = b; j < b + 100; j++) {
          void s.put(`key-${String((p.offset + j * 7919) % p.size).padStart(8, "0")}`, p.value);
        }
        await s.sync();
      }
    },
  },
  /** `put()` then `await sync()`, n times: every op is its own committed (durable) batch. */
  "put-sync": {
    run: async (s: KvStore, p: RoundParams) => {
      for (let j = 0; j < p.n; j++) {
        void s.put(`key-${String((p.offset + j * 7919) % p.size).padStart(8, "0")}`, p.value);
        await s.sync();
      }
    },
  },
  /** `await get()` over a working set of up to 1,000 keys that the setup has read once. */
  "get-cached": {
    setup: async (s: KvStore, p: RoundParams) => {
      const w = Math.min(p.size, 1000);
      for (let j = 0; j < w; j++) await s.get(`key-${String((j * 7919) % p.size).padStart(8, "0")}`);
    },
    run: async (s: KvStore, p: RoundParams) => {
      const w = Math.min(p.size, 1000);
      for (let j = 0; j < p.n; j++) {
        const v = await s.get(`key-${String(((j % w) * 7919) % p.size).padStart(8, "0")}`);
        if (v === undefined) throw new Error("get-cached: missing key");
      }
    },
  },
  /** `await get()` of n distinct keys (n <= size); actorstore's cache is emptied before each round. */
  "get-uncached": {
    run: async (s: KvStore, p: RoundParams) => {
      for (let j = 0; j < p.n; j++) {
        const v = await s.get(`key-${String((p.offset + j * 7919) % p.size).padStart(8, "0")}`);
        if (v === undefined) throw new Error("get-uncached: missing key");
      }
    },
  },
  /** `await get([128 keys])`, n calls (each reads 128 keys). */
  "get-128": {
    run: async (s: KvStore, p: RoundParams) => {
      for (let c = 0; c < p.n; c++) {
        const keys: string[] = [];
        for (let j = 0; j < 128; j++) {
          keys.push(`key-${String((p.offset + (c * 128 + j) * 7919) % p.size).padStart(8, "0")}`);
        }
        const m = await s.get(keys);
        if (m.size === 0) throw new Error("get-128: no keys found");
      }
    },
  },
  /** `await list({ start, limit: 1000 })` from a different start key each call. */
  "list-1000": {
    run: async (s: KvStore, p: RoundParams) => {
      const span = Math.max(1, p.size - 1000);
      for (let c = 0; c < p.n; c++) {
        const start = `key-${String((p.offset + c * 7919) % span).padStart(8, "0")}`;
        const m = await s.list({ start, limit: 1000 });
        if (m.size !== Math.min(1000, p.size)) throw new Error(`list-1000: got ${m.size} entries`);
      }
    },
  },
  /** `await delete()` of n distinct existing keys, then `sync()`; the teardown puts them back. */
  delete: {
    run: async (s: KvStore, p: RoundParams) => {
      for (let j = 0; j < p.n; j++) {
        const existed = await s.delete(`key-${String((p.offset + j * 7919) % p.size).padStart(8, "0")}`);
        if (!existed) throw new Error("delete: key was missing");
      }
      await s.sync();
    },
    teardown: async (s: KvStore, p: RoundParams) => {
      for (let b = 0; b < p.n; b += 128) {
        const entries: Record<string, unknown> = {};
        for (let j = b; j < Math.min(p.n, b + 128); j++) {
          entries[`key-${String((p.offset + j * 7919) % p.size).padStart(8, "0")}`] = p.value;
        }
        void s.put(entries);
      }
      await s.sync();
    },
  },
  /** n times `transaction()`: 4 awaited gets, then 4 awaited puts of the same keys. */
  transaction: {
    run: async (s: KvStore, p: RoundParams) => {
      for (let t = 0; t < p.n; t++) {
        await s.transaction(async (txn) => {
          for (let j = 0; j < 4; j++) {
            await txn.get(`key-${String((p.offset + (t * 4 + j) * 7919) % p.size).padStart(8, "0")}`);
          }
          for (let j = 0; j < 4; j++) {
            await txn.put(`key-${String((p.offset + (t * 4 + j) * 7919) % p.size).padStart(8, "0")}`, p.value);
          }
        });
      }
      await s.sync();
    },
  },
} satisfies Record<string, WorkloadFns<KvStore>>;

/** SQL workloads over the table `bench_rows (id INTEGER PRIMARY KEY, v TEXT)` of `size` rows. */
export const SQL_WORKLOAD_FNS = {
  /** n `INSERT`s of new rows with no await between them (one coalesced batch), then `sync()`. */
  "sql-insert": {
    run: async (s: SqlStore, p: RoundParams) => {
      for (let j = 0; j < p.n; j++) {
        s.sql.exec("INSERT INTO bench_rows (id, v) VALUES (?, ?)", 1_000_000_000 + j, p.value);
      }
      await s.sync();
    },
    teardown: async (s: SqlStore, _p: RoundParams) => {
      s.sql.exec("DELETE FROM bench_rows WHERE id >= ?", 1_000_000_000);
      await s.sync();
    },
  },
  /** n point selects by primary key, each read with `one()`. */
  "sql-select": {
    run: async (s: SqlStore, p: RoundParams) => {
      for (let j = 0; j < p.n; j++) {
        const row = s.sql.exec("SELECT v FROM bench_rows WHERE id = ?", (p.offset + j * 7919) % p.size).one();
        if (row.v === null) throw new Error("sql-select: null row");
      }
    },
  },
  /** n range scans of 1,000 rows in primary-key order, read with `toArray()`. */
  "sql-scan": {
    run: async (s: SqlStore, p: RoundParams) => {
      const span = Math.max(1, p.size - 1000);
      for (let c = 0; c < p.n; c++) {
        const rows = s.sql
          .exec("SELECT id, v FROM bench_rows WHERE id >= ? ORDER BY id LIMIT 1000", (p.offset + c * 7919) % span)
          .toArray();
        if (rows.length !== Math.min(1000, p.size)) throw new Error(`sql-scan: got ${rows.length} rows`);
      }
    },
  },
} satisfies Record<string, WorkloadFns<SqlStore>>;

/** Fills a key-value store with `size` keys (128 per `put(entries)`, a `sync()` every 8,192). */
export async function populateKv(s: KvStore, p: { from: number; to: number; value: unknown }): Promise<void> {
  for (let b = p.from; b < p.to; b += 128) {
    const entries: Record<string, unknown> = {};
    for (let i = b; i < Math.min(p.to, b + 128); i++) entries[`key-${String(i).padStart(8, "0")}`] = p.value;
    void s.put(entries);
    if ((b - p.from) % 8192 === 0) await s.sync();
  }
  await s.sync();
}

/** Creates `bench_rows` (on the first call) and fills rows `[from, to)`. */
export async function populateSql(s: SqlStore, p: { from: number; to: number; value: unknown }): Promise<void> {
  if (p.from === 0) s.sql.exec("CREATE TABLE IF NOT EXISTS bench_rows (id INTEGER PRIMARY KEY, v TEXT)");
  for (let i = p.from; i < p.to; i++) s.sql.exec("INSERT INTO bench_rows (id, v) VALUES (?, ?)", i, p.value);
  await s.sync();
}

/** Names of the key-value workloads. */
export type KvWorkloadName = keyof typeof KV_WORKLOAD_FNS;
/** Names of the SQL workloads. */
export type SqlWorkloadName = keyof typeof SQL_WORKLOAD_FNS;
/** Every workload the systems run side by side. */
export type WorkloadName = KvWorkloadName | SqlWorkloadName;

/**
 * JavaScript source that defines `KV_WORKLOAD_FNS`, `SQL_WORKLOAD_FNS`, `populateKv` and
 * `populateSql` with the same code as above, for the workerd Durable Object.
 */
export function embeddedWorkloadSource(): string {
  const fnsToSource = (fns: Record<string, WorkloadFns<never>>): string => {
    const entries = Object.entries(fns).map(([name, w]) => {
      const parts = (["setup", "run", "teardown"] as const)
        .filter((phase) => w[phase] !== undefined)
        .map((phase) => `${phase}: ${String(w[phase])}`);
      return `${JSON.stringify(name)}: { ${parts.join(", ")} }`;
    });
    return `{\n${entries.join(",\n")}\n}`;
  };
  const source = [
    `const KV_WORKLOAD_FNS = ${fnsToSource(KV_WORKLOAD_FNS as Record<string, WorkloadFns<never>>)};`,
    `const SQL_WORKLOAD_FNS = ${fnsToSource(SQL_WORKLOAD_FNS as Record<string, WorkloadFns<never>>)};`,
    `const populateKv = ${String(populateKv)};`,
    `const populateSql = ${String(populateSql)};`,
  ].join("\n");
  if (/__vite_ssr_|__vi_import|import\.meta|\brequire\(/.test(source)) {
    throw new Error("workloads.ts: an embedded function refers to module scope; keep every workload self-contained.");
  }
  return source;
}
