/**
 * The S3 adapter against Ceph on loopback, beside the file adapter (part of `npm run bench`, or
 * alone: `npx tsx bench/s3.ts`):
 *
 * - commit latency p50 / p99 for one committer (each commit waits for its own confirmation);
 * - commits/s on one object with 1, 8 and 64 concurrent committers (group commit);
 * - recovery after 10,000 commits: `load()` and a full `ObjectStorage.open()`.
 *
 * Starts a single-node Ceph RADOS Gateway with scripts/ceph-s3.sh (installing Debian's packages
 * when missing) and stops it afterwards; ACTORSTORE_S3_ENDPOINT (+ ACTORSTORE_S3_ACCESS_KEY /
 * ACTORSTORE_S3_SECRET_KEY, bucket "objects") uses a running gateway instead.
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { AwsClient } from "aws4fetch";
import type { CommitRecord } from "../src/durability/commit-record";
import { openFilePersistence } from "../src/durability/file-persistence";
import type { PersistenceAdapter } from "../src/durability/persistence";
import { s3Persistence } from "../src/s3/index";
import { ObjectStorage } from "../src/storage/object-storage";

const SCRIPT = fileURLToPath(new URL("../scripts/ceph-s3.sh", import.meta.url));
const run = promisify(execFile);
const encoder = new TextEncoder();

interface Gateway {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

async function startGateway(): Promise<Gateway> {
  const external = process.env.ACTORSTORE_S3_ENDPOINT;
  if (external)
    return {
      endpoint: external,
      accessKeyId: process.env.ACTORSTORE_S3_ACCESS_KEY ?? "AKTEST",
      secretAccessKey: process.env.ACTORSTORE_S3_SECRET_KEY ?? "SKTEST",
      stop: async () => {},
    };
  if (spawnSync("sh", ["-c", "command -v radosgw && command -v ceph-osd"]).status !== 0) {
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    spawnSync("apt-get", ["update"], { env, stdio: "inherit" });
    const r = spawnSync(
      "apt-get",
      ["install", "-y", "--no-install-recommends", "ceph-mon", "ceph-osd", "radosgw", "ceph-common"],
      { env, stdio: "inherit" },
    );
    if (r.status !== 0) throw new Error("Could not install Ceph (needs root and apt).");
  }
  const dir = await mkdtemp(join(tmpdir(), "actorstore-bench-ceph-"));
  const base = 31_000 + Math.floor(Math.random() * 80) * 100;
  const env = { ...process.env, CEPH_DIR: join(dir, "ceph"), CEPH_PORT_BASE: String(base) };
  await run("bash", [SCRIPT, "start"], { env, timeout: 300_000 });
  const gateway: Gateway = {
    endpoint: `http://127.0.0.1:${base + 80}`,
    accessKeyId: "AKTEST",
    secretAccessKey: "SKTEST",
    async stop() {
      await run("bash", [SCRIPT, "stop"], { env }).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
  const aws = new AwsClient({ accessKeyId: "AKTEST", secretAccessKey: "SKTEST", service: "s3", region: "us-east-1" });
  const made = await fetch(await aws.sign(`${gateway.endpoint}/objects`, { method: "PUT" }));
  if (made.status !== 200 && made.status !== 409) throw new Error(`creating the bucket: HTTP ${made.status}`);
  return gateway;
}

function record(seq: number): CommitRecord {
  return {
    seq,
    timeMs: 1_767_225_600_000 + seq,
    reset: false,
    sql: [],
    kv: [{ key: `user:${seq % 1000}`, value: encoder.encode(`{"n":${seq}}`.padEnd(64, " ")) }],
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number;
}

interface AdapterFactory {
  name: string;
  /** A fresh, empty object. */
  create(label: string): Promise<PersistenceAdapter>;
  /** A new adapter over the same object (another process would do the same). */
  reopen(adapter: PersistenceAdapter): Promise<PersistenceAdapter>;
  cleanup(): Promise<void>;
}

async function latency(factory: AdapterFactory, commits: number): Promise<{ p50: number; p99: number }> {
  const adapter = await factory.create("latency");
  await adapter.load();
  const samples: number[] = [];
  for (let seq = 1; seq <= commits; seq++) {
    const t = performance.now();
    await adapter.append([record(seq)]);
    samples.push(performance.now() - t);
  }
  await adapter.close();
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) };
}

