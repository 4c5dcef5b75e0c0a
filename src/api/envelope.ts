/**
 * The v4 response envelope: `{ result, success, errors, messages, result_info? }`, its builders, a
 * tolerant validator for real responses, and typed constructors for the error codes the platform is
 * known to return (http-models.md §1.1, §1.9).
 */
import type { Validation, ValidationIssue } from "./validation";
import { invalid, isRecord, joinPath, valid } from "./validation";

/** An element of `errors` or `messages`. Unknown keys seen on the wire (`error_chain`, `meta`) are typed. */
export interface ResponseInfo {
  /** Integer, at least 1000. */
  readonly code: number;
  readonly message: string;
  readonly documentation_url?: string;
  readonly source?: { readonly pointer?: string };
  /** Nested causes, e.g. 6003 → 6111. */
  readonly error_chain?: readonly ResponseInfo[];
  /** Extra data, e.g. `meta.id` on a duplicate filter. */
  readonly meta?: Readonly<Record<string, unknown>>;
}

/** Pagination of list responses; `count` is the number of items on this page. */
export interface ResultInfo {
  readonly page: number;
  readonly per_page: number;
  readonly count: number;
  readonly total_count: number;
  readonly total_pages: number;
}

/** A successful response body. */
export interface SuccessEnvelope<T> {
  readonly success: true;
  readonly result: T;
  readonly errors: readonly [];
  readonly messages: readonly ResponseInfo[];
  readonly result_info?: ResultInfo;
}

/** A failed response body: `result` is `null` and there is at least one error. */
export interface FailureEnvelope {
  readonly success: false;
  readonly result: null;
  readonly errors: readonly [ResponseInfo, ...ResponseInfo[]];
  readonly messages: readonly ResponseInfo[];
}

/** Any response body. */
export type Envelope<T> = SuccessEnvelope<T> | FailureEnvelope;

/** A response body with the HTTP status it travels with. */
export interface ApiResponse<T> {
  readonly status: number;
  readonly body: Envelope<T>;
}

/** Options for {@link successEnvelope}. */
export interface SuccessEnvelopeOptions {
  readonly resultInfo?: ResultInfo;
  readonly messages?: readonly ResponseInfo[];
}

/**
 * Builds a success body.
 *
 * @example
 * ```ts
 * successEnvelope({ id: "a" }); // { result: { id: "a" }, success: true, errors: [], messages: [] }
 * ```
 */
export function successEnvelope<T>(result: T, options: SuccessEnvelopeOptions = {}): SuccessEnvelope<T> {
  const body = { result, success: true as const, errors: [] as const, messages: options.messages ?? [] };
  return options.resultInfo === undefined ? body : { ...body, result_info: options.resultInfo };
}

/**
 * Builds a failure body; the type requires at least one error, matching the platform (the OAS says
 * `minLength: 1`, which was meant to be `minItems`).
 *
 * @example
 * ```ts
 * failureEnvelope([authenticationError()]);
 * // { result: null, success: false, errors: [{ code: 10000, message: "Authentication error" }], messages: [] }
 * ```
 */
export function failureEnvelope(
  errors: readonly [ResponseInfo, ...ResponseInfo[]],
  messages: readonly ResponseInfo[] = [],
): FailureEnvelope {
  return { result: null, success: false, errors, messages };
}

/**
 * Builds an {@link ApiResponse} for a success.
 *
 * @example
 * ```ts
 * ok([], { resultInfo }).status; // 200
 * ```
 */
export function ok<T>(result: T, options: SuccessEnvelopeOptions & { status?: number } = {}): ApiResponse<T> {
  return { status: options.status ?? 200, body: successEnvelope(result, options) };
}

/**
 * Builds an {@link ApiResponse} for a failure.
 *
 * @example
 * ```ts
 * fail(403, authenticationError()).body.success; // false
 * ```
 */
export function fail<T = never>(status: number, first: ResponseInfo, ...rest: ResponseInfo[]): ApiResponse<T> {
  return { status, body: failureEnvelope([first, ...rest]) };
}

// ---------------------------------------------------------------------------------------------
// Error codes. Codes marked "platform" were observed on the wire (http-models.md §1.9 and the
// threads it cites); codes marked "actorstore" are our own, used where the platform's value is not
// documented, and kept out of the platform's known ranges' meanings so they cannot be confused.

