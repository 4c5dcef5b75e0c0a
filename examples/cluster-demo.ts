/**
 * `npm run demo -- --cluster`: two hosts on loopback share a directory, requests go through both,
 * the owner of a room is killed (SIGKILL) and the room continues on the other host with every
 * confirmed message.
 *
 *   npm run demo -- --cluster               # in a fresh temporary directory
 *   npm run demo -- --cluster --dir /tmp/c  # elsewhere
 *   npm run demo -- --cluster --bucket '{"endpoint":"http://127.0.0.1:27480","bucket":"objects",
 *     "prefix":"demo/","credentials":{"accessKeyId":"…","secretAccessKey":"…"}}'
 *                                           # over a bucket (or ACTORSTORE_CLUSTER_BUCKET)
 *
 * The hosts are examples/cluster-node.ts in two child processes. Membership heartbeats every 200 ms
 * and a host counts as dead after 1 s without one.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

interface Ready {
  ready: string;
  front: number;
  forward: string;
  pid: number;
}

/** A host of the demo in its own process. */
export interface DemoHost {
  child: ChildProcess;
  ready: Ready;
}

/**
 * Starts examples/cluster-node.ts as host `id` over the shared directory `dir`, or over a bucket when
 * `bucket` is given (`{ endpoint, bucket, prefix, credentials }`).
 */
export function startHost(
  id: string,
  dir: string,
  bucket?: object,
  extraEnv: Record<string, string> = {},
): Promise<DemoHost> {
  const script = fileURLToPath(new URL("./cluster-node.ts", import.meta.url));
  const env = { ...process.env, ...extraEnv };
  if (bucket !== undefined) env.ACTORSTORE_CLUSTER_BUCKET = JSON.stringify(bucket);
  else delete env.ACTORSTORE_CLUSTER_BUCKET;
  const child = spawn(process.execPath, ["--import", "tsx", script, id, dir, "0"], {
    stdio: ["ignore", "pipe", "inherit"],
    env,
  });
  return new Promise((resolvePromise, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once("line", (line) => resolvePromise({ child, ready: JSON.parse(line) as Ready }));
    child.once("exit", (code) => reject(new Error(`${id} exited with ${code}`)));
  });
}

