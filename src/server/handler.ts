/**
 * `createApiHandler`: the v4 API over the pure route table of `actorstore/api`, as a fetch-style
 * `(Request) => Promise<Response>`. This file only adds what the models cannot do purely: reading
 * the request, checking the credentials against the configured ones, loading and saving records,
 * and serializing requests so each operation sees the previous one's state.
 */
import { parseJsonBody, validateAuthHeaders } from "../api/auth";
import type { ApiResponse } from "../api/envelope";
import { couldNotRoute, ERROR_CODES, fail, noRoute } from "../api/envelope";
import { isHexId, randomHexId } from "../api/ids";
import { seedFromFixture } from "../api/service/fixture";
import type { ApiRequest } from "../api/service/operation";
import type { ApiSeed, UserRecord, ZoneRecord } from "../api/service/records";
import { matchRoute, type RouteMatch } from "../api/service/routes";
import { systemClock } from "../util/clock";
import { type ApiCredentials, type CreateApiHandlerOptions, checkHandlerOptions } from "./options";
import { RecordStore } from "./record-store";

/**
 * A request as the handler reads it: a fetch `Request`'s parts, its body read only when the route
 * takes one and the credentials are good. The API server builds it straight from node:http, so a
 * body is decoded once as it arrives instead of being copied into a `Request` first. @internal
 */
export interface IncomingCall {
  readonly method: string;
  readonly url: URL;
  readonly headers: Headers;
  /** The body as text (empty when there is none); called at most once. */
  readonly text: () => Promise<string>;
}

/** The key of the handler's {@link IncomingCall} entry point, for the API server only. @internal */
export const SERVE_CALL: unique symbol = Symbol("actorstore.api.serveCall");

/** A fetch-style handler of the v4 API, with its lifecycle. */
export interface ApiHandler {
  (request: Request): Promise<Response>;
  /** @internal The API server's entry point: answers an {@link IncomingCall}. */
  readonly [SERVE_CALL]: (call: IncomingCall) => Promise<Response>;
  /** Resolves once the state is loaded (or seeded from the fixture); rejects with a bad fixture. */
  ready(): Promise<void>;
  /** Waits for requests in flight, then closes the storage. */
  close(): Promise<void>;
}

/** The index record: which accounts and zones exist. */
interface IndexRecord {
  readonly version: 1;
  readonly accounts: readonly { readonly id: string; readonly name: string }[];
  readonly zones: readonly string[];
}

interface LoadedState {
  index: IndexRecord;
  zones: Map<string, ZoneRecord>;
  user: UserRecord;
}

const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Tells the official SDK not to send the request again. It retries every 409 by default (it reads one
 * as a lock timeout), but a 409 here is a refusal by the zone's state (a filter in use, a migration
 * already done or not allowed), which a retry only repeats after a back-off of a second or more.
 */
const NOT_RETRYABLE = { "x-should-retry": "false" } as const;

/** An API response as a fetch `Response`: its envelope as JSON, with `headers` added. @internal */
export function respond(response: ApiResponse<unknown>, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(response.body), {
    status: response.status,
    headers: { "content-type": "application/json", ...(response.status === 409 ? NOT_RETRYABLE : {}), ...headers },
  });
}

function credentialCheck(credentials: ApiCredentials) {
  const tokens = new Set(credentials.tokens ?? []);
  const keys = new Set((credentials.keys ?? []).map((k) => `${k.email.toLowerCase()}\n${k.key}`));
  return (headers: Headers): ApiResponse<never> | undefined => {
    const auth = validateAuthHeaders(headers);
    if (!auth.ok) return auth.response;
    const c = auth.value;
    if (c.scheme === "api_token") {
      return tokens.has(c.token)
        ? undefined
        : fail(403, { code: ERROR_CODES.invalidAccessToken, message: "Invalid access token" });
    }
    return keys.has(`${c.email.toLowerCase()}\n${c.key}`)
      ? undefined
      : fail(403, { code: ERROR_CODES.unknownApiKey, message: "Unknown X-Auth-Key or X-Auth-Email" });
  };
}

