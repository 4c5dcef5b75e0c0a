import { describe, expect, it } from "vitest";
import {
  getMigrationStatus,
  MANAGED_RULESET_IDS,
  rulesetResourceFromZone,
  updateEntryPoint,
  updatePreviousWafSettings,
  validateRulesetResource,
  validateRulesetResources,
} from "../../../src/api/waf-migration/index";
import { configOf, inState, ZONE_ID, zone } from "./fixtures";

const RESOURCE = {
  kind: "zone",
  name: "default",
  phase: "http_request_firewall_managed",
  zone_id: ZONE_ID,
  rules: [
    { action: "execute", expression: "true", enabled: true, action_parameters: { id: MANAGED_RULESET_IDS.managed } },
  ],
};

describe("rulesetResourceFromZone", () => {
  it("rulesetResourceFromZone: produces a valid zone resource from a migrated zone", () => {
    const z = zone("business", {
      firewallRules: [
        { id: "b1", expression: "ip.src eq 203.0.113.1", action: "bypass", products: ["waf"], paused: false },
      ],
    });
    const migrated = updateEntryPoint(z, { waf_migration: "pending", phase_two: 1 }, configOf(z)).zone;
    const r = rulesetResourceFromZone(migrated);
    expect(r.success, JSON.stringify(r.errors)).toBe(true);
    if (!r.success) return;
    expect(r.result).toMatchObject({
      kind: "zone",
      name: "default",
      phase: "http_request_firewall_managed",
      zone_id: ZONE_ID,
    });
    expect(r.result.rules.map((x) => x.action)).toEqual(["skip", "execute", "execute"]);
    expect(validateRulesetResource(r.result).ok).toBe(true);
  });

  it.each(["default", "start", "validation"] as const)("rulesetResourceFromZone: refuses a zone in %s", (state) => {
    const r = rulesetResourceFromZone(inState(zone("enterprise"), state));
    expect(r.success).toBe(false);
    expect(r.steps.find((s) => s.status === "refused")?.step).toBe("check-state");
  });
});

describe("validateRulesetResource", () => {
  it("validateRulesetResource: accepts the documented shape", () => {
    expect(validateRulesetResource(RESOURCE)).toEqual({
      ok: true,
      resource: { ...RESOURCE, rules: [{ ...RESOURCE.rules[0], description: "" }] },
    });
  });

  it.each([
    ["kind", { kind: "managed" }, "/kind"],
    ["phase", { phase: "http_request_firewall_custom" }, "/phase"],
    ["zone_id", { zone_id: "abc" }, "/zone_id"],
    ["name", { name: "" }, "/name"],
    ["rules", { rules: [{ action: "execute", expression: "true" }] }, "/rules/0/action_parameters"],
  ])("validateRulesetResource: refuses a bad %s", (_name, patch, pointer) => {
    const v = validateRulesetResource({ ...RESOURCE, ...patch });
    expect(v.ok).toBe(false);
    expect(!v.ok && v.errors.map((e) => e.source?.pointer)).toContain(pointer);
  });

  it("validateRulesetResource: never throws on junk", () => {
    for (const junk of [null, [], "x", 3, { kind: "zone" }]) expect(validateRulesetResource(junk).ok).toBe(false);
  });

  it("validateRulesetResources: one entry-point resource per zone, with the real error", () => {
    expect(validateRulesetResources([RESOURCE]).ok).toBe(true);
    const v = validateRulesetResources([RESOURCE, RESOURCE]);
    expect(!v.ok && v.errors[0]?.message).toBe(
      "'zone' is not a valid value for kind because exceeded maximum number of zone rulesets for phase http_request_firewall_managed",
    );
    expect(validateRulesetResources("x" as never).ok).toBe(false);
  });
});

describe("getMigrationStatus", () => {
  it.each([
    ["default", "enabled", "disabled", "defaults"],
    ["start", "enabled", "disabled", "zone"],
    ["validation", "enabled", "enabled", "zone"],
    ["complete", "disabled", "enabled", "zone"],
  ] as const)("getMigrationStatus: %s → old %s, new %s, source %s", (state, old, next, source) => {
    const r = getMigrationStatus(inState(zone("enterprise"), state));
    expect(r.success && r.result).toEqual({
      migration_state: state,
      old_waf_status: old,
      new_waf_status: next,
      source,
    });
  });

  it("getMigrationStatus: refuses inconsistent zones", () => {
    expect(getMigrationStatus(inState(zone("pro"), "validation")).success).toBe(false);
    expect(getMigrationStatus({ ...inState(zone("pro"), "complete"), previousWaf: zone().previousWaf }).success).toBe(
      false,
    );
  });
});

describe("updatePreviousWafSettings", () => {
  it("updatePreviousWafSettings: changes the previous settings before migration", () => {
    const r = updatePreviousWafSettings(zone(), { coreRuleset: true, sensitivity: "low", actionMode: "simulate" });
    expect(r.success).toBe(true);
    expect(r.zone.previousWaf).toMatchObject({ coreRuleset: true, sensitivity: "low", actionMode: "simulate" });
    expect(r.steps.at(-1)).toMatchObject({ step: "save-settings", status: "changed" });
  });

  it("updatePreviousWafSettings: refuses bad values without changing the zone", () => {
    const z = zone();
    const r = updatePreviousWafSettings(z, { sensitivity: "off", enabled: "yes" } as never);
    expect(r.success).toBe(false);
    expect(r.zone).toBe(z);
    expect(r.errors).toHaveLength(2);
    expect(updatePreviousWafSettings(z, null as never).success).toBe(false);
  });
});
