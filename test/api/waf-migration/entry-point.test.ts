import { describe, expect, it } from "vitest";
import {
  checkCompatibility,
  createUriOverride,
  deleteUriOverride,
  getMigrationStatus,
  MANAGED_RULESET_IDS,
  PREVIOUS_API_GONE_MESSAGE,
  pageRuleExpression,
  updateEntryPoint,
  updatePreviousWafSettings,
  validateRulesetBody,
} from "../../../src/api/waf-migration/index";
import { blockRules, configOf, withoutIds, zone } from "./fixtures";

const EXEC = { action: "execute", expression: "true", action_parameters: { id: MANAGED_RULESET_IDS.managed } };
const body = (...rules: unknown[]) => ({ name: "default", rules });
const pending = { waf_migration: "pending", phase_two: 1 } as const;

describe("updateEntryPoint: procedure", () => {
  it("updateEntryPoint: Enterprise goes check → config → validation → pending", () => {
    let z = zone("enterprise");
    expect(checkCompatibility(z, { phaseTwo: true }).result).toMatchObject({ compatible: true });
    const config = configOf(z);
    const v = updateEntryPoint(z, { waf_migration: "validation", phase_two: "1" }, config);
    expect(v.success).toBe(true);
    z = v.zone;
    expect(getMigrationStatus(z).result).toEqual({
      migration_state: "validation",
      old_waf_status: "enabled",
      new_waf_status: "enabled",
      source: "zone",
    });
    const done = updateEntryPoint(z, pending, config);
    expect(done.steps.map((s) => [s.step, s.status])).toEqual([
      ["validate-zone", "unchanged"],
      ["parse-query", "unchanged"],
      ["check-state", "unchanged"],
      ["check-plan", "unchanged"],
      ["check-compatibility", "unchanged"],
      ["check-limits", "unchanged"],
      ["validate-body", "unchanged"],
      ["save-entry-point", "changed"],
      ["enable-new-managed-rules", "unchanged"],
      ["disable-previous-managed-rules", "changed"],
      ["set-migration-state", "changed"],
    ]);
    expect(getMigrationStatus(done.zone).result).toMatchObject({
      old_waf_status: "disabled",
      new_waf_status: "enabled",
    });
  });

  it("updateEntryPoint: saves the body with empty id, version and ref dropped", () => {
    const r = updateEntryPoint(zone("pro"), pending, configOf(zone("pro")));
    expect(r.success).toBe(true);
    for (const rule of r.zone.entryPoint?.rules ?? []) {
      expect(rule).not.toHaveProperty("id");
      expect(rule).not.toHaveProperty("version");
      expect(rule).not.toHaveProperty("ref");
    }
  });

  it.each([
    ["1", "pending", "complete"],
    [1, "pending", "complete"],
    ["2", "validation", "validation"],
    [2, "validation", "validation"],
  ] as const)("updateEntryPoint: waf_migration=%s means %s", (value, _mode, state) => {
    const r = updateEntryPoint(
      zone("enterprise"),
      { waf_migration: value, phase_two: 1 },
      configOf(zone("enterprise")),
    );
    expect(r.zone.migrationState).toBe(state);
  });

  it.each([["3"], ["complete"], [""], [0]])("updateEntryPoint: refuses waf_migration=%j", (value) => {
    const r = updateEntryPoint(
      zone("enterprise"),
      { waf_migration: value, phase_two: 1 },
      configOf(zone("enterprise")),
    );
    expect(r.success).toBe(false);
    expect(r.steps.at(-1)?.step).toBe("parse-query");
  });

  it("updateEntryPoint: refuses an unknown phase_two value and a non-object query without throwing", () => {
    expect(updateEntryPoint(zone(), { waf_migration: "pending", phase_two: "yes" }, {}).steps.at(-1)?.step).toBe(
      "parse-query",
    );
    const r = updateEntryPoint(zone(), null as never, withoutIds(configOf(zone())));
    expect(r.steps.find((s) => s.status === "refused")?.step).toBe("check-plan");
  });

  it("updateEntryPoint: irreversible, and the previous APIs refuse once migrated", () => {
    const done = updateEntryPoint(zone("pro"), pending, configOf(zone("pro"))).zone;
    expect(done.migrationState).toBe("complete");
    for (const mode of ["pending", "validation", "1", "2"]) {
      const r = updateEntryPoint(done, { waf_migration: mode, phase_two: 1 }, configOf(zone("pro")));
      expect(r.success).toBe(false);
      expect(r.zone.migrationState).toBe("complete");
    }
    for (const r of [
      updatePreviousWafSettings(done, { enabled: true }),
      createUriOverride(done, { id: "o1", urls: ["a.com/*"] }),
      deleteUriOverride(done, "o1"),
    ]) {
      expect(r.success).toBe(false);
      expect(r.errors).toEqual([{ code: 10402, message: PREVIOUS_API_GONE_MESSAGE }]);
    }
  });

  it("updateEntryPoint: after migration the rulesets API still updates the entry point", () => {
    const done = updateEntryPoint(zone("pro"), pending, configOf(zone("pro"))).zone;
    const r = updateEntryPoint(done, {}, body({ ...EXEC, enabled: false }));
    expect(r.success).toBe(true);
    expect(r.zone.entryPoint?.rules).toEqual([{ ...EXEC, description: "", enabled: false }]);
  });

  it("updateEntryPoint: Pro zones may PUT without migrating only with every rule disabled", () => {
    expect(updateEntryPoint(zone("pro"), {}, body({ ...EXEC, enabled: false })).success).toBe(true);
    const r = updateEntryPoint(zone("pro"), {}, body(EXEC));
    expect(r.success).toBe(false);
    expect(r.steps.find((s) => s.status === "refused")?.step).toBe("check-plan");
  });

  it("updateEntryPoint: a plain PUT refuses the empty ids that migration mode accepts", () => {
    const r = updateEntryPoint(zone("enterprise"), {}, configOf(zone("enterprise")));
    expect(r.success).toBe(false);
    expect(r.errors[0]).toMatchObject({ source: { pointer: "/rules/0/id" } });
  });
});

