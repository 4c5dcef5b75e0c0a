/**
 * Shared set-up of the server tests: a fixture with accounts, zones on every plan, DNS records,
 * certificate packs and invitations; SDK clients for both auth schemes whose fetch records every
 * response body so each test can check them all against the published schema (schema.ts).
 */
import Cloudflare from "cloudflare";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import type { ApiServer } from "../../src/server/index";
import { startTestApiServer } from "../../src/testkit/api-server";
import { responseProblems } from "./schema";

export const TOKEN = "Y2xvdWRmbGFyZS1hcGktdG9rZW4tMDAwMDAwMDAw";
export const EMAIL = "user@example.com";
export const KEY = "c2547eb745079dac9320b638f5e225cf483cc";
export const ACCOUNT_A = "01a7362d577a6c3019a474fd6f485823";
export const ACCOUNT_B = "02b7362d577a6c3019a474fd6f485824";
export const ENT_ZONE = "e0000000000000000000000000000001";
export const PRO_ZONE = "e0000000000000000000000000000002";
export const BIZ_ZONE = "e0000000000000000000000000000003";
export const PENDING_INVITE = "4f5f0c14a2a41d5063dd301b2f829f04";
export const EXPIRED_INVITE = "4f5f0c14a2a41d5063dd301b2f829f05";
export const BULK_ZONES = 23;

const certificate = (id: string, host: string) => ({
  id,
  hosts: [host, `*.${host}`],
  issuer: "LetsEncrypt",
  signature: "ECDSAWithSHA256",
  status: "active",
  bundle_method: "ubiquitous",
  zone_id: ENT_ZONE,
  uploaded_on: "2024-01-01T00:00:00.000000Z",
  modified_on: "2024-01-01T00:00:00.000000Z",
  expires_on: "2024-04-01T00:00:00.000000Z",
  priority: null,
});

/** The fixture every server test starts from. */
export const FIXTURE = {
  accounts: [
    { id: ACCOUNT_A, name: "Main account" },
    { id: ACCOUNT_B, name: "Bulk account" },
  ],
  zones: [
    {
      id: ENT_ZONE,
      name: "ent.example.com",
      account: ACCOUNT_A,
      plan: "enterprise",
      dns_records: [
        {
          id: "d0000000000000000000000000000001",
          type: "A",
          name: "ent.example.com",
          content: "192.0.2.1",
          proxied: true,
        },
        { id: "d0000000000000000000000000000002", type: "AAAA", name: "www.ent.example.com", content: "2001:db8::1" },
        {
          id: "d0000000000000000000000000000003",
          type: "CNAME",
          name: "api.ent.example.com",
          content: "ent.example.com",
        },
        {
          id: "d0000000000000000000000000000004",
          type: "TXT",
          name: "ent.example.com",
          content: "v=spf1 -all",
          comment: "mail",
        },
        {
          id: "d0000000000000000000000000000005",
          type: "MX",
          name: "ent.example.com",
          content: "mx.ent.example.com",
          priority: 10,
        },
      ],
      certificate_packs: [
        {
          id: "c0000000000000000000000000000001",
          type: "universal",
          hosts: ["ent.example.com", "*.ent.example.com"],
          primary_certificate: "c1000000000000000000000000000001",
          status: "active",
          certificates: [certificate("c1000000000000000000000000000001", "ent.example.com")],
          created_on: "2024-01-01T00:00:00.000000Z",
          validity_days: 90,
          validation_method: "txt",
          certificate_authority: "lets_encrypt",
        },
        {
          id: "c0000000000000000000000000000002",
          type: "advanced",
          hosts: ["shop.ent.example.com"],
          status: "pending_validation",
          certificates: [],
          validity_days: 90,
          validation_method: "http",
          certificate_authority: "google",
        },
      ],
    },
    { id: PRO_ZONE, name: "pro.example.net", account: ACCOUNT_A, plan: "pro" },
    {
      id: BIZ_ZONE,
      name: "biz.example.net",
      account: ACCOUNT_A,
      plan: "business",
      uri_overrides: [{ id: "0e000000000000000000000000000001", urls: ["biz.example.net/admin*"] }],
    },
    ...Array.from({ length: BULK_ZONES }, (_, i) => ({
      name: `site-${String(i).padStart(2, "0")}.example.org`,
      account: ACCOUNT_B,
      plan: "free",
      status: i % 5 === 0 ? "pending" : "active",
    })),
  ],
  invites: [
    {
      id: PENDING_INVITE,
      organization_id: ACCOUNT_A,
      organization_name: "Main account",
      invited_by: "owner@example.com",
    },
    { id: EXPIRED_INVITE, organization_id: ACCOUNT_B, organization_name: "Bulk account", status: "expired" },
  ],
};

