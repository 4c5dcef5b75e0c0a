/**
 * The forwarding endpoint's wire side, for cluster-host.ts: reading a forwarded request (its path,
 * the headers that carry an object's name, a body within its limit, a call's arguments), answering a
 * call, and telling a connection that was never made from one that broke after the request left.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ObjectId } from "../context/object-id";
import { ActorStoreError } from "../errors";
import { ObjectNamespace, type StubOperation } from "../host/namespace";
import { readAtMost } from "../util/read-limited";
import { decode, encode, FORWARD_PREFIX, fromWireError, toWireError, type WireResult } from "./wire";

/** The largest body of a forwarded call or property read (its v8-serialized arguments). */
export const MAX_FORWARDED_RPC_BYTES = 32 * 1024 * 1024;
/** The largest body of a forwarded request to an object's `fetch()`. */
export const MAX_FORWARDED_FETCH_BYTES = 100 * 1024 * 1024;

/** A forwarded request refused before it reached an object (answered with `status`, plain text). */
export class ForwardRefusal extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** What a forwarded request's path and headers name. */
export interface ForwardedRequest {
  readonly ns: string;
  readonly id: ObjectId;
  readonly kind: "call" | "get" | "start" | "fetch";
  /** The method (call) or property (get); `""` otherwise. */
  readonly member: string;
}

const KINDS: ReadonlySet<string> = new Set(["call", "get", "start", "fetch"]);

/**
 * Reads `/actorstore/v1/<namespace>/<id>/<kind>[/<member>]` and `x-actorstore-name`. Throws a
 * {@link ForwardRefusal} (404 for another path or version, 400 for anything malformed).
 */
export function parseForwarded(req: IncomingMessage, env: Record<string, unknown>): ForwardedRequest {
  const path = (req.url ?? "/").split("?")[0] as string;
  if (!path.startsWith(FORWARD_PREFIX)) throw new ForwardRefusal(404, "not found");
  const parts = path.slice(FORWARD_PREFIX.length).split("/");
  const [nsPart = "", idPart = "", kind = "", memberPart] = parts;
  if (!KINDS.has(kind) || parts.length > 4) throw new ForwardRefusal(400, `unknown operation ${path}`);
  const ns = decodeOrRefuse(nsPart, "namespace");
  const namespace = Object.hasOwn(env, ns) ? env[ns] : undefined;
  if (!(namespace instanceof ObjectNamespace)) throw new ForwardRefusal(400, `no namespace ${ns}`);
  const nameHeader = req.headers["x-actorstore-name"];
  const unitsHeader = req.headers["x-actorstore-name-units"];
  const name =
    typeof unitsHeader === "string"
      ? nameFromUnits(unitsHeader)
      : typeof nameHeader === "string"
        ? decodeOrRefuse(nameHeader, "name")
        : undefined;
  let id: ObjectId;
  try {
    id = name !== undefined ? namespace.idFromName(name) : namespace.idFromString(idPart);
  } catch (e) {
    throw new ForwardRefusal(400, (e as Error).message);
  }
  if (id.toString() !== idPart) throw new ForwardRefusal(400, "the name does not match the id");
  const member = kind === "call" || kind === "get" ? decodeOrRefuse(memberPart ?? "", "member") : "";
  if ((kind === "call" || kind === "get") && member === "") throw new ForwardRefusal(400, `no member in ${path}`);
  const length = Number(req.headers["content-length"] ?? 0);
  const limit = kind === "fetch" ? MAX_FORWARDED_FETCH_BYTES : MAX_FORWARDED_RPC_BYTES;
  if (length > limit) throw tooLarge(limit);
  return { ns, id, kind: kind as ForwardedRequest["kind"], member };
}

/**
 * The headers that carry an id's name: `x-actorstore-name`, percent-encoded; or, for a name with a
 * lone surrogate (which percent-encoding cannot carry, and which is a name of its own, with its own
 * id), `x-actorstore-name-units`: its UTF-16 code units, four hex digits each.
 */
