/**
 * Filters as a pure state machine over one zone's firewall state (http-models.md §1.2, specification §2.2,
 * §4.2 rules 2–3). Every operation takes the current {@link FirewallState} and returns the next
 * state with the response to send; nothing is mutated, so a caller can keep or discard the result.
 */
import type { ApiResponse, ResponseInfo } from "./envelope";
import { duplicateFilter, ERROR_CODES, fail, invalidField, invalidRequest, ok } from "./envelope";
import type { IdGenerator } from "./ids";
import { isHexId, randomHexId } from "./ids";
import { FILTERS_LISTING, paginate, parseListingParams } from "./listing";
import { parseExpression } from "./rules-language/index";
import type { QueryInput, Validation, ValidationIssue } from "./validation";
import {
  booleanParam,
  characterLength,
  checkOptionalBoolean,
  checkOptionalString,
  isRecord,
  joinPath,
  singleParam,
  toSearchParams,
} from "./validation";

/** The longest filter expression accepted (developers.cloudflare.com rules-language limits). */
export const MAX_EXPRESSION_LENGTH = 4096;
/** Maximum length of `description` on filters and rules. */
export const MAX_DESCRIPTION_LENGTH = 500;
/** Maximum length of `ref` on filters and rules. */
export const MAX_REF_LENGTH = 50;

/** A filter as the API returns it. */
export interface Filter {
  readonly id: string;
  readonly expression: string;
  readonly paused: boolean;
  readonly description?: string;
  readonly ref?: string;
}

/** The fields a client sends to create or replace a filter. */
export interface FilterInput {
  readonly expression: string;
  readonly paused?: boolean;
  readonly description?: string;
  readonly ref?: string;
}

/** A firewall rule as stored: like the API's rule, but pointing at its filter by id. */
export interface StoredFirewallRule {
  readonly id: string;
  readonly filterId: string;
  readonly action: string;
  readonly priority: number | null;
  readonly paused: boolean;
  readonly description?: string;
  readonly ref?: string;
  readonly products?: readonly string[];
}

/** One zone's filters and firewall rules. */
export interface FirewallState {
  readonly filters: readonly Filter[];
  readonly rules: readonly StoredFirewallRule[];
  /**
   * Filters created inline by the one-call rule POST. PUT and DELETE on them are refused (specification §4.2
   * rule 3): they may be shared with other features, so only deleting the rule with
   * `delete_filter_if_unused` removes them.
   */
  readonly ruleOwnedFilterIds: readonly string[];
}

/**
 * A zone with no filters and no rules.
 *
 * @example
 * ```ts
 * let state = EMPTY_FIREWALL_STATE;
 * ```
 */
export const EMPTY_FIREWALL_STATE: FirewallState = { filters: [], rules: [], ruleOwnedFilterIds: [] };

/** Options shared by operations that create objects. */
export interface CreateOptions {
  /** Where new ids come from; 32 random hex characters by default. */
  readonly idGenerator?: IdGenerator;
}

/** The next state and the response to send. */
export interface FirewallTransition<T> {
  readonly state: FirewallState;
  readonly response: ApiResponse<T>;
}

/**
 * Parses a filter expression with the rules-language parser and the length limit. Issues carry the
 * filter-parse code and the parser's wirefilter-style text.
 *
 * @example
 * ```ts
 * checkExpression('http.request.uri.path contains "/login"', "expression"); // []
 * ```
 */
export function checkExpression(expression: unknown, path: string): ValidationIssue[] {
  if (expression !== undefined && typeof expression !== "string") {
    return [{ path, message: `${path} must be a string.`, code: ERROR_CODES.filterParseError }];
  }
  if (expression === undefined || expression.trim() === "") {
    return [{ path, message: `${path} is required and cannot be blank.`, code: ERROR_CODES.filterParseError }];
  }
  const length = characterLength(expression);
  if (length > MAX_EXPRESSION_LENGTH) {
    return [
      {
        path,
        message: `${path} is ${length} characters long; the limit is ${MAX_EXPRESSION_LENGTH}. Split it into several filters.`,
        code: ERROR_CODES.filterParseError,
      },
    ];
  }
  const parsed = parseExpression(expression);
  if (parsed.ok) return [];
  const e = parsed.error;
  // The formatted text is the platform's own wording; fall back to line:column + message if the
  // parser left it empty.
  const text = e.formatted !== "" ? e.formatted : `Filter parsing error (${e.line}:${e.column}): ${e.message}`;
  return [{ path, message: text, code: ERROR_CODES.filterParseError }];
}

