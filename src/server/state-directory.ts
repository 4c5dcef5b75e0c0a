/**
 * The API server keeps each record in a storage object of its own, `<directory>/<record>/`. A
 * directory that already is an object's directory, or the root of a host's objects, is refused:
 * the server would write its objects among that object's files or beside a host's namespaces.
 * Recognized as the inspector recognizes them (durability/object-directories.ts).
 */
import { actorstoreDirectoryKind } from "../durability/object-directories";

/**
 * Why `directory` must not hold the API server's state, as a sentence that begins with `subject`
 * (how the caller names the directory: the CLI says `--directory`, never the value); `undefined`
 * when it may. A new, empty or unrelated directory, or one the API server kept its state in, may.
 */
export async function stateDirectoryRefusal(directory: string, subject: string): Promise<string | undefined> {
  const kind = await actorstoreDirectoryKind(directory);
  const choose = "Choose a directory of the API server's own: a new or empty one, or one it kept its state in before.";
  if (kind === "object")
    return `${subject} is an actorstore object's directory (it holds log segments, snapshots or metadata): the API server would write its own storage objects into it, among that object's files. ${choose}`;
  if (kind === "host root")
    return `${subject} is the root of a host's objects (directoryPerObject: the directories of objects are two levels below it): the API server would write its own storage objects among its namespaces. ${choose}`;
  return undefined;
}