/** Every error code the models produce, with where it comes from. */
export const ERROR_CODES = {
  /** platform: `Invalid request headers`, wraps 6102/6103/6105/6111 in `error_chain`. */
  invalidRequestHeaders: 6003,
  /** platform */
  invalidEmailHeader: 6102,
  /** platform */
  invalidKeyHeader: 6103,
  /** platform */
  invalidContentTypeHeader: 6105,
  /** platform */
  invalidAuthorizationHeader: 6111,
  /** platform: `Malformed JSON in request body`. */
  malformedJson: 6007,
  /** platform */
  noRoute: 7000,
  /** platform */
  couldNotRoute: 7003,
  /** platform */
  invalidAccessToken: 9109,
  /** platform: `Unknown X-Auth-Key or X-Auth-Email`. */
  unknownApiKey: 9103,
  /** platform */
  authenticationError: 10000,
  /** platform: duplicate filter, with `meta.id`. */
  duplicateFilter: 10102,
  /** platform: firewall rule problem reported "at index i". */
  firewallRuleAtIndex: 10202,
  /** actorstore: a query parameter or body field failed validation. */
  invalidRequest: 1001,
  /** actorstore: a filter expression failed to parse (validate-expr returns no code at all). */
  filterParseError: 10100,
  /** actorstore: a filter field other than the expression is invalid. */
  invalidFilter: 10101,
  /** actorstore: the filter does not exist in the zone. */
  filterNotFound: 10103,
  /** actorstore: PUT/DELETE refused on a filter created by the one-call rule POST. */
  filterManagedByRule: 10104,
  /** actorstore: DELETE refused on a filter still referenced by a rule. */
  filterInUse: 10105,
  /** actorstore: a firewall rule field is invalid. */
  invalidFirewallRule: 10200,
  /** actorstore: creating the rules would exceed the zone's rule quota. */
  firewallRuleQuotaExceeded: 10201,
  /** actorstore: the zone's plan does not offer the feature (firewall rules, or the `log` action). */
  featureUnavailable: 10203,
  /** actorstore: the firewall rule does not exist in the zone. */
  firewallRuleNotFound: 10204,
  /** actorstore: an invitation can no longer be answered. */
  inviteNotPending: 1002,
  /** actorstore: the service could not read or save its state; nothing was changed. */
  internalError: 1004,
  /** actorstore: no invitation with that id. */
  inviteNotFound: 1003,
  /** actorstore: the request body is larger than the server accepts (413). */
  requestTooLarge: 1005,
  /** actorstore: the zone has no entry-point ruleset in that phase yet. */
  rulesetNotFound: 10500,
  /** actorstore: the path names a phase the rulesets API does not have. */
  unknownRulesetPhase: 10501,
} as const;

/**
 * `10000 Authentication error` (HTTP 401/403 on the platform).
 *
 * @example
 * ```ts
 * authenticationError(); // { code: 10000, message: "Authentication error" }
 * ```
 */
export function authenticationError(): ResponseInfo {
  return { code: ERROR_CODES.authenticationError, message: "Authentication error" };
}

/**
 * `9109 Invalid access token`.
 *
 * @example
 * ```ts
 * invalidAccessToken().code; // 9109
 * ```
 */
export function invalidAccessToken(): ResponseInfo {
  return { code: ERROR_CODES.invalidAccessToken, message: "Invalid access token" };
}

/** The headers whose format the platform reports in a 6003 `error_chain`. */
export const CHECKED_HEADERS = ["authorization", "x-auth-email", "x-auth-key", "content-type"] as const;
/** One of {@link CHECKED_HEADERS}. */
export type CheckedHeader = (typeof CHECKED_HEADERS)[number];

const HEADER_FORMAT_ERRORS: Record<CheckedHeader, ResponseInfo> = {
  authorization: { code: ERROR_CODES.invalidAuthorizationHeader, message: "Invalid format for Authorization header" },
  "x-auth-email": { code: ERROR_CODES.invalidEmailHeader, message: "Invalid format for X-Auth-Email header" },
  "x-auth-key": { code: ERROR_CODES.invalidKeyHeader, message: "Invalid format for X-Auth-Key header" },
  "content-type": {
    code: ERROR_CODES.invalidContentTypeHeader,
    message: "Invalid Content-Type header, valid values are application/json,multipart/form-data",
  },
};

/**
 * `6003 Invalid request headers` with one chained cause per bad header, exactly as the platform
 * reports them (e.g. 6102 and 6103 together when both legacy headers are malformed).
 *
 * @example
 * ```ts
 * invalidRequestHeaders(["authorization"]);
 * // { code: 6003, message: "Invalid request headers",
 * //   error_chain: [{ code: 6111, message: "Invalid format for Authorization header" }] }
 * ```
 */
export function invalidRequestHeaders(headers: readonly CheckedHeader[]): ResponseInfo {
  return {
    code: ERROR_CODES.invalidRequestHeaders,
    message: "Invalid request headers",
    error_chain: headers.map((h) => HEADER_FORMAT_ERRORS[h]),
  };
}

/**
 * `6007 Malformed JSON in request body`.
 *
 * @example
 * ```ts
 * malformedJson().code; // 6007
 * ```
 */
