/**
 * Zones: the zone model, the `GET /zones` query (`name` and `account.name` with operators,
 * `account.id`, `status`, `match`, `type`, listing), and {@link listZones}, which applies it.
 */
import type { ApiResponse } from "./envelope";
import { couldNotRoute, fail, invalidRequest, noRoute, ok } from "./envelope";
import { isHexId, isMicrosecondTimestamp } from "./ids";
import type { ListingParams, MatchMode, Page } from "./listing";
import { isMatchMode, paginate, parseListingParams, ZONES_LISTING } from "./listing";
import type { QueryInput, Validation, ValidationIssue } from "./validation";
import { characterLength, checkOptionalBoolean, isRecord, oneOf, singleParam, toSearchParams } from "./validation";

/** Zone statuses (http-models.md §1.6). */
export const ZONE_STATUSES = ["initializing", "pending", "active", "moved"] as const;
/** One of {@link ZONE_STATUSES}. */
export type ZoneStatus = (typeof ZONE_STATUSES)[number];
/**
 * True for a zone status.
 *
 * @example
 * ```ts
 * isZoneStatus("active"); // true
 * ```
 */
export const isZoneStatus = oneOf(ZONE_STATUSES);

/** Zone types; `internal` zones are left out of listings unless asked for. */
export const ZONE_TYPES = ["full", "partial", "secondary", "internal"] as const;
/** One of {@link ZONE_TYPES}. */
export type ZoneType = (typeof ZONE_TYPES)[number];
/**
 * True for a zone type.
 *
 * @example
 * ```ts
 * isZoneType("partial"); // true
 * ```
 */
export const isZoneType = oneOf(ZONE_TYPES);

/** Operators of `name=op:value` and `account.name=op:value`; `equal` when no prefix is given. */
export const NAME_OPERATORS = [
  "equal",
  "not_equal",
  "starts_with",
  "ends_with",
  "contains",
  "starts_with_case_sensitive",
  "ends_with_case_sensitive",
  "contains_case_sensitive",
] as const;
/** One of {@link NAME_OPERATORS}. */
export type NameOperator = (typeof NAME_OPERATORS)[number];
/**
 * True for a name operator.
 *
 * @example
 * ```ts
 * isNameOperator("contains"); // true
 * ```
 */
export const isNameOperator = oneOf(NAME_OPERATORS);

/**
 * A zone as the API returns it. The fields the published schema (`zones_zone`) requires are
 * required here too; unknown fields are kept by the validator but not typed.
 */
export interface Zone {
  readonly id: string;
  readonly name: string;
  readonly status: ZoneStatus;
  readonly paused?: boolean;
  readonly type?: ZoneType;
  readonly account: { readonly id: string; readonly name?: string };
  readonly plan: {
    readonly id?: string;
    readonly name?: string;
    readonly legacy_id?: string;
    readonly price?: number;
    readonly currency?: string;
    readonly frequency?: string;
    readonly is_subscribed?: boolean;
    readonly can_subscribe?: boolean;
    readonly legacy_discount?: boolean;
    readonly externally_managed?: boolean;
  };
  readonly owner: { readonly id?: string; readonly name?: string; readonly type?: string };
  readonly meta: {
    readonly step?: number;
    readonly custom_certificate_quota?: number;
    readonly page_rule_quota?: number;
    readonly phishing_detected?: boolean;
    readonly cdn_only?: boolean;
    readonly dns_only?: boolean;
    readonly foundation_dns?: boolean;
  };
  readonly development_mode: number;
  readonly name_servers: readonly string[];
  readonly original_dnshost: string | null;
  readonly original_name_servers: readonly string[] | null;
  readonly original_registrar: string | null;
  readonly permissions?: readonly string[];
  readonly created_on: string;
  readonly modified_on: string;
  readonly activated_on: string | null;
}

const MAX_ZONE_NAME = 253;

