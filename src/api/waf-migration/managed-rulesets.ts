/**
 * Ids of the managed rulesets the migration deploys. They are global constants
 * (`kind: "managed"`, phase `http_request_firewall_managed`).
 */

/**
 * Managed ruleset ids, by role.
 *
 * @example
 * ```ts
 * MANAGED_RULESET_IDS.managed; // "efb7b8c949ac4650a09736fc376e9aee"
 * ```
 */
export const MANAGED_RULESET_IDS = {
  /** Cloudflare Managed Ruleset: the new version of the vendor managed ruleset. */
  managed: "efb7b8c949ac4650a09736fc376e9aee",
  /** Cloudflare OWASP Core Ruleset: the new version of the community core rule set. */
  owasp: "4814384a9e5d4991b9815dcfc25d2f1f",
  /** Cloudflare Free Managed Ruleset, deployed for Free zones instead of the full managed ruleset. */
  free: "77454fe2d30c4220b5701f6fdfb893ba",
} as const;

/**
 * The last rule of the OWASP ruleset ("949110: Inbound Anomaly Score Exceeded"): its override
 * carries the score threshold and the action.
 *
 * @example
 * ```ts
 * OWASP_ANOMALY_RULE_ID; // "6179ae15870a4bb7b2d480d4843b323c"
 * ```
 */
export const OWASP_ANOMALY_RULE_ID = "6179ae15870a4bb7b2d480d4843b323c";
