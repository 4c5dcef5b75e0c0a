/**
 * Real workerd for differential tests, through Miniflare 4 (which bundles the workerd binary).
 *
 * One {@link startWorkerd} call starts one Miniflare instance with two Durable Object classes that
 * run transcripts (see `ops.ts`) against `ctx.storage`:
 * - `"sqlite"`: `useSQLite: true`, i.e. workerd's `ActorSqlite` backend (what our default mirrors);
 * - `"cache"`: the same class in a second worker with `unsafeEphemeralDurableObjects: true`, i.e.
 *   workerd's in-memory `ActorCache` backend, the only one that enforces the production limits.
 *
 * Each run uses a fresh object (`idFromName(randomUUID())`), so runs are independent. Start one
 * instance per test file (`beforeAll`) and dispose it (`afterAll`): startup costs ~0.2 s, a run a
 * few milliseconds.
 *
 * @example
 * ```ts
 * const workerd = await startWorkerd();
 * const results = await workerd.run([{ op: "put", key: "a", value: 1 }, { op: "get", key: "a" }]);
 * await workerd.dispose();
 * ```
 */
import { randomUUID } from "node:crypto";
import { accessSync, chmodSync, constants, statSync } from "node:fs";
import { createRequire } from "node:module";
import { Miniflare } from "miniflare";
import { createTranscriptRunner, type Op, type OpResult } from "./ops";
import { createTranscriptCodec } from "./transcript-codec";

/** Compat date of the default instance: before `delete_all_deletes_alarm`, so deleteAll keeps the alarm. */
export const DEFAULT_COMPATIBILITY_DATE = "2026-02-23";
/** A compat date after 2026-02-24, where deleteAll also deletes the alarm. */
export const DELETE_ALL_DELETES_ALARM_DATE = "2026-03-01";

/** Which workerd storage backend a transcript runs on. */
export const WORKERD_BACKENDS = ["sqlite", "cache"] as const;
/** One of {@link WORKERD_BACKENDS}. */
export type WorkerdBackend = (typeof WORKERD_BACKENDS)[number];

/** Options for {@link startWorkerd}. */
export interface StartWorkerdOptions {
  /** Defaults to {@link DEFAULT_COMPATIBILITY_DATE}. */
  readonly compatibilityDate?: string;
}

/** Options for {@link WorkerdHandle.run}. */
export interface RunOptions {
  /** Defaults to `"sqlite"`. */
  readonly backend?: WorkerdBackend;
}

/** A running Miniflare instance. */
export interface WorkerdHandle {
  readonly compatibilityDate: string;
  /** Runs a transcript on a fresh Durable Object and returns its per-op results. */
  run(ops: readonly Op[], options?: RunOptions): Promise<OpResult[]>;
  dispose(): Promise<void>;
}

/**
 * The worker's source. The codec and runner are embedded from their compiled functions, so the
 * worker runs the very code that runs against ObjectStorage in Node.
 */
export function workerScript(): string {
  const codecSource = createTranscriptCodec.toString();
  const runnerSource = createTranscriptRunner.toString();
  for (const source of [codecSource, runnerSource]) {
    // Fails loudly if a transform ever makes the embedded functions depend on module scope.
    if (/__vite_ssr_|__vi_import|import\.meta/.test(source)) {
      throw new Error("workerd.ts: an embedded function refers to module scope; keep it self-contained.");
    }
  }
  return `
// esbuild's keepNames helper, in case the test transform inserted calls to it.
const __name = (target) => target;
const createTranscriptCodec = ${codecSource};
const createTranscriptRunner = ${runnerSource};

export class TranscriptObject {
  constructor(ctx, env) {
    this.ctx = ctx;
  }
  async fetch(request) {
    const ops = await request.json();
    const runner = createTranscriptRunner(createTranscriptCodec());
    const results = await runner.runOps(this.ctx.storage, ops);
    return Response.json(results);
  }
  // Present so that setAlarm() is allowed; the tests only use far-future times.
  alarm() {}
}

export default {
  async fetch(request, env) {
    const name = new URL(request.url).searchParams.get("name") ?? "default";
    return env.OBJECT.get(env.OBJECT.idFromName(name)).fetch(request);
  },
};
`;
}

/**
 * npm may skip workerd's postinstall (which only links the platform binary into place); Miniflare
 * then still finds `@cloudflare/workerd-<platform>/bin/workerd`, but an extracted binary can lack
 * its executable bit. Restore it here rather than depending on a postinstall.
 */
export function ensureWorkerdExecutable(): void {
  const require = createRequire(import.meta.url);
  const candidates: string[] = [];
  try {
    candidates.push(require("workerd").default as string);
  } catch {
    // Resolution problems surface below as a Miniflare startup error with its own message.
  }
  for (const binary of candidates) {
    try {
      accessSync(binary, constants.X_OK);
    } catch {
      try {
        chmodSync(binary, statSync(binary).mode | 0o111);
      } catch {
        // Not ours to fix (read-only install); Miniflare reports the failure.
      }
    }
  }
}

/** Starts one Miniflare instance with the transcript objects on both backends. */
export async function startWorkerd(options: StartWorkerdOptions = {}): Promise<WorkerdHandle> {
  ensureWorkerdExecutable();
  const compatibilityDate = options.compatibilityDate ?? DEFAULT_COMPATIBILITY_DATE;
  const script = workerScript();
  const mf = new Miniflare({
    workers: [
      {
        name: "sqlite",
        modules: true,
        script,
        compatibilityDate,
        durableObjects: { OBJECT: { className: "TranscriptObject", useSQLite: true } },
      },
      {
        name: "cache",
        modules: true,
        script,
        compatibilityDate,
        durableObjects: { OBJECT: { className: "TranscriptObject" } },
        unsafeEphemeralDurableObjects: true,
      },
    ],
  });
  await mf.ready;
  const cache = await mf.getWorker("cache");

  return {
    compatibilityDate,
    async run(ops, runOptions = {}) {
      const url = `http://transcript/run?name=${randomUUID()}`;
      const init = { method: "POST", body: JSON.stringify(ops) };
      const response =
        runOptions.backend === "cache" ? await cache.fetch(url, init) : await mf.dispatchFetch(url, init);
      const text = await response.text();
      if (!response.ok) throw new Error(`workerd run failed (${response.status}): ${text}`);
      return JSON.parse(text) as OpResult[];
    },
    dispose: () => mf.dispose(),
  };
}
