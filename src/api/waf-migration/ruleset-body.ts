/**
 * The entry-point ruleset body (specification 2.7, http-models §1.8) and its validation. Migration mode
 * accepts the empty `id`, `version` and `ref` that the config operation returns: the docs send
 * them back verbatim, although the plain rulesets schema would refuse them.
 */
import { parseExpression } from "../rules-language/index";
import { characterLength } from "../validation";
import type { ApiMessage } from "./result";
import { invalidValue, isHex32, isRecord, oneOf } from "./validate";
import { isBypassProduct } from "./zone-state";

/** The phase of the managed-rules entry point. */
export const MANAGED_PHASE = "http_request_firewall_managed";

/** Ruleset phases (SDK/TF). */
export const RULESET_PHASES = [
  "ddos_l4",
  "ddos_l7",
  "http_config_settings",
  "http_custom_errors",
  "http_log_custom_fields",
  "http_ratelimit",
  "http_request_cache_settings",
  "http_request_dynamic_redirect",
  "http_request_firewall_custom",
  "http_request_firewall_managed",
  "http_request_late_transform",
  "http_request_origin",
  "http_request_redirect",
  "http_request_sanitize",
  "http_request_sbfm",
  "http_request_transform",
  "http_response_cache_settings",
  "http_response_compression",
  "http_response_firewall_managed",
  "http_response_headers_transform",
  "magic_transit",
  "magic_transit_ids_managed",
  "magic_transit_managed",
  "magic_transit_ratelimit",
] as const;
/** One of {@link RULESET_PHASES}. */
export type RulesetPhase = (typeof RULESET_PHASES)[number];
/**
 * Tells whether a value is one of {@link RULESET_PHASES}.
 *
 * @example
 * ```ts
 * isRulesetPhase("http_request_firewall_managed"); // true
 * ```
 */
export const isRulesetPhase = oneOf(RULESET_PHASES);

/** Rule actions (OAS enum; the SDK's extra `transform_response_html` is left out on purpose). */
export const RULE_ACTIONS = [
  "block",
  "challenge",
  "compress_response",
  "ddos_dynamic",
  "execute",
  "force_connection_close",
  "js_challenge",
  "log",
  "log_custom_field",
  "managed_challenge",
  "redirect",
  "rewrite",
  "route",
  "score",
  "serve_error",
  "set_cache_control",
  "set_cache_settings",
  "set_cache_tags",
  "set_config",
  "skip",
] as const;
/** One of {@link RULE_ACTIONS}. */
export type RuleAction = (typeof RULE_ACTIONS)[number];
/**
 * Tells whether a value is one of {@link RULE_ACTIONS}.
 *
 * @example
 * ```ts
 * isRuleAction("execute"); // true
 * ```
 */
export const isRuleAction = oneOf(RULE_ACTIONS);

/** The longest rule expression, in characters (rules-language limit). */
export const MAX_RULE_EXPRESSION_LENGTH = 4096;

/**
 * A per-rule override inside an `execute` rule.
 *
 * @example
 * ```ts
 * const o: RuleOverride = { id: "6179ae15870a4bb7b2d480d4843b323c", score_threshold: 25, action: "log" };
 * ```
 */
export interface RuleOverride {
  id: string;
  action?: string;
  enabled?: boolean;
  score_threshold?: number;
  sensitivity_level?: string;
}
/**
 * A per-category (tag) override inside an `execute` rule.
 *
 * @example
 * ```ts
 * const o: CategoryOverride = { category: "paranoia-level-3", enabled: false };
 * ```
 */
export interface CategoryOverride {
  category: string;
  action?: string;
  enabled?: boolean;
  sensitivity_level?: string;
}
/**
 * Overrides of an `execute` rule; precedence is rules > categories > ruleset level.
 *
 * @example
 * ```ts
 * const o: ExecuteOverrides = { categories: [{ category: "paranoia-level-4", enabled: false }] };
 * ```
 */
export interface ExecuteOverrides {
  action?: string;
  enabled?: boolean;
  sensitivity_level?: string;
  categories?: CategoryOverride[];
  rules?: RuleOverride[];
}
/**
 * `action_parameters` of an `execute` rule.
 *
 * @example
 * ```ts
 * const p: ExecuteParameters = { id: "4814384a9e5d4991b9815dcfc25d2f1f" };
 * ```
 */
