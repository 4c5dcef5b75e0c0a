/**
 * Listing parameters (`page`, `per_page`, `order`, `direction`) with per-endpoint bounds, and
 * {@link paginate}, which orders and slices items and computes a correct `result_info`.
 */
import type { ResultInfo } from "./envelope";
import type { QueryInput, Validation, ValidationIssue } from "./validation";
import { oneOf, singleParam, toSearchParams } from "./validation";

/** Sort directions, lower case as in every OAS enum. `ASC`/`DESC` (the docs' spelling) are accepted on input. */
export const DIRECTIONS = ["asc", "desc"] as const;
/** One of {@link DIRECTIONS}. */
export type Direction = (typeof DIRECTIONS)[number];
/**
 * True for a normalised direction.
 *
 * @example
 * ```ts
 * isDirection("asc"); // true
 * isDirection("ASC"); // false: normalise with parseListingParams first
 * ```
 */
export const isDirection = oneOf(DIRECTIONS);

/** The bounds and defaults one endpoint applies to its listing parameters. */
export interface ListingBounds {
  readonly minPerPage: number;
  readonly maxPerPage: number;
  readonly defaultPerPage: number;
  /** Attributes `order` may name; an empty list means the endpoint takes no `order`. */
  readonly orders: readonly string[];
  readonly defaultOrder?: string;
  readonly defaultDirection?: Direction;
}

/** `GET /zones`: per_page 5–50, default 20 (http-models.md §1.6). */
export const ZONES_LISTING: ListingBounds = {
  minPerPage: 5,
  maxPerPage: 50,
  defaultPerPage: 20,
  orders: ["name", "status", "account.id", "account.name", "plan.id"],
};

/** `GET /zones/{zone_id}/dns_records`: per_page default 100, min 1, OAS max 5,000,000, order by type asc (§1.7). */
export const DNS_RECORDS_LISTING: ListingBounds = {
  minPerPage: 1,
  maxPerPage: 5_000_000,
  defaultPerPage: 100,
  orders: ["type", "name", "content", "ttl", "proxied"],
  defaultOrder: "type",
  defaultDirection: "asc",
};

/** `GET /zones/{zone_id}/filters`: per_page 5–100, default 25, no ordering parameter (§1.2). */
export const FILTERS_LISTING: ListingBounds = { minPerPage: 5, maxPerPage: 100, defaultPerPage: 25, orders: [] };

/** `GET /zones/{zone_id}/firewall/rules`: per_page 5–100, default 25 (§1.3). */
export const FIREWALL_RULES_LISTING: ListingBounds = { minPerPage: 5, maxPerPage: 100, defaultPerPage: 25, orders: [] };

/**
 * `GET /zones/{zone_id}/ssl/certificate_packs`. The SDK takes `page`/`per_page` but no bounds are
 * documented; these follow the specification's default page size of 20 and the zones maximum, and are our
 * assumption.
 */
export const CERTIFICATE_PACKS_LISTING: ListingBounds = {
  minPerPage: 5,
  maxPerPage: 50,
  defaultPerPage: 20,
  orders: [],
};

/** Validated listing parameters. */
export interface ListingParams {
  readonly page: number;
  readonly per_page: number;
  readonly order?: string;
  readonly direction: Direction;
}

const INTEGER_RE = /^[0-9]+$/;

/**
 * Parses `page`, `per_page`, `order` and `direction` against an endpoint's bounds. Out-of-range
 * values are rejected rather than clamped, so a client learns its request was not honoured.
 *
 * @example
 * ```ts
 * parseListingParams("page=2&per_page=50&order=name&direction=DESC", ZONES_LISTING);
 * // { ok: true, value: { page: 2, per_page: 50, order: "name", direction: "desc" } }
 * ```
 */
