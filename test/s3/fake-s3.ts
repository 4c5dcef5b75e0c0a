/**
 * An in-process S3 server (node:http on loopback) with the semantics the adapter relies on, and
 * injected faults: a write that lands but whose answer is lost, 503 / 409 answers, answers held
 * until the test releases them (or the client gives up), answers whose body stops midway, request
 * bodies read slowly, and a LIST answered from a stale view.
 *
 * Semantics kept exactly: path-style addressing, `If-None-Match: *` create-only PUT (412
 * PreconditionFailed when the key exists; 409 ConditionalRequestConflict while another conditional
 * PUT of the key is in flight), x-amz-meta-* round-trip, quoted ETags, 404 NoSuchKey / NoSuchBucket,
 * DELETE of a missing key is 204, ListObjectsV2 with prefix, start-after, continuation-token and
 * max-keys in lexicographic order, each key with its ETag.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeRequest {
  method: string;
  bucket: string;
  key: string;
  /** "LIST" for ListObjectsV2. */
  op: "PUT" | "GET" | "HEAD" | "DELETE" | "LIST" | "BUCKET";
  headers: IncomingMessage["headers"];
}

export type Fault =
  /** Answer with this status without doing anything. */
  | { kind: "status"; status: number; code: string }
  /** Do it, then drop the connection: the client never learns the outcome. */
  | { kind: "lose-answer" }
  /** Do it, then answer only once `until` resolves. */
  | { kind: "delay-answer"; until: Promise<unknown> }
  /** Wait for `until`, then do it and answer. */
  | { kind: "delay-request"; until: Promise<unknown> }
  /** Do it, then send the answer's headers and its first `bytes` bytes, and never the rest. */
  | { kind: "stall-body"; bytes: number }
  /**
   * Read the request's body `chunkBytes` at a time, calling `pause(bytesSoFar)` after each chunk
   * and reading on when it resolves (never: the upload stalls); then do it and answer.
   */
  | { kind: "slow-request"; chunkBytes: number; pause: (bytesSoFar: number) => Promise<unknown> }
  /** Do it, then send the answer's body `chunkBytes` at a time, awaiting `pause()` between chunks. */
  | { kind: "slow-answer"; chunkBytes: number; pause: () => Promise<unknown> };

export interface FaultRule {
  match: (request: FakeRequest) => boolean;
  fault: Fault;
  /** How many matching requests it applies to (default 1). */
  times?: number;
}

interface Waiter {
  match: (request: FakeRequest) => boolean;
  resolve: (request: FakeRequest) => void;
}

interface StoredObject {
  body: Buffer;
  meta: Record<string, string>;
  etag: string;
}

interface Mutation {
  bucket: string;
  key: string;
  /** The object before the mutation (undefined: none). */
  before: StoredObject | undefined;
}

export interface FakeS3Options {
  accessKeyId?: string;
  /** Buckets that exist from the start. Default ["objects"]. */
  buckets?: string[];
  /** Treat If-None-Match as absent (an unsafe store). */
  ignoreConditionalWrites?: boolean;
}

export class FakeS3 {
  readonly #server: Server;
  readonly #accessKeyId: string;
  readonly buckets = new Map<string, Map<string, StoredObject>>();
  readonly rules: FaultRule[] = [];
  /** Every request, in arrival order. */
  readonly log: FakeRequest[] = [];
  /**
   * Requests whose client closed the connection before the answer was complete (an abort). Seen
   * only while the server reads the connection: not while a slow-request pause holds the body.
   */
  readonly abandoned: FakeRequest[] = [];
  readonly #waiters: Waiter[] = [];
  /** LIST answers ignore the newest this-many mutations (a stale view). */
  staleListMutations = 0;
  /**
   * Session tokens that have expired: a request carrying one (x-amz-security-token) is answered
   * 400 ExpiredToken, as AWS S3 answers it, before anything is done.
   */
  readonly expiredTokens = new Set<string>();
  ignoreConditionalWrites: boolean;
  readonly #mutations: Mutation[] = [];
  readonly #conditionalInFlight = new Set<string>();
  endpoint = "";

  private constructor(options: FakeS3Options) {
    this.#accessKeyId = options.accessKeyId ?? "AKFAKE";
    this.ignoreConditionalWrites = options.ignoreConditionalWrites ?? false;
    for (const b of options.buckets ?? ["objects"]) this.buckets.set(b, new Map());
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
  }

