/**
 * The local v4 API driven by the official `cloudflare` SDK over real HTTP on loopback: every
 * response the SDK receives is checked against the published schema (schema.ts).
 */
import Cloudflare from "cloudflare";
import type { APIError } from "cloudflare/core/error";
import { describe, expect, it } from "vitest";
import type { Ruleset } from "../../src/api/service/rulesets";
import type { ApiServer } from "../../src/server/index";
import {
  ACCOUNT_A,
  ACCOUNT_B,
  all,
  BIZ_ZONE,
  BULK_ZONES,
  CREDENTIALS,
  EMAIL,
  ENT_ZONE,
  EXPIRED_INVITE,
  FIXTURE,
  KEY,
  PENDING_INVITE,
  PRO_ZONE,
  type ResponseLog,
  sdk,
  TOKEN,
  useSdkServer,
} from "./helpers";

/** The SDK's entry-point update parameters (its rule types are stricter than the wire needs). */
type UpdateParams = Parameters<Cloudflare["rulesets"]["phases"]["update"]>[1];
/** The SDK's ruleset type, read as the shape the schema gives it. */
const asRuleset = (value: unknown): Ruleset => value as Ruleset;

let server: ApiServer;
let log: ResponseLog;
let cf: Cloudflare;
const fresh = useSdkServer((env) => {
  ({ server, log, cf } = env);
});

const ZONES_PATH = /^\/client\/v4\/zones$/;

