import { describe, expect, it } from "vitest";
import type { FirewallState } from "../../src/api/filters";
import { createFilters, deleteFilter, EMPTY_FIREWALL_STATE } from "../../src/api/filters";
import type { FirewallLimits } from "../../src/api/firewall-rules";
import {
  createFirewallRules,
  DEFAULT_FIREWALL_LIMITS,
  deleteFirewallRule,
  FIREWALL_ACTIONS,
  getFirewallRule,
  listFirewallRules,
  updateFirewallRule,
  validateFirewallRuleInput,
} from "../../src/api/firewall-rules";
import { isHexId, sequentialHexIds } from "../../src/api/ids";

const LOGIN = 'http.request.uri.path contains "/login"';
const OFFICE = "ip.src eq 1.2.3.4";
const INVALID = "foo eq 1";
const ids = () => ({ idGenerator: sequentialHexIds(1) });
const limits = (over: Partial<FirewallLimits>): FirewallLimits => ({ ...DEFAULT_FIREWALL_LIMITS, ...over });

function withFilters(...expressions: string[]): FirewallState {
  return createFilters(
    EMPTY_FIREWALL_STATE,
    expressions.map((expression) => ({ expression })),
    { idGenerator: sequentialHexIds(1000) },
  ).state;
}

describe("validateFirewallRuleInput", () => {
  const filterId = "a".repeat(32);
  const accept: [string, unknown][] = [
    ...FIREWALL_ACTIONS.filter((a) => a !== "bypass").map((action): [string, unknown] => [
      action,
      { filter: { id: filterId }, action },
    ]),
    ["bypass with products", { filter: { id: filterId }, action: "bypass", products: ["waf", "uaBlock"] }],
    ["an inline filter", { filter: { expression: LOGIN, description: "login" }, action: "block" }],
    [
      "every optional field",
      { filter: { id: filterId }, action: "log", priority: 0, paused: true, description: "d", ref: "r" },
    ],
    ["the highest priority", { filter: { id: filterId }, action: "block", priority: 2147483647 }],
    ["priority null", { filter: { id: filterId }, action: "block", priority: null }],
  ];
  it.each(accept)("validateFirewallRuleInput: accepts %s", (_n, value) => {
    const v = validateFirewallRuleInput(value);
    expect(v.ok, JSON.stringify(v)).toBe(true);
  });
  const reject: [string, unknown, string][] = [
    ["not an object", "block", ""],
    ["no action", { filter: { id: filterId } }, "action"],
    ["unknown action", { filter: { id: filterId }, action: "simulate" }, "action"],
    ["the OAS rate-limit action object", { filter: { id: filterId }, action: { mode: "challenge" } }, "action"],
    ["bypass without products", { filter: { id: filterId }, action: "bypass" }, "products"],
    ["bypass with empty products", { filter: { id: filterId }, action: "bypass", products: [] }, "products"],
    ["unknown product", { filter: { id: filterId }, action: "bypass", products: ["cdn"] }, "products"],
    ["repeated product", { filter: { id: filterId }, action: "bypass", products: ["waf", "waf"] }, "products"],
    ["negative priority", { filter: { id: filterId }, action: "block", priority: -1 }, "priority"],
    ["priority too large", { filter: { id: filterId }, action: "block", priority: 2147483648 }, "priority"],
    ["fractional priority", { filter: { id: filterId }, action: "block", priority: 1.5 }, "priority"],
    [
      "description over 500",
      { filter: { id: filterId }, action: "block", description: "d".repeat(501) },
      "description",
    ],
    ["ref over 50", { filter: { id: filterId }, action: "block", ref: "r".repeat(51) }, "ref"],
    ["paused a string", { filter: { id: filterId }, action: "block", paused: "no" }, "paused"],
    ["no filter", { action: "block" }, "filter"],
    ["filter with id and expression", { filter: { id: filterId, expression: LOGIN }, action: "block" }, "filter"],
    ["filter id too short", { filter: { id: "abc" }, action: "block" }, "filter.id"],
    ["invalid inline expression", { filter: { expression: INVALID }, action: "block" }, "filter.expression"],
    ["client-chosen id", { id: filterId, filter: { id: filterId }, action: "block" }, "id"],
    ["unknown key", { filter: { id: filterId }, action: "block", mode: "x" }, "mode"],
  ];
  it.each(reject)("validateFirewallRuleInput: rejects %s", (_n, value, path) => {
    const v = validateFirewallRuleInput(value);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.errors.map((e) => e.path)).toEqual([path]);
  });
  it("validateFirewallRuleInput: bypass without products uses the platform's wording", () => {
    const v = validateFirewallRuleInput({ filter: { id: filterId }, action: "bypass" });
    expect(v.ok === false && v.errors[0]?.message).toBe("products must be specified for the 'bypass' action");
  });
});