export interface ExecuteParameters {
  id: string;
  version?: string;
  matched_data?: { public_key: string };
  overrides?: ExecuteOverrides;
}
/**
 * `action_parameters` of a `skip` rule (the exceptions the migration creates).
 *
 * @example
 * ```ts
 * const p: SkipParameters = { ruleset: "current" };
 * ```
 */
export interface SkipParameters {
  ruleset?: "current";
  rulesets?: string[];
  rules?: Record<string, string[]>;
  phases?: string[];
  products?: string[];
}

/**
 * A rule of the entry-point ruleset.
 *
 * @example
 * ```ts
 * const r: RulesetRule = { action: "execute", expression: "true", enabled: true,
 *   action_parameters: { id: "efb7b8c949ac4650a09736fc376e9aee" } };
 * ```
 */
export interface RulesetRule {
  id?: string;
  version?: string;
  action: RuleAction;
  expression: string;
  description?: string;
  ref?: string;
  enabled: boolean;
  action_parameters?: ExecuteParameters | SkipParameters | Record<string, unknown>;
  logging?: { enabled: boolean };
  /** A rate-limiting rule's counting (http_ratelimit phase), kept as given once its fields check out. */
  ratelimit?: RuleRatelimit;
  /** Where a rule finds the credentials it checks for exposure. */
  exposed_credential_check?: { username_expression: string; password_expression: string };
}

/**
 * A rule's `ratelimit` (the published rule schema's, as the SDK types it): `characteristics` and
 * `period` are required.
 *
 * @example
 * ```ts
 * const r: RuleRatelimit = { characteristics: ["ip.src", "cf.colo.id"], period: 60, requests_per_period: 100 };
 * ```
 */
export interface RuleRatelimit {
  characteristics: string[];
  period: number;
  counting_expression?: string;
  mitigation_timeout?: number;
  requests_per_period?: number;
  requests_to_origin?: boolean;
  score_per_period?: number;
  score_response_header_name?: string;
}

/**
 * The entry-point ruleset configuration (migration config and update body).
 *
 * @example
 * ```ts
 * const body: EntryPointRuleset = { name: "default", rules: [] };
 * ```
 */
export interface EntryPointRuleset {
  name?: string;
  description?: string;
  kind?: string;
  phase?: string;
  rules: RulesetRule[];
}

/**
 * Options for {@link validateRulesetBody}.
 *
 * @example
 * ```ts
 * validateRulesetBody(config, { allowEmptyIds: true });
 * ```
 */
export interface ValidateRulesetBodyOptions {
  /** Accept (and drop) the empty `id`, `version` and `ref` that the migration config returns. */
  allowEmptyIds?: boolean;
  /**
   * The phase whose entry point the body is for (the path's); {@link MANAGED_PHASE} by default. A
   * `phase` in the body must name it, and override `sensitivity_level` is allowed in the DDoS phases only.
   */
  phase?: RulesetPhase;
}

/** The phases whose managed rulesets take a `sensitivity_level` override, and its values. */
const DDOS_PHASES: ReadonlySet<string> = new Set(["ddos_l4", "ddos_l7"]);
const SENSITIVITY_LEVELS: ReadonlySet<unknown> = new Set(["default", "medium", "low", "eoff"]);

/**
 * The result of {@link validateRulesetBody}.
 *
 * @example
 * ```ts
 * const v: RulesetBodyValidation = validateRulesetBody(body);
 * if (!v.ok) console.log(v.errors);
 * ```
 */
export type RulesetBodyValidation = { ok: true; ruleset: EntryPointRuleset } | { ok: false; errors: ApiMessage[] };

const isOptionalBoolean = (v: unknown): boolean => v === undefined || typeof v === "boolean";
const OVERRIDE_ACTION = /^[a-z_]+$/;

function err(errors: ApiMessage[], pointer: string, message: string, code?: number): void {
  errors.push(code === undefined ? { message, source: { pointer } } : { code, message, source: { pointer } });
}