export function parseListingParams(input: QueryInput, bounds: ListingBounds): Validation<ListingParams> {
  const query = toSearchParams(input);
  const issues: ValidationIssue[] = [];
  const page = parseInteger(singleParam(query, "page", issues), "page", 1, Number.MAX_SAFE_INTEGER, 1, issues);
  const perPage = parseInteger(
    singleParam(query, "per_page", issues),
    "per_page",
    bounds.minPerPage,
    bounds.maxPerPage,
    bounds.defaultPerPage,
    issues,
  );
  let order = singleParam(query, "order", issues) ?? bounds.defaultOrder;
  if (order !== undefined && !bounds.orders.includes(order)) {
    issues.push({
      path: "order",
      message:
        bounds.orders.length === 0
          ? "order is not supported by this endpoint; remove it."
          : `order must be one of ${bounds.orders.join(", ")}.`,
    });
    order = undefined;
  }
  const rawDirection = singleParam(query, "direction", issues);
  let direction: Direction = bounds.defaultDirection ?? "asc";
  if (rawDirection !== undefined) {
    const lower = rawDirection.toLowerCase();
    // The docs spell it ASC/DESC and the OAS asc/desc; mixed case like "Asc" is neither, so refuse it.
    if ((rawDirection === lower || rawDirection === rawDirection.toUpperCase()) && isDirection(lower)) {
      direction = lower;
    } else {
      issues.push({ path: "direction", message: "direction must be asc, desc, ASC or DESC." });
    }
  }
  if (issues.length > 0) return { ok: false, errors: issues };
  const value: ListingParams =
    order === undefined ? { page, per_page: perPage, direction } : { page, per_page: perPage, order, direction };
  return { ok: true, value };
}

function parseInteger(
  raw: string | undefined,
  name: string,
  min: number,
  max: number,
  fallback: number,
  issues: ValidationIssue[],
): number {
  if (raw === undefined) return fallback;
  const n = INTEGER_RE.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    issues.push({
      path: name,
      message:
        max === Number.MAX_SAFE_INTEGER && (Number.isNaN(n) || n < min)
          ? `${name} must be an integer of at least ${min}.`
          : `${name} must be an integer between ${min} and ${max}.`,
    });
    return fallback;
  }
  return n;
}

/** How {@link paginate} reads the value of an `order` attribute from an item. */
export type OrderKey<T> = (item: T, attribute: string) => unknown;

/**
 * Reads a dotted attribute path (`account.id`) from a plain object; the default {@link OrderKey}.
 *
 * @example
 * ```ts
 * readPath({ account: { id: "a" } }, "account.id"); // "a"
 * ```
 */
export function readPath(item: unknown, attribute: string): unknown {
  let current: unknown = item;
  for (const part of attribute.split(".")) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

// Missing values sort last in either direction, so a page never starts with holes.
function compareValues(a: unknown, b: unknown): number {
  const aMissing = a === undefined || a === null;
  const bMissing = b === undefined || b === null;
  if (aMissing || bMissing) return aMissing === bMissing ? 0 : aMissing ? 1 : -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b);
  // Code-unit order rather than localeCompare: the result must not depend on the host's locale.
  const sa = String(a);
  const sb = String(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/** A page of items and its `result_info`. */
export interface Page<T> {
  readonly result: T[];
  readonly result_info: ResultInfo;
}

/**
 * Orders `items` by `params.order` (stable: ties keep their input order, missing values last) and
 * returns the requested page with `result_info`. A page past the end is empty, not an error.
 *
 * @example
 * ```ts
 * paginate(["a", "b", "c"], { page: 2, per_page: 2, direction: "asc" });
 * // { result: ["c"], result_info: { page: 2, per_page: 2, count: 1, total_count: 3, total_pages: 2 } }
 * ```
 */
export function paginate<T>(items: readonly T[], params: ListingParams, orderKey: OrderKey<T> = readPath): Page<T> {
  let ordered = items.slice();
  const { order } = params;
  if (order !== undefined) {
    const sign = params.direction === "desc" ? -1 : 1;
    // Decorate with the input index so ties stay stable even when the direction flips.
    ordered = items
      .map((item, index) => ({ item, index, key: orderKey(item, order) }))
      .sort((x, y) => {
        const xMissing = x.key === undefined || x.key === null;
        const yMissing = y.key === undefined || y.key === null;
        const c = xMissing || yMissing ? compareValues(x.key, y.key) : sign * compareValues(x.key, y.key);
        return c !== 0 ? c : x.index - y.index;
      })
      .map((d) => d.item);
  }
  const start = (params.page - 1) * params.per_page;
  const result = ordered.slice(start, start + params.per_page);
  return {
    result,
    result_info: {
      page: params.page,
      per_page: params.per_page,
      count: result.length,
      total_count: items.length,
      total_pages: Math.ceil(items.length / params.per_page),
    },
  };
}

/** How several query filters combine: `all` (default) requires every one, `any` at least one. */
export const MATCH_MODES = ["any", "all"] as const;
/** One of {@link MATCH_MODES}. */
export type MatchMode = (typeof MATCH_MODES)[number];
/**
 * True for a match mode.
 *
 * @example
 * ```ts
 * isMatchMode("any"); // true
 * ```
 */
export const isMatchMode = oneOf(MATCH_MODES);
