/**
 * Request-header checks: credentials (`Authorization: Bearer <token>`, or the legacy
 * `X-Auth-Email` + `X-Auth-Key` pair) and `Content-Type: application/json` for JSON bodies, answered
 * with the platform's own error envelopes.
 *
 * **Secrets never leave through errors.** Every failure built here uses fixed text; header values
 * are never interpolated into messages, and records are read without the `Headers` constructor,
 * whose own `TypeError` quotes invalid values verbatim.
 */
import type { ApiResponse, CheckedHeader } from "./envelope";
import { authenticationError, fail, invalidRequestHeaders, malformedJson } from "./envelope";

/** Request headers as a standard `Headers` or a plain record (any key case). */
export type HeadersInput = Headers | Readonly<Record<string, string | undefined>>;

/** Credentials the request carries; pass them to whatever knows the real secrets. */
export type Credentials =
  | { readonly scheme: "api_token"; readonly token: string }
  | { readonly scheme: "api_key"; readonly email: string; readonly key: string };

/** Either what the headers said, or the response to send back. */
export type HeaderCheck<T> = { ok: true; value: T } | { ok: false; response: ApiResponse<never> };

// RFC 9110 `token` characters, the only ones a header name may have.
const TOKEN_CHARS = new Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");

function isHeaderName(name: string): boolean {
  if (name.length === 0) return false;
  for (const c of name) if (!TOKEN_CHARS.has(c)) return false;
  return true;
}

/**
 * Reads one header case-insensitively without ever throwing: the value, `undefined` when the header
 * is absent, or a failure (400, `6003 Invalid request headers`) when `name` cannot be a header name
 * at all (the `Headers` class throws a `TypeError` there).
 *
 * @example
 * ```ts
 * readHeader({ "content-type": "application/json" }, "Content-Type"); // { ok: true, value: "application/json" }
 * readHeader(new Headers(), "=\n[").ok; // false
 * ```
 */
export function readHeader(headers: HeadersInput, name: string): HeaderCheck<string | undefined> {
  if (!isHeaderName(name)) return { ok: false, response: fail(400, invalidRequestHeaders([])) };
  // Guarded so that runtimes without a global Headers still work with plain records.
  if (typeof Headers !== "undefined" && headers instanceof Headers) {
    return { ok: true, value: headers.get(name) ?? undefined };
  }
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Readonly<Record<string, string | undefined>>)) {
    if (key.toLowerCase() === wanted && value !== undefined) return { ok: true, value };
  }
  return { ok: true, value: undefined };
}

/** {@link readHeader} for the fixed, valid names this module reads. */
function header(headers: HeadersInput, name: CheckedHeader): string | undefined {
  const read = readHeader(headers, name);
  return read.ok ? read.value : undefined;
}

// RFC 6750 b64token. Platform tokens are 40 characters of [A-Za-z0-9_-], a subset of this.
const BEARER_RE = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;
// Global API keys are 37 characters of digits and lower-case letters; anything else gets 6103.
const API_KEY_RE = /^[0-9a-z]{37}$/;

/**
 * Deliberately loose: the platform's exact rule is not documented, and we only reject what is
 * clearly not an address: whitespace, not exactly one `@`, an empty local part, or a domain without
 * a dot between two non-empty labels. A single left-to-right scan: a regular expression for this
 * rule backtracks quadratically on a long header full of dots.
 */
function isPlausibleEmail(email: string): boolean {
  let at = -1;
  let dotInDomain = false;
  for (let i = 0; i < email.length; i++) {
    const c = email.charCodeAt(i);
    if (c === 0x40) {
      if (at !== -1 || i === 0) return false;
      at = i;
    } else if (isWhitespaceCode(c)) {
      return false;
    } else if (c === 0x2e && at !== -1 && i > at + 1 && i < email.length - 1) {
      dotInDomain = true;
    }
  }
  return at !== -1 && dotInDomain;
}

