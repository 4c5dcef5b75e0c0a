/**
 * The state of one zone as far as the managed-rules migration is concerned: the previous
 * managed-rules configuration, what can switch it (firewall rules, page rules, URI-based
 * overrides), the new entry-point ruleset and the migration state.
 */
import type { ApiMessage } from "./result";
import type { EntryPointRuleset } from "./ruleset-body";
import { invalidValue, isHex32, isRecord, oneOf } from "./validate";

/** Zone plans. Validation mode exists only on `enterprise` (specification 3.1 rule 4). */
export const PLANS = ["free", "pro", "business", "enterprise"] as const;
/** One of {@link PLANS}. */
export type Plan = (typeof PLANS)[number];
/**
 * Tells whether a value is one of {@link PLANS}.
 *
 * @example
 * ```ts
 * isPlan("enterprise"); // true
 * ```
 */
export const isPlan = oneOf(PLANS);

/** Sensitivities of the previous core rule set, the rows of the specification's 3.2 table. */
export const WAF_SENSITIVITIES = ["high", "medium", "low", "default"] as const;
/** One of {@link WAF_SENSITIVITIES}. */
export type WafSensitivity = (typeof WAF_SENSITIVITIES)[number];
/**
 * Tells whether a value is one of {@link WAF_SENSITIVITIES}.
 *
 * @example
 * ```ts
 * isWafSensitivity("low"); // true
 * ```
 */
export const isWafSensitivity = oneOf(WAF_SENSITIVITIES);

/** Actions of the previous core rule set (OAS `action_mode`). */
export const WAF_ACTION_MODES = ["simulate", "block", "challenge"] as const;
/** One of {@link WAF_ACTION_MODES}. */
export type WafActionMode = (typeof WAF_ACTION_MODES)[number];
/**
 * Tells whether a value is one of {@link WAF_ACTION_MODES}.
 *
 * @example
 * ```ts
 * isWafActionMode("simulate"); // true
 * ```
 */
export const isWafActionMode = oneOf(WAF_ACTION_MODES);

/**
 * Migration states observed on the status endpoint. `default` and `start` both mean "previous
 * version only" (`default`: nothing recorded yet; the check reports `start` for a zone that may
 * begin); `validation` runs both versions (Enterprise only); `complete` is new-only and final.
 */
export const MIGRATION_STATES = ["default", "start", "validation", "complete"] as const;
/** One of {@link MIGRATION_STATES}. */
export type MigrationState = (typeof MIGRATION_STATES)[number];
/**
 * Tells whether a value is one of {@link MIGRATION_STATES}.
 *
 * @example
 * ```ts
 * isMigrationState("complete"); // true
 * ```
 */
export const isMigrationState = oneOf(MIGRATION_STATES);

/** Page-rule settings that touch the previous managed rules: Disable Security, WAF Off, WAF On. */
export const PAGE_RULE_WAF_SETTINGS = ["disable_security", "waf_off", "waf_on"] as const;
/** One of {@link PAGE_RULE_WAF_SETTINGS}. */
export type PageRuleWafSetting = (typeof PAGE_RULE_WAF_SETTINGS)[number];
/**
 * Tells whether a value is one of {@link PAGE_RULE_WAF_SETTINGS}.
 *
 * @example
 * ```ts
 * isPageRuleWafSetting("waf_off"); // true
 * ```
 */
export const isPageRuleWafSetting = oneOf(PAGE_RULE_WAF_SETTINGS);

/** Products a firewall rule with action `bypass` can bypass (`waf` is the managed rules). */
export const BYPASS_PRODUCTS = ["bic", "hot", "rateLimit", "securityLevel", "uaBlock", "waf", "zoneLockdown"] as const;
/** One of {@link BYPASS_PRODUCTS}. */
export type BypassProduct = (typeof BYPASS_PRODUCTS)[number];
/**
 * Tells whether a value is one of {@link BYPASS_PRODUCTS}.
 *
 * @example
 * ```ts
 * isBypassProduct("waf"); // true
 * ```
 */
