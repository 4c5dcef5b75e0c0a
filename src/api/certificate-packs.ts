/**
 * Certificate packs and certificates (http-models.md §1.4, specification §2.4): enumerations, validators with
 * microsecond-`Z` timestamps, and the list query (`status=all` or the specification's `ssl_status=all`).
 */

import { isMicrosecondTimestamp } from "./ids";
import type { ListingParams } from "./listing";
import { CERTIFICATE_PACKS_LISTING, parseListingParams } from "./listing";
import type { QueryInput, Validation, ValidationIssue } from "./validation";
import { isRecord, joinPath, oneOf, singleParam, toSearchParams } from "./validation";

/** Pack types. */
export const CERTIFICATE_PACK_TYPES = [
  "mh_custom",
  "managed_hostname",
  "sni_custom",
  "universal",
  "advanced",
  "total_tls",
  "keyless",
  "legacy_custom",
] as const;
/** One of {@link CERTIFICATE_PACK_TYPES}. */
export type CertificatePackType = (typeof CERTIFICATE_PACK_TYPES)[number];
/**
 * True for a pack type.
 *
 * @example
 * ```ts
 * isCertificatePackType("universal"); // true
 * ```
 */
export const isCertificatePackType = oneOf(CERTIFICATE_PACK_TYPES);

/** Pack statuses. */
export const CERTIFICATE_PACK_STATUSES = [
  "initializing",
  "pending_validation",
  "deleted",
  "pending_issuance",
  "pending_deployment",
  "pending_deletion",
  "pending_expiration",
  "expired",
  "active",
  "initializing_timed_out",
  "validation_timed_out",
  "issuance_timed_out",
  "deployment_timed_out",
  "deletion_timed_out",
  "pending_cleanup",
  "staging_deployment",
  "staging_active",
  "deactivating",
  "inactive",
  "backup_issued",
  "holding_deployment",
] as const;
/** One of {@link CERTIFICATE_PACK_STATUSES}. */
export type CertificatePackStatus = (typeof CERTIFICATE_PACK_STATUSES)[number];
/**
 * True for a pack status.
 *
 * @example
 * ```ts
 * isCertificatePackStatus("pending_validation"); // true
 * ```
 */
export const isCertificatePackStatus = oneOf(CERTIFICATE_PACK_STATUSES);

/**
 * Certificate authorities the published schema's certificate-pack object allows. (`digicert` appears
 * in one older variant of the schema only, and is refused, as the current schema and the SDK do.)
 */
export const CERTIFICATE_AUTHORITIES = ["google", "lets_encrypt", "ssl_com"] as const;
/** One of {@link CERTIFICATE_AUTHORITIES}. */
export type CertificateAuthority = (typeof CERTIFICATE_AUTHORITIES)[number];
/**
 * True for a certificate authority.
 *
 * @example
 * ```ts
 * isCertificateAuthority("lets_encrypt"); // true
 * ```
 */
export const isCertificateAuthority = oneOf(CERTIFICATE_AUTHORITIES);

/** Domain-control validation methods. */
export const VALIDATION_METHODS = ["txt", "http", "email"] as const;
/** One of {@link VALIDATION_METHODS}. */
export type ValidationMethod = (typeof VALIDATION_METHODS)[number];
/**
 * True for a validation method.
 *
 * @example
 * ```ts
 * isValidationMethod("txt"); // true
 * ```
 */
export const isValidationMethod = oneOf(VALIDATION_METHODS);

/** Allowed validity periods in days. */
export const VALIDITY_DAYS = [14, 30, 90, 365] as const;
/** One of {@link VALIDITY_DAYS}. */
export type ValidityDays = (typeof VALIDITY_DAYS)[number];
/**
 * True for an allowed validity period.
 *
 * @example
 * ```ts
 * isValidityDays(90); // true
 * ```
 */
export const isValidityDays = oneOf(VALIDITY_DAYS);

/** Certificate bundle methods; `ubiquitous` is the default. */
export const BUNDLE_METHODS = ["ubiquitous", "optimal", "force"] as const;
/** One of {@link BUNDLE_METHODS}. */
export type BundleMethod = (typeof BUNDLE_METHODS)[number];
/**
 * True for a bundle method.
 *
 * @example
 * ```ts
 * isBundleMethod("ubiquitous"); // true
 * ```
 */
export const isBundleMethod = oneOf(BUNDLE_METHODS);

/**
 * The OAS `certificate_status` values. The certificate's `status` field itself is a free string on
 * the wire, so the validator does not enforce this list; it is exported for callers that want to.
 */
export const CERTIFICATE_STATUSES = [
  "initializing",
  "authorizing",
  "active",
  "expired",
  "issuing",
  "timing_out",
  "pending_deployment",
] as const;
/** One of {@link CERTIFICATE_STATUSES}. */
export type CertificateStatus = (typeof CERTIFICATE_STATUSES)[number];
/**
 * True for a documented certificate status.
 *
 * @example
 * ```ts
 * isCertificateStatus("active"); // true
 * ```
 */