/** The credentials the test servers accept. */
export const CREDENTIALS = { tokens: [TOKEN], keys: [{ email: EMAIL, key: KEY }] };

/** A response the SDK received. */
interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly status: number;
  readonly body: unknown;
}

const ENVELOPE_KEYS = new Set(["success", "errors", "messages", "result", "result_info"]);

/** Records every response an SDK client receives. */
export class ResponseLog {
  readonly responses: Recorded[] = [];

  /** A fetch for the SDK that records what comes back. */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const response = await fetch(request);
    const text = await response.clone().text();
    this.responses.push({
      method: request.method,
      path: new URL(request.url).pathname,
      query: new URL(request.url).search,
      status: response.status,
      body: JSON.parse(text) as unknown,
    });
    return response;
  };

  /** Requests made to paths matching `pattern`. */
  count(method: string, pattern: RegExp): number {
    return this.responses.filter((r) => r.method === method && pattern.test(r.path)).length;
  }

  /**
   * Checks every recorded body, successes and failures, against the published schema of its
   * operation and status (schema.ts), and that the models' internal fields (`steps`, the
   * migration's `zone`) never reach the wire: the envelope has only its own keys.
   */
  expectAllConform(): void {
    expect(this.responses.length).toBeGreaterThan(0);
    const problems = this.responses.flatMap((r) => responseProblems(r.method, r.path, r.status, r.body, r.query));
    expect(problems).toEqual([]);
    for (const r of this.responses) {
      const keys = Object.keys(r.body as object).filter((k) => !ENVELOPE_KEYS.has(k));
      expect(keys, `${r.method} ${r.path}`).toEqual([]);
      expect(JSON.stringify(r.body), `${r.method} ${r.path}`).not.toMatch(/"steps":/);
    }
  }
}

/** An SDK client for `baseURL` with the given credentials, recording into `log`. */
export function sdk(
  baseURL: string,
  log: ResponseLog,
  auth: { apiToken: string } | { apiEmail: string; apiKey: string } = { apiToken: TOKEN },
): Cloudflare {
  return new Cloudflare({
    // Explicit nulls keep CLOUDFLARE_* environment variables from adding credentials.
    apiToken: null,
    apiEmail: null,
    apiKey: null,
    userServiceKey: null,
    ...auth,
    baseURL,
    fetch: log.fetch,
    maxRetries: 0,
  });
}

/** What {@link useSdkServer} hands each test: the server, a fresh SDK client and its response log. */
export interface SdkServerEnv {
  server: ApiServer;
  cf: Cloudflare;
  log: ResponseLog;
}

/**
 * Starts one API server for the test file (the fixture, both kinds of credentials); after every
 * test checks that each of its responses, successes and failures, conforms to the published schema,
 * then hands `use` a fresh client and log. Returns that renewal, for a test that wants it midway.
 */
export function useSdkServer(use: (env: SdkServerEnv) => void): () => void {
  let server: ApiServer | undefined;
  let log: ResponseLog | undefined;
  const fresh = () => {
    if (server === undefined) return;
    log = new ResponseLog();
    use({ server, log, cf: sdk(server.url, log) });
  };
  beforeAll(async () => {
    server = await startTestApiServer({ credentials: CREDENTIALS, fixture: FIXTURE });
    fresh();
  });
  afterAll(async () => {
    await server?.close();
  });
  afterEach(() => {
    try {
      log?.expectAllConform();
    } finally {
      fresh();
    }
  });
  return fresh;
}

/** Every item of an SDK auto-paginating listing. */
export async function all<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}
