import { describe, expect, it } from "vitest";
import type { FirewallState } from "../../src/api/filters";
import {
  createFilters,
  deleteFilter,
  EMPTY_FIREWALL_STATE,
  getFilter,
  listFilters,
  MAX_EXPRESSION_LENGTH,
  updateFilter,
  validateExpressionRequest,
  validateFilterInput,
} from "../../src/api/filters";
import { createFirewallRules } from "../../src/api/firewall-rules";
import { isHexId, sequentialHexIds } from "../../src/api/ids";

const VALID = "ip.src eq 1.2.3.4";
const VALID_2 = 'http.request.uri.path contains "/login"';
const INVALID = "foo eq 1";

function created(state: FirewallState, body: unknown): FirewallState {
  const r = createFilters(state, body, {
    idGenerator: sequentialHexIds(state.filters.length + state.rules.length + 1),
  });
  if (!r.response.body.success) throw new Error(JSON.stringify(r.response.body.errors));
  return r.state;
}

describe("validateFilterInput", () => {
  it.each([
    ["an expression", { expression: VALID }],
    ["every field", { expression: VALID_2, paused: true, description: "Login", ref: "FIL-1" }],
    ["an id (echoed on PUT)", { id: "a".repeat(32), expression: VALID }],
    // Lengths are in characters (code points), as the schema's maxLength counts them, not UTF-16 units.
    ["a description of 500 emoji", { expression: VALID, description: "\u{1F600}".repeat(500) }],
    ["a ref of 50 emoji", { expression: VALID, ref: "\u{1F600}".repeat(50) }],
    [
      "an expression of 4096 characters, half of them emoji",
      { expression: `http.host eq "${"\u{1F600}".repeat(2048)}${"a".repeat(2048 - 15)}"` },
    ],
  ])("validateFilterInput: accepts %s", (_n, value) => {
    expect(validateFilterInput(value).ok).toBe(true);
  });
  it.each([
    ["not an object", "ip.src eq 1.2.3.4", "", 10101],
    ["no expression", { paused: false }, "expression", 10100],
    ["blank expression", { expression: "  " }, "expression", 10100],
    ["unknown identifier", { expression: INVALID }, "expression", 10100],
    [
      "expression over 4096 characters",
      { expression: `ip.src eq 1.2.3.4${" ".repeat(MAX_EXPRESSION_LENGTH)}` },
      "expression",
      10100,
    ],
    ["description over 500", { expression: VALID, description: "d".repeat(501) }, "description", 10101],
    ["ref over 50", { expression: VALID, ref: "r".repeat(51) }, "ref", 10101],
    ["description of 501 emoji", { expression: VALID, description: "\u{1F600}".repeat(501) }, "description", 10101],
    ["paused a string", { expression: VALID, paused: "false" }, "paused", 10101],
    ["an unknown key", { expression: VALID, action: "block" }, "action", 10101],
  ])("validateFilterInput: rejects %s", (_n, value, path, code) => {
    const v = validateFilterInput(value);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.errors.map((e) => [e.path, e.code])).toEqual([[path, code]]);
  });
  it.each([1, true, ["ssl"], { text: "ssl" }, null])(
    "validateFilterInput: an expression of %j is said to be not a string, not blank",
    (expression) => {
      const v = validateFilterInput({ expression });
      expect(v.ok === false && v.errors.map((e) => [e.path, e.code, e.message])).toEqual([
        ["expression", 10100, "expression must be a string."],
      ]);
    },
  );
  it("validateFilterInput: a parse error carries wirefilter's formatted text", () => {
    const v = validateFilterInput({ expression: INVALID });
    expect(v.ok === false && v.errors[0]?.message).toBe(
      "Filter parsing error (1:1):\nfoo eq 1\n^^^ unknown identifier\n",
    );
  });
});

