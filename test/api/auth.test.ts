import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { HeadersInput } from "../../src/api/auth";
import {
  checkJsonRequest,
  describeCredentials,
  parseJsonBody,
  readHeader,
  validateAuthHeaders,
  validateJsonContentType,
} from "../../src/api/auth";

const TOKEN = "Y2xvdWRmbGFyZS1hcGktdG9rZW4tMDAwMDAwMDAw";
const KEY = "c2547eb745079dac9320b638f5e225cf483cc";
const EMAIL = "user@example.com";

describe("validateAuthHeaders", () => {
  const accept: [string, HeadersInput, object][] = [
    ["a bearer token", { Authorization: `Bearer ${TOKEN}` }, { scheme: "api_token", token: TOKEN }],
    ["lower-case header name and scheme", { authorization: `bearer ${TOKEN}` }, { scheme: "api_token", token: TOKEN }],
    ["a token with base64 padding", { Authorization: "Bearer abc+/=" }, { scheme: "api_token", token: "abc+/=" }],
    ["a Headers object", new Headers({ Authorization: `Bearer ${TOKEN}` }), { scheme: "api_token", token: TOKEN }],
    ["the legacy pair", { "X-Auth-Email": EMAIL, "X-Auth-Key": KEY }, { scheme: "api_key", email: EMAIL, key: KEY }],
    [
      "the legacy pair, any case",
      { "x-auth-email": EMAIL, "X-AUTH-KEY": KEY },
      { scheme: "api_key", email: EMAIL, key: KEY },
    ],
    [
      "bearer wins over legacy headers",
      { Authorization: `Bearer ${TOKEN}`, "X-Auth-Email": "not an email" },
      { scheme: "api_token", token: TOKEN },
    ],
  ];
  it.each(accept)("validateAuthHeaders: accepts %s", (_n, headers, expected) => {
    expect(validateAuthHeaders(headers)).toEqual({ ok: true, value: expected });
  });

  const reject: [string, HeadersInput, number, number, number[]][] = [
    ["no credentials", {}, 401, 10000, []],
    ["Basic scheme", { Authorization: `Basic ${TOKEN}` }, 400, 6003, [6111]],
    ["Bearer without token", { Authorization: "Bearer " }, 400, 6003, [6111]],
    ["token without scheme", { Authorization: TOKEN }, 400, 6003, [6111]],
    ["token with a space", { Authorization: "Bearer abc def" }, 400, 6003, [6111]],
    ["key without email", { "X-Auth-Key": KEY }, 400, 6003, [6102]],
    ["email without key", { "X-Auth-Email": EMAIL }, 400, 6003, [6103]],
    ["a token sent as the key", { "X-Auth-Email": EMAIL, "X-Auth-Key": TOKEN }, 400, 6003, [6103]],
    ["a 38-character key", { "X-Auth-Email": EMAIL, "X-Auth-Key": `${KEY}0` }, 400, 6003, [6103]],
    ["both malformed", { "X-Auth-Email": "nobody", "X-Auth-Key": "asdf" }, 400, 6003, [6102, 6103]],
  ];
  it.each(reject)("validateAuthHeaders: rejects %s", (_n, headers, status, code, chain) => {
    const r = validateAuthHeaders(headers);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.response.status).toBe(status);
    expect(r.response.body.success).toBe(false);
    expect(r.response.body.result).toBeNull();
    const [first] = r.response.body.errors;
    expect(first?.code).toBe(code);
    expect((first?.error_chain ?? []).map((e) => e.code)).toEqual(chain);
  });
});