export function malformedJson(): ResponseInfo {
  return { code: ERROR_CODES.malformedJson, message: "Malformed JSON in request body" };
}

/**
 * `7003 Could not route to …` for a path whose object identifier is invalid.
 *
 * @example
 * ```ts
 * couldNotRoute("/zones/nope").message;
 * // "Could not route to /zones/nope, perhaps your object identifier is invalid?"
 * ```
 */
export function couldNotRoute(path: string): ResponseInfo {
  return {
    code: ERROR_CODES.couldNotRoute,
    message: `Could not route to ${path}, perhaps your object identifier is invalid?`,
  };
}

/**
 * `7000 No route for that URI`, which the platform sends alongside 7003.
 *
 * @example
 * ```ts
 * noRoute().code; // 7000
 * ```
 */
export function noRoute(): ResponseInfo {
  return { code: ERROR_CODES.noRoute, message: "No route for that URI" };
}

/**
 * `10102 config duplicates an already existing config`, with the existing filter's id in `meta.id`
 * so that clients can reuse it.
 *
 * @example
 * ```ts
 * duplicateFilter("372e67954025e0ba6aaa6d586b9e0b59").meta; // { id: "372e…" }
 * ```
 */
export function duplicateFilter(existingFilterId: string): ResponseInfo {
  return {
    code: ERROR_CODES.duplicateFilter,
    message: "config duplicates an already existing config",
    meta: { id: existingFilterId },
  };
}

/**
 * `10202` for a problem with the filter of the rule at `index` in a rules POST.
 *
 * @example
 * ```ts
 * firewallRuleAtIndex(0, "duplicates an already existing filter").message;
 * // "filter at index 0: duplicates an already existing filter"
 * ```
 */
export function firewallRuleAtIndex(index: number, reason: string): ResponseInfo {
  return { code: ERROR_CODES.firewallRuleAtIndex, message: `filter at index ${index}: ${reason}` };
}

/**
 * A filter expression that failed to parse; the message carries the wirefilter-style text
 * (`Filter parsing error (1:1): …`) as validate-expr does.
 *
 * @example
 * ```ts
 * filterParseError("Filter parsing error (1:1):\nxyz\n^^^ unknown identifier\n", "[0].expression");
 * ```
 */
export function filterParseError(formatted: string, pointer?: string): ResponseInfo {
  const info: ResponseInfo = { code: ERROR_CODES.filterParseError, message: formatted };
  return pointer === undefined ? info : { ...info, source: { pointer } };
}

/**
 * A request field that failed validation, with the field in `source.pointer`.
 *
 * @example
 * ```ts
 * invalidField({ path: "per_page", message: "per_page must be between 5 and 50." });
 * ```
 */
export function invalidField(issue: ValidationIssue, code: number = ERROR_CODES.invalidRequest): ResponseInfo {
  const info: ResponseInfo = { code: issue.code ?? code, message: issue.message };
  const withSource = issue.path === "" ? info : { ...info, source: { pointer: issue.path } };
  return issue.meta === undefined ? withSource : { ...withSource, meta: issue.meta };
}

/**
 * Turns validation issues into a 400 response, one error per issue.
 *
 * @example
 * ```ts
 * const v = parseListingParams("per_page=1", ZONES_LISTING);
 * if (!v.ok) return invalidRequest(v.errors);
 * ```
 */
export function invalidRequest<T = never>(
  issues: readonly ValidationIssue[],
  code: number = ERROR_CODES.invalidRequest,
): ApiResponse<T> {
  const errors = issues.map((i) => invalidField(i, code));
  const [first, ...rest] = errors;
  // A validator that failed always reports at least one issue; the fallback keeps the type honest.
  return fail(400, first ?? { code, message: "Invalid request." }, ...rest);
}

// ---------------------------------------------------------------------------------------------
// Validation of real responses.

/**
 * An error or message as read from the wire. Unlike {@link ResponseInfo} (what this library
 * sends), `code` may be absent: the platform's validate-expr failure has none, and the rulesets
 * schema (`rulesets_Message`) makes it optional. When present it is an integer of at least 1000.
 */
export interface ReceivedInfo extends Omit<ResponseInfo, "code" | "error_chain"> {
  readonly code?: number;
  readonly error_chain?: readonly ReceivedInfo[];
}

/** A response body as read from the wire: typed where known, tolerant of everything else. */
export interface ParsedEnvelope {
  readonly success: boolean;
  readonly result: unknown;
  readonly errors: readonly ReceivedInfo[];
  /** `null` on the wire (validate-expr) and absent bodies are both normalised to `[]`. */
  readonly messages: readonly ReceivedInfo[];
  readonly result_info?: Partial<ResultInfo>;
}

