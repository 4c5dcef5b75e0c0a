/**
 * Seeding: a JSON fixture listing accounts, zones with their plan, DNS records, certificate packs,
 * firewall rules and invitations becomes the service's first state. Everything is validated as the
 * API would validate it (zone names, plans, record types, certificate packs); a bad fixture is
 * refused whole, with every problem and where it is.
 */
import { validateCertificatePack } from "../certificate-packs";
import { checkDnsRecord, type DnsRecordZone, dnsRecordConflict } from "../dns-record-checks";
import { EMPTY_FIREWALL_STATE, type FirewallState } from "../filters";
import { createFirewallRules } from "../firewall-rules";
import type { IdGenerator } from "../ids";
import { formatMicrosecondTimestamp, isHexId, isMicrosecondTimestamp } from "../ids";
import type { Invite } from "../invites";
import { isInviteStatus } from "../invites";
import type { Validation, ValidationIssue } from "../validation";
import { checkOptionalBoolean, checkOptionalString, isRecord, joinPath } from "../validation";
import {
  createZoneState,
  isPlan,
  type PreviousWafConfig,
  validateZoneState,
  type ZoneState,
} from "../waf-migration/zone-state";
import { checkZoneName, isZoneStatus, isZoneType, type Zone } from "../zones";
import type { AccountRecord, ApiSeed, DnsRecord, ZoneRecord } from "./records";
import { PLAN_DETAILS } from "./records";

/** What seeding needs besides the fixture: the clock and where ids come from. */
export interface SeedContext {
  readonly nowMs: number;
  readonly newId: IdGenerator;
}

const ZONE_KEYS = new Set([
  "id",
  "name",
  "account",
  "plan",
  "status",
  "type",
  "paused",
  "dns_records",
  "certificate_packs",
  "firewall_rules",
  "previous_waf",
  "uri_overrides",
  "page_rules",
  "partner_account",
]);
const TOP_KEYS = new Set(["accounts", "zones", "invites"]);

function unknownKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>, path: string): ValidationIssue[] {
  return Object.keys(value)
    .filter((k) => !allowed.has(k))
    .map((k) => ({
      path: joinPath(path, k),
      message: `${joinPath(path, k)} is not a fixture field; allowed: ${[...allowed].join(", ")}.`,
    }));
}

function list(value: unknown, path: string, issues: ValidationIssue[]): unknown[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value;
  issues.push({ path, message: `${path} must be an array.` });
  return [];
}

/** `value` with a new id when it is an object without one (a fixture leaves ids out to have them made). */
function withId(value: unknown, newId: IdGenerator): unknown {
  return isRecord(value) && value.id === undefined ? { ...value, id: newId() } : value;
}

function idOr(value: unknown, path: string, issues: ValidationIssue[], newId: IdGenerator): string {
  if (value === undefined) return newId();
  if (isHexId(value)) return value;
  issues.push({ path, message: `${path} must be 32 lower-case hex characters (or be left out to get one).` });
  return newId();
}

function seedAccount(value: unknown, path: string, issues: ValidationIssue[], ctx: SeedContext): AccountRecord {
  if (!isRecord(value) || typeof value.name !== "string" || value.name.length === 0) {
    issues.push({ path, message: `${path} must be an object with a name (and optionally an id).` });
    return { id: ctx.newId(), name: "" };
  }
  issues.push(...unknownKeys(value, new Set(["id", "name"]), path));
  return { id: idOr(value.id, joinPath(path, "id"), issues, ctx.newId), name: value.name };
}