/** The schema's zone-name rule, checked in one pass (`^([a-zA-Z0-9][-a-zA-Z0-9]*\.)+[-a-zA-Z0-9]{2,20}$`). */
function isAlnum(c: string): boolean {
  return (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9");
}

/**
 * Checks a zone name as the API does: at most 253 characters, at least two labels, each label of
 * letters, digits and hyphens starting with a letter or digit, and a last label of 2 to 20 such
 * characters. So `localhost`, names with underscores or spaces, and `example..com` are refused.
 * Returns the problem, or `undefined` when the name is valid.
 *
 * @example
 * ```ts
 * checkZoneName("example.com"); // undefined
 * checkZoneName("my_site.com"); // "name must be a domain name: ..."
 * ```
 */
export function checkZoneName(name: unknown): string | undefined {
  const problem =
    "name must be a domain name of at most 253 characters: labels of letters, digits and hyphens joined by dots, the last of 2 to 20 characters (no localhost, underscores or spaces).";
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_ZONE_NAME) return problem;
  const labels = name.split(".");
  if (labels.length < 2) return problem;
  const last = labels[labels.length - 1] ?? "";
  if (last.length < 2 || last.length > 20) return problem;
  for (const c of last) if (!isAlnum(c) && c !== "-") return problem;
  for (const label of labels.slice(0, -1)) {
    if (label.length === 0 || !isAlnum(label[0] ?? "")) return problem;
    for (const c of label) if (!isAlnum(c) && c !== "-") return problem;
  }
  return undefined;
}

const ZONE_OBJECT_FIELDS = ["plan", "owner", "meta"] as const;
const NULLABLE_STRING_FIELDS = ["original_dnshost", "original_registrar"] as const;

/**
 * Validates a zone object (e.g. a `GET /zones/{zone_id}` result) against the published schema:
 * every required field present with its type, and a valid zone name.
 *
 * @example
 * ```ts
 * validateZone(zone).ok; // true for zones this library serves
 * ```
 */
export function validateZone(value: unknown): Validation<Zone> {
  if (!isRecord(value)) return { ok: false, errors: [{ path: "", message: "A zone must be an object." }] };
  const issues: ValidationIssue[] = [];
  if (typeof value.id !== "string" || value.id.length === 0 || value.id.length > 32) {
    issues.push({ path: "id", message: "id must be a string of 1 to 32 characters." });
  }
  const nameProblem = checkZoneName(value.name);
  if (nameProblem !== undefined) issues.push({ path: "name", message: nameProblem });
  if (!isZoneStatus(value.status))
    issues.push({ path: "status", message: `status must be one of ${ZONE_STATUSES.join(", ")}.` });
  if (value.type !== undefined && !isZoneType(value.type)) {
    issues.push({ path: "type", message: `type must be one of ${ZONE_TYPES.join(", ")}.` });
  }
  checkOptionalBoolean(value, "paused", "", issues);
  if (!isRecord(value.account) || typeof value.account.id !== "string") {
    issues.push({ path: "account", message: "account must be an object with a string id." });
  } else if (value.account.name !== undefined && typeof value.account.name !== "string") {
    issues.push({ path: "account.name", message: "account.name must be a string." });
  }
  for (const key of ZONE_OBJECT_FIELDS) {
    if (!isRecord(value[key])) issues.push({ path: key, message: `${key} must be an object.` });
  }
  if (isRecord(value.owner)) {
    const owner = value.owner;
    if (owner.id !== undefined && (typeof owner.id !== "string" || owner.id.length > 32)) {
      issues.push({ path: "owner.id", message: "owner.id must be a string of at most 32 characters." });
    }
    for (const key of ["name", "type"] as const) {
      if (owner[key] !== undefined && typeof owner[key] !== "string") {
        issues.push({ path: `owner.${key}`, message: `owner.${key} must be a string.` });
      }
    }
  }
  if (typeof value.development_mode !== "number") {
    issues.push({ path: "development_mode", message: "development_mode must be a number." });
  }
  for (const key of NULLABLE_STRING_FIELDS) {
    if (value[key] !== null && typeof value[key] !== "string") {
      issues.push({ path: key, message: `${key} must be a string or null.` });
    }
  }
  for (const key of ["created_on", "modified_on"] as const) {
    if (!isMicrosecondTimestamp(value[key])) {
      issues.push({ path: key, message: `${key} must be an ISO 8601 timestamp with microseconds and Z.` });
    }
  }
  if (value.activated_on !== null && !isMicrosecondTimestamp(value.activated_on)) {
    issues.push({
      path: "activated_on",
      message: "activated_on must be null or an ISO 8601 timestamp with microseconds and Z.",
    });
  }
  const isStringArray = (v: unknown) => Array.isArray(v) && v.every((n) => typeof n === "string");
  if (!isStringArray(value.name_servers)) {
    issues.push({ path: "name_servers", message: "name_servers must be an array of strings." });
  }
  if (value.original_name_servers !== null && !isStringArray(value.original_name_servers)) {
    issues.push({
      path: "original_name_servers",
      message: "original_name_servers must be null or an array of strings.",
    });
  }
  if (issues.length > 0) return { ok: false, errors: issues };
  return { ok: true, value: value as unknown as Zone };
}

