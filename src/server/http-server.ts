/**
 * `startApiServer`: the API handler over node:http. Loopback and a free port by default, so a test
 * can start one per file.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ERROR_CODES, fail, invalidRequestHeaders, noRoute } from "../api/envelope";
import { matchRoute } from "../api/service/routes";
import { createApiHandler, type IncomingCall, respond, SERVE_CALL } from "./handler";
import { checkServerOptions, DEFAULT_MAX_REQUEST_BYTES, type StartApiServerOptions } from "./options";

/** A running API server. */
export interface ApiServer {
  /** The API root, e.g. `http://127.0.0.1:8787/client/v4`: give it to the SDK as `baseURL`. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections, waits for requests in flight, and closes the storage. */
  close(): Promise<void>;
}

// Methods node:http accepts but the fetch `Request` constructor refuses (it throws on them).
const FETCH_FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);

/**
 * The URL of a request target. A target that starts with `/` is a path (RFC 9112 origin-form), so it
 * is appended to the origin as text: resolving `//x/zones` against the origin would read `x` as a
 * host and route `/zones`. Anything else (an absolute URL from a proxy) is read on its own.
 * `undefined` when no URL parser can read it.
 */
function requestUrl(target: string, origin: string): URL | undefined {
  try {
    return target.startsWith("/") ? new URL(`${origin}${target}`) : new URL(target);
  } catch {
    return undefined;
  }
}

/**
 * The answer to a method that node:http accepts and `Request` refuses, or `undefined` for any other
 * method: no route takes these methods, so they get what the route table says of any other (405
 * with `Allow` on a known path, else 404), whatever the credentials.
 */
function forbiddenMethodAnswer(method: string, url: URL): Response | undefined {
  if (!FETCH_FORBIDDEN_METHODS.has(method.toUpperCase())) return undefined;
  const match = matchRoute(method, url.pathname);
  if (match.ok) return respond(fail(405, noRoute()));
  return respond(match.response, match.allow === undefined ? {} : { allow: match.allow.join(", ") });
}

/** Answers without reading the body, which is drained so that the connection can be reused. */
function unread(req: IncomingMessage, response: Response): Promise<Response> {
  req.resume();
  return Promise.resolve(response);
}

/** The answer to a body larger than `maxRequestBytes`; its connection is closed once it is sent. */
function tooLarge(maxRequestBytes: number): Response {
  return respond(
    fail(413, {
      code: ERROR_CODES.requestTooLarge,
      message: `Request body is larger than ${maxRequestBytes} bytes, the most this server accepts (maxRequestBytes).`,
    }),
  );
}

/**
 * The answer to a request node:http could not parse (a malformed request line or header, headers
 * over its size limit), written straight to the socket before it is closed: the envelope with
 * `6003 Invalid request headers`, as every other answer is an envelope, instead of node:http's bare
 * status line. Nothing of the request is quoted.
 */
function unparsableRequest(error: NodeJS.ErrnoException): string {
  const [status, text] =
    error.code === "HPE_HEADER_OVERFLOW"
      ? [431, "Request Header Fields Too Large"]
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "Request Timeout"]
        : [400, "Bad Request"];
  const body = JSON.stringify(fail(status, invalidRequestHeaders([])).body);
  return [
    `HTTP/1.1 ${status} ${text}`,
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    "connection: close",
    "",
    body,
  ].join("\r\n");
}

/** Thrown while reading a body that grows past the limit; answered with {@link tooLarge}. */
class BodyTooLarge extends Error {}

/**
 * The body as text (UTF-8, as `Request.text()` decodes it): its chunks joined once at its end and
 * decoded, then dropped. Throws {@link BodyTooLarge} as soon as it passes `limit` bytes, without
 * reading the rest.
 */
async function readText(source: AsyncIterable<Uint8Array>, limit: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of source) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(chunks, size));
}

/**
 * How many body bytes the server holds at once: a request reserves its body's announced length
 * (the whole limit when it announces none) before reading it, and waits while that does not fit
 * beside the bodies being held, unless none is. Small bodies are read side by side; bodies near
 * the limit are read one after another (their clients wait, held back by TCP), so that several
 * large uploads at once cannot hold several times the limit in memory. A reservation is taken
 * whole, so two uploads never wait on each other.
 */
class BodyBudget {
  #held = 0;
  readonly #waiting: { bytes: number; admit: () => void }[] = [];
  constructor(readonly capacity: number) {}