export const isCertificateStatus = oneOf(CERTIFICATE_STATUSES);

/** A certificate inside a pack. */
export interface Certificate {
  readonly id: string;
  readonly hosts: readonly string[];
  readonly status: string;
  readonly issuer?: string;
  readonly signature?: string;
  readonly bundle_method?: BundleMethod;
  readonly zone_id?: string;
  readonly uploaded_on?: string;
  readonly modified_on?: string;
  readonly expires_on?: string;
  readonly priority?: number | null;
  readonly geo_restrictions?: { readonly label?: "us" | "eu" | "highest_security" };
}

/** A certificate pack as the listing returns it. */
export interface CertificatePack {
  readonly id: string;
  readonly type: CertificatePackType;
  readonly hosts: readonly string[];
  readonly status: CertificatePackStatus;
  readonly primary_certificate?: string;
  /** Required by the published schema (an empty array when the pack has no certificate yet). */
  readonly certificates: readonly Certificate[];
  readonly created_on?: string;
  readonly validity_days?: ValidityDays;
  readonly validation_method?: ValidationMethod;
  readonly certificate_authority?: CertificateAuthority;
  readonly cloudflare_branding?: boolean;
}

const isGeoLabel = oneOf(["us", "eu", "highest_security"] as const);

function checkHosts(value: unknown, path: string, issues: ValidationIssue[]): void {
  if (!Array.isArray(value) || !value.every((h) => typeof h === "string" && h.length > 0)) {
    issues.push({ path, message: `${path} must be an array of host names.` });
  }
}

function checkTimestamp(record: Record<string, unknown>, key: string, prefix: string, issues: ValidationIssue[]) {
  if (record[key] === undefined) return;
  if (!isMicrosecondTimestamp(record[key])) {
    const path = joinPath(prefix, key);
    issues.push({
      path,
      message: `${path} must be an ISO 8601 timestamp with six fractional digits and Z, like 2022-12-09T23:11:06.010263Z.`,
    });
  }
}

function checkCertificate(value: unknown, prefix: string, issues: ValidationIssue[]): void {
  if (!isRecord(value)) {
    issues.push({ path: prefix, message: `${prefix || "A certificate"} must be an object.` });
    return;
  }
  if (typeof value.id !== "string" || value.id.length === 0) {
    issues.push({ path: joinPath(prefix, "id"), message: `${joinPath(prefix, "id")} must be a non-empty string.` });
  }
  checkHosts(value.hosts, joinPath(prefix, "hosts"), issues);
  if (typeof value.status !== "string") {
    issues.push({ path: joinPath(prefix, "status"), message: `${joinPath(prefix, "status")} must be a string.` });
  }
  for (const key of ["issuer", "signature", "zone_id"] as const) {
    if (value[key] !== undefined && typeof value[key] !== "string") {
      issues.push({ path: joinPath(prefix, key), message: `${joinPath(prefix, key)} must be a string.` });
    }
  }
  if (value.bundle_method !== undefined && !isBundleMethod(value.bundle_method)) {
    const p = joinPath(prefix, "bundle_method");
    issues.push({ path: p, message: `${p} must be one of ${BUNDLE_METHODS.join(", ")}.` });
  }
  for (const key of ["uploaded_on", "modified_on", "expires_on"] as const) checkTimestamp(value, key, prefix, issues);
  if (value.priority !== undefined && value.priority !== null && typeof value.priority !== "number") {
    const p = joinPath(prefix, "priority");
    issues.push({ path: p, message: `${p} must be a number or null.` });
  }
  if (value.geo_restrictions !== undefined) {
    const g = value.geo_restrictions;
    if (!isRecord(g) || (g.label !== undefined && !isGeoLabel(g.label))) {
      const p = joinPath(prefix, "geo_restrictions");
      issues.push({ path: p, message: `${p}.label must be us, eu or highest_security.` });
    }
  }
}

/**
 * Validates a certificate object.
 *
 * @example
 * ```ts
 * validateCertificate({ id: "7e7b8deba8538af625850b7b2530034c", hosts: ["example.com"], status: "active",
 *   uploaded_on: "2022-12-09T23:11:06.010263Z" }).ok; // true
 * ```
 */
export function validateCertificate(value: unknown): Validation<Certificate> {
  const issues: ValidationIssue[] = [];
  checkCertificate(value, "", issues);
  return issues.length > 0 ? { ok: false, errors: issues } : { ok: true, value: value as Certificate };
}

/**
 * Validates a certificate pack, including each certificate in it and that `primary_certificate`
 * names one of them when both are present.
 *
 * @example
 * ```ts
 * validateCertificatePack(pack).ok;
 * ```
 */
