/**
 * What makes a DNS record valid in a zone, as the DNS records API checks it: the name (read
 * relative to the zone, in Punycode), the content per type, the TTL per plan, which types can be
 * proxied, and which records cannot coexist. Used when seeding zones from a fixture, the only way
 * records are made here.
 */
import type { DnsRecordType } from "./dns-records";
import { isDnsRecordType } from "./dns-records";
import type { Validation, ValidationIssue } from "./validation";
import { characterLength, isRecord } from "./validation";

/** The record types the proxy can serve (the only ones whose `proxied` may be true). */
export const PROXIABLE_DNS_RECORD_TYPES: readonly DnsRecordType[] = ["A", "AAAA", "CNAME"];

/**
 * The types whose published schema requires structured `data` (their `content` is derived from it),
 * rather than `content`.
 */
export const DATA_DNS_RECORD_TYPES: readonly DnsRecordType[] = [
  "CAA",
  "CERT",
  "DNSKEY",
  "DS",
  "HTTPS",
  "LOC",
  "NAPTR",
  "SMIMEA",
  "SRV",
  "SSHFP",
  "SVCB",
  "TLSA",
  "URI",
];

/** The longest TXT content the API accepts, in characters. */
export const MAX_TXT_CONTENT_CHARS = 2048;

/** A record's fields as a fixture or a request gives them. */
export const DNS_RECORD_INPUT_KEYS = [
  "id",
  "type",
  "name",
  "content",
  "data",
  "ttl",
  "proxied",
  "comment",
  "tags",
  "priority",
] as const;

/** A record's checked fields: the name normalised, defaults applied. */
export interface CheckedDnsRecord {
  readonly type: DnsRecordType;
  /** The full name: lower case, without a trailing dot, inside the zone. */
  readonly name: string;
  readonly content: string;
  /** Structured data, for the types the published schema gives it (CAA, SRV, …). */
  readonly data?: Readonly<Record<string, string | number>>;
  readonly ttl: number;
  readonly proxied: boolean;
  readonly proxiable: boolean;
  readonly comment: string | null;
  readonly tags: readonly string[];
  readonly priority?: number;
}

/** The zone a record belongs to, as far as its checks need it. */
export interface DnsRecordZone {
  /** The zone's name (lower case). */
  readonly name: string;
  /** Enterprise zones may use TTLs down to 30 seconds; others down to 60. */
  readonly enterprise: boolean;
}

const LABEL_CHARS = /^[a-z0-9_-]+$/;
const IPV4 = /^(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}$/;

/**
 * True for a dotted-quad IPv4 address, without leading zeros.
 *
 * @example
 * ```ts
 * isIpv4Address("192.0.2.1"); // true
 * isIpv4Address("192.0.2.01"); // false
 * ```
 */
export function isIpv4Address(text: string): boolean {
  return IPV4.test(text);
}

/**
 * True for an IPv6 address in any of its textual forms (an embedded IPv4 tail included, no zone index).
 *
 * @example
 * ```ts
 * isIpv6Address("2001:db8::1"); // true
 * isIpv6Address("::ffff:192.0.2.1"); // true
 * isIpv6Address("1.2.3.4::"); // false
 * ```
 */
export function isIpv6Address(text: string): boolean {
  if (!/^[0-9A-Fa-f:.]+$/.test(text) || !text.includes(":")) return false;
  const halves = text.split("::");
  if (halves.length > 2) return false;
  const groups = (part: string): string[] | null => (part === "" ? [] : part.split(":"));
  const head = groups(halves[0] ?? "");
  const tail = halves.length === 2 ? groups(halves[1] ?? "") : [];
  if (head === null || tail === null) return false;
  const all = [...head, ...tail];
  // An IPv4 tail must end the text: `1.2.3.4::` is not an address.
  const lastMayBeIpv4 = halves.length === 1 || tail.length > 0;
  let count = 0;
  for (let i = 0; i < all.length; i++) {
    const g = all[i] ?? "";
    if (i === all.length - 1 && lastMayBeIpv4 && g.includes(".")) {
      if (!isIpv4Address(g)) return false;
      count += 2;
    } else if (/^[0-9A-Fa-f]{1,4}$/.test(g)) {
      count += 1;
    } else {
      return false;
    }
  }
  return halves.length === 2 ? count < 8 : count === 8;
}

