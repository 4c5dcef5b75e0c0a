/**
 * The infrastructure-as-code ruleset resource that replaces the previous packages, groups and
 * rules resources once a zone has migrated (specification 2.7, 9.3).
 */
import { type ApiMessage, type OperationResult, StepLog } from "./result";
import { MANAGED_PHASE, type RulesetRule, validateRulesetBody } from "./ruleset-body";
import { invalidValue, isHex32, isRecord } from "./validate";
import { validateZoneState, type ZoneState } from "./zone-state";

/**
 * The ruleset resource for a zone's managed-firewall entry point.
 *
 * @example
 * ```ts
 * const r: RulesetResource = { kind: "zone", name: "default", phase: "http_request_firewall_managed",
 *   zone_id: "023e105f4ecef8ad9ca31a8372d0c353", rules: [] };
 * ```
 */
export interface RulesetResource {
  kind: "zone";
  name: string;
  description?: string;
  phase: typeof MANAGED_PHASE;
  zone_id: string;
  rules: RulesetRule[];
}

/**
 * The result of {@link validateRulesetResource}.
 *
 * @example
 * ```ts
 * const v: RulesetResourceValidation = validateRulesetResource(input);
 * ```
 */
export type RulesetResourceValidation = { ok: true; resource: RulesetResource } | { ok: false; errors: ApiMessage[] };

/**
 * Validates a ruleset resource: `kind` zone, the managed-firewall phase, a 32-hex `zone_id`, a
 * name, and rules valid as an ordinary (non-migration) ruleset body. Never throws.
 *
 * @example
 * ```ts
 * validateRulesetResource({ kind: "zone", name: "default", phase: "http_request_firewall_managed",
 *   zone_id: "023e105f4ecef8ad9ca31a8372d0c353", rules: [] }).ok; // true
 * ```
 */
export function validateRulesetResource(input: unknown): RulesetResourceValidation {
  if (!isRecord(input)) return { ok: false, errors: [{ message: "The ruleset resource must be an object." }] };
  const errors: ApiMessage[] = [];
  if (input.kind !== "zone")
    errors.push({
      message: invalidValue(input.kind ?? "", "kind", "a zone entry point has kind 'zone'"),
      source: { pointer: "/kind" },
    });
  if (input.phase !== MANAGED_PHASE)
    errors.push({
      message: invalidValue(input.phase ?? "", "phase", `this resource is for ${MANAGED_PHASE}`),
      source: { pointer: "/phase" },
    });
  if (!isHex32(input.zone_id))
    errors.push({
      message: invalidValue(input.zone_id ?? "", "zone_id", "it must be 32 hex characters"),
      source: { pointer: "/zone_id" },
    });
  if (!(typeof input.name === "string" && input.name.length > 0))
    errors.push({
      message: invalidValue(input.name ?? "", "name", "it cannot be blank"),
      source: { pointer: "/name" },
    });
  const body = validateRulesetBody({ rules: input.rules, description: input.description });
  if (!body.ok) errors.push(...body.errors);
  if (errors.length > 0 || !body.ok) return { ok: false, errors };
  const resource: RulesetResource = {
    kind: "zone",
    name: input.name as string,
    phase: MANAGED_PHASE,
    zone_id: input.zone_id as string,
    rules: body.ruleset.rules,
  };
  if (body.ruleset.description !== undefined) resource.description = body.ruleset.description;
  return { ok: true, resource };
}

/**
 * Validates a set of resources together: each on its own, and at most one per zone, since a
 * zone has a single entry point per phase.
 *
 * @example
 * ```ts
 * validateRulesetResources([a, b]); // refuses two resources for the same zone
 * ```
 */
export function validateRulesetResources(
  inputs: unknown,
): { ok: true; resources: RulesetResource[] } | { ok: false; errors: ApiMessage[] } {
  if (!Array.isArray(inputs)) return { ok: false, errors: [{ message: "The ruleset resources must be an array." }] };
  const errors: ApiMessage[] = [];
  const resources: RulesetResource[] = [];
  const zones = new Set<string>();
  for (const input of inputs) {
    const v = validateRulesetResource(input);
    if (!v.ok) {
      errors.push(...v.errors);
      continue;
    }
    if (zones.has(v.resource.zone_id))
      errors.push({
        message: `'zone' is not a valid value for kind because exceeded maximum number of zone rulesets for phase ${MANAGED_PHASE}`,
      });
    zones.add(v.resource.zone_id);
    resources.push(v.resource);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, resources };
}

/**
 * Produces the ruleset resource from a migrated zone's entry point. Read-only ids (`id`,
 * `version`) are dropped because the resource declares configuration, not server state.
 *
 * @example
 * ```ts
 * const r = rulesetResourceFromZone(migratedZone);
 * if (r.success) r.result.kind; // "zone"
 * ```
 */
export function rulesetResourceFromZone(zone: ZoneState): OperationResult<RulesetResource> {
  const log = new StepLog();
  const valid = validateZoneState(zone);
  if (!valid.ok) return log.refuse("validate-zone", "The zone state is not valid.", valid.errors, zone);
  log.add("validate-zone", "unchanged", "The zone state is valid.");
  const z = valid.zone;
  if (z.migrationState !== "complete" || z.entryPoint === null)
    return log.refuse(
      "check-state",
      "The ruleset resource manages the zone's managed rules only after migration; finish the migration with waf_migration=pending first.",
      [],
      z,
      ["build-resource", "validate-resource"],
    );
  log.add("check-state", "unchanged", "The zone has migrated.");
  const rules = z.entryPoint.rules.map(({ id: _id, version: _version, ...rest }) => rest);
  const candidate = {
    kind: "zone",
    name: z.entryPoint.name ?? "default",
    phase: MANAGED_PHASE,
    zone_id: z.id,
    rules,
    ...(z.entryPoint.description !== undefined ? { description: z.entryPoint.description } : {}),
  };
  log.add("build-resource", "unchanged", `Built a resource with ${rules.length} rule(s).`);
  const v = validateRulesetResource(candidate);
  if (!v.ok)
    return log.refuse("validate-resource", "The entry point cannot be expressed as a valid resource.", v.errors, z);
  log.add("validate-resource", "unchanged", "The resource is valid.");
  return log.succeed(v.resource, z);
}
