/**
 * URI-based overrides of the previous managed rules. They can be created only through the API
 * and block the migration until deleted (specification 3.1 rule 1), so the delete operation is part of
 * the migration procedure. Like every previous managed-rules API, both refuse after migration.
 */
import { enterPreviousApi } from "./previous-settings";
import { type OperationResult, StepLog } from "./result";
import { invalidValue, isRecord } from "./validate";
import type { UriOverride, ZoneState } from "./zone-state";

/**
 * Adds a URI-based override (`POST /zones/{zone_id}/firewall/waf/overrides`).
 *
 * @example
 * ```ts
 * const r = createUriOverride(zone, { id: "de677e5818985db1285d0e80225f06e5", urls: ["example.com/admin*"] });
 * r.zone.uriOverrides.length; // one more on success
 * ```
 */
export function createUriOverride(zone: ZoneState, override: UriOverride): OperationResult<UriOverride> {
  const log = new StepLog();
  const entered = enterPreviousApi<UriOverride>(log, zone, ["validate-override", "save-override"]);
  if ("refused" in entered) return entered.refused;
  const z = entered.zone;
  const o: unknown = override;
  if (
    !isRecord(o) ||
    typeof o.id !== "string" ||
    o.id === "" ||
    !Array.isArray(o.urls) ||
    o.urls.length === 0 ||
    !o.urls.every((u) => typeof u === "string" && u !== "")
  )
    return log.refuse(
      "validate-override",
      "The override is not valid.",
      [{ message: invalidValue(o, "override", "it needs a non-empty id and at least one URL") }],
      z,
      ["save-override"],
    );
  if (z.uriOverrides.some((x) => x.id === o.id))
    return log.refuse("validate-override", `An override with id ${o.id} already exists.`, [], z, ["save-override"]);
  log.add("validate-override", "unchanged", "The override is valid.");
  const created: UriOverride = { id: o.id, urls: [...(o.urls as string[])] };
  log.add("save-override", "changed", `URI-based override ${created.id} is created.`);
  return log.succeed(created, { ...z, uriOverrides: [...z.uriOverrides, created] });
}

/**
 * Deletes a URI-based override (`DELETE /zones/{zone_id}/firewall/waf/overrides/{id}`), the step
 * that makes a zone with such overrides eligible.
 *
 * @example
 * ```ts
 * const r = deleteUriOverride(zone, "de677e5818985db1285d0e80225f06e5");
 * if (r.success) checkCompatibility(r.zone, { phaseTwo: true });
 * ```
 */
export function deleteUriOverride(zone: ZoneState, overrideId: string): OperationResult<{ id: string }> {
  const log = new StepLog();
  const entered = enterPreviousApi<{ id: string }>(log, zone, ["find-override", "delete-override"]);
  if ("refused" in entered) return entered.refused;
  const z = entered.zone;
  if (typeof overrideId !== "string" || !z.uriOverrides.some((o) => o.id === overrideId))
    return log.refuse(
      "find-override",
      // The API here has no listing of overrides: the compatibility check is what names them.
      `No URI-based override ${String(overrideId)} exists on this zone; the compatibility check (GET /zones/{zone_id}/waf_migration/check?phase_two=1) names the zone's overrides.`,
      [],
      z,
      ["delete-override"],
    );
  log.add("find-override", "unchanged", `Found override ${overrideId}.`);
  log.add("delete-override", "changed", `URI-based override ${overrideId} is deleted.`);
  return log.succeed({ id: overrideId }, { ...z, uriOverrides: z.uriOverrides.filter((o) => o.id !== overrideId) });
}
