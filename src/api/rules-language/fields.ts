/**
 * The value types of the rules language and the standard field catalogue.
 *
 * Types use wirefilter's names (`Bytes` for Cloudflare's "String", `Int` for "Integer"/"Number")
 * because the error messages quote them and must match wirefilter's text.
 */

/** The primitive value types, in wirefilter's order (which also orders them in error messages). */
export const PRIMITIVE_TYPES = ["Bool", "Bytes", "Int", "Ip"] as const;

/**
 * A primitive value type.
 *
 * @example
 * const t: PrimitiveType = "Bytes";
 */
export type PrimitiveType = (typeof PRIMITIVE_TYPES)[number];

/**
 * A value type: a primitive, or an array or map of another type.
 *
 * @example
 * const headers: ValueType = { kind: "Map", of: { kind: "Array", of: "Bytes" } };
 */
export type ValueType =
  | PrimitiveType
  | { readonly kind: "Array"; readonly of: ValueType }
  | { readonly kind: "Map"; readonly of: ValueType };

/**
 * Builds `Array<of>`.
 *
 * @example
 * arrayOf("Bool"); // { kind: "Array", of: "Bool" }
 */
export function arrayOf(of: ValueType): ValueType {
  return { kind: "Array", of };
}

/**
 * Builds `Map<of>`.
 *
 * @example
 * mapOf(arrayOf("Bytes")); // Map<Array<Bytes>>
 */
export function mapOf(of: ValueType): ValueType {
  return { kind: "Map", of };
}

/**
 * Renders a type the way wirefilter's messages do: `Bytes`, `Array<Bool>`, `Map<Array<Bytes>>`.
 *
 * @example
 * typeToString(arrayOf("Bool")); // "Array<Bool>"
 */
export function typeToString(type: ValueType): string {
  return typeof type === "string" ? type : `${type.kind}<${typeToString(type.of)}>`;
}

/**
 * Structural type equality.
 *
 * @example
 * sameType(arrayOf("Int"), arrayOf("Int")); // true
 */
export function sameType(a: ValueType, b: ValueType): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  return a.kind === b.kind && sameType(a.of, b.of);
}

/**
 * The element type of an array or map, or `undefined` for a primitive (wirefilter's `Type::next`).
 *
 * @example
 * elementType(mapOf("Int")); // "Int"
 */
export function elementType(type: ValueType): ValueType | undefined {
  return typeof type === "string" ? undefined : type.of;
}

const BYTES: ValueType = "Bytes";
const INT: ValueType = "Int";
const BOOL: ValueType = "Bool";
const IP: ValueType = "Ip";
const BYTES_ARRAY = arrayOf(BYTES);
const INT_ARRAY = arrayOf(INT);

// Grouped by type, as in the reference (Cloudflare docs `src/content/fields/index.yaml`), so that a
// reviewer can check a field against the docs table it came from.
const BYTES_FIELDS = [
  "http.cookie",
  "http.host",
  "http.referer",
  "http.request.full_uri",
  "http.request.method",
  "http.request.uri",
  "http.request.uri.path",
  "http.request.uri.path.extension",
  "http.request.uri.query",
  "http.user_agent",
  "http.request.version",
  "http.x_forwarded_for",
  "http.request.body.raw",
  "http.request.body.mime",
  "raw.http.request.full_uri",
  "raw.http.request.uri",
  "raw.http.request.uri.path",
  "raw.http.request.uri.path.extension",
  "raw.http.request.uri.query",
  "http.response.content_type.media_type",
  "cf.response.error_type",
  "ip.src.lat",
  "ip.src.lon",
  "ip.src.city",
  "ip.src.postal_code",
  "ip.src.metro_code",
  "ip.src.region",
  "ip.src.region_code",
  "ip.src.timezone.name",
  "ip.src.continent",
  "ip.src.country",
  "ip.src.subdivision_1_iso_code",
  "ip.src.subdivision_2_iso_code",
  "ip.geoip.continent",
  "ip.geoip.country",
  "ip.geoip.subdivision_1_iso_code",
  "ip.geoip.subdivision_2_iso_code",
  "cf.verified_bot_category",
  "cf.bot_management.ja3_hash",
  "cf.bot_management.ja4",
  "cf.hostname.metadata",
  "cf.ray_id",
  "cf.tls_cipher",
  "cf.tls_version",
  "cf.tls_client_random",
  "cf.tls_client_extensions_sha1",
  "cf.tls_client_extensions_sha1_le",
  "cf.tls_ciphers_sha1",
  "cf.tls_client_auth.cert_issuer_dn",
  "cf.tls_client_auth.cert_subject_dn",
  "cf.tls_client_auth.cert_issuer_dn_rfc2253",
  "cf.tls_client_auth.cert_subject_dn_rfc2253",
  "cf.tls_client_auth.cert_issuer_dn_legacy",
  "cf.tls_client_auth.cert_subject_dn_legacy",
  "cf.tls_client_auth.cert_serial",
  "cf.tls_client_auth.cert_issuer_serial",
  "cf.tls_client_auth.cert_fingerprint_sha256",
  "cf.tls_client_auth.cert_fingerprint_sha1",
  "cf.tls_client_auth.cert_not_before",
  "cf.tls_client_auth.cert_not_after",
  "cf.tls_client_auth.cert_ski",
  "cf.tls_client_auth.cert_issuer_ski",
  "cf.tls_client_auth.cert_rfc9440",
  "cf.tls_client_auth.cert_chain_rfc9440",
  "cf.waf.score.class",
  "cf.worker.upstream_zone",
  "cf.random_seed",
  // Used in rule expressions in the public documentation (zone-level and account-level rulesets).
  "cf.zone.name",
  "cf.zone.plan",
  "cf.colo.region",
] as const;

