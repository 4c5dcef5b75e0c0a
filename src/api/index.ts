/**
 * actorstore/api: the HTTP side of the spec as pure, typed, side-effect-free functions.
 * Nothing here imports storage code.
 *
 * @packageDocumentation
 */

export type { Credentials, HeaderCheck, HeadersInput } from "./auth";
export {
  checkJsonRequest,
  describeCredentials,
  parseJsonBody,
  readHeader,
  validateAuthHeaders,
  validateJsonContentType,
} from "./auth";
export type {
  BundleMethod,
  Certificate,
  CertificateAuthority,
  CertificatePack,
  CertificatePackDeploy,
  CertificatePackListQuery,
  CertificatePackStatus,
  CertificatePackType,
  CertificateStatus,
  ValidationMethod,
  ValidityDays,
} from "./certificate-packs";
export {
  BUNDLE_METHODS,
  CERTIFICATE_AUTHORITIES,
  CERTIFICATE_PACK_DEPLOYS,
  CERTIFICATE_PACK_STATUSES,
  CERTIFICATE_PACK_TYPES,
  CERTIFICATE_STATUSES,
  isBundleMethod,
  isCertificateAuthority,
  isCertificatePackDeploy,
  isCertificatePackStatus,
  isCertificatePackType,
  isCertificateStatus,
  isValidationMethod,
  isValidityDays,
  parseCertificatePackListQuery,
  VALIDATION_METHODS,
  VALIDITY_DAYS,
  validateCertificate,
  validateCertificatePack,
} from "./certificate-packs";
export type { CheckedDnsRecord, DnsRecordZone } from "./dns-record-checks";
export {
  checkDnsRecord,
  DATA_DNS_RECORD_TYPES,
  DNS_RECORD_INPUT_KEYS,
  dnsRecordConflict,
  isIpv4Address,
  isIpv6Address,
  MAX_TXT_CONTENT_CHARS,
  normaliseDnsRecordName,
  PROXIABLE_DNS_RECORD_TYPES,
} from "./dns-record-checks";
export type { DnsRecordListQuery, DnsRecordType, PresenceTextFilter, TextFilter } from "./dns-records";
export { DNS_RECORD_TYPES, isDnsRecordType, parseDnsRecordListQuery } from "./dns-records";
// The envelope, listing, auth and resource models. Named exports, so the public surface is
// reviewed here rather than growing by accident.
export type {
  ApiResponse,
  CheckedHeader,
  Envelope,
  FailureEnvelope,
  ParsedEnvelope,
  ReceivedInfo,
  ResponseInfo,
  ResultInfo,
  SuccessEnvelope,
  SuccessEnvelopeOptions,
} from "./envelope";
export {
  authenticationError,
  CHECKED_HEADERS,
  couldNotRoute,
  duplicateFilter,
  ERROR_CODES,
  fail,
  failureEnvelope,
  filterParseError,
  firewallRuleAtIndex,
  invalidAccessToken,
  invalidField,
  invalidRequest,
  invalidRequestHeaders,
  malformedJson,
  noRoute,
  ok,
  successEnvelope,
  validateEnvelope,
} from "./envelope";
export type {
  CreateOptions,
  Filter,
  FilterInput,
  FirewallState,
  FirewallTransition,
  StoredFirewallRule,
} from "./filters";
export {
  checkExpression,
  createFilters,
  deleteFilter,
  EMPTY_FIREWALL_STATE,
  findDuplicateFilter,
  getFilter,
  listFilters,
  MAX_DESCRIPTION_LENGTH,
  MAX_EXPRESSION_LENGTH,
  MAX_REF_LENGTH,
  newFilter,
  updateFilter,
  validateExpressionRequest,
  validateFilterInput,
} from "./filters";
export type {
  CreateFirewallRulesOptions,
  CreateFirewallRulesResult,
  CreationItem,
  CreationStep,
  CreationStepName,
  DeletedFilterRef,
  FirewallAction,
  FirewallLimits,
  FirewallRule,
  FirewallRuleInput,
  FirewallRuleProduct,
} from "./firewall-rules";
export {
  CREATION_STEPS,
  createFirewallRules,
  DEFAULT_FIREWALL_LIMITS,
  deleteFirewallRule,
  FIREWALL_ACTIONS,
  FIREWALL_RULE_PRODUCTS,
  getFirewallRule,
  isFirewallAction,
  isFirewallRuleProduct,
  listFirewallRules,
  MAX_PRIORITY,
  renderFirewallRule,
  updateFirewallRule,
  validateFirewallRuleInput,
} from "./firewall-rules";
export type { IdGenerator, NowMs } from "./ids";
export { formatMicrosecondTimestamp, isHexId, isMicrosecondTimestamp, randomHexId, sequentialHexIds } from "./ids";
export type { Invite, InvitePatch, InviteResponse, InviteStatus } from "./invites";
export {
  INVITE_RESPONSES,
  INVITE_STATUSES,
  inviteAsOf,
  isInviteResponse,
  isInviteStatus,
  respondToInvite,
  validateInviteId,
  validateInvitePatch,
} from "./invites";
export type { Direction, ListingBounds, ListingParams, MatchMode, OrderKey, Page } from "./listing";
export {
  CERTIFICATE_PACKS_LISTING,
  DIRECTIONS,
  DNS_RECORDS_LISTING,
  FILTERS_LISTING,
  FIREWALL_RULES_LISTING,
  isDirection,
  isMatchMode,
  MATCH_MODES,
  paginate,
  parseListingParams,
  readPath,
  ZONES_LISTING,
} from "./listing";
export * from "./rules-language/index";
export * from "./service/index";
export type { QueryInput, Validation, ValidationIssue } from "./validation";
export {
  invalid,
  oneOf,
  toSearchParams,
  valid,
} from "./validation";
export * from "./waf-migration/index";
export type { NameFilter, NameOperator, Zone, ZoneListQuery, ZoneStatus, ZoneType } from "./zones";
export {
  checkZoneId,
  checkZoneName,
  handleListZones,
  isNameOperator,
  isZoneStatus,
  isZoneType,
  listZones,
  matchesNameFilter,
  matchesZoneQuery,
  NAME_OPERATORS,
  parseNameFilter,
  parseZoneListQuery,
  validateZone,
  ZONE_STATUSES,
  ZONE_TYPES,
} from "./zones";