describe("secrets never leak", () => {
  const SECRET = "sup3r-s3cret-VALUE-8c1f";
  // Header values that fail each check in a different way; the secret is embedded in all of them.
  const hostile: HeadersInput[] = [
    { Authorization: SECRET },
    { Authorization: `Basic ${SECRET}` },
    { Authorization: `Bearer ${SECRET} trailing` },
    { Authorization: `Bearer ${SECRET}\n` },
    { "X-Auth-Email": SECRET, "X-Auth-Key": SECRET },
    { "X-Auth-Email": `${SECRET}@example.com`, "X-Auth-Key": `${SECRET}!` },
    { "X-Auth-Key": `\u0000${SECRET}` },
    { Authorization: `Bearer ${SECRET}`, "Content-Type": `text/plain; ${SECRET}` },
  ];

  it.each(hostile.map((h, i) => [i, h] as const))(
    "validateAuthHeaders: failure %i does not contain the secret",
    (_i, headers) => {
      const r = validateAuthHeaders(headers);
      if (!r.ok) expect(JSON.stringify(r)).not.toContain(SECRET);
    },
  );

  it("checkJsonRequest: no failure path echoes a secret, even for invalid header bytes (property)", () => {
    fc.assert(
      fc.property(
        // Long enough that it cannot be a coincidental substring of the fixed error texts.
        fc.stringMatching(/^[A-Za-z0-9]{16,40}$/),
        fc.constantFrom("authorization", "x-auth-email", "x-auth-key", "content-type"),
        fc.string({ unit: "binary", maxLength: 5 }),
        fc.string({ unit: "binary", maxLength: 5 }),
        (secret, header, prefix, suffix) => {
          // A valid token alongside, so the content-type and body checks are reached too.
          const headers = { Authorization: `Bearer ${TOKEN}`, [header]: `${prefix}${secret}${suffix}` };
          let result: unknown;
          // A thrown value would also be a leak: the whole call must return normally.
          expect(() => {
            result = checkJsonRequest(headers, `{"x": "${secret}"`);
          }).not.toThrow();
          const r = result as ReturnType<typeof checkJsonRequest>;
          if (!r.ok) expect(JSON.stringify(r.response)).not.toContain(secret);
        },
      ),
    );
  });

  it("parseJsonBody: the malformed-JSON error does not quote the body", () => {
    const r = parseJsonBody({ "Content-Type": "application/json" }, `{"token": "${SECRET}"`);
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r)).not.toContain(SECRET);
    if (!r.ok) expect(r.response.body.errors[0]?.code).toBe(6007);
  });

  it("describeCredentials: never includes the token or key", () => {
    expect(describeCredentials({ scheme: "api_token", token: SECRET })).not.toContain(SECRET);
    expect(describeCredentials({ scheme: "api_key", email: EMAIL, key: SECRET })).not.toContain(SECRET);
  });

  it("readHeader: does not throw on values the Headers constructor would refuse", () => {
    // new Headers({ a: "x\n" }) throws a TypeError that quotes the value.
    expect(() => readHeader({ Authorization: `Bearer ${SECRET}\r\n` }, "authorization")).not.toThrow();
    expect(readHeader({ Authorization: "x" }, "authorization")).toEqual({ ok: true, value: "x" });
    expect(readHeader(new Headers(), "authorization")).toEqual({ ok: true, value: undefined });
  });

  it.each(["=\n[", "", "a b", "x:y", "é", "a\u0000"])(
    "readHeader: a name that cannot be a header (%j) is an error result",
    (name) => {
      for (const headers of [new Headers(), { [name]: "v" }]) {
        const read = readHeader(headers, name);
        expect(read.ok).toBe(false);
        if (!read.ok) {
          expect(read.response.status).toBe(400);
          expect(read.response.body.errors[0]?.code).toBe(6003);
        }
      }
    },
  );
});

describe("validateJsonContentType", () => {
  it.each([
    ["application/json", true],
    ["application/json; charset=utf-8", true],
    ["Application/JSON", true],
    [" application/json ", true],
    ["text/plain", false],
    ["application/jsonp", false],
    ["multipart/form-data", false],
    [undefined, false],
  ])("validateJsonContentType: %s → %s", (value, expected) => {
    const r = validateJsonContentType(value === undefined ? {} : { "Content-Type": value });
    expect(r.ok).toBe(expected);
    if (!r.ok) {
      expect(r.response.status).toBe(400);
      expect(r.response.body.errors[0]).toEqual({
        code: 6003,
        message: "Invalid request headers",
        error_chain: [
          { code: 6105, message: "Invalid Content-Type header, valid values are application/json,multipart/form-data" },
        ],
      });
    }
  });
});

describe("checkJsonRequest", () => {
  it("checkJsonRequest: checks credentials before the body", () => {
    const r = checkJsonRequest({ "Content-Type": "text/plain" }, "{");
    expect(r.ok === false && r.response.body.errors[0]?.code).toBe(10000);
  });
  it("checkJsonRequest: returns credentials and the parsed body", () => {
    const r = checkJsonRequest(
      { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
      '{"status":"accepted"}',
    );
    expect(r).toEqual({
      ok: true,
      value: { credentials: { scheme: "api_token", token: TOKEN }, body: { status: "accepted" } },
    });
  });
  it("checkJsonRequest: a request without a body needs no content type", () => {
    expect(checkJsonRequest({ Authorization: `Bearer ${TOKEN}` }).ok).toBe(true);
  });
});