/** The problem with a host name (content of CNAME, MX, NS, PTR), or `undefined`. */
function hostNameProblem(text: string, what: string): string | undefined {
  const host = text.endsWith(".") ? text.slice(0, -1) : text;
  const problem = `${what} must be a host name in Punycode: labels of letters, digits, hyphens and underscores of at most 63 characters, at most 253 in all.`;
  if (host.length === 0 || host.length > 253) return problem;
  for (const label of host.toLowerCase().split(".")) {
    if (label.length === 0 || label.length > 63 || !LABEL_CHARS.test(label)) return problem;
  }
  return undefined;
}

/**
 * Reads a record name as the API does: `@` is the zone apex, a trailing dot is dropped, letters are
 * lower-cased, and a name that is not the zone or inside it is read relative to the zone (`www`
 * becomes `www.example.com`). The name must be in Punycode: labels of letters, digits, hyphens and
 * underscores, with `*` allowed only as the whole first label.
 *
 * @example
 * ```ts
 * normaliseDnsRecordName("WWW.Example.com.", "example.com"); // { ok: true, value: "www.example.com" }
 * normaliseDnsRecordName("@", "example.com"); // { ok: true, value: "example.com" }
 * normaliseDnsRecordName("mail", "example.com"); // { ok: true, value: "mail.example.com" }
 * ```
 */
export function normaliseDnsRecordName(name: unknown, zoneName: string): Validation<string> {
  const fail = (message: string): Validation<string> => ({ ok: false, errors: [{ path: "name", message }] });
  if (typeof name !== "string" || name.length === 0) return fail("name must be a non-empty string.");
  if (characterLength(name) > 255) return fail("name must be at most 255 characters long.");
  let n = name.toLowerCase();
  if (n.endsWith(".") && n.length > 1) n = n.slice(0, -1);
  if (n === "@") n = zoneName;
  else if (n !== zoneName && !n.endsWith(`.${zoneName}`)) n = `${n}.${zoneName}`;
  const labels = n.split(".");
  const shape =
    "name must be the zone's name, @, or a name in the zone in Punycode (xn--…): labels of letters, digits, hyphens and underscores of at most 63 characters, * only as the whole first label, at most 253 characters in all.";
  if (n.length > 253) return fail(shape);
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i] ?? "";
    if (label === "*" && i === 0) continue;
    if (label.length === 0 || label.length > 63 || !LABEL_CHARS.test(label)) return fail(shape);
  }
  return { ok: true, value: n };
}

function checkData(type: DnsRecordType, data: unknown, issues: ValidationIssue[]): Record<string, string | number> {
  if (!isRecord(data) || !Object.values(data).every((v) => typeof v === "string" || typeof v === "number")) {
    issues.push({ path: "data", message: `data is required for ${type} records: an object of strings and numbers.` });
    return {};
  }
  const range = (key: string, max: number) => {
    const v = data[key];
    if (v !== undefined && (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > max)) {
      issues.push({ path: `data.${key}`, message: `data.${key} must be an integer from 0 to ${max}.` });
    }
  };
  if (type === "CAA") {
    range("flags", 255);
    if (!["issue", "issuewild", "iodef"].includes(String(data.tag))) {
      issues.push({ path: "data.tag", message: "data.tag must be issue, issuewild or iodef." });
    }
    if (typeof data.value !== "string") issues.push({ path: "data.value", message: "data.value must be a string." });
  }
  if (type === "SRV" || type === "URI") {
    for (const key of ["priority", "weight", "port"]) range(key, 65535);
  }
  return data as Record<string, string | number>;
}