/**
 * The platform's JSON decoding refuses a key its schema does not have (`invalid JSON: unknown field
 * "bic"`) rather than dropping it: a rule saved without a setting its author sent does something else.
 * Keys are checked where the schema is known here: the ruleset, a rule and its `logging`, and the
 * parameters of `execute`, `skip` and `block` rules (overrides, a block's response).
 */
function checkKnownKeys(
  record: Record<string, unknown>,
  known: ReadonlySet<string>,
  base: string,
  errors: ApiMessage[],
): void {
  for (const key of Object.keys(record))
    if (!known.has(key))
      err(errors, `${base}/${escapePointer(key)}`, `invalid JSON: unknown field ${JSON.stringify(key)}`);
}

/** A key as one JSON pointer token (RFC 6901). */
function escapePointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Keys of a ruleset body: the schema's, with the read-only `id`, `version` and `last_updated` a GET shows (dropped). */
const RULESET_KEYS: ReadonlySet<string> = new Set([
  "name",
  "description",
  "kind",
  "phase",
  "rules",
  "id",
  "version",
  "last_updated",
]);
const LOGGING_KEYS: ReadonlySet<string> = new Set(["enabled"]);
/** Keys of a rule: the published rule schema's, with `categories` and `last_updated`, which a GET shows and clients send back (read-only: dropped). */
const RULE_KEYS: ReadonlySet<string> = new Set([
  "id",
  "version",
  "action",
  "expression",
  "description",
  "ref",
  "enabled",
  "action_parameters",
  "logging",
  "ratelimit",
  "exposed_credential_check",
  "categories",
  "last_updated",
]);
const BLOCK_KEYS: ReadonlySet<string> = new Set(["response"]);
const BLOCK_RESPONSE_KEYS: ReadonlySet<string> = new Set(["status_code", "content", "content_type"]);
const EXECUTE_KEYS: ReadonlySet<string> = new Set(["id", "version", "matched_data", "overrides"]);
const SKIP_KEYS: ReadonlySet<string> = new Set(["ruleset", "rulesets", "rules", "phases", "products"]);
const OVERRIDES_KEYS: ReadonlySet<string> = new Set(["action", "enabled", "sensitivity_level", "categories", "rules"]);
const CATEGORY_OVERRIDE_KEYS: ReadonlySet<string> = new Set(["category", "action", "enabled", "sensitivity_level"]);
const RULE_OVERRIDE_KEYS: ReadonlySet<string> = new Set([
  "id",
  "action",
  "enabled",
  "score_threshold",
  "sensitivity_level",
]);

/**
 * Checks one rule expression: not blank, within 4,096 characters, and accepted by the
 * rules-language parser. Returns the errors (empty when valid).
 *
 * @example
 * ```ts
 * checkRuleExpression("", "/rules/0/expression")[0]?.code; // 20125
 * ```
 */
export function checkRuleExpression(expression: unknown, pointer: string): ApiMessage[] {
  const errors: ApiMessage[] = [];
  if (typeof expression !== "string" || expression.trim() === "") {
    err(
      errors,
      pointer,
      invalidValue(typeof expression === "string" ? expression : "", "expression", "the expression cannot be blank"),
      20125,
    );
    return errors;
  }
  if (characterLength(expression) > MAX_RULE_EXPRESSION_LENGTH) {
    err(
      errors,
      pointer,
      invalidValue(
        `${expression.slice(0, 32)}…`,
        "expression",
        `the expression is longer than ${MAX_RULE_EXPRESSION_LENGTH} characters`,
      ),
    );
    return errors;
  }
  const parsed = parseExpression(expression);
  if (!parsed.ok) {
    const e = parsed.error;
    const detail = e.formatted !== "" ? e.formatted : `Filter parsing error (${e.line}:${e.column}): ${e.message}`;
    err(errors, pointer, invalidValue(expression, "expression", `could not parse filter expression: ${detail}`));
  }
  return errors;
}

