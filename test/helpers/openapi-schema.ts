/**
 * A validator for the OpenAPI 3.0 schema objects of Cloudflare's published v4 schema, enough for
 * the subset the server tests keep (test/server/fixtures/cloudflare-openapi-subset.json): `$ref`
 * (to `#/components/schemas/…` and `#/components/responses/…`), `allOf`, `anyOf`, `oneOf` (with
 * `discriminator`: the mapped schema decides, as OpenAPI says), `not`, `type` with `nullable`, `enum`
 * (deep equality), `required`, `properties`, `additionalProperties` (boolean or schema), `items`,
 * `minItems`/`maxItems`/`uniqueItems`, `minLength`/`maxLength`/`pattern`, `minimum`/`maximum`, and the
 * formats `date-time`, `ipv4`, `ipv6` and `hostname`. Unknown keywords are an error, so a schema
 * the validator would silently half-check cannot slip in. One reading goes beyond JSON Schema: the
 * schema puts `minLength: 1` on the failure envelope's `errors` array, meaning at least one error,
 * so `minLength`/`maxLength` on an array bound its items, as the schema's authors mean it.
 */

/** An OpenAPI 3.0 schema object (the validation keywords only). */
export interface OpenApiSchema {
  readonly $ref?: string;
  readonly type?: string;
  readonly nullable?: boolean;
  readonly enum?: readonly unknown[];
  readonly required?: readonly string[];
  readonly properties?: Readonly<Record<string, OpenApiSchema>>;
  readonly additionalProperties?: boolean | OpenApiSchema;
  readonly items?: OpenApiSchema;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly uniqueItems?: boolean;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly format?: string;
  readonly allOf?: readonly OpenApiSchema[];
  readonly anyOf?: readonly OpenApiSchema[];
  readonly oneOf?: readonly OpenApiSchema[];
  readonly not?: OpenApiSchema;
  readonly discriminator?: { readonly propertyName: string; readonly mapping?: Readonly<Record<string, string>> };
  readonly $comment?: string;
}

/** The components a `$ref` can name. */
export interface OpenApiComponents {
  readonly schemas: Readonly<Record<string, OpenApiSchema>>;
  readonly responses?: Readonly<Record<string, OpenApiSchema>>;
}

