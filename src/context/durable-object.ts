/**
 * The base class for object classes, shaped like the platform's `DurableObject` from
 * `cloudflare:workers`: it keeps `ctx` and `env` for subclasses. Extending it is optional: any
 * class with a `(ctx, env)` constructor runs in an {@link ObjectContext}.
 */
import type { AlarmInvocationInfo } from "../alarms/alarm-scheduler";
import type { ObjectState } from "./object-state";

/**
 * What every state object has, this library's and the platform's `DurableObjectState` alike: lets
 * a platform-typed constructor pass its `ctx` to `super()`.
 */
export interface PlatformStateLike {
  readonly storage: object;
  readonly id: { toString(): string };
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>;
  waitUntil(promise: Promise<unknown>): void;
  abort(reason?: string): void;
}

/**
 * Extend this to write an object the platform's way.
 *
 * @example
 * ```ts
 * class Counter extends DurableObject {
 *   async fetch(): Promise<Response> {
 *     const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + 1;
 *     await this.ctx.storage.put("n", n);
 *     return new Response(String(n));
 *   }
 * }
 * const counter = await ObjectContext.create(Counter);
 * ```
 */
export abstract class DurableObject<Env = unknown> {
  /**
   * The platform's type brand (`Rpc.DurableObjectBranded` in `@cloudflare/workers-types`), so that a
   * subclass is accepted where the platform's types ask for a Durable Object class, as in
   * `DurableObjectNamespace<Counter>`. A declaration only: no such property exists at run time, and
   * it is never a method (stubs and the test kit leave it out).
   */
  declare readonly __DURABLE_OBJECT_BRAND: never;
  /** The object's state: id, storage, blockConcurrencyWhile, waitUntil, abort. */
  protected readonly ctx: ObjectState;
  /** The environment passed to {@link ObjectContext.create}. */
  protected readonly env: Env;

  /**
   * `ctx` is the {@link ObjectState} the object context passes. The parameter is typed loosely so a
   * subclass written for the platform, `constructor(ctx: DurableObjectState, env: Env) { super(ctx, env); }`,
   * compiles unchanged; at run time it is always an `ObjectState`.
   */
  constructor(ctx: ObjectState | PlatformStateLike, env: Env) {
    this.ctx = ctx as ObjectState;
    this.env = env;
  }

  /** Handles an HTTP request (optional). */
  fetch?(request: Request): Response | Promise<Response>;
  /** Handles the alarm (optional; `setAlarm` requires it). */
  alarm?(info: AlarmInvocationInfo): void | Promise<void>;
}
