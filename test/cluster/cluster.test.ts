import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ClusterHost, MAX_FORWARDED_FETCH_BYTES } from "../../src/cluster/cluster-host";
import { rendezvousOwner, rendezvousRank } from "../../src/cluster/rendezvous";
import { DurableObject } from "../../src/context/durable-object";
import { directoryPerObject } from "../../src/host/options";
import { FakeClock } from "../../src/util/clock";

interface Env {
  HOST_ID: string;
}

class Counter extends DurableObject<Env> {
  async increment(by: number): Promise<{ n: number; servedBy: string }> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + by;
    await this.ctx.storage.put("n", n);
    return { n, servedBy: this.env.HOST_ID };
  }
  whoAmI(): { name: string | null; servedBy: string } {
    return { name: this.ctx.id.name ?? null, servedBy: this.env.HOST_ID };
  }
  async alarmAt(ms: number): Promise<void> {
    await this.ctx.storage.setAlarm(ms);
  }
  override async alarm(): Promise<void> {
    await this.ctx.storage.put("alarmedBy", this.env.HOST_ID);
  }
  async alarmedBy(): Promise<string | null> {
    return (await this.ctx.storage.get<string>("alarmedBy")) ?? null;
  }
  boom(): never {
    throw new RangeError("bad thing");
  }
  /** Throws an error of a class of its own, marked retryable. */
  custom(): never {
    class Custom extends Error {}
    const e = Object.assign(new Custom("mine"), { retryable: true });
    e.name = "Custom";
    throw e;
  }
  abortMe(): void {
    this.ctx.abort("reset on purpose");
  }
  /** Counts its runs in storage, then throws (and fetch() does the same, as "fetches"). */
  async countAndThrow(): Promise<never> {
    await this.ctx.storage.put("runs", ((await this.ctx.storage.get<number>("runs")) ?? 0) + 1);
    throw new RangeError("counted");
  }
  async runs(): Promise<{ runs: number; fetches: number }> {
    return {
      runs: (await this.ctx.storage.get<number>("runs")) ?? 0,
      fetches: (await this.ctx.storage.get<number>("fetches")) ?? 0,
    };
  }
  /** Stays in flight until the test releases it. */
  async busy(): Promise<string> {
    await released;
    return this.env.HOST_ID;
  }
  echo(value: unknown): unknown {
    return value;
  }
  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname === "/count-421") {
      const fetches = ((await this.ctx.storage.get<number>("fetches")) ?? 0) + 1;
      await this.ctx.storage.put("fetches", fetches);
      return new Response(`fetch ${fetches}`, { status: 421, headers: { "x-served-by": this.env.HOST_ID } });
    }
    if (new URL(request.url).pathname === "/count-and-throw") {
      await this.ctx.storage.put("fetches", ((await this.ctx.storage.get<number>("fetches")) ?? 0) + 1);
      throw new TypeError("counted");
    }
    const body = request.method === "POST" ? await request.text() : "";
    return new Response(`${request.method} ${new URL(request.url).pathname} ${body} by ${this.env.HOST_ID}`, {
      status: 201,
      headers: { "x-served-by": this.env.HOST_ID },
    });
  }
}

let release: () => void = () => {};
let released: Promise<void> = Promise.resolve();

let dir: string;
const nodes: Array<ClusterHost<{ COUNTER: typeof Counter }, Env>> = [];
const clock = new FakeClock();

async function startNode(id: string): Promise<ClusterHost<{ COUNTER: typeof Counter }, Env>> {
  const node = await ClusterHost.start({
    namespaces: { COUNTER: Counter },
    env: { HOST_ID: id },
    clock,
    persistence: directoryPerObject(join(dir, "data")),
    cluster: { directory: dir, id, heartbeatMs: 1_000, ttlMs: 3_000 },
  });
  nodes.push(node);
  return node;
}

/** Every node renews its heartbeat and re-reads the members (what the next heartbeat does). */
async function beatAll(): Promise<void> {
  for (const n of nodes) await n.membership.beat().catch(() => {});
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "actorstore-cluster-"));
});
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close().catch(() => {})));
  await rm(dir, { recursive: true, force: true });
});