  static async start(options: FakeS3Options = {}): Promise<FakeS3> {
    const s3 = new FakeS3(options);
    await new Promise<void>((resolve) => s3.#server.listen(0, "127.0.0.1", resolve));
    s3.endpoint = `http://127.0.0.1:${(s3.#server.address() as AddressInfo).port}`;
    return s3;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Resolves with the next request matching `match` once it has arrived (its body read, unless read slowly). */
  arrival(match: (request: FakeRequest) => boolean): Promise<FakeRequest> {
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  #arrived(request: FakeRequest): void {
    for (let i = 0; i < this.#waiters.length; i++) {
      const w = this.#waiters[i] as Waiter;
      if (!w.match(request)) continue;
      this.#waiters.splice(i--, 1);
      w.resolve(request);
    }
  }

  /** Adds a fault rule (applied to the next matching requests). */
  fault(rule: FaultRule): void {
    this.rules.push(rule);
  }

  /** Keys of a bucket under a prefix, sorted. */
  keys(bucket: string, prefix = ""): string[] {
    return [...(this.buckets.get(bucket)?.keys() ?? [])].filter((k) => k.startsWith(prefix)).sort();
  }

  object(bucket: string, key: string): StoredObject | undefined {
    return this.buckets.get(bucket)?.get(key);
  }

  #takeFault(request: FakeRequest): Fault | undefined {
    for (let i = 0; i < this.rules.length; i++) {
      const rule = this.rules[i] as FaultRule;
      if (!rule.match(request)) continue;
      const left = (rule.times ?? 1) - 1;
      if (left <= 0) this.rules.splice(i, 1);
      else rule.times = left;
      return rule.fault;
    }
    return undefined;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const parts = url.pathname.split("/");
    const bucket = decodeURIComponent(parts[1] ?? "");
    const key = parts.slice(2).map(decodeURIComponent).join("/");
    const method = req.method ?? "GET";
    const op: FakeRequest["op"] =
      key === ""
        ? method === "GET" && url.searchParams.get("list-type") === "2"
          ? "LIST"
          : "BUCKET"
        : (method as FakeRequest["op"]);
    const request: FakeRequest = { method, bucket, key, op, headers: req.headers };
    // The client may give up (abort) at any point: held answers stop waiting then.
    let lost = false;
    const gone = new Promise<void>((resolve) =>
      res.on("close", () => {
        if (!res.writableFinished && !lost) {
          this.abandoned.push(request);
          resolve();
        }
      }),
    );
    // Taken before the body is read (a slow-request fault reads it), applied after the checks below.
    const fault = this.#takeFault(request);
    const chunks: Buffer[] = [];
    if (fault?.kind === "slow-request") {
      const slow = fault;
      this.log.push(request);
      this.#arrived(request);
      let read = 0;
      let sincePause = 0;
      req.pause();
      for await (const c of req) {
        chunks.push(c as Buffer);
        read += (c as Buffer).length;
        sincePause += (c as Buffer).length;
        if (sincePause >= slow.chunkBytes) {
          sincePause = 0;
          await Promise.race([slow.pause(read), gone]);
          if (res.destroyed) return;
        }
      }
    } else {
      for await (const c of req) chunks.push(c as Buffer);
      this.log.push(request);
      this.#arrived(request);
    }
    const body = Buffer.concat(chunks);

    const auth = req.headers.authorization ?? "";
    if (
      !auth.startsWith("AWS4-HMAC-SHA256 ") ||
      !auth.includes(`Credential=${this.#accessKeyId}/`) ||
      !req.headers["x-amz-date"]
    )
      return error(res, 403, "AccessDenied", method);
    const token = req.headers["x-amz-security-token"];
    if (typeof token === "string" && this.expiredTokens.has(token)) return error(res, 400, "ExpiredToken", method);
    const objects = this.buckets.get(bucket);
    if (objects === undefined) return error(res, 404, "NoSuchBucket", method);

    if (fault?.kind === "status") return error(res, fault.status, fault.code, method);
    if (fault?.kind === "delay-request") await fault.until;

    const conditional = method === "PUT" && req.headers["if-none-match"] === "*" && !this.ignoreConditionalWrites;
    const flightKey = `${bucket}/${key}`;
    if (conditional && this.#conditionalInFlight.has(flightKey))
      return error(res, 409, "ConditionalRequestConflict", method);
    if (conditional) this.#conditionalInFlight.add(flightKey);
    try {
      const answer = this.#apply(op, objects, bucket, key, body, req, url, conditional);
      if (fault?.kind === "lose-answer") {
        lost = true;
        req.socket.destroy();
        return;
      }
      if (fault?.kind === "delay-answer") await Promise.race([fault.until, gone]);
      if (res.destroyed) return;
      res.writeHead(answer.status, answer.headers);
      if (fault?.kind === "stall-body" && answer.body !== undefined && method !== "HEAD") {
        res.write(Buffer.from(answer.body).subarray(0, fault.bytes));
        await gone;
        return;
      }
      if (fault?.kind === "slow-answer" && answer.body !== undefined && method !== "HEAD") {
        const all = Buffer.from(answer.body);
        for (let at = 0; at < all.length; at += fault.chunkBytes) {
          if (at > 0) await Promise.race([fault.pause(), gone]);
          if (res.destroyed) return;
          res.write(all.subarray(at, at + fault.chunkBytes));
        }
        res.end();
        return;
      }
      res.end(method === "HEAD" ? undefined : answer.body);
    } finally {
      if (conditional) this.#conditionalInFlight.delete(flightKey);
    }
  }

  #apply(
    op: FakeRequest["op"],
    objects: Map<string, StoredObject>,
    bucket: string,
    key: string,
    body: Buffer,
    req: IncomingMessage,
    url: URL,
    conditional: boolean,
  ): { status: number; headers: Record<string, string>; body?: Buffer | string } {
    switch (op) {
      case "PUT": {
        const existing = objects.get(key);
        if (conditional && existing !== undefined) return errorAnswer(412, "PreconditionFailed");
        const meta: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers))
          if (name.startsWith("x-amz-meta-") && typeof value === "string") meta[name.slice(11)] = value;
        const etag = `"${createHash("md5").update(body).digest("hex")}"`;
        this.#mutations.push({ bucket, key, before: existing });
        objects.set(key, { body, meta, etag });
        return { status: 200, headers: { etag } };
      }
      case "GET":
      case "HEAD": {
        const found = objects.get(key);
        if (found === undefined) return errorAnswer(404, "NoSuchKey");
        const headers: Record<string, string> = {
          etag: found.etag,
          "content-length": String(found.body.length),
          "content-type": "application/octet-stream",
        };
        for (const [name, value] of Object.entries(found.meta)) headers[`x-amz-meta-${name}`] = value;
        return { status: 200, headers, body: found.body };
      }
      case "DELETE": {
        const existing = objects.get(key);
        if (existing !== undefined) {
          this.#mutations.push({ bucket, key, before: existing });
          objects.delete(key);
        }
        return { status: 204, headers: {} };
      }
      case "LIST":
        return this.#list(bucket, objects, url.searchParams);
      default:
        return errorAnswer(400, "InvalidRequest");
    }
  }

  /** The keys of `bucket` (and their objects) as they were `staleListMutations` mutations ago. */
  #listedKeys(bucket: string, objects: Map<string, StoredObject>): Map<string, StoredObject | undefined> {
    const view = new Map<string, StoredObject | undefined>(objects);
    let undo = this.staleListMutations;
    for (let i = this.#mutations.length - 1; i >= 0 && undo > 0; i--, undo--) {
      const m = this.#mutations[i] as Mutation;
      if (m.bucket !== bucket) continue;
      if (m.before === undefined) view.delete(m.key);
      else view.set(m.key, m.before);
    }
    return view;
  }

  #list(bucket: string, objects: Map<string, StoredObject>, q: URLSearchParams) {
    const prefix = q.get("prefix") ?? "";
    const after = q.get("continuation-token") ?? q.get("start-after") ?? "";
    const max = Math.min(1000, Number(q.get("max-keys") ?? 1000));
    const view = this.#listedKeys(bucket, objects);
    const all = [...view.keys()].sort().filter((k) => k.startsWith(prefix) && k > after);
    const page = all.slice(0, max);
    const truncated = all.length > page.length;
    const xml =
      `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>${bucket}</Name><Prefix>${esc(prefix)}</Prefix>` +
      `<KeyCount>${page.length}</KeyCount><MaxKeys>${max}</MaxKeys><IsTruncated>${truncated}</IsTruncated>` +
      (truncated ? `<NextContinuationToken>${esc(page[page.length - 1] as string)}</NextContinuationToken>` : "") +
      page
        .map((k) => `<Contents><Key>${esc(k)}</Key><ETag>${esc(view.get(k)?.etag ?? "")}</ETag></Contents>`)
        .join("") +
      "</ListBucketResult>";
    return { status: 200, headers: { "content-type": "application/xml" }, body: xml };
  }
}

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function errorAnswer(status: number, code: string) {
  return {
    status,
    headers: { "content-type": "application/xml" },
    body: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`,
  };
}

function error(res: ServerResponse, status: number, code: string, method: string): void {
  const a = errorAnswer(status, code);
  res.writeHead(status, a.headers);
  res.end(method === "HEAD" ? undefined : a.body);
}

/** A promise and its resolver, for holding answers. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
