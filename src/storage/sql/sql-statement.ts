/**
 * `sql.Statement`: the platform exposes the prepared-statement class on every `SqlStorage`, but
 * `sql.prepare()` (which creates them) exists only behind the `experimental` compatibility flag.
 * The class is here so that `instanceof` checks and types line up; it cannot be constructed.
 */

/**
 * The platform's prepared-statement class. Not constructible, and never produced without the
 * experimental `prepare()` API (which actorstore does not offer).
 *
 * @example
 * ```ts
 * storage.sql.Statement; // the class, for instanceof checks
 * ```
 */
export class SqlStorageStatement {
  /** Always throws, as on the platform. */
  constructor() {
    throw new TypeError("Illegal constructor");
  }
}