describe("rendezvous hashing", () => {
  test("every host picks the same owner; removing a member moves only its objects, each to its next choice", () => {
    const members = ["a", "b", "c", "d"];
    const keys = Array.from({ length: 2_000 }, (_, i) => `COUNTER/${i}`);
    const owners = keys.map((k) => rendezvousOwner(k, members));
    expect(keys.map((k) => rendezvousOwner(k, [...members].reverse()))).toEqual(owners);
    for (const m of members) {
      const share = owners.filter((o) => o === m).length / keys.length;
      expect(share).toBeGreaterThan(0.2);
      expect(share).toBeLessThan(0.3);
    }
    const without = members.filter((m) => m !== "b");
    keys.forEach((k, i) => {
      const after = rendezvousOwner(k, without);
      if (owners[i] !== "b") expect(after).toBe(owners[i]);
      else expect(after).toBe(rendezvousRank(k, members)[1]);
    });
    expect(rendezvousOwner("x", [])).toBeUndefined();
  });
});

describe("cluster of hosts on loopback", () => {
  test("an operation sent to any host reaches the owner; RPC, errors and fetch survive forwarding", async () => {
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await beatAll();
    expect(a.membership.live()).toEqual(["host-a", "host-b"]);
    const names = Array.from({ length: 12 }, (_, i) => `room-${i}`);
    const owners = new Set<string>();
    for (const name of names) {
      const id = a.env.COUNTER.idFromName(name);
      const owner = a.ownerOf("COUNTER", id);
      expect(b.ownerOf("COUNTER", id)).toBe(owner);
      owners.add(owner as string);
      expect(await a.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 1, servedBy: owner });
      expect(await b.env.COUNTER.getByName(name).increment(2)).toEqual({ n: 3, servedBy: owner });
      // The name travels with a forwarded operation.
      expect(await b.env.COUNTER.getByName(name).whoAmI()).toEqual({ name, servedBy: owner });
    }
    expect(owners).toEqual(new Set(["host-a", "host-b"]));
    expect(a.stats().forwarded).toBeGreaterThan(0);
    expect(b.stats().forwarded).toBeGreaterThan(0);

    // Pick a name owned by b and call it through a.
    const remote = names.find((n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-b") as string;
    const stub = a.env.COUNTER.getByName(remote);
    // The platform's marks survive forwarding: remote (the object threw it), retryable, and
    // durableObjectReset (the error reset the object).
    await expect(stub.boom()).rejects.toThrowError(Object.assign(new RangeError("bad thing"), { remote: true }));
    const custom = await stub.custom().catch((e: unknown) => e);
    expect(custom).toBeInstanceOf(Error);
    expect(custom).toMatchObject({ message: "Custom: mine", remote: true, retryable: true });
    const reset = (await stub.abortMe().catch((e: unknown) => e)) as Error & Record<string, unknown>;
    expect(reset).toBeInstanceOf(Error);
    expect(reset.message).toBe("reset on purpose");
    expect(reset.durableObjectReset).toBe(true);
    expect(reset.remote).toBeUndefined();
    await expect((stub as unknown as { nope(): Promise<unknown> }).nope()).rejects.toThrowError(
      Object.assign(new TypeError('The RPC receiver does not implement the method "nope".'), { remote: true }),
    );
    const value = { d: new Date(7), m: new Map([[1, "x"]]), big: 5n };
    expect(await stub.echo(value)).toEqual(value);
    const res = await stub.fetch("http://room/path", { method: "POST", body: "hello" });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-served-by")).toBe("host-b");
    expect(await res.text()).toBe("POST /path hello by host-b");
  });

  test("a forwarded call or fetch that throws on its owner ran once there: the error is not taken for a lost answer", async () => {
    const a = await startNode("host-a");
    await startNode("host-b");
    await beatAll();
    const name = Array.from({ length: 50 }, (_, i) => `t-${i}`).find(
      (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-b",
    ) as string;
    const stub = a.env.COUNTER.getByName(name);
    await expect(stub.countAndThrow()).rejects.toThrowError(Object.assign(new RangeError("counted"), { remote: true }));
    await expect(stub.fetch("http://room/count-and-throw")).rejects.toThrowError(
      Object.assign(new TypeError("counted"), { remote: true }),
    );
    expect(await stub.runs()).toEqual({ runs: 1, fetches: 1 });
  });

  test("a forwarded fetch that the object answers 421 ran once: the sender's fetch does not send it again", async () => {
    // Regression: Node's fetch sends a request answered 421 (Misdirected Request) once more, on a
    // new connection, by itself: an object's own 421 answer to a forwarded fetch ran its handler twice.
    const a = await startNode("host-a");
    await startNode("host-b");
    await beatAll();
    const name = Array.from({ length: 50 }, (_, i) => `m-${i}`).find(
      (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-b",
    ) as string;
    const stub = a.env.COUNTER.getByName(name);
    const res = await stub.fetch("http://room/count-421", { method: "POST", body: "once" });
    expect(res.status).toBe(421);
    expect(res.headers.get("x-served-by")).toBe("host-b");
    expect(res.headers.has("x-actorstore-status")).toBe(false);
    expect(res.statusText).toBe("");
    expect(await res.text()).toBe("fetch 1");
    expect(await stub.runs()).toEqual({ runs: 0, fetches: 1 });
  });

  test("an owner that died (before its heartbeat expired) is ERR_UNAVAILABLE saying the operation did not run", async () => {
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await beatAll();
    const name = Array.from({ length: 50 }, (_, i) => `u-${i}`).find(
      (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-b",
    ) as string;
    await b.crashForTest();
    await expect(a.env.COUNTER.getByName(name).increment(1)).rejects.toMatchObject({
      name: "ActorStoreError",
      code: "ERR_UNAVAILABLE",
      message: expect.stringMatching(
        /^Host host-b could not be reached \(ECONNREFUSED\); the operation on COUNTER object [0-9a-f]{64} did not run\./,
      ),
    });
  });

  test("a fetch with a body that is sent again (its first owner refused the connection, or answered 421) carries its body each time", async () => {
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await beatAll();
    const onB = Array.from({ length: 50 }, (_, i) => `body-${i}`).filter(
      (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-b",
    );
    // b died before its heartbeat expired: every hop to it is refused, and the error says the
    // request did not run (not that it may have, which a body read twice made it say).
    await b.crashForTest();
    nodes.splice(nodes.indexOf(b), 1);
    await expect(
      a.env.COUNTER.getByName(onB[0] as string).fetch("http://room/x", { method: "POST", body: "once" }),
    ).rejects.toMatchObject({
      code: "ERR_UNAVAILABLE",
      message: expect.stringMatching(/^Host host-b could not be reached \(ECONNREFUSED\); .* did not run\./),
    });
    // b's record is gone, but a has not re-read the members yet: refused once, then a's view loses
    // b and the object runs here, with the body the first attempt read.
    await rm(join(dir, "members", "host-b.json"));
    const res = await a.env.COUNTER.getByName(onB[1] as string).fetch("http://room/y", {
      method: "POST",
      body: "twice",
    });
    expect(await res.text()).toBe("POST /y twice by host-a");
    // 421: c sees a (the sender's owner) as the owner no longer; a follows it with the same body.
    const c = await startNode("host-c");
    await a.membership.refresh();
    const onC = Array.from({ length: 80 }, (_, i) => `moved-${i}`).find(
      (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-c",
    ) as string;
    await c.membership.leave();
    const third = await a.env.COUNTER.getByName(onC).fetch("http://room/z", { method: "POST", body: "thrice" });
    expect(await third.text()).toBe("POST /z thrice by host-a");
  });

  test("a forwarded fetch whose body passes the endpoint's limit is answered 413 by the sender once the limit is read, without holding the rest", async () => {
    const a = await startNode("host-a");
    await startNode("host-b");
    await beatAll();
    const name = Array.from({ length: 50 }, (_, i) => `big-${i}`).find(
      (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-b",
    ) as string;
    const chunk = new Uint8Array(1024 * 1024);
    const total = MAX_FORWARDED_FETCH_BYTES + 20 * chunk.length;
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= total) controller.close();
        else {
          pulled += chunk.length;
          controller.enqueue(chunk);
        }
      },
    });
    const res = await a.env.COUNTER.getByName(name).fetch("http://room/upload", {
      method: "POST",
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.text()).toBe(`a forwarded operation's body may have at most ${MAX_FORWARDED_FETCH_BYTES} bytes`);
    // Read up to the limit (and what the stream had queued), not to its end.
    expect(pulled).toBeLessThan(MAX_FORWARDED_FETCH_BYTES + 4 * chunk.length);
  });

  test("kill of the owner: after its heartbeat expires another host serves the object with every confirmed write", async () => {
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await beatAll();
    const name = Array.from({ length: 50 }, (_, i) => `k-${i}`).find(
      (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-a",
    ) as string;
    let confirmed = 0;
    for (let i = 0; i < 5; i++) confirmed = (await b.env.COUNTER.getByName(name).increment(1)).n;
    expect(confirmed).toBe(5);
    await a.crashForTest();
    nodes.splice(nodes.indexOf(a), 1);
    // Until the heartbeat is too old, b still routes to a, which does not answer.
    await clock.advance(3_000);
    await beatAll();
    expect(b.membership.live()).toEqual(["host-b"]);
    expect(await b.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 6, servedBy: "host-b" });
    await a.host.close().catch(() => {});
  });

  test("drain hands objects over at once; the drained host forwards what still reaches it", async () => {
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await beatAll();
    const names = Array.from({ length: 20 }, (_, i) => `d-${i}`);
    for (const n of names) await a.env.COUNTER.getByName(n).increment(1);
    expect(a.host.stats().live).toBeGreaterThan(0);
    await a.drain();
    expect(a.host.stats().live).toBe(0);
    await b.membership.refresh();
    expect(b.membership.live()).toEqual(["host-b"]);
    for (const n of names) {
      expect(await a.env.COUNTER.getByName(n).increment(1)).toEqual({ n: 2, servedBy: "host-b" });
    }
  });

  test("a host that joins takes over its share: the others evict what moved, with nothing lost", async () => {
    const a = await startNode("host-a");
    const names = Array.from({ length: 20 }, (_, i) => `j-${i}`);
    for (const n of names) expect((await a.env.COUNTER.getByName(n).increment(1)).servedBy).toBe("host-a");
    const b = await startNode("host-b");
    await beatAll();
    await a.settled();
    const moved = names.filter((n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-b");
    expect(moved.length).toBeGreaterThan(0);
    // a evicted the objects that moved (its hand-over runs when it sees the new member).
    const held = new Set(a.host.objects().map((o) => o.name));
    for (const n of moved) expect(held.has(n)).toBe(false);
    for (const n of names) {
      const owner = a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n));
      expect(await b.env.COUNTER.getByName(n).increment(1)).toEqual({ n: 2, servedBy: owner });
    }
  });

  test("an object busy when it moves is handed over as soon as its calls end, not when it next goes idle", async () => {
    const a = await startNode("host-a");
    await beatAll();
    // A name that b will own once it joins.
    const name = Array.from({ length: 64 }, (_, i) => `busy-${i}`).find(
      (n) => rendezvousOwner(`COUNTER/${a.env.COUNTER.idFromName(n).toString()}`, ["host-a", "host-b"]) === "host-b",
    ) as string;
    expect(await a.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 1, servedBy: "host-a" });
    released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const inFlight = a.env.COUNTER.getByName(name).busy();
    const b = await startNode("host-b");
    await beatAll();
    await a.settled();
    // Its call is still running: a keeps it for now (holding beats hashing) …
    expect(a.host.objects().map((o) => o.name)).toContain(name);
    release();
    expect(await inFlight).toBe("host-a");
    await a.settled();
    // … and lets it go once the call ended (the fake clock does not move here, so no idle timer would).
    expect(a.host.objects().map((o) => o.name)).not.toContain(name);
    expect(await b.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 2, servedBy: "host-b" });
    expect(await a.env.COUNTER.getByName(name).increment(1)).toEqual({ n: 3, servedBy: "host-b" });
  });

  test("an evicted object's alarm wakes it on its owner, also when the owner changed meanwhile", async () => {
    const a = await startNode("host-a");
    const names = Array.from({ length: 40 }, (_, i) => `w-${i}`);
    const at = clock.now() + 60_000;
    for (const n of names.slice(0, 10)) await a.env.COUNTER.getByName(n).alarmAt(at);
    await a.host.evictIdle();
    expect(a.host.stats()).toMatchObject({ live: 0, sleeping: 10 });
    const b = await startNode("host-b");
    await beatAll();
    await a.settled();
    const owners = names.slice(0, 10).map((n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)));
    expect(owners).toContain("host-b");
    // Heartbeats keep both alive while the clock moves to the alarms. A wake-up forwarded to b
    // travels over real HTTP, so keep stepping (the fake clock fires b's alarm timer once it is set)
    // until every alarm has run, within a bound.
    const alarmedBy = async () => Promise.all(names.slice(0, 10).map((n) => b.env.COUNTER.getByName(n).alarmedBy()));
    const onB = owners.filter((o) => o === "host-b").length;
    // No stub call until the wake-ups have started the objects: a call would start them itself.
    for (let t = 0; t < 120; t++) {
      await clock.advance(1_000);
      await beatAll();
      await a.settled();
      await b.settled();
      if (a.host.stats().alarmWakes === 10 && b.host.stats().starts >= onB && a.host.stats().starts >= 20 - onB) break;
    }
    expect(a.host.stats().alarmWakes).toBe(10);
    expect(b.stats().served).toBeGreaterThanOrEqual(onB);
    await clock.advance(1_000);
    await b.settled();
    expect(await alarmedBy()).toEqual(owners);
  });

  test("a dead owner's pending alarms fire on the host that takes its objects over, with nothing sent to them (the alarm index)", async () => {
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await beatAll();
    const names = Array.from({ length: 40 }, (_, i) => `dead-${i}`)
      .filter((n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-a")
      .slice(0, 4);
    expect(names.length).toBe(4);
    const at = clock.now() + 30_000;
    for (const n of names) await b.env.COUNTER.getByName(n).alarmAt(at);
    // a dies holding the objects (its wake-up timers die with it).
    await a.crashForTest();
    nodes.splice(nodes.indexOf(a), 1);
    await clock.advance(3_000);
    await beatAll();
    await b.settled();
    expect(b.membership.live()).toEqual(["host-b"]);
    // b read the index when it took a's objects over: one sleeping entry per alarm, none started.
    expect(b.host.stats()).toMatchObject({ sleeping: 4, alarmWakes: 0 });
    for (let t = 0; t < 60 && b.host.stats().alarmWakes < 4; t++) {
      await clock.advance(1_000);
      await beatAll();
      await b.settled();
    }
    expect(b.host.stats().alarmWakes).toBe(4);
    await clock.advance(1_000);
    await b.settled();
    for (const n of names) expect(await b.env.COUNTER.getByName(n).alarmedBy()).toBe("host-b");
  });

  test("the cluster option needs an id and exactly one of directory or bucket", async () => {
    const base = { namespaces: { COUNTER: Counter }, env: { HOST_ID: "x" } };
    await expect(ClusterHost.start({ ...base, cluster: { id: "x" } })).rejects.toThrow(/one of \{ directory \}/);
    await expect(
      ClusterHost.start({
        ...base,
        cluster: {
          id: "x",
          directory: dir,
          bucket: {
            endpoint: "http://127.0.0.1:1",
            bucket: "b-1",
            credentials: { accessKeyId: "k", secretAccessKey: "s" },
          },
        },
      }),
    ).rejects.toThrow(TypeError);
    await expect(
      ClusterHost.start({
        ...base,
        cluster: {
          id: "x",
          bucket: {
            endpoint: "http://k:secret@127.0.0.1:1",
            bucket: "b-1",
            credentials: { accessKeyId: "k", secretAccessKey: "s" },
          },
        },
      }),
    ).rejects.toThrow(/endpoint/);
  });

  test("no live host: ERR_UNAVAILABLE", async () => {
    const a = await startNode("host-a");
    await a.drain();
    await expect(a.env.COUNTER.getByName("x").increment(1)).rejects.toMatchObject({ code: "ERR_UNAVAILABLE" });
  });
});
