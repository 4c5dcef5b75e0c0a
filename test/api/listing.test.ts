import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ListingBounds } from "../../src/api/listing";
import {
  DNS_RECORDS_LISTING,
  FILTERS_LISTING,
  FIREWALL_RULES_LISTING,
  paginate,
  parseListingParams,
  ZONES_LISTING,
} from "../../src/api/listing";

describe("parseListingParams", () => {
  const accept: [string, ListingBounds, string, object][] = [
    ["zones defaults", ZONES_LISTING, "", { page: 1, per_page: 20, direction: "asc" }],
    ["DNS defaults", DNS_RECORDS_LISTING, "", { page: 1, per_page: 100, order: "type", direction: "asc" }],
    ["filters defaults", FILTERS_LISTING, "", { page: 1, per_page: 25, direction: "asc" }],
    ["firewall rules defaults", FIREWALL_RULES_LISTING, "", { page: 1, per_page: 25, direction: "asc" }],
    ["zones lower bound", ZONES_LISTING, "per_page=5", { page: 1, per_page: 5, direction: "asc" }],
    ["zones upper bound", ZONES_LISTING, "per_page=50", { page: 1, per_page: 50, direction: "asc" }],
    ["filters upper bound", FILTERS_LISTING, "per_page=100", { page: 1, per_page: 100, direction: "asc" }],
    ["DNS one per page", DNS_RECORDS_LISTING, "per_page=1", { page: 1, per_page: 1, order: "type", direction: "asc" }],
    [
      "upper-case DESC",
      ZONES_LISTING,
      "order=name&direction=DESC",
      { page: 1, per_page: 20, order: "name", direction: "desc" },
    ],
    [
      "upper-case ASC",
      ZONES_LISTING,
      "order=status&direction=ASC",
      { page: 1, per_page: 20, order: "status", direction: "asc" },
    ],
    [
      "lower-case desc",
      ZONES_LISTING,
      "order=account.id&direction=desc",
      { page: 1, per_page: 20, order: "account.id", direction: "desc" },
    ],
    ["page 3", ZONES_LISTING, "page=3", { page: 3, per_page: 20, direction: "asc" }],
    [
      "DNS order by ttl",
      DNS_RECORDS_LISTING,
      "order=ttl&direction=desc",
      { page: 1, per_page: 100, order: "ttl", direction: "desc" },
    ],
  ];
  it.each(accept)("parseListingParams: accepts %s", (_n, bounds, query, expected) => {
    expect(parseListingParams(query, bounds)).toEqual({ ok: true, value: expected });
  });

  const reject: [string, ListingBounds, string, string][] = [
    ["zones per_page below 5", ZONES_LISTING, "per_page=4", "per_page"],
    ["zones per_page above 50", ZONES_LISTING, "per_page=51", "per_page"],
    ["filters per_page above 100", FILTERS_LISTING, "per_page=101", "per_page"],
    ["rules per_page below 5", FIREWALL_RULES_LISTING, "per_page=1", "per_page"],
    ["DNS per_page 0", DNS_RECORDS_LISTING, "per_page=0", "per_page"],
    ["page 0", ZONES_LISTING, "page=0", "page"],
    ["negative page", ZONES_LISTING, "page=-1", "page"],
    ["fractional page", ZONES_LISTING, "page=1.5", "page"],
    ["page not a number", ZONES_LISTING, "page=two", "page"],
    ["empty per_page", ZONES_LISTING, "per_page=", "per_page"],
    ["repeated page", ZONES_LISTING, "page=1&page=2", "page"],
    ["unknown order", ZONES_LISTING, "order=created_on", "order"],
    ["order on an endpoint without order", FILTERS_LISTING, "order=id", "order"],
    ["mixed-case direction", ZONES_LISTING, "direction=Desc", "direction"],
    ["unknown direction", ZONES_LISTING, "direction=up", "direction"],
  ];
  it.each(reject)("parseListingParams: rejects %s", (_n, bounds, query, path) => {
    const v = parseListingParams(query, bounds);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.errors.map((e) => e.path)).toEqual([path]);
  });

  it("parseListingParams: a page past the largest safe integer is told the bound it passed, not that it is under 1", () => {
    const messages = (page: string) => {
      const v = parseListingParams({ page }, ZONES_LISTING);
      return v.ok ? [] : v.errors.map((e) => e.message);
    };
    expect(messages("99999999999999999")).toEqual([
      `page must be an integer between 1 and ${Number.MAX_SAFE_INTEGER}.`,
    ]);
    expect(messages("0")).toEqual(["page must be an integer of at least 1."]);
    expect(messages("two")).toEqual(["page must be an integer of at least 1."]);
    expect(parseListingParams({ page: String(Number.MAX_SAFE_INTEGER) }, ZONES_LISTING).ok).toBe(true);
  });

  it("parseListingParams: reports every bad parameter at once", () => {
    const v = parseListingParams({ page: "0", per_page: "1000", direction: "sideways" }, ZONES_LISTING);
    expect(v.ok === false && v.errors.map((e) => e.path)).toEqual(["page", "per_page", "direction"]);
  });
});

