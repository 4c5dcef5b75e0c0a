/**
 * Recognizing actorstore directories on disk without opening them: an object's directory (the file
 * adapter's: it holds log segments, snapshots, the meta file or a lock) and the root of a host's
 * objects (`directoryPerObject(root)`: `<root>/<namespace>/<id>/`). The inspector uses it to say
 * what a wrong path is and where the objects are; the API server uses it to refuse a state
 * directory that would put its own objects among another's files. Node only.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { isObjectFile } from "./file-layout";

/** Whether `directory` holds an object's files; `false` when it does not exist or cannot be read. */
export async function holdsObjectFiles(directory: string): Promise<boolean> {
  const names = await readdir(directory).catch(() => []);
  return names.some(isObjectFile);
}

/**
 * Up to `limit` object directories from `minDepth` to `depth` levels below `directory`, in name
 * order (an object directory is not searched further). With `minDepth` 1 and `depth` 2, what a user
 * meant who passed the root of a host's `directoryPerObject` (`<root>/<namespace>/<id>/`); with
 * `minDepth` 2, only objects laid out as a host lays them out.
 */
export async function objectDirectoriesBelow(
  directory: string,
  depth: number,
  limit: number,
  minDepth = 1,
): Promise<string[]> {
  const found: string[] = [];
  const visit = async (dir: string, level: number): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (found.length >= limit) return;
      const child = join(dir, entry.name);
      if (await holdsObjectFiles(child)) {
        if (level >= minDepth) found.push(child);
      } else if (level < depth) await visit(child, level + 1);
    }
  };
  await visit(directory, 1);
  return found;
}

/**
 * Whether `directory` is recognizably an actorstore object's directory (`"object"`) or the root of
 * a host's objects (`"host root"`: object directories two levels below it, as `directoryPerObject`
 * lays them out), else `undefined`. A directory whose object directories are its own children (the
 * API server's state directory) is neither.
 */
export async function actorstoreDirectoryKind(directory: string): Promise<"object" | "host root" | undefined> {
  if (await holdsObjectFiles(directory)) return "object";
  if ((await objectDirectoriesBelow(directory, 2, 1, 2)).length > 0) return "host root";
  return undefined;
}