describe("createFirewallRules: recommended flow (filter by id)", () => {
  it("createFirewallRules: creates a rule referencing an existing filter, paused false and priority null", () => {
    const state = withFilters(LOGIN);
    const filter = state.filters[0];
    const r = createFirewallRules(state, [{ filter: { id: filter?.id }, action: "block" }], ids());
    expect(r.response.status).toBe(200);
    const [rule] = r.response.body.result ?? [];
    expect(rule).toEqual({ id: rule?.id, paused: false, action: "block", priority: null, filter });
    expect(isHexId(rule?.id)).toBe(true);
    expect(r.items).toEqual([{ index: 0, filterId: filter?.id, filterCreated: false, ruleId: rule?.id }]);
    expect(r.state.ruleOwnedFilterIds).toEqual([]);
  });
  it("createFirewallRules: one filter can serve several rules", () => {
    const state = withFilters(LOGIN);
    const id = state.filters[0]?.id;
    const r = createFirewallRules(
      state,
      [
        { filter: { id }, action: "log" },
        { filter: { id }, action: "managed_challenge" },
      ],
      ids(),
    );
    expect(r.state.rules.map((x) => x.filterId)).toEqual([id, id]);
  });
  it("createFirewallRules: an unknown filter id means nothing is created (10202)", () => {
    const r = createFirewallRules(EMPTY_FIREWALL_STATE, [{ filter: { id: "f".repeat(32) }, action: "block" }], ids());
    expect(r.state).toBe(EMPTY_FIREWALL_STATE);
    expect(r.response.body.errors.map((e) => e.code)).toEqual([10202]);
  });
});

