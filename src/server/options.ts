/**
 * Checks of the options objects of {@link createApiHandler} and {@link startApiServer}: an
 * unknown option or a value of the wrong type is a `TypeError` that names the option, so a typo
 * never silently falls back to a default.
 *
 * Written as a small table of checks per option, so it can move onto a shared options validator
 * without changing behaviour.
 */
import { validateAuthHeaders } from "../api/auth";
import type { Clock } from "../util/clock";

/** One accepted email and Global API Key pair. */
export interface ApiKeyCredential {
  readonly email: string;
  readonly key: string;
}

/** The credentials the API accepts; any other token or key is refused as the platform refuses it. */
export interface ApiCredentials {
  /** API tokens accepted in `Authorization: Bearer <token>`. */
  readonly tokens?: readonly string[];
  /** Email and key pairs accepted in `X-Auth-Email` and `X-Auth-Key`. */
  readonly keys?: readonly ApiKeyCredential[];
}

/** Options of {@link createApiHandler}. */
export interface CreateApiHandlerOptions {
  /** The accepted credentials (required: a local API that accepts anything would hide auth bugs). */
  readonly credentials: ApiCredentials;
  /**
   * The first state: a fixture object, or the path of a JSON file holding one (see docs/api.md).
   * Used only when the storage holds no state yet; state kept in `directory` wins.
   */
  readonly fixture?: unknown;
  /** Keep the state in this directory (one storage object per account, zone and user). In memory when absent. */
  readonly directory?: string;
  /** The clock for timestamps (a `FakeClock` in tests). */
  readonly clock?: Clock;
  /** Where new ids come from; 32 random hex characters by default. */
  readonly idGenerator?: () => string;
}

/** Options of {@link startApiServer}: the handler's, plus where to listen. */
export interface StartApiServerOptions extends CreateApiHandlerOptions {
  /** TCP port; 0 (the default) picks a free one. */
  readonly port?: number;
  /** Interface to listen on; loopback (`127.0.0.1`) by default. */
  readonly hostname?: string;
  /**
   * The largest request body accepted, in bytes: a larger one is answered 413 (code 1005) without
   * being held in memory, and its connection is closed. 100 MiB by default, about the body limit
   * the platform's network applies on its Free and Pro plans.
   */
  readonly maxRequestBytes?: number;
}

/** {@link StartApiServerOptions.maxRequestBytes}'s default: 100 MiB. */
export const DEFAULT_MAX_REQUEST_BYTES = 100 * 1024 * 1024;

type Check = (value: unknown) => string | undefined;

const isString: Check = (v) => (typeof v === "string" && v.length > 0 ? undefined : "a non-empty string");
const isFunction: Check = (v) => (typeof v === "function" ? undefined : "a function");
const isClock: Check = (v) =>
  typeof v === "object" && v !== null && typeof (v as { now?: unknown }).now === "function"
    ? undefined
    : "a clock (an object with now())";
const isPort: Check = (v) =>
  typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 65535 ? undefined : "an integer from 0 to 65535";
const isByteCount: Check = (v) =>
  typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? undefined : "a positive integer (bytes)";
const anything: Check = () => undefined;

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? "a string" : typeof value;
}

