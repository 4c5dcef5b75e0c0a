/**
 * The state the v4 API service keeps, split the way it is stored: one record per zone (the zone,
 * its DNS records, certificate packs, filters and firewall rules, rulesets and migration state),
 * one per account, and one for the user (invitations). Every operation reads one record and
 * returns the next one; nothing here is mutated.
 */
import type { CertificatePack } from "../certificate-packs";
import type { CheckedDnsRecord } from "../dns-record-checks";
import type { FirewallState } from "../filters";
import type { Invite } from "../invites";
import type { Plan, ZoneState } from "../waf-migration/zone-state";
import type { Zone } from "../zones";
import type { Ruleset } from "./rulesets";

/** A DNS record as the API returns it (the fields the published schema requires, and a few more). */
export interface DnsRecord extends CheckedDnsRecord {
  readonly id: string;
  readonly settings: Readonly<Record<string, unknown>>;
  readonly meta: Readonly<Record<string, unknown>>;
  readonly created_on: string;
  readonly modified_on: string;
}

/** Everything the service keeps about one zone. */
export interface ZoneRecord {
  readonly zone: Zone;
  readonly dnsRecords: readonly DnsRecord[];
  readonly certificatePacks: readonly CertificatePack[];
  readonly firewall: FirewallState;
  /**
   * The managed-rules migration state. Its `firewallRules` are not kept here: the migration reads
   * the zone's real firewall rules (see {@link migrationView}), so there is one source of truth.
   */
  readonly waf: ZoneState;
  /** Entry-point rulesets by phase. */
  readonly rulesets: Readonly<Record<string, Ruleset>>;
}

/** An account. */
export interface AccountRecord {
  readonly id: string;
  readonly name: string;
}

/** The user the credentials act as: their invitations. */
export interface UserRecord {
  readonly invites: readonly Invite[];
}

/** The whole state, as seeded from a fixture. */
export interface ApiSeed {
  readonly accounts: readonly AccountRecord[];
  readonly zones: readonly ZoneRecord[];
  readonly user: UserRecord;
}

/** How each plan appears in a zone's `plan` object. */
export const PLAN_DETAILS: Readonly<
  Record<Plan, { readonly id: string; readonly name: string; readonly price: number }>
> = {
  free: { id: "0feeeeeeeeeeeeeeeeeeeeeeeeeeeeee", name: "Free Website", price: 0 },
  pro: { id: "a577b510288e82b26486fe1c3bd8bbec", name: "Pro Website", price: 20 },
  business: { id: "bf2b3f3b0e8c4d9b2a1e7d5c6f4a3b21", name: "Business Website", price: 200 },
  enterprise: { id: "94f3b7b768b0458b56d2cac4fe5ec0f9", name: "Enterprise Website", price: 5000 },
};

/**
 * The zone's state as the migration functions see it: the stored migration state with the zone's
 * current firewall rules (expression from their filter).
 *
 * @example
 * ```ts
 * checkCompatibility(migrationView(record), { phaseTwo: true });
 * ```
 */
export function migrationView(record: ZoneRecord): ZoneState {
  const expressions = new Map(record.firewall.filters.map((f) => [f.id, f.expression]));
  return {
    ...record.waf,
    firewallRules: record.firewall.rules.map((r) => ({
      id: r.id,
      expression: expressions.get(r.filterId) ?? "",
      action: r.action,
      paused: r.paused,
      ...(r.products === undefined ? {} : { products: r.products as ZoneState["firewallRules"][number]["products"] }),
    })),
  };
}

/**
 * Stores a migration result back: everything but the firewall rules, which stay in the firewall state.
 *
 * @example
 * ```ts
 * const next = withMigrationState(record, result.zone);
 * ```
 */
export function withMigrationState(record: ZoneRecord, waf: ZoneState): ZoneRecord {
  return { ...record, waf: { ...waf, firewallRules: [] } };
}