function checkOverrideFields(o: Record<string, unknown>, base: string, ddos: boolean, errors: ApiMessage[]): void {
  if (o.action !== undefined && !(typeof o.action === "string" && OVERRIDE_ACTION.test(o.action)))
    err(errors, `${base}/action`, invalidValue(o.action, "action", "it must match ^[a-z_]+$"));
  if (!isOptionalBoolean(o.enabled))
    err(errors, `${base}/enabled`, invalidValue(o.enabled, "enabled", "it must be a boolean"));
  if (o.sensitivity_level === undefined) return;
  // sensitivity_level exists only for the DDoS phases' managed rulesets.
  if (!ddos)
    err(
      errors,
      `${base}/sensitivity_level`,
      invalidValue(o.sensitivity_level, "sensitivity_level", "it applies to the DDoS phases only"),
    );
  else if (!SENSITIVITY_LEVELS.has(o.sensitivity_level))
    err(
      errors,
      `${base}/sensitivity_level`,
      invalidValue(o.sensitivity_level, "sensitivity_level", "it is not one of default, medium, low, eoff"),
    );
}

function checkOverrideList(
  list: unknown,
  base: string,
  key: "rules" | "categories",
  ddos: boolean,
  errors: ApiMessage[],
): void {
  if (!Array.isArray(list) || list.length === 0) {
    err(errors, base, invalidValue(list, `overrides.${key}`, "it must be a non-empty array"));
    return;
  }
  const seen = new Set<string>();
  list.forEach((item: unknown, i) => {
    const at = `${base}/${i}`;
    if (!isRecord(item) || Object.keys(item).length < 2) {
      err(errors, at, invalidValue(item, `overrides.${key}`, "each item needs its key and at least one setting"));
      return;
    }
    const name = key === "rules" ? item.id : item.category;
    if (key === "rules" ? !isHex32(name) : !(typeof name === "string" && name.length > 0))
      err(
        errors,
        `${at}/${key === "rules" ? "id" : "category"}`,
        invalidValue(
          name,
          key === "rules" ? "id" : "category",
          key === "rules" ? "it must be 32 hex characters" : "it cannot be blank",
        ),
      );
    if (typeof name === "string") {
      if (seen.has(name)) err(errors, at, invalidValue(name, `overrides.${key}`, "items must be unique"));
      seen.add(name);
    }
    checkKnownKeys(item, key === "rules" ? RULE_OVERRIDE_KEYS : CATEGORY_OVERRIDE_KEYS, at, errors);
    checkOverrideFields(item, at, ddos, errors);
    if (key === "rules" && item.score_threshold !== undefined && !Number.isInteger(item.score_threshold))
      err(
        errors,
        `${at}/score_threshold`,
        invalidValue(item.score_threshold, "score_threshold", "it must be an integer"),
      );
  });
}

function checkExecute(p: Record<string, unknown>, base: string, ddos: boolean, errors: ApiMessage[]): void {
  checkKnownKeys(p, EXECUTE_KEYS, base, errors);
  if (!isHex32(p.id))
    err(errors, `${base}/id`, invalidValue(p.id ?? "", "id", "it must be the 32-hex id of a managed ruleset"));
  if (p.version !== undefined && typeof p.version !== "string")
    err(errors, `${base}/version`, invalidValue(p.version, "version", "it must be a string"));
  if (p.matched_data !== undefined) {
    const m = p.matched_data;
    if (!isRecord(m) || typeof m.public_key !== "string" || m.public_key.length === 0)
      err(errors, `${base}/matched_data`, invalidValue(m, "matched_data", "it needs a non-empty public_key"));
  }
  if (p.overrides === undefined) return;
  const o = p.overrides;
  if (!isRecord(o) || Object.keys(o).length === 0) {
    err(errors, `${base}/overrides`, invalidValue(o, "overrides", "it must be an object with at least one property"));
    return;
  }
  checkKnownKeys(o, OVERRIDES_KEYS, `${base}/overrides`, errors);
  checkOverrideFields(o, `${base}/overrides`, ddos, errors);
  if (o.categories !== undefined)
    checkOverrideList(o.categories, `${base}/overrides/categories`, "categories", ddos, errors);
  if (o.rules !== undefined) checkOverrideList(o.rules, `${base}/overrides/rules`, "rules", ddos, errors);
}

