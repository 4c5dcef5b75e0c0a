/**
 * The few S3 requests the adapter makes (PUT create-only, GET, HEAD, DELETE, ListObjectsV2), signed
 * by `aws4fetch` (no hand-written signing), with retries of transient failures on the injected
 * clock. Errors name the method, the key and the status; never a header or a credential.
 *
 * @packageDocumentation
 */
import { ActorStoreError } from "../errors";
import { concat } from "../util/bytes";
import { type Clock, systemClock } from "../util/clock";
import { Watchdog } from "../util/watchdog";
import type { ResolvedS3Options } from "./options";
import { CredentialSource, redactSecrets, type Signer, STALE_CREDENTIAL_CODES } from "./s3-credentials";

/** What a GET found. @internal */
export interface S3Object {
  body: Uint8Array;
  /** User metadata (`x-amz-meta-*`), names lowercased without the prefix. */
  meta: Record<string, string>;
}

/** The outcome of a create-only PUT. @internal */
export interface PutResult {
  /** `created`: this call made the object. `exists`: the key was taken (maybe by an earlier attempt of this call). */
  outcome: "created" | "exists";
  /** Whether an earlier attempt of this call may have landed (its answer was lost or failed transiently). */
  ambiguous: boolean;
}

/** A request that failed for good (after retries, or with a non-transient status). @internal */
export class S3RequestError extends ActorStoreError {
  /** The HTTP status, or 0 when no answer came. */
  readonly status: number;
  constructor(message: string, status: number) {
    super("ERR_WRITE_FAILED", message);
    this.status = status;
  }
}

const TRANSIENT = new Set([0, 408, 409, 429, 500, 502, 503, 504]);

/**
 * The refusal of a store that does not keep create-only writes create-only: `how` says what showed
 * it. Ceph RADOS Gateway ignores `If-None-Match: *` in a bucket with versioning enabled.
 * @internal
 */
export function conditionalWritesIgnored(location: string, how: string): ActorStoreError {
  return new ActorStoreError(
    "ERR_BACKEND_UNSUPPORTED",
    `The store at ${location} ${how}, so it cannot keep one writer per object. Use a store with conditional writes (AWS S3, Cloudflare R2, Ceph RADOS Gateway, MinIO), in a bucket without versioning: Ceph RADOS Gateway ignores If-None-Match in a bucket with versioning enabled.`,
  );
}

/** The answer to one attempt; status 0 when none came (`error` says why, `timedOut` when it was the timeout). */
interface Answer {
  status: number;
  body: Uint8Array;
  headers: Headers;
  error?: string;
  timedOut?: boolean;
}

const MIB = 1024 * 1024;

/**
 * The wait before retry number `attempt + 1` (`attempt` from 0): 10 ms doubled per attempt, capped
 * at 1 s, times a jitter factor in [0.5, 1] drawn from `random` (a value outside [0, 1] is clamped
 * into it, `NaN` counts as 0), so that writers that failed together do not retry in step.
 * @internal
 */
export function retryDelayMs(attempt: number, random: () => number): number {
  const r = random();
  const jitter = Number.isNaN(r) ? 0 : Math.min(Math.max(r, 0), 1);
  return Math.min(1000, 10 * 2 ** attempt) * (0.5 + jitter / 2);
}

/**
 * How long an attempt may wait for its answer to begin: the timeout, plus the timeout again for
 * each MiB of body it sends (the whole body is handed to `fetch` at once, so its progress cannot
 * be seen: an upload is cut off only when it runs slower than about 1 MiB per timeout).
 * @internal
 */
export function answerWaitMs(timeoutMs: number, bodyBytes: number): number {
  return timeoutMs + timeoutMs * (bodyBytes / MIB);
}

function xmlText(xml: string, tag: string): string | undefined {
  const m = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml);
  return m === null ? undefined : decodeXml(m[1] as string);
}

function decodeXml(s: string): string {
  return s.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);/g, (_, e: string) => {
    switch (e) {
      case "lt":
        return "<";
      case "gt":
        return ">";
      case "amp":
        return "&";
      case "quot":
        return '"';
      case "apos":
        return "'";
      default:
        return String.fromCodePoint(e[1] === "x" ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)));
    }
  });
}

