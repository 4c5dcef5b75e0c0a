/**
 * The local v4 API driven by the official `cloudflare` SDK over loopback, on the semantics a
 * client relies on beyond the shapes: what a PUT replaces, which fields a body may carry, which
 * listing filters are honoured, what a migration may do, and how errors point at their cause.
 * Every response is checked against the published schema (schema.ts), as in sdk.test.ts.
 */
import type Cloudflare from "cloudflare";
import { APIError } from "cloudflare/core/error";
import { describe, expect, it } from "vitest";
import { all, ENT_ZONE, PRO_ZONE, useSdkServer } from "./helpers";

let cf: Cloudflare;
useSdkServer((env) => {
  ({ cf } = env);
});

/** The error the SDK threw for a refused request. */
async function refusal(request: Promise<unknown>): Promise<APIError> {
  const error = await request.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
}

describe("managed-rules migration", () => {
  it("a migration with no rules is refused (400) and changes nothing: it would drop every rule for good", async () => {
    const zone = `/zones/${PRO_ZONE}`;
    const entry = `${zone}/rulesets/phases/http_request_firewall_managed/entrypoint`;
    const before = (await cf.get(`${zone}/waf_migration/status`)) as { result: Record<string, string> };
    for (const mode of ["pending", "1"]) {
      const refused = await refusal(
        cf.put(entry, { query: { waf_migration: mode, phase_two: 1 }, body: { name: "default", rules: [] } }),
      );
      expect(refused.status).toBe(400);
      expect(refused.errors[0]).toMatchObject({ code: 10406, source: { pointer: "/rules" } });
      expect(refused.errors[0]?.message).toMatch(/cannot be undone/);
    }
    const after = (await cf.get(`${zone}/waf_migration/status`)) as { result: Record<string, string> };
    expect(after.result).toEqual(before.result);
    expect(after.result.migration_state).not.toBe("complete");
    // The documented procedure still migrates: the config always has the managed ruleset's rule.
    const config = (await cf.get(`${zone}/waf_migration/config`, { query: { phase_two: 1 } })) as { result: unknown };
    await cf.put(entry, { query: { waf_migration: "pending", phase_two: 1 }, body: config.result });
    const done = (await cf.get(`${zone}/waf_migration/status`)) as { result: Record<string, string> };
    expect(done.result.migration_state).toBe("complete");
  });

  it("validation mode with no rules is refused too: leaving it with pending would complete the loss", async () => {
    const entry = `/zones/${ENT_ZONE}/rulesets/phases/http_request_firewall_managed/entrypoint`;
    const refused = await refusal(
      cf.put(entry, { query: { waf_migration: "validation", phase_two: 1 }, body: { rules: [] } }),
    );
    expect(refused.status).toBe(400);
    expect(refused.errors[0]).toMatchObject({ code: 10406, source: { pointer: "/rules" } });
  });
});

describe("rulesets: dry_run", () => {
  it("rulesets.phases.update with dry_run: true returns null and saves nothing, not even a migration", async () => {
    const zone = `/zones/${ENT_ZONE}`;
    const custom = "http_request_firewall_custom";
    const result = await cf.rulesets.phases.update(custom, {
      zone_id: ENT_ZONE,
      dry_run: true,
      rules: [{ action: "block", expression: "ip.src eq 192.0.2.9" }],
    });
    expect(result).toBeNull();
    const missing = await refusal(cf.rulesets.phases.get(custom, { zone_id: ENT_ZONE }));
    expect(missing.status).toBe(404);

    const before = (await cf.get(`${zone}/waf_migration/status`)) as { result: Record<string, string> };
    const config = (await cf.get(`${zone}/waf_migration/config`, { query: { phase_two: 1 } })) as { result: unknown };
    const entry = `${zone}/rulesets/phases/http_request_firewall_managed/entrypoint`;
    const dry = (await cf.put(entry, {
      query: { waf_migration: "pending", phase_two: 1, dry_run: true },
      body: config.result,
    })) as { result: unknown; success: boolean };
    expect([dry.success, dry.result]).toEqual([true, null]);
    const after = (await cf.get(`${zone}/waf_migration/status`)) as { result: Record<string, string> };
    expect(after.result).toEqual(before.result);
    expect(after.result.migration_state).not.toBe("complete");
    // A dry run is refused as the update would be.
    const refused = await refusal(
      cf.rulesets.phases.update(custom, {
        zone_id: ENT_ZONE,
        dry_run: true,
        rules: [{ action: "block", expression: "" }],
      }),
    );
    expect([refused.status, refused.errors[0]?.code]).toEqual([400, 20125]);
  });
});

describe("firewall rules: PUT replaces", () => {
  it("firewall.rules.update resets every field it does not send, paused included, as the platform's PUT does", async () => {
    const zone_id = ENT_ZONE;
    const [filter] = await all(
      cf.filters.create({ zone_id, body: [{ expression: 'http.request.uri.path contains "/put-replaces"' }] }),
    );
    const filterId = filter?.id ?? "";
    const [created] = (await all(
      cf.firewall.rules.create({
        zone_id,
        action: "block",
        filter: { id: filterId },
        paused: true,
        priority: 5,
        description: "kept only if sent",
        ref: "r-1",
      } as never),
    )) as unknown as Record<string, unknown>[];
    const ruleId = (created as { id: string }).id;
    expect(created).toMatchObject({ paused: true, priority: 5, description: "kept only if sent", ref: "r-1" });
    // The SDK's update sends action and filter only.
    const updated = (await cf.firewall.rules.update(ruleId, {
      zone_id,
      action: "challenge" as never,
      filter: { id: filterId },
    } as never)) as unknown as Record<string, unknown>;
    expect(updated).toMatchObject({ id: ruleId, action: "challenge", paused: false, priority: null });
    expect(updated).not.toHaveProperty("description");
    expect(updated).not.toHaveProperty("ref");
    // What GET shows is what the PUT left.
    expect(await cf.firewall.rules.get(ruleId, { zone_id })).toEqual(updated);
    // Sent again, every field is kept.
    const resent = (await cf.firewall.rules.update(ruleId, {
      zone_id,
      action: "challenge",
      filter: { id: filterId },
      paused: true,
      priority: 7,
      description: "sent",
      ref: "r-2",
    } as never)) as unknown as Record<string, unknown>;
    expect(resent).toMatchObject({ paused: true, priority: 7, description: "sent", ref: "r-2" });
  });
});

describe("DNS listing filters", () => {
  it("the shadowed-records filters are refused (400), not ignored: ignored, they answered with every record", async () => {
    const zone_id = ENT_ZONE;
    for (const [params, param] of [
      [{ shadowing_name: "api.ent.example.com" }, "shadowing_name"],
      [{ shadowed_by_name: "sub.ent.example.com", include_shadow_metadata: true }, "shadowed_by_name"],
      [{ include_shadow_metadata: true }, "include_shadow_metadata"],
    ] as const) {
      const refused = await refusal(all(cf.dns.records.list({ zone_id, ...params })));
      expect(refused.status).toBe(400);
      expect(refused.errors.map((e) => e.message).join(" ")).toContain(`${param}`);
    }
    // Without them, or with the metadata explicitly off, the listing answers.
    expect((await all(cf.dns.records.list({ zone_id, include_shadow_metadata: false }))).length).toBeGreaterThan(0);
  });
});