export const isBypassProduct = oneOf(BYPASS_PRODUCTS);

/**
 * A group, rule or tag override of the previous version: not migrated, reported for the user to recreate.
 *
 * @example
 * ```ts
 * const o: PreviousWafOverride = { id: "de677e5818985db1285d0e80225f06e5", mode: "off" };
 * ```
 */
export interface PreviousWafOverride {
  id: string;
  mode: string;
}

/**
 * The previous managed-rules configuration of a zone.
 *
 * @example
 * ```ts
 * const p: PreviousWafConfig = { enabled: true, managedRuleset: true, coreRuleset: false, sensitivity: "default",
 *   actionMode: "challenge", groupOverrides: [], ruleOverrides: [], tagOverrides: [] };
 * ```
 */
export interface PreviousWafConfig {
  enabled: boolean;
  /** The vendor managed ruleset (Cloudflare Managed Ruleset) on or off. */
  managedRuleset: boolean;
  /** The community core rule set (OWASP) on or off. */
  coreRuleset: boolean;
  sensitivity: WafSensitivity;
  actionMode: WafActionMode;
  groupOverrides: PreviousWafOverride[];
  ruleOverrides: PreviousWafOverride[];
  tagOverrides: PreviousWafOverride[];
}

/**
 * A URI-based override of the previous managed rules (API-only; blocks migration until deleted).
 *
 * @example
 * ```ts
 * const o: UriOverride = { id: "de677e5818985db1285d0e80225f06e5", urls: ["example.com/admin*"] };
 * ```
 */
export interface UriOverride {
  id: string;
  urls: string[];
}

/**
 * A firewall rule of the zone. Only `bypass` rules whose products include `waf` matter to the
 * migration; the rest are kept for the 200-rule count.
 *
 * @example
 * ```ts
 * const r: FirewallRuleState = { id: "r1", expression: 'ip.src eq 203.0.113.1', action: "bypass", products: ["waf"], paused: false };
 * ```
 */
export interface FirewallRuleState {
  id: string;
  expression: string;
  action: string;
  products?: BypassProduct[];
  paused: boolean;
}

/**
 * A page rule that disables security or switches the previous managed rules off or on for a URL pattern.
 *
 * @example
 * ```ts
 * const p: PageRuleState = { id: "p1", target: "example.com/admin*", setting: "waf_off", enabled: true };
 * ```
 */
export interface PageRuleState {
  id: string;
  target: string;
  setting: PageRuleWafSetting;
  enabled: boolean;
}

/**
 * Everything the migration reads and writes for one zone.
 *
 * @example
 * ```ts
 * const zone: ZoneState = createZoneState({ id: "023e105f4ecef8ad9ca31a8372d0c353", plan: "pro" });
 * ```
 */
export interface ZoneState {
  id: string;
  plan: Plan;
  partnerAccount: boolean;
  previousWaf: PreviousWafConfig;
  uriOverrides: UriOverride[];
  firewallRules: FirewallRuleState[];
  pageRules: PageRuleState[];
  /** The entry-point ruleset of phase `http_request_firewall_managed`, or null when never set. */
  entryPoint: EntryPointRuleset | null;
  migrationState: MigrationState;
}

/**
 * Options for {@link createZoneState}: the zone id and plan, and anything else to override.
 *
 * @example
 * ```ts
 * const o: CreateZoneStateOptions = { id: "023e105f4ecef8ad9ca31a8372d0c353", plan: "pro", previousWaf: { coreRuleset: true } };
 * ```
 */
export type CreateZoneStateOptions = Pick<ZoneState, "id" | "plan"> &
  Partial<Omit<ZoneState, "id" | "plan" | "previousWaf">> & { previousWaf?: Partial<PreviousWafConfig> };

