/**
 * A cluster with many objects, in one process (`npx tsx bench/cluster-scale.ts [dir|s3] [objects]`):
 * three hosts over a shared directory or over the test kit's in-process S3 (test/s3/fake-s3.ts),
 * membership on a fake clock (beats by hand), every object started once, one in ten with an alarm.
 *
 * - a host dies: how long until the survivors have re-read the members and planned the dead host's
 *   alarms (the hand-over of its objects), and the backend requests that took;
 * - a host joins: how long until the others have evicted what moved to it, and the requests;
 * - a host leaves (`drain()`): how long until it has evicted everything;
 * - the set of objects a host lost to a newer holder, over many pause / resume rounds.
 *
 * Wall times depend on the machine's load; request counts do not.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterHost } from "../src/cluster/cluster-host";
import { DurableObject } from "../src/context/durable-object";
import { directoryPerObject } from "../src/host/options";
import { FakeClock } from "../src/util/clock";
import { FakeS3 } from "../test/s3/fake-s3";

class Counter extends DurableObject {
  async increment(alarmAtMs: number | null): Promise<number> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    if (alarmAtMs !== null) await this.ctx.storage.setAlarm(alarmAtMs);
    return n;
  }
  override async alarm(): Promise<void> {}
}

type Node = ClusterHost<{ COUNTER: typeof Counter }>;
const mode = (process.argv[2] ?? "s3") as "dir" | "s3";
const N = Number(process.argv[3] ?? 1000);
const clock = new FakeClock(Date.UTC(2026, 0, 1));
const s3 = mode === "s3" ? await FakeS3.start() : undefined;
const root = await mkdtemp(join(tmpdir(), "cluster-scale-"));
const credentials = { accessKeyId: "AKFAKE", secretAccessKey: "not-a-real-secret" };

async function startNode(id: string): Promise<Node> {
  return ClusterHost.start({
    namespaces: { COUNTER: Counter },
    clock,
    idleTimeoutMs: Number.POSITIVE_INFINITY,
    ...(mode === "dir" ? { persistence: directoryPerObject(join(root, "data")) } : {}),
    cluster: {
      id,
      ...(mode === "dir"
        ? { directory: join(root, "cluster") }
        : { bucket: { endpoint: (s3 as FakeS3).endpoint, bucket: "objects", prefix: "scale/", credentials } }),
      heartbeatMs: 1_000,
      ttlMs: 3_000,
    },
  });
}

async function pool<T>(items: readonly T[], width: number, run: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await run(items[next++] as T);
    }),
  );
}

async function measure(what: string, run: () => Promise<void>): Promise<void> {
  const before = s3?.log.length ?? 0;
  const t0 = performance.now();
  await run();
  const ms = performance.now() - t0;
  const counts = new Map<string, number>();
  for (const r of s3?.log.slice(before) ?? []) {
    const area = r.op === "LIST" ? "list" : (/^scale\/([a-z]+)\//.exec(r.key)?.[1] ?? "other");
    const k = `${r.op} ${area}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const detail = [...counts].map(([k, v]) => `${k}=${v}`).join(" ");
  console.log(`${what}: ${ms.toFixed(0)} ms${s3 ? `, ${total} requests (${detail})` : ""}`);
}

async function beatAll(nodes: Node[]): Promise<void> {
  for (const n of nodes) await n.membership.beat();
  await Promise.all(nodes.map((n) => n.settled()));
}

const names = Array.from({ length: N }, (_, i) => `o-${i}`);
const a = await startNode("host-a");
const b = await startNode("host-b");
const c = await startNode("host-c");
await beatAll([a, b, c]);
console.log(`${mode}, ${N} objects, one in ten with an alarm; live ${a.membership.live().join(",")}`);
const t0 = performance.now();
await pool(names, 16, async (name) => {
  const owner = [a, b, c].find((n) => n.id === a.ownerOf("COUNTER", a.env.COUNTER.idFromName(name))) as Node;
  const i = Number(name.slice(2));
  await owner.env.COUNTER.getByName(name).increment(i % 10 === 0 ? clock.now() + 3_600_000 : null);
});
console.log(
  `started ${N} objects in ${(performance.now() - t0).toFixed(0)} ms; held a=${a.host.stats().live} b=${b.host.stats().live} c=${c.host.stats().live}`,
);

// A heartbeat with no change: what a quiet membership costs.
await clock.advance(1_000);
await measure("one heartbeat of each host, no change", () => beatAll([a, b, c]));

// c dies; past the ttl a and b see it gone and take over its objects' alarms.
const cHeld = c.host.stats().live;
await c.crashForTest();
await clock.advance(1_000);
await beatAll([a, b]); // they see c's last heartbeat
await clock.advance(3_001);
await measure(`c dies (held ${cHeld}): a and b re-read the members and plan its alarms`, () => beatAll([a, b]));
console.log(`  planned wake-ups: a=${a.host.stats().sleeping} b=${b.host.stats().sleeping}`);

// d joins: a and b evict what moved to d.
const d = await startNode("host-d");
await measure("d joins: a and b evict what moved to it", () => beatAll([a, b, d]));

// b leaves (drain): it evicts everything it holds.
const bHeld = b.host.stats().live;
await measure(`b drains (held ${bHeld})`, () => b.drain());
await measure("a and d see b gone", () => beatAll([a, d]));

// The lost set: a is paused past the ttl in each round; d takes a batch of a's objects; a resumes,
// is fenced on each (its events go to d), and d hands the objects back when it sees a again.
if (mode === "s3") {
  const mine = names.filter((n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-a");
  const batch = Math.max(1, Math.floor(mine.length / 16));
  for (let round = 0; round < 16; round++) {
    const objects = mine.slice(round * batch, (round + 1) * batch);
    await pool(objects, 16, (n) => a.env.COUNTER.getByName(n).increment(null));
    a.membership.stop();
    await clock.advance(3_001);
    await beatAll([d]);
    await pool(objects, 16, (n) => d.env.COUNTER.getByName(n).increment(null));
    await pool(objects, 16, (n) => a.env.COUNTER.getByName(n).increment(null));
    await a.membership.join();
    await clock.advance(1_000);
    await beatAll([a, d]);
    const heap = process.memoryUsage().heapUsed / 2 ** 20;
    const lost = a.stats().lost;
    console.log(
      `lost-set round ${round + 1}: fenced ${a.stats().fenced}, lost set ${lost ?? "?"}, heap ${heap.toFixed(0)} MiB`,
    );
  }
}

await Promise.all([a, d].map((n) => n.close()));
await b.close();
await s3?.close();
await rm(root, { recursive: true, force: true });
