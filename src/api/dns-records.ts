/**
 * The `GET /zones/{zone_id}/dns_records` query (http-models.md §1.7): record type, name/content/comment/tag
 * sub-filters, `match`/`tag_match`, free-text `search`, and DNS listing bounds (default 100 per page,
 * ordered by `type` ascending).
 */
import type { ListingParams, MatchMode } from "./listing";
import { DNS_RECORDS_LISTING, isMatchMode, parseListingParams } from "./listing";
import type { QueryInput, Validation, ValidationIssue } from "./validation";
import { booleanParam, characterLength, oneOf, singleParam, toSearchParams } from "./validation";

/** DNS record types the listing can filter on. */
export const DNS_RECORD_TYPES = [
  "A",
  "AAAA",
  "CAA",
  "CERT",
  "CNAME",
  "DNSKEY",
  "DS",
  "HTTPS",
  "LOC",
  "MX",
  "NAPTR",
  "NS",
  "OPENPGPKEY",
  "PTR",
  "SMIMEA",
  "SRV",
  "SSHFP",
  "SVCB",
  "TLSA",
  "TXT",
  "URI",
] as const;
/** One of {@link DNS_RECORD_TYPES}. */
export type DnsRecordType = (typeof DNS_RECORD_TYPES)[number];
/**
 * True for a DNS record type (upper case, as the API spells them).
 *
 * @example
 * ```ts
 * isDnsRecordType("CNAME"); // true
 * isDnsRecordType("cname"); // false
 * ```
 */
export const isDnsRecordType = oneOf(DNS_RECORD_TYPES);

/** String sub-filters: `x`, `x.exact`, `x.contains`, `x.startswith`, `x.endswith`. */
export interface TextFilter {
  readonly value?: string;
  readonly exact?: string;
  readonly contains?: string;
  readonly startswith?: string;
  readonly endswith?: string;
}

/** {@link TextFilter} plus `.present` / `.absent`, for `comment` and `tag`. */
export interface PresenceTextFilter extends TextFilter {
  readonly present?: true;
  readonly absent?: true;
}

/** A validated DNS record list query. */
export interface DnsRecordListQuery {
  readonly name?: TextFilter;
  readonly type?: DnsRecordType;
  /** `content` and its sub-filters; every comparison ignores case. */
  readonly content?: TextFilter;
  readonly proxied?: boolean;
  readonly comment?: PresenceTextFilter;
  readonly tag?: PresenceTextFilter;
  readonly match: MatchMode;
  readonly tagMatch: MatchMode;
  readonly search?: string;
  readonly listing: ListingParams;
}

const MAX_NAME = 255;
const TEXT_SUFFIXES = ["exact", "contains", "startswith", "endswith"] as const;

function readTextFilter(
  query: URLSearchParams,
  base: string,
  issues: ValidationIssue[],
  maxLength: number | undefined,
  withPresence: boolean,
): PresenceTextFilter | undefined {
  const out: { -readonly [K in keyof PresenceTextFilter]: PresenceTextFilter[K] } = {};
  const check = (param: string, raw: string | undefined): string | undefined => {
    if (raw !== undefined && maxLength !== undefined && characterLength(raw) > maxLength) {
      issues.push({ path: param, message: `${param} must be at most ${maxLength} characters long.` });
      return undefined;
    }
    return raw;
  };
  const value = check(base, singleParam(query, base, issues));
  if (value !== undefined) out.value = value;
  for (const suffix of TEXT_SUFFIXES) {
    const param = `${base}.${suffix}`;
    const v = check(param, singleParam(query, param, issues));
    if (v !== undefined) out[suffix] = v;
  }
  if (withPresence) {
    // The value of `.present`/`.absent` carries no meaning; the parameter being there does.
    if (query.has(`${base}.present`)) out.present = true;
    if (query.has(`${base}.absent`)) out.absent = true;
    if (out.present && out.absent) {
      issues.push({
        path: `${base}.absent`,
        message: `${base}.present and ${base}.absent cannot be combined; keep one.`,
      });
    }
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/**
 * Parses and validates a DNS record list query.
 *
 * @example
 * ```ts
 * parseDnsRecordListQuery("type=CNAME&name.endswith=.example.com&per_page=100&page=1");
 * // { ok: true, value: { type: "CNAME", name: { endswith: ".example.com" }, match: "all", tagMatch: "all",
 * //   listing: { page: 1, per_page: 100, order: "type", direction: "asc" } } }
 * ```
 */
export function parseDnsRecordListQuery(input: QueryInput): Validation<DnsRecordListQuery> {
  const query = toSearchParams(input);
  const issues: ValidationIssue[] = [];
  const listing = parseListingParams(query, DNS_RECORDS_LISTING);
  if (!listing.ok) issues.push(...listing.errors);
  const name = readTextFilter(query, "name", issues, MAX_NAME, false);
  const type = singleParam(query, "type", issues);
  if (type !== undefined && !isDnsRecordType(type)) {
    issues.push({ path: "type", message: `type must be one of ${DNS_RECORD_TYPES.join(", ")}.` });
  }
  // The SDK's `content: { exact, contains, startswith, endswith }` arrives as `content.<op>`; left
  // unread, each would be ignored and the listing would answer with every record.
  const content = readTextFilter(query, "content", issues, undefined, false);
  const proxied = booleanParam(query, "proxied", issues);
  const comment = readTextFilter(query, "comment", issues, undefined, true);
  const tag = readTextFilter(query, "tag", issues, undefined, true);
  // A bare tag filter is `name:value`, or just `name` to match any value of that tag.
  if (tag?.value?.startsWith(":")) {
    issues.push({ path: "tag", message: "tag must be a tag name, optionally followed by :value." });
  }
  const match = singleParam(query, "match", issues) ?? "all";
  if (!isMatchMode(match)) issues.push({ path: "match", message: "match must be any or all." });
  const tagMatch = singleParam(query, "tag_match", issues) ?? "all";
  if (!isMatchMode(tagMatch)) issues.push({ path: "tag_match", message: "tag_match must be any or all." });
  const search = singleParam(query, "search", issues);
  // Shadowed records (records below an NS delegation) are not modelled. Left unread, these
  // filters would answer with every record, as if each matched; refused instead.
  for (const name of ["shadowed_by_name", "shadowing_name"]) {
    if (query.has(name)) {
      issues.push({
        path: name,
        message: `${name} is not supported here: this server does not model shadowed records (records below an NS delegation); list without it and filter by name.`,
      });
    }
  }
  if (booleanParam(query, "include_shadow_metadata", issues) === true) {
    issues.push({
      path: "include_shadow_metadata",
      message:
        "include_shadow_metadata=true is not supported here: this server does not model shadowed records, so records carry no shadow metadata; leave it out or set it to false.",
    });
  }

  if (issues.length > 0 || !listing.ok || !isMatchMode(match) || !isMatchMode(tagMatch)) {
    return { ok: false, errors: issues };
  }
  return {
    ok: true,
    value: {
      ...(name === undefined ? {} : { name }),
      ...(type !== undefined && isDnsRecordType(type) ? { type } : {}),
      ...(content === undefined ? {} : { content }),
      ...(proxied === undefined ? {} : { proxied }),
      ...(comment === undefined ? {} : { comment }),
      ...(tag === undefined ? {} : { tag }),
      match,
      tagMatch,
      ...(search === undefined ? {} : { search }),
      listing: listing.value,
    },
  };
}
