/**
 * The options of `s3Persistence()` and their validation: an unknown or malformed option is a
 * `TypeError` that names it (never one that prints a credential).
 */
import type { PersistenceAdapter } from "../durability/persistence";
import type { Clock } from "../util/clock";

/** Credentials for the S3-compatible store. They are never included in an error or a log line. */
export interface S3Credentials {
  /** The access key id: printable ASCII without spaces (it goes into a request header). */
  accessKeyId: string;
  /** The secret access key. */
  secretAccessKey: string;
  /** A session token, for temporary credentials: printable ASCII without spaces, as the key id. */
  sessionToken?: string;
  /**
   * When temporary credentials stop working. Read from what an {@link S3CredentialsProvider}
   * resolves with: the provider is called again 5 minutes before (or after half the remaining
   * time, when less than 10 minutes were left). Fixed credentials are never fetched again.
   */
  expiration?: Date;
}

/**
 * A function that resolves with the credentials to sign with, for temporary credentials (STS
 * AssumeRole, a session token, rotated keys). The shape of the AWS SDK v3's credential providers,
 * so `fromTemporaryCredentials()`, `fromNodeProviderChain()` or `fromContainerMetadata()` of
 * `@aws-sdk/credential-providers` can be passed as they are (their other properties are ignored).
 *
 * The adapter calls it before its first request, again when the credentials it returned are
 * within 5 minutes of their `expiration`, and once more when the store answers a request with
 * `ExpiredToken`, `InvalidToken`, `TokenRefreshRequired` or `InvalidAccessKeyId` (or a HEAD with
 * 400/403, which carries no code): that request is then sent again with the new credentials, once.
 * Requests waiting for credentials at the same time share one call. A call that throws or does
 * not resolve within `requestTimeoutMs` fails the request (`ERR_WRITE_FAILED`, not retried; the
 * next request calls it again); a result that is not credentials (a key id or token that cannot go
 * into a header, an `expiration` that is not a `Date`) is a `TypeError` naming the property,
 * never its value.
 */
export type S3CredentialsProvider = () => Promise<S3Credentials>;

/** Options of `s3Persistence()`. */
export interface S3PersistenceOptions {
  /** The store's base URL, for example `"http://127.0.0.1:27480"` or `"https://s3.us-east-1.amazonaws.com"`. */
  endpoint: string;
  /** The bucket (it must exist). Requests use path-style addressing: `<endpoint>/<bucket>/<key>`. */
  bucket: string;
  /**
   * Where this object's data lives inside the bucket, for example `"room-1/"`. One object per
   * prefix; letters, digits and `/ . _ - = +` only. Default `""` (the whole bucket).
   */
  prefix?: string;
  /** The signing region. Default `"us-east-1"`. */
  region?: string;
  /**
   * Access key and secret, or a function that resolves with them ({@link S3CredentialsProvider}:
   * temporary credentials, fetched again before they expire and when the store refuses them).
   */
  credentials: S3Credentials | S3CredentialsProvider;
  /**
   * Open without claiming the object: `load()` reads, every write rejects, and no holder is fenced.
   * For inspection (the inspector CLI uses it). Default `false`.
   */
  readOnly?: boolean;
  /** How many times a request that failed transiently (503, 500, 409, a lost answer, a timeout) is retried. Default 6. */
  retries?: number;
  /**
   * How long one request may go without progress before it is aborted and retried (as a lost
   * answer is): its answer must begin within this many milliseconds, plus as many again per MiB
   * of body it sends (an upload is cut off only when it runs slower than about 1 MiB per
   * `requestTimeoutMs`), and each chunk of the answer's body must follow the one before within it.
   * `Infinity`: never. Default 30,000 (30 s).
   */
  requestTimeoutMs?: number;
  /**
   * Log objects are folded into a compacted segment once this many have accumulated, so that
   * opening and listing stay cheap. Default 128.
   */
  compactAfterObjects?: number;
  /** A compacted segment is merged with the next fold until it holds this many bytes. Default 8 MiB. */
  segmentBytes?: number;
  /** The clock used for retry backoff and request timeouts. Default: the system clock. */
  clock?: Clock;
  /**
   * The random source of the retry backoff's jitter: returns a number in [0, 1), as `Math.random`
   * does (a value outside is clamped into it, `NaN` counts as 0). The wait before retry `n` (from 0)
   * is `min(1000, 10 · 2ⁿ) · (0.5 + random() / 2)` ms of `clock`. Inject one, with a fake clock, to
   * make the waits exact in a test. Default: `Math.random`.
   */
  random?: () => number;
  /**
   * The `fetch` used for requests. Default: the global `fetch`. It receives each request with an
   * `AbortSignal` that aborts it on timeout; one that ignores the signal is not waited for. When it
   * throws, the adapter's error quotes its `cause.code`, or else its message with every credential,
   * the signature and any token-like run of characters cut out.
   */
  fetch?: typeof fetch;
}

