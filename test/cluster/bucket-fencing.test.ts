/**
 * The fenced-host path of a cluster over a bucket, step by step in one process (an in-process S3
 * with exact semantics, a fake clock for membership): a host whose object another host claimed is
 * fenced, drops the object, forwards its events to the holder the bucket names instead of reloading
 * it, and starts it again only once that holder handed it over.
 */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ClusterHost } from "../../src/cluster/cluster-host";
import { rendezvousOwner } from "../../src/cluster/rendezvous";
import { DurableObject } from "../../src/context/durable-object";
import { FakeClock } from "../../src/util/clock";
import { FakeS3, gate } from "../s3/fake-s3";

interface Env {
  HOST_ID: string;
}

class Counter extends DurableObject<Env> {
  async read(): Promise<{ n: number; servedBy: string }> {
    return { n: (await this.ctx.storage.get<number>("n")) ?? 0, servedBy: this.env.HOST_ID };
  }

  async increment(by: number): Promise<{ n: number; servedBy: string }> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + by;
    await this.ctx.storage.put("n", n);
    return { n, servedBy: this.env.HOST_ID };
  }

  async alarmAt(ms: number): Promise<void> {
    await this.ctx.storage.setAlarm(ms);
  }

  async alarmNow(): Promise<number | null> {
    return this.ctx.storage.getAlarm();
  }

  /** Deletes the alarm once the test says so (an event that was running when its host lost the object). */
  async deleteAlarmLater(): Promise<void> {
    entered.open();
    await proceed.promise;
    await this.ctx.storage.deleteAlarm();
  }

  /** Tells the test what it saw (a side effect outside the object, as a fetch to a service would be). */
  override async alarm(): Promise<void> {
    alarmRuns.push({ host: this.env.HOST_ID, n: (await this.ctx.storage.get<number>("n")) ?? 0 });
  }
}

const alarmRuns: Array<{ host: string; n: number }> = [];
let entered = gate();
let proceed = gate();

let s3: FakeS3;
const clock = new FakeClock();
const nodes: Array<ClusterHost<{ COUNTER: typeof Counter }, Env>> = [];

beforeEach(async () => {
  s3 = await FakeS3.start();
});
afterEach(async () => {
  alarmRuns.length = 0;
  entered = gate();
  proceed = gate();
  await Promise.all(nodes.splice(0).map((n) => n.close().catch(() => {})));
  await s3.close();
});

async function startNode(id: string) {
  const node = await ClusterHost.start({
    namespaces: { COUNTER: Counter },
    env: { HOST_ID: id },
    clock,
    idleTimeoutMs: Number.POSITIVE_INFINITY,
    cluster: {
      id,
      bucket: {
        endpoint: s3.endpoint,
        bucket: "objects",
        prefix: "fencing/",
        credentials: { accessKeyId: "AKFAKE", secretAccessKey: "not-a-real-secret" },
      },
      heartbeatMs: 1_000,
      ttlMs: 3_000,
    },
  });
  nodes.push(node);
  return node;
}