/** A parsed `name` or `account.name` filter. */
export interface NameFilter {
  readonly operator: NameOperator;
  readonly value: string;
}

/** A validated `GET /zones` query. */
export interface ZoneListQuery {
  readonly name?: NameFilter;
  readonly accountName?: NameFilter;
  readonly accountId?: string;
  readonly status?: ZoneStatus;
  readonly match: MatchMode;
  /** Types to include; when the query gives none, every type except `internal`. */
  readonly types: readonly ZoneType[];
  readonly listing: ListingParams;
}

/**
 * Parses `op:value` (or a bare value, meaning `equal`). A prefix that is not an operator is part of
 * the value, so names never lose characters to a guess.
 *
 * @example
 * ```ts
 * parseNameFilter("contains:example"); // { operator: "contains", value: "example" }
 * parseNameFilter("example.com"); // { operator: "equal", value: "example.com" }
 * ```
 */
export function parseNameFilter(raw: string): NameFilter {
  const colon = raw.indexOf(":");
  if (colon > 0) {
    const op = raw.slice(0, colon);
    if (isNameOperator(op)) return { operator: op, value: raw.slice(colon + 1) };
  }
  return { operator: "equal", value: raw };
}

/**
 * True when `name` satisfies a {@link NameFilter}. Operators without `_case_sensitive` compare
 * case-insensitively, as domain names are.
 *
 * @example
 * ```ts
 * matchesNameFilter("Example.com", { operator: "equal", value: "example.com" }); // true
 * ```
 */
export function matchesNameFilter(name: string, filter: NameFilter): boolean {
  const sensitive = filter.operator.endsWith("_case_sensitive");
  const a = sensitive ? name : name.toLowerCase();
  const b = sensitive ? filter.value : filter.value.toLowerCase();
  switch (filter.operator) {
    case "equal":
      return a === b;
    case "not_equal":
      return a !== b;
    case "starts_with":
    case "starts_with_case_sensitive":
      return a.startsWith(b);
    case "ends_with":
    case "ends_with_case_sensitive":
      return a.endsWith(b);
    case "contains":
    case "contains_case_sensitive":
      return a.includes(b);
  }
}

/**
 * Parses and validates a `GET /zones` query string.
 *
 * @example
 * ```ts
 * const q = parseZoneListQuery("account.id=01a7…&name=contains:example&per_page=50");
 * if (!q.ok) return invalidRequest(q.errors);
 * ```
 */