/** One POST to a host's front, without retrying: its status, JSON body (when 200) and text. */
export async function postOnce(
  port: number,
  room: string,
): Promise<{ status: number; body: { count?: number; servedBy?: string; via?: string }; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/rooms/${encodeURIComponent(room)}`, { method: "POST" });
  const text = await res.text();
  return { status: res.status, body: res.status === 200 ? JSON.parse(text) : {}, text };
}

/** Stops the hosts that still run (SIGTERM: they drain and exit) and waits for them. */
export async function stopHosts(hosts: readonly DemoHost[]): Promise<void> {
  // A child killed by a signal keeps exitCode null: check signalCode too.
  const running = hosts.filter((h) => h.child.exitCode === null && h.child.signalCode === null);
  const exits = running.map((h) => new Promise((r) => h.child.once("exit", r)));
  for (const h of running) {
    h.child.kill("SIGCONT");
    h.child.kill("SIGTERM");
  }
  await Promise.all(exits);
}

/**
 * Waits until every host's view of the members is all of them (`GET /stats`), so that each routes
 * a room to the same owner; over a bucket a host sees another only after reading its heartbeat.
 */
async function bothSeeEachOther(hosts: readonly DemoHost[]): Promise<void> {
  const ids = hosts
    .map((h) => h.ready.ready)
    .sort()
    .join(",");
  for (let attempt = 0; ; attempt++) {
    const views = await Promise.all(
      hosts.map(async (h) => {
        const res = await fetch(`http://127.0.0.1:${h.ready.front}/stats`);
        return ((await res.json()) as { live: string[] }).live.join(",");
      }),
    );
    if (views.every((v) => v === ids)) return;
    if (attempt >= 300) throw new Error(`the hosts did not see each other: ${views.join(" / ")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function post(port: number, room: string): Promise<{ count: number; servedBy: string; via: string }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`http://127.0.0.1:${port}/rooms/${encodeURIComponent(room)}`, { method: "POST" });
    if (res.ok) return (await res.json()) as { count: number; servedBy: string; via: string };
    // While membership settles after a death (the dead host's heartbeat must expire first), a host
    // may have no answer for a while: retry, for at most 30 s.
    if (Date.now() >= deadline) throw new Error(`${res.status} ${await res.text()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Settings of the demo's hosts (examples/cluster-node.ts reads them from its environment). */
export interface ClusterDemoHosts {
  /** How long a member's heartbeat may stay unchanged before the others count it dead (default 1,000 ms). */
  ttlMs?: number;
  /** The idle time before a host evicts an object (default 2,000 ms). */
  idleMs?: number;
}

/**
 * Runs the cluster demo, printing a transcript: over a shared directory, or over a bucket when
 * `bucket` (`{ endpoint, bucket, prefix, credentials }`) is given. `settings` changes the hosts'
 * membership and idle times (tests on a loaded machine give a member longer before it counts as dead,
 * so a host that a slow turn delayed is not dropped and the rooms keep one owner).
 */
export async function runClusterDemo(
  directory: string | undefined,
  print: (line: string) => void,
  bucket?: { endpoint: string; bucket: string; prefix?: string },
  settings: ClusterDemoHosts = {},
): Promise<void> {
  const dir = directory ?? (await mkdtemp(join(tmpdir(), "actorstore-cluster-demo-")));
  const env: Record<string, string> = {};
  if (settings.ttlMs !== undefined) env.ACTORSTORE_TTL_MS = String(settings.ttlMs);
  if (settings.idleMs !== undefined) env.ACTORSTORE_IDLE_MS = String(settings.idleMs);
  const hosts = await Promise.all([startHost("host-a", dir, bucket, env), startHost("host-b", dir, bucket, env)]);
  try {
    print(
      bucket === undefined
        ? `two hosts share ${dir}:`
        : `two hosts share the bucket ${bucket.endpoint}/${bucket.bucket}/${bucket.prefix ?? ""}:`,
    );
    for (const h of hosts)
      print(`  ${h.ready.ready}  pid ${h.ready.pid}  front :${h.ready.front}  forwarding ${h.ready.forward}`);
    await bothSeeEachOther(hosts);
    const rooms = ["lobby", "kitchen", "garden", "attic"];
    const owners = new Map<string, string>();
    for (const room of rooms) {
      for (const h of hosts) {
        const r = await post(h.ready.front, room);
        owners.set(room, r.servedBy);
        print(`  POST /rooms/${room} via ${r.via}: message ${r.count}, served by ${r.servedBy}`);
      }
    }
    const victimId = owners.get("lobby") as string;
    const victim = hosts.find((h) => h.ready.ready === victimId) as (typeof hosts)[number];
    const survivor = hosts.find((h) => h !== victim) as (typeof hosts)[number];
    print(`kill -9 ${victimId} (pid ${victim.ready.pid}), the owner of "lobby"`);
    victim.child.kill("SIGKILL");
    await new Promise((r) => victim.child.once("exit", r));
    const started = Date.now();
    const r = await post(survivor.ready.front, "lobby");
    print(
      `  POST /rooms/lobby via ${r.via}: message ${r.count}, served by ${r.servedBy} (${Date.now() - started} ms after the kill: the dead host's heartbeat had to expire)`,
    );
    if (r.count !== 3) throw new Error(`expected message 3 in lobby, got ${r.count}: a confirmed write was lost`);
    for (const room of rooms.slice(1)) {
      const again = await post(survivor.ready.front, room);
      print(`  POST /rooms/${room} via ${again.via}: message ${again.count}, served by ${again.servedBy}`);
    }
    print("every confirmed message survived the kill.");
  } finally {
    await stopHosts(hosts);
    if (directory === undefined) await rm(dir, { recursive: true, force: true });
  }
}

/** `--bucket '<json>'`, or ACTORSTORE_CLUSTER_BUCKET: `{ endpoint, bucket, prefix, credentials }`. */
export function bucketArgument(
  argv: readonly string[],
): { endpoint: string; bucket: string; prefix?: string } | undefined {
  const i = argv.indexOf("--bucket");
  const text = i >= 0 ? argv[i + 1] : process.env.ACTORSTORE_CLUSTER_BUCKET;
  return text ? (JSON.parse(text) as { endpoint: string; bucket: string; prefix?: string }) : undefined;
}

const isMain = import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("cluster-demo.ts");
if (isMain) {
  const argv = process.argv.slice(2);
  const i = argv.indexOf("--dir");
  runClusterDemo(
    i >= 0 && argv[i + 1] ? resolve(argv[i + 1] as string) : undefined,
    (line) => console.log(line),
    bucketArgument(argv),
  ).catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
