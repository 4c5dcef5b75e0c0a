/**
 * Rulesets and the managed-rules migration as service operations: the entry-point ruleset of any
 * phase (GET and PUT, where a PUT on the managed phase with `waf_migration` migrates the zone), the
 * migration's check, config and status, and deleting a URI-based override of the previous managed
 * rules. The migration functions report per-step outcomes; here they become the wire response, and
 * their internal `zone` and `steps` never reach it.
 */
import type { ApiResponse, ResponseInfo } from "../envelope";
import { ERROR_CODES, fail, invalidRequest, ok } from "../envelope";
import { booleanParam, type ValidationIssue } from "../validation";
import { checkCompatibility } from "../waf-migration/compatibility";
import { invalidPhaseTwo, parsePhaseTwo, updateEntryPoint } from "../waf-migration/entry-point";
import { getMigrationConfig } from "../waf-migration/migration-config";
import { deleteUriOverride } from "../waf-migration/overrides";
import { type ApiMessage, MIGRATION_ERROR_CODES, type OperationResult } from "../waf-migration/result";
import { isRulesetPhase, MANAGED_PHASE, type RulesetPhase, validateRulesetBody } from "../waf-migration/ruleset-body";
import { getMigrationStatus } from "../waf-migration/status";
import type { ApiRequest, Operation, Outcome } from "./operation";
import { reading } from "./operation";
import { migrationView, withMigrationState, type ZoneRecord } from "./records";
import { saveRuleset } from "./rulesets";

/**
 * The HTTP status of a refusal, by the step that refused: malformed input is 400, a feature the
 * zone's plan does not have is 403, and a request the zone's state does not allow (already
 * migrated, not eligible, over the migration limits) is 409.
 */
const STATUS_BY_STEP: Readonly<Record<string, number>> = {
  "parse-query": 400,
  "validate-body": 400,
  "validate-override": 400,
  "validate-patch": 400,
  "validate-resource": 400,
  "check-plan": 403,
  "check-state": 409,
  "check-compatibility": 409,
  "check-limits": 409,
  "validate-zone": 500,
};

function info(message: ApiMessage): ResponseInfo {
  const base = { code: message.code ?? ERROR_CODES.invalidRequest, message: message.message };
  return message.source === undefined ? base : { ...base, source: message.source };
}

/** Turns a migration function's result into the wire response (no `zone`, no `steps`). */
function toResponse<T, W>(result: OperationResult<T>, wire: (value: T) => W): ApiResponse<W> {
  const messages = result.messages.map(info);
  if (result.success) return ok(wire(result.result), { messages });
  const refused = result.steps.find((s) => s.status === "refused");
  const status = STATUS_BY_STEP[refused?.step ?? ""] ?? 400;
  const [first, ...rest] = result.errors.map(info);
  return fail(status, first ?? { code: ERROR_CODES.invalidRequest, message: "The request was refused." }, ...rest);
}

/** A refusal of the migration query (10401), as the entry-point update words its own. */
function invalidQuery(message: string): ApiResponse<never> {
  return fail(400, { code: MIGRATION_ERROR_CODES["parse-query"] ?? ERROR_CODES.invalidRequest, message });
}

/**
 * Reads the migration's query parameters (`waf_migration`, `phase_two`), each of which may be given
 * at most once: a repeated one (`waf_migration=validation&waf_migration=pending`) is ambiguous, and
 * reading only its first value would run an irreversible migration the client may not have meant,
 * so it is refused (10401) as the listings refuse a repeated parameter.
 */
function migrationQuery(
  query: URLSearchParams,
  names: readonly ("waf_migration" | "phase_two")[],
): { ok: true; value: { waf_migration?: string; phase_two?: string } } | { ok: false; response: ApiResponse<never> } {
  const value: { waf_migration?: string; phase_two?: string } = {};
  for (const name of names) {
    const all = query.getAll(name);
    if (all.length > 1) return { ok: false, response: invalidQuery(`${name} must be given at most once.`) };
    if (all[0] !== undefined) value[name] = all[0];
  }
  return { ok: true, value };
}

/**
 * Reads `phase_two` as the entry-point update reads it (`1`; absent or `0` for phase 1; anything
 * else, or a repeated one, refused with 10401), so that the check and the config never answer for
 * a phase the update would refuse.
 */
function readPhaseTwo(
  query: URLSearchParams,
): { ok: true; value: boolean } | { ok: false; response: ApiResponse<never> } {
  const q = migrationQuery(query, ["phase_two"]);
  if (!q.ok) return q;
  const phaseTwo = parsePhaseTwo(q.value.phase_two);
  if (phaseTwo === null) return { ok: false, response: invalidQuery(invalidPhaseTwo(q.value.phase_two)) };
  return { ok: true, value: phaseTwo };
}

/**
 * `GET /zones/{zone_id}/waf_migration/check?phase_two=1`. `phase_two` is read as the entry-point
 * update reads it ({@link readPhaseTwo}).
 */