const FILTER_KEYS = new Set(["id", "expression", "paused", "description", "ref"]);

/**
 * Validates one filter body (create or replace). `id` is tolerated because clients echo it back on
 * PUT; whether it may be present is the operation's decision.
 *
 * @example
 * ```ts
 * validateFilterInput({ expression: "ip.src eq 1.2.3.4", description: "office" }).ok; // true
 * ```
 */
export function validateFilterInput(value: unknown, path = ""): Validation<FilterInput> {
  if (!isRecord(value)) {
    return {
      ok: false,
      errors: [
        {
          path,
          message: `${path || "A filter"} must be an object with an expression.`,
          code: ERROR_CODES.invalidFilter,
        },
      ],
    };
  }
  const issues: ValidationIssue[] = [];
  for (const key of Object.keys(value)) {
    if (!FILTER_KEYS.has(key)) {
      const p = joinPath(path, key);
      issues.push({ path: p, message: `${p} is not a filter field; remove it.`, code: ERROR_CODES.invalidFilter });
    }
  }
  const others: ValidationIssue[] = [];
  const paused = checkOptionalBoolean(value, "paused", path, others);
  const description = checkOptionalString(value, "description", path, MAX_DESCRIPTION_LENGTH, others);
  const ref = checkOptionalString(value, "ref", path, MAX_REF_LENGTH, others);
  issues.push(...others.map((i) => ({ ...i, code: ERROR_CODES.invalidFilter })));
  issues.push(...checkExpression(value.expression, joinPath(path, "expression")));
  if (issues.length > 0) return { ok: false, errors: issues };
  return {
    ok: true,
    value: {
      expression: value.expression as string,
      ...(paused === undefined ? {} : { paused }),
      ...(description === undefined ? {} : { description }),
      ...(ref === undefined ? {} : { ref }),
    },
  };
}

/**
 * Builds a new filter from validated input: `paused` is `false` unless the client said otherwise.
 *
 * @example
 * ```ts
 * newFilter("00000000000000000000000000000001", { expression: "ip.src eq 1.2.3.4" });
 * // { id: "0000…0001", expression: "ip.src eq 1.2.3.4", paused: false }
 * ```
 */
export function newFilter(id: string, input: FilterInput): Filter {
  return {
    id,
    expression: input.expression,
    paused: input.paused ?? false,
    ...(input.description === undefined ? {} : { description: input.description }),
    ...(input.ref === undefined ? {} : { ref: input.ref }),
  };
}

/**
 * Finds a filter whose expression equals `expression` (ignoring surrounding whitespace), the test
 * the platform applies before answering 10102.
 *
 * @example
 * ```ts
 * findDuplicateFilter(state.filters, "ip.src eq 1.2.3.4")?.id;
 * ```
 */
export function findDuplicateFilter(
  filters: readonly Filter[],
  expression: string,
  exceptId?: string,
): Filter | undefined {
  const wanted = expression.trim();
  return filters.find((f) => f.id !== exceptId && f.expression.trim() === wanted);
}

/**
 * Indexes filters by their trimmed expression, keeping the first filter of each expression (the
 * one {@link findDuplicateFilter} finds), so a body of n filters is checked against m existing
 * ones in O(n + m): a scan per item would let one large POST cost O(n·m).
 *
 * @example
 * ```ts
 * filtersByExpression(state.filters).get("ip.src eq 1.2.3.4")?.id;
 * ```
 */
export function filtersByExpression(filters: readonly Filter[]): Map<string, Filter> {
  const index = new Map<string, Filter>();
  for (const filter of filters) {
    const key = filter.expression.trim();
    if (!index.has(key)) index.set(key, filter);
  }
  return index;
}

/**
 * Draws a fresh id that is 32 hex characters and not already used. A generator that breaks either
 * rule is a programming error in the caller, so this one place throws, with a message that says how
 * to fix it.
 *
 * @example
 * ```ts
 * drawId(sequentialHexIds(), new Set()); // "00000000000000000000000000000001"
 * ```
 */
export function drawId(generate: IdGenerator, taken: ReadonlySet<string>): string {
  for (let attempt = 0; attempt < 16; attempt++) {
    const id = generate();
    if (isHexId(id) && !taken.has(id)) return id;
  }
  throw new Error(
    "idGenerator must return fresh 32-character lower-case hex ids; check the generator passed in options.",
  );
}

