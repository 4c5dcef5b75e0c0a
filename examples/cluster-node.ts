/**
 * One host of the cluster demo (examples/cluster-demo.ts starts two of these):
 *
 *   tsx examples/cluster-node.ts <id> <shared directory> <front port>
 *
 * It runs a ClusterHost with membership in `<dir>` and a directory per object under `<dir>/data`, or,
 * when the environment variable ACTORSTORE_CLUSTER_BUCKET holds `{ endpoint, bucket, prefix,
 * credentials }` (JSON), over that bucket: membership, holders, the alarm index and every object's data
 * (the S3 adapter, with its fencing). ACTORSTORE_IDLE_MS sets the idle time before an object is
 * evicted (default 2,000 ms), ACTORSTORE_TTL_MS how long a member's heartbeat may stay unchanged
 * before the others count it dead (default 1,000 ms; heartbeats every 200 ms). A small front server:
 *
 *   POST /rooms/<name>            appends a message (the body's text) to that room, whichever host owns
 *                                 it, and answers `{ count, servedBy, via }`
 *   GET  /rooms/<name>/messages   `{ "<count>": { text, servedBy } }`, every message the room has
 *   POST /rooms/<name>/alarm?at=  sets the room's alarm (ms since the epoch)
 *   GET  /rooms/<name>/alarm      `{ firedBy, firedAtMs }` of the last alarm that ran, or null
 *   GET  /stats                   the host's and the cluster's counters and its view of the members
 */
import { createServer } from "node:http";
import { ClusterHost } from "../src/cluster/cluster-host";
import { DurableObject } from "../src/context/durable-object";
import { directoryPerObject } from "../src/host/options";

interface Env {
  HOST_ID: string;
}

/** A chat room: numbered messages. */
export class Room extends DurableObject<Env> {
  async post(text: string): Promise<{ count: number; servedBy: string }> {
    const count = ((await this.ctx.storage.get<number>("count")) ?? 0) + 1;
    await this.ctx.storage.put({ count, [`message:${count}`]: { text, servedBy: this.env.HOST_ID } });
    return { count, servedBy: this.env.HOST_ID };
  }
  async messages(): Promise<Record<string, { text: string; servedBy: string }>> {
    const out: Record<string, { text: string; servedBy: string }> = {};
    for (const [key, value] of await this.ctx.storage.list<{ text: string; servedBy: string }>({ prefix: "message:" }))
      out[key.slice(8)] = value;
    return out;
  }
  async armAt(ms: number): Promise<void> {
    await this.ctx.storage.setAlarm(ms);
  }
  override async alarm(): Promise<void> {
    await this.ctx.storage.put("alarm", { firedBy: this.env.HOST_ID, firedAtMs: Date.now() });
  }
  async lastAlarm(): Promise<{ firedBy: string; firedAtMs: number } | null> {
    return (await this.ctx.storage.get<{ firedBy: string; firedAtMs: number }>("alarm")) ?? null;
  }
}

const [id = "host-a", dir = ".actorstore-cluster", frontPort = "0"] = process.argv.slice(2);
const bucketJson = process.env.ACTORSTORE_CLUSTER_BUCKET;
const bucket = bucketJson ? JSON.parse(bucketJson) : undefined;
const node = await ClusterHost.start({
  namespaces: { ROOMS: Room },
  env: { HOST_ID: id },
  ...(bucket === undefined ? { persistence: directoryPerObject(`${dir}/data`) } : {}),
  idleTimeoutMs: Number(process.env.ACTORSTORE_IDLE_MS ?? 2_000),
  cluster: {
    ...(bucket === undefined ? { directory: dir } : { bucket }),
    id,
    heartbeatMs: 200,
    ttlMs: Number(process.env.ACTORSTORE_TTL_MS ?? 1_000),
    forwardTimeoutMs: 10_000,
  },
});

const json = (res: import("node:http").ServerResponse, value: unknown) =>
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));

const front = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://front");
  if (req.method === "GET" && url.pathname === "/stats") {
    json(res, { host: node.host.stats(), cluster: node.stats(), live: node.membership.live() });
    return;
  }
  const match = /^\/rooms\/([^/]+)(\/messages|\/alarm)?$/.exec(url.pathname);
  if (match === null) {
    res.writeHead(404).end();
    return;
  }
  const room = node.env.ROOMS.getByName(decodeURIComponent(match[1] as string));
  const fail = (e: unknown) => {
    const error = e as { code?: string; message?: string };
    res.writeHead(503).end(`${error.code ?? "Error"}: ${error.message ?? String(e)}`);
  };
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    if (req.method === "POST" && match[2] === undefined) {
      room.post(body || `hello from a client of ${id}`).then((r) => json(res, { ...r, via: id }), fail);
    } else if (req.method === "GET" && match[2] === "/messages") {
      room.messages().then((m) => json(res, m), fail);
    } else if (req.method === "POST" && match[2] === "/alarm") {
      room.armAt(Number(url.searchParams.get("at"))).then(() => json(res, { ok: true }), fail);
    } else if (req.method === "GET" && match[2] === "/alarm") {
      room.lastAlarm().then((a) => json(res, a), fail);
    } else res.writeHead(404).end();
  });
});
front.listen(Number(frontPort), "127.0.0.1", () => {
  const address = front.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ ready: id, front: port, forward: node.address, pid: process.pid })}\n`);
});

const stop = async () => {
  await node.drain();
  await node.close();
  front.close();
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