/** Validated options with defaults filled in. @internal */
export interface ResolvedS3Options {
  endpoint: string;
  bucket: string;
  prefix: string;
  region: string;
  credentials: S3Credentials | S3CredentialsProvider;
  readOnly: boolean;
  retries: number;
  requestTimeoutMs: number;
  compactAfterObjects: number;
  segmentBytes: number;
  clock: Clock | undefined;
  random: (() => number) | undefined;
  fetch: typeof fetch | undefined;
}

const KNOWN = new Set([
  "endpoint",
  "bucket",
  "prefix",
  "region",
  "credentials",
  "readOnly",
  "retries",
  "requestTimeoutMs",
  "compactAfterObjects",
  "segmentBytes",
  "clock",
  "random",
  "fetch",
]);
const CREDENTIAL_KEYS = new Set(["accessKeyId", "secretAccessKey", "sessionToken", "expiration"]);
const PREFIX_RE = /^[A-Za-z0-9/._=+-]*$/;
const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

function fail(message: string): never {
  throw new TypeError(`s3Persistence(): ${message}`);
}

function positiveInteger(name: string, value: unknown, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min)
    fail(`option "${name}" must be an integer ≥ ${min}; got ${typeof value === "number" ? value : typeof value}.`);
  return value;
}

/**
 * The endpoint as a URL, or why it cannot be one: an http: or https: URL without credentials (they
 * would end up in error messages), query or fragment. Shared with the cluster's bucket. @internal
 */
export function parseEndpoint(endpoint: unknown): URL | string {
  if (typeof endpoint !== "string") return `option "endpoint" must be a URL string.`;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return `option "endpoint" is not a valid URL.`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `option "endpoint" must be an http: or https: URL.`;
  if (url.username !== "" || url.password !== "")
    return `option "endpoint" must not contain credentials; pass them in "credentials".`;
  if (url.search !== "" || url.hash !== "") return `option "endpoint" must not have a query or a fragment.`;
  return url;
}

/**
 * Why `credentials` cannot sign a request, or `undefined` when they can: `accessKeyId` (which goes
 * into the `Authorization` header) and `sessionToken` (its own header) must be printable ASCII
 * without spaces. A value that is not (a newline read from a file with the key) made `fetch` reject
 * the signed headers with a message that quoted them, access key id and signature included. The
 * reason never shows the value. Shared with the cluster's bucket. @internal
 */
export function credentialsProblem(credentials: unknown, subject = 'option "credentials'): string | undefined {
  if (typeof credentials !== "object" || credentials === null)
    return `${subject}" must be { accessKeyId, secretAccessKey }.`;
  const { accessKeyId, secretAccessKey, sessionToken } = credentials as Record<string, unknown>;
  const headerSafe = /^[\x21-\x7e]+$/;
  const unsafe = (name: string) =>
    `${subject}.${name}" must be printable ASCII without spaces or line breaks (a key read from a file may end in a newline: trim it); its value is not shown.`;
  if (typeof accessKeyId !== "string" || accessKeyId === "")
    return `${subject}.accessKeyId" must be a non-empty string.`;
  if (!headerSafe.test(accessKeyId)) return unsafe("accessKeyId");
  if (typeof secretAccessKey !== "string" || secretAccessKey === "")
    return `${subject}.secretAccessKey" must be a non-empty string.`;
  if (sessionToken !== undefined && typeof sessionToken !== "string")
    return `${subject}.sessionToken" must be a string.`;
  if (typeof sessionToken === "string" && !headerSafe.test(sessionToken)) return unsafe("sessionToken");
  return undefined;
}

/** Fixed credentials, checked and copied, or a provider (whose results are checked when it is called). */
function resolveCredentials(c: unknown): S3Credentials | S3CredentialsProvider {
  if (typeof c === "function") return c as S3CredentialsProvider;
  if (typeof c !== "object" || c === null)
    fail(`option "credentials" must be { accessKeyId, secretAccessKey } or a function that resolves with them.`);
  for (const key of Object.keys(c)) if (!CREDENTIAL_KEYS.has(key)) fail(`unknown option "credentials.${key}".`);
  const problem = credentialsProblem(c);
  if (problem !== undefined) fail(problem);
  const { accessKeyId, secretAccessKey, sessionToken, expiration } = c as Record<string, unknown>;
  if (expiration !== undefined && !(expiration instanceof Date))
    fail(`option "credentials.expiration" must be a Date.`);
  const credentials: S3Credentials = { accessKeyId: accessKeyId as string, secretAccessKey: secretAccessKey as string };
  if (sessionToken !== undefined) credentials.sessionToken = sessionToken as string;
  if (expiration !== undefined) credentials.expiration = expiration;
  return credentials;
}