/**
 * Every id in use in the state, so new filters and rules never collide with either.
 *
 * @example
 * ```ts
 * takenIds(EMPTY_FIREWALL_STATE).size; // 0
 * ```
 */
export function takenIds(state: FirewallState): Set<string> {
  return new Set([...state.filters.map((f) => f.id), ...state.rules.map((r) => r.id)]);
}

/**
 * `POST /zones/{zone_id}/filters`: creates every filter in the array, or none. A filter whose
 * expression already exists gives 10102 with the existing id in `meta.id`.
 *
 * @example
 * ```ts
 * const { state: next, response } = createFilters(state, [{ expression: "ip.src eq 1.2.3.4" }]);
 * // response.body.result[0].paused === false
 * ```
 */
export function createFilters(
  state: FirewallState,
  body: unknown,
  options: CreateOptions = {},
): FirewallTransition<Filter[]> {
  if (!Array.isArray(body) || body.length === 0) {
    return {
      state,
      response: invalidRequest([
        { path: "", message: "The body must be a non-empty array of filters.", code: ERROR_CODES.invalidFilter },
      ]),
    };
  }
  const issues: ValidationIssue[] = [];
  const inputs: FilterInput[] = [];
  const existingByExpression = filtersByExpression(state.filters);
  const earlierByExpression = new Map<string, number>();
  body.forEach((item, index) => {
    const path = joinPath("", index);
    const v = validateFilterInput(item, path);
    if (!v.ok) {
      issues.push(...v.errors);
      return;
    }
    if (isRecord(item) && item.id !== undefined) {
      issues.push({
        path: joinPath(path, "id"),
        message: `${path}.id is assigned by the service; remove it.`,
        code: ERROR_CODES.invalidFilter,
      });
      return;
    }
    const key = v.value.expression.trim();
    const existing = existingByExpression.get(key);
    if (existing !== undefined) {
      issues.push({ ...duplicateIssue(existing.id), path: joinPath(path, "expression") });
      return;
    }
    const earlier = earlierByExpression.get(key);
    if (earlier !== undefined) {
      issues.push({
        path: joinPath(path, "expression"),
        message: `${path} has the same expression as [${earlier}]; send it once.`,
        code: ERROR_CODES.duplicateFilter,
      });
      return;
    }
    earlierByExpression.set(key, index);
    inputs.push(v.value);
  });
  if (issues.length > 0) return { state, response: invalidRequest(issues) };
  const taken = takenIds(state);
  const generate = options.idGenerator ?? randomHexId;
  const created = inputs.map((input) => {
    const id = drawId(generate, taken);
    taken.add(id);
    return newFilter(id, input);
  });
  return { state: { ...state, filters: [...state.filters, ...created] }, response: ok(created) };
}

/**
 * The 10102 issue for a duplicate of `existingId`.
 *
 * @example
 * ```ts
 * duplicateIssue(id).meta; // { id }
 * ```
 */
export function duplicateIssue(existingId: string): ValidationIssue {
  const info = duplicateFilter(existingId);
  return { path: "", message: info.message, code: info.code, meta: { id: existingId } };
}

function notFound(filterId: string): ApiResponse<never> {
  return fail(404, {
    code: ERROR_CODES.filterNotFound,
    message: `Filter ${filterId} does not exist in this zone; list filters to find its id.`,
  });
}

function ruleOwned(filterId: string, verb: "updated" | "deleted"): ApiResponse<never> {
  return fail(403, {
    code: ERROR_CODES.filterManagedByRule,
    message: `Filter ${filterId} was created together with a firewall rule and cannot be ${verb} directly; ${
      verb === "deleted"
        ? "delete the rule with delete_filter_if_unused"
        : "create a new filter and point the rule at it"
    }.`,
  });
}

/**
 * `GET /zones/{zone_id}/filters/{id}`.
 *
 * @example
 * ```ts
 * getFilter(state, id).status; // 200 or 404
 * ```
 */
export function getFilter(state: FirewallState, filterId: string): ApiResponse<Filter> {
  const filter = state.filters.find((f) => f.id === filterId);
  return filter === undefined ? notFound(filterId) : ok(filter);
}

/**
 * `PUT /zones/{zone_id}/filters/{id}`: replaces a filter. Refused (403) for filters created by the
 * one-call rule POST; 10102 when the new expression duplicates another filter.
 *
 * @example
 * ```ts
 * updateFilter(state, id, { expression: "ip.src eq 5.6.7.8", paused: true });
 * ```
 */
