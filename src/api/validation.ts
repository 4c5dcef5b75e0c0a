/**
 * The result shape every validator in `api/` returns. Validators never throw on bad input: callers
 * get every problem at once, each with a JSON-pointer-like path, and turn them into an envelope with
 * {@link invalidRequest} from `./envelope` when they answer over HTTP.
 */

/** One problem found while validating input. */
export interface ValidationIssue {
  /** Where the problem is, e.g. `per_page`, `[0].filter.expression`. Empty for the whole input. */
  readonly path: string;
  /** What is wrong and what to do, in sentence case ending with a period. */
  readonly message: string;
  /** The API error code to report it with, when it differs from the generic invalid-request code. */
  readonly code?: number;
  /** Extra data for the error element, e.g. `{ id }` of an existing duplicate filter. */
  readonly meta?: Readonly<Record<string, unknown>>;
}

/** Either the validated, typed value or every problem found. */
export type Validation<T> = { ok: true; value: T } | { ok: false; errors: ValidationIssue[] };

/**
 * Wraps a value as a successful {@link Validation}.
 *
 * @example
 * ```ts
 * valid(3); // { ok: true, value: 3 }
 * ```
 */
export function valid<T>(value: T): Validation<T> {
  return { ok: true, value };
}

/**
 * Builds a failed {@link Validation} from one or more issues.
 *
 * @example
 * ```ts
 * invalid({ path: "page", message: "page must be an integer of at least 1." });
 * ```
 */
export function invalid<T = never>(...errors: ValidationIssue[]): Validation<T> {
  return { ok: false, errors };
}

/**
 * True for plain JSON objects (not arrays, not null).
 *
 * @example
 * ```ts
 * isRecord({ a: 1 }); // true
 * isRecord([1]); // false
 * ```
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Builds a type guard for an `as const` enumeration, so every enum in `api/` is checked the same way.
 *
 * @example
 * ```ts
 * const COLORS = ["red", "blue"] as const;
 * const isColor = oneOf(COLORS);
 * isColor("red"); // true
 * ```
 */
export function oneOf<const T extends readonly (string | number)[]>(values: T): (value: unknown) => value is T[number] {
  const set = new Set<unknown>(values);
  return (value: unknown): value is T[number] => set.has(value);
}

/**
 * Joins a path prefix and a key the way issues report them (`a.b`, `[0].c`).
 *
 * @example
 * ```ts
 * joinPath("[0]", "filter"); // "[0].filter"
 * ```
 */
export function joinPath(prefix: string, key: string | number): string {
  if (typeof key === "number") return `${prefix}[${key}]`;
  return prefix === "" ? key : `${prefix}.${key}`;
}

/**
 * The length of a string in characters (Unicode code points), the unit of the schema's `maxLength`
 * and of the platform's character limits; `text.length` counts UTF-16 units, two per emoji.
 *
 * @example
 * ```ts
 * characterLength("a\u{1F600}"); // 2 (text.length is 3)
 * ```
 */
export function characterLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // A low surrogate that follows a high one completes the same character.
    if (code >= 0xdc00 && code <= 0xdfff && i > 0 && (text.charCodeAt(i - 1) & 0xfc00) === 0xd800) continue;
    n++;
  }
  return n;
}

/**
 * Collects issues for an optional string field with a maximum length in characters
 * ({@link characterLength}); returns the string when valid.
 * Shared by the models so length limits read the same everywhere.
 *
 * @example
 * ```ts
 * checkOptionalString({ ref: "x".repeat(51) }, "ref", "", 50, issues); // undefined, one issue pushed
 * ```
 */
export function checkOptionalString(
  record: Record<string, unknown>,
  key: string,
  prefix: string,
  maxLength: number,
  issues: ValidationIssue[],
): string | undefined {
  const value = record[key];
  if (value === undefined) return undefined;
  const path = joinPath(prefix, key);
  if (typeof value !== "string") {
    issues.push({ path, message: `${path} must be a string.` });
    return undefined;
  }
  if (characterLength(value) > maxLength) {
    issues.push({ path, message: `${path} must be at most ${maxLength} characters long.` });
    return undefined;
  }
  return value;
}

/**
 * Collects an issue when an optional field is present and not a boolean.
 *
 * @example
 * ```ts
 * checkOptionalBoolean({ paused: "yes" }, "paused", "", issues); // undefined, one issue pushed
 * ```
 */
export function checkOptionalBoolean(
  record: Record<string, unknown>,
  key: string,
  prefix: string,
  issues: ValidationIssue[],
): boolean | undefined {
  const value = record[key];
  if (value === undefined) return undefined;
  if (typeof value !== "boolean") {
    const path = joinPath(prefix, key);
    issues.push({ path, message: `${path} must be true or false.` });
    return undefined;
  }
  return value;
}

/**
 * Reads a query parameter that must appear at most once. Repeated scalar parameters are ambiguous,
 * so they are reported rather than silently resolved to the first or last value.
 *
 * @example
 * ```ts
 * singleParam(new URLSearchParams("page=1&page=2"), "page", issues); // undefined, one issue pushed
 * ```
 */
export function singleParam(query: URLSearchParams, name: string, issues: ValidationIssue[]): string | undefined {
  const all = query.getAll(name);
  if (all.length > 1) {
    issues.push({ path: name, message: `${name} must be given at most once.` });
    return undefined;
  }
  return all[0];
}

/**
 * Parses a `true`/`false` query parameter.
 *
 * @example
 * ```ts
 * booleanParam(new URLSearchParams("paused=true"), "paused", issues); // true
 * ```
 */
export function booleanParam(query: URLSearchParams, name: string, issues: ValidationIssue[]): boolean | undefined {
  const raw = singleParam(query, name, issues);
  if (raw === undefined) return undefined;
  if (raw === "true") return true;
  if (raw === "false") return false;
  issues.push({ path: name, message: `${name} must be true or false.` });
  return undefined;
}

/** Accepts a `URLSearchParams`, a `URL`, a query string or a plain record, as callers hold any of them. */
export type QueryInput = URLSearchParams | URL | string | Record<string, string | readonly string[] | undefined>;

/**
 * Normalises every accepted query input to `URLSearchParams`.
 *
 * @example
 * ```ts
 * toSearchParams({ page: "2" }).get("page"); // "2"
 * ```
 */
export function toSearchParams(input: QueryInput): URLSearchParams {
  if (input instanceof URLSearchParams) return input;
  if (input instanceof URL) return input.searchParams;
  if (typeof input === "string") return new URLSearchParams(input);
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    if (typeof value === "string") out.append(key, value);
    else for (const v of value) out.append(key, v);
  }
  return out;
}