describe("zones", () => {
  it("zones.list: auto-pagination walks every page", async () => {
    const zones = await all(cf.zones.list({ per_page: 5 }));
    expect(zones).toHaveLength(FIXTURE.zones.length);
    expect(new Set(zones.map((z) => z.id)).size).toBe(FIXTURE.zones.length);
    // 26 zones at 5 per page: 6 pages, and the empty 7th that ends the iteration.
    expect(log.count("GET", ZONES_PATH)).toBe(Math.ceil(FIXTURE.zones.length / 5) + 1);
  });

  it("zones.list: filters combine with pagination and ordering", async () => {
    const bulk = await all(
      cf.zones.list({ account: { id: ACCOUNT_B }, per_page: 5, order: "name", direction: "desc" }),
    );
    expect(bulk).toHaveLength(BULK_ZONES);
    expect(bulk.map((z) => z.name)).toEqual([...bulk.map((z) => z.name)].sort().reverse());
    expect(log.count("GET", ZONES_PATH)).toBeGreaterThan(4);

    const named = await all(cf.zones.list({ name: "contains:site-1", per_page: 5 }));
    expect(named.map((z) => z.name).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `site-1${i}.example.org`));
    const pending = await all(cf.zones.list({ status: "pending", account: { id: ACCOUNT_B } }));
    expect(pending.map((z) => z.status)).toEqual(Array(Math.ceil(BULK_ZONES / 5)).fill("pending"));
    const exact = await all(cf.zones.list({ name: "ent.example.com" }));
    expect(exact.map((z) => z.id)).toEqual([ENT_ZONE]);
    const mainAccount = await all(cf.zones.list({ account: { id: ACCOUNT_A }, per_page: 50 }));
    expect(mainAccount.map((z) => z.id).sort()).toEqual([ENT_ZONE, PRO_ZONE, BIZ_ZONE].sort());
  });

  it("zones.get: the zone with the schema's required fields", async () => {
    const zone = await cf.zones.get({ zone_id: ENT_ZONE });
    expect(zone).toMatchObject({
      id: ENT_ZONE,
      name: "ent.example.com",
      status: "active",
      account: { id: ACCOUNT_A, name: "Main account" },
      plan: { legacy_id: "enterprise" },
    });
  });

  it("both auth schemes: a token and an email with a Global API Key", async () => {
    const byKey = sdk(server.url, log, { apiEmail: EMAIL, apiKey: KEY });
    const viaKey = await byKey.zones.get({ zone_id: PRO_ZONE });
    const viaToken = await cf.zones.get({ zone_id: PRO_ZONE });
    expect(viaKey).toEqual(viaToken);
    const request = log.responses.at(-2);
    expect(request?.status).toBe(200);
  });

  it("auth failures surface as the SDK's error classes, without the secret", async () => {
    const wrongToken = sdk(server.url, log, { apiToken: "not-a-known-token" });
    const e1 = await wrongToken.zones.get({ zone_id: ENT_ZONE }).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(Cloudflare.PermissionDeniedError);
    expect((e1 as APIError).status).toBe(403);
    expect((e1 as APIError).errors).toEqual([{ code: 9109, message: "Invalid access token" }]);
    expect(String((e1 as Error).message)).not.toContain("not-a-known-token");

    const wrongKey = sdk(server.url, log, { apiEmail: EMAIL, apiKey: "0".repeat(37) });
    const e2 = await wrongKey.zones.get({ zone_id: ENT_ZONE }).catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(Cloudflare.PermissionDeniedError);
    expect((e2 as APIError).errors[0]?.code).toBe(9103);

    const malformed = sdk(server.url, log, { apiEmail: "not an email", apiKey: KEY });
    const e3 = await malformed.zones.get({ zone_id: ENT_ZONE }).catch((e: unknown) => e);
    expect(e3).toBeInstanceOf(Cloudflare.BadRequestError);
    expect((e3 as APIError).errors[0]?.code).toBe(6003);
  });

  it("400 and 404 surface as BadRequestError and NotFoundError", async () => {
    const unknown = await cf.zones.get({ zone_id: "f".repeat(32) }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(Cloudflare.NotFoundError);
    expect((unknown as APIError).errors.map((e) => e.code)).toEqual([7003, 7000]);

    const malformedId = await cf.zones.get({ zone_id: "nope" }).catch((e: unknown) => e);
    expect(malformedId).toBeInstanceOf(Cloudflare.BadRequestError);
    expect((malformedId as APIError).errors.map((e) => e.code)).toEqual([7003, 7000]);

    const badPage = await cf.zones.list({ per_page: 1 }).catch((e: unknown) => e);
    expect(badPage).toBeInstanceOf(Cloudflare.BadRequestError);
    expect((badPage as APIError).errors[0]).toMatchObject({ source: { pointer: "per_page" } });

    const badStatus = await cf.zones.list({ status: "deleted" as never }).catch((e: unknown) => e);
    expect(badStatus).toBeInstanceOf(Cloudflare.BadRequestError);
  });

  it("bare paths route like /client/v4 paths", async () => {
    const bare = server.url.replace(/\/client\/v4$/, "");
    const byPrefix = await fetch(`${server.url}/zones/${ENT_ZONE}`, {
      headers: { authorization: `Bearer ${CREDENTIALS.tokens[0]}` },
    });
    const byBare = await fetch(`${bare}/zones/${ENT_ZONE}`, {
      headers: { authorization: `Bearer ${CREDENTIALS.tokens[0]}` },
    });
    expect(byBare.status).toBe(200);
    expect(await byBare.json()).toEqual(await byPrefix.json());
    const unknownRoute = await fetch(`${bare}/zones/${ENT_ZONE}/nothing-here`, {
      headers: { authorization: `Bearer ${CREDENTIALS.tokens[0]}` },
    });
    expect(unknownRoute.status).toBe(404);
    const wrongMethod = await fetch(`${bare}/zones/${ENT_ZONE}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${CREDENTIALS.tokens[0]}` },
    });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("GET, HEAD");
    // The log is for SDK responses; these raw calls are checked here.
    fresh();
    await cf.zones.get({ zone_id: ENT_ZONE });
  });
});

