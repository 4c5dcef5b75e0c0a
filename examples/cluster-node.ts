/**
 * One host of the cluster demo (examples/cluster-demo.ts starts two of these):
 *
 *   tsx examples/cluster-node.ts <id> <shared directory> <front port>
 *
 * It runs a ClusterHost over `<dir>/data` (a directory per object) with membership in `<dir>`, and a
 * small front server: `POST http://127.0.0.1:<front port>/rooms/<name>` appends a message to that room
 * (whichever host owns it) and answers `{ count, servedBy, via }`.
 */
import { createServer } from "node:http";
import { ClusterHost } from "../src/cluster/cluster-host";
import { DurableObject } from "../src/context/durable-object";
import { directoryPerObject } from "../src/host/options";

interface Env {
  HOST_ID: string;
}

/** A chat room: keeps a message count. */
export class Room extends DurableObject<Env> {
  async post(text: string): Promise<{ count: number; servedBy: string }> {
    const count = ((await this.ctx.storage.get<number>("count")) ?? 0) + 1;
    await this.ctx.storage.put({ count, [`message:${count}`]: text });
    return { count, servedBy: this.env.HOST_ID };
  }
}

const [id = "host-a", dir = ".actorstore-cluster", frontPort = "0"] = process.argv.slice(2);
const node = await ClusterHost.start({
  namespaces: { ROOMS: Room },
  env: { HOST_ID: id },
  persistence: directoryPerObject(`${dir}/data`),
  idleTimeoutMs: 2_000,
  cluster: { directory: dir, id, heartbeatMs: 200, ttlMs: 1_000 },
});

const front = createServer((req, res) => {
  const match = /^\/rooms\/([^/]+)$/.exec(req.url ?? "");
  if (req.method !== "POST" || match === null) {
    res.writeHead(404).end();
    return;
  }
  const name = decodeURIComponent(match[1] as string);
  node.env.ROOMS.getByName(name)
    .post(`hello from a client of ${id}`)
    .then(
      (r) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ...r, via: id })),
      (e: unknown) => res.writeHead(503).end(String((e as Error).message)),
    );
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