async function readFixture(fixture: unknown): Promise<unknown> {
  if (typeof fixture !== "string") return fixture;
  const { readFile } = await import("node:fs/promises");
  const text = await readFile(fixture, "utf8").catch((e: NodeJS.ErrnoException) => {
    throw new TypeError(
      `createApiHandler: the fixture file ${fixture} cannot be read (${e.code ?? e.message}): give the path of a JSON fixture (docs/api.md), or leave the fixture out to start with no zones.`,
      { cause: e },
    );
  });
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new TypeError(`createApiHandler: fixture ${fixture} is not valid JSON.`);
  }
}

const zoneName = (id: string) => `zone-${id}`;

/**
 * Creates a handler of the v4 API: every endpoint of `ROUTES` (zones, DNS records, certificate
 * packs, invitations, filters, firewall rules, rulesets, the managed-rules migration), under
 * `/client/v4` and bare, with both auth schemes, and state kept in this library's storage.
 *
 * @example
 * ```ts
 * import { createApiHandler } from "actorstore/server";
 * const handler = createApiHandler({ credentials: { tokens: ["local-token"] }, fixture: "./fixture.json" });
 * const response = await handler(new Request("http://local/client/v4/zones", {
 *   headers: { authorization: "Bearer local-token" },
 * }));
 * ```
 */
