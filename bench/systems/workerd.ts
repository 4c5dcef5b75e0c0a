/**
 * workerd, the real runtime, through Miniflare 4: a Durable Object class with `useSQLite: true`
 * (workerd's `ActorSqlite`, in-memory storage) running the shared workloads inside the object.
 *
 * Fairness: a round is one request whose handler runs the workload's n operations against
 * `ctx.storage`; the response waits for the output gate, so it includes the commit. workerd's
 * clock does not advance inside a request (Spectre mitigation), so time is taken in Node around
 * the request, and the median cost of an empty request (same path: worker → object → JSON body
 * parsed → response) is subtracted. Setup and teardown are separate, untimed requests.
 */
import { randomUUID } from "node:crypto";
import { Miniflare } from "miniflare";
import { embeddedWorkloadSource, type RoundParams, type WorkloadName } from "../lib/workloads";
import type { BenchSystem } from "./system";

/** Before `delete_all_deletes_alarm`, like the differential tests; irrelevant to these workloads. */
const COMPATIBILITY_DATE = "2026-02-23";

/** The worker: a router to one object, and the object that runs workloads by name. */
export function benchWorkerScript(): string {
  return `
// esbuild's keepNames helper, in case the TypeScript transform inserted calls to it.
const __name = (target) => target;
${embeddedWorkloadSource()}

export class BenchObject {
  constructor(ctx) {
    this.ctx = ctx;
  }
  async fetch(request) {
    const body = await request.json();
    const s = this.ctx.storage;
    try {
      if (body.op === "fillKeys") {
        await populateKv(s, body.params);
      } else if (body.op === "fillRows") {
        await populateSql(s, body.params);
      } else if (body.op === "phase") {
        const fns = KV_WORKLOAD_FNS[body.workload] ?? SQL_WORKLOAD_FNS[body.workload];
        if (fns === undefined) throw new Error("unknown workload " + body.workload);
        const fn = fns[body.phase];
        if (fn !== undefined) await fn(s, body.params);
      }
      return new Response("ok");
    } catch (e) {
      return new Response(String((e && e.stack) || e), { status: 500 });
    }
  }
}

export default {
  async fetch(request, env) {
    const name = new URL(request.url).searchParams.get("name") ?? "default";
    return env.OBJECT.get(env.OBJECT.idFromName(name)).fetch(request);
  },
};
`;
}

class WorkerdSystem implements BenchSystem {
  readonly name = "workerd" as const;
  readonly #mf: Miniflare;
  readonly #url = `http://bench/?name=${randomUUID()}`;
  /** Median empty-request ms, measured at the first round of each workload. */
  #emptyMs = new Map<WorkloadName, number>();
  #lastEmptyMs = 0;

  constructor(mf: Miniflare) {
    this.#mf = mf;
  }

  supports(_workload: WorkloadName): boolean {
    return true;
  }

  async #request(body: unknown): Promise<number> {
    const init = { method: "POST", body: JSON.stringify(body) };
    const start = performance.now();
    const response = await this.#mf.dispatchFetch(this.#url, init);
    const text = await response.text();
    const ms = performance.now() - start;
    if (!response.ok) throw new Error(`workerd request failed (${response.status}): ${text}`);
    return ms;
  }

  async fillKeys(from: number, to: number, value: unknown): Promise<void> {
    await this.#request({ op: "fillKeys", params: { from, to, value } });
  }

  async fillRows(from: number, to: number, value: unknown): Promise<void> {
    await this.#request({ op: "fillRows", params: { from, to, value } });
  }

  async #emptyRequestMs(workload: WorkloadName, params: RoundParams): Promise<number> {
    let ms = this.#emptyMs.get(workload);
    if (ms === undefined) {
      // An empty request with the same body size as the workload's requests.
      const samples: number[] = [];
      for (let i = 0; i < 9; i++) samples.push(await this.#request({ op: "noop", params }));
      samples.sort((a, b) => a - b);
      ms = samples[4] ?? 0;
      this.#emptyMs.set(workload, ms);
    }
    this.#lastEmptyMs = ms;
    return ms;
  }

  /** Five empty requests: below that, the subtracted request cost's variance dominates. */
  minRoundMs(): number {
    return 5 * this.#lastEmptyMs;
  }

  async round(workload: WorkloadName, params: RoundParams): Promise<number> {
    const empty = await this.#emptyRequestMs(workload, params);
    await this.#request({ op: "phase", phase: "setup", workload, params });
    const ms = await this.#request({ op: "phase", phase: "run", workload, params });
    await this.#request({ op: "phase", phase: "teardown", workload, params });
    // Never report less than a microsecond: a round is calibrated to take far longer than an
    // empty request, so this only guards against a nonsensical negative time.
    return Math.max(ms - empty, 0.001);
  }

  close(): Promise<void> {
    return this.#mf.dispose();
  }

  /** The workerd processes' resident memory in bytes, when /proc can tell (Linux). */
  async residentBytes(): Promise<number | undefined> {
    return workerdResidentBytes();
  }
}

/** Sum of VmRSS of this process's `workerd` children (Linux only; `undefined` elsewhere). */
export async function workerdResidentBytes(): Promise<number | undefined> {
  const { readdir, readFile } = await import("node:fs/promises");
  let total = 0;
  let found = false;
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = await readFile(`/proc/${entry}/status`, "utf8");
      const ppid = /^PPid:\s+(\d+)/m.exec(status)?.[1];
      const name = /^Name:\s+(\S+)/m.exec(status)?.[1];
      if (ppid !== String(process.pid) || name !== "workerd") continue;
      const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? "0");
      total += rssKb * 1024;
      found = true;
    } catch {
      // the process ended while we looked
    }
  }
  return found ? total : undefined;
}

/** Starts a Miniflare instance with a fresh benchmark object. */
export async function openWorkerd(): Promise<BenchSystem> {
  const mf = new Miniflare({
    modules: true,
    script: benchWorkerScript(),
    compatibilityDate: COMPATIBILITY_DATE,
    durableObjects: { OBJECT: { className: "BenchObject", useSQLite: true } },
  });
  await mf.ready;
  return new WorkerdSystem(mf);
}
