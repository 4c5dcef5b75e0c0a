import { describe, expect, it } from "vitest";
import {
  authenticationError,
  couldNotRoute,
  duplicateFilter,
  ERROR_CODES,
  fail,
  failureEnvelope,
  firewallRuleAtIndex,
  invalidRequest,
  invalidRequestHeaders,
  noRoute,
  successEnvelope,
  validateEnvelope,
} from "../../src/api/envelope";

describe("successEnvelope", () => {
  it("successEnvelope: builds result, success, empty errors and messages", () => {
    expect(successEnvelope({ id: "a" })).toEqual({ result: { id: "a" }, success: true, errors: [], messages: [] });
  });
  it("successEnvelope: adds result_info only when given", () => {
    const info = { page: 1, per_page: 20, count: 1, total_count: 1, total_pages: 1 };
    expect(successEnvelope([1], { resultInfo: info })).toHaveProperty("result_info", info);
    expect(successEnvelope([1])).not.toHaveProperty("result_info");
  });
});

describe("failureEnvelope", () => {
  it("failureEnvelope: result is null and success false", () => {
    expect(failureEnvelope([authenticationError()])).toEqual({
      result: null,
      success: false,
      errors: [{ code: 10000, message: "Authentication error" }],
      messages: [],
    });
  });
});

describe("error constructors", () => {
  it("invalidRequestHeaders: chains 6111 under 6003 like the platform", () => {
    expect(invalidRequestHeaders(["authorization"])).toEqual({
      code: 6003,
      message: "Invalid request headers",
      error_chain: [{ code: 6111, message: "Invalid format for Authorization header" }],
    });
  });
  it("invalidRequestHeaders: reports 6102 and 6103 together", () => {
    expect(invalidRequestHeaders(["x-auth-email", "x-auth-key"]).error_chain?.map((e) => e.code)).toEqual([6102, 6103]);
  });
  it("couldNotRoute: uses the platform's 7003 wording, paired with 7000", () => {
    const r = fail(400, couldNotRoute("/zones/ZONE_ID"), noRoute());
    expect(r.body.errors).toEqual([
      { code: 7003, message: "Could not route to /zones/ZONE_ID, perhaps your object identifier is invalid?" },
      { code: 7000, message: "No route for that URI" },
    ]);
  });
  it("duplicateFilter: 10102 carries the existing id in meta.id", () => {
    expect(duplicateFilter("a".repeat(32))).toEqual({
      code: 10102,
      message: "config duplicates an already existing config",
      meta: { id: "a".repeat(32) },
    });
  });
  it("firewallRuleAtIndex: 10202 names the index", () => {
    expect(firewallRuleAtIndex(0, "x").message).toContain("filter at index 0");
    expect(firewallRuleAtIndex(0, "x").code).toBe(10202);
  });
  it("ERROR_CODES: every code is at least 1000", () => {
    for (const code of Object.values(ERROR_CODES)) expect(code).toBeGreaterThanOrEqual(1000);
  });
  it("invalidRequest: one error per issue with source.pointer", () => {
    const r = invalidRequest([
      { path: "page", message: "page must be an integer of at least 1." },
      { path: "", message: "Whole body.", code: 1234, meta: { id: "x" } },
    ]);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([
      { code: 1001, message: "page must be an integer of at least 1.", source: { pointer: "page" } },
      { code: 1234, message: "Whole body.", meta: { id: "x" } },
    ]);
  });
});