function checkCredentials(value: unknown, name: string): void {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`${name}.credentials must be an object with tokens and/or keys (got ${describe(value)}).`);
  }
  for (const key of Object.keys(value)) {
    if (key !== "tokens" && key !== "keys") {
      throw new TypeError(`${name}.credentials.${key} is not an option; use tokens or keys.`);
    }
  }
  const { tokens, keys } = value as { tokens?: unknown; keys?: unknown };
  if (tokens !== undefined && (!Array.isArray(tokens) || !tokens.every((t) => typeof t === "string" && t.length > 0))) {
    throw new TypeError(`${name}.credentials.tokens must be an array of non-empty strings.`);
  }
  if (keys !== undefined) {
    const valid =
      Array.isArray(keys) &&
      keys.every(
        (k) =>
          typeof k === "object" &&
          k !== null &&
          typeof (k as ApiKeyCredential).email === "string" &&
          typeof (k as ApiKeyCredential).key === "string" &&
          Object.keys(k).every((x) => x === "email" || x === "key"),
      );
    if (!valid) throw new TypeError(`${name}.credentials.keys must be an array of { email, key } string pairs.`);
  }
  // A credential the request-header checks refuse could never authenticate a request: every request
  // carrying it would get 400 6003. Refused here by position; the value is a secret and never quoted.
  (tokens ?? []).forEach((token: string, i: number) => {
    const auth = validateAuthHeaders({ authorization: `Bearer ${token}` });
    if (!(auth.ok && auth.value.scheme === "api_token" && auth.value.token === token)) {
      throw new TypeError(
        `${name}.credentials.tokens[${i}] can never authenticate: a token is sent as Authorization: Bearer <token>, which allows only letters, digits, - . _ ~ + / and trailing =.`,
      );
    }
  });
  ((keys as ApiKeyCredential[] | undefined) ?? []).forEach((k, i) => {
    const auth = validateAuthHeaders({ "x-auth-email": k.email, "x-auth-key": k.key });
    if (!(auth.ok && auth.value.scheme === "api_key" && auth.value.email === k.email && auth.value.key === k.key)) {
      throw new TypeError(
        `${name}.credentials.keys[${i}] can never authenticate: X-Auth-Email must be an e-mail address and X-Auth-Key a Global API Key (37 digits or lower-case letters), without surrounding spaces.`,
      );
    }
  });
  if ((tokens?.length ?? 0) + ((keys as unknown[] | undefined)?.length ?? 0) === 0) {
    throw new TypeError(`${name}.credentials must list at least one token or key; no request could authenticate.`);
  }
}

const HANDLER_CHECKS: Readonly<Record<string, Check>> = {
  credentials: anything,
  fixture: anything,
  directory: isString,
  clock: isClock,
  idGenerator: isFunction,
};

const SERVER_CHECKS: Readonly<Record<string, Check>> = {
  ...HANDLER_CHECKS,
  port: isPort,
  hostname: isString,
  maxRequestBytes: isByteCount,
};

function checkAgainst(options: unknown, checks: Readonly<Record<string, Check>>, name: string): void {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`${name} options must be an object (got ${describe(options)}).`);
  }
  for (const [key, value] of Object.entries(options)) {
    const check = checks[key];
    if (check === undefined) {
      throw new TypeError(`${name}: ${key} is not an option; the options are ${Object.keys(checks).join(", ")}.`);
    }
    if (value === undefined) continue;
    const wanted = check(value);
    if (wanted !== undefined) throw new TypeError(`${name}: ${key} must be ${wanted} (got ${describe(value)}).`);
  }
  checkCredentials((options as { credentials?: unknown }).credentials, name);
}

/**
 * Throws a `TypeError` naming the first unknown or mistyped option of {@link createApiHandler}.
 *
 * @example
 * ```ts
 * checkHandlerOptions({ credentials: { tokens: ["t"] }, directroy: "x" }); // TypeError: … directroy is not an option …
 * ```
 */
export function checkHandlerOptions(options: unknown): asserts options is CreateApiHandlerOptions {
  checkAgainst(options, HANDLER_CHECKS, "createApiHandler");
}

/**
 * Throws a `TypeError` naming the first unknown or mistyped option of {@link startApiServer}.
 *
 * @example
 * ```ts
 * checkServerOptions({ credentials: { tokens: ["t"] }, port: "80" }); // TypeError: … port must be an integer …
 * ```
 */
export function checkServerOptions(options: unknown): asserts options is StartApiServerOptions {
  checkAgainst(options, SERVER_CHECKS, "startApiServer");
}