function checkInfo(value: unknown, path: string, issues: ValidationIssue[], depth: number): ReceivedInfo | undefined {
  if (!isRecord(value)) {
    issues.push({ path, message: `${path} must be an object with a message.` });
    return undefined;
  }
  const start = issues.length;
  const { code, message } = value;
  if (code !== undefined && (typeof code !== "number" || !Number.isInteger(code) || code < 1000)) {
    issues.push({
      path: joinPath(path, "code"),
      message: `${joinPath(path, "code")}, when present, must be an integer of at least 1000.`,
    });
  }
  if (typeof message !== "string") {
    issues.push({ path: joinPath(path, "message"), message: `${joinPath(path, "message")} must be a string.` });
  }
  if (value.documentation_url !== undefined && typeof value.documentation_url !== "string") {
    const p = joinPath(path, "documentation_url");
    issues.push({ path: p, message: `${p} must be a string.` });
  }
  if (value.source !== undefined) {
    const p = joinPath(path, "source");
    if (!isRecord(value.source) || (value.source.pointer !== undefined && typeof value.source.pointer !== "string")) {
      issues.push({ path: p, message: `${p} must be an object with an optional string pointer.` });
    }
  }
  // error_chain nests the same shape; a depth cap keeps hostile input from recursing without bound.
  if (value.error_chain !== undefined && depth < 8) {
    const p = joinPath(path, "error_chain");
    if (!Array.isArray(value.error_chain)) issues.push({ path: p, message: `${p} must be an array.` });
    else
      value.error_chain.forEach((e, i) => {
        checkInfo(e, joinPath(p, i), issues, depth + 1);
      });
  }
  return issues.length === start ? (value as unknown as ReceivedInfo) : undefined;
}

function checkInfoList(body: Record<string, unknown>, key: "errors" | "messages", issues: ValidationIssue[]) {
  const value = body[key];
  // The platform sends `messages: null` (validate-expr) and some failures omit `messages`.
  if (value === null || (value === undefined && key === "messages")) return [];
  if (!Array.isArray(value)) {
    issues.push({ path: key, message: `${key} must be an array.` });
    return [];
  }
  const out: ReceivedInfo[] = [];
  value.forEach((v, i) => {
    const info = checkInfo(v, joinPath(key, i), issues, 0);
    if (info !== undefined) out.push(info);
  });
  return out;
}

/**
 * Validates a parsed JSON response body as a v4 envelope. Unknown keys are tolerated; `messages: null`,
 * a missing `result` on failures and errors without a `code` (validate-expr, rulesets) are accepted,
 * because real responses do all three.
 *
 * @example
 * ```ts
 * const v = validateEnvelope(JSON.parse(text));
 * if (v.ok && v.value.success) use(v.value.result);
 * ```
 */
export function validateEnvelope(value: unknown): Validation<ParsedEnvelope> {
  if (!isRecord(value)) return invalid({ path: "", message: "The response body must be a JSON object." });
  const issues: ValidationIssue[] = [];
  if (typeof value.success !== "boolean") issues.push({ path: "success", message: "success must be true or false." });
  const errors = checkInfoList(value, "errors", issues);
  const messages = checkInfoList(value, "messages", issues);
  if (value.success === true && errors.length > 0) {
    issues.push({ path: "errors", message: "errors must be empty when success is true." });
  }
  if (value.success === false) {
    if (errors.length === 0 && !issues.some((i) => i.path.startsWith("errors"))) {
      issues.push({ path: "errors", message: "errors must hold at least one error when success is false." });
    }
    if (value.result !== undefined && value.result !== null) {
      issues.push({ path: "result", message: "result must be null when success is false." });
    }
  }
  let resultInfo: Partial<ResultInfo> | undefined;
  if (value.result_info !== undefined && value.result_info !== null) {
    if (!isRecord(value.result_info)) {
      issues.push({ path: "result_info", message: "result_info must be an object." });
    } else {
      // firewall_result_info omits total_pages and the SDK declares only page and per_page, so
      // every field is optional; present ones must be non-negative integers.
      for (const key of ["page", "per_page", "count", "total_count", "total_pages"] as const) {
        const n = value.result_info[key];
        if (n !== undefined && (typeof n !== "number" || !Number.isInteger(n) || n < 0)) {
          const p = joinPath("result_info", key);
          issues.push({ path: p, message: `${p} must be a non-negative integer.` });
        }
      }
      resultInfo = value.result_info as Partial<ResultInfo>;
    }
  }
  if (issues.length > 0) return { ok: false, errors: issues };
  const parsed: ParsedEnvelope = {
    success: value.success as boolean,
    result: value.result ?? null,
    errors,
    messages,
  };
  return valid(resultInfo === undefined ? parsed : { ...parsed, result_info: resultInfo });
}