function seedDnsRecord(
  value: unknown,
  path: string,
  zone: DnsRecordZone | undefined,
  sameName: Map<string, DnsRecord[]>,
  issues: ValidationIssue[],
  ctx: SeedContext,
): DnsRecord | null {
  if (!isRecord(value)) {
    issues.push({ path, message: `${path} must be an object with type, name and content.` });
    return null;
  }
  const id = idOr(value.id, joinPath(path, "id"), issues, ctx.newId);
  // Without a valid zone name the record's name cannot be read; the zone's name is reported instead.
  if (zone === undefined) return null;
  const checked = checkDnsRecord(value, zone);
  if (!checked.ok) {
    for (const e of checked.errors) {
      const at = e.path === "" ? path : joinPath(path, e.path);
      issues.push({ path: at, message: e.path === "" ? `${path}: ${e.message}` : e.message });
    }
    return null;
  }
  const record = checked.value;
  const others = sameName.get(record.name);
  const conflict = others === undefined ? undefined : dnsRecordConflict(record, others);
  if (conflict !== undefined) {
    issues.push({ path, message: conflict });
    return null;
  }
  const now = formatMicrosecondTimestamp(ctx.nowMs);
  const seeded: DnsRecord = {
    id,
    ...record,
    settings: {},
    meta: {},
    created_on: now,
    modified_on: now,
  };
  if (others === undefined) sameName.set(record.name, [seeded]);
  else others.push(seeded);
  return seeded;
}

// The published schema's invitation fields, with their string length limits.
const INVITE_STRINGS: Readonly<Record<string, number>> = {
  organization_id: 32,
  organization_name: 100,
  invited_by: 90,
  invited_member_email: 90,
};
const INVITE_KEYS = new Set([
  "id",
  "status",
  ...Object.keys(INVITE_STRINGS),
  "invited_member_id",
  "organization_is_enforcing_twofactor",
  "invited_on",
  "expires_on",
  "roles",
]);

function isRole(value: unknown): boolean {
  return (
    isRecord(value) &&
    typeof value.id === "string" &&
    value.id.length <= 32 &&
    typeof value.name === "string" &&
    typeof value.description === "string" &&
    isRecord(value.permissions)
  );
}

function seedInvite(value: unknown, path: string, issues: ValidationIssue[], ctx: SeedContext): Invite | null {
  if (!isRecord(value) || typeof value.organization_id !== "string") {
    issues.push({ path, message: `${path} must be an object with an organization_id.` });
    return null;
  }
  const start = issues.length;
  issues.push(...unknownKeys(value, INVITE_KEYS, path));
  if (value.status !== undefined && !isInviteStatus(value.status)) {
    issues.push({ path: joinPath(path, "status"), message: "status must be pending, accepted, rejected or expired." });
  }
  for (const [key, max] of Object.entries(INVITE_STRINGS)) checkOptionalString(value, key, path, max, issues);
  const member = value.invited_member_id;
  if (member !== undefined && member !== null && (typeof member !== "string" || member.length > 32)) {
    const at = joinPath(path, "invited_member_id");
    issues.push({ path: at, message: `${at} must be null or an id of at most 32 characters.` });
  }
  checkOptionalBoolean(value, "organization_is_enforcing_twofactor", path, issues);
  for (const key of ["invited_on", "expires_on"]) {
    if (value[key] !== undefined && !isMicrosecondTimestamp(value[key])) {
      const at = joinPath(path, key);
      issues.push({ path: at, message: `${at} must be a timestamp like 2024-01-01T00:00:00.000000Z.` });
    }
  }
  if (value.roles !== undefined && !(Array.isArray(value.roles) && value.roles.every(isRole))) {
    const at = joinPath(path, "roles");
    issues.push({
      path: at,
      message: `${at} must be an array of roles, each with id, name, description and permissions.`,
    });
  }
  const id = idOr(value.id, joinPath(path, "id"), issues, ctx.newId);
  if (issues.length > start) return null;
  const now = formatMicrosecondTimestamp(ctx.nowMs);
  const week = formatMicrosecondTimestamp(ctx.nowMs + 7 * 24 * 3600 * 1000);
  return {
    invited_member_id: null,
    invited_on: now,
    expires_on: week,
    roles: [],
    organization_is_enforcing_twofactor: false,
    ...(value as Partial<Invite>),
    id,
    status: (value.status as Invite["status"] | undefined) ?? "pending",
    organization_id: value.organization_id,
  };
}

