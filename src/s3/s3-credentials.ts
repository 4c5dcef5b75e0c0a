/**
 * The credentials requests are signed with: fixed ones, or a provider's (temporary credentials),
 * cached until shortly before they expire and fetched again when the store says they are no
 * longer valid. Concurrent requests share one call of the provider.
 *
 * @packageDocumentation
 */
import { AwsClient } from "aws4fetch";
import { ActorStoreError } from "../errors";
import type { Clock } from "../util/clock";
import { Watchdog } from "../util/watchdog";
import { credentialsProblem, type S3Credentials, type S3CredentialsProvider } from "./options";

/**
 * A provider's credentials are fetched again this long before their `expiration` (the AWS SDK's
 * window), or half their remaining lifetime when they had less than twice this left when fetched.
 * @internal
 */
export const REFRESH_AHEAD_MS = 300_000;

/**
 * Codes of an S3 error answer that say the credentials are no longer (or not) valid, so that
 * credentials fetched again may work: expired temporary credentials (`ExpiredToken`, 400 on AWS),
 * a session token the store no longer knows, a key id rotated away (`InvalidAccessKeyId`, 403).
 * @internal
 */
export const STALE_CREDENTIAL_CODES: ReadonlySet<string> = new Set([
  "ExpiredToken",
  "ExpiredTokenException",
  "TokenRefreshRequired",
  "InvalidToken",
  "InvalidAccessKeyId",
]);

/**
 * Marks a provider that hands out the credentials of another {@link CredentialSource} (a cluster's
 * one cache, given to each object's adapter): its value is the option that source's user gave.
 * A source over such a provider names that option in its messages, leaves timing the provider to
 * the source it delegates to, and reports that source's failure as its own (one message, not the
 * other's quoted inside it). @internal
 */
export const DELEGATED_CREDENTIALS: unique symbol = Symbol("actorstore.delegatedCredentials");

/** A provider over another source's credentials ({@link DELEGATED_CREDENTIALS}). @internal */
export type DelegatedProvider = S3CredentialsProvider & { readonly [DELEGATED_CREDENTIALS]: string };

/** What each failure of a provider said it did ("threw …", "did not resolve …"), already redacted. */
const failureDetails = new WeakMap<object, string>();

/** Credentials ready to sign with. @internal */
export interface Signer {
  readonly aws: AwsClient;
  readonly credentials: S3Credentials;
  /** Counts the provider's results: a request signed with an older one needs no new call. */
  readonly generation: number;
  /** When (clock ms) to fetch again; `Infinity`: only when the store refuses them. */
  readonly refreshAtMs: number;
}

function signerOf(credentials: S3Credentials, region: string, generation: number, refreshAtMs: number): Signer {
  const aws = new AwsClient({
    accessKeyId: credentials.accessKeyId,
    secretAccessKey: credentials.secretAccessKey,
    ...(credentials.sessionToken === undefined ? {} : { sessionToken: credentials.sessionToken }),
    service: "s3",
    region,
    retries: 0,
  });
  return { aws, credentials, generation, refreshAtMs };
}

/** Where the signing credentials come from. @internal */
export class CredentialSource {
  readonly #provider: S3CredentialsProvider | undefined;
  readonly #region: string;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #where: string;
  readonly #owner: string;
  #current: Signer | undefined;
  #pending: Promise<Signer> | undefined;
  /** The credentials of every signer so far (for redaction): a message may quote an older one. */
  readonly #seen: S3Credentials[] = [];

  /** The code of a provider's failure, and the option it names. */
  readonly #failure: { code: "ERR_WRITE_FAILED" | "ERR_UNAVAILABLE"; option: string };
  /** Whether the provider hands out another source's credentials (see {@link DELEGATED_CREDENTIALS}). */
  readonly #delegated: boolean;

