/**
 * The cluster bucket's requests end within `requestTimeoutMs` (on the injected clock): a store that
 * accepts a request and never answers, or stops in the middle of its answer, is given up on and
 * asked again, and after the last attempt the error says so without a credential. A loopback
 * server plays the store; no real time passes in the waits.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { ClusterBucket } from "../../src/cluster/bucket";
import { ActorStoreError } from "../../src/errors";
import { FakeClock } from "../../src/util/clock";

const SECRET = "secret-key-that-must-not-leak";

interface Arrival {
  req: IncomingMessage;
  res: ServerResponse;
  /** Resolves when the connection of this request closes (the client gave up, or the answer ended). */
  closed: Promise<void>;
  isClosed(): boolean;
}

interface Store {
  endpoint: string;
  /** Resolves with the next request to arrive (queued if it came already). */
  next(): Promise<Arrival>;
  server: Server;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

async function store(): Promise<Store> {
  const arrived: Arrival[] = [];
  const waiting: Array<(r: Arrival) => void> = [];
  const server = createServer((req, res) => {
    let isClosed = false;
    const closed = new Promise<void>((resolve) =>
      res.on("close", () => {
        isClosed = true;
        resolve();
      }),
    );
    const entry: Arrival = { req, res, closed, isClosed: () => isClosed };
    const w = waiting.shift();
    if (w) w(entry);
    else arrived.push(entry);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    server,
    next: () => {
      const e = arrived.shift();
      return e ? Promise.resolve(e) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}

function bucketOn(endpoint: string, clock: FakeClock, requestTimeoutMs?: number): ClusterBucket {
  return new ClusterBucket(
    {
      endpoint,
      bucket: "cluster",
      prefix: "c/",
      credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: SECRET },
      ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
    },
    clock,
  );
}

describe("cluster bucket: request timeout", () => {
  test("a store that never answers: each attempt is aborted after requestTimeoutMs, and the last error says so", async () => {
    const s = await store();
    const clock = new FakeClock();
    const bucket = bucketOn(s.endpoint, clock, 1_000);
    const result = bucket.get("members/a.json").then(
      () => null,
      (e: unknown) => e,
    );
    for (let attempt = 0; attempt < 4; attempt++) {
      const { req, closed, isClosed } = await s.next();
      expect(req.method).toBe("GET");
      await clock.advance(999);
      // Not yet given up: after a few rounds of I/O the request is still open on the server.
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(isClosed()).toBe(false);
      await clock.advance(1);
      await closed; // aborted: the connection is closed
      if (attempt < 3) await clock.advance(25 * 2 ** attempt); // the wait before the next attempt
    }
    const error = await result;
    expect(error).toBeInstanceOf(ActorStoreError);
    expect((error as ActorStoreError).code).toBe("ERR_UNAVAILABLE");
    expect((error as Error).message).toContain("4 of 4 attempts did not end within 1000 ms");
    expect((error as Error).message).toContain("c/members/a.json");
    expect((error as Error).message).not.toContain(SECRET);
  });

  test("an answer whose body stops half-way counts as no answer; the next attempt's answer is used", async () => {
    const s = await store();
    const clock = new FakeClock();
    const bucket = bucketOn(s.endpoint, clock, 500);
    const result = bucket.get("holders/ns/x.json");
    const first = await s.next();
    first.res.writeHead(200, { "content-length": "100" });
    first.res.write('{"host":');
    await clock.advance(500);
    await first.closed;
    await clock.advance(25);
    const second = await s.next();
    second.res.end('{"host":"b","epoch":2}');
    expect(await result).toBe('{"host":"b","epoch":2}');
  });

  test("a store that answers within the timeout is not cut off, and Infinity never times out", async () => {
    const s = await store();
    const clock = new FakeClock();
    const bucket = bucketOn(s.endpoint, clock, Number.POSITIVE_INFINITY);
    const result = bucket.put("members/a.json", "{}");
    const { res } = await s.next();
    await clock.advance(10 * 60_000);
    res.end();
    await expect(result).resolves.toBeUndefined();
  });

  test("requestTimeoutMs must be a positive integer or Infinity", () => {
    const clock = new FakeClock();
    for (const bad of [0, -1, 1.5, Number.NaN, "30" as unknown as number]) {
      expect(() => bucketOn("http://127.0.0.1:1", clock, bad)).toThrow(/requestTimeoutMs/);
    }
  });
});

describe("cluster bucket: credentials", () => {
  test("a key id or session token that cannot go into a request header is a TypeError naming the option, never the value", () => {
    for (const credentials of [
      { accessKeyId: "AKIDEXAMPLE\n", secretAccessKey: SECRET },
      { accessKeyId: "AKID EXAMPLE", secretAccessKey: SECRET },
      { accessKeyId: "AKIDEXAMPLE", secretAccessKey: SECRET, sessionToken: "token-Qx7\nrest" },
      { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "" },
    ]) {
      let error: unknown;
      try {
        new ClusterBucket({ endpoint: "http://127.0.0.1:1", bucket: "cluster", credentials });
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(credentials)).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(/cluster\.bucket: option "credentials\./);
      for (const secret of ["AKID", "token-Qx7", SECRET]) expect((error as Error).message).not.toContain(secret);
    }
  });
});

describe("cluster bucket: endpoint", () => {
  test("an endpoint with credentials, a query or a fragment is refused (a password in it would reach every error message)", () => {
    const clock = new FakeClock();
    for (const bad of [
      "http://user:pw@127.0.0.1:1",
      "http://user@127.0.0.1:1",
      "http://127.0.0.1:1/?x=1",
      "http://127.0.0.1:1#f",
      "http://127.0.0.1:1/?",
    ]) {
      expect(() => bucketOn(bad, clock), bad).toThrow(TypeError);
      expect(() => bucketOn(bad, clock), bad).toThrow(/endpoint/);
    }
    for (const good of ["http://127.0.0.1:1", "https://s3.example.com/", "http://[::1]:9000", "http://gw.local/base"]) {
      expect(bucketOn(good, clock).where, good).toBe(`${good.replace(/\/+$/, "")}/cluster/c/`);
    }
  });
});