function checkSkip(p: Record<string, unknown>, base: string, errors: ApiMessage[]): void {
  checkKnownKeys(p, SKIP_KEYS, base, errors);
  if (p.ruleset !== undefined && p.ruleset !== "current")
    err(errors, `${base}/ruleset`, invalidValue(p.ruleset, "ruleset", "the only accepted value is 'current'"));
  if (p.rulesets !== undefined && !(Array.isArray(p.rulesets) && p.rulesets.every(isHex32)))
    err(errors, `${base}/rulesets`, invalidValue(p.rulesets, "rulesets", "it must be an array of ruleset ids"));
  if (
    p.rules !== undefined &&
    !(
      isRecord(p.rules) && Object.entries(p.rules).every(([k, v]) => isHex32(k) && Array.isArray(v) && v.every(isHex32))
    )
  )
    err(errors, `${base}/rules`, invalidValue(p.rules, "rules", "it must map ruleset ids to arrays of rule ids"));
  if (p.phases !== undefined && !(Array.isArray(p.phases) && p.phases.every(isRulesetPhase)))
    err(errors, `${base}/phases`, invalidValue(p.phases, "phases", "it must be an array of phases"));
  if (p.products !== undefined && !(Array.isArray(p.products) && p.products.every(isBypassProduct)))
    err(errors, `${base}/products`, invalidValue(p.products, "products", "it must be an array of known products"));
  if (Object.keys(p).length === 0) err(errors, base, "action parameters of a skip rule must say what to skip");
}

/** A block rule's custom response: status 400–499, content and its type (the published schema's and the SDK's). */
function checkBlock(p: Record<string, unknown>, base: string, errors: ApiMessage[]): void {
  checkKnownKeys(p, BLOCK_KEYS, base, errors);
  if (p.response === undefined) return;
  const r = p.response;
  const at = `${base}/response`;
  if (!isRecord(r)) {
    err(errors, at, invalidValue(r, "response", "it must be an object with status_code, content and content_type"));
    return;
  }
  checkKnownKeys(r, BLOCK_RESPONSE_KEYS, at, errors);
  const status = r.status_code;
  if (!(Number.isInteger(status) && (status as number) >= 400 && (status as number) <= 499))
    err(
      errors,
      `${at}/status_code`,
      invalidValue(status ?? "", "status_code", "it must be an integer from 400 to 499"),
    );
  for (const key of ["content", "content_type"] as const) {
    const v = r[key];
    if (!(typeof v === "string" && v.length > 0))
      err(errors, `${at}/${key}`, invalidValue(v ?? "", key, "it is required and cannot be empty"));
  }
}

const RATELIMIT_INTEGERS = ["period", "mitigation_timeout", "requests_per_period", "score_per_period"] as const;
const RATELIMIT_STRINGS = ["counting_expression", "score_response_header_name"] as const;

function checkRatelimit(r: unknown, base: string, errors: ApiMessage[]): void {
  if (!isRecord(r)) {
    err(errors, base, invalidValue(r, "ratelimit", "it must be an object with characteristics and period"));
    return;
  }
  const c = r.characteristics;
  if (!(Array.isArray(c) && c.length > 0 && c.every((x) => typeof x === "string" && x.length > 0)))
    err(
      errors,
      `${base}/characteristics`,
      invalidValue(c ?? "", "characteristics", "it must be a non-empty array of field names"),
    );
  if (r.period === undefined) err(errors, `${base}/period`, invalidValue("", "period", "it is required"));
  for (const key of RATELIMIT_INTEGERS) {
    const v = r[key];
    const min = key === "period" ? 1 : 0;
    if (v !== undefined && !(Number.isSafeInteger(v) && (v as number) >= min))
      err(errors, `${base}/${key}`, invalidValue(v, key, `it must be an integer of at least ${min}`));
  }
  for (const key of RATELIMIT_STRINGS) {
    if (r[key] !== undefined && typeof r[key] !== "string")
      err(errors, `${base}/${key}`, invalidValue(r[key], key, "it must be a string"));
  }
  if (!isOptionalBoolean(r.requests_to_origin))
    err(
      errors,
      `${base}/requests_to_origin`,
      invalidValue(r.requests_to_origin, "requests_to_origin", "it must be a boolean"),
    );
}

