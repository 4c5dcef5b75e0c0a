/**
 * The pure service layer: the route table matches every documented path with and without the
 * API prefix, and operations are pure: they never change the record they are given (it is deeply
 * frozen here, so any write throws), and the same record and request give the same answer.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sequentialHexIds } from "../../src/api/ids";
import type { ApiRequest, Route, UserRecord, ZoneRecord } from "../../src/api/service/index";
import { matchRoute, ROUTES, seedFromFixture } from "../../src/api/service/index";
import { ENT_ZONE, FIXTURE, PENDING_INVITE } from "../server/helpers";

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

const NOW = Date.UTC(2025, 0, 1);
function seed() {
  const s = seedFromFixture(FIXTURE, { nowMs: NOW, newId: sequentialHexIds() });
  if (!s.ok) throw new Error(JSON.stringify(s.errors));
  return s.value;
}

function request(method: string, path: string, body?: unknown, query = ""): ApiRequest {
  const m = matchRoute(method, path);
  if (!m.ok) throw new Error(`${method} ${path} did not route: ${JSON.stringify(m.response.body)}`);
  return {
    method,
    path: m.path,
    params: m.params,
    query: new URLSearchParams(query),
    body,
    nowMs: NOW,
    newId: sequentialHexIds(1000),
  };
}

const Z = `/zones/${ENT_ZONE}`;
const entry = `${Z}/rulesets/phases/http_request_firewall_managed/entrypoint`;
const CALLS: [string, string, unknown?, string?][] = [
  ["GET", Z],
  ["GET", `${Z}/dns_records`, undefined, "type=A"],
  ["GET", `${Z}/ssl/certificate_packs`, undefined, "status=all"],
  ["GET", `${Z}/filters`],
  ["POST", `${Z}/filters`, [{ expression: "ip.src eq 192.0.2.1" }]],
  ["POST", `${Z}/firewall/rules`, [{ filter: { expression: "ip.src eq 192.0.2.2" }, action: "block" }]],
  ["GET", `${Z}/firewall/rules`],
  ["GET", `${Z}/waf_migration/check`, undefined, "phase_two=1"],
  ["GET", `${Z}/waf_migration/config`, undefined, "phase_two=1"],
  ["GET", `${Z}/waf_migration/status`],
  [
    "PUT",
    entry,
    {
      rules: [{ action: "execute", expression: "true", action_parameters: { id: "efb7b8c949ac4650a09736fc376e9aee" } }],
    },
  ],
  [
    "PUT",
    entry,
    {
      rules: [{ action: "execute", expression: "true", action_parameters: { id: "efb7b8c949ac4650a09736fc376e9aee" } }],
    },
    "waf_migration=pending&phase_two=1",
  ],
  ["GET", entry],
];

function run(route: Route, zone: ZoneRecord, user: UserRecord, req: ApiRequest) {
  if (route.scope === "zone") return route.run(zone, req);
  if (route.scope === "user") return route.run(user, req);
  return { state: undefined, response: route.run([zone.zone], req) };
}

describe("the service's route table", () => {
  it.each(ROUTES.map((r) => [r.method, r.path] as const))(
    "%s %s routes with and without /client/v4",
    (method, path) => {
      const concrete = path.replace(":zone_id", ENT_ZONE).replace(/:[a-z_]+/g, "x".repeat(8));
      const bare = matchRoute(method, concrete);
      const prefixed = matchRoute(method, `/client/v4${concrete}`);
      expect(bare.ok && bare.route.path).toBe(path);
      expect(prefixed.ok && prefixed.route.path).toBe(path);
    },
  );

  it("operations never change the record they are given, and answer the same twice", () => {
    const { zones, user } = seed();
    const zone = deepFreeze(zones.find((z) => z.zone.id === ENT_ZONE) as ZoneRecord);
    deepFreeze(user);
    let current = zone;
    for (const [method, path, body, query] of CALLS) {
      const req = request(method, path, body, query);
      const m = matchRoute(method, path);
      if (!m.ok) throw new Error("unreachable");
      const first = run(m.route, current, user, req);
      const second = run(m.route, current, user, { ...req, newId: sequentialHexIds(1000) });
      expect(second.response).toEqual(first.response);
      expect(first.response.status, `${method} ${path}: ${JSON.stringify(first.response.body)}`).toBeLessThan(400);
      if (m.route.scope === "zone") current = deepFreeze(first.state as ZoneRecord);
    }
    expect(current.waf.migrationState).toBe("complete");
    expect(current.rulesets.http_request_firewall_managed?.version).toBe("2");
  });

  it("the user's invitations: PATCH answers a pending one and leaves the record given untouched", () => {
    const user = deepFreeze(seed().user);
    const m = matchRoute("PATCH", `/user/invites/${PENDING_INVITE}`);
    if (!m.ok || m.route.scope !== "user") throw new Error("did not route");
    const out = m.route.run(user, request("PATCH", `/user/invites/${PENDING_INVITE}`, { status: "accepted" }));
    expect(out.state.invites.find((i) => i.id === PENDING_INVITE)?.status).toBe("accepted");
    expect(user.invites.find((i) => i.id === PENDING_INVITE)?.status).toBe("pending");
  });

  it("the user's invitations: one past its expires_on reads as expired and can no longer be answered", () => {
    const user = deepFreeze(seed().user);
    const run = (method: string, path: string, body: unknown, nowMs: number) => {
      const m = matchRoute(method, path);
      if (!m.ok || m.route.scope !== "user") throw new Error("did not route");
      return m.route.run(user, { ...request(method, path, body), nowMs });
    };
    const expiresOn = user.invites.find((i) => i.id === PENDING_INVITE)?.expires_on ?? "";
    const expiry = Date.parse(expiresOn);
    expect(expiry).toBeGreaterThan(NOW);
    const path = `/user/invites/${PENDING_INVITE}`;
    // Just before the expiry it is pending; from the expiry on it is expired, read alone or listed.
    expect((run("GET", path, undefined, expiry - 1).response.body.result as { status: string }).status).toBe("pending");
    expect((run("GET", path, undefined, expiry).response.body.result as { status: string }).status).toBe("expired");
    const listed = run("GET", "/user/invites", undefined, expiry).response.body.result as {
      id: string;
      status: string;
    }[];
    expect(listed.find((i) => i.id === PENDING_INVITE)?.status).toBe("expired");
    // Answering it is refused as for any invitation no longer pending, and nothing changes.
    const late = run("PATCH", path, { status: "accepted" }, expiry + 1);
    expect([late.response.status, late.response.body.errors.map((e) => e.code)]).toEqual([400, [1002]]);
    expect(late.response.body.errors[0]?.message).toContain("expired");
    expect(late.state).toBe(user);
    const inTime = run("PATCH", path, { status: "accepted" }, expiry - 1);
    expect(inTime.state.invites.find((i) => i.id === PENDING_INVITE)?.status).toBe("accepted");
  });

  it("a fixture certificate pack or URI-based override without an id gets one, as docs/api.md's example leaves them out", async () => {
    // Before, both were refused ("id must be a string of 1 to 36 characters.", "must be an object with an
    // id"), though the document says ids left out are generated, and its example gave them as "…".
    const doc = await readFile(join(import.meta.dirname, "../../docs/api.md"), "utf8");
    const example = /## Fixture\n+```json\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    expect(example).not.toContain("…");
    const s = seedFromFixture(JSON.parse(example ?? ""), { nowMs: NOW, newId: sequentialHexIds() });
    if (!s.ok) throw new Error(JSON.stringify(s.errors));
    const [zone] = s.value.zones;
    const ids = [zone?.certificatePacks[0]?.id, zone?.waf.uriOverrides[0]?.id, zone?.zone.id];
    expect(ids.every((id) => typeof id === "string" && /^[0-9a-f]{32}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(3);
    expect(zone?.waf.uriOverrides[0]?.urls).toEqual(["example.com/admin*"]);
  });

  it.each([
    ["an unknown field (a typo)", { expires: "2025-01-08T00:00:00.000000Z" }, "expires"],
    ["an expires_on that is not a timestamp", { expires_on: 5 }, "expires_on"],
    ["an invited_on that is not a timestamp", { invited_on: "next week" }, "invited_on"],
    ["roles that are not role objects", { roles: "admin" }, "roles"],
    [
      "an organization_name over the schema's 100 characters",
      { organization_name: "n".repeat(101) },
      "organization_name",
    ],
    [
      "a two-factor flag that is not a boolean",
      { organization_is_enforcing_twofactor: "yes" },
      "organization_is_enforcing_twofactor",
    ],
    ["an invited_member_id that is not an id", { invited_member_id: 7 }, "invited_member_id"],
  ])("a fixture invitation with %s is refused, naming the field", (_what, extra, field) => {
    const s = seedFromFixture(
      { accounts: FIXTURE.accounts, zones: [], invites: [{ organization_id: FIXTURE.accounts[0]?.id, ...extra }] },
      { nowMs: NOW, newId: sequentialHexIds() },
    );
    expect(s.ok === false && s.errors.map((e) => e.path)).toEqual([`invites[0].${field}`]);
  });

  it.each(["true", "2", "yes", ""])(
    "waf_migration/check: phase_two=%j is refused with 10401 as the entry-point PUT refuses it, not read as phase 1",
    (value) => {
      const zone = deepFreeze(seed().zones.find((z) => z.zone.id === ENT_ZONE) as ZoneRecord);
      const run = (method: string, path: string, body: unknown, query: string) => {
        const m = matchRoute(method, path);
        if (!m.ok || m.route.scope !== "zone") throw new Error("did not route");
        return m.route.run(zone, request(method, path, body, query)).response;
      };
      const check = run("GET", `${Z}/waf_migration/check`, undefined, `phase_two=${value}`);
      const put = run("PUT", entry, { rules: [] }, `waf_migration=pending&phase_two=${value}`);
      expect([check.status, check.body.errors.map((e) => e.code)]).toEqual([400, [10401]]);
      expect([put.status, put.body.errors.map((e) => e.code)]).toEqual([400, [10401]]);
      expect(check.body.errors[0]?.message).toBe(put.body.errors[0]?.message);
      // Absent and 0 both mean phase 1, as for the PUT.
      expect(run("GET", `${Z}/waf_migration/check`, undefined, "phase_two=0").status).toBe(200);
      expect(run("GET", `${Z}/waf_migration/check`, undefined, "").status).toBe(200);
    },
  );

  it.each([
    ["PUT", entry, "waf_migration=validation&waf_migration=pending&phase_two=1"],
    ["PUT", entry, "waf_migration=pending&phase_two=1&phase_two=1"],
    ["GET", `${Z}/waf_migration/check`, "phase_two=1&phase_two=0"],
    ["GET", `${Z}/waf_migration/config`, "phase_two=1&phase_two=1"],
  ])("%s %s?%s: a repeated migration parameter is refused with 10401, the zone unchanged", (method, path, query) => {
    const zone = deepFreeze(seed().zones.find((z) => z.zone.id === ENT_ZONE) as ZoneRecord);
    const m = matchRoute(method, path);
    if (!m.ok || m.route.scope !== "zone") throw new Error("did not route");
    const body = method === "PUT" ? { name: "default", rules: [] } : undefined;
    const outcome = m.route.run(zone, request(method, path, body, query));
    expect([outcome.response.status, outcome.response.body.errors.map((e) => e.code)]).toEqual([400, [10401]]);
    expect(outcome.response.body.errors[0]?.message).toMatch(/must be given at most once/);
    expect(outcome.state).toBe(zone);
  });

  it.each(["true", "2", ""])(
    "waf_migration/config: phase_two=%j is refused with 10401 as the check refuses it",
    (value) => {
      const zone = deepFreeze(seed().zones.find((z) => z.zone.id === ENT_ZONE) as ZoneRecord);
      const run = (path: string, query: string) => {
        const m = matchRoute("GET", path);
        if (!m.ok || m.route.scope !== "zone") throw new Error("did not route");
        return m.route.run(zone, request("GET", path, undefined, query)).response;
      };
      const config = run(`${Z}/waf_migration/config`, `phase_two=${value}`);
      const check = run(`${Z}/waf_migration/check`, `phase_two=${value}`);
      expect([config.status, config.body.errors.map((e) => e.code)]).toEqual([400, [10401]]);
      expect(config.body.errors[0]?.message).toBe(check.body.errors[0]?.message);
      expect(run(`${Z}/waf_migration/config`, "phase_two=1").status).toBe(200);
      expect(run(`${Z}/waf_migration/config`, "").status).toBe(200);
    },
  );

  it("entry-point PUT of a phase other than the managed one: the body's phase must be that phase", () => {
    const zone = deepFreeze(seed().zones.find((z) => z.zone.id === ENT_ZONE) as ZoneRecord);
    const put = (phase: string, body: unknown) => {
      const path = `${Z}/rulesets/phases/${phase}/entrypoint`;
      const m = matchRoute("PUT", path);
      if (!m.ok || m.route.scope !== "zone") throw new Error("did not route");
      return m.route.run(zone, request("PUT", path, body));
    };
    const rules = [{ action: "block", expression: "ip.src eq 192.0.2.1" }];
    const own = put("http_request_firewall_custom", { kind: "zone", phase: "http_request_firewall_custom", rules });
    expect(own.response.status).toBe(200);
    expect(own.response.body.result).toMatchObject({ phase: "http_request_firewall_custom", kind: "zone" });
    const other = put("http_request_firewall_custom", { phase: "http_request_firewall_managed", rules });
    expect([other.response.status, other.response.body.errors[0]?.source]).toEqual([400, { pointer: "/phase" }]);
    expect(other.state).toBe(zone);
  });

  it("entry-point PUT with dry_run=true checks the request and changes nothing, a migration least of all", () => {
    const zone = deepFreeze(seed().zones.find((z) => z.zone.id === ENT_ZONE) as ZoneRecord);
    const put = (phase: string, body: unknown, query: string) => {
      const path = `${Z}/rulesets/phases/${phase}/entrypoint`;
      const m = matchRoute("PUT", path);
      if (!m.ok || m.route.scope !== "zone") throw new Error("did not route");
      return m.route.run(zone, request("PUT", path, body, query));
    };
    const execute = {
      rules: [{ action: "execute", expression: "true", action_parameters: { id: "efb7b8c949ac4650a09736fc376e9aee" } }],
    };
    const migration = "waf_migration=pending&phase_two=1";
    const dry = put("http_request_firewall_managed", execute, `${migration}&dry_run=true`);
    expect([dry.response.status, dry.response.body.result, dry.response.body.errors]).toEqual([200, null, []]);
    expect(dry.state).toBe(zone);
    const real = put("http_request_firewall_managed", execute, `${migration}&dry_run=false`);
    expect(real.state.waf.migrationState).toBe("complete");
    const custom = put(
      "http_request_firewall_custom",
      { rules: [{ action: "block", expression: "true" }] },
      "dry_run=true",
    );
    expect(custom.response.status).toBe(200);
    expect(custom.state).toBe(zone);
    // A dry run is refused as the update would be.
    const blank = { rules: [{ action: "block", expression: "" }] };
    const refused = put("http_request_firewall_custom", blank, "dry_run=true");
    expect(refused.response).toEqual(put("http_request_firewall_custom", blank, "").response);
    expect(refused.response.status).toBe(400);
    for (const query of ["dry_run=yes", "dry_run=true&dry_run=false"]) {
      const bad = put("http_request_firewall_custom", execute, query);
      expect([bad.response.status, bad.response.body.errors[0]?.source, bad.state]).toEqual([
        400,
        { pointer: "dry_run" },
        zone,
      ]);
    }
  });

  it("routing errors: unknown path 404, other method 405 with Allow, malformed zone id 400", () => {
    const unknown = matchRoute("GET", "/nothing");
    expect(!unknown.ok && unknown.response.status).toBe(404);
    const method = matchRoute("DELETE", `/zones/${ENT_ZONE}`);
    expect(!method.ok && [method.response.status, method.allow]).toEqual([405, ["GET", "HEAD"]]);
    const malformed = matchRoute("GET", "/client/v4/zones/nope/dns_records");
    expect(!malformed.ok && malformed.response.body.errors.map((e) => e.code)).toEqual([7003, 7000]);
    const badEscape = matchRoute("GET", "/zones/%E0%A4%A");
    expect(!badEscape.ok && badEscape.response.status).toBe(404);
  });
});
