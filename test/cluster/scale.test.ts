/**
 * A cluster with many objects, counted rather than timed (bench/cluster-scale.ts measures it):
 * objects handed over a bounded number at a time, the alarm index read only for what a host gained
 * and only where it changed, and the set of lost objects bounded in time. Safety stays as it was:
 * every alarm still runs once, on one host.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { bucketAlarmIndex, ClusterBucket } from "../../src/cluster/bucket";
import { ClusterHost } from "../../src/cluster/cluster-host";
import { HAND_OVER_WIDTH } from "../../src/cluster/hand-over";
import { DurableObject } from "../../src/context/durable-object";
import { MemoryPersistence } from "../../src/durability/memory-persistence";
import { FakeClock } from "../../src/util/clock";
import { FakeS3 } from "../s3/fake-s3";

interface Env {
  HOST_ID: string;
}

const alarmRuns: Array<{ name: string | undefined; host: string }> = [];

class Counter extends DurableObject<Env> {
  async increment(alarmAtMs: number | null = null): Promise<{ n: number; servedBy: string }> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    if (alarmAtMs !== null) await this.ctx.storage.setAlarm(alarmAtMs);
    return { n, servedBy: this.env.HOST_ID };
  }
  override async alarm(): Promise<void> {
    alarmRuns.push({ name: this.ctx.id.name, host: this.env.HOST_ID });
  }
}

type Node = ClusterHost<{ COUNTER: typeof Counter }, Env>;
const credentials = { accessKeyId: "AKFAKE", secretAccessKey: "not-a-real-secret" };
let s3: FakeS3;
let clock: FakeClock;
const nodes: Node[] = [];

beforeEach(async () => {
  s3 = await FakeS3.start();
  clock = new FakeClock(Date.UTC(2026, 0, 1));
});
afterEach(async () => {
  alarmRuns.length = 0;
  await Promise.all(nodes.splice(0).map((n) => n.close().catch(() => {})));
  await s3.close();
});

async function startNode(id: string): Promise<Node> {
  const node = await ClusterHost.start({
    namespaces: { COUNTER: Counter },
    env: { HOST_ID: id },
    clock,
    idleTimeoutMs: Number.POSITIVE_INFINITY,
    cluster: {
      id,
      bucket: { endpoint: s3.endpoint, bucket: "objects", prefix: "scale/", credentials },
      heartbeatMs: 1_000,
      ttlMs: 3_000,
    },
  });
  nodes.push(node);
  return node;
}

async function beatAll(list: Node[]): Promise<void> {
  for (const n of list) await n.membership.beat();
  for (const n of list) await n.settled();
}

/** Reads of alarm index entries since `from` (an index into the fake's log). */
function indexReads(from: number): number {
  return s3.log.slice(from).filter((r) => r.op === "GET" && r.key.startsWith("scale/alarms/")).length;
}