/**
 * Builds a zone with the previous managed rules in their defaults (on, vendor ruleset on, core
 * rule set off, sensitivity default, action challenge) and nothing migrated.
 *
 * @example
 * ```ts
 * const zone = createZoneState({ id: "023e105f4ecef8ad9ca31a8372d0c353", plan: "business" });
 * zone.migrationState; // "default"
 * ```
 */
export function createZoneState(options: CreateZoneStateOptions): ZoneState {
  return {
    partnerAccount: false,
    uriOverrides: [],
    firewallRules: [],
    pageRules: [],
    entryPoint: null,
    migrationState: "default",
    ...options,
    previousWaf: {
      enabled: true,
      managedRuleset: true,
      coreRuleset: false,
      sensitivity: "default",
      actionMode: "challenge",
      groupOverrides: [],
      ruleOverrides: [],
      tagOverrides: [],
      ...options.previousWaf,
    },
  };
}

/**
 * Tells whether a firewall rule bypasses the previous managed rules (action `bypass` with product `waf`).
 *
 * @example
 * ```ts
 * bypassesManagedRules({ id: "r", expression: "true", action: "bypass", products: ["waf"], paused: false }); // true
 * ```
 */
export function bypassesManagedRules(rule: FirewallRuleState): boolean {
  return rule.action === "bypass" && (rule.products ?? []).includes("waf");
}

/**
 * The result of {@link validateZoneState}.
 *
 * @example
 * ```ts
 * const v: ZoneStateValidation = validateZoneState(input);
 * ```
 */
export type ZoneStateValidation = { ok: true; zone: ZoneState } | { ok: false; errors: ApiMessage[] };

function checkOverrides(value: unknown, field: string, errors: ApiMessage[]): void {
  if (!Array.isArray(value)) {
    errors.push({ message: invalidValue(value, field, "it must be an array") });
    return;
  }
  value.forEach((o, i) => {
    if (!isRecord(o) || typeof o.id !== "string" || typeof o.mode !== "string")
      errors.push({ message: invalidValue(o, `${field}[${i}]`, "it must be an object with string id and mode") });
  });
}

/**
 * Checks, without trusting any type, that a value is a consistent {@link ZoneState}: field types,
 * enumerations, and the invariants of the migration (validation mode only on Enterprise; the
 * previous version disabled once complete).
 *
 * @example
 * ```ts
 * const v = validateZoneState(JSON.parse(text));
 * if (!v.ok) console.log(v.errors[0]?.message);
 * ```
 */