describe("cluster over a bucket: a fenced host forwards instead of reloading", () => {
  test("paused owner loses the object, is fenced on its next write, forwards to the holder, and takes the object back only after the hand-over", async () => {
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await a.membership.beat();
    await b.membership.beat();
    expect(a.membership.live()).toEqual(["host-a", "host-b"]);
    const name = Array.from({ length: 50 }, (_, i) => `f-${i}`).find(
      (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-a",
    ) as string;
    const id = a.env.COUNTER.idFromName(name).toString();
    expect(await b.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 1, servedBy: "host-a" });
    expect(await a.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 2, servedBy: "host-a" });

    // a stops beating (a paused process); past the ttl b sees itself alone and claims the object.
    a.membership.stop();
    await clock.advance(3_000);
    await b.membership.beat();
    expect(b.membership.live()).toEqual(["host-b"]);
    expect(await b.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 3, servedBy: "host-b" });

    // a resumes with its stale instance: before serving it checks its claim, finds b's newer one,
    // drops the object and sends the call to b (the bucket's holder). a never confirms it.
    expect(await a.env.COUNTER.getByName(name).increment(10)).toEqual({ n: 13, servedBy: "host-b" });
    expect(a.stats().fenced).toBe(1);
    expect(a.host.stats().live).toBe(0);

    // a rejoins; by the hash it owns the object again, but b holds it: a forwards to b (no reload).
    await a.membership.join();
    expect(a.membership.live()).toEqual(["host-a", "host-b"]);
    const startsBefore = a.host.stats().starts;
    expect(await a.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 14, servedBy: "host-b" });
    expect(a.host.stats().starts).toBe(startsBefore);

    // b sees a again and hands the object over; a's next call finds b without it and starts it.
    await b.membership.beat();
    await b.settled();
    expect(b.host.stats().live).toBe(0);
    expect(await b.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 15, servedBy: "host-a" });
    expect(await a.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 16, servedBy: "host-a" });

    // In the bucket: three claims (a, b, a again), log epochs never decrease, and the holder
    // record names a.
    const base = `fencing/objects/COUNTER/${id}/`;
    expect(s3.keys("objects", `${base}claim/`)).toHaveLength(3);
    const epochs = s3
      .keys("objects", `${base}log/`)
      .map((k) => Number((s3.object("objects", k) as { meta: Record<string, string> }).meta.epoch));
    expect(epochs).toEqual([...epochs].sort((x, y) => x - y));
    expect(new Set(epochs)).toEqual(new Set([1, 2, 3]));
    const holder = s3.object("objects", `fencing/holders/COUNTER/${id}.json`) as { body: Uint8Array };
    expect(JSON.parse(new TextDecoder().decode(holder.body))).toEqual({ host: "host-a", epoch: 3 });
  });

  test("a resumed holder never answers a read from its stale state: it checks its claim first and sends the read to the new holder", async () => {
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await a.membership.beat();
    await b.membership.beat();
    const name = Array.from({ length: 50 }, (_, i) => `r-${i}`).find(
      (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-a",
    ) as string;
    expect(await a.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 1, servedBy: "host-a" });

    // a is paused past the ttl; b takes the object over and confirms a write a has never seen.
    a.membership.stop();
    await clock.advance(3_000);
    await b.membership.beat();
    expect(await b.env.COUNTER.getByName(name).increment(5)).toEqual({ n: 6, servedBy: "host-b" });

    // a resumes still holding its instance (n = 1). A read through a, with no write of its own
    // first, must see b's confirmed write: a read from the stale instance would answer 1.
    expect(a.host.stats().live).toBe(1);
    expect(await a.env.COUNTER.getByName(name).read()).toEqual({ n: 6, servedBy: "host-b" });
    expect(a.stats().fenced).toBe(1);
    expect(a.host.stats().live).toBe(0);
  });

  test("a resumed holder never runs its alarm from its stale state: it checks its claim first, and the new holder's run is the only one", async () => {
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await a.membership.beat();
    await b.membership.beat();
    const name = Array.from({ length: 50 }, (_, i) => `al-${i}`).find(
      (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-a",
    ) as string;
    expect(await a.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 1, servedBy: "host-a" });
    await a.env.COUNTER.getByName(name).alarmAt(clock.now() + 10_000);

    // a is paused past the ttl while it holds the object and its armed alarm; b takes the object
    // over (and its alarm with it) and confirms a write a has never seen.
    a.membership.stop();
    await clock.advance(3_000);
    await b.membership.beat();
    expect(await b.env.COUNTER.getByName(name).increment(5)).toEqual({ n: 6, servedBy: "host-b" });
    expect(a.host.stats().live).toBe(1);

    // The alarm comes due on both hosts' timers. a's instance (n = 1) must not run it.
    await clock.advance(7_000);
    for (let i = 0; i < 200 && (alarmRuns.length === 0 || a.host.stats().live > 0); i++) {
      await a.settled();
      await b.settled();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(alarmRuns).toEqual([{ host: "host-b", n: 6 }]);
    expect(a.stats().fenced).toBe(1);
    expect(a.host.stats().live).toBe(0);
    // a rejoins; reads through it see b's write (wherever the object runs now).
    await a.membership.join();
    expect(await a.env.COUNTER.getByName(name).read()).toMatchObject({ n: 6 });
  });

  test("an event that was running when its host lost the object cannot delete the new holder's alarm from the index", async () => {
    // Regression: the fenced commit's index update ran beside its append and deleted the entry,
    // although the commit was refused and the new holder still had the alarm: had that holder then
    // died, no host would have woken the object.
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await a.membership.beat();
    await b.membership.beat();
    const name = Array.from({ length: 50 }, (_, i) => `ix-${i}`).find(
      (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-a",
    ) as string;
    const id = a.env.COUNTER.idFromName(name).toString();
    const at = clock.now() + 100_000;
    await a.env.COUNTER.getByName(name).alarmAt(at);
    const entry = `fencing/alarms/COUNTER/${id}.json`;
    expect(s3.keys("objects", "fencing/alarms/")).toEqual([entry]);
    const running = a.env.COUNTER.getByName(name).deleteAlarmLater();
    running.catch(() => {});
    await entered.promise;
    // a is paused past the ttl while the event runs; b takes the object over, alarm included.
    a.membership.stop();
    await clock.advance(3_000);
    await b.membership.beat();
    expect(await b.env.COUNTER.getByName(name).alarmNow()).toBe(at);
    // a's event goes on: its commit is refused (fenced), and the index keeps b's alarm.
    proceed.open();
    await expect(running).rejects.toThrow(/reset/);
    await a.settled();
    expect(await b.env.COUNTER.getByName(name).alarmNow()).toBe(at);
    expect(s3.keys("objects", "fencing/alarms/")).toEqual([entry]);
  });

  test("a start fenced while it loads (another host claimed the object meanwhile) sends the operation to that holder, which keeps the object", async () => {
    // Regression: the caller got the adapter's raw ERR_FENCED for an operation that never ran, and
    // the host did not count the object lost, so its next event started it again and took it back
    // from the holder that had just served it (a third claim).
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await a.membership.beat();
    await b.membership.beat();
    const name = Array.from({ length: 50 }, (_, i) => `st-${i}`).find(
      (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-a",
    ) as string;
    const id = a.env.COUNTER.idFromName(name).toString();
    // b counts a dead (a stopped beating past the ttl); a beats again, but b has not read it yet.
    a.membership.stop();
    await clock.advance(3_000);
    await b.membership.beat();
    await a.membership.join();
    expect(b.membership.live()).toEqual(["host-b"]);
    expect(a.membership.live()).toEqual(["host-a", "host-b"]);
    // a starts the object; its load's check for a newer claim is held until b has claimed it.
    const check = (r: { op: string; key: string }) =>
      r.op === "HEAD" && r.key === `fencing/objects/COUNTER/${id}/claim/0000000000000002`;
    const held = gate();
    const arrived = s3.arrival(check);
    s3.fault({ match: check, fault: { kind: "delay-request", until: held.promise } });
    const onA = a.env.COUNTER.getByName(name).increment(1);
    onA.catch(() => {});
    await arrived;
    expect(await b.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 1, servedBy: "host-b" });
    held.open();
    // a's start is fenced; its operation did not run there and is sent to b.
    expect(await onA).toEqual({ n: 2, servedBy: "host-b" });
    expect(a.stats()).toMatchObject({ fenced: 1, lost: 1 });
    // a's next event goes to b too, and b keeps the object: two claims, no more.
    expect(await a.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 3, servedBy: "host-b" });
    expect(await b.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 4, servedBy: "host-b" });
    expect(s3.keys("objects", `fencing/objects/COUNTER/${id}/claim/`)).toHaveLength(2);
  });

  test("a forwarded operation whose start is fenced while it loads is answered 421 naming the holder, and the sender sends it there", async () => {
    // The path of the test above when the operation came from another host: the owner must not
    // answer the adapter's ERR_FENCED (the operation did not run) but 421 naming the holder, so
    // that the sender delivers it once, to the host that holds the object.
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    const c = await startNode("host-c");
    await Promise.all([a, b, c].map((n) => n.membership.beat()));
    for (const n of [a, b, c]) expect(n.membership.live()).toEqual(["host-a", "host-b", "host-c"]);
    // a owns the object among all three; b owns it once a is gone.
    const name = Array.from({ length: 200 }, (_, i) => `fw-${i}`).find((n) => {
      const key = `COUNTER/${a.env.COUNTER.idFromName(n).toString()}`;
      return (
        rendezvousOwner(key, ["host-a", "host-b", "host-c"]) === "host-a" &&
        rendezvousOwner(key, ["host-b", "host-c"]) === "host-b"
      );
    }) as string;
    expect(name).toBeDefined();
    const id = a.env.COUNTER.idFromName(name).toString();
    // b sees a gone (a left and came back; b has not read the members since); c still routes to a.
    // No time passes, so no heartbeat timer runs behind the test's back.
    await a.membership.leave();
    await b.membership.refresh();
    await a.membership.join();
    expect(b.membership.live()).toEqual(["host-b", "host-c"]);
    expect(a.membership.live()).toEqual(["host-a", "host-b", "host-c"]);
    expect(c.membership.live()).toEqual(["host-a", "host-b", "host-c"]);
    // c sends an operation to a; a's start holds its check for a newer claim until b has claimed.
    const check = (r: { op: string; key: string }) =>
      r.op === "HEAD" && r.key === `fencing/objects/COUNTER/${id}/claim/0000000000000002`;
    const held = gate();
    const arrived = s3.arrival(check);
    s3.fault({ match: check, fault: { kind: "delay-request", until: held.promise } });
    const fromC = c.env.COUNTER.getByName(name).increment(1);
    fromC.catch(() => {});
    await arrived;
    expect(a.stats().served).toBe(1);
    expect(await b.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 1, servedBy: "host-b" });
    held.open();
    // a's start is fenced: the operation did not run there; c is told b holds it and sends it there.
    expect(await fromC).toEqual({ n: 2, servedBy: "host-b" });
    // c's router sent it twice: to a, then to the holder the 421 named. (Node's fetch itself sends
    // a request answered 421 once more, on a new connection, and returns that answer: a's second
    // 421 names b from the object marked lost, before anything runs; the operation ran once, on b.)
    expect(c.stats().forwarded).toBe(2);
    expect(a.stats()).toMatchObject({ fenced: 1, lost: 1, served: 1 });
    expect(b.stats().served).toBe(1);
    // c's next operation goes to a again (its view), which sends it on to b without starting it.
    expect(await c.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 3, servedBy: "host-b" });
    expect(c.stats().forwarded).toBe(4);
    expect(b.stats().served).toBe(2);
    expect(a.host.stats().live).toBe(0);
    expect(s3.keys("objects", `fencing/objects/COUNTER/${id}/claim/`)).toHaveLength(2);
  });
});
