/**
 * The base class for object classes, shaped like the platform's `DurableObject` from
 * `cloudflare:workers`: it keeps `ctx` and `env` for subclasses. Extending it is optional: any
 * class with a `(ctx, env)` constructor runs in an {@link ObjectContext}.
 */
import type { AlarmInvocationInfo } from "../alarms/alarm-scheduler";
import type { ObjectState } from "./object-state";

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
  /** The object's state: id, storage, blockConcurrencyWhile, waitUntil, abort. */
  protected readonly ctx: ObjectState;
  /** The environment passed to {@link ObjectContext.create}. */
  protected readonly env: Env;

  constructor(ctx: ObjectState, env: Env) {
    this.ctx = ctx;
    this.env = env;
  }

  /** Handles an HTTP request (optional). */
  fetch?(request: Request): Response | Promise<Response>;
  /** Handles the alarm (optional; `setAlarm` requires it). */
  alarm?(info: AlarmInvocationInfo): void | Promise<void>;
}
