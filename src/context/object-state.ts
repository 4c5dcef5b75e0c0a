/**
 * `ctx`: what the object's own code sees, shaped like the platform's `DurableObjectState`
 * (`id`, `storage`, `blockConcurrencyWhile`, `waitUntil`, `abort`), plus the two ways to send an
 * outgoing message through the output gate (`sendOutgoing`, `fetch`).
 */
import { ActorStoreError } from "../errors";
import { argumentTypeError } from "../storage/argument-types";
import type { ObjectStorage } from "../storage/object-storage";
import { likePlatformPrototype } from "../util/platform-prototype";
import type { ObjectId } from "./object-id";

/** The parts of a session the state needs; implemented by the object context. */
export interface StateHost {
  blockConcurrencyWhile<T>(fn: () => Promise<T>): Promise<T>;
  waitUntil(promise: Promise<unknown>): void;
  /** `reason` as given: converted to a string (as `new Error(reason)` converts it) unless undefined. */
  abort(reason?: unknown): void;
  sendOutgoing<T>(message: () => T | Promise<T>): Promise<T>;
}

/**
 * The state object passed to an object's constructor as `ctx` (`state` in older code).
 *
 * @example
 * ```ts
 * class Counter {
 *   constructor(private ctx: ObjectState) {}
 *   async fetch() {
 *     const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + 1;
 *     await this.ctx.storage.put("n", n);
 *     return new Response(String(n));
 *   }
 * }
 * ```
 */
export class ObjectState {
  static {
    // ctx.exports and ctx.facets throw when read (not supported), so a loop over ctx skips them.
    likePlatformPrototype(this.prototype, "DurableObjectState", ["exports", "facets"]);
  }

  /** The object's id. */
  readonly id: ObjectId;
  /** The object's private storage. */
  readonly storage: ObjectStorage;
  /** Properties passed by the host (the platform's `ctx.props`). */
  readonly props: unknown;
  readonly #host: StateHost;

  /** @internal */
  constructor(id: ObjectId, storage: ObjectStorage, host: StateHost, props: unknown) {
    this.id = id;
    this.storage = storage;
    this.#host = host;
    this.props = props;
  }

  /**
   * Runs `callback` while no other event is delivered; returns its value. If it throws, or runs
   * longer than the timeout (30 s by default, on the injected clock), the object is reset. A
   * `callback` that is not a function is refused with the platform's TypeError (a rejection; the
   * object is not reset).
   */
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T> {
    if (typeof callback !== "function") {
      return Promise.reject(argumentTypeError("blockConcurrencyWhile", "DurableObjectState", 1, "function"));
    }
    return this.#host.blockConcurrencyWhile(callback);
  }

  /**
   * Keeps the object alive until `promise` settles (tracked; the test kit can await it). As on the
   * platform, any value is taken (a non-promise as one resolved with it), but calling it with no
   * argument throws the platform's TypeError.
   */
  waitUntil(promise: Promise<unknown>): void {
    // biome-ignore lint/complexity/noArguments: the platform refuses a missing promise, not an explicit undefined
    if (arguments.length === 0) throw argumentTypeError("waitUntil", "DurableObjectState", 1, "Promise");
    this.#host.waitUntil(promise);
  }

  /**
   * Resets the object: uncommitted writes are discarded, held outgoing messages dropped, and the
   * next event starts a fresh instance over the committed state. Callers see `reason` converted to
   * a string as the platform converts it (`abort(null)` is `"null"`); without one (or with
   * `undefined`), `Application called abort() to reset Durable Object.`.
   */
  abort(reason?: string, _options?: { retryAlarm?: boolean }): void {
    this.#host.abort(reason);
  }

  // ---------------------------------------------------------------- platform members not supported

  /**
   * The platform's container binding: `undefined`, as on the platform for an object that has no
   * container configured (actorstore runs none).
   */
  readonly container: undefined = undefined;

  /** Not supported by actorstore (the platform's loopback exports); reading it throws. */
  get exports(): never {
    throw notSupported("ctx.exports (the loopback bindings of the worker's exports)");
  }

  /** Not supported by actorstore (the platform's facets); reading it throws. */
  get facets(): never {
    throw notSupported("ctx.facets (child objects run as facets)");
  }

  /** WebSocket hibernation is not supported by actorstore: throws. */
  acceptWebSocket(_ws: unknown, _tags?: string[]): never {
    throw notSupported("ctx.acceptWebSocket() (WebSocket hibernation)");
  }

  /** No WebSocket can be accepted here (see {@link ObjectState.acceptWebSocket}), so always `[]`. */
  getWebSockets(_tag?: string): never[] {
    return [];
  }

  /** WebSocket hibernation is not supported by actorstore: throws. */
  setWebSocketAutoResponse(_maybeReqResp?: unknown): never {
    throw notSupported("ctx.setWebSocketAutoResponse() (WebSocket hibernation)");
  }

  /** No auto-response can be set here, so always `null`. */
  getWebSocketAutoResponse(): null {
    return null;
  }

  /** WebSocket hibernation is not supported by actorstore: throws. */
  getWebSocketAutoResponseTimestamp(_ws: unknown): never {
    throw notSupported("ctx.getWebSocketAutoResponseTimestamp() (WebSocket hibernation)");
  }

  /** WebSocket hibernation is not supported by actorstore: throws. */
  setHibernatableWebSocketEventTimeout(_timeoutMs?: number): never {
    throw notSupported("ctx.setHibernatableWebSocketEventTimeout() (WebSocket hibernation)");
  }

  /** No timeout can be set here, so always `null`. */
  getHibernatableWebSocketEventTimeout(): null {
    return null;
  }

  /** WebSocket hibernation is not supported by actorstore: throws. */
  getTags(_ws: unknown): never {
    throw notSupported("ctx.getTags() (WebSocket hibernation)");
  }

  // ---------------------------------------------------------------- actorstore's own

  /**
   * Sends an outgoing message through the output gate: `message` runs only once every write issued
   * before this call is confirmed; if one fails, it never runs and the promise rejects.
   *
   * @example
   * ```ts
   * await this.ctx.storage.put("order", order);
   * await this.ctx.sendOutgoing(() => webhook.notify(order)); // never announces a lost write
   * ```
   */
  sendOutgoing<T>(message: () => T | Promise<T>): Promise<T> {
    return this.#host.sendOutgoing(message);
  }

  /** `fetch()` through the output gate (a subrequest waits for earlier writes, as on the platform). */
  fetch(input: Request | string | URL, init?: RequestInit): Promise<Response> {
    return this.#host.sendOutgoing(() => globalThis.fetch(input, init));
  }
}

/** The error of a platform member this library does not offer. */
function notSupported(what: string): ActorStoreError {
  return new ActorStoreError(
    "ERR_NOT_IMPLEMENTED",
    `${what} is not supported by actorstore. Run this part of the object on the platform (or workerd/Miniflare); see docs/semantics.md for what actorstore covers.`,
  );
}
