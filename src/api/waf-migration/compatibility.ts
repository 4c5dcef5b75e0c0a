/**
 * Whether a zone may migrate to the new managed rules (specification 3.1, eligibility rules 1–4).
 */
import { type OperationResult, StepLog } from "./result";
import { bypassesManagedRules, type MigrationState, validateZoneState, type ZoneState } from "./zone-state";

/**
 * Options for {@link checkCompatibility}.
 *
 * @example
 * ```ts
 * const o: CheckCompatibilityOptions = { phaseTwo: true };
 * ```
 */
export interface CheckCompatibilityOptions {
  /** `phase_two=1`: the second phase, in which all zones are eligible except those with URI-based overrides. */
  phaseTwo?: boolean;
}

/**
 * The check's result. `migration_state` is absent when the zone is not compatible, as observed on the wire.
 *
 * @example
 * ```ts
 * const r: CompatibilityResult = { compatible: true, migration_state: "start" };
 * ```
 */
export interface CompatibilityResult {
  compatible: boolean;
  migration_state?: MigrationState;
}

/**
 * One reason a zone cannot migrate, with the step that found it.
 *
 * @example
 * ```ts
 * const r: IneligibilityReason = { step: "check-uri-overrides", message: "Delete the URI-based overrides first." };
 * ```
 */
export interface IneligibilityReason {
  step: string;
  message: string;
}

/**
 * Lists why a valid zone cannot migrate now (empty when it can). Shared by the check and the
 * entry-point update, so both always agree.
 *
 * @example
 * ```ts
 * findIneligibility(zone, true).length === 0; // zone may migrate in phase 2
 * ```
 */
export function findIneligibility(zone: ZoneState, phaseTwo: boolean): IneligibilityReason[] {
  const reasons: IneligibilityReason[] = [];
  if (zone.migrationState === "complete")
    reasons.push({
      step: "check-state",
      message: "The zone has already migrated to the new managed rules; the migration cannot be repeated or undone.",
    });
  if (zone.uriOverrides.length > 0)
    reasons.push({
      step: "check-uri-overrides",
      message: `The zone has ${zone.uriOverrides.length} URI-based override(s) of the previous managed rules (${zone.uriOverrides
        .map((o) => o.id)
        .join(", ")}); delete them with the delete-override operation, then migrate.`,
    });
  if (phaseTwo) return reasons;

  // Phase 1 only. Partner accounts joined the eligible set with phase 2 (the specification says phase 2
  // includes them, which implies phase 1 did not).
  if (zone.partnerAccount)
    reasons.push({
      step: "check-partner-account",
      message: "Partner accounts can migrate in phase 2 only; set phase_two=1.",
    });
  const p = zone.previousWaf;
  if (p.enabled && p.coreRuleset)
    reasons.push({
      step: "check-previous-config",
      message:
        "In phase 1 the previous managed rules must be off, or on with only the vendor managed ruleset (core rule set off); set phase_two=1.",
    });
  const bypass = zone.firewallRules.filter(bypassesManagedRules);
  if (bypass.length > 0)
    reasons.push({
      step: "check-firewall-rules",
      message: `In phase 1 no firewall rule may bypass the managed rules (found ${bypass.map((r) => r.id).join(", ")}); set phase_two=1.`,
    });
  if (zone.pageRules.length > 0)
    reasons.push({
      step: "check-page-rules",
      message: `In phase 1 no page rule may disable security or switch the managed rules off or on (found ${zone.pageRules
        .map((r) => r.id)
        .join(", ")}); set phase_two=1.`,
    });
  return reasons;
}

const PHASE_ONE_STEPS = ["check-partner-account", "check-previous-config", "check-firewall-rules", "check-page-rules"];

/**
 * `GET /zones/{zone_id}/waf_migration/check`: whether the zone may migrate. An incompatible zone
 * is a successful call with `compatible: false`; the refusing steps say why.
 *
 * @example
 * ```ts
 * const r = checkCompatibility(zone, { phaseTwo: true });
 * if (r.success && r.result.compatible) getMigrationConfig(zone);
 * ```
 */
export function checkCompatibility(
  zone: ZoneState,
  options: CheckCompatibilityOptions = {},
): OperationResult<CompatibilityResult> {
  const log = new StepLog();
  const valid = validateZoneState(zone);
  if (!valid.ok) return log.refuse("validate-zone", "The zone state is not valid.", valid.errors, zone);
  log.add("validate-zone", "unchanged", "The zone state is valid.");
  const phaseTwo = typeof options === "object" && options !== null && options.phaseTwo === true;

  const reasons = findIneligibility(valid.zone, phaseTwo);
  const steps = ["check-state", "check-uri-overrides", ...(phaseTwo ? [] : PHASE_ONE_STEPS)];
  for (const step of steps) {
    const found = reasons.filter((r) => r.step === step);
    if (found.length === 0) log.add(step, "unchanged", "Passed.");
    for (const r of found) {
      log.add(step, "refused", r.message);
      log.note({ message: r.message });
    }
  }
  if (reasons.length > 0) return log.succeed({ compatible: false }, valid.zone);
  const state = valid.zone.migrationState;
  return log.succeed({ compatible: true, migration_state: state === "default" ? "start" : state }, valid.zone);
}
