import { describe, expect, it } from "vitest";
import { checkCompatibility, createUriOverride, deleteUriOverride } from "../../../src/api/waf-migration/index";
import { inState, zone } from "./fixtures";

const bypass = {
  id: "b1",
  expression: "ip.src eq 203.0.113.1",
  action: "bypass",
  products: ["waf" as const],
  paused: false,
};

describe("checkCompatibility", () => {
  it("checkCompatibility: a default zone is compatible and reports start", () => {
    const r = checkCompatibility(zone("pro"), { phaseTwo: true });
    expect(r.success && r.result).toEqual({ compatible: true, migration_state: "start" });
  });

  it("checkCompatibility: reports validation for a zone in validation mode", () => {
    const r = checkCompatibility(inState(zone("enterprise"), "validation"), { phaseTwo: true });
    expect(r.success && r.result).toEqual({ compatible: true, migration_state: "validation" });
  });

  it("checkCompatibility: a migrated zone is not compatible and has no migration_state", () => {
    const r = checkCompatibility(inState(zone("pro"), "complete"), { phaseTwo: true });
    expect(r.success && r.result).toEqual({ compatible: false });
    expect(r.steps.find((s) => s.status === "refused")?.step).toBe("check-state");
  });

  // Phase 1 rule by rule (seed 3.1 rule 2), each against phase 2, where only URI overrides matter.
  const z = zone("business");
  const CASES: [string, ReturnType<typeof zone>, boolean, boolean, string | null][] = [
    ["previous version on, vendor ruleset only", z, true, true, null],
    [
      "previous version off with core rule set on",
      zone("business", { previousWaf: { ...z.previousWaf, enabled: false, coreRuleset: true } }),
      true,
      true,
      null,
    ],
    [
      "core rule set on",
      zone("business", { previousWaf: { ...z.previousWaf, coreRuleset: true } }),
      false,
      true,
      "check-previous-config",
    ],
    [
      "a firewall rule bypassing the managed rules",
      zone("business", { firewallRules: [bypass] }),
      false,
      true,
      "check-firewall-rules",
    ],
    [
      "a bypass rule for other products only",
      zone("business", { firewallRules: [{ ...bypass, products: ["rateLimit"] }] }),
      true,
      true,
      null,
    ],
    [
      "a Disable Security page rule",
      zone("business", { pageRules: [{ id: "p", target: "a.com/*", setting: "disable_security", enabled: true }] }),
      false,
      true,
      "check-page-rules",
    ],
    [
      "a WAF On page rule",
      zone("business", { pageRules: [{ id: "p", target: "a.com/*", setting: "waf_on", enabled: true }] }),
      false,
      true,
      "check-page-rules",
    ],
    ["a partner account", zone("business", { partnerAccount: true }), false, true, "check-partner-account"],
    [
      "a URI-based override",
      zone("business", { uriOverrides: [{ id: "o1", urls: ["a.com/*"] }] }),
      false,
      false,
      "check-uri-overrides",
    ],
  ];
  it.each(CASES)("checkCompatibility: %s → phase 1 %s, phase 2 %s", (_name, input, phaseOne, phaseTwo, refusedAt) => {
    const one = checkCompatibility(input, { phaseTwo: false });
    const two = checkCompatibility(input, { phaseTwo: true });
    expect(one.success && one.result.compatible).toBe(phaseOne);
    expect(two.success && two.result.compatible).toBe(phaseTwo);
    if (refusedAt !== null)
      expect(one.steps.filter((s) => s.status === "refused").map((s) => s.step)).toContain(refusedAt);
  });

  it("checkCompatibility: lists every reason, not only the first", () => {
    const r = checkCompatibility(
      zone("pro", { partnerAccount: true, firewallRules: [bypass], uriOverrides: [{ id: "o1", urls: ["a.com/*"] }] }),
    );
    expect(r.steps.filter((s) => s.status === "refused").map((s) => s.step)).toEqual([
      "check-uri-overrides",
      "check-partner-account",
      "check-firewall-rules",
    ]);
    expect(r.messages).toHaveLength(3);
  });

  it("checkCompatibility: deleting the URI-based overrides makes the zone compatible", () => {
    let z2 = zone("pro");
    const created = createUriOverride(z2, { id: "o1", urls: ["example.com/admin*"] });
    expect(created.success).toBe(true);
    z2 = created.zone;
    expect(checkCompatibility(z2, { phaseTwo: true }).result).toEqual({ compatible: false });
    const deleted = deleteUriOverride(z2, "o1");
    expect(deleted.success).toBe(true);
    expect(deleted.steps.find((s) => s.step === "delete-override")?.status).toBe("changed");
    expect(checkCompatibility(deleted.zone, { phaseTwo: true }).result).toEqual({
      compatible: true,
      migration_state: "start",
    });
  });

  it("deleteUriOverride: an unknown id is refused pointing at the check, which names the real ones", () => {
    const z2 = createUriOverride(zone("pro"), { id: "o1", urls: ["example.com/admin*"] }).zone;
    const missing = deleteUriOverride(z2, "o2");
    expect(missing.success).toBe(false);
    // This API has no listing of overrides; the message must send the client to what exists.
    expect(missing.errors[0]?.message).toContain("GET /zones/{zone_id}/waf_migration/check?phase_two=1");
    expect(missing.errors[0]?.message).not.toMatch(/list the overrides/);
    const check = checkCompatibility(z2, { phaseTwo: true });
    expect(check.messages.map((m) => m.message).join(" ")).toContain("(o1)");
  });

  it("checkCompatibility: refuses malformed zones and options without throwing", () => {
    expect(checkCompatibility(undefined as never).success).toBe(false);
    expect(
      checkCompatibility({
        ...zone(),
        firewallRules: [{ id: "x", expression: "true", action: "bypass", paused: false }],
      }).errors,
    ).toEqual([{ code: 10400, message: "products must be specified for the 'bypass' action" }]);
    expect(checkCompatibility(zone(), null as never).success).toBe(true);
  });

  it("checkCompatibility: an invalid zone id gets the real routing errors", () => {
    const r = checkCompatibility({ ...zone(), id: "ZONE_ID" });
    expect(r.errors.map((e) => e.code)).toEqual([7003, 7000]);
    expect(r.errors[0]?.message).toBe("Could not route to /zones/ZONE_ID, perhaps your object identifier is invalid?");
  });
});