export function nameHeaders(name: string): Record<string, string> {
  try {
    return { "x-actorstore-name": encodeURIComponent(name) };
  } catch {
    let units = "";
    for (let i = 0; i < name.length; i++) units += name.charCodeAt(i).toString(16).padStart(4, "0");
    return { "x-actorstore-name-units": units };
  }
}

function nameFromUnits(units: string): string {
  if (!/^(?:[0-9a-f]{4})*$/.test(units)) throw new ForwardRefusal(400, "malformed name (x-actorstore-name-units)");
  let name = "";
  for (let i = 0; i < units.length; i += 4) name += String.fromCharCode(Number.parseInt(units.slice(i, i + 4), 16));
  return name;
}

function decodeOrRefuse(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ForwardRefusal(400, `malformed ${what} (bad percent-encoding)`);
  }
}

/** The text of the 413 that refuses a forwarded operation's body over `limit` bytes. */
export function tooLargeMessage(limit: number): string {
  return `a forwarded operation's body may have at most ${limit} bytes`;
}

function tooLarge(limit: number): ForwardRefusal {
  return new ForwardRefusal(413, tooLargeMessage(limit));
}

/** The request's body, refusing one over `limit` bytes (it stops reading there). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer<ArrayBuffer>> {
  const chunks = await readAtMost(req, limit);
  if (chunks === undefined) throw tooLarge(limit);
  return Buffer.concat(chunks);
}

/** A call's arguments: a v8-serialized array, or a 400. */
export function decodeArguments(body: Buffer): unknown[] {
  let args: unknown;
  try {
    args = decode<unknown>(body);
  } catch {
    throw new ForwardRefusal(400, "the call's arguments are not a v8-serialized array");
  }
  if (!Array.isArray(args)) throw new ForwardRefusal(400, "the call's arguments are not a v8-serialized array");
  return args;
}

/** Answers a call or property read with its serialized result (or the error serializing it gave). */
export function answerCall(res: ServerResponse, result: WireResult): void {
  let bytes: Uint8Array;
  try {
    bytes = encode(result);
  } catch (e) {
    bytes = encode({ ok: false, error: toWireError(e) });
  }
  res.writeHead(200, { "content-type": "application/octet-stream" }).end(bytes);
}

/** Codes of a connection that was never made: the request did not leave this host. */
const CONNECT_FAILURES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** The code when `e` (a rejection of `fetch`) says the connection was never made; otherwise undefined. */
export function connectFailure(e: unknown): string | undefined {
  const code = (e as { cause?: { code?: unknown } })?.cause?.code;
  return typeof code === "string" && CONNECT_FAILURES.has(code) ? code : undefined;
}

/** A short description of a transport failure, for messages. */
export function describeFailure(e: unknown): string {
  const cause = (e as { cause?: { code?: unknown; message?: unknown } })?.cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return e instanceof Error ? e.message : String(e);
}

/**
 * A fetch's request body, read at most once however many times the request is sent: `bytes()` is
 * undefined for a GET or HEAD (or no body), and `"too large"` past the forwarding endpoint's limit,
 * read no further (so a body streamed without end is never held whole); `read` says whether the
 * request's own body was consumed.
 */
export interface BodyReader {
  readonly read: boolean;
  bytes(): Promise<Uint8Array<ArrayBuffer> | undefined | "too large">;
}

export function bodyReader(request: Request): BodyReader {
  let bytes: Promise<Uint8Array<ArrayBuffer> | undefined | "too large"> | undefined;
  const readLimited = async () => {
    if (request.method === "GET" || request.method === "HEAD" || request.body === null) return undefined;
    // Node's ReadableStream is async-iterable (the DOM types do not say so); stopping early cancels it.
    const chunks = await readAtMost(request.body as unknown as AsyncIterable<Uint8Array>, MAX_FORWARDED_FETCH_BYTES);
    return chunks === undefined ? ("too large" as const) : new Uint8Array(Buffer.concat(chunks));
  };
  return {
    get read() {
      return bytes !== undefined;
    },
    bytes() {
      bytes ??= readLimited();
      return bytes;
    },
  };
}

/**
 * What a forwarded operation came back with: its value, what it threw (or the other host's refusal),
 * or "not here" (421, with the holder the other host knows of). A transport failure rejects instead.
 */
