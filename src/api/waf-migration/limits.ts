/**
 * The two limits past which a migration fails and the user must contact support (sections 7, 8).
 * Both count every firewall rule of the zone, not only the bypass rules that get converted:
 * the reference words it as "the zone has more than 200 firewall rules", and the specification's
 * "firewall rules to migrate" reads the same way.
 *
 * The expression limit also covers the expressions the migration makes from page rules: a
 * configuration whose expression is over the limit could not be saved, so the migration fails
 * the same way instead of handing the client a configuration the update refuses.
 */
import { characterLength } from "../validation";
import { managedScopeExpression, pageRuleExpression } from "./page-rule-expressions";
import type { ApiMessage } from "./result";
import { MAX_RULE_EXPRESSION_LENGTH } from "./ruleset-body";
import { utf8Length } from "./validate";
import type { ZoneState } from "./zone-state";

/** At most this many firewall rules can be migrated. */
export const MAX_MIGRATED_FIREWALL_RULES = 200;

/** A firewall rule expression longer than this (4 KB) makes the migration fail. */
export const MAX_MIGRATED_EXPRESSION_BYTES = 4096;

/**
 * Lists why a migration of this zone would fail (empty when it would not).
 *
 * @example
 * ```ts
 * checkMigrationLimits(zone).length === 0; // true when the zone is within both limits
 * ```
 */
export function checkMigrationLimits(zone: ZoneState): ApiMessage[] {
  const problems: ApiMessage[] = [];
  if (zone.firewallRules.length > MAX_MIGRATED_FIREWALL_RULES)
    problems.push({
      message: `The migration failed because the zone has ${zone.firewallRules.length} firewall rules, more than the ${MAX_MIGRATED_FIREWALL_RULES} that can be migrated; contact support to migrate this zone.`,
    });
  for (const rule of zone.firewallRules) {
    const bytes = utf8Length(rule.expression);
    if (bytes > MAX_MIGRATED_EXPRESSION_BYTES)
      problems.push({
        message: `The migration failed because the expression of firewall rule ${rule.id} is ${bytes} bytes, longer than ${MAX_MIGRATED_EXPRESSION_BYTES}; contact support to migrate this zone.`,
      });
  }
  for (const rule of zone.pageRules) {
    if (rule.setting === "waf_on") continue;
    const length = characterLength(pageRuleExpression(rule.target));
    if (length > MAX_RULE_EXPRESSION_LENGTH)
      problems.push({
        message: `The migration failed because the URL pattern of page rule ${rule.id} makes an expression of ${length} characters, longer than ${MAX_RULE_EXPRESSION_LENGTH}; contact support to migrate this zone.`,
      });
  }
  const scope = characterLength(managedScopeExpression(zone));
  if (scope > MAX_RULE_EXPRESSION_LENGTH)
    problems.push({
      message: `The migration failed because the page rules that switch the managed rules on make an expression of ${scope} characters, longer than ${MAX_RULE_EXPRESSION_LENGTH}; contact support to migrate this zone.`,
    });
  return problems;
}