const KEYWORDS = new Set([
  "$ref",
  "type",
  "nullable",
  "enum",
  "required",
  "properties",
  "additionalProperties",
  "items",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "format",
  "allOf",
  "anyOf",
  "oneOf",
  "not",
  "discriminator",
  "$comment",
]);

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeOf(a) !== typeOf(b) || typeof a !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((v, i) => deepEqual(v, other[i]));
  }
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return (
    ka.length === kb.length &&
    ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const HOST_LABEL = /^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/;

function isIpv6(value: string): boolean {
  if (!/^[0-9a-fA-F:.]+$/.test(value) || value.split("::").length > 2) return false;
  const parts = value.split(":");
  const last = parts[parts.length - 1] ?? "";
  const v4 = last.includes(".");
  if (v4 && !IPV4.test(last)) return false;
  const groups = (v4 ? parts.slice(0, -1) : parts).filter((p) => p !== "");
  if (!groups.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  const count = groups.length + (v4 ? 2 : 0);
  return value.includes("::") ? count < 8 : count === 8;
}

function formatProblem(format: string, value: string): boolean {
  switch (format) {
    case "date-time":
      return !DATE_TIME.test(value) || Number.isNaN(Date.parse(value));
    case "ipv4":
      return !IPV4.test(value);
    case "ipv6":
      return !isIpv6(value);
    case "hostname":
      return value.length > 253 || !value.split(".").every((l) => HOST_LABEL.test(l));
    default:
      throw new Error(`The validator does not know the format ${format}`);
  }
}

/** Validates JSON values against the schemas of one set of components. */
export class OpenApiValidator {
  readonly #components: OpenApiComponents;

  constructor(components: OpenApiComponents) {
    this.#components = components;
  }

  /** The schema a `$ref` names; throws for a reference outside the components. */
  resolve(ref: string): OpenApiSchema {
    const match = /^#\/components\/(schemas|responses)\/(.+)$/.exec(ref);
    const table = match?.[1] === "responses" ? this.#components.responses : this.#components.schemas;
    const schema = match === null ? undefined : table?.[match[2] ?? ""];
    if (schema === undefined) throw new Error(`Unknown $ref ${ref}`);
    return schema;
  }

  /** The problems of `value` against `schema`, each with its JSON path (empty when it conforms). */
  problems(value: unknown, schema: OpenApiSchema, path = "$"): string[] {
    const out: string[] = [];
    this.#check(value, schema, path, out);
    return out;
  }

  #check(value: unknown, schema: OpenApiSchema, path: string, out: string[]): void {
    for (const key of Object.keys(schema)) {
      if (!KEYWORDS.has(key)) throw new Error(`The validator does not know the keyword ${key} (at ${path})`);
    }
    if (schema.$ref !== undefined) {
      this.#check(value, this.resolve(schema.$ref), path, out);
      return;
    }
    for (const part of schema.allOf ?? []) this.#check(value, part, path, out);
    if (schema.anyOf !== undefined && !schema.anyOf.some((s) => this.problems(value, s, path).length === 0)) {
      out.push(`${path}: matches none of the anyOf schemas`);
    }
    if (schema.oneOf !== undefined) this.#checkOneOf(value, schema, path, out);
    if (schema.not !== undefined && this.problems(value, schema.not, path).length === 0) {
      out.push(`${path}: matches the schema under not`);
    }
    if (value === null && schema.nullable === true) return;
    if (schema.enum !== undefined && !schema.enum.some((e) => deepEqual(e, value))) {
      out.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
    }
    if (schema.type !== undefined) {
      const actual = typeOf(value);
      const fits = actual === schema.type || (schema.type === "number" && actual === "integer");
      if (!fits) {
        out.push(`${path}: expected ${schema.type}, got ${actual}`);
        return;
      }
    }
    if (typeof value === "string") this.#checkString(value, schema, path, out);
    if (typeof value === "number") {
      if (schema.minimum !== undefined && value < schema.minimum)
        out.push(`${path}: ${value} is below ${schema.minimum}`);
      if (schema.maximum !== undefined && value > schema.maximum)
        out.push(`${path}: ${value} is above ${schema.maximum}`);
    }
    if (Array.isArray(value)) this.#checkArray(value, schema, path, out);
    if (typeOf(value) === "object") this.#checkObject(value as Record<string, unknown>, schema, path, out);
  }

  #checkOneOf(value: unknown, schema: OpenApiSchema, path: string, out: string[]): void {
    const discriminator = schema.discriminator;
    if (discriminator !== undefined && typeOf(value) === "object") {
      const tag = (value as Record<string, unknown>)[discriminator.propertyName];
      const ref = typeof tag === "string" ? discriminator.mapping?.[tag] : undefined;
      if (ref === undefined) {
        out.push(`${path}.${discriminator.propertyName}: ${JSON.stringify(tag)} names no schema of the discriminator`);
      } else {
        this.#check(value, { $ref: ref }, path, out);
      }
      return;
    }
    const results = (schema.oneOf ?? []).map((s) => this.problems(value, s, path));
    const matching = results.filter((p) => p.length === 0).length;
    if (matching !== 1) {
      const closest = results.reduce((a, b) => (b.length < a.length ? b : a), results[0] ?? []);
      out.push(
        `${path}: matches ${matching} of the oneOf schemas${matching === 0 ? ` (closest: ${closest.join("; ")})` : ""}`,
      );
    }
  }

  #checkString(value: string, schema: OpenApiSchema, path: string, out: string[]): void {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength)
      out.push(`${path}: shorter than ${schema.minLength}`);
    if (schema.maxLength !== undefined && length > schema.maxLength)
      out.push(`${path}: longer than ${schema.maxLength}`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(value)) {
      out.push(`${path}: ${JSON.stringify(value)} does not match ${schema.pattern}`);
    }
    if (schema.format !== undefined && formatProblem(schema.format, value)) {
      out.push(`${path}: ${JSON.stringify(value)} is not a ${schema.format}`);
    }
  }

  #checkArray(value: readonly unknown[], schema: OpenApiSchema, path: string, out: string[]): void {
    const minItems = schema.minItems ?? schema.minLength;
    const maxItems = schema.maxItems ?? schema.maxLength;
    if (minItems !== undefined && value.length < minItems) out.push(`${path}: fewer than ${minItems} items`);
    if (maxItems !== undefined && value.length > maxItems) out.push(`${path}: more than ${maxItems} items`);
    if (schema.uniqueItems === true) {
      const duplicate = value.findIndex((v, i) => value.findIndex((w) => deepEqual(v, w)) !== i);
      if (duplicate >= 0) out.push(`${path}[${duplicate}]: repeats an earlier item`);
    }
    if (schema.items !== undefined) {
      for (const [i, v] of value.entries()) this.#check(v, schema.items, `${path}[${i}]`, out);
    }
  }

  #checkObject(value: Record<string, unknown>, schema: OpenApiSchema, path: string, out: string[]): void {
    // A property set to undefined is absent, as it is once serialised to JSON.
    for (const key of schema.required ?? []) {
      if (value[key] === undefined) out.push(`${path}: missing required ${key}`);
    }
    for (const [key, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const property = schema.properties?.[key];
      if (property !== undefined) this.#check(v, property, `${path}.${key}`, out);
      else if (schema.additionalProperties === false) out.push(`${path}: unexpected property ${key}`);
      else if (typeof schema.additionalProperties === "object") {
        this.#check(v, schema.additionalProperties, `${path}.${key}`, out);
      }
    }
  }
}
