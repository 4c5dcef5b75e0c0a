/**
 * CPU time of short SQL statements, for paired comparisons between checkouts (wall time on a loaded
 * shared machine varies far more than CPU time). Run from any checkout; each `<repo>` is a checkout
 * whose code is measured, so one script measures older commits too:
 *
 *   npx tsx bench/sql-cpu.ts run <repo> select|insert|scan [rounds]
 *       median CPU ms of one round in one process (two warm-up rounds not counted):
 *       select: 20,000 point selects by primary key read with one();
 *       insert: 5 batches of 1,000 inserts with no await between them, each then sync() (the rows
 *               deleted after the round, untimed);
 *       scan:   50 range scans of 1,000 rows read with toArray();
 *   npx tsx bench/sql-cpu.ts compare <pairs> <repo> <repo> … [--only select,insert,scan] [--rounds N]
 *       alternates the repos' measuring processes (A B C, A B C, …) and prints each repo's median
 *       and the median of each repo's per-pair ratio to the first repo.
 *   npx tsx bench/sql-cpu.ts interleave <rounds> <repo> <repo> … [--only select,insert,scan]
 *       loads every repo into one process and alternates their rounds (A B C, A B C, …): a quick
 *       check at high load, where neighbouring rounds see the same machine (the repos share the
 *       sql.js glue code, so confirm with `compare`).
 *   npx tsx bench/sql-cpu.ts split <rounds> <repo> <repo> …
 *       as `interleave` for the insert alone, with each round's CPU time split into its phases: the
 *       5,000 `exec` calls, and the 5 commits (from the last `exec` of a batch until its `sync()`
 *       resolved); prints each phase's median and the median of its per-round ratios to the first repo.
 *
 * The table is the benchmark's `bench_rows` (id INTEGER PRIMARY KEY, v TEXT) with 10,000 rows of a
 * 100-character value, in the default in-memory persistence. CPU time is `process.cpuUsage()`
 * (user + system, every thread of the process).
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";

interface Cursor {
  one(): Record<string, unknown>;
  toArray(): Record<string, unknown>[];
}
interface Storage {
  sql: { exec(query: string, ...bindings: unknown[]): Cursor };
  sync(): Promise<void>;
  close(): Promise<void>;
}
interface Api {
  ObjectStorage: { open(options: { backend: "sqlite" }): Promise<Storage> };
}

const SIZE = 10_000;
const VALUE = "v".repeat(100);
const WORKLOADS = ["select", "insert", "scan"] as const;
type Workload = (typeof WORKLOADS)[number];

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function openFilled(repo: string): Promise<Storage> {
  const api = (await import(`${resolve(repo)}/src/index.ts`)) as Api;
  const storage = await api.ObjectStorage.open({ backend: "sqlite" });
  storage.sql.exec("CREATE TABLE bench_rows (id INTEGER PRIMARY KEY, v TEXT)");
  for (let i = 0; i < SIZE; i++) storage.sql.exec("INSERT INTO bench_rows (id, v) VALUES (?, ?)", i, VALUE);
  await storage.sync();
  return storage;
}

async function measure(repo: string, workload: Workload, rounds: number): Promise<number> {
  const storage = await openFilled(repo);
  const measured: number[] = [];
  for (let r = 0; r < rounds + 2; r++) {
    const spent = await round(storage, workload, r);
    if (r >= 2) measured.push(spent);
  }
  await storage.close();
  return median(measured);
}

/** CPU ms of an insert round's `exec` calls and of its commits (see `split`). */
async function insertPhases(storage: Storage): Promise<[exec: number, commit: number]> {
  let exec = 0;
  let commit = 0;
  for (let b = 0; b < 5; b++) {
    const start = cpuMs();
    for (let j = 0; j < 1_000; j++) {
      storage.sql.exec("INSERT INTO bench_rows (id, v) VALUES (?, ?)", 1_000_000_000 + b * 1_000 + j, VALUE);
    }
    const issued = cpuMs();
    await storage.sync();
    exec += issued - start;
    commit += cpuMs() - issued;
  }
  storage.sql.exec("DELETE FROM bench_rows WHERE id >= ?", 1_000_000_000);
  await storage.sync();
  return [exec, commit];
}

