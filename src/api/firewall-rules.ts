/**
 * Firewall rules as a pure state machine over a zone's {@link FirewallState} (http-models.md §1.3,
 * specification §3.3, §4.2, §7). Rules reference filters by id (the recommended flow) or carry a new filter
 * inline (the one-call flow). Creation is a multi-step process and reports each step (STYLE.md
 * example 8) instead of failing halfway without saying what happened.
 */
import type { ApiResponse, ResponseInfo } from "./envelope";
import { ERROR_CODES, fail, firewallRuleAtIndex, invalidField, invalidRequest, ok } from "./envelope";
import type {
  CreateOptions,
  Filter,
  FilterInput,
  FirewallState,
  FirewallTransition,
  StoredFirewallRule,
} from "./filters";
import {
  drawId,
  duplicateIssue,
  filtersByExpression,
  MAX_DESCRIPTION_LENGTH,
  MAX_REF_LENGTH,
  newFilter,
  takenIds,
  validateFilterInput,
} from "./filters";
import { randomHexId } from "./ids";
import { FIREWALL_RULES_LISTING, paginate, parseListingParams } from "./listing";
import type { QueryInput, Validation, ValidationIssue } from "./validation";
import {
  booleanParam,
  checkOptionalBoolean,
  checkOptionalString,
  isRecord,
  joinPath,
  oneOf,
  singleParam,
  toSearchParams,
} from "./validation";

/**
 * Rule actions, in the docs' precedence order at equal priority (log first, block last). `log` is
 * Enterprise only; `log` and `bypass` do not end evaluation.
 */
export const FIREWALL_ACTIONS = [
  "log",
  "bypass",
  "allow",
  "challenge",
  "managed_challenge",
  "js_challenge",
  "block",
] as const;
/** One of {@link FIREWALL_ACTIONS}. */
export type FirewallAction = (typeof FIREWALL_ACTIONS)[number];
/**
 * True for a firewall rule action.
 *
 * @example
 * ```ts
 * isFirewallAction("managed_challenge"); // true
 * isFirewallAction("simulate"); // false
 * ```
 */
export const isFirewallAction = oneOf(FIREWALL_ACTIONS);

/** Features a `bypass` rule can skip. */
export const FIREWALL_RULE_PRODUCTS = [
  "zoneLockdown",
  "uaBlock",
  "bic",
  "hot",
  "securityLevel",
  "rateLimit",
  "waf",
] as const;
/** One of {@link FIREWALL_RULE_PRODUCTS}. */
export type FirewallRuleProduct = (typeof FIREWALL_RULE_PRODUCTS)[number];
/**
 * True for a bypassable product.
 *
 * @example
 * ```ts
 * isFirewallRuleProduct("waf"); // true
 * ```
 */
export const isFirewallRuleProduct = oneOf(FIREWALL_RULE_PRODUCTS);

/** The largest priority the API accepts. */
export const MAX_PRIORITY = 2_147_483_647;

/** The filter of a rule whose filter was deleted out from under it. */
export interface DeletedFilterRef {
  readonly id: string;
  readonly deleted: true;
}

/** A firewall rule as the API returns it. */
export interface FirewallRule {
  readonly id: string;
  readonly paused: boolean;
  readonly description?: string;
  readonly action: FirewallAction;
  readonly priority: number | null;
  readonly products?: readonly FirewallRuleProduct[];
  readonly ref?: string;
  readonly filter: Filter | DeletedFilterRef;
}

/** What the zone's plan allows. */
export interface FirewallLimits {
  /** How many rules the zone may hold (the platform's number depends on the plan and is not documented here). */
  readonly maxRules: number;
  /** False when the zone's plan does not offer firewall rules at all. */
  readonly firewallRulesAvailable: boolean;
  /** The `log` action is Enterprise only. */
  readonly logActionAvailable: boolean;
}

/**
 * Limits used when none are given: an Enterprise-like zone. Pass real limits to exercise quotas.
 *
 * @example
 * ```ts
 * createFirewallRules(state, body, { limits: { ...DEFAULT_FIREWALL_LIMITS, maxRules: 5 } });
 * ```
 */
export const DEFAULT_FIREWALL_LIMITS: FirewallLimits = {
  maxRules: 1000,
  firewallRulesAvailable: true,
  logActionAvailable: true,
};

