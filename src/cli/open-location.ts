/**
 * Where the inspector reads an object from. Every command reaches the object through one
 * {@link InspectTarget}, whatever adapter is behind it:
 * - a directory (the file adapter);
 * - a bucket prefix `s3://<bucket>/<prefix>` (the S3 adapter; endpoint and credentials from the
 *   environment: `ACTORSTORE_S3_ENDPOINT`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, optional
 *   `AWS_SESSION_TOKEN` and `AWS_REGION`);
 * - anything else through an opener the caller supplies (`--adapter <module>` on the command line,
 *   or `runInspect(argv, io, { open })`): a function from the location string to a
 *   {@link PersistenceAdapter}.
 */
import { readdir, stat } from "node:fs/promises";
import { isObjectFile } from "../durability/file-layout";
import { openFilePersistence } from "../durability/file-persistence";
import { objectDirectoriesBelow } from "../durability/object-directories";
import type { PersistenceAdapter } from "../durability/persistence";

/**
 * Opens the persistence `location` names. `"read"` must not take the object from its live holder
 * (no lock, no claim: the inspector only reads); `"write"` (restore) opens it like any new holder.
 *
 * @example
 * ```ts
 * const open: LocationOpener = (location) => myAdapterFor(location);
 * ```
 */
export type LocationOpener = (
  location: string,
  mode: "read" | "write",
) => PersistenceAdapter | Promise<PersistenceAdapter>;

/** The object an inspector command works on. */
export interface InspectTarget {
  /** The location as given (for messages). */
  readonly name: string;
  /** Opens its persistence for reading or writing (see {@link LocationOpener}). */
  open(mode: "read" | "write"): Promise<PersistenceAdapter>;
  /** Only a directory can be repaired in place. */
  readonly directory: boolean;
}

/** Whether `location` names a bucket prefix rather than a directory. */
export function isBucketLocation(location: string): boolean {
  return location.startsWith("s3://");
}

/**
 * Resolves `location` into a target: through `custom` when given, else a bucket prefix or a
 * directory (which must exist and hold an object's files).
 */
export async function resolveTarget(location: string, custom?: LocationOpener): Promise<InspectTarget> {
  if (custom !== undefined) return { name: location, directory: false, open: async (mode) => custom(location, mode) };
  if (isBucketLocation(location))
    return { name: location, directory: false, open: (mode) => openBucket(location, mode) };
  await requireDirectory(location);
  return {
    name: location,
    directory: true,
    open: (mode) => openFilePersistence(location, mode === "read" ? { readOnly: true } : {}),
  };
}

/** Opens the persistence at `location` (a directory or a bucket prefix). */
export async function openLocation(location: string, mode: "read" | "write"): Promise<PersistenceAdapter> {
  return (await resolveTarget(location)).open(mode);
}

/**
 * Loads an opener from a module (`--adapter <module>`): its default export, or an export named
 * `openPersistence`, must be a {@link LocationOpener}.
 */
export async function loadOpener(module: string): Promise<LocationOpener> {
  const [{ pathToFileURL }, { resolve }] = await Promise.all([import("node:url"), import("node:path")]);
  const specifier = module.startsWith(".") || module.startsWith("/") ? pathToFileURL(resolve(module)).href : module;
  const loaded = (await import(specifier)) as { default?: unknown; openPersistence?: unknown };
  const opener = typeof loaded.default === "function" ? loaded.default : loaded.openPersistence;
  if (typeof opener !== "function")
    throw new Error(
      `${module} does not export an opener: export default (or export openPersistence) a function (location, mode) that returns a persistence adapter.`,
    );
  return opener as LocationOpener;
}

async function requireDirectory(directory: string): Promise<void> {
  const info = await stat(directory).catch((e: NodeJS.ErrnoException) => e.code ?? "an error");
  if (typeof info === "string")
    throw new Error(
      info === "ENOENT"
        ? `${directory} does not exist: pass the directory given to ObjectStorage.open({ directory }).`
        : `${directory} cannot be read (${info}): check its permissions, or pass the directory given to ObjectStorage.open({ directory }).`,
    );
  if (!info.isDirectory())
    throw new Error(`${directory} is not a directory: pass the directory given to ObjectStorage.open({ directory }).`);
  const names = await readdir(directory);
  if (names.some(isObjectFile)) return;
  const below = await objectDirectoriesBelow(directory, 2, 3);
  throw new Error(
    below.length > 0
      ? `${directory} is not an actorstore directory (it holds no log segments, snapshots or metadata), but the directories of objects are below it: ${below.join(", ")}${below.length === 3 ? " …" : ""}. Pass one of those.`
      : `${directory} is not an actorstore directory (it holds no log segments, snapshots or metadata): pass the directory given to ObjectStorage.open({ directory }).`,
  );
}

async function openBucket(location: string, mode: "read" | "write"): Promise<PersistenceAdapter> {
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
  const [{ s3Persistence }, { resolveS3Options }, { S3Client }, { S3Layout }] = await Promise.all([
    import("../s3/index"),
    import("../s3/options"),
    import("../s3/s3-client"),
    import("../s3/s3-layout"),
  ]);
  const options = {
    endpoint,
    bucket,
    prefix,
    region: env.AWS_REGION || "us-east-1",
    credentials: env.AWS_SESSION_TOKEN
      ? { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN }
      : { accessKeyId, secretAccessKey },
    readOnly: mode === "read",
  };
  // As with a directory: a prefix that holds no object (a typo, or "room-1" for "room-1/") is
  // refused, never read as an empty object or, for a restore, claimed and written to.
  const first = new S3Layout(prefix).claim(1);
  if (!(await new S3Client(resolveS3Options(options)).exists(first)))
    throw new Error(
      `${location} holds no actorstore object (there is no ${first}): pass the prefix given to s3Persistence({ prefix }), with its trailing "/" if it has one.`,
    );
  return s3Persistence(options);
}
