import { describe, expect, it } from "vitest";
import {
  getMigrationConfig,
  MANAGED_RULESET_IDS,
  mapActionMode,
  mapSensitivity,
  OWASP_ANOMALY_RULE_ID,
  paranoiaCategoriesToDisable,
  SCORE_THRESHOLDS,
  WAF_ACTION_MODES,
  WAF_SENSITIVITIES,
  type WafSensitivity,
} from "../../../src/api/waf-migration/index";
import { zone } from "./fixtures";

// Seed 3.2, row by row: old sensitivity → PL and score threshold (level and number).
const SEED_TABLE: [WafSensitivity, number, "low" | "medium" | "high", number][] = [
  ["high", 2, "medium", 40],
  ["medium", 1, "high", 25],
  ["low", 1, "medium", 40],
  ["default", 2, "medium", 40],
];

describe("sensitivity", () => {
  it("SCORE_THRESHOLDS: Low 60, Medium 40, High 25", () => {
    expect(SCORE_THRESHOLDS).toEqual({ low: 60, medium: 40, high: 25 });
  });

  it("mapSensitivity: covers every previous sensitivity", () => {
    expect(SEED_TABLE.map((r) => r[0]).sort()).toEqual([...WAF_SENSITIVITIES].sort());
  });

  it.each(SEED_TABLE)("mapSensitivity: %s → PL%i, %s threshold (%i)", (sensitivity, pl, level, score) => {
    expect(mapSensitivity(sensitivity)).toEqual({ paranoiaLevel: pl, thresholdLevel: level, scoreThreshold: score });
  });

  it.each(SEED_TABLE)(
    "getMigrationConfig: %s sensitivity yields PL%i and score threshold %s/%i",
    (sensitivity, pl, _l, score) => {
      const z = zone("business");
      const r = getMigrationConfig(
        zone("business", { previousWaf: { ...z.previousWaf, coreRuleset: true, sensitivity } }),
      );
      if (!r.success) throw new Error("config failed");
      const owasp = r.result.rules.find(
        (x) => (x.action_parameters as { id?: string }).id === MANAGED_RULESET_IDS.owasp,
      );
      expect(owasp?.enabled).toBe(true);
      expect(owasp?.action_parameters).toEqual({
        id: MANAGED_RULESET_IDS.owasp,
        overrides: {
          categories: paranoiaCategoriesToDisable(pl === 1 ? 1 : 2).map((category) => ({ category, enabled: false })),
          rules: [{ id: OWASP_ANOMALY_RULE_ID, score_threshold: score, action: "challenge" }],
        },
      });
    },
  );

  it("paranoiaCategoriesToDisable: disables the levels above the chosen one", () => {
    expect(paranoiaCategoriesToDisable(1)).toEqual(["paranoia-level-2", "paranoia-level-3", "paranoia-level-4"]);
    expect(paranoiaCategoriesToDisable(2)).toEqual(["paranoia-level-3", "paranoia-level-4"]);
    expect(paranoiaCategoriesToDisable(4)).toEqual([]);
  });

  it("mapActionMode: one to one except simulate, which becomes log", () => {
    expect(WAF_ACTION_MODES.map(mapActionMode)).toEqual(["log", "block", "challenge"]);
  });
});