/** Options of {@link createFirewallRules}. */
export interface CreateFirewallRulesOptions extends CreateOptions {
  readonly limits?: FirewallLimits;
}

/** A validated rule of a create request, before ids are assigned. */
export interface FirewallRuleInput {
  readonly filter: { readonly id: string } | { readonly inline: FilterInput };
  readonly action: FirewallAction;
  readonly priority?: number;
  readonly paused?: boolean;
  readonly description?: string;
  readonly ref?: string;
  readonly products?: readonly FirewallRuleProduct[];
}

/** The steps of {@link createFirewallRules}, in the order they run. */
export const CREATION_STEPS = ["validate", "create_filters", "create_rules"] as const;
/** One of {@link CREATION_STEPS}. */
export type CreationStepName = (typeof CREATION_STEPS)[number];

/** How one step went. `not_executed` means an earlier step failed, so this one never ran. */
export interface CreationStep {
  readonly step: CreationStepName;
  readonly status: "succeeded" | "failed" | "not_executed";
  /** Why the step failed; empty otherwise. */
  readonly errors: readonly ResponseInfo[];
}

/** What happened to the item at `index` of the request body. */
export interface CreationItem {
  readonly index: number;
  /** The filter the rule uses: newly created, or the existing one it referenced; null when none. */
  readonly filterId: string | null;
  readonly filterCreated: boolean;
  /** The new rule's id, or null when the rule was not created. */
  readonly ruleId: string | null;
}

/** The full outcome of {@link createFirewallRules}. */
export interface CreateFirewallRulesResult extends FirewallTransition<FirewallRule[]> {
  readonly steps: readonly [CreationStep, CreationStep, CreationStep];
  readonly items: readonly CreationItem[];
}

const RULE_KEYS = new Set(["id", "filter", "action", "priority", "paused", "description", "ref", "products"]);

function ruleIssue(path: string, message: string): ValidationIssue {
  return { path, message, code: ERROR_CODES.invalidFirewallRule };
}

/**
 * Validates the fields of one rule in a create request. The filter reference is checked against the
 * zone by {@link createFirewallRules}; this only checks shapes.
 *
 * @example
 * ```ts
 * validateFirewallRuleInput({ filter: { expression: "ip.src eq 1.2.3.4" }, action: "block" }).ok; // true
 * validateFirewallRuleInput({ filter: { id: "…" }, action: "bypass" }).ok; // false: products required
 * ```
 */