export function parseZoneListQuery(input: QueryInput): Validation<ZoneListQuery> {
  const query = toSearchParams(input);
  const issues: ValidationIssue[] = [];
  const listing = parseListingParams(query, ZONES_LISTING);
  if (!listing.ok) issues.push(...listing.errors);

  const readName = (param: string): NameFilter | undefined => {
    const raw = singleParam(query, param, issues);
    if (raw === undefined) return undefined;
    const parsed = parseNameFilter(raw);
    if (characterLength(parsed.value) > MAX_ZONE_NAME) {
      issues.push({ path: param, message: `${param} must be at most ${MAX_ZONE_NAME} characters long.` });
      return undefined;
    }
    return parsed;
  };
  const name = readName("name");
  const accountName = readName("account.name");
  const accountId = singleParam(query, "account.id", issues);
  if (accountId !== undefined && (accountId.length === 0 || accountId.length > 32)) {
    issues.push({ path: "account.id", message: "account.id must be an identifier of 1 to 32 characters." });
  }
  const status = singleParam(query, "status", issues);
  if (status !== undefined && !isZoneStatus(status)) {
    issues.push({ path: "status", message: `status must be one of ${ZONE_STATUSES.join(", ")}.` });
  }
  const match = singleParam(query, "match", issues) ?? "all";
  if (!isMatchMode(match)) issues.push({ path: "match", message: "match must be any or all." });

  // The SDK sends `type` comma-joined; repeated parameters are accepted too.
  const rawTypes = query.getAll("type").flatMap((t) => t.split(","));
  const types: ZoneType[] = [];
  for (const t of rawTypes) {
    if (isZoneType(t)) types.push(t);
    else issues.push({ path: "type", message: `type must be a comma-separated list of ${ZONE_TYPES.join(", ")}.` });
  }

  if (issues.length > 0 || !listing.ok || !isMatchMode(match)) return { ok: false, errors: issues };
  return {
    ok: true,
    value: {
      ...(name === undefined ? {} : { name }),
      ...(accountName === undefined ? {} : { accountName }),
      ...(accountId === undefined ? {} : { accountId }),
      ...(status === undefined || !isZoneStatus(status) ? {} : { status }),
      match,
      types: types.length > 0 ? types : ["full", "partial", "secondary"],
      listing: listing.value,
    },
  };
}

/**
 * True when a zone satisfies the query's filters, combined by `match`; `type` always applies.
 *
 * @example
 * ```ts
 * matchesZoneQuery(zone, query); // true or false
 * ```
 */
export function matchesZoneQuery(zone: Zone, query: ZoneListQuery): boolean {
  if (!query.types.includes(zone.type ?? "full")) return false;
  const checks: boolean[] = [];
  if (query.name !== undefined) checks.push(matchesNameFilter(zone.name, query.name));
  if (query.accountName !== undefined) checks.push(matchesNameFilter(zone.account.name ?? "", query.accountName));
  if (query.accountId !== undefined) checks.push(zone.account.id === query.accountId);
  if (query.status !== undefined) checks.push(zone.status === query.status);
  if (checks.length === 0) return true;
  return query.match === "all" ? checks.every(Boolean) : checks.some(Boolean);
}

/**
 * Filters, orders and pages zones for `GET /zones`.
 *
 * @example
 * ```ts
 * const q = parseZoneListQuery(url);
 * if (q.ok) return ok(listZones(zones, q.value).result, ...);
 * ```
 */
export function listZones(zones: readonly Zone[], query: ZoneListQuery): Page<Zone> {
  return paginate(
    zones.filter((z) => matchesZoneQuery(z, query)),
    query.listing,
  );
}

/**
 * Answers `GET /zones` from a list of zones: 400 for a bad query, otherwise the page with
 * `result_info`.
 *
 * @example
 * ```ts
 * const response = handleListZones(zones, new URL(request.url));
 * ```
 */
export function handleListZones(zones: readonly Zone[], input: QueryInput): ApiResponse<Zone[]> {
  const q = parseZoneListQuery(input);
  if (!q.ok) return invalidRequest(q.errors);
  const page = listZones(zones, q.value);
  return ok(page.result, { resultInfo: page.result_info });
}

/**
 * Checks a `{zone_id}` path parameter: anything but 32 hex characters gets the platform's 7003 and
 * 7000 pair for `path`.
 *
 * @example
 * ```ts
 * checkZoneId("nope", "/zones/nope")?.status; // 400
 * checkZoneId("023e105f4ecef8ad9ca31a8372d0c353", "/zones/…"); // undefined
 * ```
 */
export function checkZoneId(zoneId: string, path: string): ApiResponse<never> | undefined {
  if (isHexId(zoneId)) return undefined;
  return fail(400, couldNotRoute(path), noRoute());
}
