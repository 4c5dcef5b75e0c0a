// The full transition table of seed 3.1: every state × trigger × plan × condition. The table is
// written as disjoint rows over sets, and a first test proves each combination hits exactly one row.
import { describe, expect, it } from "vitest";
import {
  getMigrationStatus,
  MIGRATION_STATES,
  type MigrationState,
  PLANS,
  type Plan,
  type UpdateEntryPointQuery,
  updateEntryPoint,
  type ZoneState,
} from "../../../src/api/waf-migration/index";
import { blockRules, configOf, inState, withoutIds, zone } from "./fixtures";

const TRIGGERS = ["pending", "validation", "none"] as const;
type Trigger = (typeof TRIGGERS)[number];

const CONDITIONS = [
  "compatible", // clean zone, phase_two=1
  "phase-one", // clean zone, no phase_two: phase 1 rules, which it meets
  "phase-one-ineligible", // core rule set on, no phase_two
  "phase-two-only", // core rule set on, bypass rule and page rule, phase_two=1
  "uri-overrides", // a URI-based override, phase_two=1
  "exactly-200-rules", // the limit itself is fine
  "too-many-rules", // 201 firewall rules
  "long-expression", // a firewall rule expression over 4 KB
  "invalid-body", // action outside the enum
  "no-configuration", // no body at all
] as const;
type Condition = (typeof CONDITIONS)[number];

function setup(
  condition: Condition,
  plan: Plan,
): { base: ZoneState; phaseTwo: boolean; body: "config" | "invalid" | "none" } {
  const phaseTwo = condition !== "phase-one" && condition !== "phase-one-ineligible";
  const body = condition === "invalid-body" ? "invalid" : condition === "no-configuration" ? "none" : "config";
  let base = zone(plan);
  if (condition === "phase-one-ineligible")
    base = zone(plan, { previousWaf: { ...base.previousWaf, coreRuleset: true } });
  if (condition === "phase-two-only")
    base = zone(plan, {
      previousWaf: { ...base.previousWaf, coreRuleset: true },
      firewallRules: [
        {
          id: "b1",
          expression: 'http.request.uri.path contains "/admin"',
          action: "bypass",
          products: ["waf"],
          paused: false,
        },
      ],
      pageRules: [{ id: "p1", target: "example.com/static/*", setting: "waf_off", enabled: true }],
    });
  if (condition === "uri-overrides") base = zone(plan, { uriOverrides: [{ id: "o1", urls: ["example.com/admin*"] }] });
  if (condition === "exactly-200-rules") base = zone(plan, { firewallRules: blockRules(200) });
  if (condition === "too-many-rules") base = zone(plan, { firewallRules: blockRules(201) });
  if (condition === "long-expression")
    base = zone(plan, { firewallRules: blockRules(1, `http.request.uri.path contains "${"a".repeat(4096)}"`) });
  return { base, phaseTwo, body };
}

type Outcome = { refusedAt: string } | { to: MigrationState | "same"; saved: true };
const refused = (step: string): Outcome => ({ refusedAt: step });
const to = (state: MigrationState | "same"): Outcome => ({ to: state, saved: true });

const ALL_STATES = MIGRATION_STATES;
const PREVIOUS: readonly MigrationState[] = ["default", "start"];
const ENT: readonly Plan[] = ["enterprise"];
const NON_ENT: readonly Plan[] = ["free", "pro", "business"];
const MIGRATING: readonly Trigger[] = ["pending", "validation"];
const BAD_BODY: readonly Condition[] = ["invalid-body", "no-configuration"];
const INELIGIBLE: readonly Condition[] = ["phase-one-ineligible", "uri-overrides"];
const OVER_LIMITS: readonly Condition[] = ["too-many-rules", "long-expression"];
const GOOD: readonly Condition[] = ["compatible", "phase-one", "phase-two-only", "exactly-200-rules"];
const NOT_BAD: readonly Condition[] = [...GOOD, ...INELIGIBLE, ...OVER_LIMITS];

type Row = [
  states: readonly MigrationState[],
  triggers: readonly Trigger[],
  plans: readonly Plan[],
  conditions: readonly Condition[],
  outcome: Outcome,
];