const INT_FIELDS = [
  "http.request.timestamp.sec",
  "http.request.timestamp.msec",
  "http.request.body.size",
  "http.response.code",
  "cf.response.1xxx_code",
  "ip.src.asnum",
  "ip.geoip.asnum",
  "cf.bot_management.score",
  "cf.threat_score",
  "cf.edge.server_port",
  "cf.colo.id",
  "cf.waf.score",
  "cf.waf.score.sqli",
  "cf.waf.score.xss",
  "cf.waf.score.rce",
  "cf.tls_client_hello_length",
  "cf.edge.l4.delivery_rate",
  "cf.timings.client_tcp_rtt_msec",
  "cf.timings.client_quic_rtt_msec",
  "cf.timings.edge_msec",
  "cf.timings.origin_ttfb_msec",
  "cf.timings.worker_msec",
  "cf.waf.content_scan.num_obj",
  "cf.waf.content_scan.num_malicious_obj",
  "cf.llm.prompt.injection_score",
  "cf.llm.prompt.token_count",
] as const;

const BOOL_FIELDS = [
  // Cloudflare's dialect accepts the constants `true` and `false` as whole expressions: every
  // ruleset that must match all traffic says `"expression": "true"`. Wirefilter has no boolean
  // literal, so they are modelled as constant Bool fields (usable bare and with and/or/not).
  "true",
  "false",
  "ssl",
  "http.request.headers.truncated",
  "http.request.body.truncated",
  "ip.src.is_in_european_union",
  "ip.geoip.is_in_european_union",
  "cf.bot_management.verified_bot",
  "cf.bot_management.static_resource",
  "cf.bot_management.js_detection.passed",
  "cf.bot_management.corporate_proxy",
  "cf.bot_management.signed_agent",
  "cf.client.bot",
  "cf.api_gateway.auth_id_present",
  "cf.api_gateway.request_violates_schema",
  "cf.api_gateway.fallthrough_detected",
  "cf.schema_validation.learned.violated",
  "cf.schema_validation.uploaded.violated",
  "cf.tls_client_auth.cert_revoked",
  "cf.tls_client_auth.cert_verified",
  "cf.tls_client_auth.cert_presented",
  "cf.tls_client_auth.cert_rfc9440_too_large",
  "cf.tls_client_auth.cert_chain_rfc9440_too_large",
  "cf.edge.client_tcp",
  "cf.waf.content_scan.has_obj",
  "cf.waf.content_scan.has_malicious_obj",
  "cf.waf.content_scan.has_failed",
  "cf.waf.auth_detected",
  "cf.waf.credential_check.password_leaked",
  "cf.waf.credential_check.username_leaked",
  "cf.waf.credential_check.username_and_password_leaked",
  "cf.waf.credential_check.username_password_similar",
  "cf.llm.prompt.detected",
  "cf.llm.prompt.pii_detected",
  "cf.llm.prompt.unsafe_topic_detected",
] as const;

const IP_FIELDS = ["ip.src", "cf.edge.server_ip"] as const;

