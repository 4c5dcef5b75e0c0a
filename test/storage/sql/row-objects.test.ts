import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { rowBuilderFor } from "../../../src/storage/sql/row-objects";

/** The reference: assignment in column order. */
function byLoop(names: readonly string[], values: readonly unknown[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i++) o[names[i] as string] = values[i];
  return o;
}

/** Builds enough rows for the builder to switch to its compiled form, and returns the last. */
function built(names: readonly string[], values: readonly (string | number | null)[]): Record<string, unknown> {
  const build = rowBuilderFor(names);
  let last: Record<string, unknown> = {};
  for (let i = 0; i < 100; i++) last = build(values);
  return last;
}

describe("row objects", () => {
  test("compiled rows equal looped rows: duplicates (last wins, first position), integer-like keys, odd names", () => {
    const names = ["b", "a", "b", "1", "0", 'quote"s', "back\\slash", "line\nbreak", "sep\u2028", "", "constructor"];
    const values = names.map((_, i) => i);
    const row = built(names, values);
    expect(row).toEqual(byLoop(names, values));
    expect(Object.keys(row)).toEqual(Object.keys(byLoop(names, values)));
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
  });

  test("a column named __proto__ behaves as with assignment", () => {
    const names = ["__proto__", "x"];
    const row = built(names, [1, 2]);
    const reference = byLoop(names, [1, 2]);
    expect(Object.keys(row)).toEqual(Object.keys(reference));
    expect(Object.getPrototypeOf(row)).toBe(Object.getPrototypeOf(reference));
  });

  test("property: any column names give the same object either way", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 6 }), { minLength: 1, maxLength: 8 }), (names) => {
        const values = names.map((_, i) => `v${i}`);
        const row = built(names, values);
        const reference = byLoop(names, values);
        expect(Object.entries(row)).toEqual(Object.entries(reference));
        expect(Object.getPrototypeOf(row)).toBe(Object.getPrototypeOf(reference));
      }),
    );
  });
});
