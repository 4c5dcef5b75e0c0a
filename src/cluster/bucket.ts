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
 * create-only claims do). Requests are signed by `aws4fetch`; errors name the method, the key and
 * the status, never a credential.
 */
import { AwsClient } from "aws4fetch";
import type { PersistenceAdapter } from "../durability/persistence";
import { ActorStoreError } from "../errors";
import { type AlarmIndex, type AlarmIndexEntry, parseEntry } from "../host/alarm-index";
import { indexOf, type PersistenceFactory, withIndex } from "../host/options";
import { s3Persistence } from "../s3/index";
import { credentialsProblem, isRequestTimeoutMs, parseEndpoint, type S3Credentials } from "../s3/options";
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
  /** Access key and secret (never included in an error). */
  credentials: S3Credentials;
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
  readonly #aws: AwsClient;
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
    const problem = credentialsProblem(credentials);
    if (problem !== undefined) throw new TypeError(`cluster.bucket: ${problem}`);
    this.options = { endpoint: endpoint.replace(/\/+$/, ""), bucket, prefix, region, credentials, requestTimeoutMs };
    this.prefix = prefix;
    this.#aws = new AwsClient({
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      ...(credentials.sessionToken === undefined ? {} : { sessionToken: credentials.sessionToken }),
      service: "s3",
      region,
      retries: 0,
    });
    this.#base = `${this.options.endpoint}/${bucket}`;
  }

  /** `endpoint/bucket/prefix`, for messages. */
  get where(): string {
    return `${this.#base}/${this.prefix}`;
  }

  async #send(method: string, path: string, body?: string): Promise<Answer> {
    let timeouts = 0;
    for (let attempt = 0; ; attempt++) {
      const { status, text, timedOut } = await this.#attempt(method, path, body);
      if (timedOut) timeouts++;
      if (!TRANSIENT.has(status) || attempt >= 3) return { status, text, timeouts };
      await new Promise<void>((resolve) => this.#clock.setTimer(resolve, 25 * 2 ** attempt, { keepAlive: true }));
    }
  }

  /** One request, aborted when it has not ended within the timeout; status 0 when no answer came. */
  async #attempt(
    method: string,
    path: string,
    body: string | undefined,
  ): Promise<{ status: number; text: string; timedOut: boolean }> {
    const watchdog = new Watchdog(this.#clock);
    watchdog.arm(this.#timeoutMs);
    const request = (async () => {
      const response = await this.#aws.fetch(`${this.#base}${path}`, {
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

  #fail(method: string, key: string, { status, timeouts }: Answer): ActorStoreError {
    const why =
      status !== 0
        ? `HTTP ${status}`
        : timeouts > 0
          ? `no answer (${timeouts} of 4 attempts did not end within ${this.#timeoutMs} ms, requestTimeoutMs)`
          : "no answer";
    return new ActorStoreError(
      "ERR_UNAVAILABLE",
      `S3 ${method} of ${this.#base}/${key} failed: ${why}. Check the endpoint, the bucket and that the credentials may read and write it.`,
    );
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
    const keys: string[] = [];
    let token: string | undefined;
    for (;;) {
      const q = new URLSearchParams({ "list-type": "2", prefix: this.prefix + under });
      if (token !== undefined) q.set("continuation-token", token);
      const answer = await this.#send("GET", `?${q.toString()}`);
      const { status, text } = answer;
      if (status !== 200) throw this.#fail("LIST", `${this.prefix}${under}*`, answer);
      for (const m of text.matchAll(/<Key>([^<]*)<\/Key>/g))
        keys.push(decodeXml(m[1] as string).slice(this.prefix.length));
      if (!/<IsTruncated>true<\/IsTruncated>/.test(text)) return keys;
      token = /<NextContinuationToken>([^<]*)<\/NextContinuationToken>/.exec(text)?.[1];
      if (token === undefined) return keys;
      token = decodeXml(token);
    }
  }
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

/** The alarm index in the bucket: `<prefix>alarms/<namespace>/<id>.json`. @internal */
export function bucketAlarmIndex(bucket: ClusterBucket): AlarmIndex {
  const dir = (namespace: string) => `alarms/${namespaceSegment(namespace)}/`;
  return {
    async set(namespace, object, atMs) {
      const key = `${dir(namespace)}${object.id}.json`;
      if (atMs === null) await bucket.delete(key);
      else await bucket.put(key, JSON.stringify({ atMs, ...(object.name === undefined ? {} : { name: object.name }) }));
    },
    async list(namespace) {
      const keys = await bucket.list(dir(namespace));
      const out: AlarmIndexEntry[] = [];
      for (let i = 0; i < keys.length; i += 8) {
        const found = await Promise.all(
          keys.slice(i, i + 8).map(async (key) => {
            const m = /([0-9a-f]{64})\.json$/.exec(key);
            if (m === null) return null;
            const text = await bucket.get(key);
            return text === null ? null : parseEntry(m[1] as string, text);
          }),
        );
        for (const entry of found) if (entry !== null) out.push(entry);
      }
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
  const bucket = new ClusterBucket(options);
  const o = bucket.options;
  return withIndex(
    (id, namespace): PersistenceAdapter =>
      s3Persistence({
        endpoint: o.endpoint,
        bucket: o.bucket,
        prefix: `${o.prefix ?? ""}objects/${namespaceSegment(namespace)}/${id.toString()}/`,
        ...(o.region === undefined ? {} : { region: o.region }),
        credentials: o.credentials,
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