function seedZone(
  value: unknown,
  path: string,
  accounts: ReadonlyMap<string, AccountRecord>,
  issues: ValidationIssue[],
  ctx: SeedContext,
): ZoneRecord | null {
  if (!isRecord(value)) {
    issues.push({ path, message: `${path} must be an object with a name, an account and a plan.` });
    return null;
  }
  const start = issues.length;
  issues.push(...unknownKeys(value, ZONE_KEYS, path));
  const nameProblem = checkZoneName(value.name);
  if (nameProblem !== undefined) issues.push({ path: joinPath(path, "name"), message: nameProblem });
  const account = typeof value.account === "string" ? accounts.get(value.account) : undefined;
  if (account === undefined) {
    issues.push({
      path: joinPath(path, "account"),
      message: `${joinPath(path, "account")} must be the id of an account of the fixture.`,
    });
  }
  if (!isPlan(value.plan)) {
    issues.push({ path: joinPath(path, "plan"), message: "plan must be free, pro, business or enterprise." });
  }
  if (value.status !== undefined && !isZoneStatus(value.status)) {
    issues.push({ path: joinPath(path, "status"), message: "status must be initializing, pending, active or moved." });
  }
  if (value.type !== undefined && !isZoneType(value.type)) {
    issues.push({ path: joinPath(path, "type"), message: "type must be full, partial, secondary or internal." });
  }
  const id = idOr(value.id, joinPath(path, "id"), issues, ctx.newId);
  const recordZone: DnsRecordZone | undefined =
    nameProblem === undefined
      ? { name: (value.name as string).toLowerCase(), enterprise: value.plan === "enterprise" }
      : undefined;
  const sameName = new Map<string, DnsRecord[]>();
  const dnsRecords = list(value.dns_records, joinPath(path, "dns_records"), issues).flatMap((r, i) => {
    const rec = seedDnsRecord(r, joinPath(joinPath(path, "dns_records"), i), recordZone, sameName, issues, ctx);
    return rec === null ? [] : [rec];
  });
  const packs = list(value.certificate_packs, joinPath(path, "certificate_packs"), issues).flatMap((p, i) => {
    const v = validateCertificatePack(withId(p, ctx.newId));
    if (v.ok) return [v.value];
    const at = joinPath(joinPath(path, "certificate_packs"), i);
    issues.push(...v.errors.map((e) => ({ path: joinPath(at, e.path), message: e.message })));
    return [];
  });
  if (issues.length > start || account === undefined || !isPlan(value.plan)) return null;

  let firewall: FirewallState = EMPTY_FIREWALL_STATE;
  const rules = list(value.firewall_rules, joinPath(path, "firewall_rules"), issues);
  if (rules.length > 0) {
    const created = createFirewallRules(firewall, rules, { idGenerator: ctx.newId });
    if (!created.response.body.success) {
      for (const e of created.response.body.errors) {
        issues.push({ path: joinPath(joinPath(path, "firewall_rules"), e.source?.pointer ?? ""), message: e.message });
      }
      return null;
    }
    firewall = created.state;
  }
  const now = formatMicrosecondTimestamp(ctx.nowMs);
  const plan = PLAN_DETAILS[value.plan];
  const status = (value.status as Zone["status"] | undefined) ?? "active";
  const zone: Zone = {
    id,
    name: (value.name as string).toLowerCase(),
    status,
    paused: value.paused === true,
    type: (value.type as Zone["type"] | undefined) ?? "full",
    development_mode: 0,
    name_servers: ["ada.ns.cloudflare.com", "bob.ns.cloudflare.com"],
    original_name_servers: null,
    original_registrar: null,
    original_dnshost: null,
    created_on: now,
    modified_on: now,
    activated_on: status === "active" ? now : null,
    meta: { step: 2, custom_certificate_quota: 0, page_rule_quota: 3, phishing_detected: false },
    // The published schema's owner has a string id: the account owns the zone.
    owner: { id: account.id, type: "organization", name: account.name },
    account: { id: account.id, name: account.name },
    permissions: ["#zone:read", "#zone:edit"],
    plan: {
      ...plan,
      legacy_id: value.plan,
      currency: "USD",
      frequency: value.plan === "free" ? "" : "monthly",
      is_subscribed: true,
      can_subscribe: false,
      legacy_discount: false,
      externally_managed: false,
    },
  };
  const waf: ZoneState = createZoneState({
    id,
    plan: value.plan,
    partnerAccount: value.partner_account === true,
    ...(isRecord(value.previous_waf) ? { previousWaf: value.previous_waf as Partial<PreviousWafConfig> } : {}),
    ...(Array.isArray(value.uri_overrides)
      ? { uriOverrides: value.uri_overrides.map((o: unknown) => withId(o, ctx.newId)) as ZoneState["uriOverrides"] }
      : {}),
    ...(Array.isArray(value.page_rules) ? { pageRules: value.page_rules as ZoneState["pageRules"] } : {}),
  });
  // The previous managed-rules settings are checked here, not at the first migration call.
  const checked = validateZoneState(waf);
  if (!checked.ok) {
    for (const e of checked.errors) issues.push({ path: joinPath(path, e.source?.pointer ?? ""), message: e.message });
    return null;
  }
  return { zone, dnsRecords, certificatePacks: packs, firewall, waf, rulesets: {} };
}

