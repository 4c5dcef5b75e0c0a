/**
 * actorstore/server: a local v4 API that real clients (the `cloudflare` SDK, Terraform, scripts)
 * can talk to. A thin adapter over the pure route table of `actorstore/api`, with state in this
 * library's storage. See docs/api.md.
 *
 * @example
 * ```ts
 * import { startApiServer } from "actorstore/server";
 * const server = await startApiServer({ credentials: { tokens: ["local-token"] }, fixture: "./fixture.json" });
 * // new Cloudflare({ apiToken: "local-token", baseURL: server.url })
 * ```
 *
 * @packageDocumentation
 */
export type { ApiHandler } from "./handler";
export { createApiHandler } from "./handler";
export type { ApiServer } from "./http-server";
export { startApiServer } from "./http-server";
export type { ApiCredentials, ApiKeyCredential, CreateApiHandlerOptions, StartApiServerOptions } from "./options";
