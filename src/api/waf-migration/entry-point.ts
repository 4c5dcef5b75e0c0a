/**
 * `PUT /zones/{zone_id}/rulesets/phases/http_request_firewall_managed/entrypoint` with the
 * migration query parameters: the transition table of specification 3.1 as a pure function.
 *
 *   from               trigger                 condition                         to
 *   default/start      validation (or 2)       Enterprise; compatible; in limits validation
 *   default/start      pending (or 1)          compatible; in limits             complete
 *   validation         validation              (config update)                   validation
 *   validation         pending                 configuration supplied            complete
 *   complete           pending / validation    —                                 refused: irreversible
 *   any                no waf_migration        plain rulesets update (Pro/Business before
 *                                              migration: only with every rule disabled)
 *
 * Checks run on the zone first and on the body last, so a zone over the limits gets the specification's
 * "contact support" outcome even when its converted configuration would also fail validation.
 */
import { findIneligibility } from "./compatibility";
import { checkMigrationLimits } from "./limits";
import { type OperationResult, StepLog } from "./result";
import { type EntryPointRuleset, validateRulesetBody } from "./ruleset-body";
import { invalidValue, isRecord, oneOf } from "./validate";
import { type MigrationState, validateZoneState, type ZoneState } from "./zone-state";

/** Values of the `waf_migration` query parameter, by name (`1` and `2` are aliases). */
export const WAF_MIGRATION_MODES = ["pending", "validation"] as const;
/** One of {@link WAF_MIGRATION_MODES}. */
export type WafMigrationMode = (typeof WAF_MIGRATION_MODES)[number];
/**
 * Tells whether a value is one of {@link WAF_MIGRATION_MODES} by name.
 *
 * @example
 * ```ts
 * isWafMigrationMode("validation"); // true
 * ```
 */
export const isWafMigrationMode = oneOf(WAF_MIGRATION_MODES);

/**
 * The query of the entry-point update. Values arrive as query-string text, so numbers and
 * their string forms are both accepted.
 *
 * @example
 * ```ts
 * const q: UpdateEntryPointQuery = { waf_migration: "pending", phase_two: 1 };
 * ```
 */
export interface UpdateEntryPointQuery {
  waf_migration?: string | number;
  phase_two?: string | number | boolean;
}

/**
 * What an entry-point update did.
 *
 * @example
 * ```ts
 * const u: EntryPointUpdate = { ruleset: { rules: [] }, from: "start", migration_state: "complete" };
 * ```
 */
export interface EntryPointUpdate {
  ruleset: EntryPointRuleset;
  from: MigrationState;
  migration_state: MigrationState;
}

/**
 * Reads `waf_migration`: a mode, `undefined` when absent, or `null` when the value is not one we know.
 *
 * @example
 * ```ts
 * parseWafMigrationMode("2"); // "validation"
 * ```
 */
export function parseWafMigrationMode(value: unknown): WafMigrationMode | undefined | null {
  if (value === undefined) return undefined;
  if (value === "1" || value === 1) return "pending";
  if (value === "2" || value === 2) return "validation";
  return isWafMigrationMode(value) ? value : null;
}

/**
 * Reads `phase_two`: true for `1`, false when absent or `0`, null when not understood.
 *
 * @example
 * ```ts
 * parsePhaseTwo("1"); // true
 * ```
 */
export function parsePhaseTwo(value: unknown): boolean | null {
  if (value === undefined || value === false || value === 0 || value === "0") return false;
  if (value === true || value === 1 || value === "1") return true;
  return null;
}

/**
 * The message for a `phase_two` that {@link parsePhaseTwo} does not understand; the compatibility
 * check and the entry-point update refuse it in the same words.
 *
 * @example
 * ```ts
 * invalidPhaseTwo("true"); // "'true' is not a valid value for phase_two because it must be 1 or absent"
 * ```
 */
export function invalidPhaseTwo(value: unknown): string {
  return invalidValue(value, "phase_two", "it must be 1 or absent");
}

const MIGRATION_STEPS = [
  "check-state",
  "check-plan",
  "check-compatibility",
  "check-limits",
  "validate-body",
  "save-entry-point",
  "enable-new-managed-rules",
  "disable-previous-managed-rules",
  "set-migration-state",
] as const;

function after(step: (typeof MIGRATION_STEPS)[number]): string[] {
  return MIGRATION_STEPS.slice(MIGRATION_STEPS.indexOf(step) + 1);
}

/**
 * Updates the managed-firewall entry point, migrating the zone when `waf_migration` is given.
 * Every refusal leaves the zone unchanged and says which step refused and why; the zone in the
 * result is a new object, the input is never mutated.
 *
 * @example
 * ```ts
 * const config = getMigrationConfig(zone);
 * if (config.success) {
 *   const r = updateEntryPoint(zone, { waf_migration: "pending", phase_two: 1 }, config.result);
 *   r.zone.migrationState; // "complete" on success
 * }
 * ```
 */