export function validateCertificatePack(value: unknown): Validation<CertificatePack> {
  if (!isRecord(value)) return { ok: false, errors: [{ path: "", message: "A certificate pack must be an object." }] };
  const issues: ValidationIssue[] = [];
  // 32 characters (the schema's identifier) or a 36-character UUID (its cert_pack_uuid, and real packs).
  if (typeof value.id !== "string" || value.id.length === 0 || value.id.length > 36)
    issues.push({ path: "id", message: "id must be a string of 1 to 36 characters." });
  if (!isCertificatePackType(value.type)) {
    issues.push({ path: "type", message: `type must be one of ${CERTIFICATE_PACK_TYPES.join(", ")}.` });
  }
  checkHosts(value.hosts, "hosts", issues);
  if (!isCertificatePackStatus(value.status)) {
    issues.push({ path: "status", message: `status must be one of ${CERTIFICATE_PACK_STATUSES.join(", ")}.` });
  }
  if (value.primary_certificate !== undefined && typeof value.primary_certificate !== "string") {
    issues.push({ path: "primary_certificate", message: "primary_certificate must be a string." });
  }
  checkTimestamp(value, "created_on", "", issues);
  if (value.validity_days !== undefined && !isValidityDays(value.validity_days)) {
    issues.push({ path: "validity_days", message: `validity_days must be one of ${VALIDITY_DAYS.join(", ")}.` });
  }
  if (value.validation_method !== undefined && !isValidationMethod(value.validation_method)) {
    issues.push({
      path: "validation_method",
      message: `validation_method must be one of ${VALIDATION_METHODS.join(", ")}.`,
    });
  }
  if (value.certificate_authority !== undefined && !isCertificateAuthority(value.certificate_authority)) {
    issues.push({
      path: "certificate_authority",
      message: `certificate_authority must be one of ${CERTIFICATE_AUTHORITIES.join(", ")}.`,
    });
  }
  if (value.cloudflare_branding !== undefined && typeof value.cloudflare_branding !== "boolean") {
    issues.push({ path: "cloudflare_branding", message: "cloudflare_branding must be true or false." });
  }
  if (!Array.isArray(value.certificates)) {
    issues.push({ path: "certificates", message: "certificates is required and must be an array." });
  } else {
    value.certificates.forEach((c, i) => {
      checkCertificate(c, joinPath("certificates", i), issues);
    });
    const ids = value.certificates.map((c) => (isRecord(c) ? c.id : undefined));
    if (typeof value.primary_certificate === "string" && ids.length > 0 && !ids.includes(value.primary_certificate)) {
      issues.push({
        path: "primary_certificate",
        message: "primary_certificate must be the id of one of certificates.",
      });
    }
  }
  return issues.length > 0 ? { ok: false, errors: issues } : { ok: true, value: value as unknown as CertificatePack };
}

/** Deployment targets of the list query. */
export const CERTIFICATE_PACK_DEPLOYS = ["staging", "production"] as const;
/** One of {@link CERTIFICATE_PACK_DEPLOYS}. */
export type CertificatePackDeploy = (typeof CERTIFICATE_PACK_DEPLOYS)[number];
/**
 * True for a deploy target.
 *
 * @example
 * ```ts
 * isCertificatePackDeploy("staging"); // true
 * ```
 */
export const isCertificatePackDeploy = oneOf(CERTIFICATE_PACK_DEPLOYS);

/** A validated certificate pack list query. */
export interface CertificatePackListQuery {
  /** True when `status=all` or `ssl_status=all` asked for packs in every status, not just active ones. */
  readonly all: boolean;
  readonly deploy?: CertificatePackDeploy;
  readonly listing: ListingParams;
}

/**
 * Parses the certificate pack list query. The OAS and SDK name the parameter `status`, the docs
 * and the specification's `ssl_status`; both are accepted, and `all` is the only value either takes.
 *
 * @example
 * ```ts
 * parseCertificatePackListQuery("ssl_status=all"); // { ok: true, value: { all: true, listing: { page: 1, per_page: 20, direction: "asc" } } }
 * ```
 */
export function parseCertificatePackListQuery(input: QueryInput): Validation<CertificatePackListQuery> {
  const query = toSearchParams(input);
  const issues: ValidationIssue[] = [];
  const listing = parseListingParams(query, CERTIFICATE_PACKS_LISTING);
  if (!listing.ok) issues.push(...listing.errors);
  let all = false;
  for (const param of ["status", "ssl_status"] as const) {
    const v = singleParam(query, param, issues);
    if (v === undefined) continue;
    if (v === "all") all = true;
    else issues.push({ path: param, message: `${param} must be all, or be left out to list active packs.` });
  }
  const deploy = singleParam(query, "deploy", issues);
  if (deploy !== undefined && !isCertificatePackDeploy(deploy)) {
    issues.push({ path: "deploy", message: "deploy must be staging or production." });
  }
  if (issues.length > 0 || !listing.ok) return { ok: false, errors: issues };
  return {
    ok: true,
    value: {
      all,
      ...(deploy !== undefined && isCertificatePackDeploy(deploy) ? { deploy } : {}),
      listing: listing.value,
    },
  };
}