const STRING_MAP_FIELDS = [
  "http.request.cookies",
  "http.request.uri.args",
  "http.request.headers",
  "http.request.body.form",
  "http.request.body.multipart",
  "raw.http.request.uri.args",
  "http.response.headers",
  "raw.http.response.headers",
  "http.request.jwt.claims.aud",
  "http.request.jwt.claims.iss",
  "http.request.jwt.claims.jti",
  "http.request.jwt.claims.sub",
] as const;

const INT_MAP_FIELDS = ["http.request.jwt.claims.iat.sec", "http.request.jwt.claims.nbf.sec"] as const;

const BYTES_ARRAY_FIELDS = [
  "http.request.uri.args.names",
  "http.request.uri.args.values",
  "http.request.headers.names",
  "http.request.headers.values",
  "http.request.body.form.names",
  "http.request.body.form.values",
  "http.request.body.multipart.values",
  "http.request.accepted_languages",
  "http.response.headers.names",
  "http.response.headers.values",
  "raw.http.request.uri.args.names",
  "raw.http.request.uri.args.values",
  "raw.http.response.headers.names",
  "raw.http.response.headers.values",
  "http.request.jwt.claims.aud.names",
  "http.request.jwt.claims.aud.values",
  "http.request.jwt.claims.iss.names",
  "http.request.jwt.claims.iss.values",
  "http.request.jwt.claims.jti.names",
  "http.request.jwt.claims.jti.values",
  "http.request.jwt.claims.sub.names",
  "http.request.jwt.claims.sub.values",
  "http.request.jwt.claims.iat.sec.names",
  "http.request.jwt.claims.nbf.sec.names",
  "cf.waf.content_scan.obj_types",
  "cf.waf.content_scan.obj_results",
  "cf.llm.prompt.pii_categories",
  "cf.llm.prompt.unsafe_topic_categories",
] as const;

const INT_ARRAY_FIELDS = [
  "http.request.jwt.claims.iat.sec.values",
  "http.request.jwt.claims.nbf.sec.values",
  "cf.bot_management.detection_ids",
  "cf.waf.content_scan.obj_sizes",
] as const;

const BYTES_ARRAY_ARRAY_FIELDS = [
  "http.request.body.multipart.names",
  "http.request.body.multipart.content_types",
  "http.request.body.multipart.content_dispositions",
  "http.request.body.multipart.content_transfer_encodings",
  "http.request.body.multipart.filenames",
] as const;

const INT_MAP_SCORE_FIELDS = ["cf.llm.prompt.custom_topic_categories"] as const;

function entries(names: readonly string[], type: ValueType): [string, ValueType][] {
  return names.map((name) => [name, type]);
}

/**
 * The standard field catalogue: every field name the parser knows, with its type.
 *
 * @example
 * STANDARD_FIELDS.get("http.host"); // "Bytes"
 */
export const STANDARD_FIELDS: ReadonlyMap<string, ValueType> = new Map<string, ValueType>([
  ...entries(BYTES_FIELDS, BYTES),
  ...entries(INT_FIELDS, INT),
  ...entries(BOOL_FIELDS, BOOL),
  ...entries(IP_FIELDS, IP),
  ...entries(STRING_MAP_FIELDS, mapOf(BYTES_ARRAY)),
  ...entries(INT_MAP_FIELDS, mapOf(INT_ARRAY)),
  ...entries(BYTES_ARRAY_FIELDS, BYTES_ARRAY),
  ...entries(INT_ARRAY_FIELDS, INT_ARRAY),
  ...entries(BYTES_ARRAY_ARRAY_FIELDS, arrayOf(BYTES_ARRAY)),
  ...entries(INT_MAP_SCORE_FIELDS, mapOf(INT)),
]);

/**
 * A field catalogue: field name to type. Pass your own to {@link parseExpression} through
 * `ParseOptions.fields` to parse against another scheme (tests use wirefilter's small schemes).
 *
 * @example
 * const scheme: FieldCatalogue = new Map([["num", "Int"]]);
 */
export type FieldCatalogue = ReadonlyMap<string, ValueType>;

/**
 * Looks a field up in the standard catalogue (or in `catalogue`).
 *
 * @example
 * lookupField("ip.src"); // "Ip"
 * lookupField("nope"); // undefined
 */
export function lookupField(name: string, catalogue: FieldCatalogue = STANDARD_FIELDS): ValueType | undefined {
  return catalogue.get(name);
}
