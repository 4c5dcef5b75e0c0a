/**
 * Feeds requests built by the official `cloudflare` SDK (v7) through our validators. A fetch stub
 * captures each request and answers with a canned success envelope, so nothing leaves the machine.
 * This checks that what real clients send is what our models accept, not just what we think they send.
 */
import Cloudflare from "cloudflare";
import { describe, expect, it } from "vitest";
import { parseJsonBody, validateAuthHeaders } from "../../src/api/auth";
import { parseCertificatePackListQuery } from "../../src/api/certificate-packs";
import { parseDnsRecordListQuery } from "../../src/api/dns-records";
import { successEnvelope, validateEnvelope } from "../../src/api/envelope";
import { createFilters, EMPTY_FIREWALL_STATE } from "../../src/api/filters";
import { createFirewallRules } from "../../src/api/firewall-rules";
import { sequentialHexIds } from "../../src/api/ids";
import { validateInviteId, validateInvitePatch } from "../../src/api/invites";
import { checkZoneId, parseZoneListQuery } from "../../src/api/zones";

interface Captured {
  method: string;
  url: URL;
  headers: Headers;
  body: string | undefined;
}

const TOKEN = "Y2xvdWRmbGFyZS1hcGktdG9rZW4tMDAwMDAwMDAw";
const EMAIL = "user@example.com";
const KEY = "c2547eb745079dac9320b638f5e225cf483cc";
const ZONE = "023e105f4ecef8ad9ca31a8372d0c353";
const ACCOUNT = "01a7362d577a6c3019a474fd6f485823";

function client(auth: { apiToken: string } | { apiEmail: string; apiKey: string }) {
  const captured: Captured[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    captured.push({
      method: request.method,
      url: new URL(request.url),
      headers: request.headers,
      body: request.body === null ? undefined : await request.text(),
    });
    // List endpoints need result_info for the SDK's pagination; others ignore it.
    const body = successEnvelope([], {
      resultInfo: { page: 1, per_page: 20, count: 0, total_count: 0, total_pages: 0 },
    });
    return new Response(JSON.stringify(body), { status: 200, headers: { "Content-Type": "application/json" } });
  };
  const cf = new Cloudflare({
    // Explicit nulls keep CLOUDFLARE_* environment variables from adding credentials.
    apiToken: null,
    apiEmail: null,
    apiKey: null,
    userServiceKey: null,
    ...auth,
    fetch,
    maxRetries: 0,
  });
  return { cf, captured };
}

function only(captured: Captured[]): Captured {
  expect(captured).toHaveLength(1);
  return captured[0] as Captured;
}