function encodeKey(key: string): string {
  return key
    .split("/")
    .map((part) => encodeURIComponent(part))
    .join("/");
}

/** A minimal S3 client over `aws4fetch`. @internal */
export class S3Client {
  readonly #credentials: CredentialSource;
  readonly #base: string;
  readonly #fetch: typeof fetch;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #retries: number;
  readonly #timeoutMs: number;
  /** `endpoint/bucket/`, for messages. */
  readonly where: string;
  /** Requests sent (every attempt), by method. */
  readonly counts = { PUT: 0, GET: 0, HEAD: 0, DELETE: 0, LIST: 0 };

  constructor(options: ResolvedS3Options) {
    this.#base = `${options.endpoint}/${options.bucket}`;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#retries = options.retries;
    this.#timeoutMs = options.requestTimeoutMs;
    this.where = `${options.endpoint}/${options.bucket}/${options.prefix}`;
    this.#credentials = new CredentialSource(options.credentials, {
      region: options.region,
      clock: this.#clock,
      timeoutMs: options.requestTimeoutMs,
      where: this.where,
    });
  }

  /**
   * One attempt. Network failures come back as status 0, and so does an attempt that makes no
   * progress in time (see {@link answerWaitMs}; then each chunk of the answer's body must come within
   * the timeout of the one before): it is aborted through the request's `AbortSignal`, and not
   * waited for even when the `fetch` in use ignores the signal.
   */
  async #once(
    signer: Signer,
    method: string,
    path: string,
    init: { body?: Uint8Array; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const watchdog = new Watchdog(this.#clock);
    const requestInit: RequestInit = { method, headers: init.headers ?? {}, signal: watchdog.controller.signal };
    if (init.body !== undefined) requestInit.body = init.body as unknown as BodyInit;
    const timedOut = (): Answer => ({
      status: 0,
      body: new Uint8Array(0),
      headers: new Headers(),
      error: `no progress within ${this.#timeoutMs} ms`,
      timedOut: true,
    });
    let signed: Request | undefined;
    try {
      signed = await signer.aws.sign(`${this.#base}${path}`, requestInit);
      watchdog.arm(answerWaitMs(this.#timeoutMs, init.body?.length ?? 0));
      const pending = this.#fetch(signed);
      pending.catch(() => undefined);
      const response = await watchdog.race(pending);
      if (response === undefined) return timedOut();
      const body = method === "HEAD" ? new Uint8Array(0) : await this.#readBody(response, watchdog);
      if (body === undefined) return timedOut();
      return { status: response.status, body, headers: response.headers };
    } catch (error) {
      if (watchdog.hasFired) return timedOut();
      // Only the error's code (for example ECONNREFUSED) or its own message, never the request: a
      // `fetch` option may quote the request in its message, so what it knows is cut out of it.
      const e = error as { message?: unknown; cause?: { code?: unknown; message?: unknown } };
      const detail =
        typeof e?.cause?.code === "string"
          ? e.cause.code
          : redactSecrets(String(e?.message ?? "network error"), this.#secrets(signed));
      return { status: 0, body: new Uint8Array(0), headers: new Headers(), error: detail };
    } finally {
      watchdog.stop();
    }
  }

  /** What a message must never show: the credentials and what the signed request carries of them. */
  #secrets(signed: Request | undefined): string[] {
    const secrets = this.#credentials.secrets();
    for (const name of ["authorization", "x-amz-security-token"]) secrets.push(signed?.headers.get(name) ?? "");
    const signature = /Signature=([0-9a-fA-F]+)/.exec(signed?.headers.get("authorization") ?? "")?.[1];
    if (signature !== undefined) secrets.push(signature);
    return secrets.filter((x) => x !== "");
  }

  /** The answer's body, each chunk within the timeout of the one before; `undefined` when one was late. */
  async #readBody(response: Response, watchdog: Watchdog): Promise<Uint8Array | undefined> {
    const stream = response.body;
    if (stream === null) return new Uint8Array(0);
    const reader = stream.getReader();
    const chunks: Uint8Array[] = [];
    try {
      for (;;) {
        watchdog.arm(this.#timeoutMs);
        const pending = reader.read();
        pending.catch(() => undefined);
        const next = await watchdog.race(pending);
        if (next === undefined) return undefined;
        if (next.done) break;
        chunks.push(next.value);
      }
    } finally {
      if (watchdog.hasFired) reader.cancel().catch(() => undefined);
      else reader.releaseLock();
    }
    return chunks.length === 1 ? (chunks[0] as Uint8Array) : concat(chunks);
  }

  /** Retries transient failures with exponential backoff; returns the last answer. */
  async #send(
    kind: keyof S3Client["counts"],
    method: string,
    path: string,
    init: { body?: Uint8Array; headers?: Record<string, string> } = {},
    onAttempt?: (attempt: number) => void,
  ): Promise<Answer & { attempts: number; timeouts: number }> {
    let timeouts = 0;
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      onAttempt?.(attempt);
      this.counts[kind]++;
      const signer = await this.#credentials.current();
      let answer = await this.#once(signer, method, path, init);
      // Credentials the store no longer takes (expired, rotated away): fetched again once per
      // request, in the same attempt (a refused request did nothing, so it is not ambiguous).
      if (!refreshed && this.#credentials.refreshable && staleCredentials(method, answer)) {
        refreshed = true;
        const fresh = await this.#credentials.refresh(signer);
        this.counts[kind]++;
        answer = await this.#once(fresh, method, path, init);
      }
      if (answer.timedOut === true) timeouts++;
      if (!TRANSIENT.has(answer.status) || attempt >= this.#retries)
        return { ...answer, attempts: attempt + 1, timeouts };
      const delay = retryDelayMs(attempt, this.#random);
      await new Promise<void>((resolve) => this.#clock.setTimer(resolve, delay, { keepAlive: true }));
    }
  }

  #fail(method: string, key: string, answer: Answer & { attempts: number; timeouts: number }): S3RequestError {
    const where = `S3 ${method} of ${this.#base}/${key}`;
    if (answer.timedOut === true)
      return new S3RequestError(
        `${where} failed: the store made no progress within ${this.#timeoutMs} ms (requestTimeoutMs) in ${answer.timeouts} of ${answer.attempts} attempts. Check that the endpoint is reachable and the store is healthy; on a slow link raise requestTimeoutMs.`,
        0,
      );
    const text = new TextDecoder().decode(answer.body.subarray(0, 2048));
    const code = xmlText(text, "Code");
    const what =
      answer.status === 0
        ? `no answer (${answer.error ?? "network error"})`
        : `HTTP ${answer.status}${code === undefined ? "" : ` ${code}`}`;
    // A read of a key that may not exist (the adapter looks for the next claim, manifest, log
    // position this way): AWS S3 and Ceph answer 403, not 404, when the credentials may read and
    // write keys but not list the bucket, so "may read and write it" alone would send the user
    // to permissions that are there.
    const stale = code !== undefined && STALE_CREDENTIAL_CODES.has(code);
    const hint = stale
      ? this.#credentials.refreshable
        ? `The store refused the credentials (${code}) also after the credentials provider (option "${this.#credentials.option}") was called again: check that it resolves with current ones.`
        : `The store refused the credentials (${code}); fixed credentials are never fetched again: for temporary ones (a session token that expires, a key that is rotated), pass a function as option "${this.#credentials.option}" that resolves with current ones.`
      : answer.status === 403 && (method === "HEAD" || method === "GET")
        ? "The store answers 403 instead of 404 for a key that does not exist when the credentials may not list the bucket: grant s3:ListBucket on the bucket as well as s3:GetObject, s3:PutObject and s3:DeleteObject on the prefix (or check the credentials)."
        : "Check the endpoint, the bucket and that the credentials may read and write it.";
    return new S3RequestError(`${where} failed: ${what}. ${hint}`, answer.status);
  }

  /**
   * Creates `key` only if it does not exist (`If-None-Match: *`). Transient failures are retried;
   * a retry that finds the key taken reports `exists` with `ambiguous: true` (the earlier attempt
   * may have landed; the caller checks whose object it is).
   */
  async putIfAbsent(
    key: string,
    body: Uint8Array,
    meta: Readonly<Record<string, string>> | { epoch: string; writer: string } = {},
  ): Promise<PutResult> {
    const headers: Record<string, string> = { "if-none-match": "*", "content-type": "application/octet-stream" };
    for (const [name, value] of Object.entries(meta)) headers[`x-amz-meta-${name}`] = value;
    let ambiguous = false;
    const answer = await this.#send("PUT", "PUT", `/${encodeKey(key)}`, { body, headers }, (attempt) => {
      if (attempt > 0) ambiguous = true;
    });
    if (answer.status === 200 || answer.status === 201) {
      // Versioning turned on after the open's probe: the store keeps every write as a new version
      // and may ignore If-None-Match (Ceph does), so two writers could both have created this key.
      // The answer says so (a version id other than "null", which a bucket with versioning
      // suspended gives): nothing that relies on this write may go on.
      const version = answer.headers.get("x-amz-version-id");
      if (version !== null && version !== "null")
        throw conditionalWritesIgnored(
          this.where,
          `answered a create-only write of ${key} with a version id (x-amz-version-id): versioning was enabled on the bucket, where it may ignore If-None-Match: *, and the write is not relied on`,
        );
      return { outcome: "created", ambiguous };
    }
    if (answer.status === 412) return { outcome: "exists", ambiguous };
    throw this.#fail("PUT", key, answer);
  }

  /**
   * Reads an object, or `null` when there is none. A 404 that says the bucket does not exist is an
   * error, not a missing object: a read-only view of a misspelled bucket would otherwise show an
   * empty object.
   */
  async get(key: string): Promise<S3Object | null> {
    const answer = await this.#send("GET", "GET", `/${encodeKey(key)}`);
    if (answer.status === 404 && !noSuchBucket(answer.body)) return null;
    if (answer.status !== 200) throw this.#fail("GET", key, answer);
    return { body: answer.body, meta: metaOf(answer.headers) };
  }

  /** Whether an object exists (a strongly consistent read, unlike a listing). */
  async exists(key: string): Promise<boolean> {
    const answer = await this.#send("HEAD", "HEAD", `/${encodeKey(key)}`);
    if (answer.status === 404) return false;
    if (answer.status === 200) return true;
    throw this.#fail("HEAD", key, answer);
  }

  /** Deletes an object (a missing one is fine). */
  async delete(key: string): Promise<void> {
    const answer = await this.#send("DELETE", "DELETE", `/${encodeKey(key)}`);
    if (answer.status !== 204 && answer.status !== 200 && answer.status !== 404)
      throw this.#fail("DELETE", key, answer);
  }

  /** Every key under `prefix` (all pages), in the store's (lexicographic) order. */
  async list(prefix: string, startAfter?: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    for (;;) {
      const q = new URLSearchParams({ "list-type": "2", prefix });
      if (token !== undefined) q.set("continuation-token", token);
      else if (startAfter !== undefined) q.set("start-after", startAfter);
      const answer = await this.#send("LIST", "GET", `?${q.toString()}`);
      if (answer.status !== 200) throw this.#fail("LIST", `${prefix}*`, answer);
      const xml = new TextDecoder().decode(answer.body);
      for (const m of xml.matchAll(/<Key>([^<]*)<\/Key>/g)) keys.push(decodeXml(m[1] as string));
      if (xmlText(xml, "IsTruncated") !== "true") return keys;
      token = xmlText(xml, "NextContinuationToken");
      if (token === undefined) return keys;
    }
  }
}

/**
 * Whether an answer says the credentials are no longer valid: an error code that says so, or a
 * 400/403 to a HEAD, whose answer has no body to tell expired credentials from missing permissions.
 */
function staleCredentials(method: string, answer: Answer): boolean {
  if (answer.status !== 400 && answer.status !== 403) return false;
  if (method === "HEAD") return true;
  const code = xmlText(new TextDecoder().decode(answer.body.subarray(0, 2048)), "Code");
  return code !== undefined && STALE_CREDENTIAL_CODES.has(code);
}

function noSuchBucket(body: Uint8Array): boolean {
  return xmlText(new TextDecoder().decode(body.subarray(0, 2048)), "Code") === "NoSuchBucket";
}

function metaOf(headers: Headers): Record<string, string> {
  const meta: Record<string, string> = {};
  headers.forEach((value, name) => {
    const lower = name.toLowerCase();
    if (lower.startsWith("x-amz-meta-")) meta[lower.slice(11)] = value;
  });
  return meta;
}