/** Whether `value` is a request timeout: an integer number of ms ≥ 1, or `Infinity` (none). @internal */
export function isRequestTimeoutMs(value: unknown): value is number {
  return value === Number.POSITIVE_INFINITY || (Number.isSafeInteger(value) && (value as number) >= 1);
}

/** Validates `s3Persistence()` options. @internal */
export function resolveS3Options(options: unknown): ResolvedS3Options {
  if (typeof options !== "object" || options === null) fail("expected an options object.");
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!KNOWN.has(key)) fail(`unknown option "${key}".`);
  const url = parseEndpoint(o.endpoint);
  if (typeof url === "string") fail(url);
  const bucket = o.bucket;
  if (typeof bucket !== "string" || !BUCKET_RE.test(bucket))
    fail(`option "bucket" must be a bucket name (3-63 lowercase letters, digits, dots, hyphens).`);
  const prefix = o.prefix ?? "";
  if (typeof prefix !== "string" || !PREFIX_RE.test(prefix) || prefix.startsWith("/") || prefix.includes("//"))
    fail(`option "prefix" may hold only letters, digits and / . _ = + - (not leading "/" or "//").`);
  const region = o.region ?? "us-east-1";
  if (typeof region !== "string" || !/^[a-z0-9-]{1,64}$/.test(region))
    fail(`option "region" must be a region name such as "us-east-1".`);
  const credentials = resolveCredentials(o.credentials);
  const readOnly = o.readOnly ?? false;
  if (typeof readOnly !== "boolean") fail(`option "readOnly" must be a boolean.`);
  const clock = o.clock as Clock | undefined;
  if (
    clock !== undefined &&
    (typeof clock !== "object" ||
      clock === null ||
      typeof clock.setTimer !== "function" ||
      typeof clock.now !== "function")
  )
    fail(`option "clock" must be a Clock (now, setTimer, clearTimer).`);
  const random = o.random;
  if (random !== undefined && typeof random !== "function")
    fail(`option "random" must be a function returning a number in [0, 1), such as Math.random.`);
  const fetchFn = o.fetch;
  if (fetchFn !== undefined && typeof fetchFn !== "function") fail(`option "fetch" must be a function.`);
  const requestTimeoutMs = o.requestTimeoutMs ?? 30_000;
  if (!isRequestTimeoutMs(requestTimeoutMs))
    fail(
      `option "requestTimeoutMs" must be an integer ≥ 1 (milliseconds) or Infinity; got ${typeof requestTimeoutMs === "number" ? requestTimeoutMs : typeof requestTimeoutMs}.`,
    );
  return {
    endpoint: url.href.replace(/\/+$/, ""),
    bucket,
    prefix,
    region,
    credentials,
    readOnly,
    retries: positiveInteger("retries", o.retries, 6, 0),
    requestTimeoutMs,
    compactAfterObjects: positiveInteger("compactAfterObjects", o.compactAfterObjects, 128, 2),
    segmentBytes: positiveInteger("segmentBytes", o.segmentBytes, 8 * 1024 * 1024),
    clock,
    random: random as (() => number) | undefined,
    fetch: fetchFn as typeof fetch | undefined,
  };
}

/** Request counts and sizes of an S3 adapter. */
export interface S3PersistenceStats {
  /** Requests sent, every retry counted. */
  requests: { PUT: number; GET: number; HEAD: number; DELETE: number; LIST: number };
  /** Log objects written (one per group commit) since creation. */
  logObjects: number;
  /** Appends that resolved. */
  appends: number;
  /** Log objects not yet folded into a compacted segment. */
  unfoldedObjects: number;
  /** Compacted segments and snapshots in the manifest. */
  segments: number;
  snapshots: number;
  /** Compactions done by this adapter. */
  compactions: number;
}

/** The S3 adapter's public face: the contract plus where it writes and what it cost. */
export interface S3Persistence extends PersistenceAdapter {
  /** `endpoint/bucket/prefix`, for messages. Never holds credentials. */
  readonly location: string;
  /** Request counts and sizes. */
  stats(): S3PersistenceStats;
  /** Folds the log objects written so far (all but the newest) into a compacted segment now. */
  compact(): Promise<void>;
}
