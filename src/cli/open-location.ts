/**
 * Where the inspector reads an object from: a directory (the file adapter), or a bucket prefix
 * `s3://<bucket>/<prefix>` (the S3 adapter; endpoint and credentials from the environment:
 * `ACTORSTORE_S3_ENDPOINT`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, optional
 * `AWS_SESSION_TOKEN` and `AWS_REGION`).
 */
import { openFilePersistence } from "../durability/file-persistence";
import type { PersistenceAdapter } from "../durability/persistence";

/** Whether `location` names a bucket prefix rather than a directory. */
export function isBucketLocation(location: string): boolean {
  return location.startsWith("s3://");
}

/**
 * Opens the persistence at `location`. `"read"` never claims an S3 object (no holder is fenced);
 * `"write"` (restore) claims it like any new holder.
 */
export async function openLocation(location: string, mode: "read" | "write"): Promise<PersistenceAdapter> {
  if (!isBucketLocation(location)) return openFilePersistence(location, mode === "read" ? { readOnly: true } : {});
  const rest = location.slice("s3://".length);
  const slash = rest.indexOf("/");
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  const prefix = slash < 0 ? "" : rest.slice(slash + 1);
  const env = process.env;
  const endpoint = env.ACTORSTORE_S3_ENDPOINT;
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!endpoint || !accessKeyId || !secretAccessKey)
    throw new Error(
      `To read ${location}, set ACTORSTORE_S3_ENDPOINT (for example http://127.0.0.1:27480), AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.`,
    );
  const { s3Persistence } = await import("../s3/index");
  return s3Persistence({
    endpoint,
    bucket,
    prefix,
    region: env.AWS_REGION || "us-east-1",
    credentials: env.AWS_SESSION_TOKEN
      ? { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN }
      : { accessKeyId, secretAccessKey },
    readOnly: mode === "read",
  });
}