describe("createFilters", () => {
  it("createFilters: checks a body of n filters against m existing ones in O(n + m), not O(n·m)", () => {
    // Each existing filter counts how often its expression is read: a scan of every filter for
    // every body item (a quadratic cost a client controls with one large POST) reads each one n times.
    let reads = 0;
    const m = 1500;
    const filters = Array.from({ length: m }, (_, i) => {
      const expression = `cf.threat_score eq ${i}`;
      return {
        id: i.toString(16).padStart(32, "0"),
        paused: false,
        get expression() {
          reads++;
          return expression;
        },
      };
    });
    const state: FirewallState = { filters, rules: [], ruleOwnedFilterIds: [] };
    const body = Array.from({ length: 1500 }, (_, i) => ({ expression: `cf.threat_score eq ${m + i}` }));
    const r = createFilters(state, body, { idGenerator: sequentialHexIds(m + 1) });
    expect(r.response.status).toBe(200);
    expect(reads).toBeLessThanOrEqual(2 * m);
    // The index still finds a duplicate of an existing filter, and of an earlier item of the body.
    const dup = createFilters(state, [
      { expression: " cf.threat_score eq 7 " },
      { expression: VALID },
      { expression: VALID },
    ]);
    expect(dup.response.body.errors.map((e) => [e.code, e.source?.pointer])).toEqual([
      [10102, "[0].expression"],
      [10102, "[2].expression"],
    ]);
    // An earlier duplicate is named by its index in the body, even after an item that failed.
    const after = createFilters(EMPTY_FIREWALL_STATE, [
      { expression: INVALID },
      { expression: VALID },
      { expression: VALID },
    ]);
    expect(after.response.body.errors.at(-1)?.message).toBe("[2] has the same expression as [1]; send it once.");
  });

  it("createFilters: new filters have 32-hex ids and paused false", () => {
    const r = createFilters(EMPTY_FIREWALL_STATE, [
      { expression: VALID },
      { expression: VALID_2, description: "Login" },
    ]);
    expect(r.response.status).toBe(200);
    const result = r.response.body.result ?? [];
    expect(result).toHaveLength(2);
    for (const f of result) {
      expect(isHexId(f.id)).toBe(true);
      expect(f.paused).toBe(false);
    }
    expect(result[1]).toMatchObject({ expression: VALID_2, description: "Login" });
    expect(r.state.filters).toEqual(result);
  });
  it("createFilters: one invalid filter means none is created", () => {
    const r = createFilters(EMPTY_FIREWALL_STATE, [{ expression: VALID }, { expression: INVALID }]);
    expect(r.response.status).toBe(400);
    expect(r.state).toBe(EMPTY_FIREWALL_STATE);
    expect(r.response.body.errors[0]).toMatchObject({ code: 10100, source: { pointer: "[1].expression" } });
  });
  it("createFilters: a duplicate of an existing filter is 10102 with meta.id", () => {
    const state = created(EMPTY_FIREWALL_STATE, [{ expression: VALID }]);
    const existing = state.filters[0]?.id;
    const r = createFilters(state, [{ expression: ` ${VALID} ` }]);
    expect(r.state).toBe(state);
    expect(r.response.body.errors[0]).toMatchObject({
      code: 10102,
      message: "config duplicates an already existing config",
      meta: { id: existing },
    });
  });
  it("createFilters: the same expression twice in one request is refused", () => {
    const r = createFilters(EMPTY_FIREWALL_STATE, [{ expression: VALID }, { expression: VALID }]);
    expect(r.response.body.errors[0]).toMatchObject({ code: 10102, source: { pointer: "[1].expression" } });
  });
  it.each([
    ["a single object (the 2024 OAS shape)", { expression: VALID }],
    ["an empty array", []],
    ["a client-chosen id", [{ id: "a".repeat(32), expression: VALID }]],
  ])("createFilters: rejects %s", (_n, body) => {
    const r = createFilters(EMPTY_FIREWALL_STATE, body);
    expect(r.response.status).toBe(400);
    expect(r.state).toBe(EMPTY_FIREWALL_STATE);
  });
  it("createFilters: an idGenerator that returns bad ids is reported, not silently used", () => {
    expect(() => createFilters(EMPTY_FIREWALL_STATE, [{ expression: VALID }], { idGenerator: () => "x" })).toThrow(
      /idGenerator/,
    );
  });
});

