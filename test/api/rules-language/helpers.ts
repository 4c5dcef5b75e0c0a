import type { FieldCatalogue, ValueType } from "../../../src/api/rules-language/index";

/** wirefilter's own test scheme (`engine/src/scheme.rs` tests). */
export const WIREFILTER_SCHEME: FieldCatalogue = new Map<string, ValueType>([
  ["num", "Int"],
  ["bool", "Bool"],
  ["str", "Bytes"],
  ["ip", "Ip"],
  ["arr", { kind: "Array", of: "Bool" }],
  ["str_arr", { kind: "Array", of: "Bytes" }],
  ["str_map", { kind: "Map", of: "Bytes" }],
]);

/** Drops every `span` so trees from different texts can be compared. */
export function withoutSpans(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSpans);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== "span")
        .map(([key, v]) => [key, withoutSpans(v)]),
    );
  }
  return value;
}
