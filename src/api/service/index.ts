/**
 * The v4 API as a service: a pure route table whose operations take a record (one zone, the user)
 * and a request and return the next record and the response. A server, a test or a worker adds
 * only I/O: storage for the records, HTTP for the requests.
 *
 * @packageDocumentation
 */
export type { SeedContext } from "./fixture";
export { seedFromFixture } from "./fixture";
export * from "./migration-operations";
export type { ApiRequest, Operation, Outcome } from "./operation";
export { reading } from "./operation";
export type { AccountRecord, ApiSeed, DnsRecord, UserRecord, ZoneRecord } from "./records";
export { migrationView, PLAN_DETAILS, withMigrationState } from "./records";
export type { Route, RouteMatch, UserRoute, ZoneRoute, ZonesRoute } from "./routes";
export { API_PREFIX, matchRoute, ROUTES } from "./routes";
export type { Ruleset, RulesetSaveContext, StoredRulesetRule } from "./rulesets";
export { saveRuleset } from "./rulesets";
export * from "./user-operations";
export * from "./zone-operations";