export function createApiHandler(options: CreateApiHandlerOptions): ApiHandler {
  checkHandlerOptions(options);
  const clock = options.clock ?? systemClock;
  const generate = options.idGenerator ?? randomHexId;
  // A malformed id from a custom generator would surface as a routing error in the fixture's
  // problems, or as a storage failure: name the generator instead (without quoting what it returned).
  const newId = (): string => {
    const id = generate();
    if (!isHexId(id)) {
      throw new TypeError(
        "createApiHandler: idGenerator must return 32 lower-case hex characters; it returned something else.",
      );
    }
    return id;
  };
  const store = new RecordStore({
    ...(options.directory === undefined ? {} : { directory: options.directory }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  const authenticate = credentialCheck(options.credentials);
  let state: Promise<LoadedState> | undefined;
  // Requests run one at a time: each operation reads the record the previous one saved.
  let queue: Promise<unknown> = Promise.resolve();

  async function seed(seedValue: ApiSeed): Promise<LoadedState> {
    for (const zone of seedValue.zones) await store.save(zoneName(zone.zone.id), zone);
    for (const account of seedValue.accounts) await store.save(`account-${account.id}`, account);
    await store.save("user", seedValue.user);
    const index: IndexRecord = {
      version: 1,
      accounts: seedValue.accounts,
      zones: seedValue.zones.map((z) => z.zone.id),
    };
    // The index is written last: a seed interrupted halfway is redone from the start next time.
    await store.save("index", index);
    return { index, zones: new Map(seedValue.zones.map((z) => [z.zone.id, z])), user: seedValue.user };
  }

  async function load(): Promise<LoadedState> {
    const index = (await store.load("index")) as IndexRecord | undefined;
    if (index === undefined) {
      const fixture = await readFixture(options.fixture ?? { accounts: [], zones: [] });
      const seeded = seedFromFixture(fixture, { nowMs: clock.now(), newId });
      if (!seeded.ok) {
        const problems = seeded.errors.map((e) => `${e.path === "" ? "(root)" : e.path}: ${e.message}`).join("; ");
        throw new TypeError(`createApiHandler: the fixture is not valid: ${problems}`);
      }
      return seed(seeded.value);
    }
    const zones = new Map<string, ZoneRecord>();
    for (const id of index.zones) {
      const zone = (await store.load(zoneName(id))) as ZoneRecord | undefined;
      if (zone !== undefined) zones.set(id, zone);
    }
    const user = ((await store.load("user")) as UserRecord | undefined) ?? { invites: [] };
    return { index, zones, user };
  }

  function ready(): Promise<LoadedState> {
    state ??= load();
    return state;
  }

  /**
   * What can be answered without the body or the state: the credentials and the route. Checked
   * before the body is read, so a refused request never has its body held.
   */
  function precheck(call: IncomingCall): { response: Response } | { match: Extract<RouteMatch, { ok: true }> } {
    const refused = authenticate(call.headers);
    if (refused !== undefined) return { response: respond(refused) };
    const match = matchRoute(call.method, call.url.pathname);
    if (!match.ok) {
      return { response: respond(match.response, match.allow === undefined ? {} : { allow: match.allow.join(", ") }) };
    }
    return { match };
  }

  /** The parsed JSON body (`undefined` when there is none), or the refusal of a malformed one. */
  async function readBody(call: IncomingCall): Promise<{ body: unknown } | { response: Response }> {
    if (!METHODS_WITH_BODY.has(call.method.toUpperCase())) return { body: undefined };
    const text = await call.text();
    if (text.length === 0) return { body: undefined };
    const parsed = parseJsonBody(call.headers, text);
    return parsed.ok ? { body: parsed.value } : { response: respond(parsed.response) };
  }

  async function serve(call: IncomingCall, match: Extract<RouteMatch, { ok: true }>, body: unknown): Promise<Response> {
    const loaded = await ready();
    const apiRequest: ApiRequest = {
      method: call.method.toUpperCase(),
      path: match.path,
      params: match.params,
      query: call.url.searchParams,
      body,
      nowMs: clock.now(),
      newId,
    };
    const route = match.route;
    if (route.scope === "zones") {
      return respond(
        route.run(
          [...loaded.zones.values()].map((z) => z.zone),
          apiRequest,
        ),
      );
    }
    if (route.scope === "user") {
      const outcome = route.run(loaded.user, apiRequest);
      if (outcome.state !== loaded.user) {
        await store.save("user", outcome.state);
        loaded.user = outcome.state;
      }
      return respond(outcome.response);
    }
    const zoneId = match.params.zone_id ?? "";
    const record = loaded.zones.get(zoneId);
    if (record === undefined) return respond(fail(404, couldNotRoute(match.path), noRoute()));
    const outcome = route.run(record, apiRequest);
    if (outcome.state !== record) {
      // Saved before the cache moves on: a failed write leaves both at the last confirmed state.
      await store.save(zoneName(zoneId), outcome.state);
      loaded.zones.set(zoneId, outcome.state);
    }
    return respond(outcome.response);
  }

  /** Runs `serve` after the requests before it, turning a failure into the envelope's 500. */
  function enqueue(run: () => Promise<Response>): Promise<Response> {
    const next = queue.then(async () => {
      try {
        return await run();
      } catch (e) {
        if (e instanceof TypeError && e.message.startsWith("createApiHandler:")) {
          // A misconfigured handler (its idGenerator) fails every retry the same way.
          return respond(fail(500, { code: ERROR_CODES.internalError, message: e.message }), NOT_RETRYABLE);
        }
        return respond(
          fail(500, {
            code: ERROR_CODES.internalError,
            message: "The request could not be completed: the state could not be read or saved. Nothing was changed.",
          }),
        );
      }
    });
    queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Answers one call. The credentials and the route are checked first and the body is read only
   * then, outside the queue (so a slow upload delays no other request); only the operation and
   * its save run one at a time. A failure to read the body rejects (the server answers it).
   */
  async function dispatch(call: IncomingCall): Promise<Response> {
    const checked = precheck(call);
    let response: Response;
    if ("response" in checked) response = checked.response;
    else {
      const read = await readBody(call);
      response = "response" in read ? read.response : await enqueue(() => serve(call, checked.match, read.body));
    }
    // HEAD is answered as GET is, without the body (RFC 9110 9.3.2); its length is still told.
    if (call.method.toUpperCase() !== "HEAD") return response;
    const length = (await response.arrayBuffer()).byteLength;
    const headers = new Headers(response.headers);
    headers.set("content-length", String(length));
    return new Response(null, { status: response.status, headers });
  }

  const handler = (request: Request): Promise<Response> =>
    dispatch({
      method: request.method,
      url: new URL(request.url),
      headers: request.headers,
      text: () => request.text(),
    });
  return Object.assign(handler, {
    [SERVE_CALL]: dispatch,
    ready: async () => {
      await ready();
    },
    close: async () => {
      await queue;
      await store.close();
    },
  });
}
