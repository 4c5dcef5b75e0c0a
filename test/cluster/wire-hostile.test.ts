/**
 * Hostile input on a host's forwarding endpoint: whatever reaches the port (a broken peer, a scanner,
 * a client that drops its connection) must not crash the host or touch another object, and what a
 * forwarded call returns crosses the boundary exactly as it does on one host.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ClusterHost, MAX_FORWARDED_RPC_BYTES } from "../../src/cluster/cluster-host";
import { DurableObject } from "../../src/context/durable-object";
import { directoryPerObject } from "../../src/host/options";
import { FakeClock } from "../../src/util/clock";

class Plain {
  x = 1;
}

class Counter extends DurableObject {
  async increment(by: number): Promise<number> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + by;
    await this.ctx.storage.put("n", n);
    return n;
  }
  plain(): Plain {
    return new Plain();
  }
  fn(): () => number {
    return () => 1;
  }
  whoAmI(): string | null {
    return this.ctx.id.name ?? null;
  }
}

type Node = ClusterHost<{ COUNTER: typeof Counter }>;
let dir: string;
const nodes: Node[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => {
  unhandled.push(e);
};

async function startNode(id: string): Promise<Node> {
  const node = await ClusterHost.start({
    namespaces: { COUNTER: Counter },
    clock: new FakeClock(),
    persistence: directoryPerObject(join(dir, "data")),
    cluster: { directory: dir, id },
  });
  nodes.push(node);
  return node;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "actorstore-wire-"));
  unhandled.length = 0;
  process.on("unhandledRejection", onUnhandled);
});
afterEach(async () => {
  process.off("unhandledRejection", onUnhandled);
  await Promise.all(nodes.splice(0).map((n) => n.close().catch(() => {})));
  await rm(dir, { recursive: true, force: true });
});

/** Sends raw bytes to the node's port; resolves with the start of the answer (empty if none came within 2 s). */
function raw(node: Node, bytes: string, hangUpAfterMs?: number): Promise<string> {
  const { hostname, port } = new URL(node.address);
  return new Promise((resolve) => {
    let out = "";
    const socket = connect(Number(port), hostname, () => {
      socket.write(bytes);
      if (hangUpAfterMs !== undefined) setTimeout(() => socket.destroy(), hangUpAfterMs);
    });
    const timer = setTimeout(() => socket.destroy(), 2_000);
    socket.on("data", (d) => {
      out += d.toString("latin1");
      if (out.includes("\r\n")) socket.destroy();
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(out);
    });
    socket.on("error", () => {});
  });
}

describe("the forwarding endpoint under hostile input", () => {
  test("malformed paths, names and bodies are answered 400/404/413; the host keeps serving", async () => {
    const node = await startNode("host-a");
    const id = node.env.COUNTER.idFromName("x");
    expect(await node.env.COUNTER.get(id).increment(1)).toBe(1);
    const base = `${node.address}/actorstore/v1`;
    const send = async (path: string, init: RequestInit = {}) => {
      const r = await fetch(`${base}${path}`, { method: "POST", signal: AbortSignal.timeout(30_000), ...init });
      return { status: r.status, text: await r.text() };
    };
    expect(await send(`/%E0%A4%A/${id}/call/increment`)).toEqual({
      status: 400,
      text: "malformed namespace (bad percent-encoding)",
    });
    expect((await send(`/COUNTER/${id}/call/%E0%A4%A`)).status).toBe(400);
    expect((await send(`/COUNTER/${id}/call/increment`, { headers: { "x-actorstore-name": "%E0%A4%A" } })).status).toBe(
      400,
    );
    expect((await send(`/COUNTER/${id}/call/increment`, { body: new Uint8Array([0xff, 0x0f, 0x41]) })).status).toBe(
      400,
    );
    // A serialized number, not an argument array.
    expect(
      (await send(`/COUNTER/${id}/call/increment`, { body: new Uint8Array([0xff, 0x0f, 0x49, 0x02]) })).status,
    ).toBe(400);
    expect((await send(`/COUNTER/${id}/bogus/increment`)).status).toBe(400);
    expect((await send(`/__proto__/${id}/call/increment`)).status).toBe(400);
    expect((await send(`/COUNTER/${"0".repeat(64)}/call/increment`)).status).toBe(400);
    expect((await fetch(`${node.address}/actorstore/v2/COUNTER/${id}/call/increment`, { method: "POST" })).status).toBe(
      404,
    );
    const big = await send(`/COUNTER/${id}/call/increment`, { body: new Uint8Array(MAX_FORWARDED_RPC_BYTES + 1) });
    expect(big.status).toBe(413);

    // Nothing above ran on the object, and the host still serves it.
    expect(await node.env.COUNTER.get(id).increment(1)).toBe(2);
    expect(unhandled).toEqual([]);
  }, 90_000);

  test("a sender that hangs up in the middle of its body does not crash the host", async () => {
    const node = await startNode("host-a");
    const id = node.env.COUNTER.idFromName("x");
    expect(await node.env.COUNTER.get(id).increment(1)).toBe(1);
    const path = `/actorstore/v1/COUNTER/${id}/call/increment`;
    await raw(node, `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc`, 100);
    // A declared length over the limit is refused before the body is read.
    const refused = await raw(
      node,
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${MAX_FORWARDED_RPC_BYTES + 1}\r\n\r\nabc`,
    );
    expect(refused).toMatch(/^HTTP\/1\.1 413 /);
    // Let the broken request's rejection surface, if it would.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(unhandled).toEqual([]);
    expect(await node.env.COUNTER.get(id).increment(1)).toBe(2);
  });

  test("a forwarded result that cannot be cloned fails with the same DataCloneError as on one host", async () => {
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await a.membership.beat();
    await b.membership.beat();
    const name = Array.from({ length: 40 }, (_, i) => `n${i}`).find(
      (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-b",
    ) as string;
    for (const node of [a, b]) {
      const stub = node.env.COUNTER.getByName(name);
      const plain = await stub.plain().catch((e: unknown) => e);
      expect(plain).toBeInstanceOf(DOMException);
      expect(plain).toMatchObject({
        name: "DataCloneError",
        message: 'Could not serialize object of type "Plain". This type does not support serialization.',
      });
      const fn = await stub.fn().catch((e: unknown) => e);
      expect(fn).toBeInstanceOf(DOMException);
      expect(fn).toMatchObject({ name: "DataCloneError", message: "() => 1 could not be cloned." });
    }
    expect(a.stats().forwarded).toBeGreaterThan(0);
  });

  test("names of every spelling reach their owner from another host, with ctx.id.name intact", async () => {
    const a = await startNode("host-a");
    const b = await startNode("host-b");
    await a.membership.beat();
    await b.membership.beat();
    const spellings = ["", "%", "a/b?c#d", "%E0%A4%A", "\u00e9", "😀", "x\uD800", "\uDC00y", "z".repeat(50_000)];
    let forwarded = 0;
    for (const base of spellings) {
      // Make each name owned by b, so that a forwards it.
      const name = Array.from({ length: 64 }, (_, i) => `${base}${i}`).find(
        (n) => a.ownerOf("COUNTER", a.env.COUNTER.idFromName(n)) === "host-b",
      ) as string;
      expect(await a.env.COUNTER.getByName(name).whoAmI()).toBe(name);
      forwarded++;
    }
    expect(a.stats().forwarded).toBeGreaterThanOrEqual(forwarded);
  });
});