/** CPU ms of round `r` of `workload`. */
async function round(storage: Storage, workload: Workload, r: number): Promise<number> {
  const offset = (r * 104_729) % SIZE;
  let spent: number;
  if (workload === "select") {
    const start = cpuMs();
    for (let j = 0; j < 20_000; j++) {
      const row = storage.sql.exec("SELECT v FROM bench_rows WHERE id = ?", (offset + j * 7919) % SIZE).one();
      if (row.v === null) throw new Error("select: null row");
    }
    spent = cpuMs() - start;
  } else if (workload === "insert") {
    const start = cpuMs();
    for (let b = 0; b < 5; b++) {
      for (let j = 0; j < 1_000; j++) {
        storage.sql.exec("INSERT INTO bench_rows (id, v) VALUES (?, ?)", 1_000_000_000 + b * 1_000 + j, VALUE);
      }
      await storage.sync();
    }
    spent = cpuMs() - start;
    storage.sql.exec("DELETE FROM bench_rows WHERE id >= ?", 1_000_000_000);
    await storage.sync();
  } else {
    const start = cpuMs();
    for (let c = 0; c < 50; c++) {
      const rows = storage.sql
        .exec("SELECT id, v FROM bench_rows WHERE id >= ? ORDER BY id LIMIT 1000", (offset + c * 7919) % (SIZE - 1000))
        .toArray();
      if (rows.length !== 1000) throw new Error(`scan: got ${rows.length} rows`);
    }
    spent = cpuMs() - start;
  }
  return spent;
}

const [mode, ...args] = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
if (mode === "run") {
  const [repo, workload, rounds] = args;
  if (repo === undefined || !WORKLOADS.includes(workload as Workload)) throw new Error("usage: see the module comment");
  console.log((await measure(repo, workload as Workload, Number(rounds ?? 15))).toFixed(3));
} else if (mode === "compare") {
  const pairs = Number(args[0]);
  const repos = args.slice(1).filter((a, i, all) => !a.startsWith("--") && !all[i - 1]?.startsWith("--"));
  const only = (flag("only")?.split(",") ?? WORKLOADS) as Workload[];
  const rounds = flag("rounds") ?? "15";
  if (!(pairs > 0) || repos.length < 2) throw new Error("usage: see the module comment");
  const script = new URL(import.meta.url).pathname;
  for (const workload of only) {
    const times: number[][] = repos.map(() => []);
    for (let p = 0; p < pairs; p++) {
      for (const [i, repo] of repos.entries()) {
        const out = execFileSync(process.execPath, ["--import", "tsx", script, "run", repo, workload, rounds], {
          encoding: "utf8",
        });
        times[i]?.push(Number(out.trim()));
      }
    }
    const base = times[0] as number[];
    const line = repos.map((repo, i) => {
      const own = times[i] as number[];
      const ratio = median(own.map((t, p) => t / (base[p] as number)));
      return `${repo}: ${median(own).toFixed(2)} ms (x${ratio.toFixed(3)}; pairs ${own.map((t, p) => (t / (base[p] as number)).toFixed(2)).join(" ")})`;
    });
    console.log(`${workload}: ${line.join(" | ")}`);
  }
} else if (mode === "interleave") {
  const rounds = Number(args[0]);
  const repos = args.slice(1).filter((a, i, all) => !a.startsWith("--") && !all[i - 1]?.startsWith("--"));
  const only = (flag("only")?.split(",") ?? WORKLOADS) as Workload[];
  if (!(rounds > 0) || repos.length < 2) throw new Error("usage: see the module comment");
  const storages: Storage[] = [];
  for (const repo of repos) storages.push(await openFilled(repo));
  for (const workload of only) {
    const times: number[][] = repos.map(() => []);
    for (let r = 0; r < rounds + 2; r++) {
      for (const [i, storage] of storages.entries()) {
        const spent = await round(storage, workload, r);
        if (r >= 2) times[i]?.push(spent);
      }
    }
    const base = times[0] as number[];
    const line = repos.map((repo, i) => {
      const own = times[i] as number[];
      return `${repo}: ${median(own).toFixed(2)} ms (x${median(own.map((t, p) => t / (base[p] as number))).toFixed(3)})`;
    });
    console.log(`${workload}: ${line.join(" | ")}`);
  }
  for (const storage of storages) await storage.close();
} else if (mode === "split") {
  const rounds = Number(args[0]);
  const repos = args.slice(1);
  if (!(rounds > 0) || repos.length < 2) throw new Error("usage: see the module comment");
  const storages: Storage[] = [];
  for (const repo of repos) storages.push(await openFilled(repo));
  const phases = repos.map(() => ({ exec: [] as number[], commit: [] as number[] }));
  for (let r = 0; r < rounds + 2; r++) {
    for (const [i, storage] of storages.entries()) {
      const [exec, commit] = await insertPhases(storage);
      if (r >= 2) {
        phases[i]?.exec.push(exec);
        phases[i]?.commit.push(commit);
      }
    }
  }
  const base = phases[0] as { exec: number[]; commit: number[] };
  const line = repos.map((repo, i) => {
    const own = phases[i] as { exec: number[]; commit: number[] };
    const ratio = (mine: number[], theirs: number[]) =>
      median(mine.map((t, p) => t / (theirs[p] as number))).toFixed(3);
    return `${repo}: exec ${median(own.exec).toFixed(2)} ms (x${ratio(own.exec, base.exec)}), commits ${median(own.commit).toFixed(2)} ms (x${ratio(own.commit, base.commit)})`;
  });
  console.log(`insert: ${line.join(" | ")}`);
  for (const storage of storages) await storage.close();
} else throw new Error("usage: see the module comment");