describe("validateEnvelope", () => {
  const accept: [string, unknown][] = [
    ["a plain success", { result: { id: "x" }, success: true, errors: [], messages: [] }],
    [
      "a list with result_info",
      {
        result: [],
        success: true,
        errors: [],
        messages: [],
        result_info: { page: 1, per_page: 20, count: 0, total_count: 0, total_pages: 0 },
      },
    ],
    [
      "firewall result_info without total_pages",
      {
        result: [],
        success: true,
        errors: [],
        messages: [],
        result_info: { page: 1, per_page: 25, count: 0, total_count: 0 },
      },
    ],
    [
      "validate-expr failure with messages null (the docs' example)",
      {
        result: null,
        success: false,
        errors: [{ code: 10014, message: "Filter parsing error:\n`ip.src==34`\n          ^^ couldn't parse address" }],
        messages: null,
      },
    ],
    [
      "the validate-expr failure exactly as the docs show it: an error with no code",
      {
        result: null,
        success: false,
        errors: [
          {
            message:
              "Filter parsing error:\n`ip.src==34`\n          ^^ couldn't parse address in network: invalid IP address syntax\n",
          },
        ],
        messages: null,
      },
    ],
    [
      "a rulesets error without a code (rulesets_Message makes code optional)",
      {
        result: null,
        success: false,
        errors: [{ message: "action is required for action parameters", source: { pointer: "/rules/0/action" } }],
        messages: [],
      },
    ],
    [
      "6003 with error_chain",
      {
        success: false,
        errors: [
          {
            code: 6003,
            message: "Invalid request headers",
            error_chain: [{ code: 6103, message: "Invalid format for X-Auth-Key header" }],
          },
        ],
        messages: [],
        result: null,
      },
    ],
    [
      "a failure without messages or result",
      { success: false, errors: [{ code: 10000, message: "Authentication error" }] },
    ],
    ["unknown keys", { result: 1, success: true, errors: [], messages: [], extra: { anything: true } }],
    [
      "10102 with meta",
      {
        result: null,
        success: false,
        errors: [{ code: 10102, message: "config duplicates an already existing config", meta: { id: "abc" } }],
        messages: [],
      },
    ],
    [
      "token verify message",
      {
        result: { status: "active" },
        success: true,
        errors: [],
        messages: [{ code: 10000, message: "This API Token is valid and active" }],
      },
    ],
  ];
  it.each(accept)("validateEnvelope: accepts %s", (_name, body) => {
    const v = validateEnvelope(body);
    expect(v.ok, JSON.stringify(v)).toBe(true);
  });

  it("validateEnvelope: an error without a code keeps no code, one with a code keeps it", () => {
    const v = validateEnvelope({
      success: false,
      errors: [{ message: "no code" }, { code: 10000, message: "Authentication error" }],
    });
    expect(v.ok && v.value.errors.map((e) => e.code)).toEqual([undefined, 10000]);
  });

  it("validateEnvelope: normalises messages null to an empty array", () => {
    const v = validateEnvelope({
      result: null,
      success: false,
      errors: [{ code: 1000, message: "m" }],
      messages: null,
    });
    expect(v.ok && v.value.messages).toEqual([]);
  });

  const reject: [string, unknown, string][] = [
    ["not an object", [], ""],
    ["success missing", { errors: [], messages: [] }, "success"],
    ["code below 1000", { success: false, errors: [{ code: 999, message: "m" }], messages: [] }, "errors[0].code"],
    [
      "code not an integer",
      { success: false, errors: [{ code: 1000.5, message: "m" }], messages: [] },
      "errors[0].code",
    ],
    ["message missing", { success: false, errors: [{ code: 1000 }], messages: [] }, "errors[0].message"],
    ["failure with no errors", { success: false, errors: [], messages: [] }, "errors"],
    ["success with errors", { success: true, errors: [{ code: 1000, message: "m" }], messages: [] }, "errors"],
    [
      "failure with a result",
      { success: false, result: {}, errors: [{ code: 1000, message: "m" }], messages: [] },
      "result",
    ],
    ["errors not an array", { success: true, errors: {}, messages: [] }, "errors"],
    [
      "bad nested chain",
      { success: false, errors: [{ code: 6003, message: "m", error_chain: [{ code: 1 }] }] },
      "errors[0].error_chain[0].code",
    ],
    ["bad source", { success: false, errors: [{ code: 1000, message: "m", source: "x" }] }, "errors[0].source"],
    [
      "negative result_info",
      { success: true, errors: [], messages: [], result_info: { page: -1 } },
      "result_info.page",
    ],
  ];
  it.each(reject)("validateEnvelope: rejects %s", (_name, body, path) => {
    const v = validateEnvelope(body);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.errors.map((e) => e.path)).toContain(path);
  });
});