describe("updateEntryPoint: failure cases", () => {
  it.each([
    [200, true],
    [201, false],
  ])("updateEntryPoint: %i firewall rules → migrates: %s", (count, ok) => {
    const z = zone("business", { firewallRules: blockRules(count) });
    const r = updateEntryPoint(z, pending, configOf(z));
    expect(r.success).toBe(ok);
    if (!ok) {
      expect(r.zone).toBe(z);
      expect(r.steps.find((s) => s.status === "refused")?.step).toBe("check-limits");
      expect(r.errors[0]?.message).toContain("contact support");
      expect(getMigrationStatus(r.zone).result).toMatchObject({
        old_waf_status: "enabled",
        new_waf_status: "disabled",
      });
    }
  });

  // 4 KB is counted in bytes: "é" is two bytes in UTF-8.
  it.each([
    ["4096 ASCII bytes", "a".repeat(4096), true],
    ["4097 ASCII bytes", "a".repeat(4097), false],
    ["2048 two-byte characters (4096 bytes)", "é".repeat(2048), true],
    ["2049 two-byte characters (4098 bytes)", "é".repeat(2049), false],
  ])("updateEntryPoint: a firewall rule expression of %s → migrates: %s", (_name, expression, ok) => {
    const z = zone("pro", { firewallRules: [{ id: "long", expression, action: "block", paused: false }] });
    const r = updateEntryPoint(z, pending, configOf(z));
    expect(r.success).toBe(ok);
    if (!ok) {
      expect(r.steps.find((s) => s.status === "refused")?.step).toBe("check-limits");
      expect(r.errors[0]?.message).toContain("firewall rule long");
    }
  });

  it("updateEntryPoint: an over-long bypass expression fails on limits, not on body validation", () => {
    const z = zone("pro", {
      firewallRules: [
        {
          id: "b",
          expression: `http.request.uri.path contains "${"a".repeat(4100)}"`,
          action: "bypass",
          products: ["waf"],
          paused: false,
        },
      ],
    });
    const r = updateEntryPoint(z, pending, configOf(z));
    expect(r.steps.find((s) => s.status === "refused")?.step).toBe("check-limits");
  });

  // The expressions the migration makes from page rules are held to the limit the update applies to
  // the configuration (4,096 characters): over it, the migration fails on limits ("contact support")
  // instead of offering a configuration that the update then refuses as invalid.
  const base = pageRuleExpression("").length;
  it.each([
    ["4096 characters", true, 4096],
    ["4097 characters", false, 4097],
  ])(
    "updateEntryPoint: a page rule switching the managed rules off whose skip rule is %s → migrates: %s",
    (_n, ok, length) => {
      const target = "a".repeat(length - base);
      const z = zone("business", { pageRules: [{ id: "long", target, setting: "waf_off", enabled: true }] });
      const config = configOf(z);
      expect(config.rules[0]?.expression.length).toBe(length);
      const r = updateEntryPoint(z, pending, config);
      expect(r.success).toBe(ok);
      if (!ok) {
        expect(r.zone).toBe(z);
        expect(r.steps.find((s) => s.status === "refused")?.step).toBe("check-limits");
        expect(r.errors[0]?.message).toContain("page rule long");
        expect(r.errors[0]?.message).toContain("contact support");
      }
    },
  );

  it("updateEntryPoint: page rules switching the managed rules on are held to the limit as one scope", () => {
    const onRules = (count: number) =>
      Array.from({ length: count }, (_, i) => ({
        id: `p${i}`,
        target: `www.shop${i}.example.com/en-gb/account/checkout/*`,
        setting: "waf_on" as const,
        enabled: true,
      }));
    const off = zone("business").previousWaf;
    const fits = zone("business", { previousWaf: { ...off, enabled: false }, pageRules: onRules(10) });
    expect(updateEntryPoint(fits, pending, configOf(fits)).success).toBe(true);
    // 50 page rules (Business's allowance): the joined scope is over 4,096 characters.
    const z = zone("business", { previousWaf: { ...off, enabled: false }, pageRules: onRules(50) });
    const config = configOf(z);
    expect(config.rules.some((rule) => rule.expression.length > 4096)).toBe(true);
    const r = updateEntryPoint(z, pending, config);
    expect(r.success).toBe(false);
    expect(r.zone).toBe(z);
    expect(r.steps.find((s) => s.status === "refused")?.step).toBe("check-limits");
    expect(r.errors[0]?.message).toContain("page rules that switch the managed rules on");
    // With the previous version on globally, those page rules change nothing and make no expression.
    const on = zone("business", { pageRules: onRules(50) });
    expect(updateEntryPoint(on, pending, configOf(on)).success).toBe(true);
  });

  it("updateEntryPoint: URI-based overrides block until deleted with the delete-override operation", () => {
    const z = zone("pro", { uriOverrides: [{ id: "o1", urls: ["a.com/*"] }] });
    const refused = updateEntryPoint(z, pending, configOf(z));
    expect(refused.steps.find((s) => s.status === "refused")?.step).toBe("check-compatibility");
    const cleared = deleteUriOverride(z, "o1").zone;
    expect(updateEntryPoint(cleared, pending, configOf(cleared)).zone.migrationState).toBe("complete");
  });
});

