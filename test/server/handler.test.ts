/**
 * createApiHandler and startApiServer without the SDK: options that say when they are wrong,
 * state that survives a restart in a directory, handlers that never share in-memory state, the
 * fixture refused whole when it is wrong.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createApiHandler, startApiServer } from "../../src/server/index";
import { ACCOUNT_A, CREDENTIALS, ENT_ZONE, FIXTURE, TOKEN } from "./helpers";
import { responseProblems } from "./schema";

const AUTH = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "actorstore-api-"));
  dirs.push(dir);
  return dir;
}

const base = "http://local/client/v4";

/** A node:http response's status and whole body, as text. */
async function answerOf(res: import("node:http").IncomingMessage): Promise<{ status: number; body: string }> {
  res.setEncoding("utf8");
  let body = "";
  for await (const chunk of res) body += chunk as string;
  return { status: res.statusCode ?? 0, body };
}
const filterBody = JSON.stringify([{ expression: 'http.request.uri.path contains "/admin"' }]);

describe("options", () => {
  it.each([
    [{ credentials: CREDENTIALS, directroy: "x" }, /directroy is not an option/],
    [{ credentials: CREDENTIALS, directory: 5 }, /directory must be a non-empty string \(got number\)/],
    [{ credentials: CREDENTIALS, clock: {} }, /clock must be a clock/],
    [{ credentials: CREDENTIALS, idGenerator: "x" }, /idGenerator must be a function/],
    [{}, /credentials must be an object/],
    [{ credentials: { tokens: [] } }, /at least one token or key/],
    [{ credentials: { token: ["x"] } }, /credentials\.token is not an option/],
    [{ credentials: { keys: [{ email: "a@b.co" }] } }, /credentials\.keys must be an array of \{ email, key \}/],
    [null, /options must be an object/],
  ])("createApiHandler: %j is a TypeError naming the option", (options, message) => {
    expect(() => createApiHandler(options as never)).toThrow(TypeError);
    expect(() => createApiHandler(options as never)).toThrow(message);
  });

  it.each([
    [{ tokens: ["local:secret"] }, /credentials\.tokens\[0\] can never authenticate/],
    [{ tokens: ["ok-token", " padded"] }, /credentials\.tokens\[1\] can never authenticate/],
    [{ keys: [{ email: "me@example.com", key: "my-secret-key" }] }, /credentials\.keys\[0\] can never authenticate/],
    [{ keys: [{ email: "me", key: "c2547eb745079dac9320b638f5e225cf483cc" }] }, /credentials\.keys\[0\] can never/],
  ])(
    "createApiHandler: credentials %j that the header checks would refuse are a TypeError, never quoted",
    (credentials, message) => {
      const error = (() => {
        try {
          createApiHandler({ credentials });
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(TypeError);
      expect(String(error)).toMatch(message);
      for (const secret of ["local:secret", "padded", "my-secret-key", "c2547eb745079dac9320b638f5e225cf483cc"])
        expect(String(error)).not.toContain(secret);
    },
  );

  it.each([
    [{ credentials: CREDENTIALS, port: "8787" }, /port must be an integer from 0 to 65535/],
    [{ credentials: CREDENTIALS, port: 70000 }, /port must be an integer/],
    [{ credentials: CREDENTIALS, hostname: "" }, /hostname must be a non-empty string/],
    [{ credentials: CREDENTIALS, prot: 1 }, /prot is not an option/],
  ])("startApiServer: %j is a TypeError naming the option", async (options, message) => {
    await expect(startApiServer(options as never)).rejects.toThrow(TypeError);
    await expect(startApiServer(options as never)).rejects.toThrow(message);
  });

  it("an idGenerator that returns something other than a 32-hex id is named, not blamed on the fixture or the storage", async () => {
    const seeding = createApiHandler({ credentials: CREDENTIALS, fixture: FIXTURE, idGenerator: () => "x" });
    const error = await seeding.ready().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error)).toMatch(/idGenerator must return 32 lower-case hex characters/);
    expect(String(error)).not.toMatch(/fixture|Could not route/);
    await seeding.close();
    // Good while seeding, bad afterwards: the request's 500 says why, not that storage failed.
    let calls = 0;
    const later = createApiHandler({
      credentials: CREDENTIALS,
      fixture: FIXTURE,
      idGenerator: () => (++calls < 1000 ? calls.toString(16).padStart(32, "0") : "NOT-HEX"),
    });
    await later.ready();
    calls = 1000;
    const post = await later(
      new Request(`${base}/zones/${ENT_ZONE}/filters`, { method: "POST", headers: AUTH, body: filterBody }),
    );
    expect(post.status).toBe(500);
    // Every retry would fail the same way: the SDK is told not to send it again.
    expect(post.headers.get("x-should-retry")).toBe("false");
    const body = (await post.json()) as { errors: { code: number; message: string }[] };
    expect(body.errors[0]?.message).toMatch(/idGenerator must return 32 lower-case hex characters/);
    await later.close();
  });

  it("a fixture with a bad zone name is refused whole, naming every problem", async () => {
    const handler = createApiHandler({
      credentials: CREDENTIALS,
      fixture: {
        accounts: [{ id: ACCOUNT_A, name: "A" }],
        zones: [
          { name: "localhost", account: ACCOUNT_A, plan: "pro" },
          { name: "my_site.com", account: ACCOUNT_A, plan: "gold" },
          { name: "ok.example.com", account: ACCOUNT_A, plan: "pro", previous_waf: { sensitivity: "extreme" } },
        ],
      },
    });
    const error = await handler.ready().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error)).toMatch(/zones\[0\]\.name/);
    expect(String(error)).toMatch(/zones\[1\]\.name/);
    expect(String(error)).toMatch(/zones\[1\]\.plan/);
    expect(String(error)).toMatch(/zones\[2\].*sensitivity/);
    await handler.close();
  });

  it("a fixture pack without certificates or with an authority the schema does not list is refused", async () => {
    const pack = { id: "c".repeat(32), type: "advanced", hosts: ["a.example.com"], status: "active" };
    const handler = createApiHandler({
      credentials: CREDENTIALS,
      fixture: {
        accounts: [{ id: ACCOUNT_A, name: "A" }],
        zones: [
          {
            name: "a.example.com",
            account: ACCOUNT_A,
            plan: "pro",
            certificate_packs: [pack, { ...pack, certificates: [], certificate_authority: "digicert" }],
          },
        ],
      },
    });
    const error = await handler.ready().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error)).toMatch(/zones\[0\]\.certificate_packs\[0\]\.certificates/);
    expect(String(error)).toMatch(/zones\[0\]\.certificate_packs\[1\]\.certificate_authority/);
    await handler.close();
  });
});

