/**
 * The test kit's API server in the browser build. tsup.config.ts builds the `browser` export
 * condition with this module in place of api-server.ts: the API server listens with node:http,
 * which the browser build has not, so `startTestApiServer()` rejects at once saying so, and the
 * server (with the HTTP models it serves) stays out of the browser bundle.
 *
 * @packageDocumentation
 */
import { ActorStoreError } from "../errors";
import type { StartTestApiServerOptions, startTestApiServer as startOnNode } from "./api-server";

export type { StartTestApiServerOptions } from "./api-server";

/** What the Node build's `startTestApiServer` resolves with. */
type ApiServer = Awaited<ReturnType<typeof startOnNode>>;

/** The token `startTestApiServer` accepts when no credentials are given (as in the Node build). */
export const TEST_API_TOKEN = "actorstore-test-token";

/**
 * Rejects with `ERR_INVALID_OPTION`: the API server needs Node.js. The browser build is what a
 * runtime resolves under the `browser` export condition (a page, `node --conditions=browser`,
 * Jest's jsdom environment); start the server from a test that runs under Node without it.
 *
 * @example
 * ```ts
 * // In a Node test (no browser condition):
 * const server = await startTestApiServer();
 * ```
 */
export async function startTestApiServer(_options: StartTestApiServerOptions = {}): Promise<ApiServer> {
  throw new ActorStoreError(
    "ERR_INVALID_OPTION",
    "startTestApiServer() needs Node.js (node:http), which actorstore's browser build does not have. That build is what the browser export condition resolves (a page, node --conditions=browser, Jest's jsdom environment): start the server from a test that runs under Node without that condition, and give the page or the SDK its url.",
  );
}