/** The content the API shows for a record given by `data`, for the types whose form is simple. */
function contentFromData(type: DnsRecordType, data: Readonly<Record<string, string | number>>): string {
  if (type === "CAA") return `${data.flags ?? 0} ${data.tag ?? ""} "${data.value ?? ""}"`;
  if (type === "SRV") return `${data.weight ?? 0} ${data.port ?? 0} ${data.target ?? ""}`;
  if (type === "URI") return `${data.weight ?? 0} "${data.target ?? ""}"`;
  return "";
}

function checkContent(type: DnsRecordType, content: string, name: string, issues: ValidationIssue[]): void {
  const bad = (message: string) => issues.push({ path: "content", message });
  switch (type) {
    case "A":
      if (!isIpv4Address(content)) bad("content of an A record must be an IPv4 address, e.g. 192.0.2.1.");
      return;
    case "AAAA":
      if (!isIpv6Address(content)) bad("content of an AAAA record must be an IPv6 address, e.g. 2001:db8::1.");
      return;
    case "CNAME": {
      const problem = hostNameProblem(content, "content of a CNAME record");
      if (problem !== undefined || isIpv4Address(content) || isIpv6Address(content)) {
        bad(problem ?? "content of a CNAME record must be a host name, not an address; use an A or AAAA record.");
      } else if (content.toLowerCase().replace(/\.$/, "") === name) {
        bad("content of a CNAME record cannot be its own name.");
      }
      return;
    }
    case "MX":
    case "NS":
    case "PTR": {
      const problem = hostNameProblem(content, `content of an ${type} record`);
      if (problem !== undefined) bad(problem);
      return;
    }
    case "TXT":
      if (characterLength(content) > MAX_TXT_CONTENT_CHARS) {
        bad(`content of a TXT record must be at most ${MAX_TXT_CONTENT_CHARS} characters long.`);
      }
      return;
    default:
      return;
  }
}

/**
 * Checks one DNS record against its zone: the type, the name (normalised with
 * {@link normaliseDnsRecordName}), the content for the type (an IPv4 address for A, IPv6 for AAAA,
 * a host name for CNAME, MX, NS and PTR, at most 2,048 characters for TXT), `data` for the types
 * the schema gives structured data, a TTL of 1 (automatic) or 60 to 86,400 seconds (30 on
 * Enterprise), `proxied` only on A, AAAA and CNAME, a `priority` from 0 to 65,535 (required for MX
 * and URI), and no field the API does not know. Paths in the issues are relative to the record.
 *
 * @example
 * ```ts
 * checkDnsRecord({ type: "A", name: "www", content: "192.0.2.1", proxied: true }, { name: "example.com", enterprise: false });
 * // { ok: true, value: { type: "A", name: "www.example.com", content: "192.0.2.1", ttl: 1, proxied: true, … } }
 * ```
 */
