/**
 * Turns a file-system error met while opening a directory (a bare `EEXIST`, `ENOTDIR`, `EACCES`,
 * `EPERM`, `EROFS`) into an {@link ActorStoreError} that names the directory and what to do.
 */
import { ActorStoreError } from "../errors";

/** The errno codes that mean "this directory cannot hold the data", with what to do about each. */
const EXPLANATIONS: Readonly<Record<string, (dir: string, at: string) => string>> = {
  EEXIST: (dir, at) =>
    `The storage directory ${JSON.stringify(dir)} cannot be used: ${at} is a file, not a directory. Choose another directory, or move the file away.`,
  ENOTDIR: (dir, at) =>
    `The storage directory ${JSON.stringify(dir)} cannot be used: a part of its path (${at}) is a file, not a directory. Choose another directory, or move the file away.`,
  EACCES: (dir, at) =>
    `The storage directory ${JSON.stringify(dir)} is not writable by this process (permission denied at ${at}). Give the process write permission there, or choose another directory.`,
  EPERM: (dir, at) =>
    `The storage directory ${JSON.stringify(dir)} is not writable by this process (operation not permitted at ${at}). Give the process write permission there, or choose another directory.`,
  EROFS: (dir, at) =>
    `The storage directory ${JSON.stringify(dir)} is on a read-only file system (${at}). Choose a directory on a writable file system.`,
  EISDIR: (dir, at) =>
    `The storage directory ${JSON.stringify(dir)} cannot be used: ${at} should be a file but is a directory. Move it away, or choose another directory.`,
};

/**
 * Returns `error` explained when it is a file-system error that makes `directory` unusable (or,
 * with no directory given, the directory the error names); anything else is returned unchanged.
 */
export function explainDirectoryError(error: unknown, directory: string | undefined): unknown {
  if (typeof error !== "object" || error === null) return error;
  const { code, path, syscall } = error as { code?: unknown; path?: unknown; syscall?: unknown };
  if (typeof code !== "string" || typeof syscall !== "string") return error;
  const explain = EXPLANATIONS[code];
  if (explain === undefined) return error;
  // Only errors about the directory itself or a directory on its way: an EEXIST on a file inside
  // it (a lock taken meanwhile, say) is the adapter's business, not a misplaced directory.
  if (directory !== undefined && typeof path === "string" && !isSelfOrAncestor(path, directory)) return error;
  if (directory === undefined && syscall !== "mkdir") return error;
  const at = typeof path === "string" ? JSON.stringify(path) : "its path";
  const dir = directory ?? (typeof path === "string" ? path : "(unknown)");
  return new ActorStoreError("ERR_DIRECTORY", `${explain(dir, at)} (${code} on ${syscall})`, { cause: error });
}

/** Whether `path` is `directory` or one of its ancestors (compared after trimming trailing slashes). */
function isSelfOrAncestor(path: string, directory: string): boolean {
  const trim = (p: string) => (p.length > 1 ? p.replace(/[\\/]+$/, "") : p);
  const a = trim(path);
  const d = trim(directory);
  return d === a || d.startsWith(`${a}/`) || d.startsWith(`${a}\\`);
}
