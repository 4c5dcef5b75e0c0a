/**
 * One small validator for every public options object: unknown names, wrong types and bad values
 * fail at once with a `TypeError` that names the option, says what it accepts, and lists the valid
 * names (with a "did you mean" for a near miss), instead of being silently ignored.
 *
 * A spec maps each option name to a {@link OptionCheck}; checks compose (`optional` is implied:
 * `undefined` is always accepted, as for an absent option).
 *
 * @example
 * ```ts
 * const OPEN_OPTIONS = {
 *   directory: is.string({ nonEmpty: true }),
 *   codec: is.oneOf(["v8", "structured"]),
 *   limits: is.object({ maxKeyBytes: is.integer({ min: 1 }) }),
 * } satisfies OptionSpec;
 * checkOptions("ObjectStorage.open()", options, OPEN_OPTIONS);
 * // TypeError: ObjectStorage.open(): unknown option "directoy" (did you mean "directory"?). Valid options: codec, directory, limits.
 * ```
 */

/**
 * Checks one value. Returns `undefined` when it is acceptable, or the expectation it failed
 * ("a string", `"v8" or "structured"`) for the message; a nested check may throw its own
 * {@link InvalidOptionError} (which already names the full path).
 */
export type OptionCheck = (value: unknown, path: string, where: string) => string | undefined;

/** The allowed options of one options object: name → check. */
export type OptionSpec = Readonly<Record<string, OptionCheck>>;

/**
 * The error of a bad option: a `TypeError` (what the platform throws for a malformed argument),
 * carrying `code: "ERR_INVALID_OPTION"` like actorstore's own errors, and the option's path.
 */
export class InvalidOptionError extends TypeError {
  /** Always `"ERR_INVALID_OPTION"`. */
  readonly code = "ERR_INVALID_OPTION" as const;
  /** The option's path (`"limits.maxKeyBytes"`). */
  readonly option: string;

  constructor(message: string, option: string) {
    super(message);
    Object.setPrototypeOf(this, new.target.prototype);
    this.name = "TypeError";
    this.option = option;
  }
}

/**
 * Validates `options` of `where` (a function name as users call it, `"ObjectStorage.open()"`)
 * against `spec`. `undefined` is accepted (no options); anything else must be a plain object.
 */
export function checkOptions(where: string, options: unknown, spec: OptionSpec, prefix = ""): void {
  if (options === undefined) return;
  const label = prefix === "" ? "options" : `option "${prefix}"`;
  if (!isPlainObject(options)) {
    throw new InvalidOptionError(
      `${where}: ${label} must be an object such as { ${Object.keys(spec)[0] ?? ""}: … }; got ${describe(options)}. Valid options: ${validNames(spec)}.`,
      prefix,
    );
  }
  for (const name of Object.keys(options)) {
    if (!Object.hasOwn(spec, name)) {
      const near = nearest(name, Object.keys(spec));
      const hint = near === undefined ? "" : ` (did you mean "${prefix}${prefix === "" ? "" : "."}${near}"?)`;
      const path = join(prefix, name);
      throw new InvalidOptionError(
        `${where}: unknown option "${path}"${hint}. Valid ${prefix === "" ? "options" : `options of "${prefix}"`}: ${validNames(spec)}.`,
        path,
      );
    }
  }
  for (const [name, check] of Object.entries(spec)) {
    const value = (options as Record<string, unknown>)[name];
    if (value === undefined) continue;
    const path = join(prefix, name);
    const expected = check(value, path, where);
    if (expected !== undefined) {
      throw new InvalidOptionError(`${where}: option "${path}" must be ${expected}; got ${describe(value)}.`, path);
    }
  }
}

