// Shared zone builders for the migration tests.
import {
  createZoneState,
  type FirewallRuleState,
  getMigrationConfig,
  type MigrationState,
  type Plan,
  type ZoneState,
} from "../../../src/api/waf-migration/index";

export const ZONE_ID = "023e105f4ecef8ad9ca31a8372d0c353";

export function zone(plan: Plan = "pro", extra: Partial<ZoneState> = {}): ZoneState {
  return { ...createZoneState({ id: ZONE_ID, plan }), ...extra };
}

export function blockRules(count: number, expression = "ip.src eq 203.0.113.1"): FirewallRuleState[] {
  return Array.from({ length: count }, (_, i) => ({ id: `r${i}`, expression, action: "block", paused: false }));
}

/** Puts a zone in a state as the state machine would have left it. */
export function inState(z: ZoneState, state: MigrationState): ZoneState {
  return state === "complete"
    ? { ...z, migrationState: state, previousWaf: { ...z.previousWaf, enabled: false } }
    : { ...z, migrationState: state };
}

/** The migration config of a zone, which must succeed. */
export function configOf(z: ZoneState) {
  const r = getMigrationConfig(z);
  if (!r.success) throw new Error(`config failed: ${JSON.stringify(r.errors)}`);
  return r.result;
}

/** The same body without the empty id/version/ref, as a plain rulesets PUT sends it. */
export function withoutIds(body: ReturnType<typeof configOf>) {
  return { ...body, rules: body.rules.map(({ id: _i, version: _v, ref: _r, ...rest }) => rest) };
}
