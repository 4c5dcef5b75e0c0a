/**
 * `actorstore/s3`: persistence on S3-compatible object storage, in its own entry so that the core
 * keeps sql.js as its only dependency. See docs/durability.md ("S3").
 *
 * @example
 * ```ts
 * import { s3Persistence } from "actorstore/s3";
 * const persistence = s3Persistence({ endpoint, bucket: "objects", prefix: "room-1/", credentials });
 * ```
 *
 * @packageDocumentation
 */
export type {
  S3Credentials,
  S3CredentialsProvider,
  S3Persistence,
  S3PersistenceOptions,
  S3PersistenceStats,
} from "./options";
export { s3Persistence } from "./s3-persistence";