/** Ready-made checks. */
export const is = {
  /** A string (optionally non-empty). */
  string(o: { nonEmpty?: boolean } = {}): OptionCheck {
    return (v) =>
      typeof v === "string" && (!o.nonEmpty || v.length > 0)
        ? undefined
        : o.nonEmpty
          ? "a non-empty string"
          : "a string";
  },
  /** `true` or `false`. */
  boolean(): OptionCheck {
    return (v) => (typeof v === "boolean" ? undefined : "true or false");
  },
  /** A function. */
  function(what = "a function"): OptionCheck {
    return (v) => (typeof v === "function" ? undefined : what);
  },
  /** A finite number in `[min, max]`. */
  number(o: { min?: number; max?: number; integer?: boolean; unit?: string } = {}): OptionCheck {
    const kind = o.integer ? "an integer" : "a number";
    const range =
      o.min !== undefined && o.max !== undefined
        ? ` from ${o.min} to ${o.max}`
        : o.min !== undefined
          ? o.min === 0
            ? " ≥ 0"
            : ` ≥ ${o.min}`
          : o.max !== undefined
            ? ` ≤ ${o.max}`
            : "";
    const expected = `${kind}${range}${o.unit ? ` (${o.unit})` : ""}`;
    return (v) => {
      if (typeof v !== "number" || !Number.isFinite(v)) return expected;
      if (o.integer && !Number.isSafeInteger(v)) return expected;
      if ((o.min !== undefined && v < o.min) || (o.max !== undefined && v > o.max)) return expected;
      return undefined;
    };
  },
  /** An integer (see {@link is.number}). */
  integer(o: { min?: number; max?: number; unit?: string } = {}): OptionCheck {
    return is.number({ ...o, integer: true });
  },
  /** One of `values` (a near-miss string gets a "did you mean"). */
  oneOf(values: readonly (string | number | boolean)[]): OptionCheck {
    const list = values.map((x) => JSON.stringify(x));
    const expected = list.length <= 2 ? list.join(" or ") : `one of ${list.join(", ")}`;
    return (v) => {
      if (values.includes(v as string)) return undefined;
      const near =
        typeof v === "string" ? nearest(v, values.filter((x) => typeof x === "string") as string[]) : undefined;
      return near === undefined ? expected : `${expected} (did you mean "${near}"?)`;
    };
  },
  /** A nested options object, checked against its own spec. */
  object(spec: OptionSpec): OptionCheck {
    return (v, path, where) => {
      checkOptions(where, v, spec, path);
      return undefined;
    };
  },
  /** Any object (or function) with the named methods: an interface value such as a clock. */
  implementing(what: string, methods: readonly string[]): OptionCheck {
    return (v) => {
      if ((typeof v !== "object" && typeof v !== "function") || v === null) return what;
      const o = v as Record<string, unknown>;
      const missing = methods.filter((m) => typeof o[m] !== "function");
      return missing.length === 0 ? undefined : `${what} (missing ${missing.join(", ")})`;
    };
  },
  /** Any value (documented as such; for pass-through options like `env`). */
  any(): OptionCheck {
    return () => undefined;
  },
  /** The first check that accepts wins; the message joins their expectations. */
  either(...checks: OptionCheck[]): OptionCheck {
    return (v, path, where) => {
      const failures: string[] = [];
      for (const check of checks) {
        const r = check(v, path, where);
        if (r === undefined) return undefined;
        failures.push(r);
      }
      return failures.join(" or ");
    };
  },
} as const;

/** Whether `v` is a plain object (`{}` literal, `Object.create(null)`, or a class-less record). */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null;
}

function join(prefix: string, name: string): string {
  return prefix === "" ? name : `${prefix}.${name}`;
}

function validNames(spec: OptionSpec): string {
  const names = Object.keys(spec);
  return names.length === 0 ? "(none)" : names.join(", ");
}

/** A short, safe description of a bad value for a message (never a whole object or a secret). */
function describe(v: unknown): string {
  if (typeof v === "string") return v.length > 40 ? `a string of ${v.length} characters` : JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint")
    return `${String(v)}${typeof v === "bigint" ? "n" : ""}`;
  if (v === null) return "null";
  if (typeof v === "symbol") return "a symbol";
  if (typeof v === "function") return "a function";
  if (Array.isArray(v)) return "an array";
  return "an object";
}

/**
 * The candidate closest to `name` when it is a plausible typo: case-insensitive equality, or an
 * edit distance of at most a third of the name's length (at least 1, at most 3).
 */
export function nearest(name: string, candidates: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = c.toLowerCase() === lower ? 0 : editDistance(lower, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  const allowed = Math.min(3, Math.max(1, Math.floor(name.length / 3)));
  return bestDistance <= allowed ? best : undefined;
}

/** Damerau–Levenshtein distance (optimal string alignment), so a swapped pair counts as one edit. */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Number.POSITIVE_INFINITY;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const prev = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row.push(d);
    }
    rows.push(row);
  }
  return (rows[a.length] as number[])[b.length] as number;
}