export function updateEntryPoint(
  zone: ZoneState,
  query: UpdateEntryPointQuery,
  body: unknown,
): OperationResult<EntryPointUpdate> {
  const log = new StepLog();
  const valid = validateZoneState(zone);
  if (!valid.ok) return log.refuse("validate-zone", "The zone state is not valid.", valid.errors, zone);
  log.add("validate-zone", "unchanged", "The zone state is valid.");
  const z = valid.zone;
  const from = z.migrationState;

  const q: Record<string, unknown> = isRecord(query) ? query : {};
  const mode = parseWafMigrationMode(q.waf_migration);
  const phaseTwo = parsePhaseTwo(q.phase_two);
  if (mode === null || phaseTwo === null) {
    const errors = [];
    if (mode === null)
      errors.push({
        message: invalidValue(q.waf_migration, "waf_migration", "it is not one of pending, 1, validation, 2"),
      });
    if (phaseTwo === null) errors.push({ message: invalidPhaseTwo(q.phase_two) });
    return log.refuse("parse-query", "The query parameters are not valid.", errors, z);
  }
  log.add("parse-query", "unchanged", mode === undefined ? "No migration requested." : `Migration mode ${mode}.`);

  if (mode === undefined) return plainUpdate(log, z, body);

  if (from === "complete")
    return log.refuse(
      "check-state",
      "The zone has already migrated to the new managed rules; the migration is irreversible. Update the entry point without waf_migration.",
      [],
      z,
      after("check-state"),
    );
  log.add("check-state", "unchanged", `The zone is in state ${from}.`);

  if (mode === "validation" && z.plan !== "enterprise")
    return log.refuse(
      "check-plan",
      `Validation mode is available to Enterprise zones only; ${z.plan} zones migrate straight to the new managed rules with waf_migration=pending.`,
      [],
      z,
      after("check-plan"),
    );
  log.add("check-plan", "unchanged", `Mode ${mode} is available to ${z.plan} zones.`);

  const reasons = findIneligibility(z, phaseTwo);
  if (reasons.length > 0)
    return log.refuse(
      "check-compatibility",
      "The zone is not eligible to migrate.",
      reasons.map((r) => ({ message: r.message })),
      z,
      after("check-compatibility"),
    );
  log.add("check-compatibility", "unchanged", "The zone is eligible.");

  const limits = checkMigrationLimits(z);
  if (limits.length > 0)
    return log.refuse("check-limits", "The migration failed; contact support.", limits, z, after("check-limits"));
  log.add("check-limits", "unchanged", "The zone is within the migration limits.");

  // Migration mode accepts the empty id, version and ref that the config operation returns.
  const v = validateRulesetBody(body, { allowEmptyIds: true });
  if (!v.ok)
    return log.refuse("validate-body", "The ruleset configuration is not valid.", v.errors, z, after("validate-body"));
  if (v.ruleset.rules.length === 0)
    // Specification 3.1: the previous version is disabled once the new one is enabled from the
    // supplied configuration. With no rules nothing new is enabled, the previous managed rules and
    // every exception would be gone, and the migration cannot be undone: refuse it as malformed.
    return log.refuse(
      "validate-body",
      "The migration configuration has no rules.",
      [
        {
          message: invalidValue(
            [],
            "rules",
            "a migration deploys the rules it is given and then disables the previous managed rules, and it cannot be undone: with no rules the zone would be left with no managed rules and no exceptions. Send the configuration that GET /zones/{zone_id}/waf_migration/config?phase_two=1 returns",
          ),
          source: { pointer: "/rules" },
        },
      ],
      z,
      after("validate-body"),
    );
  log.add("validate-body", "unchanged", `The configuration has ${v.ruleset.rules.length} rule(s).`);

  const to: MigrationState = mode === "validation" ? "validation" : "complete";
  const next: ZoneState = {
    ...z,
    entryPoint: v.ruleset,
    migrationState: to,
    // The previous version is switched off as the new configuration is saved and enabled alone.
    previousWaf: to === "complete" ? { ...z.previousWaf, enabled: false } : z.previousWaf,
  };
  log.add("save-entry-point", "changed", "The entry-point ruleset is saved.");
  log.add(
    "enable-new-managed-rules",
    from === "validation" ? "unchanged" : "changed",
    from === "validation" ? "The new managed rules already run." : "The new managed rules are enabled.",
  );
  if (to === "complete")
    log.add(
      "disable-previous-managed-rules",
      "changed",
      "The previous managed rules are disabled; their APIs stop working for this zone.",
    );
  else
    log.add(
      "disable-previous-managed-rules",
      "unchanged",
      "The previous managed rules keep running alongside (validation mode).",
    );
  log.add(
    "set-migration-state",
    from === to ? "unchanged" : "changed",
    from === to ? `The zone stays in ${to}.` : `The zone moves from ${from} to ${to}.`,
  );
  return log.succeed({ ruleset: v.ruleset, from, migration_state: to }, next);
}

function plainUpdate(log: StepLog, z: ZoneState, body: unknown): OperationResult<EntryPointUpdate> {
  // Outside a migration call the ruleset is an ordinary one: ids must be real or absent.
  const v = validateRulesetBody(body);
  if (!v.ok)
    return log.refuse("validate-body", "The ruleset configuration is not valid.", v.errors, z, [
      "check-plan",
      "save-entry-point",
    ]);
  log.add("validate-body", "unchanged", `The configuration has ${v.ruleset.rules.length} rule(s).`);
  const enabled = v.ruleset.rules.some((r) => r.enabled);
  if (z.migrationState !== "complete" && z.plan !== "enterprise" && enabled)
    return log.refuse(
      "check-plan",
      `Before migrating, ${z.plan} zones may save this entry point only with every rule disabled; migrate with waf_migration=pending and phase_two=1.`,
      [],
      z,
      ["save-entry-point"],
    );
  log.add("check-plan", "unchanged", "The update is allowed for this zone.");
  log.add("save-entry-point", "changed", "The entry-point ruleset is saved.");
  return log.succeed(
    { ruleset: v.ruleset, from: z.migrationState, migration_state: z.migrationState },
    { ...z, entryPoint: v.ruleset },
  );
}