export function checkDnsRecord(value: unknown, zone: DnsRecordZone): Validation<CheckedDnsRecord> {
  if (!isRecord(value)) return { ok: false, errors: [{ path: "", message: "A record must be an object." }] };
  const issues: ValidationIssue[] = [];
  for (const key of Object.keys(value)) {
    if (!(DNS_RECORD_INPUT_KEYS as readonly string[]).includes(key)) {
      issues.push({
        path: key,
        message: `${key} is not a DNS record field; allowed: ${DNS_RECORD_INPUT_KEYS.join(", ")}.`,
      });
    }
  }
  const type = value.type;
  if (!isDnsRecordType(type)) {
    issues.push({ path: "type", message: "type is not a DNS record type." });
    return { ok: false, errors: issues };
  }
  const name = normaliseDnsRecordName(value.name, zone.name);
  if (!name.ok) issues.push(...name.errors);
  const usesData = DATA_DNS_RECORD_TYPES.includes(type);
  const data = usesData ? checkData(type, value.data, issues) : undefined;
  if (!usesData && value.data !== undefined) {
    issues.push({ path: "data", message: `data is not taken by ${type} records; give content.` });
  }
  let content = "";
  if (typeof value.content === "string" && value.content.length > 0) {
    content = value.content;
    if (name.ok) checkContent(type, content, name.value, issues);
  } else if (value.content !== undefined || !usesData) {
    issues.push({ path: "content", message: "content must be a non-empty string." });
  } else if (data !== undefined) {
    content = contentFromData(type, data);
  }
  const ttl = value.ttl ?? 1;
  const minTtl = zone.enterprise ? 30 : 60;
  if (typeof ttl !== "number" || !Number.isInteger(ttl) || (ttl !== 1 && (ttl < minTtl || ttl > 86400))) {
    issues.push({
      path: "ttl",
      message: `ttl must be 1 (automatic) or ${minTtl} to 86400 seconds${zone.enterprise ? "" : " (30 on Enterprise zones)"}.`,
    });
  }
  const proxiable = PROXIABLE_DNS_RECORD_TYPES.includes(type);
  if (value.proxied !== undefined && typeof value.proxied !== "boolean") {
    issues.push({ path: "proxied", message: "proxied must be true or false." });
  } else if (value.proxied === true && !proxiable) {
    issues.push({ path: "proxied", message: `${type} records cannot be proxied; only A, AAAA and CNAME records can.` });
  }
  if (value.comment !== undefined && value.comment !== null && typeof value.comment !== "string") {
    issues.push({ path: "comment", message: "comment must be a string or null." });
  }
  const tags = value.tags ?? [];
  if (!Array.isArray(tags) || !tags.every((t) => typeof t === "string")) {
    issues.push({ path: "tags", message: "tags must be an array of name:value strings." });
  }
  const priority = value.priority;
  if (
    priority !== undefined &&
    (typeof priority !== "number" || !Number.isInteger(priority) || priority < 0 || priority > 65535)
  ) {
    issues.push({ path: "priority", message: "priority must be an integer from 0 to 65535." });
  } else if (priority === undefined && (type === "MX" || type === "URI")) {
    issues.push({
      path: "priority",
      message: `priority is required for ${type} records (0 to 65535; lower is preferred).`,
    });
  }
  if (issues.length > 0 || !name.ok) return { ok: false, errors: issues };
  return {
    ok: true,
    value: {
      type,
      name: name.value,
      content,
      ...(data === undefined ? {} : { data }),
      ttl: ttl as number,
      proxied: value.proxied === true,
      proxiable,
      comment: (value.comment as string | null | undefined) ?? null,
      tags: tags as string[],
      ...(typeof priority === "number" ? { priority } : {}),
    },
  };
}

// Addresses and host names compare without case; TXT and the other types' content is compared as it is.
const CASELESS_CONTENT: readonly DnsRecordType[] = ["A", "AAAA", "CNAME", "MX", "NS", "PTR"];

function sameContent(type: DnsRecordType, a: string, b: string): boolean {
  return CASELESS_CONTENT.includes(type)
    ? a.toLowerCase().replace(/\.$/, "") === b.toLowerCase().replace(/\.$/, "")
    : a === b;
}

/**
 * The problem a record would cause next to records already in the zone with the same name (pass
 * those, or all of them), or `undefined`: a CNAME cannot share its name with any other record, and
 * two records of the same type, name and content are one record twice.
 *
 * @example
 * ```ts
 * dnsRecordConflict({ type: "CNAME", name: "www.example.com", content: "example.com" }, [aRecordForWww]);
 * // "An A, AAAA, or CNAME record with that host already exists. …"
 * ```
 */
export function dnsRecordConflict(
  record: Pick<CheckedDnsRecord, "type" | "name" | "content">,
  existing: readonly Pick<CheckedDnsRecord, "type" | "name" | "content">[],
): string | undefined {
  for (const other of existing) {
    if (other.name !== record.name) continue;
    if (other.type === record.type && sameContent(record.type, other.content, record.content)) {
      return `An identical record already exists: ${record.type} ${record.name} ${record.content}; list it once.`;
    }
    if (record.type === "CNAME" || other.type === "CNAME") {
      return `An A, AAAA, or CNAME record with that host already exists: a CNAME record cannot share its name (${record.name}) with another record.`;
    }
  }
  return undefined;
}