export function validateFirewallRuleInput(value: unknown, path = ""): Validation<FirewallRuleInput> {
  if (!isRecord(value)) {
    return { ok: false, errors: [ruleIssue(path, `${path || "A rule"} must be an object with filter and action.`)] };
  }
  const issues: ValidationIssue[] = [];
  for (const key of Object.keys(value)) {
    const p = joinPath(path, key);
    if (key === "id") issues.push(ruleIssue(p, `${p} is assigned by the service; remove it.`));
    else if (!RULE_KEYS.has(key)) issues.push(ruleIssue(p, `${p} is not a firewall rule field; remove it.`));
  }
  const actionPath = joinPath(path, "action");
  const { action } = value;
  if (!isFirewallAction(action)) {
    issues.push(
      ruleIssue(
        actionPath,
        isRecord(action)
          ? `${actionPath} must be an action name such as "block"; the { mode } object is the rate-limit shape the OAS mistakenly shows.`
          : `${actionPath} is required and must be one of ${FIREWALL_ACTIONS.join(", ")}.`,
      ),
    );
  }
  const priorityPath = joinPath(path, "priority");
  const { priority } = value;
  if (
    priority !== undefined &&
    priority !== null &&
    (typeof priority !== "number" || !Number.isInteger(priority) || priority < 0 || priority > MAX_PRIORITY)
  ) {
    issues.push(ruleIssue(priorityPath, `${priorityPath} must be an integer from 0 to ${MAX_PRIORITY}, or null.`));
  }
  const fieldIssues: ValidationIssue[] = [];
  const paused = checkOptionalBoolean(value, "paused", path, fieldIssues);
  const description = checkOptionalString(value, "description", path, MAX_DESCRIPTION_LENGTH, fieldIssues);
  const ref = checkOptionalString(value, "ref", path, MAX_REF_LENGTH, fieldIssues);
  issues.push(...fieldIssues.map((i) => ({ ...i, code: ERROR_CODES.invalidFirewallRule })));

  const productsPath = joinPath(path, "products");
  let products: FirewallRuleProduct[] | undefined;
  if (value.products !== undefined) {
    if (!Array.isArray(value.products) || !value.products.every(isFirewallRuleProduct)) {
      issues.push(ruleIssue(productsPath, `${productsPath} must be an array of ${FIREWALL_RULE_PRODUCTS.join(", ")}.`));
    } else if (new Set(value.products).size !== value.products.length) {
      issues.push(ruleIssue(productsPath, `${productsPath} must not repeat a product.`));
    } else {
      products = value.products;
    }
  }
  if (
    action === "bypass" &&
    (value.products === undefined || (Array.isArray(value.products) && value.products.length === 0))
  ) {
    // The platform's own wording (terraform-provider-cloudflare#630).
    issues.push(ruleIssue(productsPath, "products must be specified for the 'bypass' action"));
  }

  const filterPath = joinPath(path, "filter");
  let filter: FirewallRuleInput["filter"] | undefined;
  const rawFilter = value.filter;
  if (!isRecord(rawFilter)) {
    issues.push(
      ruleIssue(
        filterPath,
        `${filterPath} is required: give { id } of an existing filter or { expression } for a new one.`,
      ),
    );
  } else if (rawFilter.id !== undefined && rawFilter.expression !== undefined) {
    issues.push(ruleIssue(filterPath, `${filterPath} must have either id or expression, not both.`));
  } else if (rawFilter.id !== undefined) {
    if (typeof rawFilter.id !== "string" || rawFilter.id.length !== 32) {
      issues.push(ruleIssue(joinPath(filterPath, "id"), `${filterPath}.id must be a 32-character filter id.`));
    } else {
      filter = { id: rawFilter.id };
    }
  } else {
    const v = validateFilterInput(rawFilter, filterPath);
    if (v.ok) filter = { inline: v.value };
    else issues.push(...v.errors);
  }

  if (issues.length > 0 || filter === undefined || !isFirewallAction(action)) return { ok: false, errors: issues };
  return {
    ok: true,
    value: {
      filter,
      action,
      ...(typeof priority === "number" ? { priority } : {}),
      ...(paused === undefined ? {} : { paused }),
      ...(description === undefined ? {} : { description }),
      ...(ref === undefined ? {} : { ref }),
      ...(products === undefined ? {} : { products }),
    },
  };
}

/**
 * Renders a stored rule with its filter, or `{ id, deleted: true }` when that filter is gone.
 *
 * @example
 * ```ts
 * renderFirewallRule(state, state.rules[0]).filter;
 * ```
 */
export function renderFirewallRule(state: FirewallState, rule: StoredFirewallRule): FirewallRule {
  return renderWithFilter(
    rule,
    state.filters.find((f) => f.id === rule.filterId),
  );
}

/** Renders many rules, finding their filters through one index instead of a scan per rule. */
function renderFirewallRules(state: FirewallState, rules: readonly StoredFirewallRule[]): FirewallRule[] {
  const byId = new Map(state.filters.map((f) => [f.id, f]));
  return rules.map((rule) => renderWithFilter(rule, byId.get(rule.filterId)));
}

function renderWithFilter(rule: StoredFirewallRule, found: Filter | undefined): FirewallRule {
  const filter = found ?? { id: rule.filterId, deleted: true as const };
  return {
    id: rule.id,
    paused: rule.paused,
    ...(rule.description === undefined ? {} : { description: rule.description }),
    action: rule.action as FirewallAction,
    priority: rule.priority,
    ...(rule.products === undefined ? {} : { products: rule.products as FirewallRuleProduct[] }),
    ...(rule.ref === undefined ? {} : { ref: rule.ref }),
    filter,
  };
}