describe("a cluster with many objects", () => {
  test("a host that leaves evicts its objects a bounded number at a time, not one after the other", async () => {
    const root = await mkdtemp(join(tmpdir(), "cluster-scale-"));
    let closing = 0;
    let most = 0;
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reached: () => void = () => {};
    const widthReached = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const node = await ClusterHost.start({
      namespaces: { COUNTER: Counter },
      env: { HOST_ID: "host-a" },
      clock,
      idleTimeoutMs: Number.POSITIVE_INFINITY,
      alarmIndex: false,
      persistence: () => {
        const adapter = new MemoryPersistence();
        return new Proxy(adapter, {
          get(target, property) {
            if (property === "close")
              return async () => {
                closing++;
                most = Math.max(most, closing);
                if (closing >= HAND_OVER_WIDTH) reached();
                await released;
                closing--;
                await target.close();
              };
            const value = Reflect.get(target, property, target) as unknown;
            return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
          },
        });
      },
      cluster: { id: "host-a", directory: root, heartbeatMs: 1_000, ttlMs: 3_000 },
    });
    try {
      const count = 3 * HAND_OVER_WIDTH;
      for (let i = 0; i < count; i++) await node.env.COUNTER.getByName(`o-${i}`).increment();
      expect(node.host.stats().live).toBe(count);
      const drained = node.drain();
      // Every close is held: the hand-over has as many under way as it starts before waiting (one
      // at a time, this never happens and the test times out). Waited for as an event, not a number
      // of turns: leaving the membership writes to the directory first, which takes real time.
      await widthReached;
      for (let i = 0; i < 100; i++) await new Promise((r) => setImmediate(r));
      expect(closing).toBe(HAND_OVER_WIDTH);
      release();
      await drained;
      expect(most).toBe(HAND_OVER_WIDTH);
      expect(node.host.stats().live).toBe(0);
    } finally {
      release();
      await node.close();
      await rm(root, { recursive: true, force: true });
    }
  });

  test("the alarm index is read only for the objects a host gained, and each entry only once; every alarm still runs once", async () => {
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    const c = await startNode("host-c");
    await beatAll([a, b, c]);
    const names = Array.from({ length: 24 }, (_, i) => `al-${i}`);
    const due = clock.now() + 60_000;
    const owners = new Map<string, string>();
    for (const name of names) {
      const r = await a.env.COUNTER.getByName(name).increment(due);
      owners.set(name, r.servedBy);
    }
    expect(new Set(owners.values())).toEqual(new Set(["host-a", "host-b", "host-c"]));

    // d joins: only d gains objects, so only d reads the index, and only the entries it owns.
    let mark = s3.log.length;
    const d = await startNode("host-d");
    await beatAll([a, b, c, d]);
    const dOwns = names.filter((n) => d.ownerOf("COUNTER", d.env.COUNTER.idFromName(n)) === "host-d");
    expect(dOwns.length).toBeGreaterThan(0);
    expect(indexReads(mark)).toBe(dOwns.length);

    // c dies: a and b read the entries of what they own now (they had not read the index since
    // before the alarms were set), d only those of c's objects it gains: no entry twice.
    mark = s3.log.length;
    await c.crashForTest();
    await clock.advance(1_000);
    await beatAll([a, b, d]);
    await clock.advance(3_001);
    await beatAll([a, b, d]);
    expect(a.membership.live()).toEqual(["host-a", "host-b", "host-d"]);
    const ownerNow = (n: string) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n));
    const gainedByD = names.filter(
      (n) => owners.get(n) === "host-c" && ownerNow(n) === "host-d" && !dOwns.includes(n),
    ).length;
    const ownedByAB = names.filter((n) => ownerNow(n) !== "host-d").length;
    expect(indexReads(mark)).toBe(ownedByAB + gainedByD);

    // d leaves: a and b read only the entries of d's objects, the rest they read already.
    const ofD = names.filter((n) => ownerNow(n) === "host-d").length;
    expect(ofD).toBeGreaterThan(0);
    mark = s3.log.length;
    await d.drain();
    await beatAll([a, b]);
    expect(a.membership.live()).toEqual(["host-a", "host-b"]);
    expect(indexReads(mark)).toBe(ofD);

    // Every alarm runs once when due, c's and d's ones on their new owners. Time moves a heartbeat
    // at a time, each beat awaited: one 60 s jump fires every heartbeat timer at once while their
    // writes to the (real-time) fake S3 are still under way, so a host could read the other's record
    // as expired, take its objects for a moment and run one of their alarms (the CI on effd312).
    for (let s = 0; s < 60; s++) {
      await clock.advance(1_000);
      await beatAll([a, b]);
    }
    expect(a.membership.live()).toEqual(["host-a", "host-b"]);
    // The wake-ups start objects over the (real-time) fake S3: wait for them in real time.
    const deadline = performance.now() + 60_000;
    while (alarmRuns.length < names.length && performance.now() < deadline) {
      await Promise.all([a, b].map((n) => n.settled()));
      await clock.advance(1); // a woken object arms its past-due alarm on the (fake) clock
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(alarmRuns.map((r) => r.name).sort()).toEqual([...names].sort());
    expect(a.membership.live()).toEqual(["host-a", "host-b"]);
    for (const run of alarmRuns) expect(run.host).toBe(a.ownerOf("COUNTER", a.env.COUNTER.idFromName(run.name ?? "")));
  }, 120_000);

  test("the bucket's alarm index reads an entry again only when it changed, and only the wanted ones", async () => {
    const bucket = new ClusterBucket({ endpoint: s3.endpoint, bucket: "objects", prefix: "index/", credentials });
    const index = bucketAlarmIndex(bucket);
    const ids = Array.from({ length: 6 }, (_, i) => String(i).repeat(64));
    for (const [i, id] of ids.entries()) await index.set("NS", { id, name: `n${i}` }, 1_000 + i);
    const gets = () => s3.log.filter((r) => r.op === "GET" && r.key.startsWith("index/alarms/")).length;
    const byId = (entries: Array<{ id: string; atMs: number }>) =>
      Object.fromEntries(entries.map((e) => [e.id.slice(0, 1), e.atMs]));

    let before = gets();
    expect(byId(await index.list("NS"))).toEqual({ 0: 1000, 1: 1001, 2: 1002, 3: 1003, 4: 1004, 5: 1005 });
    expect(gets() - before).toBe(6);
    before = gets();
    expect(byId(await index.list("NS"))).toEqual({ 0: 1000, 1: 1001, 2: 1002, 3: 1003, 4: 1004, 5: 1005 });
    expect(gets() - before).toBe(0);

    // A rewritten entry is read again (with its new time), a deleted one is gone, a new one read.
    await index.set("NS", { id: ids[2] as string }, 5_000);
    await index.set("NS", { id: ids[4] as string }, null);
    await index.set("NS", { id: "7".repeat(64) }, 7_000);
    before = gets();
    expect(byId(await index.list("NS"))).toEqual({ 0: 1000, 1: 1001, 2: 5000, 3: 1003, 5: 1005, 7: 7000 });
    expect(gets() - before).toBe(2);

    // Only the wanted entries are read; one not wanted before is read when it is wanted.
    const fresh = bucketAlarmIndex(bucket);
    before = gets();
    expect(byId(await fresh.list("NS", (id) => id.startsWith("0") || id.startsWith("1")))).toEqual({
      0: 1000,
      1: 1001,
    });
    expect(gets() - before).toBe(2);
    before = gets();
    expect(Object.keys(byId(await fresh.list("NS", (id) => !id.startsWith("0"))))).toEqual(["1", "2", "3", "5", "7"]);
    expect(gets() - before).toBe(4);
  });

  test("the objects a host lost to a newer holder are forgotten once that can no longer matter; the object is then claimed again, never written by two", async () => {
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await beatAll([a, b]);
    const names = Array.from({ length: 80 }, (_, i) => `l-${i}`)
      .filter((n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-a")
      .slice(0, 1);
    for (const name of names) expect(await a.env.COUNTER.getByName(name).increment()).toMatchObject({ n: 1 });

    // a is paused past the ttl; b takes the objects over; a resumes and is fenced on each.
    a.membership.stop();
    await clock.advance(3_001);
    await b.membership.beat();
    for (const name of names)
      expect(await b.env.COUNTER.getByName(name).increment()).toEqual({ n: 2, servedBy: "host-b" });
    for (const name of names)
      expect(await a.env.COUNTER.getByName(name).increment()).toEqual({ n: 3, servedBy: "host-b" });
    expect(a.stats()).toMatchObject({ fenced: 1, lost: 1 });
    await a.membership.join();
    await b.membership.beat();
    await b.settled();
    expect(b.host.stats().live).toBe(0);

    // Nothing touches the objects again: ten ttls later a remembers none of them.
    await clock.advance(29_999);
    expect(a.stats().lost).toBe(1);
    await clock.advance(2);
    expect(a.stats().lost).toBe(0);

    // a claims them again on their next events, with every confirmed write.
    for (const name of names)
      expect(await a.env.COUNTER.getByName(name).increment()).toEqual({ n: 4, servedBy: "host-a" });
    for (const name of names)
      expect(await b.env.COUNTER.getByName(name).increment()).toEqual({ n: 5, servedBy: "host-a" });
  }, 60_000);
});
