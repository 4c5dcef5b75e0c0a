/**
 * The cluster's own records in a shared S3-compatible bucket (membership, who holds which object,
 * the alarm index), beside the objects' data, which the S3 adapter (`actorstore/s3`) writes under
 * `<prefix>objects/`:
 *
 * ```
 * <prefix>members/<host id>.json          { id, address, beat, heartbeatMs }   renewed every heartbeat
 * <prefix>holders/<namespace>/<id>.json   { host, epoch }                      written when a host claims an object
 * <prefix>alarms/<namespace>/<id>.json    { atMs, name }                       the alarm index
 * <prefix>objects/<namespace>/<id>/       the object's log, snapshots and claims (the S3 adapter)
 * ```
 *
 * These records are advice: nothing in them decides who may write an object (the S3 adapter's
 * create-only claims do). Requests are signed with the S3 adapter's credentials (fixed, or a
 * provider's, shared by the cluster's records and every object's persistence); errors name the
 * method, the key and the status, never a credential.
 */
import type { PersistenceAdapter } from "../durability/persistence";
import { ActorStoreError } from "../errors";
import { type AlarmIndex, type AlarmIndexEntry, parseEntry } from "../host/alarm-index";
import { indexOf, type PersistenceFactory, withIndex } from "../host/options";
import { s3Persistence } from "../s3/index";
import {
  credentialsProblem,
  isRequestTimeoutMs,
  parseEndpoint,
  type S3Credentials,
  type S3CredentialsProvider,
} from "../s3/options";
import {
  CredentialSource,
  DELEGATED_CREDENTIALS,
  type DelegatedProvider,
  type Signer,
  STALE_CREDENTIAL_CODES,
} from "../s3/s3-credentials";
import { type Clock, systemClock } from "../util/clock";
import { Watchdog } from "../util/watchdog";

/** Where the hosts of a cluster meet: a bucket (it must exist) and a prefix in it. */
export interface ClusterBucketOptions {
  /**
   * The store's base URL, for example `"http://127.0.0.1:27480"`: http: or https:, without
   * credentials (they go in `credentials`; the endpoint appears in error messages), query or fragment.
   */
  endpoint: string;
  /** The bucket. */
  bucket: string;
  /** The cluster's prefix in the bucket, for example `"cluster-1/"`. Default `""`. */
  prefix?: string;
  /** The signing region. Default `"us-east-1"`. */
  region?: string;
  /**
   * Access key and secret, or a function that resolves with them: temporary credentials (STS, a
   * session token, rotated keys), in the AWS SDK v3's shape, as the S3 adapter takes them
   * ({@link S3CredentialsProvider}). A provider's credentials are cached until 5 minutes before
   * their `expiration` and fetched again then, or at once when the store answers that they expired
   * or are not valid (that request is sent again with the new ones, once); one cache serves the
   * cluster's records and every object's persistence, and concurrent requests share one call of
   * the provider. Never included in an error.
   */
  credentials: S3Credentials | S3CredentialsProvider;
  /**
   * How long one request for a cluster record (each a few hundred bytes) may take from sending to
   * the end of its answer before it is aborted and tried again, as a lost answer is. Default
   * `30_000`; `Infinity` waits as long as the runtime's `fetch` does.
   */
  requestTimeoutMs?: number;
}

const TRANSIENT = new Set([0, 408, 429, 500, 502, 503, 504]);

/** A request's outcome: status 0 when no answer came; `timeouts` attempts ran out of time. */
interface Answer {
  status: number;
  text: string;
  timeouts: number;
}

/** A small client for the cluster's records. @internal */
export class ClusterBucket {
  readonly options: ClusterBucketOptions;
  readonly prefix: string;
  readonly #credentials: CredentialSource;
  readonly #base: string;
  readonly #clock: Clock;
  readonly #timeoutMs: number;