describe("createFirewallRules: one-call flow", () => {
  const seedBody = [{ filter: { expression: LOGIN }, action: "block" }];

  it("createFirewallRules: checks a body of n rules against m existing filters in O(n + m), not O(n·m)", () => {
    // Existing filters count reads of their expression and id: a scan of every filter for every
    // rule of the body (a quadratic cost one large POST controls) reads each one n times.
    let reads = 0;
    const m = 1500;
    const filters = Array.from({ length: m }, (_, i) => {
      const expression = `cf.threat_score eq ${i}`;
      const id = i.toString(16).padStart(32, "0");
      return {
        paused: false,
        get id() {
          reads++;
          return id;
        },
        get expression() {
          reads++;
          return expression;
        },
      };
    });
    const state: FirewallState = { filters, rules: [], ruleOwnedFilterIds: [] };
    const body = Array.from({ length: 900 }, (_, i) =>
      i % 2 === 0
        ? { filter: { expression: `cf.threat_score eq ${m + i}` }, action: "block" }
        : { filter: { id: i.toString(16).padStart(32, "0") }, action: "block" },
    );
    const r = createFirewallRules(state, body, { idGenerator: sequentialHexIds(m + 1) });
    expect(r.response.status).toBe(200);
    // Validation reads each filter a bounded number of times; creating ids reads each id once more.
    expect(reads).toBeLessThanOrEqual(4 * m);
  });

  it("createFirewallRules: creates the filter and the rule together (API description §4.2)", () => {
    const r = createFirewallRules(EMPTY_FIREWALL_STATE, seedBody, ids());
    expect(r.steps.map((s) => [s.step, s.status])).toEqual([
      ["validate", "succeeded"],
      ["create_filters", "succeeded"],
      ["create_rules", "succeeded"],
    ]);
    const [rule] = r.response.body.result ?? [];
    expect(rule).toMatchObject({
      paused: false,
      action: "block",
      priority: null,
      filter: { expression: LOGIN, paused: false },
    });
    expect(isHexId(rule?.filter.id)).toBe(true);
    expect(r.state.filters).toHaveLength(1);
    expect(r.state.rules).toHaveLength(1);
    expect(r.state.ruleOwnedFilterIds).toEqual([rule?.filter.id]);
    expect(r.items).toEqual([{ index: 0, filterId: rule?.filter.id, filterCreated: true, ruleId: rule?.id }]);
  });

  it("createFirewallRules: reads a single object (what the SDK sends) as a one-item array", () => {
    const r = createFirewallRules(EMPTY_FIREWALL_STATE, seedBody[0], ids());
    expect(r.response.status).toBe(200);
    expect(r.state.rules).toHaveLength(1);
  });

  const atomicity: [string, unknown[]][] = [
    ["an invalid expression in the second item", [seedBody[0], { filter: { expression: INVALID }, action: "block" }]],
    ["an invalid action in the second item", [seedBody[0], { filter: { expression: OFFICE }, action: "deny" }]],
    ["bypass without products", [seedBody[0], { filter: { expression: OFFICE }, action: "bypass" }]],
    ["an invalid filter field", [{ filter: { expression: LOGIN, ref: "r".repeat(51) }, action: "block" }]],
    ["a reference to a missing filter", [seedBody[0], { filter: { id: "f".repeat(32) }, action: "block" }]],
    ["the same expression twice", [seedBody[0], { filter: { expression: LOGIN }, action: "challenge" }]],
  ];
  it.each(atomicity)("createFirewallRules: with %s nothing is created", (_n, body) => {
    const before = withFilters(OFFICE.replace("1.2.3.4", "8.8.8.8"));
    const r = createFirewallRules(before, body, ids());
    expect(r.state).toBe(before);
    expect(r.response.status).toBe(400);
    expect(r.response.body.success).toBe(false);
    expect(r.steps.map((s) => s.status)).toEqual(["failed", "not_executed", "not_executed"]);
    expect(r.items.every((i) => i.filterId === null && i.ruleId === null)).toBe(true);
  });

  it("createFirewallRules: a duplicate inline filter gives 10102 with meta.id and 10202 at its index", () => {
    const state = withFilters(LOGIN);
    const existing = state.filters[0]?.id;
    const r = createFirewallRules(state, seedBody, ids());
    expect(r.state).toBe(state);
    expect(r.response.body.errors).toEqual([
      expect.objectContaining({
        code: 10102,
        message: "config duplicates an already existing config",
        meta: { id: existing },
      }),
      expect.objectContaining({ code: 10202, message: expect.stringContaining("filter at index 0") }),
    ]);
  });

  it("createFirewallRules: over the rule quota, the filter is created and the rule is not", () => {
    const full = createFirewallRules(
      EMPTY_FIREWALL_STATE,
      [{ filter: { expression: OFFICE }, action: "allow" }],
      ids(),
    ).state;
    const r = createFirewallRules(full, seedBody, {
      idGenerator: sequentialHexIds(50),
      limits: limits({ maxRules: 1 }),
    });
    expect(r.steps.map((s) => [s.step, s.status])).toEqual([
      ["validate", "succeeded"],
      ["create_filters", "succeeded"],
      ["create_rules", "failed"],
    ]);
    expect(r.response.status).toBe(400);
    const [error] = r.response.body.errors;
    expect(error?.code).toBe(10201);
    const filterId = r.items[0]?.filterId;
    expect(error?.meta).toEqual({ created_filter_ids: [filterId] });
    expect(r.items).toEqual([{ index: 0, filterId, filterCreated: true, ruleId: null }]);
    expect(r.state.filters.map((f) => f.expression)).toEqual([OFFICE, LOGIN]);
    expect(r.state.rules).toHaveLength(1);

    // The client then frees room and creates the rule by reference (API description §7).
    const ruleToDrop = r.state.rules[0]?.id ?? "";
    const freed = deleteFirewallRule(r.state, ruleToDrop).state;
    const retry = createFirewallRules(freed, [{ filter: { id: filterId }, action: "block" }], {
      idGenerator: sequentialHexIds(60),
      limits: limits({ maxRules: 1 }),
    });
    expect(retry.response.status).toBe(200);
    expect(retry.state.rules.map((x) => x.filterId)).toEqual([filterId]);
  });

  it("createFirewallRules: the quota counts the whole batch, all rules or none", () => {
    const body = [seedBody[0], { filter: { expression: OFFICE }, action: "challenge" }];
    const r = createFirewallRules(EMPTY_FIREWALL_STATE, body, { ...ids(), limits: limits({ maxRules: 1 }) });
    expect(r.state.rules).toHaveLength(0);
    expect(r.state.filters).toHaveLength(2);
    expect(r.items.map((i) => [i.filterCreated, i.ruleId])).toEqual([
      [true, null],
      [true, null],
    ]);
  });

  it("createFirewallRules: with the feature unavailable, the filter is created and the rule is not", () => {
    const r = createFirewallRules(EMPTY_FIREWALL_STATE, seedBody, {
      ...ids(),
      limits: limits({ firewallRulesAvailable: false }),
    });
    expect(r.response.status).toBe(403);
    expect(r.response.body.errors[0]?.code).toBe(10203);
    expect(r.steps[2]).toMatchObject({ step: "create_rules", status: "failed" });
    expect(r.state.filters).toHaveLength(1);
    expect(r.state.rules).toHaveLength(0);
  });

  it("createFirewallRules: log outside Enterprise is a feature refusal, filter kept", () => {
    const r = createFirewallRules(EMPTY_FIREWALL_STATE, [{ filter: { expression: LOGIN }, action: "log" }], {
      ...ids(),
      limits: limits({ logActionAvailable: false }),
    });
    expect(r.response.body.errors[0]?.code).toBe(10203);
    expect(r.state.filters).toHaveLength(1);
    expect(r.state.rules).toHaveLength(0);
  });

  it("createFirewallRules: a filter created by the one-call flow cannot be PUT or DELETEd, only removed with its rule", () => {
    const r = createFirewallRules(EMPTY_FIREWALL_STATE, seedBody, ids());
    const filterId = r.items[0]?.filterId ?? "";
    const ruleId = r.items[0]?.ruleId ?? "";
    expect(deleteFilter(r.state, filterId).response.status).toBe(403);
    const gone = deleteFirewallRule(r.state, ruleId, { delete_filter_if_unused: true }).state;
    expect(gone).toEqual(EMPTY_FIREWALL_STATE);
  });

  it("createFirewallRules: a rule-owned filter that quota left behind can still be referenced", () => {
    const r = createFirewallRules(EMPTY_FIREWALL_STATE, seedBody, { ...ids(), limits: limits({ maxRules: 0 }) });
    const filterId = r.items[0]?.filterId;
    const later = createFirewallRules(r.state, [{ filter: { id: filterId }, action: "block" }], {
      idGenerator: sequentialHexIds(9),
    });
    expect(later.response.status).toBe(200);
  });
});