/**
 * `POST /zones/{zone_id}/firewall/rules`, both flows, as three steps:
 *
 * 1. **validate** every rule and every inline filter, including duplicates (10102 with `meta.id`,
 *    plus 10202 naming the index) and references to unknown filters. Any problem: nothing is
 *    created (specification §3.3).
 * 2. **create_filters** for the inline ones (the one-call flow). These are remembered as rule-owned,
 *    so PUT/DELETE on them is refused later.
 * 3. **create_rules**, all or none. If the plan lacks the feature (firewall rules, or `log`) or the
 *    rule quota would be exceeded, the rules are not created but the filters from step 2 stay
 *    (specification §7); the error's `meta.created_filter_ids` lists them so the client can create the rules
 *    by reference once the cause is resolved.
 *
 * The platform's body is an array; a single object (what the SDK sends) is read as a one-item array.
 *
 * @example
 * ```ts
 * const r = createFirewallRules(state, [{ filter: { expression: 'http.request.uri.path contains "/login"' }, action: "block" }]);
 * r.steps.map((s) => s.status); // ["succeeded", "succeeded", "succeeded"]
 * r.response.body.result?.[0]; // { id, paused: false, action: "block", priority: null, filter: { id, expression, paused: false } }
 * ```
 */
export function createFirewallRules(
  state: FirewallState,
  body: unknown,
  options: CreateFirewallRulesOptions = {},
): CreateFirewallRulesResult {
  const limits = options.limits ?? DEFAULT_FIREWALL_LIMITS;
  const items = Array.isArray(body) ? body : isRecord(body) ? [body] : undefined;
  const notRun = (step: CreationStepName): CreationStep => ({ step, status: "not_executed", errors: [] });

  // Step 1: validate everything before touching the state, which is what makes the flow atomic.
  const issues: ValidationIssue[] = [];
  const inputs: FirewallRuleInput[] = [];
  // Indexed once, so a body of n rules is checked against m filters in O(n + m), not O(n·m).
  const existingFilterIds = new Set(state.filters.map((x) => x.id));
  const existingByExpression = filtersByExpression(state.filters);
  const earlierByExpression = new Map<string, number>();
  if (items === undefined || items.length === 0) {
    issues.push(ruleIssue("", "The body must be a non-empty array of rules, each with filter and action."));
  } else {
    items.forEach((item, index) => {
      const path = joinPath("", index);
      const v = validateFirewallRuleInput(item, path);
      if (!v.ok) {
        issues.push(...v.errors);
        // Reported "at index i" like the platform's 10202, so the failing rule is easy to find.
        issues.push({
          path,
          message: firewallRuleAtIndex(index, "invalid rule or filter").message,
          code: ERROR_CODES.firewallRuleAtIndex,
        });
        return;
      }
      const f = v.value.filter;
      if ("id" in f) {
        if (!existingFilterIds.has(f.id)) {
          issues.push({
            path: joinPath(path, "filter.id"),
            message: firewallRuleAtIndex(index, `filter ${f.id} does not exist; create it with the filters API first`)
              .message,
            code: ERROR_CODES.firewallRuleAtIndex,
          });
          return;
        }
      } else {
        const key = f.inline.expression.trim();
        const existing = existingByExpression.get(key);
        const earlier = earlierByExpression.get(key);
        if (existing !== undefined) {
          issues.push({ ...duplicateIssue(existing.id), path: joinPath(path, "filter.expression") });
          issues.push({
            path,
            message: firewallRuleAtIndex(index, `duplicates filter ${existing.id}; reference it with filter.id instead`)
              .message,
            code: ERROR_CODES.firewallRuleAtIndex,
          });
          return;
        }
        if (earlier !== undefined) {
          issues.push({
            path,
            message: firewallRuleAtIndex(index, `has the same expression as the rule at index ${earlier}; send it once`)
              .message,
            code: ERROR_CODES.firewallRuleAtIndex,
          });
          return;
        }
        earlierByExpression.set(key, index);
      }
      inputs.push(v.value);
    });
  }
  if (issues.length > 0) {
    const response = invalidRequest<FirewallRule[]>(issues);
    return {
      state,
      response,
      steps: [
        { step: "validate", status: "failed", errors: issues.map((i) => invalidField(i)) },
        notRun("create_filters"),
        notRun("create_rules"),
      ],
      items: (items ?? []).map((_, index) => ({ index, filterId: null, filterCreated: false, ruleId: null })),
    };
  }

  // Step 2: create the inline filters. This cannot fail once validation passed.
  const generate = options.idGenerator ?? randomHexId;
  const taken = takenIds(state);
  const fresh = () => {
    const id = drawId(generate, taken);
    taken.add(id);
    return id;
  };
  const createdFilters: Filter[] = [];
  const filterIds = inputs.map((input) => {
    if ("id" in input.filter) return input.filter.id;
    const filter = newFilter(fresh(), input.filter.inline);
    createdFilters.push(filter);
    return filter.id;
  });
  const afterFilters: FirewallState = {
    ...state,
    filters: [...state.filters, ...createdFilters],
    ruleOwnedFilterIds: [...state.ruleOwnedFilterIds, ...createdFilters.map((f) => f.id)],
  };
  const createdIds = new Set(createdFilters.map((f) => f.id));
  const filterStep: CreationStep = { step: "create_filters", status: "succeeded", errors: [] };

  // Step 3: the rules, all or none. Feature checks come before the quota: a zone without the
  // feature should be told that, not that it is out of room.
  let refusal: { status: number; info: ResponseInfo } | undefined;
  const usesLog = inputs.some((i) => i.action === "log");
  const meta = { created_filter_ids: createdFilters.map((f) => f.id) };
  const unavailable = featureRefusal(limits, usesLog);
  if (unavailable !== undefined) {
    refusal = { status: 403, info: { ...unavailable, meta } };
  } else if (state.rules.length + inputs.length > limits.maxRules) {
    refusal = {
      status: 400,
      info: {
        code: ERROR_CODES.firewallRuleQuotaExceeded,
        message: `Creating ${inputs.length} rule(s) would exceed this zone's quota of ${limits.maxRules} (it has ${state.rules.length}); delete rules or upgrade the plan, then create the rules referencing the filters by id.`,
        meta,
      },
    };
  }
  if (refusal !== undefined) {
    return {
      state: afterFilters,
      response: fail(refusal.status, refusal.info),
      steps: [
        { step: "validate", status: "succeeded", errors: [] },
        filterStep,
        { step: "create_rules", status: "failed", errors: [refusal.info] },
      ],
      items: inputs.map((_, index) => ({
        index,
        filterId: filterIds[index] ?? null,
        filterCreated: createdIds.has(filterIds[index] ?? ""),
        ruleId: null,
      })),
    };
  }
  const newRules: StoredFirewallRule[] = inputs.map((input, index) => ({
    id: fresh(),
    filterId: filterIds[index] as string,
    action: input.action,
    // New rules come back with priority null and paused false unless the client set them (specification §2.3).
    priority: input.priority ?? null,
    paused: input.paused ?? false,
    ...(input.description === undefined ? {} : { description: input.description }),
    ...(input.ref === undefined ? {} : { ref: input.ref }),
    ...(input.products === undefined ? {} : { products: input.products }),
  }));
  const finalState: FirewallState = { ...afterFilters, rules: [...afterFilters.rules, ...newRules] };
  return {
    state: finalState,
    response: ok(renderFirewallRules(finalState, newRules)),
    steps: [
      { step: "validate", status: "succeeded", errors: [] },
      filterStep,
      { step: "create_rules", status: "succeeded", errors: [] },
    ],
    items: newRules.map((r, index) => ({
      index,
      filterId: r.filterId,
      filterCreated: createdIds.has(r.filterId),
      ruleId: r.id,
    })),
  };
}

