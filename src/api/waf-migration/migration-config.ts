/**
 * `GET /zones/{zone_id}/waf_migration/config`: the entry-point ruleset equivalent to the zone's
 * previous managed-rules configuration (specification 2.7 and 3.2), plus what could not be carried over.
 */
import { checkMigrationLimits } from "./limits";
import { MANAGED_RULESET_IDS, OWASP_ANOMALY_RULE_ID } from "./managed-rulesets";
import { managedScopeExpression, pageRuleExpression } from "./page-rule-expressions";
import { type OperationResult, StepLog } from "./result";
import type { EntryPointRuleset, RulesetRule } from "./ruleset-body";

export { pageRuleExpression } from "./page-rule-expressions";

import { mapActionMode, mapSensitivity, paranoiaCategoriesToDisable } from "./sensitivity";
import { bypassesManagedRules, type PageRuleState, validateZoneState, type ZoneState } from "./zone-state";

/** Kinds of previous settings the migration does not carry over. */
export const NOT_MIGRATED_KINDS = [
  "group_override",
  "rule_override",
  "tag_override",
  "uri_override",
  "core_ruleset",
] as const;
/** One of {@link NOT_MIGRATED_KINDS}. */
export type NotMigratedKind = (typeof NOT_MIGRATED_KINDS)[number];

/**
 * A previous setting the user must recreate (or delete) by hand.
 *
 * @example
 * ```ts
 * const n: NotMigratedSetting = { kind: "rule_override", id: "958052", mode: "off",
 *   message: "Rule override 958052 (off) is not migrated; recreate it as a rule override of the new ruleset." };
 * ```
 */
export interface NotMigratedSetting {
  kind: NotMigratedKind;
  id: string;
  mode?: string;
  message: string;
}

/**
 * The result of {@link getMigrationConfig}: the configuration (envelope `result`) and the
 * settings that were not migrated.
 *
 * @example
 * ```ts
 * const r: MigrationConfigResult = getMigrationConfig(zone);
 * r.notMigrated.map((n) => n.message);
 * ```
 */
export type MigrationConfigResult = OperationResult<EntryPointRuleset> & { notMigrated: NotMigratedSetting[] };

function migrationRule(rule: Omit<RulesetRule, "id" | "version" | "ref">): RulesetRule {
  // The config operation returns empty id, version and ref (specification 2.7); the update accepts them back.
  return { id: "", version: "", ...rule, ref: "" };
}

const PAGE_RULE_LABEL: Record<PageRuleState["setting"], string> = {
  disable_security: "Disable Security",
  waf_off: "Web Application Firewall: Off",
  waf_on: "Web Application Firewall: On",
};

/**
 * Builds the entry-point ruleset configuration equivalent to the zone's previous managed rules.
 * Exceptions (skip rules) come first so they take effect before the managed rulesets run.
 *
 * @example
 * ```ts
 * const r = getMigrationConfig(zone);
 * if (r.success) updateEntryPoint(zone, { waf_migration: "pending", phase_two: 1 }, r.result);
 * ```
 */
