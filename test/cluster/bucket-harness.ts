/**
 * Helpers for the cluster tests over a shared bucket (the real Ceph gateway): hosts in separate
 * processes (examples/cluster-node.ts), clients that keep a record of what was confirmed, and the
 * checks made afterwards against those records and against the bucket itself.
 */
import { request } from "node:http";
import { expect } from "vitest";
import { type DemoHost, startHost } from "../../examples/cluster-demo";
import { resolveS3Options } from "../../src/s3/options";
import { S3Client } from "../../src/s3/s3-client";
import { S3Layout } from "../../src/s3/s3-layout";
import { ceph } from "../s3/ceph";

export interface BucketCluster {
  options: {
    endpoint: string;
    bucket: string;
    prefix: string;
    credentials: { accessKeyId: string; secretAccessKey: string };
  };
  hosts: Map<string, DemoHost>;
  /** More environment for the host processes (ACTORSTORE_IDLE_MS). */
  env?: Record<string, string>;
}

let counter = 0;

/** A fresh cluster prefix on the run's Ceph gateway. */
export async function bucketOptions(label: string): Promise<BucketCluster["options"]> {
  const server = await ceph();
  counter++;
  return {
    endpoint: server.endpoint,
    bucket: server.bucket,
    prefix: `cluster-${label}-${process.pid}-${Date.now().toString(36)}-${counter}/`,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  };
}

/** Starts (or restarts) host `id` of the cluster in its own process. */
export async function start(cluster: BucketCluster, id: string): Promise<DemoHost> {
  const host = await startHost(id, "/nonexistent-unused", cluster.options, cluster.env ?? {});
  cluster.hosts.set(id, host);
  return host;
}

/** Real-time polling of a condition, for things that happen in other processes. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface Stats {
  host: { live: number; sleeping: number; starts: number; alarmWakes: number };
  cluster: { forwarded: number; served: number; fenced: number };
  live: string[];
}

export async function stats(host: DemoHost): Promise<Stats> {
  const res = await fetch(`http://127.0.0.1:${host.ready.front}/stats`, { signal: AbortSignal.timeout(5_000) });
  return (await res.json()) as Stats;
}

/** Every running host sees exactly `ids` as the live members. */
export async function membersSettled(cluster: BucketCluster, ids: string[]): Promise<void> {
  const want = [...ids].sort().join(",");
  await until(`members ${want}`, async () => {
    for (const id of ids) {
      const s = await stats(cluster.hosts.get(id) as DemoHost);
      if (s.live.join(",") !== want) return undefined;
    }
    return true;
  });
}

export interface Confirmed {
  room: string;
  count: number;
  text: string;
  servedBy: string;
}

/**
 * One POST without retrying: the confirmed write, or the failure (not confirmed: it may or may not
 * have run). With `newConnection`, it goes over a connection of its own instead of one fetch keeps
 * open: a request sent to a stopped host over a kept connection is lost when the host resumes (Node's
 * server closes a connection idle past its keep-alive timeout before it reads what arrived meanwhile,
 * and the client sees the connection reset), while a new connection waits in the host's accept queue.
 */
export async function post(
  host: DemoHost,
  room: string,
  text: string,
  timeoutMs = 15_000,
  newConnection = false,
): Promise<{ ok: true; confirmed: Confirmed } | { ok: false; status: number; text: string }> {
  const url = `http://127.0.0.1:${host.ready.front}/rooms/${encodeURIComponent(room)}`;
  try {
    const res = newConnection
      ? await postOnNewConnection(url, text, timeoutMs)
      : await fetch(url, { method: "POST", body: text, signal: AbortSignal.timeout(timeoutMs) }).then(async (r) => ({
          status: r.status,
          body: await r.text(),
        }));
    if (res.status !== 200) return { ok: false, status: res.status, text: res.body };
    const r = JSON.parse(res.body) as { count: number; servedBy: string };
    return { ok: true, confirmed: { room, count: r.count, text, servedBy: r.servedBy } };
  } catch (e) {
    // fetch's own message ("fetch failed") hides why: the cause says what the connection did.
    const cause = (e as { cause?: unknown }).cause;
    return { ok: false, status: 0, text: cause === undefined ? String(e) : `${String(e)} (${String(cause)})` };
  }
}

