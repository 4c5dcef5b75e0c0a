/**
 * The previous managed-rules settings API. It works until the zone migrates, then refuses
 * (specification 4.2 rule 5, 9.3): afterwards only the rulesets API configures managed rules.
 */
import { type ApiMessage, type OperationResult, StepLog } from "./result";
import { invalidValue, isRecord } from "./validate";
import {
  isWafActionMode,
  isWafSensitivity,
  type PreviousWafConfig,
  validateZoneState,
  type ZoneState,
} from "./zone-state";

/**
 * The message every previous managed-rules API returns once the zone has migrated.
 *
 * @example
 * ```ts
 * PREVIOUS_API_GONE_MESSAGE.startsWith("The previous managed rules APIs"); // true
 * ```
 */
export const PREVIOUS_API_GONE_MESSAGE =
  "The previous managed rules APIs no longer work for this zone because it has migrated to the new managed rules; use the rulesets API instead.";

/**
 * Settings that the previous API can change.
 *
 * @example
 * ```ts
 * const patch: PreviousWafSettingsPatch = { sensitivity: "low", actionMode: "simulate" };
 * ```
 */
export type PreviousWafSettingsPatch = Partial<
  Pick<PreviousWafConfig, "enabled" | "managedRuleset" | "coreRuleset" | "sensitivity" | "actionMode">
>;

/**
 * Changes the previous managed-rules settings of a zone that has not migrated yet.
 *
 * @example
 * ```ts
 * const r = updatePreviousWafSettings(zone, { coreRuleset: true, sensitivity: "medium" });
 * r.zone.previousWaf.sensitivity; // "medium" on success
 * ```
 */
export function updatePreviousWafSettings(
  zone: ZoneState,
  patch: PreviousWafSettingsPatch,
): OperationResult<PreviousWafConfig> {
  const log = new StepLog();
  const entered = enterPreviousApi<PreviousWafConfig>(log, zone, ["validate-patch", "save-settings"]);
  if ("refused" in entered) return entered.refused;
  const z = entered.zone;

  const p: Record<string, unknown> = isRecord(patch) ? patch : {};
  const errors: ApiMessage[] = [];
  const next: PreviousWafConfig = { ...z.previousWaf };
  for (const key of ["enabled", "managedRuleset", "coreRuleset"] as const) {
    const value = p[key];
    if (value === undefined) continue;
    if (typeof value === "boolean") next[key] = value;
    else errors.push({ message: invalidValue(value, key, "it must be a boolean") });
  }
  if (p.sensitivity !== undefined) {
    if (isWafSensitivity(p.sensitivity)) next.sensitivity = p.sensitivity;
    else
      errors.push({
        message: invalidValue(p.sensitivity, "sensitivity", "it is not one of high, medium, low, default"),
      });
  }
  if (p.actionMode !== undefined) {
    if (isWafActionMode(p.actionMode)) next.actionMode = p.actionMode;
    else
      errors.push({ message: invalidValue(p.actionMode, "actionMode", "it is not one of simulate, block, challenge") });
  }
  if (!isRecord(patch)) errors.push({ message: "The settings patch must be an object." });
  if (errors.length > 0)
    return log.refuse("validate-patch", "The settings are not valid.", errors, z, ["save-settings"]);
  log.add("validate-patch", "unchanged", "The settings are valid.");
  log.add("save-settings", "changed", "The previous managed rules settings are saved.");
  return log.succeed(next, { ...z, previousWaf: next });
}

/**
 * The first steps of every call to the previous managed-rules API: the zone state must be valid,
 * and the zone not migrated (that API stops working then). Returns the validated zone, or the
 * refusal to return, with `laterSteps` recorded as not run.
 *
 * @example
 * ```ts
 * const log = new StepLog();
 * const entered = enterPreviousApi<UriOverride>(log, zone, ["validate-override", "save-override"]);
 * if ("refused" in entered) return entered.refused;
 * ```
 */
export function enterPreviousApi<T>(
  log: StepLog,
  zone: ZoneState,
  laterSteps: readonly string[],
): { zone: ZoneState } | { refused: OperationResult<T> } {
  const valid = validateZoneState(zone);
  if (!valid.ok) return { refused: log.refuse("validate-zone", "The zone state is not valid.", valid.errors, zone) };
  log.add("validate-zone", "unchanged", "The zone state is valid.");
  const z = valid.zone;
  if (z.migrationState === "complete") {
    return { refused: log.refuse("check-state", PREVIOUS_API_GONE_MESSAGE, [], z, laterSteps) };
  }
  log.add("check-state", "unchanged", "The previous managed rules API is available.");
  return { zone: z };
}
