/**
 * A small validator for the JSON Schema subset of `fixtures/v4-schema.json` (type, OpenAPI
 * `nullable`, enum, required, properties, additionalProperties: false, items, min/maxItems,
 * min/maxLength, pattern, minimum, maximum, oneOf, $ref), and the envelope checks every response of
 * the server tests goes through.
 */
import { readFileSync } from "node:fs";
import { expect } from "vitest";

interface Schema {
  readonly type?: string;
  readonly nullable?: boolean;
  readonly enum?: readonly unknown[];
  readonly required?: readonly string[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly additionalProperties?: boolean;
  readonly items?: Schema;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly oneOf?: readonly Schema[];
  readonly $ref?: string;
}

const document = JSON.parse(readFileSync(new URL("./fixtures/v4-schema.json", import.meta.url), "utf8")) as {
  definitions: Record<string, Schema>;
};

/** A definition of the schema fixture. */
export type SchemaName = keyof typeof document.definitions & string;

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function check(value: unknown, schema: Schema, path: string, problems: string[]): void {
  if (schema.$ref !== undefined) {
    const target = document.definitions[schema.$ref.replace("#/definitions/", "")];
    if (target === undefined) throw new Error(`Unknown $ref ${schema.$ref}`);
    check(value, target, path, problems);
    return;
  }
  if (value === null && schema.nullable === true) return;
  if (schema.type !== undefined) {
    const actual = typeOf(value);
    const ok = schema.type === "number" ? actual === "number" || actual === "integer" : actual === schema.type;
    if (!ok) {
      problems.push(`${path}: expected ${schema.type}, got ${actual}`);
      return;
    }
  }
  if (schema.enum !== undefined && !schema.enum.includes(value)) {
    problems.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  }
  if (schema.oneOf !== undefined) {
    const matching = schema.oneOf.filter((s) => {
      const p: string[] = [];
      check(value, s, path, p);
      return p.length === 0;
    });
    if (matching.length !== 1) problems.push(`${path}: matches ${matching.length} of the oneOf schemas`);
  }
  if (typeof value === "string") {
    if (schema.minLength !== undefined && value.length < schema.minLength)
      problems.push(`${path}: shorter than ${schema.minLength}`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      problems.push(`${path}: longer than ${schema.maxLength}`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) {
      problems.push(`${path}: ${JSON.stringify(value)} does not match ${schema.pattern}`);
    }
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${path}: below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${path}: above ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      problems.push(`${path}: fewer than ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      problems.push(`${path}: more than ${schema.maxItems} items`);
    if (schema.items !== undefined) {
      for (const [i, v] of value.entries()) check(v, schema.items, `${path}[${i}]`, problems);
    }
  }
  if (typeOf(value) === "object") {
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in record)) problems.push(`${path}: missing required ${key}`);
    for (const [key, v] of Object.entries(record)) {
      const property = schema.properties?.[key];
      if (property !== undefined) check(v, property, `${path}.${key}`, problems);
      else if (schema.additionalProperties === false) problems.push(`${path}: unexpected property ${key}`);
    }
  }
}

/** The problems of `value` against the definition `name` (empty when it conforms). */
export function schemaProblems(value: unknown, name: SchemaName): string[] {
  const schema = document.definitions[name];
  if (schema === undefined) throw new Error(`Unknown schema ${name}`);
  const problems: string[] = [];
  check(value, schema, name, problems);
  return problems;
}

/** Asserts that `value` conforms to the definition `name`. */
export function expectSchema(value: unknown, name: SchemaName): void {
  expect(schemaProblems(value, name)).toEqual([]);
}

/**
 * Asserts that a raw response body is a success envelope whose result conforms: `result` as one
 * item, or (for `list`) an array of items with `result_info`.
 */
export function expectSuccessBody(body: unknown, result: SchemaName | null, list = false): void {
  expectSchema(body, "success");
  const envelope = body as { result: unknown; result_info?: unknown };
  if (list) {
    expect(Array.isArray(envelope.result)).toBe(true);
    if (envelope.result_info !== undefined) expectSchema(envelope.result_info, "result_info");
    if (result !== null) for (const item of envelope.result as unknown[]) expectSchema(item, result);
  } else if (result !== null) {
    expectSchema(envelope.result, result);
  }
}

/** Asserts that a raw response body is a failure envelope. */
export function expectFailureBody(body: unknown): void {
  expectSchema(body, "failure");
}