export function validateZoneState(input: unknown): ZoneStateValidation {
  if (!isRecord(input)) return { ok: false, errors: [{ message: "The zone state must be an object." }] };
  const errors: ApiMessage[] = [];
  if (!isHex32(input.id)) {
    errors.push(
      {
        code: 7003,
        message: `Could not route to /zones/${String(input.id)}, perhaps your object identifier is invalid?`,
      },
      { code: 7000, message: "No route for that URI" },
    );
  }
  if (!isPlan(input.plan))
    errors.push({ message: invalidValue(input.plan, "plan", `it is not one of ${PLANS.join(", ")}`) });
  if (typeof input.partnerAccount !== "boolean")
    errors.push({ message: invalidValue(input.partnerAccount, "partnerAccount", "it must be a boolean") });
  if (!isMigrationState(input.migrationState))
    errors.push({
      message: invalidValue(input.migrationState, "migrationState", `it is not one of ${MIGRATION_STATES.join(", ")}`),
    });

  const p = input.previousWaf;
  if (!isRecord(p)) {
    errors.push({ message: invalidValue(p, "previousWaf", "it must be an object") });
  } else {
    for (const key of ["enabled", "managedRuleset", "coreRuleset"] as const)
      if (typeof p[key] !== "boolean")
        errors.push({ message: invalidValue(p[key], `previousWaf.${key}`, "it must be a boolean") });
    if (!isWafSensitivity(p.sensitivity))
      errors.push({
        message: invalidValue(
          p.sensitivity,
          "previousWaf.sensitivity",
          `it is not one of ${WAF_SENSITIVITIES.join(", ")}`,
        ),
      });
    if (!isWafActionMode(p.actionMode))
      errors.push({
        message: invalidValue(
          p.actionMode,
          "previousWaf.actionMode",
          `it is not one of ${WAF_ACTION_MODES.join(", ")}`,
        ),
      });
    checkOverrides(p.groupOverrides, "previousWaf.groupOverrides", errors);
    checkOverrides(p.ruleOverrides, "previousWaf.ruleOverrides", errors);
    checkOverrides(p.tagOverrides, "previousWaf.tagOverrides", errors);
  }

  if (!Array.isArray(input.uriOverrides)) {
    errors.push({ message: invalidValue(input.uriOverrides, "uriOverrides", "it must be an array") });
  } else {
    input.uriOverrides.forEach((o: unknown, i) => {
      if (
        !isRecord(o) ||
        typeof o.id !== "string" ||
        !Array.isArray(o.urls) ||
        !o.urls.every((u) => typeof u === "string")
      )
        errors.push({
          message: invalidValue(o, `uriOverrides[${i}]`, "it must be an object with an id and string urls"),
        });
    });
  }

  if (!Array.isArray(input.firewallRules)) {
    errors.push({ message: invalidValue(input.firewallRules, "firewallRules", "it must be an array") });
  } else {
    input.firewallRules.forEach((r: unknown, i) => {
      if (
        !isRecord(r) ||
        typeof r.id !== "string" ||
        typeof r.expression !== "string" ||
        typeof r.action !== "string" ||
        typeof r.paused !== "boolean"
      ) {
        errors.push({
          message: invalidValue(
            r,
            `firewallRules[${i}]`,
            "it must have string id, expression and action and boolean paused",
          ),
        });
        return;
      }
      if (r.products !== undefined && (!Array.isArray(r.products) || !r.products.every(isBypassProduct)))
        errors.push({
          message: invalidValue(r.products, `firewallRules[${i}].products`, "it lists an unknown product"),
        });
      // The firewall-rules API itself refuses a bypass without products; a state holding one is corrupt.
      if (r.action === "bypass" && (!Array.isArray(r.products) || r.products.length === 0))
        errors.push({ message: "products must be specified for the 'bypass' action" });
    });
  }

  if (!Array.isArray(input.pageRules)) {
    errors.push({ message: invalidValue(input.pageRules, "pageRules", "it must be an array") });
  } else {
    input.pageRules.forEach((r: unknown, i) => {
      if (
        !isRecord(r) ||
        typeof r.id !== "string" ||
        typeof r.target !== "string" ||
        !isPageRuleWafSetting(r.setting) ||
        typeof r.enabled !== "boolean"
      )
        errors.push({
          message: invalidValue(
            r,
            `pageRules[${i}]`,
            "it must have string id and target, a known setting and boolean enabled",
          ),
        });
    });
  }

  const ep = input.entryPoint;
  if (ep !== null && !(isRecord(ep) && Array.isArray(ep.rules) && ep.rules.every(isRecord)))
    errors.push({ message: invalidValue(ep, "entryPoint", "it must be null or a ruleset with a rules array") });

  if (errors.length > 0) return { ok: false, errors };
  // Invariants of the state machine: a state that breaks them cannot have been reached through it.
  if (input.migrationState === "validation" && input.plan !== "enterprise")
    errors.push({
      message: "The zone is in validation mode but validation mode is available to Enterprise zones only.",
    });
  if (input.migrationState === "complete" && isRecord(p) && p.enabled === true)
    errors.push({ message: "The zone has migrated but its previous managed rules are still enabled." });
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, zone: input as unknown as ZoneState };
}
