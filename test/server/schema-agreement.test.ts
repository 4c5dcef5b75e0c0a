/**
 * The models against Cloudflare's published OpenAPI schema (fixtures/cloudflare-openapi-subset.json):
 * the validator itself catches what it must; the schema covers every route; zone names are checked
 * exactly as the schema's pattern checks them; zones and certificate packs the models accept
 * conform; the models' enumerations are the schema's; and every response of the pure service, over
 * random request sequences on every plan, conforms to its operation's schema with every message
 * carrying a code.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CERTIFICATE_AUTHORITIES,
  CERTIFICATE_PACK_STATUSES,
  CERTIFICATE_PACK_TYPES,
  VALIDATION_METHODS,
  VALIDITY_DAYS,
  validateCertificatePack,
} from "../../src/api/certificate-packs";
import { FIREWALL_ACTIONS, FIREWALL_RULE_PRODUCTS } from "../../src/api/firewall-rules";
import { sequentialHexIds } from "../../src/api/ids";
import { INVITE_STATUSES } from "../../src/api/invites";
import type { ApiRequest, ZoneRecord } from "../../src/api/service/index";
import { matchRoute, ROUTES, seedFromFixture } from "../../src/api/service/index";
import { RULESET_PHASES } from "../../src/api/waf-migration/ruleset-body";
import { checkZoneName, validateZone } from "../../src/api/zones";
import { OpenApiValidator } from "../helpers/openapi-schema";
import subset from "./fixtures/cloudflare-openapi-subset.json";
import { BIZ_ZONE, ENT_ZONE, FIXTURE, PRO_ZONE } from "./helpers";
import { certificatePackProblems, componentProblems, operationOf, responseProblems, SCHEMA_SOURCE } from "./schema";

type Schemas = Record<string, { enum?: unknown[]; pattern?: string; maxLength?: number; properties?: Schemas }>;
const schemas = subset.components.schemas as unknown as Schemas;
const enumOf = (name: string): unknown[] => schemas[name]?.enum ?? [];
const sorted = (values: readonly unknown[]) => [...values].map(String).sort();

const NOW = Date.UTC(2025, 0, 1);
function seed() {
  const s = seedFromFixture(FIXTURE, { nowMs: NOW, newId: sequentialHexIds() });
  if (!s.ok) throw new Error(JSON.stringify(s.errors));
  return s.value;
}

describe("the schema fixture and its validator", () => {
  it("names its source: the published schema's repository, file and commit", () => {
    expect(SCHEMA_SOURCE).toMatchObject({ repository: "cloudflare/api-schemas", path: "openapi.json" });
    expect(SCHEMA_SOURCE.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it("every route of the service is an operation of the schema (or a documented migration endpoint)", () => {
    for (const route of ROUTES) {
      const concrete = route.path.replace(/:[a-z_]+/g, "0".repeat(32));
      expect(operationOf(route.method, `/client/v4${concrete}`), `${route.method} ${route.path}`).toBeDefined();
    }
  });

  it("catches a missing required field, a wrong type, an enum miss, a pattern miss and an extra property", () => {
    const zone = seed().zones[0]?.zone;
    expect(componentProblems(zone, "zones_zone")).toEqual([]);
    expect(componentProblems({ ...zone, id: undefined }, "zones_zone").join()).toMatch(/missing required id/);
    expect(componentProblems({ ...zone, development_mode: "0" }, "zones_zone").join()).toMatch(/expected number/);
    expect(componentProblems({ ...zone, created_on: "yesterday" }, "zones_zone").join()).toMatch(/not a date-time/);
    expect(componentProblems({ ...zone, name: "my_site.com" }, "zones_zone").join()).toMatch(/does not match/);
    const filter = { id: "f".repeat(32), expression: "true", paused: false };
    expect(componentProblems(filter, "firewall_filter")).toEqual([]);
    expect(componentProblems({ ...filter, extra: 1 }, "firewall_filter").join()).toMatch(/unexpected property extra/);
    expect(componentProblems({ ...filter, id: "f" }, "firewall_filter").join()).toMatch(/shorter than 32/);
    expect(componentProblems("ALLOW", "firewall_schemas-action").join()).toMatch(/not one of/);
    expect(componentProblems({ action: "explode", expression: "true" }, "rulesets_RequestRule").join()).toMatch(
      /names no schema of the discriminator/,
    );
  });

  it("a failure must be a failure envelope with at least one coded error", () => {
    const path = `/client/v4/zones/${ENT_ZONE}`;
    const good = { success: false, errors: [{ code: 7003, message: "x" }], messages: [], result: null };
    expect(responseProblems("GET", path, 404, good)).toEqual([]);
    expect(responseProblems("GET", path, 404, { ...good, errors: [] }).join()).toMatch(/fewer than 1 items/);
    expect(responseProblems("GET", path, 404, { ...good, errors: [{ message: "x" }] }).join()).toMatch(/code/);
    expect(responseProblems("GET", path, 404, { ...good, errors: [{ code: 99, message: "x" }] }).join()).toMatch(
      /below 1000/,
    );
    expect(responseProblems("GET", "/client/v4/nowhere", 404, good).join()).toMatch(/no operation/);
  });

  it("the validator refuses a keyword it does not know instead of skipping it", () => {
    const v = new OpenApiValidator({ schemas: { odd: { type: "string", contentEncoding: "base64" } as never } });
    expect(() => v.problems("x", v.resolve("#/components/schemas/odd"))).toThrow(/contentEncoding/);
  });
});

describe("zone names are checked as the schema's pattern checks them", () => {
  const name = schemas.zones_zone?.properties?.name;
  const pattern = new RegExp(name?.pattern ?? "(?!)");
  const bySchema = (n: string) => n.length <= (name?.maxLength ?? 0) && pattern.test(n);

  it.each([
    "example.com",
    "a.co",
    "xn--bcher-kva.example",
    "192.0.2.10",
    "a-.b-c",
    "example.-com",
    "EXAMPLE.COM",
    `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(57)}.com`,
  ])("accepts %j, as the schema does", (n) => {
    expect(bySchema(n)).toBe(true);
    expect(checkZoneName(n)).toBeUndefined();
  });

  it.each([
    "localhost",
    "my_site.com",
    "my site.com",
    "example..com",
    ".example.com",
    "example.com.",
    "-a.example.com",
    "example.c",
    `example.${"a".repeat(21)}`,
    "example.com\n",
    "\nexample.com",
    "exämple.com",
    "example.com/",
    "*.example.com",
    "",
    `${"a.".repeat(126)}com`,
  ])("refuses %j, as the schema does", (n) => {
    expect(bySchema(n)).toBe(false);
    expect(checkZoneName(n)).toMatch(/no localhost, underscores or spaces/);
  });

  it("agrees with the schema on any string of domain-like characters", () => {
    const chars = fc.constantFrom(..."ab-0._ Zé\n*".split(""));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: chars, maxLength: 30 }), fc.domain(), fc.string()), (n) => {
        expect(checkZoneName(n) === undefined).toBe(bySchema(n));
      }),
      { numRuns: 2000 },
    );
  });

  it("a fixture zone named against the schema is refused when seeding", () => {
    for (const bad of ["localhost", "under_score.com", "with space.com"]) {
      const s = seedFromFixture(
        { accounts: FIXTURE.accounts, zones: [{ name: bad, account: FIXTURE.accounts[0]?.id, plan: "free" }] },
        { nowMs: NOW, newId: sequentialHexIds() },
      );
      expect(s.ok === false && s.errors.map((e) => e.path)).toEqual(["zones[0].name"]);
    }
  });
});

describe("zones have the schema's required fields", () => {
  it("every seeded zone conforms to zones_zone", () => {
    for (const { zone } of seed().zones) expect(componentProblems(zone, "zones_zone")).toEqual([]);
  });

  it("a zone validateZone accepts conforms to zones_zone, whatever field is broken", () => {
    const zone = seed().zones[0]?.zone as unknown as Record<string, unknown>;
    const field = fc.constantFrom(...Object.keys(zone), "owner.id", "account.id");
    const junk = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.object(),
    );
    fc.assert(
      fc.property(field, junk, (key, value) => {
        const [head = "", sub] = key.split(".");
        const broken =
          sub === undefined
            ? { ...zone, [head]: value }
            : { ...zone, [head]: { ...(zone[head] as Record<string, unknown>), [sub]: value } };
        if (value === undefined && sub === undefined) delete broken[head];
        if (validateZone(broken).ok) expect(componentProblems(broken, "zones_zone")).toEqual([]);
      }),
      { numRuns: 1500 },
    );
  });
});

describe("certificate packs: certificates required, only the schema's authorities", () => {
  const pack = (FIXTURE.zones[0] as { certificate_packs: Record<string, unknown>[] }).certificate_packs[0] ?? {};

  it("the models' enumerations are the schema's", () => {
    // The pack's enumerations, as the fixture took them from the schema's tls-certificates-and-hostnames_* components.
    const pack = subset.supplement.certificate_pack.properties;
    expect(sorted(CERTIFICATE_AUTHORITIES)).toEqual(sorted(pack.certificate_authority.enum));
    expect(sorted(CERTIFICATE_PACK_STATUSES)).toEqual(sorted(pack.status.enum));
    expect(sorted(VALIDATION_METHODS)).toEqual(sorted(pack.validation_method.enum));
    expect(sorted(VALIDITY_DAYS)).toEqual(sorted(pack.validity_days.enum));
    expect(sorted(CERTIFICATE_PACK_TYPES)).toEqual(sorted(pack.type.enum));
  });

  it.each([
    ["no certificates", { certificates: undefined }, "certificates"],
    ["certificates not an array", { certificates: {} }, "certificates"],
    [
      "digicert (only in the order schema's older list)",
      { certificate_authority: "digicert" },
      "certificate_authority",
    ],
    ["an upper-case authority", { certificate_authority: "LETS_ENCRYPT" }, "certificate_authority"],
    ["an authority with a space", { certificate_authority: " lets_encrypt" }, "certificate_authority"],
    ["an authority with a NUL", { certificate_authority: "lets_encrypt\u0000" }, "certificate_authority"],
    ["an authority that is not a string", { certificate_authority: ["google"] }, "certificate_authority"],
    ["an unknown type", { type: "custom" }, "type"],
    ["an id over 36 characters", { id: "c".repeat(37) }, "id"],
    ["a validity of 5475 days", { validity_days: 5475 }, "validity_days"],
  ])("refuses %s, and so does the schema", (_n, change, path) => {
    const bad: Record<string, unknown> = { ...pack, ...change };
    if (Object.hasOwn(change, "certificates") && bad.certificates === undefined) delete bad.certificates;
    const v = validateCertificatePack(bad);
    expect(v.ok === false && v.errors.map((e) => e.path)).toContain(path);
    expect(certificatePackProblems(bad)).not.toEqual([]);
  });

  it("a pack validateCertificatePack accepts conforms to the schema's pack, whatever field is changed", () => {
    expect(certificatePackProblems(pack)).toEqual([]);
    const field = fc.constantFrom(...Object.keys(pack), "certificate_authority", "cloudflare_branding");
    const value = fc.oneof(
      fc.constantFrom(...CERTIFICATE_AUTHORITIES, "digicert", "ssl.com", 90, 14, "txt", "email", "active", []),
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
    );
    fc.assert(
      fc.property(field, value, (key, v) => {
        const changed = { ...pack, [key]: v };
        if (validateCertificatePack(changed).ok) expect(certificatePackProblems(changed)).toEqual([]);
      }),
      { numRuns: 1500 },
    );
  });
});

describe("the other enumerations are the schema's", () => {
  it("firewall rule actions and products, invitation statuses", () => {
    expect(sorted(FIREWALL_ACTIONS)).toEqual(sorted(enumOf("firewall_schemas-action")));
    const products = (schemas.firewall_products as { items?: { enum?: unknown[] } }).items?.enum ?? [];
    expect(sorted(FIREWALL_RULE_PRODUCTS)).toEqual(sorted(products));
    const invite = subset.components.schemas.iam_user_invite.allOf[1] as { properties: { status: { enum: string[] } } };
    expect(sorted(INVITE_STATUSES)).toEqual(sorted(invite.properties.status.enum));
  });

  it("ruleset phases: the schema's, with the later schema's changes (docs/api.md)", () => {
    const published = enumOf("rulesets_RulesetPhase") as string[];
    const ours = RULESET_PHASES as readonly string[];
    expect(ours.filter((p) => !published.includes(p)).sort()).toEqual([
      "http_response_cache_settings",
      "magic_transit_ratelimit",
    ]);
    expect(published.filter((p) => !ours.includes(p))).toEqual(["http_request_select_configuration"]);
  });
});

describe("every response of the service conforms to the schema; every message has a code", () => {
  const ZONES = [ENT_ZONE, PRO_ZONE, BIZ_ZONE];
  const managed = "http_request_firewall_managed";
  const execute = (enabled: boolean) => ({
    action: "execute",
    expression: "true",
    enabled,
    action_parameters: { id: "efb7b8c949ac4650a09736fc376e9aee" },
  });
  const call = fc.oneof(
    fc.constant(["GET", "", undefined, ""] as const),
    fc
      .constantFrom("", "type=A", "name.endswith=.example.com", "per_page=1", "per_page=0", "order=bogus")
      .map((q) => ["GET", "/dns_records", undefined, q] as const),
    fc
      .constantFrom("", "status=all", "per_page=1000")
      .map((q) => ["GET", "/ssl/certificate_packs", undefined, q] as const),
    fc
      .constantFrom("", "phase_two=1", "phase_two=2")
      .map((q) => ["GET", "/waf_migration/check", undefined, q] as const),
    fc.constantFrom("", "phase_two=1").map((q) => ["GET", "/waf_migration/config", undefined, q] as const),
    fc.constant(["GET", "/waf_migration/status", undefined, ""] as const),
    fc.constant(["DELETE", "/firewall/waf/overrides/0e000000000000000000000000000001", undefined, ""] as const),
    fc
      .constantFrom(managed, "http_request_firewall_custom", "nope")
      .map((p) => ["GET", `/rulesets/phases/${p}/entrypoint`, undefined, ""] as const),
    fc
      .tuple(
        fc.constantFrom(
          "",
          "waf_migration=validation&phase_two=1",
          "waf_migration=pending&phase_two=1",
          "waf_migration=1",
          "waf_migration=x",
        ),
        fc.constantFrom(
          { rules: [execute(true)] },
          { rules: [execute(false)] },
          { rules: [] },
          { rules: [{ ...execute(true), expression: "" }] },
          { rules: "no" },
          null,
        ),
      )
      .map(([q, body]) => ["PUT", `/rulesets/phases/${managed}/entrypoint`, body, q] as const),
    fc
      .constantFrom(
        [{ filter: { expression: "ip.src eq 192.0.2.7" }, action: "block" }],
        [{ filter: { expression: "ip.src eq 192.0.2.8" }, action: "log" }],
        [{ filter: { expression: "http.host eq" }, action: "block" }],
        [{ filter: { expression: "ip.src eq 192.0.2.9" }, action: "bypass", products: ["waf"] }],
      )
      .map((body) => ["POST", "/firewall/rules", body, ""] as const),
    fc.constant(["GET", "/firewall/rules", undefined, ""] as const),
    fc.constant(["GET", "/filters", undefined, ""] as const),
  );

  it("random request sequences on Enterprise, Pro and Business zones", () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.array(call, { maxLength: 12 }), (zoneId, calls) => {
        let record = seed().zones.find((z) => z.zone.id === zoneId) as ZoneRecord;
        for (const [method, suffix, body, query] of calls) {
          const path = `/client/v4/zones/${zoneId}${suffix}`;
          const m = matchRoute(method, path);
          if (!m.ok || m.route.scope !== "zone") throw new Error(`${method} ${path} did not route`);
          const request: ApiRequest = {
            method,
            path: m.path,
            params: m.params,
            query: new URLSearchParams(query),
            body,
            nowMs: NOW,
            newId: sequentialHexIds(5000),
          };
          const out = m.route.run(record, request);
          record = out.state;
          const { status, body: sent } = out.response;
          expect(responseProblems(method, path, status, sent), `${method} ${suffix}?${query}`).toEqual([]);
          for (const message of [...sent.errors, ...sent.messages]) {
            expect(Number.isInteger(message.code) && message.code >= 1000, JSON.stringify(message)).toBe(true);
          }
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe("the listings take every query parameter the schema gives them, within its bounds", () => {
  type Parameter = {
    type?: string;
    enum?: unknown[];
    minimum?: number;
    maximum?: number;
    minLength?: number;
    maxLength?: number;
  };
  const operations = subset.operations as unknown as Record<string, { parameters?: Record<string, Parameter> }>;
  const listings = Object.entries(operations).filter(([key, op]) => op.parameters !== undefined && !/\{id\}/.test(key));

  function answer(method: string, template: string, query: URLSearchParams): number {
    const path = `/client/v4${template.replace(/\{zone_id\}|\{zone_identifier\}/, ENT_ZONE)}`;
    const m = matchRoute(method, path);
    if (!m.ok) throw new Error(`${method} ${path} did not route`);
    const s = seed();
    const request: ApiRequest = {
      method,
      path: m.path,
      params: m.params,
      query,
      body: undefined,
      nowMs: NOW,
      newId: sequentialHexIds(9000),
    };
    const zone = s.zones.find((z) => z.zone.id === ENT_ZONE) as ZoneRecord;
    const response =
      m.route.scope === "zones"
        ? m.route.run(
            s.zones.map((z) => z.zone),
            request,
          )
        : m.route.scope === "zone"
          ? m.route.run(zone, request).response
          : m.route.run(s.user, request).response;
    expect(responseProblems(method, path, response.status, response.body)).toEqual([]);
    return response.status;
  }

  function validValues(p: Parameter): string[] {
    if (p.enum !== undefined) return p.enum.map(String);
    if (p.type === "boolean") return ["true", "false"];
    if (p.type === "number") return [p.minimum, p.maximum].filter((n) => n !== undefined).map(String);
    if (p.minLength !== undefined) return ["0".repeat(p.minLength)];
    return ["x", ...(p.maxLength === undefined ? [] : ["x".repeat(p.maxLength)])];
  }

  it.each(listings.map(([key, op]) => [key, op] as const))("%s", (key, op) => {
    const [method = "", template = ""] = key.split(" ");
    for (const [name, p] of Object.entries(op.parameters ?? {})) {
      for (const value of validValues(p)) {
        expect(answer(method, template, new URLSearchParams({ [name]: value })), `${name}=${value}`).toBe(200);
      }
      if (p.type === "number" && p.minimum !== undefined) {
        expect(answer(method, template, new URLSearchParams({ [name]: String(p.minimum - 1) })), name).toBe(400);
      }
      if (p.type === "number" && p.maximum !== undefined) {
        expect(answer(method, template, new URLSearchParams({ [name]: String(p.maximum + 1) })), name).toBe(400);
      }
      if (p.enum !== undefined) {
        expect(answer(method, template, new URLSearchParams({ [name]: "not-in-the-enum" })), name).toBe(400);
      }
    }
  });
});
