/**
 * The published schema the server tests check responses against: the operations and components
 * of Cloudflare's OpenAPI schema kept in `fixtures/cloudflare-openapi-subset.json`, plus the
 * migration endpoints the schema does not describe (`fixtures/undocumented-shapes.json`).
 *
 * A response is checked against the schema of its operation (method and path template) and status:
 * the exact status, else `4XX`/`5XX`, else `default`. The schema's `4XX` responses are mostly
 * `allOf: [<the success shape>, <…-api-response-common-failure>]`, which no body satisfies (`success`
 * would be both `true` and `false`, `result` both required-non-null and null); a failure is
 * therefore checked against the failure parts of that `allOf`, which is what the schema means.
 */
import { readFileSync } from "node:fs";
import type { OpenApiComponents, OpenApiSchema } from "../helpers/openapi-schema";
import { OpenApiValidator } from "../helpers/openapi-schema";

interface Operation {
  readonly responses: Readonly<Record<string, OpenApiSchema>>;
}
interface SchemaDocument {
  readonly operations: Readonly<Record<string, Operation>>;
  readonly components: OpenApiComponents;
  readonly supplement?: Readonly<Record<string, OpenApiSchema>>;
}

function load(name: string): SchemaDocument {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8")) as SchemaDocument;
}

const published = load("cloudflare-openapi-subset.json");
const undocumented = load("undocumented-shapes.json");

/** The source of the published parts: repository, path and commit. */
export const SCHEMA_SOURCE = (published as unknown as { source: Record<string, string> }).source;

/**
 * Where the specification of this library's HTTP side says otherwise than the published schema,
 * the specification wins (docs/api.md lists these): a firewall rule's `priority` and a certificate's
 * `priority` are "integer or null, null when not set" (specification 2.3 and 2.4), where the schema
 * types them as numbers. And a certificate pack's id may be a 36-character UUID, as the schema's
 * own `cert_pack_uuid` and real packs have it, where its pack object says 32 characters.
 */
const nullable = (schema: OpenApiSchema | undefined): OpenApiSchema => {
  if (schema === undefined) throw new Error("The schema fixture lacks a schema the specification overrides");
  return { ...schema, nullable: true };
};
const schemas = { ...published.components.schemas, ...undocumented.components.schemas };
schemas["firewall_components-schemas-priority"] = nullable(schemas["firewall_components-schemas-priority"]);

const supplementPack = published.supplement?.certificate_pack;
const certificate = supplementPack?.properties?.certificates?.items;
/** The certificate pack object of the later published schema (see the fixture's `$comment`). */
const CERTIFICATE_PACK: OpenApiSchema = {
  ...supplementPack,
  properties: {
    ...supplementPack?.properties,
    // Pack ids are UUIDs on the wire and in the schema's own cert_pack_uuid; its identifier says 32.
    id: { type: "string", minLength: 1, maxLength: 36 },
    certificates: {
      type: "array",
      items: {
        ...certificate,
        properties: { ...certificate?.properties, priority: nullable(certificate?.properties?.priority) },
      },
    },
  },
};

const validator = new OpenApiValidator({ schemas, responses: published.components.responses ?? {} });

interface Route {
  readonly key: string;
  readonly method: string;
  readonly pattern: RegExp;
  readonly operation: Operation;
  readonly published: boolean;
}

function routesOf(document: SchemaDocument, isPublished: boolean): Route[] {
  return Object.entries(document.operations).map(([key, operation]) => {
    const [method = "", template = ""] = key.split(" ");
    const source = template
      .split("/")
      .map((segment) => (/^\{[a-z_]+\}$/.test(segment) ? "[^/]+" : segment.replace(/[.*+?^$()|[\]\\]/g, "\\$&")))
      .join("/");
    return { key, method, pattern: new RegExp(`^${source}$`), operation, published: isPublished };
  });
}

const ROUTES = [...routesOf(published, true), ...routesOf(undocumented, false)];

/** The operation (`METHOD /template`) a request path (with or without `/client/v4`) belongs to. */
export function operationOf(method: string, path: string): string | undefined {
  const bare = path.replace(/^\/client\/v4(?=\/)/, "");
  return ROUTES.find((r) => r.method === method && r.pattern.test(bare))?.key;
}

function failureParts(schema: OpenApiSchema): OpenApiSchema {
  const parts = schema.allOf?.filter((p) => p.$ref !== undefined && /failure$/i.test(p.$ref));
  return parts !== undefined && parts.length > 0 ? { allOf: parts } : schema;
}

const ENTRY_POINT_PUT = "PUT /zones/{zone_id}/rulesets/phases/{ruleset_phase}/entrypoint";

function responseSchema(operation: Operation, status: number): OpenApiSchema | undefined {
  const r = operation.responses;
  const family = `${String(status)[0]}XX`;
  const schema = r[String(status)] ?? r[family] ?? r[family.toLowerCase()] ?? r.default;
  return schema !== undefined && status >= 400 ? failureParts(schema) : schema;
}

/**
 * The problems of one response body against the schema of its operation and status (empty when it
 * conforms). A request to a path no operation covers is itself a problem. `query` is the request's
 * query string: a dry run of the entry-point PUT (`dry_run=true`, which the 2024 file predates)
 * answers 200 with `result: null`, as the later SDK documents.
 */
export function responseProblems(method: string, path: string, status: number, body: unknown, query = ""): string[] {
  const key = operationOf(method, path);
  const route = ROUTES.find((r) => r.key === key);
  if (route === undefined) return [`${method} ${path}: no operation of the schema covers it`];
  const schema = responseSchema(route.operation, status);
  if (schema === undefined) return [`${route.key}: the schema gives no response for status ${status}`];
  if (status === 200 && route.key === ENTRY_POINT_PUT && new URLSearchParams(query).get("dry_run") === "true") {
    const b = body as { result?: unknown; success?: unknown; errors?: unknown; messages?: unknown };
    const envelope =
      b.success === true && Array.isArray(b.errors) && b.errors.length === 0 && Array.isArray(b.messages);
    return envelope && b.result === null ? [] : [`${route.key} 200: a dry run's envelope must have result null`];
  }
  const problems = validator.problems(body, schema).map((p) => `${route.key} ${status} ${p}`);
  // The 2024 listing leaves packs as bare objects: check each against the later published pack.
  if (status === 200 && route.key === "GET /zones/{zone_id}/ssl/certificate_packs") {
    const result = (body as { result?: unknown }).result;
    if (Array.isArray(result)) {
      for (const [i, pack] of result.entries()) {
        problems.push(...validator.problems(pack, CERTIFICATE_PACK, `$.result[${i}]`));
      }
    }
  }
  return problems;
}

/** The problems of `value` against one component of the schema (e.g. `zones_zone`). */
export function componentProblems(value: unknown, component: string): string[] {
  return validator.problems(value, validator.resolve(`#/components/schemas/${component}`));
}

/** The problems of a certificate pack against the later published pack object. */
export function certificatePackProblems(value: unknown): string[] {
  return validator.problems(value, CERTIFICATE_PACK);
}