const TABLE: Row[] = [
  // A non-Enterprise zone cannot be in validation mode: such a state is refused as corrupt.
  [["validation"], TRIGGERS, NON_ENT, CONDITIONS, refused("validate-zone")],
  // After migration: plain rulesets updates work, migration calls are refused (irreversible).
  [["complete"], ["none"], PLANS, BAD_BODY, refused("validate-body")],
  [["complete"], ["none"], PLANS, NOT_BAD, to("complete")],
  [["complete"], MIGRATING, PLANS, CONDITIONS, refused("check-state")],
  // Plain update before or during migration: Enterprise may deploy enabled rules, others may not.
  [["validation"], ["none"], ENT, BAD_BODY, refused("validate-body")],
  [["validation"], ["none"], ENT, NOT_BAD, to("validation")],
  [PREVIOUS, ["none"], PLANS, BAD_BODY, refused("validate-body")],
  [PREVIOUS, ["none"], ENT, NOT_BAD, to("same")],
  [PREVIOUS, ["none"], NON_ENT, NOT_BAD, refused("check-plan")],
  // Validation mode: Enterprise only.
  [PREVIOUS, ["validation"], NON_ENT, CONDITIONS, refused("check-plan")],
  [[...PREVIOUS, "validation"], ["validation"], ENT, INELIGIBLE, refused("check-compatibility")],
  [[...PREVIOUS, "validation"], ["validation"], ENT, OVER_LIMITS, refused("check-limits")],
  [[...PREVIOUS, "validation"], ["validation"], ENT, BAD_BODY, refused("validate-body")],
  [[...PREVIOUS, "validation"], ["validation"], ENT, GOOD, to("validation")],
  // pending: straight to new-only from the previous version (every plan) or from validation.
  [PREVIOUS, ["pending"], PLANS, INELIGIBLE, refused("check-compatibility")],
  [PREVIOUS, ["pending"], PLANS, OVER_LIMITS, refused("check-limits")],
  [PREVIOUS, ["pending"], PLANS, BAD_BODY, refused("validate-body")],
  [PREVIOUS, ["pending"], PLANS, GOOD, to("complete")],
  [["validation"], ["pending"], ENT, INELIGIBLE, refused("check-compatibility")],
  [["validation"], ["pending"], ENT, OVER_LIMITS, refused("check-limits")],
  [["validation"], ["pending"], ENT, BAD_BODY, refused("validate-body")],
  [["validation"], ["pending"], ENT, GOOD, to("complete")],
];

interface Case {
  state: MigrationState;
  trigger: Trigger;
  plan: Plan;
  condition: Condition;
}
const CASES: Case[] = ALL_STATES.flatMap((state) =>
  TRIGGERS.flatMap((trigger) =>
    PLANS.flatMap((plan) => CONDITIONS.map((condition) => ({ state, trigger, plan, condition }))),
  ),
);
const matching = (c: Case): Row[] =>
  TABLE.filter(
    ([s, t, p, k]) => s.includes(c.state) && t.includes(c.trigger) && p.includes(c.plan) && k.includes(c.condition),
  );

function call(c: Case): { before: ZoneState; result: ReturnType<typeof updateEntryPoint> } {
  const { base, phaseTwo, body } = setup(c.condition, c.plan);
  // The body is the config of the zone before migration: what a user would have fetched.
  const config = configOf(base);
  const before = inState(base, c.state);
  const wire =
    body === "none"
      ? undefined
      : body === "invalid"
        ? { ...config, rules: [{ ...config.rules[0], action: "blok" }] }
        : c.trigger === "none"
          ? withoutIds(config)
          : config;
  const query: UpdateEntryPointQuery = {};
  if (c.trigger !== "none") query.waf_migration = c.trigger;
  if (phaseTwo) query.phase_two = 1;
  return { before, result: updateEntryPoint(before, query, wire) };
}

describe("updateEntryPoint: transition table", () => {
  it("updateEntryPoint: the table covers every state × trigger × plan × condition exactly once", () => {
    expect(CASES).toHaveLength(4 * 3 * 4 * 10);
    const bad = CASES.filter((c) => matching(c).length !== 1);
    expect(bad).toEqual([]);
  });

  it.each(CASES.map((c) => [`${c.state} × ${c.trigger} × ${c.plan} × ${c.condition}`, c] as const))(
    "updateEntryPoint: %s",
    (_name, c) => {
      const row = matching(c)[0];
      if (row === undefined) throw new Error("uncovered case");
      const outcome = row[4];
      const snapshot = structuredClone(setup(c.condition, c.plan).base);
      const { before, result } = call(c);
      // Never mutates its input, whatever happens.
      expect(inState(snapshot, c.state)).toEqual(before);
      if ("refusedAt" in outcome) {
        expect(result.success).toBe(false);
        expect(result.zone).toBe(before);
        const step = result.steps.find((s) => s.status === "refused");
        expect(step?.step).toBe(outcome.refusedAt);
        expect(result.errors.length).toBeGreaterThan(0);
        expect(result.steps.some((s) => s.status === "changed")).toBe(false);
        return;
      }
      expect(result.success, JSON.stringify(result.errors)).toBe(true);
      const expected = outcome.to === "same" ? c.state : outcome.to;
      expect(result.zone.migrationState).toBe(expected);
      expect(result.zone.entryPoint).not.toBeNull();
      expect(result.steps.find((s) => s.step === "save-entry-point")?.status).toBe("changed");
      const status = getMigrationStatus(result.zone);
      if (!status.success) throw new Error("status failed");
      if (expected === "complete") {
        expect(result.zone.previousWaf.enabled).toBe(false);
        expect(status.result).toMatchObject({ old_waf_status: "disabled", new_waf_status: "enabled" });
      } else {
        // The previous version keeps its own setting until the migration completes.
        expect(result.zone.previousWaf).toEqual(before.previousWaf);
        expect(status.result.old_waf_status).toBe("enabled");
      }
      if (c.state !== expected)
        expect(result.steps.find((s) => s.step === "set-migration-state")?.status).toBe("changed");
    },
  );
});
