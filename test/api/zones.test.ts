import { describe, expect, it } from "vitest";
import type { Zone } from "../../src/api/zones";
import {
  checkZoneId,
  handleListZones,
  listZones,
  matchesNameFilter,
  parseNameFilter,
  parseZoneListQuery,
  validateZone,
} from "../../src/api/zones";

const ACCOUNT = "01a7362d577a6c3019a474fd6f485823";
const STAMP = "2014-01-01T05:20:00.120000Z";
const zone = (over: Partial<Zone> & { name: string }): Zone => ({
  id: "023e105f4ecef8ad9ca31a8372d0c353",
  status: "active",
  account: { id: ACCOUNT, name: "Main" },
  plan: { id: "0feeeeeeeeeeeeeeeeeeeeeeeeeeeeee", name: "Free Website" },
  owner: { id: ACCOUNT, type: "organization" },
  meta: {},
  development_mode: 0,
  name_servers: ["bob.ns.cloudflare.com"],
  original_dnshost: null,
  original_name_servers: null,
  original_registrar: null,
  created_on: STAMP,
  modified_on: STAMP,
  activated_on: null,
  ...over,
});

describe("validateZone", () => {
  const good = {
    ...zone({ name: "example.com", account: { id: ACCOUNT, name: "Example Account" } }),
    paused: false,
    type: "full",
    meta: { anything: 1 },
  };
  it.each([
    ["a full zone with an unknown key", good],
    ["activated_on set", { ...good, activated_on: "2014-01-02T00:01:00.120000Z" }],
  ])("validateZone: accepts %s", (_n, value) => {
    expect(validateZone(value).ok).toBe(true);
  });
  it.each([
    ["not an object", "zone", ""],
    ["id too long", { ...good, id: "a".repeat(33) }, "id"],
    ["name too long", { ...good, name: `${"a".repeat(250)}.com` }, "name"],
    ["unknown status", { ...good, status: "deleted" }, "status"],
    ["unknown type", { ...good, type: "cdn" }, "type"],
    ["paused not a boolean", { ...good, paused: "no" }, "paused"],
    ["account missing", { ...good, account: undefined }, "account"],
    ["timestamp without microseconds", { ...good, created_on: "2014-01-01T05:20:00Z" }, "created_on"],
    ["name_servers not strings", { ...good, name_servers: [1] }, "name_servers"],
    ["a required field missing (plan)", { ...good, plan: undefined }, "plan"],
    ["a required field missing (original_registrar)", { ...good, original_registrar: undefined }, "original_registrar"],
    ["localhost", { ...good, name: "localhost" }, "name"],
    ["an underscore", { ...good, name: "my_site.example.com" }, "name"],
    ["a space", { ...good, name: "my site.com" }, "name"],
    ["an empty label", { ...good, name: "example..com" }, "name"],
    ["a label starting with a hyphen", { ...good, name: "-a.example.com" }, "name"],
    ["a one-letter top-level label", { ...good, name: "example.c" }, "name"],
  ])("validateZone: rejects %s", (_n, value, path) => {
    const v = validateZone(value);
    expect(v.ok === false && v.errors.map((e) => e.path)).toEqual([path]);
  });
});

describe("parseNameFilter", () => {
  it.each([
    ["example.com", { operator: "equal", value: "example.com" }],
    ["contains:example", { operator: "contains", value: "example" }],
    ["not_equal:example.com", { operator: "not_equal", value: "example.com" }],
    ["ends_with_case_sensitive:.COM", { operator: "ends_with_case_sensitive", value: ".COM" }],
    ["bogus:example", { operator: "equal", value: "bogus:example" }],
  ])("parseNameFilter: %s", (raw, expected) => {
    expect(parseNameFilter(raw)).toEqual(expected);
  });
  it.each([
    ["Example.com", "equal", "example.com", true],
    ["example.com", "not_equal", "EXAMPLE.com", false],
    ["shop.example.com", "starts_with", "SHOP", true],
    ["shop.example.com", "starts_with_case_sensitive", "SHOP", false],
    ["shop.example.com", "ends_with", ".COM", true],
    ["shop.example.com", "ends_with_case_sensitive", ".COM", false],
    ["shop.example.com", "contains", "Example", true],
    ["shop.example.com", "contains_case_sensitive", "Example", false],
  ] as const)("matchesNameFilter: %s %s %s → %s", (name, operator, value, expected) => {
    expect(matchesNameFilter(name, { operator, value })).toBe(expected);
  });
});

