/**
 * How startApiServer holds request bodies: never before the credentials and the route are checked,
 * once each (decoded as they arrive), and, for bodies near the limit, one at a time, so that
 * several large uploads at once cannot hold several times the limit in memory.
 */
import { type ClientRequest, type IncomingMessage, request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { type ApiServer, startApiServer } from "../../src/server/index";
import { CREDENTIALS, ENT_ZONE, FIXTURE, TOKEN } from "./helpers";

const LIMIT = 64 * 1024;
let uploads = 0;
const servers: ApiServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function start(): Promise<ApiServer> {
  const server = await startApiServer({ credentials: CREDENTIALS, fixture: FIXTURE, maxRequestBytes: LIMIT });
  servers.push(server);
  return server;
}

interface Upload {
  readonly req: ClientRequest;
  /** Settles with the status once the answer has arrived. */
  readonly answered: Promise<number>;
  /** True once the answer has arrived. */
  done(): boolean;
}

/**
 * A POST of a filter whose JSON is padded to `length` bytes (announced), of which only the first
 * `sent` are written: the rest waits for `finish`.
 */
function upload(server: ApiServer, length: number, sent: number, token = TOKEN): Upload & { finish(): void } {
  uploads += 1;
  const json = JSON.stringify([{ expression: `ip.src eq 192.0.2.${uploads}` }]);
  const body = Buffer.from(json.padEnd(length, " "));
  let done = false;
  const req = request(`${server.url}/zones/${ENT_ZONE}/filters`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": length },
  });
  const answered = new Promise<number>((resolve, reject) => {
    req.on("response", (res: IncomingMessage) => {
      res.resume();
      res.on("end", () => {
        done = true;
        resolve(res.statusCode ?? 0);
      });
    });
    req.on("error", reject);
  });
  req.write(body.subarray(0, sent));
  req.flushHeaders();
  return { req, answered, done: () => done, finish: () => req.end(body.subarray(sent)) };
}

/** Round trips through the server on other connections: what was sent before has been read by then. */
async function roundTrips(server: ApiServer, n = 3): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await fetch(`${server.url}/zones/${ENT_ZONE}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(r.status).toBe(200);
    await r.arrayBuffer();
  }
}

describe("startApiServer: request bodies", () => {
  it("a large body waits while another is held; it is read once that one is answered", async () => {
    const server = await start();
    const first = upload(server, LIMIT, LIMIT / 2);
    await roundTrips(server);
    const second = upload(server, LIMIT, LIMIT);
    second.finish();
    await roundTrips(server);
    // The second body is whole at the server, but it is not taken while the first one is held.
    expect([first.done(), second.done()]).toEqual([false, false]);
    first.finish();
    expect(await first.answered).toBe(200);
    expect(await second.answered).toBe(200);
  });

  it("small bodies are read side by side with a stalled one: no request waits for another's upload", async () => {
    const server = await start();
    const stalled = upload(server, LIMIT / 2, 16);
    await roundTrips(server);
    const small = upload(server, LIMIT / 4, LIMIT / 4);
    small.finish();
    expect(await small.answered).toBe(200);
    expect(stalled.done()).toBe(false);
    stalled.finish();
    expect(await stalled.answered).toBe(200);
  });

  it("a body with refused credentials is answered before it is sent whole, and never held", async () => {
    const server = await start();
    const refused = upload(server, LIMIT, 16, "not-a-known-token");
    expect(await refused.answered).toBe(403);
    // Nothing was reserved for it: a body of the whole limit is read at once.
    const next = upload(server, LIMIT, LIMIT);
    next.finish();
    expect(await next.answered).toBe(200);
    refused.req.destroy();
  });
});