describe("DNS records and certificate packs", () => {
  it("dns.records.list: every record, then filters by type and name", async () => {
    const records = await all(cf.dns.records.list({ zone_id: ENT_ZONE }));
    expect(records).toHaveLength(5);
    // Ordered by type by default.
    expect(records.map((r) => r.type)).toEqual(["A", "AAAA", "CNAME", "MX", "TXT"]);
    const a = await all(cf.dns.records.list({ zone_id: ENT_ZONE, type: "A" }));
    expect(a.map((r) => r.content)).toEqual(["192.0.2.1"]);
    const sub = await all(cf.dns.records.list({ zone_id: ENT_ZONE, name: { endswith: ".ent.example.com" } }));
    expect(sub.map((r) => r.name).sort()).toEqual(["api.ent.example.com", "www.ent.example.com"]);
    const paged = await all(cf.dns.records.list({ zone_id: ENT_ZONE, per_page: 2 }));
    expect(paged).toHaveLength(5);
  });

  it("dns.records.list: the SDK's content sub-filters are applied (ignoring case), not ignored", async () => {
    const names = async (content: Parameters<Cloudflare["dns"]["records"]["list"]>[0]["content"]) =>
      (await all(cf.dns.records.list({ zone_id: ENT_ZONE, content }))).map((r) => `${r.type} ${r.content}`);
    expect(await names({ contains: "0.2." })).toEqual(["A 192.0.2.1"]);
    expect(await names({ startswith: "2001:" })).toEqual(["AAAA 2001:db8::1"]);
    expect(await names({ endswith: ".ENT.example.com" })).toEqual(["MX mx.ent.example.com"]);
    expect(await names({ exact: "ENT.example.com" })).toEqual(["CNAME ent.example.com"]);
    expect(await names({ exact: "ent.example" })).toEqual([]);
    // With match=any, a content sub-filter is one of the alternatives.
    const any = await all(
      cf.dns.records.list({ zone_id: ENT_ZONE, match: "any", type: "TXT", content: { exact: "192.0.2.1" } }),
    );
    expect(any.map((r) => r.type)).toEqual(["A", "TXT"]);
  });

  it("ssl.certificatePacks.list: active packs, and every pack with status=all", async () => {
    const active = await all(cf.ssl.certificatePacks.list({ zone_id: ENT_ZONE }));
    expect(active.map((p) => p.id)).toEqual(["c0000000000000000000000000000001"]);
    const every = await all(cf.ssl.certificatePacks.list({ zone_id: ENT_ZONE, status: "all" }));
    expect(every.map((p) => p.status)).toEqual(["active", "pending_validation"]);
    expect(every[0]?.certificates[0]?.hosts).toEqual(["ent.example.com", "*.ent.example.com"]);
    // The specification's spelling of the same query.
    const bySpec = (await cf.get(`/zones/${ENT_ZONE}/ssl/certificate_packs`, { query: { ssl_status: "all" } })) as {
      result: { id: string }[];
    };
    expect(bySpec.result.map((p) => p.id)).toEqual(every.map((p) => p.id));
  });
});