  /** `clock` times the requests and the waits between attempts (real time unless a test gives its own). */
  constructor(options: ClusterBucketOptions, clock: Clock = systemClock) {
    if (typeof options !== "object" || options === null) throw new TypeError("cluster.bucket must be an object.");
    const { endpoint, bucket, prefix = "", region = "us-east-1", credentials, requestTimeoutMs = 30_000 } = options;
    if (!isRequestTimeoutMs(requestTimeoutMs))
      throw new TypeError(
        'cluster.bucket: option "requestTimeoutMs" must be an integer ≥ 1 (milliseconds) or Infinity.',
      );
    this.#clock = clock;
    this.#timeoutMs = requestTimeoutMs;
    // An empty query or fragment ("http://host/?") parses as none but would still end up in the
    // requests' URLs.
    if (typeof parseEndpoint(endpoint) === "string" || /[?#]/.test(endpoint as string))
      throw new TypeError(
        'cluster.bucket: option "endpoint" must be an http: or https: URL without credentials, query or fragment (pass the keys in "credentials").',
      );
    if (typeof bucket !== "string" || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
      throw new TypeError('cluster.bucket: option "bucket" must be a bucket name.');
    if (typeof prefix !== "string" || !/^([A-Za-z0-9._=+-]+\/)*$/.test(prefix))
      throw new TypeError(
        'cluster.bucket: option "prefix" must be "" or segments ending in "/" (letters, digits, . _ = + -).',
      );
    const problem = typeof credentials === "function" ? undefined : credentialsProblem(credentials);
    if (problem !== undefined) throw new TypeError(`cluster.bucket: ${problem}`);
    this.options = { endpoint: endpoint.replace(/\/+$/, ""), bucket, prefix, region, credentials, requestTimeoutMs };
    this.prefix = prefix;
    this.#base = `${this.options.endpoint}/${bucket}`;
    this.#credentials = new CredentialSource(credentials, {
      region,
      clock,
      timeoutMs: requestTimeoutMs,
      where: `${this.#base}/${prefix}`,
      owner: "cluster.bucket",
      // The cluster's records fail as the bucket's other failures do (errors.md).
      failure: { code: "ERR_UNAVAILABLE", option: "cluster.bucket.credentials" },
    });
  }

  /**
   * The credentials to give one object's S3 persistence: fixed ones as they are; for a provider, a
   * provider of this bucket's cache, so that 10,000 objects do not call the user's provider 10,000
   * times. An object's adapter asks again only when its credentials are due or the store refused
   * them: a second ask for the credentials it already has is a refusal, which fetches new ones (or
   * takes those another request fetched meanwhile). Marked as delegated: the adapter's messages
   * name option `cluster.bucket.credentials`, and a failure of the user's provider reaches the
   * object's caller as one message of the adapter's, not this bucket's error quoted inside it.
   */
  objectCredentials(): S3Credentials | S3CredentialsProvider {
    const given = this.options.credentials;
    if (typeof given !== "function") return given;
    const source = this.#credentials;
    let last: Signer | undefined;
    const provider = async () => {
      const current = await source.current();
      last = current === last ? await source.refresh(current) : current;
      return last.credentials;
    };
    return Object.assign(provider, {
      [DELEGATED_CREDENTIALS]: "cluster.bucket.credentials",
    }) satisfies DelegatedProvider;
  }

  /** `endpoint/bucket/prefix`, for messages. */
  get where(): string {
    return `${this.#base}/${this.prefix}`;
  }

  async #send(method: string, path: string, body?: string): Promise<Answer> {
    let timeouts = 0;
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      const signer = await this.#credentials.current();
      let { status, text, timedOut } = await this.#attempt(signer, method, path, body);
      // Credentials the store no longer takes (expired, rotated away): fetched again once per
      // request, which is sent again with them (a refused request did nothing).
      if (!refreshed && this.#credentials.refreshable && staleCredentials(status, text)) {
        refreshed = true;
        ({ status, text, timedOut } = await this.#attempt(await this.#credentials.refresh(signer), method, path, body));
      }
      if (timedOut) timeouts++;
      if (!TRANSIENT.has(status) || attempt >= 3) return { status, text, timeouts };
      await new Promise<void>((resolve) => this.#clock.setTimer(resolve, 25 * 2 ** attempt, { keepAlive: true }));
    }
  }

  /** One request, aborted when it has not ended within the timeout; status 0 when no answer came. */
  async #attempt(
    signer: Signer,
    method: string,
    path: string,
    body: string | undefined,
  ): Promise<{ status: number; text: string; timedOut: boolean }> {
    const watchdog = new Watchdog(this.#clock);
    watchdog.arm(this.#timeoutMs);
    const request = (async () => {
      const response = await signer.aws.fetch(`${this.#base}${path}`, {
        method,
        signal: watchdog.controller.signal,
        ...(body === undefined ? {} : { body, headers: { "content-type": "application/json" } }),
      });
      return { status: response.status, text: method === "HEAD" ? "" : await response.text() };
    })();
    request.catch(() => undefined);
    try {
      const answer = await watchdog.race(request);
      if (answer !== undefined) return { ...answer, timedOut: false };
      return { status: 0, text: "", timedOut: true };
    } catch {
      return { status: 0, text: "", timedOut: watchdog.hasFired };
    } finally {
      watchdog.stop();
    }
  }

  #fail(method: string, key: string, { status, text, timeouts }: Answer): ActorStoreError {
    const code = errorCode(status, text);
    const why =
      status !== 0
        ? `HTTP ${status}${code === undefined ? "" : ` ${code}`}`
        : timeouts > 0
          ? `no answer (${timeouts} of 4 attempts did not end within ${this.#timeoutMs} ms, requestTimeoutMs)`
          : "no answer";
    const hint =
      code === undefined || !STALE_CREDENTIAL_CODES.has(code)
        ? "Check the endpoint, the bucket and that the credentials may read and write it."
        : this.#credentials.refreshable
          ? `The store refused the credentials (${code}) also after the credentials provider (option "cluster.bucket.credentials") was called again: check that it resolves with current ones.`
          : `The store refused the credentials (${code}); fixed credentials are never fetched again: for temporary ones, pass a function as option "cluster.bucket.credentials" that resolves with current ones.`;
    return new ActorStoreError("ERR_UNAVAILABLE", `S3 ${method} of ${this.#base}/${key} failed: ${why}. ${hint}`);
  }

  /** Writes (replaces) `key` under the prefix. */
  async put(key: string, body: string): Promise<void> {
    const full = this.prefix + key;
    const answer = await this.#send("PUT", `/${encodeKey(full)}`, body);
    if (answer.status !== 200 && answer.status !== 201) throw this.#fail("PUT", full, answer);
  }

  /** Reads `key` under the prefix, or `null`. */
  async get(key: string): Promise<string | null> {
    const full = this.prefix + key;
    const answer = await this.#send("GET", `/${encodeKey(full)}`);
    const { status, text } = answer;
    if (status === 404) return null;
    if (status !== 200) throw this.#fail("GET", full, answer);
    return text;
  }

  /** Deletes `key` under the prefix (a missing one is fine). */
  async delete(key: string): Promise<void> {
    const full = this.prefix + key;
    const answer = await this.#send("DELETE", `/${encodeKey(full)}`);
    const { status } = answer;
    if (status !== 200 && status !== 204 && status !== 404) throw this.#fail("DELETE", full, answer);
  }

  /** The keys under `prefix + under` (all pages), without the cluster prefix. */
  async list(under: string): Promise<string[]> {
    return (await this.listEntries(under)).map((e) => e.key);
  }

  /**
   * The keys under `prefix + under` (all pages), without the cluster prefix, each with the ETag the
   * listing gives it (`undefined` when the store gives none): it changes whenever the key is written
   * with other content.
   */
  async listEntries(under: string): Promise<Array<{ key: string; etag: string | undefined }>> {
    const keys: Array<{ key: string; etag: string | undefined }> = [];
    let token: string | undefined;
    for (;;) {
      const q = new URLSearchParams({ "list-type": "2", prefix: this.prefix + under });
      if (token !== undefined) q.set("continuation-token", token);
      const answer = await this.#send("GET", `?${q.toString()}`);
      const { status, text } = answer;
      if (status !== 200) throw this.#fail("LIST", `${this.prefix}${under}*`, answer);
      for (const [entry] of text.matchAll(/<Contents>[\s\S]*?<\/Contents>/g)) {
        const key = /<Key>([^<]*)<\/Key>/.exec(entry)?.[1];
        const etag = /<ETag>([^<]*)<\/ETag>/.exec(entry)?.[1];
        if (key === undefined) continue;
        keys.push({
          key: decodeXml(key).slice(this.prefix.length),
          etag: etag === undefined ? undefined : decodeXml(etag),
        });
      }
      if (!/<IsTruncated>true<\/IsTruncated>/.test(text)) return keys;
      token = /<NextContinuationToken>([^<]*)<\/NextContinuationToken>/.exec(text)?.[1];
      if (token === undefined) return keys;
      token = decodeXml(token);
    }
  }
}

/** The `<Code>` of an S3 error answer (letters only, so never anything the request carried). */
function errorCode(status: number, text: string): string | undefined {
  if (status < 400) return undefined;
  return /<Code>([A-Za-z]{1,64})<\/Code>/.exec(text.slice(0, 2048))?.[1];
}

/** Whether an answer says the credentials are no longer valid (expired, unknown, rotated away). */
function staleCredentials(status: number, text: string): boolean {
  if (status !== 400 && status !== 403) return false;
  const code = errorCode(status, text);
  return code !== undefined && STALE_CREDENTIAL_CODES.has(code);
}

function encodeKey(key: string): string {
  return key
    .split("/")
    .map((part) => encodeURIComponent(part))
    .join("/");
}

function decodeXml(s: string): string {
  return s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&amp;/g, "&");
}