describe("updateFilter and deleteFilter", () => {
  const base = created(EMPTY_FIREWALL_STATE, [{ expression: VALID }, { expression: VALID_2 }]);
  const [a, b] = base.filters.map((f) => f.id) as [string, string];

  it("updateFilter: replaces the expression and keeps paused unless given", () => {
    const r = updateFilter(base, a, { id: a, expression: "ip.src eq 5.6.7.8", description: "new" });
    expect(r.response.body.result).toEqual({
      id: a,
      expression: "ip.src eq 5.6.7.8",
      paused: false,
      description: "new",
    });
    expect(getFilter(r.state, a).body.result?.expression).toBe("ip.src eq 5.6.7.8");
  });
  it("updateFilter: refuses to duplicate another filter", () => {
    const r = updateFilter(base, a, { expression: VALID_2 });
    expect(r.response.body.errors[0]).toMatchObject({ code: 10102, meta: { id: b } });
  });
  it("updateFilter: refuses a body id that differs from the path", () => {
    expect(updateFilter(base, a, { id: b, expression: "ip.src eq 9.9.9.9" }).response.status).toBe(400);
  });
  it("updateFilter: refuses an invalid expression", () => {
    const r = updateFilter(base, a, { expression: INVALID });
    expect(r.state).toBe(base);
    expect(r.response.body.errors[0]?.code).toBe(10100);
  });
  it("updateFilter / deleteFilter: 404 for an unknown filter", () => {
    expect(updateFilter(base, "f".repeat(32), { expression: VALID }).response.status).toBe(404);
    expect(deleteFilter(base, "f".repeat(32)).response.status).toBe(404);
  });
  it("deleteFilter: removes an unused filter and returns its id", () => {
    const r = deleteFilter(base, a);
    expect(r.response.body.result).toEqual({ id: a });
    expect(r.state.filters.map((f) => f.id)).toEqual([b]);
  });
  it("deleteFilter: refuses a filter a rule still uses", () => {
    const withRule = createFirewallRules(base, [{ filter: { id: a }, action: "block" }], {
      idGenerator: sequentialHexIds(100),
    }).state;
    const r = deleteFilter(withRule, a);
    expect(r.response.status).toBe(409);
    expect(r.state).toBe(withRule);
  });
  it("updateFilter / deleteFilter: refused for a filter created by the one-call rule POST", () => {
    const oneCall = createFirewallRules(base, [{ filter: { expression: "ip.src eq 10.0.0.1" }, action: "block" }], {
      idGenerator: sequentialHexIds(200),
    });
    const filterId = oneCall.items[0]?.filterId ?? "";
    const put = updateFilter(oneCall.state, filterId, { expression: "ip.src eq 10.0.0.2" });
    const del = deleteFilter(oneCall.state, filterId);
    for (const r of [put, del]) {
      expect(r.response.status).toBe(403);
      expect(r.response.body.errors[0]?.code).toBe(10104);
      expect(r.state).toBe(oneCall.state);
    }
  });
});

describe("listFilters", () => {
  const state = created(EMPTY_FIREWALL_STATE, [
    { expression: VALID, description: "Office IP", ref: "A" },
    { expression: VALID_2, description: "Login page", paused: true },
    { expression: "ip.src eq 9.9.9.9" },
  ]);
  it.each([
    ["", 3],
    ["paused=true", 1],
    ["description=LOGIN", 1],
    ["expression=IP.SRC", 2],
    ["ref=A", 1],
    [`id=${state.filters[2]?.id}`, 1],
  ])("listFilters: %s matches %i", (query, count) => {
    const r = listFilters(state, query);
    expect(r.body.success && r.body.result_info?.total_count).toBe(count);
  });
  it("listFilters: pages with per_page 5–100", () => {
    const page = listFilters(state, "per_page=5").body;
    expect(page.success && page.result_info).toEqual({
      page: 1,
      per_page: 5,
      count: 3,
      total_count: 3,
      total_pages: 1,
    });
    expect(listFilters(state, "per_page=4").status).toBe(400);
  });
});

describe("validateExpressionRequest", () => {
  it("validateExpressionRequest: ok for a valid expression, 400 with the parser text otherwise", () => {
    expect(validateExpressionRequest({ expression: VALID }).status).toBe(200);
    const bad = validateExpressionRequest({ expression: "ip.src==34" });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]?.message).toContain("couldn't parse address in network: invalid IP address syntax");
  });
});