function postOnNewConnection(url: string, body: string, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent: false, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** POSTs until one is confirmed (for steps that need a write to land). */
export async function postUntilConfirmed(host: DemoHost, room: string, text: string): Promise<Confirmed> {
  return until(`a confirmed write to ${room}`, async () => {
    const r = await post(host, room, `${text}#${Date.now()}`);
    if (!r.ok) throw new Error(`${r.status} ${r.text}`);
    return r.confirmed;
  });
}

/** Every message of a room, read through `host` (retried while membership settles). */
export async function messages(
  host: DemoHost,
  room: string,
): Promise<Record<string, { text: string; servedBy: string }>> {
  return until(`the messages of ${room}`, async () => {
    const res = await fetch(`http://127.0.0.1:${host.ready.front}/rooms/${encodeURIComponent(room)}/messages`, {
      signal: AbortSignal.timeout(15_000),
    });
    return res.status === 200 ? ((await res.json()) as Record<string, { text: string; servedBy: string }>) : undefined;
  });
}

/**
 * No confirmed write lost and no two hosts confirmed writes for one object: every confirmed write is
 * in its room with the text its client sent, and no message number was confirmed twice.
 */
export async function checkConfirmed(host: DemoHost, confirmed: readonly Confirmed[]): Promise<void> {
  const seen = new Map<string, Confirmed>();
  for (const c of confirmed) {
    const key = `${c.room}#${c.count}`;
    const other = seen.get(key);
    expect(other, `message ${c.count} of ${c.room} confirmed twice (by ${other?.servedBy} and ${c.servedBy})`).toBe(
      undefined,
    );
    seen.set(key, c);
  }
  for (const room of new Set(confirmed.map((c) => c.room))) {
    const stored = await messages(host, room);
    for (const c of confirmed.filter((x) => x.room === room)) {
      expect(stored[String(c.count)], `confirmed message ${c.count} of ${room} (by ${c.servedBy})`).toEqual({
        text: c.text,
        servedBy: c.servedBy,
      });
    }
  }
}

/**
 * Straight from the bucket, for every object of the cluster: claims are numbered 1..n without gaps,
 * log objects' epochs never decrease along the log, and each is at most the newest claim. Returns how
 * many claims each object has.
 */
export async function checkBucket(options: BucketCluster["options"]): Promise<Map<string, number>> {
  const base = { ...options, region: "us-east-1" };
  const root = new S3Client(resolveS3Options({ ...base, prefix: options.prefix }));
  const keys = await root.list(`${options.prefix}objects/`);
  const objects = new Set<string>();
  for (const key of keys) {
    const m = /^(.*objects\/[^/]+\/[0-9a-f]{64}\/)/.exec(key);
    if (m !== null) objects.add(m[1] as string);
  }
  const claimsOf = new Map<string, number>();
  for (const prefix of objects) {
    const layout = new S3Layout(prefix);
    const claims = (await root.list(layout.claims)).map((k) => layout.number(layout.claims, k));
    expect(claims, `claims of ${prefix}`).toEqual(claims.map((_, i) => i + 1));
    let previous = 0;
    for (const key of await root.list(layout.logs)) {
      const found = await root.get(key);
      if (found === null) continue; // compacted meanwhile
      const epoch = Number(found.meta.epoch);
      expect(epoch, key).toBeGreaterThanOrEqual(previous);
      expect(epoch, key).toBeLessThanOrEqual(claims.length);
      previous = epoch;
    }
    claimsOf.set(prefix, claims.length);
  }
  return claimsOf;
}

/** Stops every host that still runs (SIGCONT, then SIGTERM: they drain and exit). */
export async function stopAll(cluster: BucketCluster): Promise<void> {
  const running = [...cluster.hosts.values()].filter((h) => h.child.exitCode === null && h.child.signalCode === null);
  const exits = running.map((h) => new Promise((r) => h.child.once("exit", r)));
  for (const h of running) {
    h.child.kill("SIGCONT");
    h.child.kill("SIGTERM");
  }
  const timer = setTimeout(() => {
    for (const h of running) if (h.child.exitCode === null) h.child.kill("SIGKILL");
  }, 15_000);
  await Promise.all(exits);
  clearTimeout(timer);
}

/** kill -9, and wait for the exit. */
export async function kill9(host: DemoHost): Promise<void> {
  const exit = new Promise((r) => host.child.once("exit", r));
  host.child.kill("SIGKILL");
  await exit;
}