function checkCredentialCheck(e: unknown, base: string, errors: ApiMessage[]): void {
  if (!isRecord(e)) {
    err(errors, base, invalidValue(e, "exposed_credential_check", "it must be an object"));
    return;
  }
  for (const key of ["username_expression", "password_expression"] as const) {
    if (!(typeof e[key] === "string" && (e[key] as string).trim() !== ""))
      err(errors, `${base}/${key}`, invalidValue(e[key] ?? "", key, "it is required and cannot be blank"));
  }
}

function checkIdLike(
  value: unknown,
  field: "id" | "version" | "ref",
  at: string,
  allowEmpty: boolean,
  errors: ApiMessage[],
): boolean {
  // Returns whether the field is kept in the normalized rule.
  if (value === undefined) return false;
  if (value === "" && allowEmpty) return false;
  const ok =
    typeof value === "string" &&
    (field === "id" ? isHex32(value) : field === "version" ? /^[0-9]+$/.test(value) : value.length > 0);
  if (!ok) {
    const why =
      field === "id"
        ? "it must be 32 hex characters"
        : field === "version"
          ? "it must be digits"
          : "it cannot be blank";
    err(errors, `${at}/${field}`, invalidValue(value, field, why));
  }
  return ok;
}

/**
 * Validates an entry-point ruleset body from the wire and returns it normalized (`enabled`
 * defaulting to true, empty ids dropped in migration mode). Never throws.
 *
 * @example
 * ```ts
 * const v = validateRulesetBody({ rules: [{ action: "execute", expression: "true",
 *   action_parameters: { id: "efb7b8c949ac4650a09736fc376e9aee" } }] });
 * v.ok; // true
 * ```
 */