/** A namespace's name as a key segment the S3 adapter's prefixes accept. @internal */
export function namespaceSegment(namespace: string): string {
  return /^[A-Za-z0-9_.-]{1,100}$/.test(namespace) && namespace !== "." && namespace !== ".."
    ? namespace
    : `x-${Array.from(new TextEncoder().encode(namespace), (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** How many entries of the alarm index are read at once. */
const INDEX_READ_WIDTH = 16;

/**
 * The alarm index in the bucket: `<prefix>alarms/<namespace>/<id>.json`. A listing reads only the
 * entries `wanted` accepts, and of those only the ones that are new or changed since it last read
 * them (by the ETag the listing gives each key): a host that re-reads the index after a change of
 * members pays one LIST per 1,000 entries and one GET per entry it gained or that was rewritten,
 * not one GET per entry. The entries it remembers are those of its last listing that it wanted. @internal
 */
export function bucketAlarmIndex(bucket: ClusterBucket): AlarmIndex {
  const dir = (namespace: string) => `alarms/${namespaceSegment(namespace)}/`;
  /** By key: the ETag an entry had when it was read, and what it held. */
  const known = new Map<string, Map<string, { etag: string; entry: AlarmIndexEntry | null }>>();
  return {
    async set(namespace, object, atMs) {
      const key = `${dir(namespace)}${object.id}.json`;
      if (atMs === null) await bucket.delete(key);
      else await bucket.put(key, JSON.stringify({ atMs, ...(object.name === undefined ? {} : { name: object.name }) }));
    },
    async list(namespace, wanted) {
      const listed = await bucket.listEntries(dir(namespace));
      const before = known.get(namespace) ?? new Map();
      const now = new Map<string, { etag: string; entry: AlarmIndexEntry | null }>();
      const out: AlarmIndexEntry[] = [];
      const toRead: Array<{ key: string; id: string; etag: string | undefined }> = [];
      for (const { key, etag } of listed) {
        const id = /([0-9a-f]{64})\.json$/.exec(key)?.[1];
        if (id === undefined || wanted?.(id) === false) continue;
        const seen = etag === undefined ? undefined : before.get(key);
        if (seen !== undefined && seen.etag === etag) {
          now.set(key, seen);
          if (seen.entry !== null) out.push(seen.entry);
        } else toRead.push({ key, id, etag });
      }
      let next = 0;
      const lane = async () => {
        while (next < toRead.length) {
          const { key, id, etag } = toRead[next++] as (typeof toRead)[number];
          const text = await bucket.get(key);
          if (text === null) continue; // deleted since the listing
          const entry = parseEntry(id, text);
          // The ETag is the listing's: a write after it makes the next listing read the key again.
          if (etag !== undefined) now.set(key, { etag, entry });
          if (entry !== null) out.push(entry);
        }
      };
      await Promise.all(Array.from({ length: Math.min(INDEX_READ_WIDTH, toRead.length) }, lane));
      known.set(namespace, now);
      return out;
    },
  };
}

/**
 * One S3 persistence per object under `<prefix>objects/<namespace>/<id>/` of the cluster's bucket,
 * with the alarm index under `<prefix>alarms/`. Each start of an object claims it (a new epoch), which
 * fences any other holder: see docs/hosting.md.
 *
 * @example
 * ```ts
 * const persistence = bucketPerObject({ endpoint, bucket: "objects", prefix: "cluster-1/", credentials });
 * ```
 */
export function bucketPerObject(options: ClusterBucketOptions): PersistenceFactory {
  return objectsIn(new ClusterBucket(options));
}

/** {@link bucketPerObject} over a bucket client the cluster already has (one credentials cache). @internal */
export function objectsIn(bucket: ClusterBucket): PersistenceFactory {
  const o = bucket.options;
  return withIndex(
    (id, namespace): PersistenceAdapter =>
      s3Persistence({
        endpoint: o.endpoint,
        bucket: o.bucket,
        prefix: `${o.prefix ?? ""}objects/${namespaceSegment(namespace)}/${id.toString()}/`,
        ...(o.region === undefined ? {} : { region: o.region }),
        credentials: bucket.objectCredentials(),
      }),
    bucketAlarmIndex(bucket),
  );
}

/** Who holds an object, as its last claimer recorded it in the bucket. */
export interface HolderRecord {
  host: string;
  epoch: number | null;
}

/**
 * Wraps a factory so that each time an object's persistence is loaded (which claims the object), the
 * host records itself as the object's holder in the bucket (`holders/<namespace>/<id>.json`). @internal
 */
export function recordingHolders(
  factory: PersistenceFactory,
  bucket: ClusterBucket,
  host: string,
  held?: Map<string, HeldStore>,
): PersistenceFactory {
  const wrapped: PersistenceFactory = async (id, namespace) => {
    const adapter = await factory(id, namespace);
    const key = `${namespace}/${id.toString()}`;
    let store: HeldStore | undefined;
    const load: PersistenceAdapter["load"] = async () => {
      const loaded = await adapter.load();
      const verify = (adapter as Partial<HeldStore>).verifyHolder;
      if (typeof verify === "function") {
        store = { verifyHolder: () => verify.call(adapter) };
        held?.set(key, store);
      }
      const record: HolderRecord = { host, epoch: loaded.epoch ?? null };
      // Advice only (a host fenced by this one looks here for where to send the object's events): a
      // failure to record it must not fail the start.
      await bucket
        .put(`holders/${namespaceSegment(namespace)}/${id.toString()}.json`, JSON.stringify(record))
        .catch(() => {});
      return loaded;
    };
    // An evicted (closed) object is no longer held: forget its store, so that the host does not keep
    // every adapter it ever opened (and what each one loaded) for the life of the process.
    const close: PersistenceAdapter["close"] = async () => {
      try {
        await adapter.close();
      } finally {
        if (store !== undefined && held?.get(key) === store) held.delete(key);
        store = undefined;
      }
    };
    return new Proxy(adapter, {
      get(target, property) {
        if (property === "load") return load;
        if (property === "close") return close;
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  const index = indexOf(factory);
  return index === undefined ? wrapped : withIndex(wrapped, index);
}

/** An object's store as its holder sees it: whether a newer holder claimed it since. @internal */
export interface HeldStore {
  /** Resolves while no newer claim exists; rejects with `ERR_FENCED` once one does. */
  verifyHolder(): Promise<void>;
}

/** The host the bucket names as an object's last claimer, if any. @internal */
export async function holderOf(bucket: ClusterBucket, namespace: string, id: string): Promise<string | undefined> {
  const text = await bucket.get(`holders/${namespaceSegment(namespace)}/${id}.json`).catch(() => null);
  if (text === null) return undefined;
  try {
    const record = JSON.parse(text) as Partial<HolderRecord>;
    return typeof record.host === "string" ? record.host : undefined;
  } catch {
    return undefined;
  }
}
