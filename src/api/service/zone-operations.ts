/**
 * The zone-scoped operations of the service: the zone itself, DNS records, certificate packs,
 * filters and firewall rules. Each is an {@link Operation} over one {@link ZoneRecord}; the
 * rulesets and migration operations are in `migration-operations.ts`.
 */
import { parseCertificatePackListQuery } from "../certificate-packs";
import type { DnsRecordListQuery, TextFilter } from "../dns-records";
import { parseDnsRecordListQuery } from "../dns-records";
import { invalidRequest, ok } from "../envelope";
import { createFilters, deleteFilter, getFilter, listFilters, updateFilter } from "../filters";
import {
  createFirewallRules,
  DEFAULT_FIREWALL_LIMITS,
  deleteFirewallRule,
  type FirewallLimits,
  getFirewallRule,
  listFirewallRules,
  updateFirewallRule,
} from "../firewall-rules";
import { paginate } from "../listing";
import type { ApiRequest, Operation, Outcome } from "./operation";
import { reading } from "./operation";
import type { DnsRecord, ZoneRecord } from "./records";

/** `GET /zones/{zone_id}`. */
export const getZone: Operation<ZoneRecord> = reading((record) => ok(record.zone));

function matchesText(value: string, filter: TextFilter | undefined): boolean[] {
  if (filter === undefined) return [];
  const v = value.toLowerCase();
  const out: boolean[] = [];
  if (filter.value !== undefined) out.push(v === filter.value.toLowerCase());
  if (filter.exact !== undefined) out.push(v === filter.exact.toLowerCase());
  if (filter.contains !== undefined) out.push(v.includes(filter.contains.toLowerCase()));
  if (filter.startswith !== undefined) out.push(v.startsWith(filter.startswith.toLowerCase()));
  if (filter.endswith !== undefined) out.push(v.endsWith(filter.endswith.toLowerCase()));
  return out;
}

/** One result per tag sub-filter: whether some tag matches it (`tag=name` matches any value of name). */
function tagResults(tags: readonly string[], filter: TextFilter): boolean[] {
  const out: boolean[] = [];
  for (const key of ["value", "exact", "contains", "startswith", "endswith"] as const) {
    const wanted = filter[key];
    if (wanted === undefined) continue;
    const bare = key === "value" && !wanted.includes(":");
    out.push(tags.some((t) => (bare ? t.split(":", 1)[0] === wanted : matchesText(t, { [key]: wanted })[0] === true)));
  }
  return out;
}

function matchesDnsQuery(record: DnsRecord, q: DnsRecordListQuery): boolean {
  const checks: boolean[] = [...matchesText(record.name, q.name)];
  if (q.type !== undefined) checks.push(record.type === q.type);
  checks.push(...matchesText(record.content, q.content));
  if (q.proxied !== undefined) checks.push(record.proxied === q.proxied);
  if (q.comment !== undefined) {
    if (q.comment.present) checks.push(record.comment !== null && record.comment !== "");
    if (q.comment.absent) checks.push(record.comment === null || record.comment === "");
    checks.push(...matchesText(record.comment ?? "", q.comment));
  }
  if (q.tag !== undefined) {
    if (q.tag.present) checks.push(record.tags.length > 0);
    if (q.tag.absent) checks.push(record.tags.length === 0);
    const perFilter = tagResults(record.tags, q.tag);
    if (perFilter.length > 0) checks.push(q.tagMatch === "all" ? perFilter.every(Boolean) : perFilter.some(Boolean));
  }
  if (q.search !== undefined) {
    const s = q.search.toLowerCase();
    checks.push(
      record.name.toLowerCase().includes(s) ||
        record.content.toLowerCase().includes(s) ||
        (record.comment ?? "").toLowerCase().includes(s),
    );
  }
  if (checks.length === 0) return true;
  return q.match === "all" ? checks.every(Boolean) : checks.some(Boolean);
}

/** `GET /zones/{zone_id}/dns_records`: filters, order (default `type`) and pages (default 100). */
export const listDnsRecords: Operation<ZoneRecord> = reading((record, request) => {
  const q = parseDnsRecordListQuery(request.query);
  if (!q.ok) return invalidRequest(q.errors);
  const page = paginate(
    record.dnsRecords.filter((r) => matchesDnsQuery(r, q.value)),
    q.value.listing,
  );
  return ok(page.result.map(dnsRecordOnWire), { resultInfo: page.result_info });
});