describe("paginate", () => {
  it("paginate: computes result_info for a middle page", () => {
    const items = Array.from({ length: 45 }, (_, i) => i);
    expect(paginate(items, { page: 2, per_page: 20, direction: "asc" })).toEqual({
      result: items.slice(20, 40),
      result_info: { page: 2, per_page: 20, count: 20, total_count: 45, total_pages: 3 },
    });
  });
  it("paginate: a page past the end is empty", () => {
    expect(paginate([1, 2], { page: 5, per_page: 5, direction: "asc" }).result_info).toEqual({
      page: 5,
      per_page: 5,
      count: 0,
      total_count: 2,
      total_pages: 1,
    });
  });
  it("paginate: orders by a dotted attribute, ties keep input order, missing last", () => {
    const zones = [
      { n: 1, account: { id: "b" } },
      { n: 2, account: { id: "a" } },
      { n: 3, account: {} },
      { n: 4, account: { id: "a" } },
    ];
    const asc = paginate(zones, { page: 1, per_page: 10, order: "account.id", direction: "asc" });
    expect(asc.result.map((z) => z.n)).toEqual([2, 4, 1, 3]);
    const desc = paginate(zones, { page: 1, per_page: 10, order: "account.id", direction: "desc" });
    expect(desc.result.map((z) => z.n)).toEqual([1, 2, 4, 3]);
  });
  it("paginate: numbers sort numerically", () => {
    const r = paginate([{ ttl: 300 }, { ttl: 1 }, { ttl: 30 }], {
      page: 1,
      per_page: 10,
      order: "ttl",
      direction: "asc",
    });
    expect(r.result.map((x) => x.ttl)).toEqual([1, 30, 300]);
  });
  it("paginate: pages concatenate to the whole ordered list, with consistent result_info (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ k: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }), id: fc.nat() })),
        fc.integer({ min: 1, max: 7 }),
        fc.constantFrom("asc" as const, "desc" as const),
        (items, perPage, direction) => {
          const whole = paginate(items, { page: 1, per_page: Math.max(1, items.length), order: "k", direction }).result;
          const pages = [];
          const totalPages = Math.ceil(items.length / perPage);
          for (let page = 1; page <= totalPages; page++) {
            const p = paginate(items, { page, per_page: perPage, order: "k", direction });
            expect(p.result_info).toEqual({
              page,
              per_page: perPage,
              count: p.result.length,
              total_count: items.length,
              total_pages: totalPages,
            });
            expect(p.result.length).toBeLessThanOrEqual(perPage);
            pages.push(...p.result);
          }
          expect(pages).toEqual(items.length === 0 ? [] : whole);
          // The same items, as a multiset (ids may repeat, so compare whole items in a fixed order).
          const byContent = (a: unknown, b: unknown) =>
            JSON.stringify(a ?? null).localeCompare(JSON.stringify(b ?? null));
          const canonical = (list: ReadonlyArray<{ k?: number; id: number }>) =>
            list.map((x) => ({ id: x.id, k: x.k ?? null })).sort(byContent);
          expect(canonical(pages)).toEqual(canonical(items));
        },
      ),
    );
  });
});