describe("invitations", () => {
  it("user.invites.edit: accepts a pending invitation once", async () => {
    const listed = await all(cf.user.invites.list());
    expect(listed.map((i) => i.id)).toEqual([PENDING_INVITE, EXPIRED_INVITE]);
    const accepted = await cf.user.invites.edit(PENDING_INVITE, { status: "accepted" });
    expect(accepted).toMatchObject({ id: PENDING_INVITE, status: "accepted", organization_id: ACCOUNT_A });
    expect((await cf.user.invites.get(PENDING_INVITE)).status).toBe("accepted");

    const again = await cf.user.invites.edit(PENDING_INVITE, { status: "rejected" }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(Cloudflare.BadRequestError);
    const expired = await cf.user.invites.edit(EXPIRED_INVITE, { status: "accepted" }).catch((e: unknown) => e);
    expect(expired).toBeInstanceOf(Cloudflare.BadRequestError);
    const badStatus = await cf.user.invites.edit(EXPIRED_INVITE, { status: "maybe" as never }).catch((e: unknown) => e);
    expect(badStatus).toBeInstanceOf(Cloudflare.BadRequestError);
    const missing = await cf.user.invites.edit("0".repeat(32), { status: "accepted" }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Cloudflare.NotFoundError);
  });
});

describe("filters and firewall rules", () => {
  const zone_id = PRO_ZONE;

  it("two-call flow: create a filter, a rule on it, read, list, update, delete in reverse", async () => {
    const created = await all(
      cf.filters.create({
        zone_id,
        body: [{ expression: 'http.request.uri.path contains "/login"', description: "login" }],
      }),
    );
    expect(created).toHaveLength(1);
    const filter = created[0];
    expect(filter).toMatchObject({ paused: false, expression: 'http.request.uri.path contains "/login"' });
    const filterId = filter?.id ?? "";
    expect(await cf.filters.get(filterId, { zone_id })).toEqual(filter);

    const rules = await all(
      cf.firewall.rules.create({ zone_id, action: "block" as never, filter: { id: filterId } as never }),
    );
    expect(rules).toHaveLength(1);
    const ruleId = rules[0]?.id ?? "";
    expect(rules[0]).toMatchObject({ action: "block", paused: false, priority: null, filter: { id: filterId } });

    expect((await cf.firewall.rules.get(ruleId, { zone_id })).id).toBe(ruleId);
    expect((await all(cf.firewall.rules.list({ zone_id }))).map((r) => r.id)).toContain(ruleId);
    expect((await all(cf.filters.list({ zone_id, description: "LOGIN" }))).map((f) => f.id)).toEqual([filterId]);

    const updatedFilter = await cf.filters.update(filterId, {
      zone_id,
      expression: 'http.request.uri.path contains "/signin"',
      paused: true,
    } as never);
    expect(updatedFilter).toMatchObject({
      id: filterId,
      paused: true,
      expression: 'http.request.uri.path contains "/signin"',
    });
    const updatedRule = await cf.firewall.rules.update(ruleId, {
      zone_id,
      action: "challenge" as never,
      filter: { id: filterId },
    } as never);
    expect(updatedRule).toMatchObject({ id: ruleId, action: "challenge", filter: { id: filterId, paused: true } });

    // A filter still used by a rule is not deleted: 409.
    const inUse = await cf.filters.delete(filterId, { zone_id }).catch((e: unknown) => e);
    expect(inUse).toBeInstanceOf(Cloudflare.ConflictError);
    expect((await cf.firewall.rules.delete(ruleId, { zone_id })).id).toBe(ruleId);
    expect((await cf.filters.delete(filterId, { zone_id })).id).toBe(filterId);
    const gone = await cf.filters.get(filterId, { zone_id }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(Cloudflare.NotFoundError);
    const ruleGone = await cf.firewall.rules.get(ruleId, { zone_id }).catch((e: unknown) => e);
    expect(ruleGone).toBeInstanceOf(Cloudflare.NotFoundError);
  });

  it("one-call flow: the rule's filter refuses update and delete; deleting the rule with delete_filter_if_unused removes it", async () => {
    const rules = await all(
      cf.firewall.rules.create({
        zone_id,
        action: "block" as never,
        filter: { expression: "ip.src in {192.0.2.0/24}" },
      }),
    );
    const rule = rules[0];
    const filterId = rule?.filter !== undefined && "id" in rule.filter ? (rule.filter.id ?? "") : "";
    expect(filterId).toMatch(/^[0-9a-f]{32}$/);
    expect(await cf.filters.get(filterId, { zone_id })).toMatchObject({ expression: "ip.src in {192.0.2.0/24}" });

    const update = await cf.filters
      .update(filterId, { zone_id, expression: "ip.src in {198.51.100.0/24}" } as never)
      .catch((e: unknown) => e);
    expect(update).toBeInstanceOf(Cloudflare.PermissionDeniedError);
    const del = await cf.filters.delete(filterId, { zone_id }).catch((e: unknown) => e);
    expect(del).toBeInstanceOf(Cloudflare.PermissionDeniedError);
    expect(await cf.filters.get(filterId, { zone_id })).toMatchObject({ expression: "ip.src in {192.0.2.0/24}" });

    await cf.firewall.rules.delete(rule?.id ?? "", { zone_id }, { body: { delete_filter_if_unused: true } });
    const gone = await cf.filters.get(filterId, { zone_id }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(Cloudflare.NotFoundError);
  });

  it("a 409 is final: the SDK with its default retries sends the refused request once, not three times", async () => {
    // The SDK retries 409 by default (a lock timeout to it); these refusals would only repeat.
    const retrying = new Cloudflare({
      apiToken: TOKEN,
      apiEmail: null,
      apiKey: null,
      userServiceKey: null,
      baseURL: server.url,
      fetch: log.fetch,
    });
    const [filter] = await all(cf.filters.create({ zone_id, body: [{ expression: "ip.src eq 198.51.100.99" }] }));
    const filterId = filter?.id ?? "";
    const [rule] = await all(
      cf.firewall.rules.create({ zone_id, action: "block" as never, filter: { id: filterId } as never }),
    );
    const before = log.count("DELETE", /\/filters\//);
    const inUse = await retrying.filters.delete(filterId, { zone_id }).catch((e: unknown) => e);
    expect(inUse).toBeInstanceOf(Cloudflare.ConflictError);
    expect((inUse as APIError).headers?.get("x-should-retry")).toBe("false");
    expect(log.count("DELETE", /\/filters\//) - before).toBe(1);
    await cf.firewall.rules.delete(rule?.id ?? "", { zone_id });
    await cf.filters.delete(filterId, { zone_id });
  });

  it("the log action is Enterprise only: a Pro zone's rule cannot be changed to log either", async () => {
    const [filter] = await all(cf.filters.create({ zone_id, body: [{ expression: "ip.src eq 192.0.2.77" }] }));
    const filterId = filter?.id ?? "";
    const [rule] = await all(
      cf.firewall.rules.create({ zone_id, action: "block" as never, filter: { id: filterId } as never }),
    );
    const ruleId = rule?.id ?? "";
    const created = await all(
      cf.firewall.rules.create({ zone_id, action: "log" as never, filter: { id: filterId } as never }),
    ).catch((e: unknown) => e);
    expect(created).toBeInstanceOf(Cloudflare.PermissionDeniedError);
    const updated = await cf.firewall.rules
      .update(ruleId, { zone_id, action: "log" as never, filter: { id: filterId } } as never)
      .catch((e: unknown) => e);
    expect(updated).toBeInstanceOf(Cloudflare.PermissionDeniedError);
    expect((updated as APIError).errors[0]).toMatchObject({ code: 10203 });
    expect(await cf.firewall.rules.get(ruleId, { zone_id })).toMatchObject({ id: ruleId, action: "block" });
    await cf.firewall.rules.delete(ruleId, { zone_id });
    await cf.filters.delete(filterId, { zone_id });
  });

  it("invalid input is refused whole with 400, and nothing is created", async () => {
    const before = (await all(cf.filters.list({ zone_id }))).length;
    const bad = await all(
      cf.firewall.rules.create({ zone_id, action: "block" as never, filter: { expression: "http.host eq" } }),
    ).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Cloudflare.BadRequestError);
    expect((bad as APIError).errors[0]?.message).toContain("Filter parsing error");
    const regex = await all(
      cf.filters.create({ zone_id, body: [{ expression: 'http.host matches "\\Qa\\E"' }] }),
    ).catch((e: unknown) => e);
    expect(regex).toBeInstanceOf(Cloudflare.BadRequestError);
    // The SDK types `action` as the rate-limit object; the wire wants the string the docs show.
    const modeAction = await all(
      cf.firewall.rules.create({
        zone_id,
        action: { mode: "challenge" },
        filter: { expression: "ip.src eq 192.0.2.9" },
      }),
    ).catch((e: unknown) => e);
    expect(modeAction).toBeInstanceOf(Cloudflare.BadRequestError);
    expect((modeAction as APIError).errors[0]?.message).toMatch(/action/);
    expect((await all(cf.filters.list({ zone_id }))).length).toBe(before);
    const inline = await all(cf.filters.create({ zone_id, body: [{ expression: 'http.host matches "(?i)^www\\."' }] }));
    expect(inline).toHaveLength(1);
    await cf.filters.delete(inline[0]?.id ?? "", { zone_id });
  });
});

describe("rulesets and the managed-rules migration", () => {
  const execute = (id = "efb7b8c949ac4650a09736fc376e9aee") => ({
    action: "execute" as const,
    expression: "true",
    enabled: true,
    action_parameters: { id },
  });

  it("rulesets.phases.update/get: a real ruleset whose version grows and whose rules keep their ids", async () => {
    const phase = "http_request_firewall_managed";
    const first = asRuleset(
      await cf.rulesets.phases.update(phase, {
        zone_id: ENT_ZONE,
        rules: [execute()],
      } as UpdateParams),
    );
    expect(first).toMatchObject({ kind: "zone", phase, name: "default", version: "1" });
    expect(first.id).toMatch(/^[0-9a-f]{32}$/);
    const rule = first.rules[0];
    expect(rule?.id).toMatch(/^[0-9a-f]{32}$/);
    expect(rule?.version).toBe("1");

    const read = asRuleset(await cf.rulesets.phases.get(phase, { zone_id: ENT_ZONE }));
    expect(read).toEqual(first);

    const second = asRuleset(
      await cf.rulesets.phases.update(phase, {
        zone_id: ENT_ZONE,
        rules: [{ ...execute(), id: rule?.id, enabled: false }, execute("4814384a9e5d4991b9815dcfc25d2f1f")],
      } as UpdateParams),
    );
    expect(second.id).toBe(first.id);
    expect(second.version).toBe("2");
    expect(second.rules.map((r) => r.id)[0]).toBe(rule?.id);
    expect(second.rules[0]?.version).toBe("2");
    expect(second.rules[1]?.version).toBe("1");
    expect(second.rules[1]?.id).not.toBe(rule?.id);
    const third = asRuleset(
      await cf.rulesets.phases.update(phase, {
        zone_id: ENT_ZONE,
        rules: [...second.rules],
      } as unknown as UpdateParams),
    );
    expect(third.version).toBe("3");
    // Unchanged rules keep their version.
    expect(third.rules.map((r) => r.version)).toEqual(["2", "1"]);

    const missing = await cf.rulesets.phases
      .get("http_request_firewall_custom", { zone_id: ENT_ZONE })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Cloudflare.NotFoundError);
    const blank = await cf.rulesets.phases
      .update(phase, { zone_id: ENT_ZONE, rules: [{ ...execute(), expression: "" }] } as UpdateParams)
      .catch((e: unknown) => e);
    expect(blank).toBeInstanceOf(Cloudflare.BadRequestError);
    expect((blank as APIError).errors[0]?.code).toBe(20125);
  });

  it("a rate-limiting rule keeps its ratelimit and exposed_credential_check; a malformed one is refused, nothing saved", async () => {
    const phase = "http_ratelimit";
    const ratelimit = {
      characteristics: ["ip.src", "cf.colo.id"],
      period: 60,
      requests_per_period: 100,
      mitigation_timeout: 600,
    };
    const exposed_credential_check = {
      username_expression: 'lookup_json_string(http.request.body.raw, "user")',
      password_expression: 'lookup_json_string(http.request.body.raw, "pass")',
    };
    const rule = {
      action: "block" as const,
      expression: 'http.request.uri.path eq "/login"',
      ratelimit,
      exposed_credential_check,
    };
    const saved = asRuleset(await cf.rulesets.phases.update(phase, { zone_id: BIZ_ZONE, rules: [rule] }));
    expect(saved.rules[0]).toMatchObject({ ratelimit, exposed_credential_check });
    const read = asRuleset(await cf.rulesets.phases.get(phase, { zone_id: BIZ_ZONE }));
    expect(read.rules[0]).toMatchObject({ ratelimit, exposed_credential_check });
    // Sent back as read, the rule is unchanged: its version stays.
    const again = asRuleset(
      await cf.rulesets.phases.update(phase, { zone_id: BIZ_ZONE, rules: [...read.rules] } as unknown as UpdateParams),
    );
    expect(again.rules[0]?.version).toBe(read.rules[0]?.version);

    for (const [bad, pointer] of [
      [{ ...ratelimit, period: 0 }, "/rules/0/ratelimit/period"],
      [{ period: 60 }, "/rules/0/ratelimit/characteristics"],
      [{ characteristics: ["ip.src"] }, "/rules/0/ratelimit/period"],
      [{ ...ratelimit, requests_to_origin: "yes" }, "/rules/0/ratelimit/requests_to_origin"],
    ] as const) {
      const refused = await cf.rulesets.phases
        .update(phase, { zone_id: BIZ_ZONE, rules: [{ ...rule, ratelimit: bad }] } as unknown as UpdateParams)
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Cloudflare.BadRequestError);
      expect((refused as APIError).errors.map((e) => e.source?.pointer)).toContain(pointer);
    }
    const noUser = await cf.rulesets.phases
      .update(phase, {
        zone_id: BIZ_ZONE,
        rules: [{ ...rule, exposed_credential_check: { password_expression: "x" } }],
      } as unknown as UpdateParams)
      .catch((e: unknown) => e);
    expect(noUser).toBeInstanceOf(Cloudflare.BadRequestError);
    expect((await cf.rulesets.phases.get(phase, { zone_id: BIZ_ZONE })).version).toBe(again.version);
  });

  it("before migrating, a Pro zone may save the managed entry point only with every rule disabled", async () => {
    const phase = "http_request_firewall_managed";
    const enabled = await cf.rulesets.phases
      .update(phase, { zone_id: PRO_ZONE, rules: [execute()] } as UpdateParams)
      .catch((e: unknown) => e);
    expect(enabled).toBeInstanceOf(Cloudflare.PermissionDeniedError);
    const disabled = asRuleset(
      await cf.rulesets.phases.update(phase, {
        zone_id: PRO_ZONE,
        rules: [{ ...execute(), enabled: false }],
      } as UpdateParams),
    );
    expect(disabled.version).toBe("1");
  });

  it("the whole migration procedure on an Enterprise zone: check, config, validation mode, pending, status, irreversible", async () => {
    const zone = `/zones/${ENT_ZONE}`;
    const check = (await cf.get(`${zone}/waf_migration/check`, { query: { phase_two: 1 } })) as {
      result: { compatible: boolean; migration_state: string };
    };
    expect(check.result).toEqual({ compatible: true, migration_state: "start" });

    const before = (await cf.get(`${zone}/waf_migration/status`)) as { result: Record<string, string> };
    expect(before.result).toMatchObject({ old_waf_status: "enabled", new_waf_status: "disabled" });

    const config = (await cf.get(`${zone}/waf_migration/config`, { query: { phase_two: 1 } })) as {
      result: { name: string; rules: { id: string; action: string }[] };
    };
    expect(config.result.name).toBe("default");
    expect(config.result.rules.length).toBeGreaterThan(0);
    expect(config.result.rules.every((r) => r.id === "")).toBe(true);

    const entry = `${zone}/rulesets/phases/http_request_firewall_managed/entrypoint`;
    const validation = (await cf.put(entry, {
      query: { waf_migration: "validation", phase_two: 1 },
      body: config.result,
    })) as { result: { version: string; rules: { id: string }[] } };
    expect(validation.result.rules.every((r) => /^[0-9a-f]{32}$/.test(r.id))).toBe(true);
    const during = (await cf.get(`${zone}/waf_migration/status`)) as { result: Record<string, string> };
    expect(during.result).toMatchObject({
      migration_state: "validation",
      old_waf_status: "enabled",
      new_waf_status: "enabled",
    });

    const pending = (await cf.put(entry, {
      query: { waf_migration: "pending", phase_two: 1 },
      body: config.result,
    })) as { result: { version: string } };
    expect(Number(pending.result.version)).toBeGreaterThan(Number(validation.result.version));
    const after = (await cf.get(`${zone}/waf_migration/status`)) as { result: Record<string, string> };
    expect(after.result).toMatchObject({
      migration_state: "complete",
      old_waf_status: "disabled",
      new_waf_status: "enabled",
    });

    // Irreversible: no way back into validation mode, and the previous configuration is gone.
    const back = await cf
      .put(entry, { query: { waf_migration: "validation", phase_two: 1 }, body: config.result })
      .catch((e: unknown) => e);
    expect(back).toBeInstanceOf(Cloudflare.ConflictError);
    expect(typeof (back as APIError).errors[0]?.code).toBe("number");
    const oldConfig = await cf
      .get(`${zone}/waf_migration/config`, { query: { phase_two: 1 } })
      .catch((e: unknown) => e);
    expect(oldConfig).toBeInstanceOf(Cloudflare.ConflictError);
    const stillComplete = (await cf.get(`${zone}/waf_migration/status`)) as { result: Record<string, string> };
    expect(stillComplete.result.migration_state).toBe("complete");
    // The rulesets API keeps working after the migration.
    expect((await cf.rulesets.phases.get("http_request_firewall_managed", { zone_id: ENT_ZONE })).version).toBe(
      pending.result.version,
    );
  });

  it("a Business zone: validation mode is refused, URI overrides block the migration until deleted", async () => {
    const zone = `/zones/${BIZ_ZONE}`;
    const entry = `${zone}/rulesets/phases/http_request_firewall_managed/entrypoint`;
    const blocked = (await cf.get(`${zone}/waf_migration/check`, { query: { phase_two: 1 } })) as {
      result: { compatible: boolean; migration_state?: string };
      messages: { code: number; message: string }[];
    };
    expect(blocked.result).toEqual({ compatible: false });
    expect(blocked.messages[0]?.code).toEqual(expect.any(Number));

    const config = (await cf.get(`${zone}/waf_migration/config`, { query: { phase_two: 1 } })) as {
      result: unknown;
    };
    const validation = await cf
      .put(entry, { query: { waf_migration: "validation", phase_two: 1 }, body: config.result })
      .catch((e: unknown) => e);
    expect(validation).toBeInstanceOf(Cloudflare.PermissionDeniedError);
    const refused = await cf
      .put(entry, { query: { waf_migration: "pending", phase_two: 1 }, body: config.result })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Cloudflare.ConflictError);

    await cf.delete(`${zone}/firewall/waf/overrides/0e000000000000000000000000000001`);
    const ok = (await cf.get(`${zone}/waf_migration/check`, { query: { phase_two: 1 } })) as {
      result: { compatible: boolean };
    };
    expect(ok.result.compatible).toBe(true);
    await cf.put(entry, { query: { waf_migration: "1", phase_two: 1 }, body: config.result });
    const status = (await cf.get(`${zone}/waf_migration/status`)) as { result: Record<string, string> };
    expect(status.result).toMatchObject({ migration_state: "complete", old_waf_status: "disabled" });
    // The previous managed-rules APIs stop working once migrated.
    const gone = await cf
      .delete(`${zone}/firewall/waf/overrides/0e000000000000000000000000000001`)
      .catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(Cloudflare.ConflictError);
  });
});