/** What `\s` matches in a JavaScript regular expression, tested one code unit at a time. */
function isWhitespaceCode(c: number): boolean {
  return (
    (c >= 0x09 && c <= 0x0d) ||
    c === 0x20 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

function headerFailure(headers: CheckedHeader[]): ApiResponse<never> {
  return fail(400, invalidRequestHeaders(headers));
}

/**
 * Validates the credential headers of a request.
 *
 * - `Authorization` present: it must be `Bearer <token>`, else 400 with 6003 → 6111. When it is
 *   present the legacy headers are ignored, as the token is what authenticates the request.
 * - Otherwise `X-Auth-Email` and `X-Auth-Key` must both be present and well formed, else 400 with
 *   6003 → 6102 and/or 6103 (both when both are bad, as the platform reports them).
 * - Neither: 401 with `10000 Authentication error`.
 *
 * @example
 * ```ts
 * const auth = validateAuthHeaders(request.headers);
 * if (!auth.ok) return auth.response;
 * if (auth.value.scheme === "api_token") check(auth.value.token);
 * ```
 */
export function validateAuthHeaders(headers: HeadersInput): HeaderCheck<Credentials> {
  const authorization = header(headers, "authorization");
  if (authorization !== undefined) {
    const m = BEARER_RE.exec(authorization.trim());
    if (m === null || m[1] === undefined) return { ok: false, response: headerFailure(["authorization"]) };
    return { ok: true, value: { scheme: "api_token", token: m[1] } };
  }
  const email = header(headers, "x-auth-email");
  const key = header(headers, "x-auth-key");
  if (email === undefined && key === undefined) {
    return { ok: false, response: fail(401, authenticationError()) };
  }
  const bad: CheckedHeader[] = [];
  if (email === undefined || !isPlausibleEmail(email.trim())) bad.push("x-auth-email");
  if (key === undefined || !API_KEY_RE.test(key.trim())) bad.push("x-auth-key");
  if (bad.length > 0 || email === undefined || key === undefined) return { ok: false, response: headerFailure(bad) };
  return { ok: true, value: { scheme: "api_key", email: email.trim(), key: key.trim() } };
}

/**
 * Describes credentials for logs without their secret: the scheme, plus the e-mail for legacy keys.
 *
 * @example
 * ```ts
 * describeCredentials({ scheme: "api_token", token: "s3cr3t" }); // "api_token"
 * ```
 */
export function describeCredentials(credentials: Credentials): string {
  return credentials.scheme === "api_token" ? "api_token" : `api_key (${credentials.email})`;
}

/**
 * Checks that a request with a JSON body says `Content-Type: application/json` (parameters such as
 * `charset` allowed), else 400 with 6003 → 6105, the platform's answer.
 *
 * @example
 * ```ts
 * validateJsonContentType({ "Content-Type": "application/json; charset=utf-8" }).ok; // true
 * ```
 */
export function validateJsonContentType(headers: HeadersInput): HeaderCheck<"application/json"> {
  const raw = header(headers, "content-type");
  const mediaType = raw?.split(";", 1)[0]?.trim().toLowerCase();
  if (mediaType !== "application/json") return { ok: false, response: headerFailure(["content-type"]) };
  return { ok: true, value: "application/json" };
}

/**
 * Checks the content type, then parses the body text as JSON; malformed JSON gives 400 with
 * `6007 Malformed JSON in request body`. The parser's own message is dropped on purpose: it can
 * quote the body.
 *
 * @example
 * ```ts
 * const body = parseJsonBody(request.headers, await request.text());
 * if (!body.ok) return body.response;
 * ```
 */
export function parseJsonBody(headers: HeadersInput, text: string): HeaderCheck<unknown> {
  const contentType = validateJsonContentType(headers);
  if (!contentType.ok) return contentType;
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, response: fail(400, malformedJson()) };
  }
}

/**
 * Runs the credential check and, for requests with a body, the JSON checks, returning the first
 * failure in the order the platform checks them (credentials first).
 *
 * @example
 * ```ts
 * const checked = checkJsonRequest(request.headers, await request.text());
 * if (!checked.ok) return checked.response;
 * const { credentials, body } = checked.value;
 * ```
 */
export function checkJsonRequest(
  headers: HeadersInput,
  bodyText?: string,
): HeaderCheck<{ credentials: Credentials; body: unknown }> {
  const auth = validateAuthHeaders(headers);
  if (!auth.ok) return auth;
  if (bodyText === undefined) return { ok: true, value: { credentials: auth.value, body: undefined } };
  const body = parseJsonBody(headers, bodyText);
  if (!body.ok) return body;
  return { ok: true, value: { credentials: auth.value, body: body.value } };
}