describe("validateRulesetBody", () => {
  const ok = (b: unknown, allowEmptyIds = false) => validateRulesetBody(b, { allowEmptyIds });
  const errorsOf = (b: unknown, allowEmptyIds = false) => {
    const v = ok(b, allowEmptyIds);
    return v.ok ? [] : v.errors;
  };

  it("validateRulesetBody: accepts the expressions the parser accepts", () => {
    for (const expression of ['http.request.uri.path contains "/admin"', "ip.src eq 203.0.113.1", "true"])
      expect(ok(body({ ...EXEC, expression })).ok).toBe(true);
  });

  it("validateRulesetBody: refuses an unknown field with the rulesets parse message", () => {
    const [e] = errorsOf(body({ ...EXEC, expression: "foo eq 1" }));
    expect(
      e?.message.startsWith(
        "'foo eq 1' is not a valid value for expression because could not parse filter expression: ",
      ),
    ).toBe(true);
    expect(e?.source).toEqual({ pointer: "/rules/0/expression" });
  });

  it("validateRulesetBody: a key the rule schema lacks is refused as the platform's decoder refuses it, at every checked level", () => {
    const owasp = MANAGED_RULESET_IDS.owasp;
    const cases: [unknown, string, string][] = [
      [{ ...EXEC, foo: 1 }, "/rules/0/foo", "foo"],
      [{ ...EXEC, Enabled: false }, "/rules/0/Enabled", "Enabled"],
      [{ ...EXEC, action_parameters: { id: owasp, bic: false } }, "/rules/0/action_parameters/bic", "bic"],
      [
        { action: "skip", expression: "true", action_parameters: { ruleset: "current", version: "1" } },
        "/rules/0/action_parameters/version",
        "version",
      ],
      [
        { ...EXEC, action_parameters: { id: owasp, overrides: { enabled: false, paused: true } } },
        "/rules/0/action_parameters/overrides/paused",
        "paused",
      ],
      [
        {
          ...EXEC,
          action_parameters: { id: owasp, overrides: { rules: [{ id: "a".repeat(32), enabled: false, x: 1 }] } },
        },
        "/rules/0/action_parameters/overrides/rules/0/x",
        "x",
      ],
      [
        {
          ...EXEC,
          action_parameters: { id: owasp, overrides: { categories: [{ category: "c", enabled: false, "a/b~": 1 }] } },
        },
        "/rules/0/action_parameters/overrides/categories/0/a~1b~0",
        "a/b~",
      ],
    ];
    for (const [rule, pointer, key] of cases) {
      const errors = errorsOf(body(rule));
      expect(errors, JSON.stringify(rule)).toEqual([
        { message: `invalid JSON: unknown field ${JSON.stringify(key)}`, source: { pointer } },
      ]);
    }
    // What a GET shows of a rule and a client sends back unchanged is taken; the read-only fields are not kept.
    const echoed = ok(body({ ...EXEC, last_updated: "2026-01-01T00:00:00Z", categories: ["owasp"] }));
    expect(echoed.ok && echoed.ruleset.rules[0]).toEqual({
      action: "execute",
      expression: EXEC.expression,
      description: "",
      enabled: true,
      action_parameters: EXEC.action_parameters,
    });
  });

  it("validateRulesetBody: a key the ruleset or a rule's logging lacks is refused too, not dropped", () => {
    const rules = [EXEC];
    const cases: [unknown, string, string][] = [
      [{ rules, descripton: "typo" }, "/descripton", "descripton"],
      [{ rules, Rules: [] }, "/Rules", "Rules"],
      [{ rules: [{ ...EXEC, logging: { enabled: false, level: "all" } }] }, "/rules/0/logging/level", "level"],
    ];
    for (const [b, pointer, key] of cases) {
      expect(errorsOf(b), JSON.stringify(b)).toEqual([
        { message: `invalid JSON: unknown field ${JSON.stringify(key)}`, source: { pointer } },
      ]);
    }
    // The ruleset as a GET shows it is taken back whole; its read-only fields are not kept.
    const echoed = ok({
      id: "b".repeat(32),
      name: "default",
      description: "",
      kind: "zone",
      phase: "http_request_firewall_managed",
      version: "3",
      last_updated: "2026-01-01T00:00:00.000000Z",
      rules,
    });
    expect(echoed.ok && echoed.ruleset).toEqual({
      name: "default",
      description: "",
      kind: "zone",
      phase: "http_request_firewall_managed",
      rules: [{ ...EXEC, description: "", enabled: true }],
    });
  });

  it("validateRulesetBody: a block rule's response is checked as the schema gives it", () => {
    const response = { status_code: 403, content: '{"error":"blocked"}', content_type: "application/json" };
    const block = (action_parameters: unknown) => ({
      rules: [{ action: "block", expression: "true", action_parameters }],
    });
    const kept = ok(block({ response }));
    expect(kept.ok && kept.ruleset.rules[0]?.action_parameters).toEqual({ response });
    const cases: [unknown, string][] = [
      [{ response: { ...response, status_code: 200 } }, "/rules/0/action_parameters/response/status_code"],
      [{ response: { ...response, status_code: 403.5 } }, "/rules/0/action_parameters/response/status_code"],
      [{ response: { status_code: 403, content_type: "text/plain" } }, "/rules/0/action_parameters/response/content"],
      [{ response: { ...response, content_type: "" } }, "/rules/0/action_parameters/response/content_type"],
      [{ response: "blocked" }, "/rules/0/action_parameters/response"],
      [{ response: { ...response, headers: {} } }, "/rules/0/action_parameters/response/headers"],
      [{ cache_level: "aggressive" }, "/rules/0/action_parameters/cache_level"],
    ];
    for (const [params, pointer] of cases) {
      expect(
        errorsOf(block(params)).map((e) => e.source?.pointer),
        JSON.stringify(params),
      ).toEqual([pointer]);
    }
  });

  it("validateRulesetBody: two rules with the same id are refused; a rule id names one rule", () => {
    const id = "a".repeat(32);
    const errors = errorsOf(body({ ...EXEC, id }, { ...EXEC, expression: "ssl" }, { ...EXEC, id }));
    expect(errors.map((e) => e.source?.pointer)).toEqual(["/rules/2/id"]);
    expect(errors[0]?.message).toMatch(/^'a{32}' is not a valid value for id because rule 0 has it/);
    expect(ok(body({ ...EXEC, id }, { ...EXEC, id: "b".repeat(32) })).ok).toBe(true);
    // The empty ids the migration config returns are dropped, never duplicates of one another.
    expect(ok(body({ ...EXEC, id: "" }, { ...EXEC, id: "" }), true).ok).toBe(true);
  });

  it("validateRulesetBody: a blank expression gets code 20125", () => {
    expect(errorsOf(body({ ...EXEC, expression: "" }))[0]).toMatchObject({
      code: 20125,
      message: "'' is not a valid value for expression because the expression cannot be blank",
    });
  });

  it("validateRulesetBody: refuses actions outside the enum", () => {
    expect(errorsOf(body({ ...EXEC, action: "blok" }))[0]?.message).toMatch(
      /^'blok' is not a valid value for action because/,
    );
    expect(errorsOf(body({ expression: "true", action_parameters: {} }))[0]?.message).toBe(
      "action is required for action parameters",
    );
  });

  it("validateRulesetBody: checks execute parameters", () => {
    expect(errorsOf(body({ action: "execute", expression: "true" }))).toHaveLength(1);
    expect(errorsOf(body({ ...EXEC, action_parameters: { id: "nope" } }))[0]?.source?.pointer).toBe(
      "/rules/0/action_parameters/id",
    );
    expect(
      errorsOf(body({ ...EXEC, action_parameters: { id: MANAGED_RULESET_IDS.owasp, matched_data: {} } })),
    ).toHaveLength(1);
  });

  it("validateRulesetBody: checks the overrides shape", () => {
    const withOverrides = (overrides: unknown) =>
      body({ ...EXEC, action_parameters: { id: MANAGED_RULESET_IDS.owasp, overrides } });
    const rule = "6179ae15870a4bb7b2d480d4843b323c";
    expect(ok(withOverrides({ rules: [{ id: rule, action: "log", enabled: false }] })).ok).toBe(true);
    expect(
      ok(withOverrides({ categories: [{ category: "paranoia-level-3", enabled: false }], enabled: true })).ok,
    ).toBe(true);
    for (const bad of [
      {},
      { rules: [] },
      { rules: [{ id: rule }] },
      { rules: [{ id: "short", enabled: false }] },
      {
        rules: [
          { id: rule, enabled: false },
          { id: rule, action: "log" },
        ],
      },
      { rules: [{ id: rule, score_threshold: 2.5 }] },
      { categories: [{ category: "", enabled: false }] },
      { action: "Block!" },
      { enabled: "yes" },
      { sensitivity_level: "low" },
    ])
      expect(ok(withOverrides(bad)).ok, JSON.stringify(bad)).toBe(false);
    expect(
      errorsOf(body({ action: "log", expression: "true", action_parameters: { overrides: { enabled: true } } }))[0]
        ?.message,
    ).toBe("overrides are allowed only when the action is 'execute'");
  });

  it("validateRulesetBody: a body's phase must be the entry point's own, whichever phase that is", () => {
    const custom = "http_request_firewall_custom" as const;
    const forCustom = (b: unknown) => validateRulesetBody(b, { phase: custom });
    const own = forCustom({ ...body({ ...EXEC }), phase: custom });
    expect(own.ok && own.ruleset.phase).toBe(custom);
    const other = forCustom({ ...body({ ...EXEC }), phase: "http_request_firewall_managed" });
    expect(other.ok ? [] : other.errors).toEqual([
      {
        message:
          "'http_request_firewall_managed' is not a valid value for phase because this entry point belongs to http_request_firewall_custom",
        source: { pointer: "/phase" },
      },
    ]);
    // Without a phase, the body is for the managed phase's entry point, as before.
    expect(ok({ ...body({ ...EXEC }), phase: "http_request_firewall_managed" }).ok).toBe(true);
    expect(ok({ ...body({ ...EXEC }), phase: custom }).ok).toBe(false);
  });

  it("validateRulesetBody: sensitivity_level overrides are taken in the DDoS phases, with their values only", () => {
    const ddos = (level: unknown) =>
      validateRulesetBody(
        body({
          ...EXEC,
          action_parameters: { id: "4d21379b4f9f4bb088e0729962c8b3cf", overrides: { sensitivity_level: level } },
        }),
        { phase: "ddos_l7" },
      );
    for (const level of ["default", "medium", "low", "eoff"]) expect(ddos(level).ok, level).toBe(true);
    const bad = ddos("high");
    expect(bad.ok ? [] : bad.errors.map((e) => e.source?.pointer)).toEqual([
      "/rules/0/action_parameters/overrides/sensitivity_level",
    ]);
    // Outside the DDoS phases it stays refused.
    expect(
      validateRulesetBody(
        body({ ...EXEC, action_parameters: { ...EXEC.action_parameters, overrides: { sensitivity_level: "low" } } }),
        {
          phase: "http_request_firewall_custom",
        },
      ).ok,
    ).toBe(false);
  });

  it("validateRulesetBody: checks skip parameters", () => {
    const skip = (p: unknown) => body({ action: "skip", expression: "true", action_parameters: p });
    expect(ok(skip({ ruleset: "current" })).ok).toBe(true);
    expect(ok(skip({ products: ["waf"], phases: ["http_ratelimit"] })).ok).toBe(true);
    for (const bad of [{}, { ruleset: "all" }, { products: ["nope"] }, { rulesets: ["x"] }, { rules: { x: ["y"] } }])
      expect(ok(skip(bad)).ok, JSON.stringify(bad)).toBe(false);
  });

  it("validateRulesetBody: a skip rule without action parameters is refused, as one with empty ones is", () => {
    expect(errorsOf(body({ action: "skip", expression: "true" }))).toEqual([
      {
        message: "action parameters are required for the 'skip' action",
        source: { pointer: "/rules/0/action_parameters" },
      },
    ]);
  });

  it("validateRulesetBody: empty id, version and ref only in migration mode", () => {
    const rule = { ...EXEC, id: "", version: "", ref: "" };
    expect(ok(body(rule), true).ok).toBe(true);
    expect(errorsOf(body(rule)).map((e) => e.source?.pointer)).toEqual([
      "/rules/0/id",
      "/rules/0/version",
      "/rules/0/ref",
    ]);
    expect(ok(body({ ...EXEC, id: "0123456789abcdef0123456789abcdef", version: "3", ref: "mine" })).ok).toBe(true);
  });

  it("validateRulesetBody: never throws on junk", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const junk of [
      undefined,
      null,
      1,
      "x",
      [],
      { rules: "x" },
      { rules: [null, 1] },
      { name: "", rules: [] },
      { kind: "root", rules: [] },
      body({ ...EXEC, action: "log", action_parameters: cyclic }),
    ])
      expect(ok(junk).ok).toBe(false);
  });

  it("validateRulesetBody: copies the body so later edits to the request do not reach the zone", () => {
    const input = body({ ...EXEC, action_parameters: { id: MANAGED_RULESET_IDS.managed } });
    const v = ok(input);
    (input.rules[0] as { action_parameters: { id: string } }).action_parameters.id = "changed";
    expect(v.ok && v.ruleset.rules[0]?.action_parameters).toEqual({ id: MANAGED_RULESET_IDS.managed });
  });
});
