/**
 * DNS records as the DNS records API checks them, when a fixture seeds them: names read relative to
 * the zone, content per type, TTL per plan, proxying only where the proxy can serve, and records
 * that cannot coexist. A fixture with a bad record is refused whole, naming the record's field.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkDnsRecord, isIpv6Address, normaliseDnsRecordName } from "../../src/api/dns-record-checks";
import { sequentialHexIds } from "../../src/api/ids";
import { matchRoute, seedFromFixture } from "../../src/api/service/index";

const ACCOUNT = "01a7362d577a6c3019a474fd6f485823";
const ZONE = "e0000000000000000000000000000009";

function seed(records: unknown[], plan = "free") {
  return seedFromFixture(
    {
      accounts: [{ id: ACCOUNT, name: "Main" }],
      zones: [{ id: ZONE, name: "Example.com", account: ACCOUNT, plan, dns_records: records }],
    },
    { nowMs: 0, newId: sequentialHexIds() },
  );
}

function refusal(records: unknown[], plan = "free"): { path: string; message: string }[] {
  const s = seed(records, plan);
  if (s.ok) throw new Error(`seeded: ${JSON.stringify(s.value.zones[0]?.dnsRecords)}`);
  return s.errors.map((e) => ({ path: e.path, message: e.message }));
}

const at = (i: number, field?: string) => `zones[0].dns_records[${i}]${field === undefined ? "" : `.${field}`}`;

describe("fixture DNS records are checked as the DNS records API checks them", () => {
  it.each([
    [
      "proxied on a type the proxy cannot serve",
      { type: "TXT", name: "@", content: "v=spf1 -all", proxied: true },
      "proxied",
    ],
    ["proxied on MX", { type: "MX", name: "@", content: "mx.example.com", priority: 10, proxied: true }, "proxied"],
    ["an A record whose content is not an IPv4 address", { type: "A", name: "www", content: "192.0.2.256" }, "content"],
    ["an A record with a leading zero", { type: "A", name: "www", content: "192.0.2.01" }, "content"],
    [
      "an AAAA record whose content is not an IPv6 address",
      { type: "AAAA", name: "www", content: "2001:db8:::1" },
      "content",
    ],
    ["a CNAME to an address", { type: "CNAME", name: "www", content: "192.0.2.1" }, "content"],
    ["a CNAME to itself", { type: "CNAME", name: "www", content: "WWW.example.com." }, "content"],
    ["an MX without priority", { type: "MX", name: "@", content: "mx.example.com" }, "priority"],
    ["a priority out of range", { type: "MX", name: "@", content: "mx.example.com", priority: 65536 }, "priority"],
    ["TXT content over 2,048 characters", { type: "TXT", name: "@", content: "x".repeat(2049) }, "content"],
    ["a TTL under 60 outside Enterprise", { type: "A", name: "www", content: "192.0.2.1", ttl: 30 }, "ttl"],
    ["a TTL over a day", { type: "A", name: "www", content: "192.0.2.1", ttl: 86401 }, "ttl"],
    [
      "a field the API does not know (a typo)",
      { type: "A", name: "www", content: "192.0.2.1", proxyed: true },
      "proxyed",
    ],
    ["a name that is not Punycode", { type: "A", name: "bücher.example.com", content: "192.0.2.1" }, "name"],
    ["a wildcard that is not the first label", { type: "A", name: "a.*.example.com", content: "192.0.2.1" }, "name"],
    ["a label over 63 characters", { type: "A", name: `${"a".repeat(64)}.example.com`, content: "192.0.2.1" }, "name"],
    ["an SRV record without data", { type: "SRV", name: "_sip._tcp", content: "10 5060 sip.example.com" }, "data"],
    [
      "a CAA record with an unknown tag",
      { type: "CAA", name: "@", data: { flags: 0, tag: "issuer", value: "letsencrypt.org" } },
      "data.tag",
    ],
  ])("%s is refused, naming the field", (_what, record, field) => {
    const errors = refusal([record]);
    expect(errors.map((e) => e.path)).toEqual([at(0, field)]);
    expect(errors[0]?.message.length).toBeGreaterThan(20);
  });

  it("a CNAME cannot share its name with another record, and one record listed twice is refused", () => {
    const cname = { type: "CNAME", name: "www", content: "target.example.net" };
    const a = { type: "A", name: "www.example.com", content: "192.0.2.1" };
    expect(refusal([cname, a]).map((e) => e.path)).toEqual([at(1)]);
    expect(refusal([a, cname]).map((e) => e.path)).toEqual([at(1)]);
    // The same record, spelt differently (case, trailing dot, relative name).
    expect(refusal([a, { type: "A", name: "WWW.Example.com.", content: "192.0.2.1" }]).map((e) => e.path)).toEqual([
      at(1),
    ]);
    // Two A records with one name and different addresses are a normal round-robin; TXT content keeps its case.
    const ok = seed([
      a,
      { type: "A", name: "www", content: "192.0.2.2" },
      { type: "TXT", name: "@", content: "token=ABC" },
      { type: "TXT", name: "@", content: "token=abc" },
    ]);
    expect(ok.ok).toBe(true);
  });

  it("an Enterprise zone may use a TTL of 30 seconds", () => {
    const s = seed([{ type: "A", name: "www", content: "192.0.2.1", ttl: 30 }], "enterprise");
    expect(s.ok && s.value.zones[0]?.dnsRecords[0]?.ttl).toBe(30);
  });

  it("names are read as the API reads them: @ is the apex, relative names are in the zone, case and trailing dot dropped", () => {
    const s = seed([
      { type: "A", name: "@", content: "192.0.2.1", proxied: true },
      { type: "A", name: "WWW.Example.COM.", content: "192.0.2.2" },
      { type: "AAAA", name: "v6", content: "2001:db8::1" },
      { type: "A", name: "*", content: "192.0.2.3" },
      { type: "TXT", name: "_dmarc", content: "v=DMARC1; p=none" },
    ]);
    if (!s.ok) throw new Error(JSON.stringify(s.errors));
    const records = s.value.zones[0]?.dnsRecords ?? [];
    expect(records.map((r) => [r.name, r.proxied, r.proxiable])).toEqual([
      ["example.com", true, true],
      ["www.example.com", false, true],
      ["v6.example.com", false, true],
      ["*.example.com", false, true],
      ["_dmarc.example.com", false, false],
    ]);
    // So the listing's exact name filter finds the record however the fixture spelt it.
    const m = matchRoute("GET", `/zones/${ZONE}/dns_records`);
    const zone = s.value.zones[0];
    if (!m.ok || m.route.scope !== "zone" || zone === undefined) throw new Error("did not route");
    const listed = m.route.run(zone, {
      method: "GET",
      path: m.path,
      params: m.params,
      query: new URLSearchParams("name.exact=www.example.com"),
      body: undefined,
      nowMs: 0,
      newId: sequentialHexIds(),
    });
    expect((listed.response.body.result as { content: string }[]).map((r) => r.content)).toEqual(["192.0.2.2"]);
  });

  it("records given by data get the content the API shows for them", () => {
    const s = seed([
      { type: "SRV", name: "_sip._tcp", data: { priority: 10, weight: 5, port: 5060, target: "sip.example.com" } },
      { type: "CAA", name: "@", data: { flags: 0, tag: "issue", value: "letsencrypt.org" } },
    ]);
    if (!s.ok) throw new Error(JSON.stringify(s.errors));
    expect(s.value.zones[0]?.dnsRecords.map((r) => [r.name, r.content, r.data])).toEqual([
      [
        "_sip._tcp.example.com",
        "5 5060 sip.example.com",
        { priority: 10, weight: 5, port: 5060, target: "sip.example.com" },
      ],
      ["example.com", '0 issue "letsencrypt.org"', { flags: 0, tag: "issue", value: "letsencrypt.org" }],
    ]);
  });

  it("checkDnsRecord and normaliseDnsRecordName work on their own", () => {
    const zone = { name: "example.com", enterprise: false };
    expect(normaliseDnsRecordName("www.other.com", "example.com")).toEqual({
      ok: true,
      value: "www.other.com.example.com",
    });
    expect(normaliseDnsRecordName("", "example.com").ok).toBe(false);
    const r = checkDnsRecord({ type: "A", name: "www", content: "192.0.2.1" }, zone);
    expect(r.ok && [r.value.name, r.value.ttl, r.value.proxied]).toEqual(["www.example.com", 1, false]);
    expect(checkDnsRecord("A www 192.0.2.1", zone).ok).toBe(false);
  });
});

describe("isIpv6Address", () => {
  it("agrees with the WHATWG URL parser's IPv6 reading on strings of address pieces", () => {
    const byUrl = (s: string) => {
      try {
        new URL(`http://[${s}]/`);
        return true;
      } catch {
        return false;
      }
    };
    const piece = fc.constantFrom(
      "0",
      "1",
      "a",
      "F",
      "ffff",
      "12345",
      ":",
      "::",
      ":::",
      ".",
      "1.2.3.4",
      "255",
      "256",
      "01",
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 14 }).map((a) => a.join("")),
        (s) => {
          expect(isIpv6Address(s), s).toBe(byUrl(s));
        },
      ),
      { numRuns: 5000 },
    );
    for (const s of ["::", "::1", "2001:db8::1", "1:2:3:4:5:6:7:8", "::ffff:192.0.2.1"])
      expect(isIpv6Address(s)).toBe(true);
    for (const s of ["1.2.3.4::", "1:2:3:4:5:6:7:8:9", "2001:db8::1%eth0", "[::1]", ""])
      expect(isIpv6Address(s)).toBe(false);
  });
});
