// Random sequences of calls against one zone, checking the migration's invariants after every call:
// never back to the previous version once migrated; validation mode only on Enterprise; the
// previous version disabled exactly when the new one is enabled alone; inputs never mutated.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkCompatibility,
  createUriOverride,
  deleteUriOverride,
  getMigrationConfig,
  getMigrationStatus,
  type OperationResult,
  PLANS,
  rulesetResourceFromZone,
  updateEntryPoint,
  updatePreviousWafSettings,
  WAF_ACTION_MODES,
  WAF_SENSITIVITIES,
  type ZoneState,
} from "../../../src/api/waf-migration/index";
import { blockRules, configOf, withoutIds, zone } from "./fixtures";

type Op =
  | { kind: "check"; phaseTwo: boolean }
  | { kind: "config" }
  | { kind: "status" }
  | { kind: "resource" }
  | {
      kind: "update";
      mode: string | number | undefined;
      phaseTwo: number | undefined;
      body: "config" | "no-ids" | "disabled" | "junk" | "none";
    }
  | { kind: "create-override"; id: string }
  | { kind: "delete-override"; id: string }
  | { kind: "settings"; patch: Record<string, unknown> };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("check" as const), phaseTwo: fc.boolean() }),
  fc.constant({ kind: "config" as const }),
  fc.constant({ kind: "status" as const }),
  fc.constant({ kind: "resource" as const }),
  fc.record({
    kind: fc.constant("update" as const),
    mode: fc.constantFrom("pending", "validation", "1", "2", 1, 2, undefined, "bogus"),
    phaseTwo: fc.constantFrom(1, undefined),
    body: fc.constantFrom("config" as const, "no-ids" as const, "disabled" as const, "junk" as const, "none" as const),
  }),
  fc.record({ kind: fc.constant("create-override" as const), id: fc.constantFrom("o1", "o2") }),
  fc.record({ kind: fc.constant("delete-override" as const), id: fc.constantFrom("o1", "o2", "missing") }),
  fc.record({
    kind: fc.constant("settings" as const),
    patch: fc.record(
      {
        enabled: fc.boolean(),
        coreRuleset: fc.boolean(),
        sensitivity: fc.constantFrom(...WAF_SENSITIVITIES, "off"),
        actionMode: fc.constantFrom(...WAF_ACTION_MODES),
      },
      { requiredKeys: [] },
    ),
  }),
);

const zoneArb: fc.Arbitrary<ZoneState> = fc
  .record({
    plan: fc.constantFrom(...PLANS),
    partnerAccount: fc.boolean(),
    coreRuleset: fc.boolean(),
    enabled: fc.boolean(),
    rules: fc.constantFrom(0, 3, 201),
    bypass: fc.boolean(),
    pageRule: fc.boolean(),
  })
  .map((g) => {
    const base = zone(g.plan);
    return zone(g.plan, {
      partnerAccount: g.partnerAccount,
      previousWaf: { ...base.previousWaf, enabled: g.enabled, coreRuleset: g.coreRuleset },
      firewallRules: [
        ...blockRules(g.rules),
        ...(g.bypass
          ? [
              {
                id: "b",
                expression: 'http.request.uri.path contains "/admin"',
                action: "bypass",
                products: ["waf" as const],
                paused: false,
              },
            ]
          : []),
      ],
      pageRules: g.pageRule
        ? [{ id: "p", target: "example.com/static/*", setting: "waf_off" as const, enabled: true }]
        : [],
    });
  });

function bodyFor(z: ZoneState, kind: Extract<Op, { kind: "update" }>["body"], fallback: ZoneState): unknown {
  const c = getMigrationConfig(z);
  const config = c.success ? c.result : configOf(fallback);
  if (kind === "config") return config;
  if (kind === "no-ids") return withoutIds(config);
  if (kind === "disabled")
    return { ...withoutIds(config), rules: withoutIds(config).rules.map((r) => ({ ...r, enabled: false })) };
  if (kind === "junk") return { rules: [{ action: "execute", expression: "true", action_parameters: { id: "x" } }] };
  return undefined;
}