  /** Resolves with the release function once `bytes` fit. */
  async reserve(bytes: number): Promise<() => void> {
    const n = Math.min(bytes, this.capacity);
    if (this.#held > 0 && this.#held + n > this.capacity) {
      await new Promise<void>((admit) => this.#waiting.push({ bytes: n, admit }));
    } else {
      this.#held += n;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held -= n;
      this.#admit();
    };
  }

  #admit(): void {
    // In arrival order; a waiting body is admitted once it fits, or once nothing else is held.
    while (this.#waiting.length > 0) {
      const next = this.#waiting[0] as { bytes: number; admit: () => void };
      if (this.#held > 0 && this.#held + next.bytes > this.capacity) return;
      this.#waiting.shift();
      this.#held += next.bytes;
      next.admit();
    }
  }
}

/**
 * The call the handler answers, built from node:http without a fetch `Request`: a `Request` would
 * take the body as one buffer (a copy of the chunks) and copy it again to read it as text.
 */
function toCall(
  req: IncomingMessage,
  url: URL,
  maxRequestBytes: number,
  budget: BodyBudget,
): { call: IncomingCall; settle: () => void } {
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
  let release: (() => void) | undefined;
  const call: IncomingCall = {
    method: req.method ?? "GET",
    url,
    headers,
    text: async () => {
      release = () => undefined;
      const length = Number(req.headers["content-length"]);
      const announced = Number.isSafeInteger(length) && length >= 0 && length <= maxRequestBytes ? length : undefined;
      release = await budget.reserve(announced ?? maxRequestBytes);
      return readText(req, maxRequestBytes);
    },
  };
  // Once answered: the body's reservation is returned (its text and parsed value are garbage by
  // then), and a body the handler did not need (refused credentials, a route without one) is
  // drained unread, so that the connection can be reused.
  const settle = () => {
    if (release === undefined) req.resume();
    else release();
  };
  return { call, settle };
}

async function write(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const body = Buffer.from(await response.arrayBuffer());
  // A HEAD answer has no body but keeps the length the handler told (the GET body's).
  const length =
    response.body === null && headers["content-length"] !== undefined ? headers["content-length"] : String(body.length);
  res.writeHead(response.status, { ...headers, "content-length": length });
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
  const { port = 0, hostname = "127.0.0.1", maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES, ...handlerOptions } = options;
  const handler = createApiHandler(handlerOptions);
  try {
    await handler.ready();
  } catch (e) {
    await handler.close();
    throw e;
  }
  const budget = new BodyBudget(maxRequestBytes);
  const http = await import("node:http");
  let origin = "";
  const answer = (req: IncomingMessage): Promise<Response> => {
    // An unreadable target is 404 `7000 No route for that URI`, as an undecodable path is.
    const url = requestUrl(req.url ?? "/", origin);
    if (url === undefined) return unread(req, respond(fail(404, noRoute())));
    const refused = forbiddenMethodAnswer(req.method ?? "GET", url);
    if (refused !== undefined) return unread(req, refused);
    const announced = Number(req.headers["content-length"]);
    if (announced > maxRequestBytes) throw new BodyTooLarge();
    const { call, settle } = toCall(req, url, maxRequestBytes, budget);
    return handler[SERVE_CALL](call).finally(settle);
  };
  const server = http.createServer((req, res) => {
    new Promise<Response>((resolve) => resolve(answer(req)))
      .then((response) => write(res, response))
      .catch((error: unknown) => {
        if (error instanceof BodyTooLarge && !res.headersSent) {
          // The rest of the body is not read: the connection closes once the answer is sent.
          res.shouldKeepAlive = false;
          res.setHeader("connection", "close");
          write(res, tooLarge(maxRequestBytes)).catch(() => res.destroy());
          return;
        }
        // Reading the request failed (the client went away mid-body): answer in the envelope if still possible.
        if (res.headersSent) {
          res.end();
          return;
        }
        const body = JSON.stringify(
          fail(500, { code: ERROR_CODES.internalError, message: "The request could not be read." }).body,
        );
        res.writeHead(500, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
        res.end(body);
      });
  });
  server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    // A reset connection, or one whose response has begun (node:http's own test, on its in-flight
    // response), cannot take an answer without corrupting what the client reads.
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent === true) {
      socket.destroy();
      return;
    }
    socket.end(unparsableRequest(error));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, hostname, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (e) {
    // A port that is taken (or a hostname that does not resolve) fails the start: release the
    // state's storage too, so that its directory can be opened again, by a retry on another port.
    await handler.close();
    throw e;
  }
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
