/**
 * Random kill / pause / drain schedules against a cluster of three hosts (separate processes) over a
 * shared bucket on the Ceph gateway, while clients write through random hosts. Afterwards: no
 * confirmed write is lost and no message number was confirmed twice (no two hosts confirmed writes
 * for one object), checked from the clients' records and from the bucket (claims and log epochs).
 *
 * The schedule is drawn from a seeded generator (ACTORSTORE_SCHEDULE_SEED, default below); timing
 * between processes is not deterministic, so a failure prints its seed and schedule.
 */
import { afterEach, describe, expect, test } from "vitest";
import type { DemoHost } from "../../examples/cluster-demo";
import {
  type BucketCluster,
  bucketOptions,
  type Confirmed,
  checkBucket,
  checkConfirmed,
  kill9,
  membersSettled,
  post,
  start,
  stats,
  stopAll,
} from "./bucket-harness";

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const clusters: BucketCluster[] = [];
afterEach(async () => {
  for (const c of clusters.splice(0)) await stopAll(c);
});

describe("cluster over a shared bucket: random kill / pause / drain schedules", () => {
  const seed = Number(process.env.ACTORSTORE_SCHEDULE_SEED ?? 20261123);
  const rounds = Number(process.env.ACTORSTORE_SCHEDULE_ROUNDS ?? 6);

  test(`seed ${seed}, ${rounds} rounds: no confirmed write lost, none confirmed twice`, async () => {
    const random = mulberry32(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const ids = ["host-a", "host-b", "host-c"];
    const c: BucketCluster = { options: await bucketOptions("schedule"), hosts: new Map() };
    clusters.push(c);
    await Promise.all(ids.map((id) => start(c, id)));
    await membersSettled(c, ids);

    const rooms = ["r0", "r1", "r2"];
    const confirmed: Confirmed[] = [];
    const paused = new Set<string>();
    let failures = 0;
    let stop = false;
    let sequence = 0;
    // Clients: each picks a host and a room at random (their own generator: the schedule's stays
    // independent of how many requests ran).
    const clientRandom = mulberry32(seed ^ 0x5eed);
    const client = async (n: number) => {
      while (!stop) {
        const id = ids[Math.floor(clientRandom() * ids.length)] as string;
        const host = c.hosts.get(id) as DemoHost;
        const room = rooms[Math.floor(clientRandom() * rooms.length)] as string;
        const r = await post(host, room, `client ${n} write ${++sequence}`, 12_000);
        if (r.ok) confirmed.push(r.confirmed);
        else failures++;
        await sleep(10);
      }
    };
    const clients = [client(1), client(2)];

    const schedule: string[] = [];
    // Every kind of fault at least once (in a seeded order), then random ones.
    const first: Array<"kill" | "pause" | "drain"> = ["kill", "pause", "drain"];
    for (let i = first.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [first[i], first[j]] = [first[j] as "kill", first[i] as "kill"];
    }
    try {
      for (let round = 0; round < rounds; round++) {
        await sleep(400 + Math.floor(random() * 400));
        const id = pick(ids);
        const host = c.hosts.get(id) as DemoHost;
        const action = first[round] ?? pick(["kill", "kill", "pause", "pause", "drain", "none"] as const);
        schedule.push(`${action} ${id}`);
        if (action === "kill") {
          await kill9(host);
          await sleep(200 + Math.floor(random() * 600));
          await start(c, id);
        } else if (action === "pause") {
          host.child.kill("SIGSTOP");
          paused.add(id);
          // Past the heartbeat ttl (1 s) most of the time: the others take its objects over.
          await sleep(700 + Math.floor(random() * 1_300));
          host.child.kill("SIGCONT");
          paused.delete(id);
        } else if (action === "drain") {
          const exit = new Promise((r) => host.child.once("exit", r));
          host.child.kill("SIGTERM");
          await exit;
          await start(c, id);
        }
      }
      await sleep(500);
    } finally {
      stop = true;
      await Promise.all(clients);
    }

    const context = `seed ${seed}, schedule: ${schedule.join(", ")}, ${confirmed.length} confirmed, ${failures} not`;
    const explain = (e: unknown) => {
      throw new Error(`${context}: ${(e as Error).message}`);
    };
    await membersSettled(c, ids).catch(explain);
    // Enough happened for the check to mean something.
    expect(confirmed.length, context).toBeGreaterThan(10);
    await checkConfirmed(c.hosts.get("host-a") as DemoHost, confirmed).catch(explain);
    const claims = await checkBucket(c.options).catch(explain);
    expect(claims.size, context).toBe(rooms.length);
    // Ownership moved at least once (some object was claimed again by another start).
    expect(Math.max(...claims.values()), context).toBeGreaterThan(1);
    const fenced = await Promise.all(ids.map(async (id) => (await stats(c.hosts.get(id) as DemoHost)).cluster.fenced));
    console.log(
      `${context}; claims per object: ${[...claims.values()].join(", ")}; fenced (hosts now running): ${fenced.join(", ")}`,
    );
  }, 120_000);
});