export function validateRulesetBody(body: unknown, options: ValidateRulesetBodyOptions = {}): RulesetBodyValidation {
  const allowEmpty = options.allowEmptyIds === true;
  const phase = options.phase ?? MANAGED_PHASE;
  const ddos = DDOS_PHASES.has(phase);
  const errors: ApiMessage[] = [];
  if (!isRecord(body))
    // No source: the schema's pointer is at least one character, and the whole body is at fault.
    return { ok: false, errors: [{ message: "The request body must be a ruleset object." }] };
  checkKnownKeys(body, RULESET_KEYS, "", errors);
  if (body.name !== undefined && !(typeof body.name === "string" && body.name.length > 0))
    err(errors, "/name", invalidValue(body.name, "name", "it cannot be blank"));
  if (body.description !== undefined && typeof body.description !== "string")
    err(errors, "/description", invalidValue(body.description, "description", "it must be a string"));
  if (body.kind !== undefined && body.kind !== "zone")
    err(errors, "/kind", invalidValue(body.kind, "kind", "the entry point of a zone phase has kind 'zone'"));
  if (body.phase !== undefined && body.phase !== phase)
    err(errors, "/phase", invalidValue(body.phase, "phase", `this entry point belongs to ${phase}`));
  if (!Array.isArray(body.rules)) {
    err(errors, "/rules", invalidValue(body.rules ?? null, "rules", "the rules are required"));
    return { ok: false, errors };
  }

  const rules: RulesetRule[] = [];
  // A rule id names one rule of the ruleset: a second rule with it would make later updates ambiguous.
  const ruleIndexById = new Map<string, number>();
  body.rules.forEach((raw: unknown, i) => {
    const at = `/rules/${i}`;
    if (!isRecord(raw)) {
      err(errors, at, invalidValue(raw, "rule", "it must be an object"));
      return;
    }
    const before = errors.length;
    checkKnownKeys(raw, RULE_KEYS, at, errors);
    const keepId = checkIdLike(raw.id, "id", at, allowEmpty, errors);
    if (keepId) {
      const first = ruleIndexById.get(raw.id as string);
      if (first !== undefined)
        err(errors, `${at}/id`, invalidValue(raw.id, "id", `rule ${first} has it; rule ids are unique in a ruleset`));
      else ruleIndexById.set(raw.id as string, i);
    }
    const keepVersion = checkIdLike(raw.version, "version", at, allowEmpty, errors);
    const keepRef = checkIdLike(raw.ref, "ref", at, allowEmpty, errors);
    if (raw.action === undefined && raw.action_parameters !== undefined)
      err(errors, `${at}/action`, "action is required for action parameters");
    else if (!isRuleAction(raw.action))
      err(
        errors,
        `${at}/action`,
        invalidValue(raw.action ?? "", "action", `it is not one of ${RULE_ACTIONS.join(", ")}`),
      );
    errors.push(...checkRuleExpression(raw.expression, `${at}/expression`));
    if (raw.description !== undefined && typeof raw.description !== "string")
      err(errors, `${at}/description`, invalidValue(raw.description, "description", "it must be a string"));
    if (!isOptionalBoolean(raw.enabled))
      err(errors, `${at}/enabled`, invalidValue(raw.enabled, "enabled", "it must be a boolean"));
    if (raw.logging !== undefined && !(isRecord(raw.logging) && typeof raw.logging.enabled === "boolean"))
      err(errors, `${at}/logging`, invalidValue(raw.logging, "logging", "it needs a boolean enabled"));
    else if (raw.logging !== undefined) checkKnownKeys(raw.logging, LOGGING_KEYS, `${at}/logging`, errors);
    // Fields of the published rule schema: checked and kept, never dropped (a rate-limiting rule
    // saved without its ratelimit would block every request its expression matches).
    if (raw.ratelimit !== undefined) checkRatelimit(raw.ratelimit, `${at}/ratelimit`, errors);
    if (raw.exposed_credential_check !== undefined)
      checkCredentialCheck(raw.exposed_credential_check, `${at}/exposed_credential_check`, errors);

    const params = raw.action_parameters;
    const pAt = `${at}/action_parameters`;
    if (params !== undefined && !isRecord(params)) {
      err(errors, pAt, invalidValue(params, "action_parameters", "it must be an object"));
    } else if (raw.action === "execute") {
      if (params === undefined) err(errors, pAt, "action parameters are required for the 'execute' action");
      else checkExecute(params, pAt, ddos, errors);
    } else if (raw.action === "skip" && params === undefined) {
      // A skip rule without parameters skips nothing, as one with empty parameters, which is refused.
      err(errors, pAt, "action parameters are required for the 'skip' action");
    } else if (params !== undefined) {
      if (params.overrides !== undefined)
        err(errors, `${pAt}/overrides`, "overrides are allowed only when the action is 'execute'");
      if (raw.action === "skip") checkSkip(params, pAt, errors);
      else if (raw.action === "block") checkBlock(params, pAt, errors);
    }
    if (errors.length > before || !isRuleAction(raw.action) || typeof raw.expression !== "string") return;

    const rule: RulesetRule = {
      action: raw.action,
      expression: raw.expression,
      description: typeof raw.description === "string" ? raw.description : "",
      enabled: raw.enabled !== false,
    };
    if (keepId) rule.id = raw.id as string;
    if (keepVersion) rule.version = raw.version as string;
    if (keepRef) rule.ref = raw.ref as string;
    if (isRecord(params)) {
      const copy = cloneJson(params);
      if (copy === null) {
        err(errors, pAt, invalidValue("[unserializable]", "action_parameters", "it must be plain JSON"));
        return;
      }
      rule.action_parameters = copy;
    }
    if (isRecord(raw.logging)) rule.logging = { enabled: raw.logging.enabled === true };
    for (const key of ["ratelimit", "exposed_credential_check"] as const) {
      const value = raw[key];
      if (!isRecord(value)) continue;
      const copy = cloneJson(value);
      if (copy === null) {
        err(errors, `${at}/${key}`, invalidValue("[unserializable]", key, "it must be plain JSON"));
        return;
      }
      Object.assign(rule, { [key]: copy });
    }
    rules.push(rule);
  });
  if (errors.length > 0) return { ok: false, errors };

  const ruleset: EntryPointRuleset = { rules };
  if (typeof body.name === "string") ruleset.name = body.name;
  if (typeof body.description === "string") ruleset.description = body.description;
  if (body.kind === "zone") ruleset.kind = "zone";
  if (body.phase === phase) ruleset.phase = phase;
  return { ok: true, ruleset };
}

// The stored ruleset must not alias the caller's objects: later edits to the request body
// would otherwise change the zone state behind the state machine's back.
function cloneJson(value: Record<string, unknown>): Record<string, unknown> | null {
  try {
    return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  } catch {
    // Cycles and bigints cannot come from a JSON body; refuse them rather than throw.
    return null;
  }
}
