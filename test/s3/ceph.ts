/**
 * The real S3 server for the adapter's tests: a single-node Ceph RADOS Gateway on loopback, started
 * once per test run on first use (test/setup/ceph-s3.ts stops it at the end). Installs Debian's
 * ceph-mon, ceph-osd, radosgw and ceph-common when they are missing (needs root and apt).
 *
 * ACTORSTORE_S3_ENDPOINT (with ACTORSTORE_S3_ACCESS_KEY / ACTORSTORE_S3_SECRET_KEY) points the tests
 * at a gateway that is already running instead; its bucket "objects" must exist.
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { AwsClient } from "aws4fetch";
import { inject } from "vitest";
import type { S3Target } from "./s3-harness";

const SCRIPT = resolve(import.meta.dirname, "../../scripts/ceph-s3.sh");
const run = promisify(execFile);

export interface CephServer extends S3Target {
  /** The gateway's working directory (for kill-gateway / restart-gateway); absent for an external one. */
  cephDir?: string;
}

/** Runs scripts/ceph-s3.sh with `command` for this run's Ceph. */
export async function cephScript(server: CephServer, command: string): Promise<void> {
  if (server.cephDir === undefined) throw new Error("This gateway was not started by the tests.");
  await run("bash", [SCRIPT, command], { env: { ...process.env, CEPH_DIR: server.cephDir }, timeout: 120_000 });
}

/** Runs radosgw-admin against this run's Ceph (for example to add or remove a user's keys). */
export async function radosgwAdmin(server: CephServer, args: string[]): Promise<void> {
  if (server.cephDir === undefined) throw new Error("This gateway was not started by the tests.");
  await run("radosgw-admin", ["-c", join(server.cephDir, "ceph.conf"), ...args], { timeout: 120_000 });
}

function installCeph(): void {
  if (spawnSync("sh", ["-c", "command -v radosgw && command -v ceph-mon && command -v ceph-osd"]).status === 0) return;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const packages = ["install", "-y", "--no-install-recommends", "ceph-mon", "ceph-osd", "radosgw", "ceph-common"];
  // Another apt run may hold the lock for a while: retry, refreshing the package lists once.
  for (let attempt = 0; attempt < 30; attempt++) {
    if (spawnSync("apt-get", packages, { env, stdio: "ignore" }).status === 0) return;
    if (attempt === 0) spawnSync("apt-get", ["update"], { env, stdio: "ignore" });
    else spawnSync("sleep", ["5"]);
  }
  throw new Error(
    "Could not install Ceph for the S3 tests: run `apt-get update && apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common` as root.",
  );
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const s = createServer();
    s.once("error", () => done(false));
    s.listen(port, "127.0.0.1", () => s.close(() => done(true)));
  });
}

async function freeBase(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const base = 30_000 + Math.floor(Math.random() * 300) * 100;
    const ports = [base, base + 1, base + 80, ...Array.from({ length: 40 }, (_, k) => base + 10 + k)];
    let ok = true;
    for (const p of ports) if (!(await portFree(p))) ok = false;
    if (ok) return base;
  }
  throw new Error("No free port range for Ceph.");
}

/** Whether the gateway's process (its pid file in `cephDir`) is alive. */
async function gatewayAlive(cephDir: string): Promise<boolean> {
  const pid = Number((await readFile(join(cephDir, "rgw.pid"), "utf8").catch(() => "")).trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Creates the bucket, waiting for the gateway to answer: by time, not by attempts (on a loaded
 * 2-core machine the gateway can take longer than its start script waits), and starting the
 * gateway once more if its process died without answering.
 */
async function createBucket(server: CephServer): Promise<void> {
  const aws = new AwsClient({
    accessKeyId: server.accessKeyId,
    secretAccessKey: server.secretAccessKey,
    service: "s3",
    region: "us-east-1",
    retries: 0,
  });
  const deadline = Date.now() + 180_000;
  let restarted = false;
  let last = "no answer";
  for (;;) {
    const r = await fetch(await aws.sign(`${server.endpoint}/${server.bucket}`, { method: "PUT" })).catch(
      (e: unknown) => {
        last = `no answer (${e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e)})`;
        return null;
      },
    );
    if (r !== null && (r.status === 200 || r.status === 409)) return;
    if (r !== null) last = `HTTP ${r.status}`;
    if (r === null && !restarted && server.cephDir !== undefined && !(await gatewayAlive(server.cephDir))) {
      restarted = true;
      await cephScript(server, "restart-gateway");
      continue;
    }
    if (Date.now() > deadline) throw new Error(`Creating the bucket failed: ${last}`);
    await new Promise((done) => setTimeout(done, 250));
  }
}

let started: Promise<CephServer> | undefined;

/** The gateway for this test run, started (once, across test files) on first call. */
export function ceph(): Promise<CephServer> {
  started ??= start();
  return started;
}

async function start(): Promise<CephServer> {
  const external = process.env.ACTORSTORE_S3_ENDPOINT;
  if (external !== undefined && external !== "")
    return {
      endpoint: external,
      bucket: "objects",
      accessKeyId: process.env.ACTORSTORE_S3_ACCESS_KEY ?? "AKTEST",
      secretAccessKey: process.env.ACTORSTORE_S3_SECRET_KEY ?? "SKTEST",
    };
  const runDir = inject("cephRunDir");
  const cephDir = join(runDir, "ceph");
  const ready = join(runDir, "ready.json");
  const lock = join(runDir, "starting");
  // One test file starts it; the others wait for its ready file.
  let owner = false;
  try {
    await mkdir(lock);
    owner = true;
  } catch {
    owner = false;
  }
  const failed = join(runDir, "failed.txt");
  if (owner) {
    try {
      return await startOwned(runDir, cephDir, ready);
    } catch (error) {
      await writeFile(failed, String(error));
      throw error;
    }
  }
  for (let i = 0; i < 3000 && !existsSync(ready); i++) {
    if (existsSync(failed)) throw new Error(`Starting Ceph failed: ${await readFile(failed, "utf8")}`);
    await new Promise((done) => setTimeout(done, 100));
  }
  return JSON.parse(await readFile(ready, "utf8")) as CephServer;
}

async function startOwned(runDir: string, cephDir: string, ready: string): Promise<CephServer> {
  {
    installCeph();
    const base = await freeBase();
    await run("bash", [SCRIPT, "start"], {
      env: { ...process.env, CEPH_DIR: cephDir, CEPH_PORT_BASE: String(base) },
      timeout: 240_000,
    });
    const server: CephServer = {
      endpoint: `http://127.0.0.1:${base + 80}`,
      bucket: "objects",
      accessKeyId: "AKTEST",
      secretAccessKey: "SKTEST",
      cephDir,
    };
    await createBucket(server);
    await writeFile(ready, JSON.stringify(server));
    void runDir;
    return server;
  }
}
