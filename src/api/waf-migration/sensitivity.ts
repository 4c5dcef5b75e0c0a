/**
 * Sensitivity of the previous core rule set → paranoia level and score threshold of the new
 * OWASP ruleset (specification 3.2). The specification's table is authoritative: its "Final remarks" saying the
 * migration always sets PL2 contradict the Medium and Low rows, so the rows win.
 */
import type { WafActionMode, WafSensitivity } from "./zone-state";

/** Score-threshold levels of the new OWASP ruleset. */
export const SCORE_THRESHOLD_LEVELS = ["low", "medium", "high"] as const;
/** One of {@link SCORE_THRESHOLD_LEVELS}. */
export type ScoreThresholdLevel = (typeof SCORE_THRESHOLD_LEVELS)[number];

/**
 * Anomaly score at or above which a request matches, per level: Low 60, Medium 40 (the
 * ruleset's default), High 25. A higher level means a lower number, so more requests match.
 *
 * @example
 * ```ts
 * SCORE_THRESHOLDS.high; // 25
 * ```
 */
export const SCORE_THRESHOLDS: Readonly<Record<ScoreThresholdLevel, number>> = { low: 60, medium: 40, high: 25 };

/** Paranoia levels of the new OWASP ruleset. */
export const PARANOIA_LEVELS = [1, 2, 3, 4] as const;
/** One of {@link PARANOIA_LEVELS}. */
export type ParanoiaLevel = (typeof PARANOIA_LEVELS)[number];

/**
 * What one previous sensitivity becomes.
 *
 * @example
 * ```ts
 * const m: SensitivityMapping = { paranoiaLevel: 2, thresholdLevel: "medium", scoreThreshold: 40 };
 * ```
 */
export interface SensitivityMapping {
  paranoiaLevel: ParanoiaLevel;
  thresholdLevel: ScoreThresholdLevel;
  scoreThreshold: number;
}

/**
 * The specification's 3.2 table.
 *
 * @example
 * ```ts
 * SENSITIVITY_MAPPING.medium; // { paranoiaLevel: 1, thresholdLevel: "high", scoreThreshold: 25 }
 * ```
 */
export const SENSITIVITY_MAPPING: Readonly<Record<WafSensitivity, SensitivityMapping>> = {
  high: { paranoiaLevel: 2, thresholdLevel: "medium", scoreThreshold: SCORE_THRESHOLDS.medium },
  medium: { paranoiaLevel: 1, thresholdLevel: "high", scoreThreshold: SCORE_THRESHOLDS.high },
  low: { paranoiaLevel: 1, thresholdLevel: "medium", scoreThreshold: SCORE_THRESHOLDS.medium },
  default: { paranoiaLevel: 2, thresholdLevel: "medium", scoreThreshold: SCORE_THRESHOLDS.medium },
};

/**
 * Maps a previous sensitivity to paranoia level and score threshold.
 *
 * @example
 * ```ts
 * mapSensitivity("low").scoreThreshold; // 40
 * ```
 */
export function mapSensitivity(sensitivity: WafSensitivity): SensitivityMapping {
  return SENSITIVITY_MAPPING[sensitivity];
}

/**
 * Categories to disable so that only rules up to a paranoia level run: rules are tagged
 * `paranoia-level-1` … `-4`, and the ruleset has no single PL setting.
 *
 * @example
 * ```ts
 * paranoiaCategoriesToDisable(2); // ["paranoia-level-3", "paranoia-level-4"]
 * ```
 */
export function paranoiaCategoriesToDisable(level: ParanoiaLevel): string[] {
  return PARANOIA_LEVELS.filter((l) => l > level).map((l) => `paranoia-level-${l}`);
}

/**
 * Maps the previous core-rule-set action to the new anomaly rule's action: one to one, except
 * Simulate, which becomes Log.
 *
 * @example
 * ```ts
 * mapActionMode("simulate"); // "log"
 * ```
 */
export function mapActionMode(mode: WafActionMode): "log" | "block" | "challenge" {
  return mode === "simulate" ? "log" : mode;
}
