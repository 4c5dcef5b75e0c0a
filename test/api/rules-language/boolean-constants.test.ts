import { describe, expect, it } from "vitest";
import { parseExpression, printExpression } from "../../../src/api/rules-language/index";

describe("parseExpression: boolean constants", () => {
  it.each(["true", "false", "not true", "true and ssl", "(false or ssl)"])("parseExpression: accepts %s", (text) => {
    const result = parseExpression(text);
    expect(result.ok).toBe(true);
    if (result.ok) expect(printExpression(result.ast)).toBe(text);
  });

  it("parseExpression: a constant cannot be compared like a value", () => {
    const result = parseExpression("true eq 1");
    expect(result.ok).toBe(false);
  });
});