async function throughput(factory: AdapterFactory, writers: number, seconds: number): Promise<number> {
  const adapter = await factory.create(`throughput-${writers}`);
  await adapter.load();
  let next = 1;
  let done = 0;
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (performance.now() < end) {
        await adapter.append([record(next++)]);
        done++;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  await adapter.close();
  return done / elapsed;
}

async function recovery(factory: AdapterFactory, commits: number): Promise<{ loadMs: number; openMs: number }> {
  const adapter = await factory.create("recovery");
  await adapter.load();
  let next = 1;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next <= commits) await adapter.append([record(next++)]);
    }),
  );
  await adapter.close();
  let t = performance.now();
  const again = await factory.reopen(adapter);
  const loaded = await again.load();
  const loadMs = performance.now() - t;
  if (loaded.lastSeq < commits) throw new Error(`recovery found ${loaded.lastSeq} of ${commits} commits`);
  await again.close();
  t = performance.now();
  const storage = await ObjectStorage.open({ persistence: await factory.reopen(again) });
  const openMs = performance.now() - t;
  await storage.close();
  return { loadMs, openMs };
}

export interface S3BenchResult {
  adapter: string;
  p50Ms: number;
  p99Ms: number;
  commitsPerSecond: Record<string, number>;
  recoveryLoadMs: number;
  recoveryOpenMs: number;
}

/** Runs the S3-vs-file benchmark; returns the rows and a Markdown table. */
export async function runS3Bench(
  options: { quick?: boolean } = {},
): Promise<{ rows: S3BenchResult[]; markdown: string }> {
  const gateway = await startGateway();
  const dirs: string[] = [];
  const run = Date.now().toString(36);
  const factories: AdapterFactory[] = [
    {
      name: "s3 (Ceph, loopback)",
      async create(label) {
        return s3Persistence({
          endpoint: gateway.endpoint,
          bucket: "objects",
          prefix: `bench-${run}-${label}/`,
          credentials: { accessKeyId: gateway.accessKeyId, secretAccessKey: gateway.secretAccessKey },
        });
      },
      async reopen(adapter) {
        const location = (adapter as unknown as { location: string }).location;
        const prefix = location.slice(location.indexOf("/objects/") + "/objects/".length);
        return s3Persistence({
          endpoint: gateway.endpoint,
          bucket: "objects",
          prefix,
          credentials: { accessKeyId: gateway.accessKeyId, secretAccessKey: gateway.secretAccessKey },
        });
      },
      async cleanup() {},
    },
    {
      name: "file (fdatasync)",
      async create() {
        const dir = await mkdtemp(join(tmpdir(), "actorstore-bench-file-"));
        dirs.push(dir);
        return openFilePersistence(dir);
      },
      async reopen(adapter) {
        const dir = (adapter as unknown as { directory: string }).directory;
        await adapter.close();
        return openFilePersistence(dir);
      },
      async cleanup() {
        for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
      },
    },
  ];
  const rows: S3BenchResult[] = [];
  try {
    for (const f of factories) {
      const commits = options.quick ? 100 : 300;
      const seconds = options.quick ? 1.5 : 3;
      const l = await latency(f, commits);
      const commitsPerSecond: Record<string, number> = {};
      for (const w of [1, 8, 64]) commitsPerSecond[w] = await throughput(f, w, seconds);
      const r = await recovery(f, 10_000);
      rows.push({
        adapter: f.name,
        p50Ms: l.p50,
        p99Ms: l.p99,
        commitsPerSecond,
        recoveryLoadMs: r.loadMs,
        recoveryOpenMs: r.openMs,
      });
      await f.cleanup();
    }
  } finally {
    await gateway.stop();
  }
  const f = (n: number, d = 1) => n.toLocaleString("en-US", { maximumFractionDigits: d });
  const markdown = [
    "| adapter | commit p50 (ms) | commit p99 (ms) | commits/s, 1 writer | 8 writers | 64 writers | load() after 10,000 commits (ms) | ObjectStorage.open (ms) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.adapter} | ${f(r.p50Ms, 2)} | ${f(r.p99Ms, 2)} | ${f(r.commitsPerSecond[1] ?? 0, 0)} | ${f(r.commitsPerSecond[8] ?? 0, 0)} | ${f(r.commitsPerSecond[64] ?? 0, 0)} | ${f(r.recoveryLoadMs, 0)} | ${f(r.recoveryOpenMs, 0)} |`,
    ),
  ].join("\n");
  return { rows, markdown };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { rows, markdown } = await runS3Bench({ quick: process.argv.includes("--quick") });
  console.log(markdown);
  const out = fileURLToPath(new URL("./results/", import.meta.url));
  await writeFile(join(out, "s3.json"), JSON.stringify({ date: new Date().toISOString(), rows }, null, 2));
  await writeFile(join(out, "s3.md"), `${markdown}\n`);
}