/**
 * The refusal (403, 10203) of a rule the zone's plan does not allow: firewall rules at all, or the
 * Enterprise-only `log` action. `undefined` when the plan allows it.
 */
function featureRefusal(limits: FirewallLimits, usesLog: boolean): ResponseInfo | undefined {
  if (!limits.firewallRulesAvailable) {
    return {
      code: ERROR_CODES.featureUnavailable,
      message: "Firewall rules are not available on this zone's plan; upgrade the plan to create rules.",
    };
  }
  if (usesLog && !limits.logActionAvailable) {
    return {
      code: ERROR_CODES.featureUnavailable,
      message: "The log action is available to Enterprise zones only; choose another action.",
    };
  }
  return undefined;
}

function ruleNotFound(ruleId: string): ApiResponse<never> {
  return fail(404, {
    code: ERROR_CODES.firewallRuleNotFound,
    message: `Firewall rule ${ruleId} does not exist in this zone; list rules to find its id.`,
  });
}

/**
 * `GET /zones/{zone_id}/firewall/rules/{id}`.
 *
 * @example
 * ```ts
 * getFirewallRule(state, ruleId).status; // 200 or 404
 * ```
 */
export function getFirewallRule(state: FirewallState, ruleId: string): ApiResponse<FirewallRule> {
  const rule = state.rules.find((r) => r.id === ruleId);
  return rule === undefined ? ruleNotFound(ruleId) : ok(renderFirewallRule(state, rule));
}