function apply(z: ZoneState, op: Op, fallback: ZoneState): OperationResult<unknown> {
  switch (op.kind) {
    case "check":
      return checkCompatibility(z, { phaseTwo: op.phaseTwo });
    case "config":
      return getMigrationConfig(z);
    case "status":
      return getMigrationStatus(z);
    case "resource":
      return rulesetResourceFromZone(z);
    case "update":
      return updateEntryPoint(z, { waf_migration: op.mode, phase_two: op.phaseTwo }, bodyFor(z, op.body, fallback));
    case "create-override":
      return createUriOverride(z, { id: op.id, urls: ["example.com/admin*"] });
    case "delete-override":
      return deleteUriOverride(z, op.id);
    case "settings":
      return updatePreviousWafSettings(z, op.patch);
  }
}

describe("migration state machine: properties", () => {
  it("updateEntryPoint: random call sequences keep the migration invariants", () => {
    // Counts of states reached, so the property cannot pass vacuously.
    const reached = { validation: 0, complete: 0 };
    fc.assert(
      fc.property(zoneArb, fc.array(opArb, { maxLength: 25 }), (initial, ops) => {
        let z = initial;
        let migrated = false;
        for (const op of ops) {
          const before = structuredClone(z);
          const r = apply(z, op, initial);
          // Pure: the input is never mutated, and a refusal hands it back unchanged.
          expect(z).toEqual(before);
          if (!r.success) expect(r.zone).toBe(z);
          // Only successful entry-point updates move the migration state.
          if (op.kind !== "update" || !r.success) expect(r.zone.migrationState).toBe(z.migrationState);
          z = r.zone;

          const status = getMigrationStatus(z);
          if (!status.success) throw new Error(`reached an invalid state: ${JSON.stringify(status.errors)}`);
          const s = status.result;
          // Never back to the previous version once migrated.
          if (migrated) expect(z.migrationState).toBe("complete");
          migrated ||= z.migrationState === "complete";
          if (z.migrationState === "validation" || z.migrationState === "complete") reached[z.migrationState] += 1;
          // Validation mode only on Enterprise.
          if (z.migrationState === "validation") expect(z.plan).toBe("enterprise");
          // The previous version is disabled exactly when the new one is enabled alone.
          expect(s.old_waf_status === "disabled").toBe(
            s.new_waf_status === "enabled" && z.migrationState === "complete",
          );
          if (z.migrationState === "complete") expect(z.previousWaf.enabled).toBe(false);
          // The new version never runs without a saved configuration.
          if (s.new_waf_status === "enabled") expect(z.entryPoint).not.toBeNull();
        }
      }),
      // Validation mode needs an Enterprise zone and a valid update in a row: 300 runs missed it about
      // once in eight unseeded runs, 1,000 make a vacuous pass unlikely enough.
      { numRuns: 1000 },
    );
    expect(reached.validation).toBeGreaterThan(0);
    expect(reached.complete).toBeGreaterThan(0);
  });

  it("updateEntryPoint: never throws on arbitrary query and body", () => {
    fc.assert(
      fc.property(zoneArb, fc.anything(), fc.anything(), fc.anything(), (z, mode, phase, body) => {
        const r = updateEntryPoint(z, { waf_migration: mode as never, phase_two: phase as never }, body);
        expect(typeof r.success).toBe("boolean");
        expect(r.steps.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it("checkCompatibility: never throws on arbitrary zones", () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (z, options) => {
        for (const r of [
          checkCompatibility(z as never, options as never),
          getMigrationConfig(z as never),
          getMigrationStatus(z as never),
          rulesetResourceFromZone(z as never),
        ])
          expect(r.success).toBe(false);
      }),
    );
  });
});