  /**
   * `owner` names the options in a `TypeError`; `failure` is the code and option name of a provider
   * that rejects or hangs (default `ERR_WRITE_FAILED` and `credentials`, as the S3 adapter's; a
   * {@link DelegatedProvider} names its own option instead).
   */
  constructor(
    credentials: S3Credentials | S3CredentialsProvider,
    o: {
      region: string;
      clock: Clock;
      timeoutMs: number;
      where: string;
      owner?: string;
      failure?: { code: "ERR_WRITE_FAILED" | "ERR_UNAVAILABLE"; option: string };
    },
  ) {
    this.#owner = o.owner ?? "s3Persistence()";
    const delegated = typeof credentials === "function" ? delegatedOption(credentials) : undefined;
    this.#delegated = delegated !== undefined;
    this.#failure = {
      code: o.failure?.code ?? "ERR_WRITE_FAILED",
      option: delegated ?? o.failure?.option ?? "credentials",
    };
    this.#region = o.region;
    this.#clock = o.clock;
    // The source delegated to times its user's provider (with its own requestTimeoutMs).
    this.#timeoutMs = this.#delegated ? Number.POSITIVE_INFINITY : o.timeoutMs;
    this.#where = o.where;
    if (typeof credentials === "function") this.#provider = credentials;
    else {
      this.#current = signerOf(credentials, o.region, 0, Number.POSITIVE_INFINITY);
      this.#seen.push(credentials);
    }
  }

  /** The option the credentials came from, for messages: `credentials` unless told otherwise. */
  get option(): string {
    return this.#failure.option;
  }

  /** Whether credentials can be fetched again (a provider was given). */
  get refreshable(): boolean {
    return this.#provider !== undefined;
  }

  /** The credentials to sign the next request with: cached ones, unless due for refresh. */
  current(): Promise<Signer> {
    const c = this.#current;
    if (c !== undefined && this.#clock.now() < c.refreshAtMs) return Promise.resolve(c);
    return this.#fetch();
  }

  /**
   * Credentials newer than `stale`, which the store refused: the ones another request fetched
   * meanwhile, or the provider's next result (one call shared by every request that asks).
   */
  refresh(stale: Signer): Promise<Signer> {
    const c = this.#current;
    if (c !== undefined && c.generation > stale.generation) return Promise.resolve(c);
    return this.#fetch();
  }

  /** Every credential value seen so far, for cutting out of messages. */
  secrets(): string[] {
    return this.#seen.flatMap((c) => [c.accessKeyId, c.secretAccessKey, c.sessionToken ?? ""]).filter((s) => s !== "");
  }

  #fetch(): Promise<Signer> {
    this.#pending ??= this.#call().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #call(): Promise<Signer> {
    const provider = this.#provider as S3CredentialsProvider;
    const watchdog = new Watchdog(this.#clock);
    watchdog.arm(this.#timeoutMs);
    let result: unknown;
    try {
      const pending = Promise.resolve().then(() => provider());
      pending.catch(() => undefined);
      result = await watchdog.race(pending);
    } catch (error) {
      // The source delegated to failed (its user's provider rejected or hung): said once, as ours.
      const detail =
        this.#delegated && typeof error === "object" && error !== null ? failureDetails.get(error) : undefined;
      throw this.#failed(detail ?? `threw ${describeThrown(error, this.secrets())}`);
    } finally {
      watchdog.stop();
    }
    if (watchdog.hasFired) throw this.#failed(`did not resolve within ${this.#timeoutMs} ms (requestTimeoutMs)`);
    const credentials = checkProvided(result, this.#owner);
    const now = this.#clock.now();
    let refreshAtMs = Number.POSITIVE_INFINITY;
    if (credentials.expiration !== undefined) {
      const expiresAt = credentials.expiration.getTime();
      refreshAtMs = expiresAt - Math.min(REFRESH_AHEAD_MS, Math.max(0, (expiresAt - now) / 2));
    }
    const signer = signerOf(credentials, this.#region, (this.#current?.generation ?? 0) + 1, refreshAtMs);
    this.#current = signer;
    this.#seen.push(credentials);
    return signer;
  }

  #failed(what: string): ActorStoreError {
    const error = new ActorStoreError(
      this.#failure.code,
      `Signing a request to ${this.#where} failed: the credentials provider (option "${this.#failure.option}") ${what}. Check that it resolves with { accessKeyId, secretAccessKey, sessionToken? }; the request was not sent.`,
    );
    failureDetails.set(error, what);
    return error;
  }
}

/** The option a {@link DelegatedProvider} names, or `undefined` for a user's provider. */
function delegatedOption(provider: S3CredentialsProvider): string | undefined {
  const option = (provider as Partial<DelegatedProvider>)[DELEGATED_CREDENTIALS];
  return typeof option === "string" ? option : undefined;
}

/**
 * A provider's result as credentials, or a `TypeError` that names what is wrong and never shows a
 * value: the same checks as fixed credentials (a key id or token that cannot go into a header),
 * and `expiration`, when present, a valid `Date`. Other properties (an AWS SDK provider's
 * `credentialScope`, `accountId`, `$source`) are ignored.
 */
function checkProvided(result: unknown, owner: string): S3Credentials {
  const subject = 'the credentials provider (option "credentials") resolved with';
  if (typeof result !== "object" || result === null)
    throw new TypeError(`${owner}: ${subject} ${typeof result}, not { accessKeyId, secretAccessKey }.`);
  const { accessKeyId, secretAccessKey, sessionToken, expiration } = result as Record<string, unknown>;
  const problem = credentialsProblem({ accessKeyId, secretAccessKey, sessionToken }, `${subject} "credentials`);
  if (problem !== undefined) throw new TypeError(`${owner}: ${problem}`);
  if (expiration !== undefined && !(expiration instanceof Date && Number.isFinite(expiration.getTime())))
    throw new TypeError(`${owner}: ${subject} an "expiration" that is not a valid Date.`);
  const credentials: S3Credentials = {
    accessKeyId: accessKeyId as string,
    secretAccessKey: secretAccessKey as string,
  };
  if (sessionToken !== undefined) credentials.sessionToken = sessionToken as string;
  if (expiration !== undefined) credentials.expiration = expiration as Date;
  return credentials;
}

/**
 * What was thrown, as `<name>: <message>` with `secrets` and token-like runs cut out (a provider
 * that failed to parse an answer holding credentials may quote it).
 * @internal
 */
export function describeThrown(error: unknown, secrets: readonly string[]): string {
  const e = error as { name?: unknown; message?: unknown; code?: unknown } | null;
  const name = typeof e?.name === "string" && /^[A-Za-z]{1,40}$/.test(e.name) ? e.name : "an error";
  const code = typeof e?.code === "string" && /^[A-Za-z0-9_.-]{1,40}$/.test(e.code) ? ` (${e.code})` : "";
  const message = typeof e?.message === "string" ? e.message : String(error);
  return `${name}${code}: ${redactSecrets(message, secrets)}`;
}

/**
 * `text` (an error message from a `fetch` or a credentials provider) with every `secrets` value
 * cut out, whatever its case and whether URL-encoded or not, and every run of 20 or more
 * characters that a key, token, signature or their base64 or hex could be made of: whatever form a
 * message gives a request or credentials in, no secret of it survives. At most 300 characters.
 * @internal
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first: a signed header goes whole, before the key id in it is cut out of it.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length))
    for (const form of new Set([secret, encodeURIComponent(secret)]))
      out = out.replace(new RegExp(form.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gi"), "[redacted]");
  out = out.replace(/[A-Za-z0-9+/=_%-]{20,}/g, "[redacted]");
  return out.length > 300 ? `${out.slice(0, 300)}…` : out;
}