export function getMigrationConfig(zone: ZoneState): MigrationConfigResult {
  const log = new StepLog();
  const valid = validateZoneState(zone);
  if (!valid.ok)
    return { ...log.refuse("validate-zone", "The zone state is not valid.", valid.errors, zone), notMigrated: [] };
  log.add("validate-zone", "unchanged", "The zone state is valid.");
  const z = valid.zone;
  if (z.migrationState === "complete") {
    const message =
      "The zone has already migrated; the previous configuration no longer exists. Read the entry point with the rulesets API.";
    return {
      ...log.refuse("check-state", message, [], z, ["convert-exceptions", "convert-managed-rules", "report"]),
      notMigrated: [],
    };
  }
  log.add("check-state", "unchanged", `The zone is in state ${z.migrationState}.`);

  const p = z.previousWaf;
  const rules: RulesetRule[] = [];

  // Firewall rules that bypass the managed rules, and page rules that disable security or switch
  // the WAF off, become skip rules: after migration only exceptions stop managed rulesets.
  for (const fr of z.firewallRules.filter(bypassesManagedRules))
    rules.push(
      migrationRule({
        action: "skip",
        expression: fr.expression,
        description: `Migrated from firewall rule ${fr.id} (bypass managed rules)`,
        enabled: !fr.paused,
        action_parameters: { ruleset: "current" },
      }),
    );
  const offRules = z.pageRules.filter((r) => r.setting !== "waf_on");
  for (const pr of offRules)
    rules.push(
      migrationRule({
        action: "skip",
        expression: pageRuleExpression(pr.target),
        description: `Migrated from page rule ${pr.id} (${PAGE_RULE_LABEL[pr.setting]})`,
        enabled: pr.enabled,
        action_parameters: { ruleset: "current" },
      }),
    );
  log.add("convert-exceptions", "unchanged", `${rules.length} exception(s) converted to skip rules.`);

  // WAF: On page rules matter only when the previous version is off globally: then the managed
  // rulesets run on those URLs alone. When it is on, such page rules change nothing.
  const onRules = z.pageRules.filter((r) => r.setting === "waf_on" && r.enabled);
  const scoped = !p.enabled && onRules.length > 0;
  const expression = managedScopeExpression(z);
  const running = p.enabled || scoped;
  if (p.enabled && onRules.length > 0)
    log.note({
      message: `Page rules ${onRules.map((r) => r.id).join(", ")} switch the managed rules on where they already run; nothing to migrate.`,
    });

  const notMigrated: NotMigratedSetting[] = [];
  const free = z.plan === "free";
  rules.push(
    migrationRule({
      action: "execute",
      expression,
      description: free ? "Cloudflare Free Managed Ruleset" : "Cloudflare Managed Ruleset",
      enabled: running && p.managedRuleset,
      action_parameters: { id: free ? MANAGED_RULESET_IDS.free : MANAGED_RULESET_IDS.managed },
    }),
  );
  if (free) {
    if (p.coreRuleset)
      notMigrated.push({
        kind: "core_ruleset",
        id: MANAGED_RULESET_IDS.owasp,
        message:
          "The core rule set is not available to Free zones after migration; upgrade the plan to deploy the OWASP ruleset.",
      });
  } else {
    const m = mapSensitivity(p.sensitivity);
    rules.push(
      migrationRule({
        action: "execute",
        expression,
        description: "Cloudflare OWASP Core Ruleset",
        enabled: running && p.coreRuleset,
        action_parameters: {
          id: MANAGED_RULESET_IDS.owasp,
          overrides: {
            categories: paranoiaCategoriesToDisable(m.paranoiaLevel).map((category) => ({ category, enabled: false })),
            rules: [
              { id: OWASP_ANOMALY_RULE_ID, score_threshold: m.scoreThreshold, action: mapActionMode(p.actionMode) },
            ],
          },
        },
      }),
    );
  }
  log.add("convert-managed-rules", "unchanged", "Managed rulesets configured from the previous settings.");

  for (const o of p.groupOverrides)
    notMigrated.push({
      kind: "group_override",
      id: o.id,
      mode: o.mode,
      message: `Group override ${o.id} (${o.mode}) is not migrated; recreate it as a tag (category) override.`,
    });
  for (const o of p.ruleOverrides)
    notMigrated.push({
      kind: "rule_override",
      id: o.id,
      mode: o.mode,
      message: `Rule override ${o.id} (${o.mode}) is not migrated; recreate it as a rule override.`,
    });
  for (const o of p.tagOverrides)
    notMigrated.push({
      kind: "tag_override",
      id: o.id,
      mode: o.mode,
      message: `Tag override ${o.id} (${o.mode}) is not migrated; recreate it as a tag (category) override.`,
    });
  for (const o of z.uriOverrides)
    notMigrated.push({
      kind: "uri_override",
      id: o.id,
      message: `URI-based override ${o.id} is not migrated and blocks the migration; delete it first.`,
    });
  for (const n of notMigrated) log.note({ message: n.message });
  for (const problem of checkMigrationLimits(z)) log.note(problem);
  log.add("report", "unchanged", `${notMigrated.length} setting(s) not migrated.`);

  return { ...log.succeed<EntryPointRuleset>({ name: "default", rules }, z), notMigrated };
}