describe("state", () => {
  it("two handlers never share in-memory state", async () => {
    const a = createApiHandler({ credentials: CREDENTIALS, fixture: FIXTURE });
    const b = createApiHandler({ credentials: CREDENTIALS, fixture: FIXTURE });
    const created = await a(
      new Request(`${base}/zones/${ENT_ZONE}/filters`, { method: "POST", headers: AUTH, body: filterBody }),
    );
    expect(created.status).toBe(200);
    const inA = (await (await a(new Request(`${base}/zones/${ENT_ZONE}/filters`, { headers: AUTH }))).json()) as {
      result: unknown[];
    };
    const inB = (await (await b(new Request(`${base}/zones/${ENT_ZONE}/filters`, { headers: AUTH }))).json()) as {
      result: unknown[];
    };
    expect(inA.result).toHaveLength(1);
    expect(inB.result).toHaveLength(0);
    await Promise.all([a.close(), b.close()]);
  });

  it("a directory keeps the state across a restart; the fixture only seeds an empty directory", async () => {
    const directory = await tempDir();
    const fixturePath = join(directory, "..", `${directory.split("/").pop()}-fixture.json`);
    await writeFile(fixturePath, JSON.stringify(FIXTURE));
    dirs.push(fixturePath);
    const first = await startApiServer({ credentials: CREDENTIALS, fixture: fixturePath, directory });
    const post = await fetch(`${first.url}/zones/${ENT_ZONE}/filters`, {
      method: "POST",
      headers: AUTH,
      body: filterBody,
    });
    const filterId = ((await post.json()) as { result: { id: string }[] }).result[0]?.id;
    const accept = await fetch(`${first.url}/user/invites/${FIXTURE.invites[0]?.id}`, {
      method: "PATCH",
      headers: AUTH,
      body: JSON.stringify({ status: "accepted" }),
    });
    expect(accept.status).toBe(200);
    await first.close();

    // Restarted with a different fixture: the directory's state wins.
    const second = await startApiServer({
      credentials: CREDENTIALS,
      fixture: { accounts: [], zones: [] },
      directory,
    });
    const got = await fetch(`${second.url}/zones/${ENT_ZONE}/filters/${filterId}`, { headers: AUTH });
    expect(got.status).toBe(200);
    const invite = (await (
      await fetch(`${second.url}/user/invites/${FIXTURE.invites[0]?.id}`, { headers: AUTH })
    ).json()) as {
      result: { status: string };
    };
    expect(invite.result.status).toBe("accepted");
    const zones = (await (await fetch(`${second.url}/zones?per_page=50`, { headers: AUTH })).json()) as {
      result_info: { total_count: number };
    };
    expect(zones.result_info.total_count).toBe(FIXTURE.zones.length);
    await second.close();
  });

  it("a port that is taken fails the start and releases the directory: a retry on another port starts on the same state", async () => {
    const directory = await tempDir();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = blocker.address() as AddressInfo;
      await expect(
        startApiServer({ credentials: CREDENTIALS, fixture: FIXTURE, directory, port }),
      ).rejects.toMatchObject({
        code: "EADDRINUSE",
      });
      const retry = await startApiServer({ credentials: CREDENTIALS, fixture: FIXTURE, directory });
      const zone = await fetch(`${retry.url}/zones/${ENT_ZONE}`, { headers: AUTH });
      expect(zone.status).toBe(200);
      await retry.close();
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it("concurrent writes are applied one after another, none lost", async () => {
    const handler = createApiHandler({ credentials: CREDENTIALS, fixture: FIXTURE });
    const bodies = Array.from({ length: 12 }, (_, i) => JSON.stringify([{ expression: `ip.src eq 192.0.2.${i + 1}` }]));
    const responses = await Promise.all(
      bodies.map((body) =>
        handler(new Request(`${base}/zones/${ENT_ZONE}/filters`, { method: "POST", headers: AUTH, body })),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(12).fill(200));
    const listed = (await (
      await handler(new Request(`${base}/zones/${ENT_ZONE}/filters?per_page=100`, { headers: AUTH }))
    ).json()) as {
      result: unknown[];
    };
    expect(listed.result).toHaveLength(12);
    await handler.close();
  });

  it("a JSON body without Content-Type: application/json, or malformed, is 400 with the platform's codes", async () => {
    const handler = createApiHandler({ credentials: CREDENTIALS, fixture: FIXTURE });
    const noType = await handler(
      new Request(`${base}/zones/${ENT_ZONE}/filters`, {
        method: "POST",
        headers: { authorization: AUTH.authorization },
        body: filterBody,
      }),
    );
    expect(noType.status).toBe(400);
    expect(((await noType.json()) as { errors: { code: number }[] }).errors[0]?.code).toBe(6003);
    const malformed = await handler(
      new Request(`${base}/zones/${ENT_ZONE}/filters`, { method: "POST", headers: AUTH, body: "[{" }),
    );
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { errors: { code: number }[] }).errors[0]?.code).toBe(6007);
    const none = await handler(new Request(`${base}/zones/${ENT_ZONE}`));
    expect(none.status).toBe(401);
    await handler.close();
  });
});

describe("the server's own failures conform to the published schema", () => {
  it("401, 400 (content type, malformed JSON, malformed zone id), 403, 404 and 405 are failure envelopes of their operation", async () => {
    const handler = createApiHandler({ credentials: CREDENTIALS, fixture: FIXTURE });
    const zone = `/client/v4/zones/${ENT_ZONE}`;
    const cases: [string, string, RequestInit, number][] = [
      ["GET", zone, {}, 401],
      ["GET", zone, { headers: { authorization: "Bearer not-a-known-token" } }, 403],
      ["GET", zone, { headers: { authorization: "Basic x" } }, 400],
      ["GET", zone, { headers: { "x-auth-email": "nobody@example.com", "x-auth-key": "0".repeat(37) } }, 403],
      ["POST", `${zone}/filters`, { headers: { authorization: AUTH.authorization }, body: filterBody }, 400],
      ["POST", `${zone}/filters`, { headers: AUTH, body: "[{" }, 400],
      ["GET", "/client/v4/zones/nope", { headers: AUTH }, 400],
      ["GET", `/client/v4/zones/${"f".repeat(32)}/dns_records`, { headers: AUTH }, 404],
      ["GET", `${zone}/filters/${"0".repeat(32)}`, { headers: AUTH }, 404],
      ["PATCH", zone, { headers: AUTH }, 405],
    ];
    for (const [method, path, init, status] of cases) {
      const response = await handler(new Request(`http://local${path}`, { ...init, method }));
      expect(response.status, `${method} ${path}`).toBe(status);
      // A method the schema has no operation for is checked as the GET of the same path fails.
      const checkedAs = status === 405 ? "GET" : method;
      expect(responseProblems(checkedAs, path, status, await response.json())).toEqual([]);
    }
    await handler.close();
  });
});

describe("HEAD", () => {
  it("is answered as GET is, without the body: same status and headers, the GET body's length", async () => {
    const handler = createApiHandler({ credentials: CREDENTIALS, fixture: FIXTURE });
    for (const [path, status] of [
      [`/client/v4/zones/${ENT_ZONE}`, 200],
      [`/client/v4/zones/${ENT_ZONE}/dns_records?per_page=2`, 200],
      ["/client/v4/user/invites", 200],
      [`/client/v4/zones/${ENT_ZONE}/filters?per_page=1`, 400],
      [`/client/v4/zones/${"f".repeat(32)}`, 404],
      ["/client/v4/nowhere", 404],
    ] as const) {
      const get = await handler(new Request(`http://local${path}`, { headers: AUTH }));
      const head = await handler(new Request(`http://local${path}`, { method: "HEAD", headers: AUTH }));
      const getBody = await get.text();
      expect([head.status, head.headers.get("content-type")], path).toEqual([status, "application/json"]);
      expect(get.status, path).toBe(status);
      expect(await head.text(), path).toBe("");
      expect(head.headers.get("content-length"), path).toBe(String(Buffer.byteLength(getBody)));
    }
    // Credentials are checked as for GET.
    expect((await handler(new Request(`http://local/client/v4/zones/${ENT_ZONE}`, { method: "HEAD" }))).status).toBe(
      401,
    );
    // A path with a GET route allows HEAD too.
    const patch = await handler(
      new Request(`http://local/client/v4/zones/${ENT_ZONE}`, { method: "PATCH", headers: AUTH }),
    );
    expect([patch.status, patch.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
    await handler.close();
  });

  it("over node:http: the headers of GET and no body", async () => {
    const server = await startApiServer({ credentials: CREDENTIALS, fixture: FIXTURE });
    const { request } = await import("node:http");
    const { hostname, port } = new URL(server.url);
    const send = (method: string) =>
      new Promise<{ status: number; length: string | undefined; body: string }>((resolve, reject) => {
        const req = request(
          {
            hostname,
            port,
            method,
            path: `/client/v4/zones/${ENT_ZONE}`,
            headers: { authorization: AUTH.authorization },
          },
          (res) => answerOf(res).then((a) => resolve({ ...a, length: res.headers["content-length"] }), reject),
        );
        req.on("error", reject);
        req.end();
      });
    const get = await send("GET");
    const head = await send("HEAD");
    expect(get.status).toBe(200);
    expect(head).toEqual({ status: 200, length: String(Buffer.byteLength(get.body)), body: "" });
    await server.close();
  });
});

describe("startApiServer: request targets and methods the fetch API cannot carry", () => {
  // node:http hands over what a fetch Request refuses or reads differently; each answer must
  // still be an envelope, and a path must never be read as a host.
  async function raw(url: string, method: string, path: string): Promise<{ status: number; body: string }> {
    const { request } = await import("node:http");
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const req = request({ hostname, port, method, path, headers: { authorization: AUTH.authorization } }, (res) =>
        answerOf(res).then(resolve, reject),
      );
      req.on("error", reject);
      req.end();
    });
  }
  const codes = (body: string) => (JSON.parse(body) as { errors: { code: number }[] }).errors.map((e) => e.code);

  it("TRACE is 405 (known path) or 404 in the envelope, not an empty 500", async () => {
    const server = await startApiServer({ credentials: CREDENTIALS, fixture: FIXTURE });
    const known = await raw(server.url, "TRACE", `/client/v4/zones/${ENT_ZONE}`);
    expect(known.status).toBe(405);
    expect(codes(known.body)).toEqual([7000]);
    const unknown = await raw(server.url, "TRACE", "/client/v4/nowhere");
    expect(unknown.status).toBe(404);
    expect(codes(unknown.body)).toEqual([7000]);
    await server.close();
  });

  it("a path starting with // stays a path: //x/client/v4/zones is not /client/v4/zones on host x", async () => {
    const server = await startApiServer({ credentials: CREDENTIALS, fixture: FIXTURE });
    const doubled = await raw(server.url, "GET", "//x/client/v4/zones");
    expect(doubled.status).toBe(404);
    expect(codes(doubled.body)).toEqual([7000]);
    // Empty segments inside the path are still ignored, as matchRoute documents.
    const inner = await raw(server.url, "GET", "/client/v4//zones");
    expect(inner.status).toBe(200);
    await server.close();
  });

  it("a 7003 quotes an encoded slash as %2F: the path it names is not a different, valid one", async () => {
    const server = await startApiServer({ credentials: CREDENTIALS, fixture: FIXTURE });
    const slash = await raw(server.url, "GET", `/client/v4/zones/${ENT_ZONE}%2Fdns_records`);
    expect(slash.status).toBe(400);
    const errors = (JSON.parse(slash.body) as { errors: { code: number; message: string }[] }).errors;
    expect(errors.map((e) => e.code)).toEqual([7003, 7000]);
    expect(errors[0]?.message).toBe(
      `Could not route to /zones/${ENT_ZONE}%2Fdns_records, perhaps your object identifier is invalid?`,
    );
    // A percent sign is shown escaped too, so %252F (a literal "%2F") reads differently from %2F.
    const percent = await raw(server.url, "GET", "/client/v4/zones/a%252Fb");
    expect(JSON.parse(percent.body).errors[0].message).toContain("/zones/a%252Fb,");
    // Other characters read as they were decoded.
    const snow = await raw(server.url, "GET", "/client/v4/zones/%E2%98%83");
    expect(JSON.parse(snow.body).errors[0].message).toContain("/zones/\u2603,");
    await server.close();
  });

  it("a request node:http cannot parse is answered in the envelope (400, 431 for oversized headers), quoting none of it", async () => {
    const { connect } = await import("node:net");
    const server = await startApiServer({ credentials: CREDENTIALS, fixture: FIXTURE });
    const { port } = new URL(server.url);
    const send = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), "127.0.0.1", () => socket.write(text));
        let got = "";
        socket.on("data", (d: Buffer) => {
          got += d.toString();
        });
        socket.on("end", () => resolve(got));
        socket.on("error", reject);
      });
    const secret = "s3cr3t-T0ken-value";
    const cases: [string, number][] = [
      [`GARBAGE ${secret}\r\n\r\n`, 400],
      [`GET /client/v4/zones HTTP/1.1\r\nHost: x\r\nAuthorization Bearer ${secret}\r\n\r\n`, 400],
      [`GET /client/v4/zones HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, 431],
    ];
    for (const [text, status] of cases) {
      const answer = await send(text);
      const [head = "", body = ""] = answer.split("\r\n\r\n");
      expect(head.split("\r\n")[0]).toBe(
        `HTTP/1.1 ${status} ${status === 431 ? "Request Header Fields Too Large" : "Bad Request"}`,
      );
      expect(head.toLowerCase()).toContain("content-type: application/json");
      const envelope = JSON.parse(body) as { success: boolean; result: unknown; errors: { code: number }[] };
      expect([envelope.success, envelope.result, envelope.errors.map((e) => e.code)]).toEqual([false, null, [6003]]);
      expect(answer).not.toContain(secret);
    }
    // The server still serves.
    expect((await fetch(`${server.url}/zones`, { headers: AUTH })).status).toBe(200);
    await server.close();
  });

  it.each(["//evil.example:99999/zones", "http://[::1/zones"])(
    "%s, which no URL parser reads, is an envelope, not an empty 500",
    async (target) => {
      const server = await startApiServer({ credentials: CREDENTIALS, fixture: FIXTURE });
      const answer = await raw(server.url, "GET", target);
      expect(answer.status).toBe(404);
      expect(codes(answer.body)).toEqual([7000]);
      await server.close();
    },
  );
});

describe("startApiServer: the request body limit", () => {
  const filtersUrl = (url: string) => `${url}/zones/${ENT_ZONE}/filters`;
  const listFilters = async (url: string) =>
    ((await (await fetch(filtersUrl(url), { headers: AUTH })).json()) as { result: unknown[] }).result.length;

  it("a body of exactly maxRequestBytes is served; one byte more is 413 1005, closes the connection and changes nothing", async () => {
    const limit = 4096;
    const server = await startApiServer({ credentials: CREDENTIALS, fixture: FIXTURE, maxRequestBytes: limit });
    const before = await listFilters(server.url);
    // JSON may end in spaces: the same request, padded to the exact size.
    const fits = filterBody.padEnd(limit, " ");
    const ok = await fetch(filtersUrl(server.url), { method: "POST", headers: AUTH, body: fits });
    expect(ok.status).toBe(200);
    const over = await fetch(filtersUrl(server.url), {
      method: "POST",
      headers: AUTH,
      body: JSON.stringify([{ expression: 'http.host eq "b.example"' }]).padEnd(limit + 1, " "),
    });
    expect(over.status).toBe(413);
    expect(over.headers.get("connection")).toBe("close");
    const body = (await over.json()) as { success: boolean; errors: { code: number; message: string }[] };
    expect(body.success).toBe(false);
    expect(body.errors.map((e) => e.code)).toEqual([1005]);
    expect(body.errors[0]?.message).toContain(String(limit));
    expect(await listFilters(server.url)).toBe(before + 1);
    await server.close();
  });

  it("a body without a length that never ends is answered 413 once it passes the limit, not read to its end", async () => {
    const server = await startApiServer({ credentials: CREDENTIALS, fixture: FIXTURE, maxRequestBytes: 64 * 1024 });
    const before = await listFilters(server.url);
    const { request } = await import("node:http");
    let sent = 0;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(filtersUrl(server.url), { method: "POST", headers: AUTH }, (res) =>
        answerOf(res).then(resolve, reject),
      );
      req.on("error", reject);
      const chunk = "[".repeat(16 * 1024);
      // Sends for as long as the server reads: an endless body (chunked, no Content-Length).
      const pump = () => {
        while (!req.destroyed && req.write(chunk)) sent += chunk.length;
        if (!req.destroyed) req.once("drain", pump);
      };
      pump();
    });
    expect(answer.status).toBe(413);
    expect((JSON.parse(answer.body) as { errors: { code: number }[] }).errors.map((e) => e.code)).toEqual([1005]);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
    expect(await listFilters(server.url)).toBe(before);
    await server.close();
  });

  it.each([0, -1, 1.5, Number.NaN, "1024"])("maxRequestBytes %s is a TypeError naming it", async (bad) => {
    await expect(startApiServer({ credentials: CREDENTIALS, maxRequestBytes: bad as number })).rejects.toThrow(
      /maxRequestBytes must be a positive integer/,
    );
  });
});
