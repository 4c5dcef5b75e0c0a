/**
 * `startApiServer`: the API handler over node:http. Loopback and a free port by default, so a test
 * can start one per file.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createApiHandler } from "./handler";
import { checkServerOptions, type StartApiServerOptions } from "./options";

/** A running API server. */
export interface ApiServer {
  /** The API root, e.g. `http://127.0.0.1:8787/client/v4`: give it to the SDK as `baseURL`. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections, waits for requests in flight, and closes the storage. */
  close(): Promise<void>;
}

async function toRequest(req: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] ?? "";
    const value = req.rawHeaders[i + 1] ?? "";
    try {
      headers.append(name, value);
    } catch {
      // node:http has already refused what Headers would; anything left is dropped, never echoed.
    }
  }
  const method = req.method ?? "GET";
  const body = chunks.length === 0 || method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks);
  return new Request(new URL(req.url ?? "/", origin), { method, headers, ...(body === undefined ? {} : { body }) });
}

async function write(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, { ...headers, "content-length": String(body.length) });
  res.end(body);
}

/**
 * Starts the v4 API on `hostname:port` (loopback and a free port by default) and resolves once it
 * listens and its state is loaded.
 *
 * @example
 * ```ts
 * import { startApiServer } from "actorstore/server";
 * import Cloudflare from "cloudflare";
 * const server = await startApiServer({ credentials: { tokens: ["local-token"] }, fixture: "./fixture.json" });
 * const cf = new Cloudflare({ apiToken: "local-token", baseURL: server.url });
 * for await (const zone of cf.zones.list()) console.log(zone.name);
 * await server.close();
 * ```
 */
export async function startApiServer(options: StartApiServerOptions): Promise<ApiServer> {
  checkServerOptions(options);
  const { port = 0, hostname = "127.0.0.1", ...handlerOptions } = options;
  const handler = createApiHandler(handlerOptions);
  try {
    await handler.ready();
  } catch (e) {
    await handler.close();
    throw e;
  }
  const http = await import("node:http");
  let origin = "";
  const server = http.createServer((req, res) => {
    toRequest(req, origin)
      .then(handler)
      .then((response) => write(res, response))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const actualPort = typeof address === "object" && address !== null ? address.port : port;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  origin = `http://${host}:${actualPort}`;
  return {
    url: `${origin}/client/v4`,
    port: actualPort,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await handler.close();
    },
  };
}