describe("rule reads, updates and deletes", () => {
  const made = createFirewallRules(
    EMPTY_FIREWALL_STATE,
    [
      { filter: { expression: LOGIN }, action: "block", description: "Login block" },
      { filter: { expression: OFFICE }, action: "allow", paused: true },
    ],
    ids(),
  );
  const state = made.state;
  const [first, second] = made.items.map((i) => i.ruleId ?? "") as [string, string];

  it("getFirewallRule: returns the rule with its filter, 404 otherwise", () => {
    expect(getFirewallRule(state, first).body.result).toMatchObject({
      id: first,
      action: "block",
      filter: { expression: LOGIN },
    });
    expect(getFirewallRule(state, "f".repeat(32)).status).toBe(404);
  });
  it.each([
    ["", 2],
    ["action=block", 1],
    ["paused=true", 1],
    ["description=LOGIN", 1],
    [`id=${second}`, 1],
    // The schema types the filter as any string: an action no rule has matches nothing.
    ["action=deny", 0],
  ])("listFirewallRules: %s matches %i", (query, count) => {
    const body = listFirewallRules(state, query).body;
    expect(body.success && body.result_info?.total_count).toBe(count);
  });
  it.each([["per_page=200"], ["paused=maybe"], ["action=block&action=allow"]])(
    "listFirewallRules: rejects %s",
    (query) => {
      expect(listFirewallRules(state, query).status).toBe(400);
    },
  );
  it("updateFirewallRule: changes the action and can point at another filter by id", () => {
    const filterOfSecond = made.items[1]?.filterId;
    const r = updateFirewallRule(state, first, {
      id: first,
      filter: { id: filterOfSecond },
      action: "challenge",
      priority: 10,
    });
    expect(r.response.body.result).toMatchObject({
      id: first,
      action: "challenge",
      priority: 10,
      filter: { id: filterOfSecond },
    });
  });
  it.each([
    ["another rule's id", "e".repeat(32)],
    ["a number", 7],
    ["null", null],
  ])("updateFirewallRule: refuses a body id that is %s, naming the mismatch", (_n, id) => {
    const filterId = made.items[0]?.filterId;
    const r = updateFirewallRule(state, first, { id, filter: { id: filterId }, action: "block" });
    expect(r.response.status).toBe(400);
    expect(r.response.body.errors[0]).toMatchObject({ message: "id in the body must match the id in the path." });
    expect(r.state).toBe(state);
  });
  it("updateFirewallRule: accepts the rule as GET renders it, its whole filter included (the documented PUT body)", () => {
    const read = getFirewallRule(state, first).body;
    if (!read.success) throw new Error("the rule must exist");
    const filterBefore = state.filters.find((f) => f.id === read.result.filter.id);
    const r = updateFirewallRule(state, first, { ...read.result, action: "challenge" });
    expect(r.response.status).toBe(200);
    expect(r.response.body.result).toMatchObject({ id: first, action: "challenge", filter: filterBefore });
    expect(r.state.filters).toEqual(state.filters);
  });
  it.each([
    ["expression", { expression: "ip.src eq 4.4.4.4" }],
    ["paused", { paused: true }],
    ["description", { description: "changed" }],
  ])("updateFirewallRule: refuses a change to the filter's %s instead of dropping it", (field, change) => {
    const read = getFirewallRule(state, first).body;
    if (!read.success) throw new Error("the rule must exist");
    const r = updateFirewallRule(state, first, { ...read.result, filter: { ...read.result.filter, ...change } });
    expect(r.response.status).toBe(400);
    expect(r.response.body.errors[0]?.message).toContain(`filter.${field} differs from filter`);
    expect(r.state).toBe(state);
  });
  it("updateFirewallRule: refuses an inline expression", () => {
    const r = updateFirewallRule(state, first, { filter: { expression: "ip.src eq 4.4.4.4" }, action: "block" });
    expect(r.response.status).toBe(400);
    expect(r.state).toBe(state);
  });
  it.each([
    ["log outside Enterprise", { logActionAvailable: false }, "log", /Enterprise zones only/],
    ["any action where the plan has no firewall rules", { firewallRulesAvailable: false }, "block", /not available/],
  ])("updateFirewallRule: %s is refused (403, 10203) as a creation is, the rule unchanged", (_w, l, action, text) => {
    const filterId = made.items[0]?.filterId;
    const r = updateFirewallRule(state, first, { filter: { id: filterId }, action }, { limits: limits(l) });
    expect([r.response.status, r.response.body.errors[0]?.code]).toEqual([403, 10203]);
    expect(r.response.body.errors[0]?.message).toMatch(text);
    expect(r.state).toBe(state);
    // Allowed by the plan, the same body is applied.
    const allowed = updateFirewallRule(state, first, { filter: { id: filterId }, action }, { limits: limits({}) });
    expect(allowed.response.body.result).toMatchObject({ id: first, action });
  });
  it("deleteFirewallRule: keeps the filter unless asked, and keeps a filter still in use", () => {
    const filterId = made.items[0]?.filterId;
    const kept = deleteFirewallRule(state, first);
    expect(kept.response.body.result).toEqual({ id: first });
    expect(kept.state.filters.some((f) => f.id === filterId)).toBe(true);
    const dropped = deleteFirewallRule(state, first, { delete_filter_if_unused: true });
    expect(dropped.state.filters.some((f) => f.id === filterId)).toBe(false);
    expect(dropped.state.ruleOwnedFilterIds).not.toContain(filterId);
  });
  it("deleteFirewallRule: a rule whose filter is shared leaves the filter in place", () => {
    const shared = createFirewallRules(state, [{ filter: { id: made.items[0]?.filterId }, action: "log" }], {
      idGenerator: sequentialHexIds(500),
    }).state;
    const r = deleteFirewallRule(shared, first, { delete_filter_if_unused: true });
    expect(r.state.filters.some((f) => f.id === made.items[0]?.filterId)).toBe(true);
  });
  it("deleteFirewallRule: rejects a bad flag and unknown rules", () => {
    expect(deleteFirewallRule(state, first, { delete_filter_if_unused: "yes" }).response.status).toBe(400);
    expect(deleteFirewallRule(state, "f".repeat(32)).response.status).toBe(404);
  });
});