describe("parseZoneListQuery", () => {
  it("parseZoneListQuery: reads account.id, name operator, status, match and listing", () => {
    const v = parseZoneListQuery(
      `account.id=${ACCOUNT}&name=contains:example&status=active&match=any&per_page=50&order=name&direction=DESC`,
    );
    expect(v).toEqual({
      ok: true,
      value: {
        name: { operator: "contains", value: "example" },
        accountId: ACCOUNT,
        status: "active",
        match: "any",
        types: ["full", "partial", "secondary"],
        listing: { page: 1, per_page: 50, order: "name", direction: "desc" },
      },
    });
  });
  it("parseZoneListQuery: type is comma-joined and may include internal", () => {
    const v = parseZoneListQuery("type=full,internal");
    expect(v.ok && v.value.types).toEqual(["full", "internal"]);
  });
  it.each([
    ["status=deleted", "status"],
    ["match=some", "match"],
    ["per_page=100", "per_page"],
    ["per_page=1", "per_page"],
    [`name=${"a".repeat(254)}`, "name"],
    [`account.name=contains:${"a".repeat(254)}`, "account.name"],
    [`account.id=${"a".repeat(33)}`, "account.id"],
    ["type=cdn", "type"],
    ["order=created_on", "order"],
  ])("parseZoneListQuery: rejects %s", (query, path) => {
    const v = parseZoneListQuery(query);
    expect(v.ok === false && v.errors.map((e) => e.path)).toEqual([path]);
  });
});

describe("listZones", () => {
  const zones: Zone[] = [
    zone({ id: "1".repeat(32), name: "b-example.com" }),
    zone({ id: "2".repeat(32), name: "a-example.com", status: "pending" }),
    zone({ id: "3".repeat(32), name: "other.org", account: { id: "f".repeat(32), name: "Other" } }),
    zone({ id: "4".repeat(32), name: "internal.example.com", type: "internal" }),
  ];
  const ids = (query: string) => {
    const q = parseZoneListQuery(query);
    if (!q.ok) throw new Error(JSON.stringify(q.errors));
    return listZones(zones, q.value).result.map((z) => z.id[0]);
  };
  it("listZones: filters by account.id and leaves internal zones out by default", () => {
    expect(ids(`account.id=${ACCOUNT}`)).toEqual(["1", "2"]);
  });
  it("listZones: match=all requires every filter, match=any one of them", () => {
    expect(ids("name=contains:example&status=pending")).toEqual(["2"]);
    expect(ids("name=contains:example&status=pending&match=any")).toEqual(["1", "2"]);
  });
  it("listZones: orders by name", () => {
    expect(ids("order=name")).toEqual(["2", "1", "3"]);
    expect(ids("order=name&direction=DESC")).toEqual(["3", "1", "2"]);
  });
  it("handleListZones: answers with result_info, or 400 for a bad query", () => {
    const r = handleListZones(zones, "per_page=5&page=1");
    expect(r.body.success && r.body.result_info).toEqual({
      page: 1,
      per_page: 5,
      count: 3,
      total_count: 3,
      total_pages: 1,
    });
    const bad = handleListZones(zones, "per_page=500");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ code: 1001, source: { pointer: "per_page" } });
  });
  it("checkZoneId: a malformed id gets 7003 and 7000", () => {
    expect(checkZoneId("023e105f4ecef8ad9ca31a8372d0c353", "/zones/x")).toBeUndefined();
    expect(checkZoneId("ZONE_ID", "/zones/ZONE_ID")?.body.errors.map((e) => e.code)).toEqual([7003, 7000]);
  });
});