describe("SDK requests through the validators", () => {
  it("zones.list: account.id, name operator and listing parameters validate", async () => {
    const { cf, captured } = client({ apiToken: TOKEN });
    await cf.zones.list({
      account: { id: ACCOUNT },
      name: "contains:example",
      per_page: 50,
      order: "name",
      direction: "desc",
      match: "all",
    });
    const req = only(captured);
    expect(req.method).toBe("GET");
    expect(req.url.pathname).toBe("/client/v4/zones");
    expect(validateAuthHeaders(req.headers)).toEqual({ ok: true, value: { scheme: "api_token", token: TOKEN } });
    const q = parseZoneListQuery(req.url);
    expect(q).toEqual({
      ok: true,
      value: {
        name: { operator: "contains", value: "example" },
        accountId: ACCOUNT,
        match: "all",
        types: ["full", "partial", "secondary"],
        listing: { page: 1, per_page: 50, order: "name", direction: "desc" },
      },
    });
  });

  it("zones.list: a per_page the SDK allows but the platform does not is caught", async () => {
    const { cf, captured } = client({ apiToken: TOKEN });
    await cf.zones.list({ per_page: 500 });
    const q = parseZoneListQuery(only(captured).url);
    expect(q.ok === false && q.errors.map((e) => e.path)).toEqual(["per_page"]);
  });

  it("zones.list: the legacy email + key pair validates", async () => {
    const { cf, captured } = client({ apiEmail: EMAIL, apiKey: KEY });
    await cf.zones.list();
    expect(validateAuthHeaders(only(captured).headers)).toEqual({
      ok: true,
      value: { scheme: "api_key", email: EMAIL, key: KEY },
    });
  });

  it("dns.records.list: zone id and query validate", async () => {
    const { cf, captured } = client({ apiToken: TOKEN });
    await cf.dns.records.list({
      zone_id: ZONE,
      per_page: 100,
      page: 1,
      type: "CNAME",
      name: { endswith: ".example.com" },
    });
    const req = only(captured);
    expect(req.url.pathname).toBe(`/client/v4/zones/${ZONE}/dns_records`);
    expect(checkZoneId(req.url.pathname.split("/")[4] ?? "", req.url.pathname)).toBeUndefined();
    const q = parseDnsRecordListQuery(req.url);
    expect(q.ok, JSON.stringify(q)).toBe(true);
    if (q.ok) {
      expect(q.value.type).toBe("CNAME");
      expect(q.value.name).toEqual({ endswith: ".example.com" });
      expect(q.value.listing).toEqual({ page: 1, per_page: 100, order: "type", direction: "asc" });
    }
  });

  it("ssl.certificatePacks.list: status=all validates", async () => {
    const { cf, captured } = client({ apiToken: TOKEN });
    await cf.ssl.certificatePacks.list({ zone_id: ZONE, status: "all" });
    const req = only(captured);
    expect(req.url.pathname).toBe(`/client/v4/zones/${ZONE}/ssl/certificate_packs`);
    const q = parseCertificatePackListQuery(req.url);
    expect(q.ok && q.value.all).toBe(true);
  });

  it("filters.create: the array body validates and creates filters", async () => {
    const { cf, captured } = client({ apiToken: TOKEN });
    await cf.filters.create({
      zone_id: ZONE,
      body: [{ expression: 'http.request.uri.path contains "/login"', description: "Login" }],
    });
    const req = only(captured);
    expect(req.method).toBe("POST");
    const body = parseJsonBody(req.headers, req.body ?? "");
    expect(body.ok).toBe(true);
    if (!body.ok) return;
    const r = createFilters(EMPTY_FIREWALL_STATE, body.value, { idGenerator: sequentialHexIds() });
    expect(r.response.status).toBe(200);
    expect(r.state.filters).toHaveLength(1);
  });

  it("firewall.rules.create: the one-call body (a single object from the SDK) validates and creates filter and rule", async () => {
    const { cf, captured } = client({ apiToken: TOKEN });
    // The SDK types `action` as the rate-limit object (an OAS mistake); the API takes the action name.
    const action = "block" as unknown as Cloudflare.Firewall.RuleCreateParams["action"];
    await cf.firewall.rules.create({
      zone_id: ZONE,
      filter: { expression: 'http.request.uri.path contains "/login"' },
      action,
    });
    const req = only(captured);
    expect(req.url.pathname).toBe(`/client/v4/zones/${ZONE}/firewall/rules`);
    expect(validateAuthHeaders(req.headers).ok).toBe(true);
    const body = parseJsonBody(req.headers, req.body ?? "");
    expect(body.ok).toBe(true);
    if (!body.ok) return;
    const r = createFirewallRules(EMPTY_FIREWALL_STATE, body.value, { idGenerator: sequentialHexIds() });
    expect(r.steps.map((s) => s.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect(r.response.body.result?.[0]).toMatchObject({ action: "block", paused: false, priority: null });
  });

  it("firewall.rules.create: the SDK-typed { mode } action is refused with a clear message", async () => {
    const { cf, captured } = client({ apiToken: TOKEN });
    await cf.firewall.rules.create({
      zone_id: ZONE,
      filter: { expression: "ip.src eq 1.2.3.4" },
      action: { mode: "challenge" },
    });
    const body = parseJsonBody(only(captured).headers, only(captured).body ?? "");
    if (!body.ok) throw new Error("body did not parse");
    const r = createFirewallRules(EMPTY_FIREWALL_STATE, body.value, { idGenerator: sequentialHexIds() });
    expect(r.state).toBe(EMPTY_FIREWALL_STATE);
    expect(r.response.body.errors.some((e) => e.message.includes("rate-limit shape"))).toBe(true);
  });

  it("user.invites.edit: id, content type and status validate", async () => {
    const { cf, captured } = client({ apiToken: TOKEN });
    const inviteId = "4f5f0c14a2a41d5063dd301b2f829f04";
    await cf.user.invites.edit(inviteId, { status: "accepted" });
    const req = only(captured);
    expect(req.method).toBe("PATCH");
    expect(req.url.pathname).toBe(`/client/v4/user/invites/${inviteId}`);
    expect(validateInviteId(req.url.pathname.split("/").at(-1) ?? "").ok).toBe(true);
    const body = parseJsonBody(req.headers, req.body ?? "");
    expect(body.ok).toBe(true);
    if (body.ok) expect(validateInvitePatch(body.value)).toEqual({ ok: true, value: { status: "accepted" } });
  });

  it("validateEnvelope: accepts the canned envelope the SDK consumed", () => {
    expect(
      validateEnvelope(
        successEnvelope([], { resultInfo: { page: 1, per_page: 20, count: 0, total_count: 0, total_pages: 0 } }),
      ).ok,
    ).toBe(true);
  });
});