/**
 * `GET /zones/{zone_id}/firewall/rules`: `description` (case-insensitive substring), `action`
 * (exact; any string, as the published schema types it, so an unknown action matches no rule),
 * `id`, `paused`, paged 5–100 (default 25).
 *
 * @example
 * ```ts
 * listFirewallRules(state, "action=block&per_page=5");
 * ```
 */
export function listFirewallRules(state: FirewallState, input: QueryInput): ApiResponse<FirewallRule[]> {
  const query = toSearchParams(input);
  const issues: ValidationIssue[] = [];
  const listing = parseListingParams(query, FIREWALL_RULES_LISTING);
  if (!listing.ok) issues.push(...listing.errors);
  const description = singleParam(query, "description", issues)?.toLowerCase();
  const action = singleParam(query, "action", issues);
  const id = singleParam(query, "id", issues);
  const paused = booleanParam(query, "paused", issues);
  if (issues.length > 0 || !listing.ok) return invalidRequest(issues);
  const matching = state.rules.filter(
    (r) =>
      (description === undefined || (r.description ?? "").toLowerCase().includes(description)) &&
      (action === undefined || r.action === action) &&
      (id === undefined || r.id === id) &&
      (paused === undefined || r.paused === paused),
  );
  const page = paginate(matching, listing.value);
  return ok(renderFirewallRules(state, page.result), { resultInfo: page.result_info });
}

/**
 * `PUT /zones/{zone_id}/firewall/rules/{id}`: replaces a rule's settings, as the platform's PUT does:
 * a field the body leaves out is reset (`paused` false, `priority` null, no `description`, `ref`
 * or `products`), so a client that changes one field sends the others as GET returned them. The
 * filter must be given
 * by id (an existing filter); changing an expression goes through the filters API, which keeps
 * shared filters from being rewritten behind other features' backs. The plan's `limits` hold as
 * for a creation: the `log` action outside Enterprise is refused (403, 10203).
 *
 * @example
 * ```ts
 * updateFirewallRule(state, ruleId, { filter: { id: filterId }, action: "challenge", paused: true });
 * ```
 */
export function updateFirewallRule(
  state: FirewallState,
  ruleId: string,
  body: unknown,
  options: { readonly limits?: FirewallLimits } = {},
): FirewallTransition<FirewallRule> {
  const limits = options.limits ?? DEFAULT_FIREWALL_LIMITS;
  if (!state.rules.some((r) => r.id === ruleId)) return { state, response: ruleNotFound(ruleId) };
  // The published schema requires the rule's id in a PUT body; it must name the rule in the path.
  if (isRecord(body) && body.id !== undefined && body.id !== ruleId) {
    return { state, response: invalidRequest([ruleIssue("id", "id in the body must match the id in the path.")]) };
  }
  const withoutId = isRecord(body) ? Object.fromEntries(Object.entries(body).filter(([k]) => k !== "id")) : body;
  // A rule read with GET carries its whole filter; sending it back unchanged names the filter by id
  // (the documented PUT body does this). A change to the filter is refused: it is made with the
  // filters API, and silently dropping it would leave the client believing it was applied.
  const echoed = isRecord(withoutId) ? echoedFilter(state, withoutId.filter) : undefined;
  if (echoed !== undefined && "problem" in echoed) return { state, response: invalidRequest([echoed.problem]) };
  const v = validateFirewallRuleInput(
    echoed === undefined || !isRecord(withoutId) ? withoutId : { ...withoutId, filter: { id: echoed.id } },
  );
  if (!v.ok) return { state, response: invalidRequest(v.errors) };
  const f = v.value.filter;
  if (!("id" in f)) {
    return {
      state,
      response: invalidRequest([
        ruleIssue("filter", "filter must reference an existing filter by id; change expressions with the filters API."),
      ]),
    };
  }
  if (!state.filters.some((x) => x.id === f.id)) {
    return {
      state,
      response: invalidRequest([ruleIssue("filter.id", `Filter ${f.id} does not exist; create it first.`)]),
    };
  }
  // The plan's limits hold for a rule changed as for one created: a PUT is no way around them.
  const unavailable = featureRefusal(limits, v.value.action === "log");
  if (unavailable !== undefined) return { state, response: fail(403, unavailable) };
  const next: StoredFirewallRule = {
    id: ruleId,
    filterId: f.id,
    action: v.value.action,
    // A PUT replaces the rule: a field it leaves out takes its default, `paused` included, as the
    // platform's documentation says of its PUT ("if the request omits description, any
    // previously existing description value will be erased"). Send what GET returned to keep it.
    priority: v.value.priority ?? null,
    paused: v.value.paused ?? false,
    ...(v.value.description === undefined ? {} : { description: v.value.description }),
    ...(v.value.ref === undefined ? {} : { ref: v.value.ref }),
    ...(v.value.products === undefined ? {} : { products: v.value.products }),
  };
  const nextState = { ...state, rules: state.rules.map((r) => (r.id === ruleId ? next : r)) };
  return { state: nextState, response: ok(renderFirewallRule(nextState, next)) };
}