/** A record as the published schema gives it: `comment` is a string, left out when there is none. */
function dnsRecordOnWire(record: DnsRecord): DnsRecord | Omit<DnsRecord, "comment"> {
  if (record.comment !== null) return record;
  const { comment: _none, ...rest } = record;
  return rest;
}

/**
 * `GET /zones/{zone_id}/ssl/certificate_packs`: active packs, or every pack with `status=all`
 * (`ssl_status=all` too, the spelling of the documentation's example).
 */
export const listCertificatePacks: Operation<ZoneRecord> = reading((record, request) => {
  const q = parseCertificatePackListQuery(request.query);
  if (!q.ok) return invalidRequest(q.errors);
  const packs = q.value.all ? record.certificatePacks : record.certificatePacks.filter((p) => p.status === "active");
  const page = paginate(packs, q.value.listing);
  return ok(page.result, { resultInfo: page.result_info });
});

function withFirewall(
  record: ZoneRecord,
  t: { state: ZoneRecord["firewall"]; response: Outcome<unknown>["response"] },
) {
  return { state: t.state === record.firewall ? record : { ...record, firewall: t.state }, response: t.response };
}

function param(request: ApiRequest, name: string): string {
  return request.params[name] ?? "";
}

/** `GET /zones/{zone_id}/filters`. */
export const listFiltersOperation: Operation<ZoneRecord> = reading((r, req) => listFilters(r.firewall, req.query));
/** `POST /zones/{zone_id}/filters` (an array of filters). */
export const createFiltersOperation: Operation<ZoneRecord> = (r, req) =>
  withFirewall(r, createFilters(r.firewall, req.body, { idGenerator: req.newId }));
/** `GET /zones/{zone_id}/filters/{filter_id}`. */
export const getFilterOperation: Operation<ZoneRecord> = reading((r, req) =>
  getFilter(r.firewall, param(req, "filter_id")),
);
/** `PUT /zones/{zone_id}/filters/{filter_id}`; refused for filters made by the one-call rule POST. */
export const updateFilterOperation: Operation<ZoneRecord> = (r, req) =>
  withFirewall(r, updateFilter(r.firewall, param(req, "filter_id"), req.body));
/** `DELETE /zones/{zone_id}/filters/{filter_id}`; refused for one-call filters and filters in use. */
export const deleteFilterOperation: Operation<ZoneRecord> = (r, req) =>
  withFirewall(r, deleteFilter(r.firewall, param(req, "filter_id")));

/** `GET /zones/{zone_id}/firewall/rules`. */
export const listFirewallRulesOperation: Operation<ZoneRecord> = reading((r, req) =>
  listFirewallRules(r.firewall, req.query),
);
/** What the zone's plan allows its firewall rules: the `log` action is Enterprise only. */
function firewallLimits(r: ZoneRecord): FirewallLimits {
  return { ...DEFAULT_FIREWALL_LIMITS, logActionAvailable: r.waf.plan === "enterprise" };
}

/** `POST /zones/{zone_id}/firewall/rules`: with `filter.id` (two-call flow) or `filter.expression` (one call). */
export const createFirewallRulesOperation: Operation<ZoneRecord> = (r, req) =>
  withFirewall(r, createFirewallRules(r.firewall, req.body, { idGenerator: req.newId, limits: firewallLimits(r) }));
/** `GET /zones/{zone_id}/firewall/rules/{rule_id}`. */
export const getFirewallRuleOperation: Operation<ZoneRecord> = reading((r, req) =>
  getFirewallRule(r.firewall, param(req, "rule_id")),
);
/** `PUT /zones/{zone_id}/firewall/rules/{rule_id}`, within the plan's limits as a creation is. */
export const updateFirewallRuleOperation: Operation<ZoneRecord> = (r, req) =>
  withFirewall(r, updateFirewallRule(r.firewall, param(req, "rule_id"), req.body, { limits: firewallLimits(r) }));
/** `DELETE /zones/{zone_id}/firewall/rules/{rule_id}` (optional body `{delete_filter_if_unused}`). */
export const deleteFirewallRuleOperation: Operation<ZoneRecord> = (r, req) =>
  withFirewall(r, deleteFirewallRule(r.firewall, param(req, "rule_id"), req.body));
