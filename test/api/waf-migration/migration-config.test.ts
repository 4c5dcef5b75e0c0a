import { describe, expect, it } from "vitest";
import { parseExpression } from "../../../src/api/rules-language/index";
import {
  getMigrationConfig,
  MANAGED_RULESET_IDS,
  OWASP_ANOMALY_RULE_ID,
  pageRuleExpression,
  type RulesetRule,
  validateRulesetBody,
} from "../../../src/api/waf-migration/index";
import { blockRules, inState, zone } from "./fixtures";

function config(z: ReturnType<typeof zone>) {
  const r = getMigrationConfig(z);
  if (!r.success) throw new Error(JSON.stringify(r.errors));
  return r;
}
const executeOf = (rules: RulesetRule[], id: string) =>
  rules.find((r) => r.action === "execute" && (r.action_parameters as { id?: string }).id === id);

describe("getMigrationConfig", () => {
  it("getMigrationConfig: returns the described shape for a default zone", () => {
    const r = config(zone("pro"));
    expect(r.result.name).toBe("default");
    expect(r.result.rules[0]).toEqual({
      id: "",
      version: "",
      action: "execute",
      expression: "true",
      description: "Cloudflare Managed Ruleset",
      ref: "",
      enabled: true,
      action_parameters: { id: MANAGED_RULESET_IDS.managed },
    });
    expect(executeOf(r.result.rules, MANAGED_RULESET_IDS.owasp)?.enabled).toBe(false);
    expect(r.notMigrated).toEqual([]);
    expect(r.steps.every((s) => s.status === "unchanged")).toBe(true);
  });

  it("getMigrationConfig: the result validates as a migration-mode update body", () => {
    const v = validateRulesetBody(config(zone("enterprise")).result, { allowEmptyIds: true });
    expect(v.ok, JSON.stringify(!v.ok && v.errors)).toBe(true);
  });

  it("getMigrationConfig: simulate becomes log on the anomaly rule", () => {
    const z = zone("pro");
    const r = config(zone("pro", { previousWaf: { ...z.previousWaf, coreRuleset: true, actionMode: "simulate" } }));
    const owasp = executeOf(r.result.rules, MANAGED_RULESET_IDS.owasp);
    expect(owasp?.action_parameters).toMatchObject({
      overrides: { rules: [{ id: OWASP_ANOMALY_RULE_ID, score_threshold: 40, action: "log" }] },
    });
  });

  it("getMigrationConfig: a disabled previous version yields disabled execute rules", () => {
    const z = zone("pro");
    const r = config(zone("pro", { previousWaf: { ...z.previousWaf, enabled: false, coreRuleset: true } }));
    expect(r.result.rules.filter((x) => x.action === "execute").map((x) => x.enabled)).toEqual([false, false]);
  });

  it("getMigrationConfig: bypass firewall rules become skip rules placed before the managed rulesets", () => {
    const r = config(
      zone("business", {
        firewallRules: [
          {
            id: "b1",
            expression: 'http.request.uri.path contains "/admin"',
            action: "bypass",
            products: ["waf"],
            paused: false,
          },
          {
            id: "b2",
            expression: "ip.src eq 203.0.113.1",
            action: "bypass",
            products: ["waf", "rateLimit"],
            paused: true,
          },
          { id: "b3", expression: "ip.src eq 203.0.113.2", action: "bypass", products: ["rateLimit"], paused: false },
          ...blockRules(1),
        ],
      }),
    );
    const skips = r.result.rules.filter((x) => x.action === "skip");
    expect(skips.map((s) => [s.expression, s.enabled, s.action_parameters])).toEqual([
      ['http.request.uri.path contains "/admin"', true, { ruleset: "current" }],
      ["ip.src eq 203.0.113.1", false, { ruleset: "current" }],
    ]);
    expect(r.result.rules.slice(0, 2).every((x) => x.action === "skip")).toBe(true);
  });

  it("getMigrationConfig: page rules Disable Security and WAF Off become skip rules on their URL", () => {
    const r = config(
      zone("pro", {
        pageRules: [
          { id: "p1", target: "example.com/static/*", setting: "disable_security", enabled: true },
          { id: "p2", target: "https://example.com/health", setting: "waf_off", enabled: false },
        ],
      }),
    );
    const skips = r.result.rules.filter((x) => x.action === "skip");
    expect(skips.map((s) => [s.expression, s.enabled])).toEqual([
      ['http.request.full_uri wildcard "*://example.com/static/*"', true],
      ['http.request.full_uri wildcard "https://example.com/health"', false],
    ]);
  });

  it("getMigrationConfig: WAF On page rules scope the managed rulesets when the previous version is off", () => {
    const z = zone("pro");
    const r = config(
      zone("pro", {
        previousWaf: { ...z.previousWaf, enabled: false },
        pageRules: [
          { id: "p1", target: "example.com/login*", setting: "waf_on", enabled: true },
          { id: "p2", target: "example.com/api/*", setting: "waf_on", enabled: true },
        ],
      }),
    );
    const managed = executeOf(r.result.rules, MANAGED_RULESET_IDS.managed);
    expect(managed?.enabled).toBe(true);
    expect(managed?.expression).toBe(
      '(http.request.full_uri wildcard "*://example.com/login*") or (http.request.full_uri wildcard "*://example.com/api/*")',
    );
  });

  it("getMigrationConfig: WAF On page rules change nothing when the previous version is on", () => {
    const r = config(
      zone("pro", { pageRules: [{ id: "p1", target: "example.com/*", setting: "waf_on", enabled: true }] }),
    );
    expect(executeOf(r.result.rules, MANAGED_RULESET_IDS.managed)?.expression).toBe("true");
    expect(r.messages.some((m) => m.message.includes("nothing to migrate"))).toBe(true);
  });

  it("getMigrationConfig: reports group, rule, tag and URI overrides as not migrated", () => {
    const z = zone("enterprise");
    const r = config(
      zone("enterprise", {
        previousWaf: {
          ...z.previousWaf,
          groupOverrides: [{ id: "g1", mode: "off" }],
          ruleOverrides: [{ id: "958052", mode: "block" }],
          tagOverrides: [{ id: "wordpress", mode: "on" }],
        },
        uriOverrides: [{ id: "o1", urls: ["example.com/*"] }],
      }),
    );
    expect(r.notMigrated.map((n) => [n.kind, n.id])).toEqual([
      ["group_override", "g1"],
      ["rule_override", "958052"],
      ["tag_override", "wordpress"],
      ["uri_override", "o1"],
    ]);
    expect(r.messages).toHaveLength(4);
  });

  it("getMigrationConfig: Free zones get the free managed ruleset and the core rule set is reported", () => {
    const z = zone("free");
    const r = config(zone("free", { previousWaf: { ...z.previousWaf, coreRuleset: true } }));
    expect(r.result.rules.map((x) => (x.action_parameters as { id: string }).id)).toEqual([MANAGED_RULESET_IDS.free]);
    expect(r.notMigrated.map((n) => n.kind)).toEqual(["core_ruleset"]);
  });

  it("getMigrationConfig: warns when the migration would fail on limits", () => {
    const r = config(zone("pro", { firewallRules: blockRules(201) }));
    expect(r.messages.some((m) => m.message.includes("contact support"))).toBe(true);
  });

  it("getMigrationConfig: refuses once the zone has migrated", () => {
    const r = getMigrationConfig(inState(zone("pro"), "complete"));
    expect(r.success).toBe(false);
    expect(r.steps.find((s) => s.status === "refused")?.step).toBe("check-state");
  });

  it("getMigrationConfig: refuses an invalid zone without throwing", () => {
    for (const bad of [null, 42, "zone", {}, { ...zone(), id: "nope" }, { ...zone(), plan: "gold" }]) {
      const r = getMigrationConfig(bad as never);
      expect(r.success).toBe(false);
      expect(r.steps[0]?.step).toBe("validate-zone");
    }
  });
});

describe("pageRuleExpression", () => {
  it("pageRuleExpression: adds a scheme wildcard, collapses stars and escapes quotes", () => {
    expect(pageRuleExpression("*example.com/**")).toBe('http.request.full_uri wildcard "*://*example.com/*"');
    expect(pageRuleExpression('example.com/"x"')).toBe('http.request.full_uri wildcard "*://example.com/\\"x\\""');
  });

  it("pageRuleExpression: produces expressions the rules-language parser accepts", () => {
    for (const t of ["example.com/admin*", "*.example.com/*", "http://example.com/a/b", 'example.com/"q"'])
      expect(parseExpression(pageRuleExpression(t)).ok).toBe(true);
  });
});