export type ForwardAnswer = { value: unknown } | { thrown: unknown } | { misdirected: true; holder?: string };

/** Sends one operation to the host at `address` (from host `from`) and reads its answer. */
export async function sendForwarded({
  address,
  from,
  ns,
  id,
  op,
  holderOnly,
  fetchBody,
  timeoutMs,
}: {
  address: string;
  from: string;
  ns: string;
  id: ObjectId;
  op: StubOperation;
  holderOnly: boolean;
  fetchBody: BodyReader | undefined;
  timeoutMs: number;
}): Promise<ForwardAnswer> {
  const base = `${address}${FORWARD_PREFIX}${encodeURIComponent(ns)}/${id.toString()}`;
  const headers: Record<string, string> = {};
  headers["x-actorstore-from"] = from;
  if (holderOnly) headers["x-actorstore-holder-only"] = "1";
  const misdirected = (response: Response) => {
    const holder = response.headers.get("x-actorstore-holder");
    return { misdirected: true as const, ...(holder ? { holder } : {}) };
  };
  if (id.name !== undefined) Object.assign(headers, nameHeaders(id.name));
  if (op.kind === "fetch") {
    const request = op.request;
    const forwardHeaders = new Headers(request.headers);
    forwardHeaders.set("x-actorstore-url", request.url);
    forwardHeaders.set("x-actorstore-method", request.method);
    for (const [k, v] of Object.entries(headers)) forwardHeaders.set(k, v);
    const body = await fetchBody?.bytes();
    // Answered as the owner's endpoint would answer it, without holding the rest of the body.
    if (body === "too large") {
      return {
        value: new Response(tooLargeMessage(MAX_FORWARDED_FETCH_BYTES), {
          status: 413,
          headers: { "content-type": "text/plain; charset=utf-8" },
        }),
      };
    }
    const response = await fetch(`${base}/fetch`, {
      signal: AbortSignal.timeout(timeoutMs),
      method: "POST",
      headers: forwardHeaders,
      ...(body === undefined ? {} : { body }),
    });
    if (response.status === 421 && response.headers.has("x-actorstore-owner")) return misdirected(response);
    if (response.headers.get("x-actorstore-error") === "1") {
      return {
        thrown: fromWireError(decode<WireResult & { ok: false }>(new Uint8Array(await response.arrayBuffer())).error),
      };
    }
    const out = new Headers(response.headers);
    // The object's own 421, sent as 200 so that fetch does not send the request again (cluster-host.ts).
    const status = response.status === 200 && out.get("x-actorstore-status") === "421" ? 421 : response.status;
    out.delete("x-actorstore-status");
    out.delete("content-length");
    out.delete("transfer-encoding");
    out.delete("connection");
    out.delete("keep-alive");
    out.delete("date");
    const bytes = await response.arrayBuffer();
    return {
      value: new Response(response.status === 204 || response.status === 304 ? null : bytes, {
        status,
        statusText: response.statusText,
        headers: out,
      }),
    };
  }
  // A cluster's stubs pass no references (see Dispatcher.references), so nothing is invoked here.
  if (op.kind === "invoke") throw new TypeError("A cluster does not forward calls on passed references.");
  const path =
    op.kind === "call"
      ? `call/${encodeURIComponent(op.method)}`
      : op.kind === "start"
        ? "start/-"
        : `get/${encodeURIComponent(op.property)}`;
  const response = await fetch(`${base}/${path}`, {
    signal: AbortSignal.timeout(timeoutMs),
    method: "POST",
    headers: { ...headers, "content-type": "application/octet-stream" },
    body: op.kind === "call" ? Buffer.from(encode(op.args)) : Buffer.alloc(0),
  });
  if (response.status === 421) return misdirected(response);
  if (response.headers.get("content-type") !== "application/octet-stream") {
    return {
      thrown: new ActorStoreError(
        "ERR_UNAVAILABLE",
        `Host ${address} answered ${response.status}: ${await response.text()}`,
      ),
    };
  }
  const result = decode<WireResult>(new Uint8Array(await response.arrayBuffer()));
  return result.ok ? { value: result.value } : { thrown: fromWireError(result.error) };
}