export const checkMigration: Operation<ZoneRecord> = reading((record, request) => {
  const phaseTwo = readPhaseTwo(request.query);
  if (!phaseTwo.ok) return phaseTwo.response;
  return toResponse(checkCompatibility(migrationView(record), { phaseTwo: phaseTwo.value }), (r) => r);
});

/**
 * `GET /zones/{zone_id}/waf_migration/config?phase_two=1`: the new configuration equivalent to the
 * old one. The configuration is the same in both phases; `phase_two` is checked as the check and
 * the update check it.
 */
export const getMigrationConfigOperation: Operation<ZoneRecord> = reading((record, request) => {
  const phaseTwo = readPhaseTwo(request.query);
  if (!phaseTwo.ok) return phaseTwo.response;
  return toResponse(getMigrationConfig(migrationView(record)), (r) => r);
});

/** `GET /zones/{zone_id}/waf_migration/status`. */
export const getMigrationStatusOperation: Operation<ZoneRecord> = reading((record) =>
  toResponse(getMigrationStatus(migrationView(record)), (r) => r),
);

/** `DELETE /zones/{zone_id}/firewall/waf/overrides/{override_id}`: removes a URI-based override. */
export const deleteUriOverrideOperation: Operation<ZoneRecord> = (record, request) => {
  const result = deleteUriOverride(migrationView(record), request.params.override_id ?? "");
  const response = toResponse(result, (r) => r);
  return { state: result.success ? withMigrationState(record, result.zone) : record, response };
};

function unknownPhase(phase: string): ApiResponse<never> {
  return fail(404, {
    code: ERROR_CODES.unknownRulesetPhase,
    message: `${phase} is not a ruleset phase; see the phases of the rulesets API.`,
  });
}

/** `GET /zones/{zone_id}/rulesets/phases/{ruleset_phase}/entrypoint`. */
export const getEntryPoint: Operation<ZoneRecord> = reading((record, request) => {
  const phase = request.params.ruleset_phase ?? "";
  if (!isRulesetPhase(phase)) return unknownPhase(phase);
  const ruleset = record.rulesets[phase];
  if (ruleset === undefined) {
    return fail(404, {
      code: ERROR_CODES.rulesetNotFound,
      message: `The zone has no entry-point ruleset in the ${phase} phase yet; create it with PUT.`,
    });
  }
  return ok(ruleset);
});

/**
 * `PUT /zones/{zone_id}/rulesets/phases/{ruleset_phase}/entrypoint`. On the managed phase the
 * migration rules apply (`waf_migration=pending|1|validation|2` with `phase_two=1` migrates; without
 * it, Pro and Business zones may only save disabled rules before migrating). The saved ruleset keeps
 * its id, and its version grows on every update. With `dry_run=true` (the SDK's `dry_run`) the
 * request is checked as it would be run, and a success changes nothing: no ruleset saved, no
 * migration, `result: null`; a refusal is the one the update would get.
 */
export const updateEntryPointOperation: Operation<ZoneRecord> = (record, request) => {
  const phase = request.params.ruleset_phase ?? "";
  if (!isRulesetPhase(phase)) return { state: record, response: unknownPhase(phase) };
  const issues: ValidationIssue[] = [];
  const dryRun = booleanParam(request.query, "dry_run", issues) === true;
  if (issues.length > 0) return { state: record, response: invalidRequest(issues) };
  const outcome = runEntryPointUpdate(record, request, phase);
  if (!dryRun || outcome.response.status !== 200) return outcome;
  // Validated as the update would be; nothing is kept (an irreversible migration least of all).
  return { state: record, response: ok(null, { messages: outcome.response.body.messages }) };
};

function runEntryPointUpdate(record: ZoneRecord, request: ApiRequest, phase: RulesetPhase): Outcome<ZoneRecord> {
  const context = { nowMs: request.nowMs, newId: request.newId };
  if (phase !== MANAGED_PHASE) {
    const v = validateRulesetBody(request.body, { phase });
    if (!v.ok) {
      const [first, ...rest] = v.errors.map(info);
      return {
        state: record,
        response: fail(400, first ?? { code: ERROR_CODES.invalidRequest, message: "Invalid ruleset." }, ...rest),
      };
    }
    const ruleset = saveRuleset(record.rulesets[phase], v.ruleset, phase, context);
    return { state: { ...record, rulesets: { ...record.rulesets, [phase]: ruleset } }, response: ok(ruleset) };
  }
  const query = migrationQuery(request.query, ["waf_migration", "phase_two"]);
  if (!query.ok) return { state: record, response: query.response };
  const result = updateEntryPoint(migrationView(record), query.value, request.body);
  if (!result.success) return { state: record, response: toResponse(result, (r) => r) };
  const ruleset = saveRuleset(record.rulesets[phase], result.result.ruleset, phase, context);
  const next = withMigrationState(record, result.zone);
  return {
    state: { ...next, rulesets: { ...next.rulesets, [phase]: ruleset } },
    response: ok(ruleset, { messages: result.messages.map(info) }),
  };
}