/**
 * Validates a fixture and builds the first state from it.
 *
 * The fixture is `{ accounts: [{ id?, name }], zones: [{ id?, name, account, plan, status?, type?,
 * paused?, dns_records?, certificate_packs?, firewall_rules?, previous_waf?, uri_overrides?,
 * page_rules?, partner_account? }], invites?: [{ id?, organization_id, organization_name?, status?, … }] }`.
 * Ids left out are drawn from `ctx.newId`.
 *
 * @example
 * ```ts
 * const seed = seedFromFixture({ accounts: [{ name: "Main" }], zones: [] }, { nowMs: Date.UTC(2024, 0, 1), newId: randomHexId });
 * if (!seed.ok) console.error(seed.errors);
 * ```
 */
export function seedFromFixture(fixture: unknown, ctx: SeedContext): Validation<ApiSeed> {
  if (!isRecord(fixture)) {
    return { ok: false, errors: [{ path: "", message: "The fixture must be a JSON object with accounts and zones." }] };
  }
  const issues: ValidationIssue[] = unknownKeys(fixture, TOP_KEYS, "");
  const accounts = list(fixture.accounts, "accounts", issues).map((a, i) =>
    seedAccount(a, joinPath("accounts", i), issues, ctx),
  );
  const byId = new Map(accounts.map((a) => [a.id, a]));
  if (byId.size !== accounts.length) issues.push({ path: "accounts", message: "Account ids must be unique." });
  const zones = list(fixture.zones, "zones", issues).flatMap((z, i) => {
    const zone = seedZone(z, joinPath("zones", i), byId, issues, ctx);
    return zone === null ? [] : [zone];
  });
  const names = new Set(zones.map((z) => z.zone.name));
  if (names.size !== zones.length) issues.push({ path: "zones", message: "Zone names must be unique." });
  if (new Set(zones.map((z) => z.zone.id)).size !== zones.length) {
    issues.push({ path: "zones", message: "Zone ids must be unique." });
  }
  const invites = list(fixture.invites, "invites", issues).flatMap((v, i) => {
    const invite = seedInvite(v, joinPath("invites", i), issues, ctx);
    return invite === null ? [] : [invite];
  });
  if (issues.length > 0) return { ok: false, errors: issues };
  return { ok: true, value: { accounts, zones, user: { invites } } };
}
