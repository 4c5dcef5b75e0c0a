/**
 * `GET /zones/{zone_id}/waf_migration/status` (specification 2.8). Field names follow what third-party
 * clients observe on the wire, since the docs do not name them.
 */
import { type OperationResult, StepLog } from "./result";
import { oneOf } from "./validate";
import { type MigrationState, validateZoneState, type ZoneState } from "./zone-state";

/** Values of `old_waf_status` and `new_waf_status`. */
export const WAF_STATUSES = ["enabled", "disabled"] as const;
/** One of {@link WAF_STATUSES}. */
export type WafStatus = (typeof WAF_STATUSES)[number];
/**
 * Tells whether a value is one of {@link WAF_STATUSES}.
 *
 * @example
 * ```ts
 * isWafStatus("enabled"); // true
 * ```
 */
export const isWafStatus = oneOf(WAF_STATUSES);

/**
 * The status of the two versions. They describe which version is in force for the zone, not
 * the previous version's own on/off switch (that is `previousWaf.enabled`): the previous version
 * is in force until the migration completes, the new one from validation mode on.
 *
 * @example
 * ```ts
 * const s: MigrationStatus = { migration_state: "validation", old_waf_status: "enabled", new_waf_status: "enabled", source: "zone" };
 * ```
 */
export interface MigrationStatus {
  migration_state: MigrationState;
  old_waf_status: WafStatus;
  new_waf_status: WafStatus;
  /** `defaults` until the zone has a migration record or an entry point, then `zone`. */
  source: "defaults" | "zone";
}

/**
 * Reports whether the previous and the new managed rules are in force, and the migration state.
 *
 * @example
 * ```ts
 * const r = getMigrationStatus(zone);
 * if (r.success) r.result.old_waf_status; // "enabled" before migrating
 * ```
 */
export function getMigrationStatus(zone: ZoneState): OperationResult<MigrationStatus> {
  const log = new StepLog();
  const valid = validateZoneState(zone);
  if (!valid.ok) return log.refuse("validate-zone", "The zone state is not valid.", valid.errors, zone);
  log.add("validate-zone", "unchanged", "The zone state is valid.");
  const z = valid.zone;
  const state = z.migrationState;
  return log.succeed(
    {
      migration_state: state,
      old_waf_status: state === "complete" ? "disabled" : "enabled",
      new_waf_status: state === "validation" || state === "complete" ? "enabled" : "disabled",
      source: state === "default" && z.entryPoint === null ? "defaults" : "zone",
    },
    z,
  );
}