export function updateFilter(state: FirewallState, filterId: string, body: unknown): FirewallTransition<Filter> {
  const current = state.filters.find((f) => f.id === filterId);
  if (current === undefined) return { state, response: notFound(filterId) };
  if (state.ruleOwnedFilterIds.includes(filterId)) return { state, response: ruleOwned(filterId, "updated") };
  const v = validateFilterInput(body);
  if (!v.ok) return { state, response: invalidRequest(v.errors) };
  if (isRecord(body) && body.id !== undefined && body.id !== filterId) {
    return {
      state,
      response: invalidRequest([
        { path: "id", message: "id in the body must match the id in the path.", code: ERROR_CODES.invalidFilter },
      ]),
    };
  }
  const duplicate = findDuplicateFilter(state.filters, v.value.expression, filterId);
  if (duplicate !== undefined)
    return { state, response: invalidRequest([{ ...duplicateIssue(duplicate.id), path: "expression" }]) };
  const next = newFilter(filterId, { ...v.value, paused: v.value.paused ?? current.paused });
  return {
    state: { ...state, filters: state.filters.map((f) => (f.id === filterId ? next : f)) },
    response: ok(next),
  };
}

/**
 * `DELETE /zones/{zone_id}/filters/{id}`: refused for one-call filters (403) and for filters a rule
 * still uses (409: delete or repoint the rules first).
 *
 * @example
 * ```ts
 * deleteFilter(state, id).response.body; // { result: { id }, success: true, ... }
 * ```
 */
export function deleteFilter(state: FirewallState, filterId: string): FirewallTransition<{ id: string }> {
  if (!state.filters.some((f) => f.id === filterId)) return { state, response: notFound(filterId) };
  if (state.ruleOwnedFilterIds.includes(filterId)) return { state, response: ruleOwned(filterId, "deleted") };
  const users = state.rules.filter((r) => r.filterId === filterId).map((r) => r.id);
  if (users.length > 0) {
    const info: ResponseInfo = {
      code: ERROR_CODES.filterInUse,
      message: `Filter ${filterId} is used by firewall rule ${users.join(", ")}; delete those rules or point them at another filter first.`,
    };
    return { state, response: fail(409, info) };
  }
  return {
    state: { ...state, filters: state.filters.filter((f) => f.id !== filterId) },
    response: ok({ id: filterId }),
  };
}

/**
 * `GET /zones/{zone_id}/filters`: `paused`, case-insensitive substring `expression` and
 * `description`, exact `ref` and `id`, paged 5–100 (default 25).
 *
 * @example
 * ```ts
 * listFilters(state, "description=login&per_page=5");
 * ```
 */
export function listFilters(state: FirewallState, input: QueryInput): ApiResponse<Filter[]> {
  const query = toSearchParams(input);
  const issues: ValidationIssue[] = [];
  const listing = parseListingParams(query, FILTERS_LISTING);
  if (!listing.ok) issues.push(...listing.errors);
  const paused = booleanParam(query, "paused", issues);
  const expression = singleParam(query, "expression", issues)?.toLowerCase();
  const description = singleParam(query, "description", issues)?.toLowerCase();
  const ref = singleParam(query, "ref", issues);
  const id = singleParam(query, "id", issues);
  if (id !== undefined && id.length !== 32) issues.push({ path: "id", message: "id must be 32 characters long." });
  if (issues.length > 0 || !listing.ok) return invalidRequest(issues);
  const matching = state.filters.filter(
    (f) =>
      (paused === undefined || f.paused === paused) &&
      (expression === undefined || f.expression.toLowerCase().includes(expression)) &&
      (description === undefined || (f.description ?? "").toLowerCase().includes(description)) &&
      (ref === undefined || f.ref === ref) &&
      (id === undefined || f.id === id),
  );
  const page = paginate(matching, listing.value);
  return ok(page.result, { resultInfo: page.result_info });
}

/**
 * `GET`/`POST /filters/validate-expr`: checks an expression without creating anything.
 *
 * @example
 * ```ts
 * validateExpressionRequest({ expression: "ip.src eq 1.2.3.4" }).status; // 200
 * ```
 */
export function validateExpressionRequest(body: unknown): ApiResponse<null> {
  const expression = isRecord(body) ? body.expression : undefined;
  const issues = checkExpression(expression, "expression");
  if (issues.length === 0) return ok(null);
  const [first, ...rest] = issues.map((i) => invalidField(i));
  return first === undefined ? ok(null) : fail(400, first, ...rest);
}
