/**
 * The base class of objects passed by reference across the boundary between a caller and an object,
 * shaped like the platform's `RpcTarget` from `cloudflare:workers`.
 */

/**
 * Extend this to pass an object by reference instead of by copy: an object's method that returns an
 * instance (or takes one as an argument) gives the other side a stub whose method calls run on the
 * instance, where it lives. Only the class's methods and getters are reachable through the stub (its
 * own fields are not), as on the platform.
 *
 * @example
 * ```ts
 * class Session extends RpcTarget {
 *   #count = 0;
 *   increment(): number { return ++this.#count; }
 * }
 * class Room extends DurableObject {
 *   open(): Session { return new Session(); }
 * }
 * const session = await host.env.ROOM.getByName("lobby").open();
 * await session.increment(); // 1, counted inside the object
 * ```
 */
export abstract class RpcTarget {
  /**
   * The platform's type brand (`Rpc.RpcTargetBranded` in `@cloudflare/workers-types`). A declaration
   * only: no such property exists at run time.
   */
  declare readonly __RPC_TARGET_BRAND: never;
}
