/**
 * The route table of the v4 API service: one entry per endpoint with the record it works on and
 * its pure operation, and {@link matchRoute}, which finds the entry for a method and path (with or
 * without the `/client/v4` prefix) or answers with the platform's routing errors.
 */
import type { ApiResponse } from "../envelope";
import { couldNotRoute, fail, noRoute } from "../envelope";
import { isHexId } from "../ids";
import type { Zone } from "../zones";
import * as migration from "./migration-operations";
import type { ApiRequest, Operation } from "./operation";
import type { UserRecord, ZoneRecord } from "./records";
import * as user from "./user-operations";
import * as zone from "./zone-operations";

/** The API root every documented path is under; bare paths route too. */
export const API_PREFIX = "/client/v4";

/** A route whose operation works on one zone's record (`{zone_id}` in the path). */
export interface ZoneRoute {
  readonly scope: "zone";
  readonly method: string;
  readonly path: string;
  readonly run: Operation<ZoneRecord>;
}

/** A route whose operation works on the user's record (invitations). */
export interface UserRoute {
  readonly scope: "user";
  readonly method: string;
  readonly path: string;
  readonly run: Operation<UserRecord>;
}

/** A read-only route over every zone the credentials can see (`GET /zones`). */
export interface ZonesRoute {
  readonly scope: "zones";
  readonly method: string;
  readonly path: string;
  readonly run: (zones: readonly Zone[], request: ApiRequest) => ApiResponse<unknown>;
}

/** One endpoint of the service. */
export type Route = ZoneRoute | UserRoute | ZonesRoute;

const Z = "/zones/:zone_id";

/** Every endpoint, in match order (literal segments are listed before parameters where both could match). */
export const ROUTES: readonly Route[] = [
  { scope: "zones", method: "GET", path: "/zones", run: user.listZonesOperation },
  { scope: "zone", method: "GET", path: Z, run: zone.getZone },
  { scope: "zone", method: "GET", path: `${Z}/dns_records`, run: zone.listDnsRecords },
  { scope: "zone", method: "GET", path: `${Z}/ssl/certificate_packs`, run: zone.listCertificatePacks },
  { scope: "zone", method: "GET", path: `${Z}/filters`, run: zone.listFiltersOperation },
  { scope: "zone", method: "POST", path: `${Z}/filters`, run: zone.createFiltersOperation },
  { scope: "zone", method: "GET", path: `${Z}/filters/:filter_id`, run: zone.getFilterOperation },
  { scope: "zone", method: "PUT", path: `${Z}/filters/:filter_id`, run: zone.updateFilterOperation },
  { scope: "zone", method: "DELETE", path: `${Z}/filters/:filter_id`, run: zone.deleteFilterOperation },
  { scope: "zone", method: "GET", path: `${Z}/firewall/rules`, run: zone.listFirewallRulesOperation },
  { scope: "zone", method: "POST", path: `${Z}/firewall/rules`, run: zone.createFirewallRulesOperation },
  { scope: "zone", method: "GET", path: `${Z}/firewall/rules/:rule_id`, run: zone.getFirewallRuleOperation },
  { scope: "zone", method: "PUT", path: `${Z}/firewall/rules/:rule_id`, run: zone.updateFirewallRuleOperation },
  { scope: "zone", method: "DELETE", path: `${Z}/firewall/rules/:rule_id`, run: zone.deleteFirewallRuleOperation },
  {
    scope: "zone",
    method: "DELETE",
    path: `${Z}/firewall/waf/overrides/:override_id`,
    run: migration.deleteUriOverrideOperation,
  },
  { scope: "zone", method: "GET", path: `${Z}/waf_migration/check`, run: migration.checkMigration },
  { scope: "zone", method: "GET", path: `${Z}/waf_migration/config`, run: migration.getMigrationConfigOperation },
  { scope: "zone", method: "GET", path: `${Z}/waf_migration/status`, run: migration.getMigrationStatusOperation },
  {
    scope: "zone",
    method: "GET",
    path: `${Z}/rulesets/phases/:ruleset_phase/entrypoint`,
    run: migration.getEntryPoint,
  },
  {
    scope: "zone",
    method: "PUT",
    path: `${Z}/rulesets/phases/:ruleset_phase/entrypoint`,
    run: migration.updateEntryPointOperation,
  },
  { scope: "user", method: "GET", path: "/user/invites", run: user.listInvitesOperation },
  { scope: "user", method: "GET", path: "/user/invites/:invite_id", run: user.getInviteOperation },
  { scope: "user", method: "PATCH", path: "/user/invites/:invite_id", run: user.editInviteOperation },
];

/** The result of {@link matchRoute}: the route and its parameters, or the response to send. */
export type RouteMatch =
  | {
      readonly ok: true;
      readonly route: Route;
      readonly params: Readonly<Record<string, string>>;
      readonly path: string;
    }
  | { readonly ok: false; readonly response: ApiResponse<never>; readonly allow?: readonly string[] };

function segments(path: string): string[] {
  return path.split("/").filter((s) => s.length > 0);
}

const COMPILED = ROUTES.map((route) => ({ route, parts: segments(route.path) }));

function matchParts(parts: readonly string[], actual: readonly string[]): Record<string, string> | null {
  if (parts.length !== actual.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const want = parts[i] ?? "";
    const got = actual[i] ?? "";
    if (want.startsWith(":")) params[want.slice(1)] = got;
    else if (want !== got) return null;
  }
  return params;
}

/**
 * Finds the route for a method and a URL path. `/client/v4/zones` and `/zones` are the same
 * endpoint. `HEAD` takes the `GET` route of its path (the caller sends the answer without its
 * body). An unknown path is 404 `7000 No route for that URI`; a known path with another method
 * is 405 with the same error (and the methods it allows); a `{zone_id}` that is not 32 hex
 * characters is 400 with the platform's 7003 and 7000 pair.
 *
 * @example
 * ```ts
 * const m = matchRoute("GET", "/client/v4/zones/023e105f4ecef8ad9ca31a8372d0c353/dns_records");
 * if (m.ok) m.params.zone_id; // "023e105f4ecef8ad9ca31a8372d0c353"
 * ```
 */
export function matchRoute(method: string, pathname: string): RouteMatch {
  // HEAD is GET without the body (RFC 9110 9.3.2): it takes every GET route.
  const wanted = method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase();
  let path = pathname;
  if (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`)) path = path.slice(API_PREFIX.length);
  let actual: string[];
  try {
    actual = segments(path).map((s) => decodeURIComponent(s));
  } catch {
    return { ok: false, response: fail(404, noRoute()) };
  }
  // Shown in 7003 with `%` and `/` escaped again: an encoded slash decoded as is would name another
  // path (`/zones/<id>%2Fdns_records` read as `/zones/<id>/dns_records`, a valid route).
  const canonical = `/${actual.map((s) => s.replaceAll("%", "%25").replaceAll("/", "%2F")).join("/")}`;
  const allow: string[] = [];
  for (const { route, parts } of COMPILED) {
    const params = matchParts(parts, actual);
    if (params === null) continue;
    if (route.method !== wanted) {
      allow.push(...(route.method === "GET" ? ["GET", "HEAD"] : [route.method]));
      continue;
    }
    if (params.zone_id !== undefined && !isHexId(params.zone_id)) {
      return { ok: false, response: fail(400, couldNotRoute(canonical), noRoute()) };
    }
    return { ok: true, route, params, path: canonical };
  }
  if (allow.length > 0) return { ok: false, response: fail(405, noRoute()), allow };
  return { ok: false, response: fail(404, noRoute()) };
}