const FILTER_ECHO_KEYS = ["expression", "paused", "description", "ref"] as const;

/**
 * For a PUT whose `filter` has an `id` and other filter fields (the filter as GET renders it): the
 * filter's id when every other field equals the stored filter's, or the issue naming the first
 * field that differs. `undefined` when the body does not have that shape (the usual checks apply).
 */
function echoedFilter(
  state: FirewallState,
  filter: unknown,
): { id: string } | { problem: ValidationIssue } | undefined {
  if (!isRecord(filter) || typeof filter.id !== "string") return undefined;
  const keys = Object.keys(filter).filter((k) => k !== "id");
  if (keys.length === 0 || !keys.every((k) => (FILTER_ECHO_KEYS as readonly string[]).includes(k))) return undefined;
  const stored = state.filters.find((f) => f.id === filter.id);
  if (stored === undefined) return undefined;
  for (const key of FILTER_ECHO_KEYS) {
    if (!(key in filter)) continue;
    const given = filter[key];
    const current = key === "paused" ? stored.paused : stored[key];
    if (given !== current) {
      const path = `filter.${key}`;
      return {
        problem: ruleIssue(
          path,
          `${path} differs from filter ${stored.id}'s; change the filter with the filters API (PUT /zones/{zone_id}/filters/${stored.id}), or send filter.id alone.`,
        ),
      };
    }
  }
  return { id: stored.id };
}

/**
 * `DELETE /zones/{zone_id}/firewall/rules/{id}` with optional body
 * `{ delete_filter_if_unused: boolean }`. Deleting the rule with that flag is the only way a
 * filter created through the one-call flow goes away.
 *
 * @example
 * ```ts
 * deleteFirewallRule(state, ruleId, { delete_filter_if_unused: true });
 * ```
 */
export function deleteFirewallRule(
  state: FirewallState,
  ruleId: string,
  body?: unknown,
): FirewallTransition<{ id: string }> {
  const rule = state.rules.find((r) => r.id === ruleId);
  if (rule === undefined) return { state, response: ruleNotFound(ruleId) };
  let deleteFilterIfUnused = false;
  if (body !== undefined && body !== null) {
    if (
      !isRecord(body) ||
      (body.delete_filter_if_unused !== undefined && typeof body.delete_filter_if_unused !== "boolean")
    ) {
      return {
        state,
        response: invalidRequest([
          ruleIssue("delete_filter_if_unused", "delete_filter_if_unused must be true or false."),
        ]),
      };
    }
    deleteFilterIfUnused = body.delete_filter_if_unused === true;
  }
  const rules = state.rules.filter((r) => r.id !== ruleId);
  const unused = !rules.some((r) => r.filterId === rule.filterId);
  const dropFilter = deleteFilterIfUnused && unused;
  return {
    state: {
      rules,
      filters: dropFilter ? state.filters.filter((f) => f.id !== rule.filterId) : state.filters,
      ruleOwnedFilterIds: dropFilter
        ? state.ruleOwnedFilterIds.filter((id) => id !== rule.filterId)
        : state.ruleOwnedFilterIds,
    },
    response: ok({ id: ruleId }),
  };
}
