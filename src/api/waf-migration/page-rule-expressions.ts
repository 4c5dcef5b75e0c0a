/**
 * The rule expressions the migration makes from page rules (specification 3.2): a skip rule per page
 * rule that disables security or switches the managed rules off, and, when the previous version is
 * off globally, one scope for the managed rulesets made of the page rules that switch them on. Shared
 * by the configuration it builds and the limits it must stay within.
 */
import type { ZoneState } from "./zone-state";

/**
 * Turns a page-rule URL pattern into a rules-language expression. Page-rule patterns may omit
 * the scheme and match both http and https, hence the `*://` prefix; `wildcard` ignores case
 * like page-rule host matching does. `**` is invalid in wildcards, so runs of `*` collapse.
 *
 * @example
 * ```ts
 * pageRuleExpression("example.com/admin*"); // 'http.request.full_uri wildcard "*://example.com/admin*"'
 * ```
 */
export function pageRuleExpression(target: string): string {
  const withScheme = target.includes("://") ? target : `*://${target}`;
  const pattern = withScheme.replace(/\*+/g, "*");
  // Two levels of escaping: a literal backslash is `\\` to the wildcard matcher, and each of
  // those is `\\` again inside the quoted string; a quote only needs the string-level escape.
  const quoted = pattern.replace(/\\/g, "\\\\\\\\").replace(/"/g, '\\"');
  return `http.request.full_uri wildcard "${quoted}"`;
}

/**
 * The expression of the managed-ruleset rules: `true`, or, when the previous version is off globally
 * and enabled page rules switch it on, those page rules' URLs joined with `or`.
 *
 * @example
 * ```ts
 * managedScopeExpression(zone); // "true" for a zone with the previous version on
 * ```
 */
export function managedScopeExpression(zone: ZoneState): string {
  const onRules = zone.pageRules.filter((r) => r.setting === "waf_on" && r.enabled);
  if (zone.previousWaf.enabled || onRules.length === 0) return "true";
  return onRules.map((r) => `(${pageRuleExpression(r.target)})`).join(" or ");
}
