/**
 * The test kit's API server: the v4 API on loopback and a free port, for one test file.
 */
import type { ApiServer, StartApiServerOptions } from "../server/index";

/** Options of {@link startTestApiServer}: the server's, with credentials defaulting to one token. */
export type StartTestApiServerOptions = Omit<StartApiServerOptions, "credentials" | "port" | "hostname"> & {
  readonly credentials?: StartApiServerOptions["credentials"];
};

/** The token {@link startTestApiServer} accepts when no credentials are given. */
export const TEST_API_TOKEN = "actorstore-test-token";

/**
 * Starts the v4 API on `127.0.0.1` and a free port, in memory unless a `directory` is given. Close
 * it in `afterAll`.
 *
 * @example
 * ```ts
 * import { startTestApiServer, TEST_API_TOKEN } from "actorstore/testkit";
 * const server = await startTestApiServer({ fixture: { accounts: [{ name: "A" }], zones: [] } });
 * const cf = new Cloudflare({ apiToken: TEST_API_TOKEN, baseURL: server.url });
 * afterAll(() => server.close());
 * ```
 */
export async function startTestApiServer(options: StartTestApiServerOptions = {}): Promise<ApiServer> {
  // Loaded on use, so the rest of the test kit never pulls node:http into a bundle.
  const { startApiServer } = await import("../server/index");
  return startApiServer({ credentials: { tokens: [TEST_API_TOKEN] }, ...options, port: 0, hostname: "127.0.0.1" });
}
