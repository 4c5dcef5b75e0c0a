/**
 * The API server's state directory: it keeps one storage object per record in `<directory>/<name>/`,
 * so a directory that is an object's directory, or the root of a host's objects, is refused with
 * ERR_DIRECTORY before anything is written there. The directory it kept its own state in is not.
 */
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ActorStoreError } from "../../src/errors";
import { createApiHandler, startApiServer } from "../../src/server/index";
import { ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";
import { hostRoot, objectDirectory } from "./actorstore-directories";
import { CREDENTIALS, FIXTURE } from "./helpers";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "actorstore-api-state-"));
  dirs.push(dir);
  return dir;
}

/** Every path under `dir` with its size (directories as -1), so any write shows. */
async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    out.push(`${path} ${entry.isDirectory() ? -1 : (await stat(path)).size}`);
  }
  return out.sort();
}

async function refusal(directory: string): Promise<unknown> {
  const handler = createApiHandler({ credentials: CREDENTIALS, fixture: FIXTURE, directory });
  try {
    await handler.ready();
    return undefined;
  } catch (e) {
    return e;
  } finally {
    await handler.close();
  }
}

describe("API server: the state directory", () => {
  it("an object's directory is refused with ERR_DIRECTORY, and nothing is written in it", async () => {
    const directory = await objectDirectory(await tempDir());
    const before = await tree(directory);
    const error = await refusal(directory);
    expect(error).toBeInstanceOf(ActorStoreError);
    expect((error as ActorStoreError).code).toBe("ERR_DIRECTORY");
    expect((error as Error).message).toBe(
      `The API state directory ${JSON.stringify(directory)} is an actorstore object's directory (it holds log segments, snapshots or metadata): the API server would write its own storage objects into it, among that object's files. Choose a directory of the API server's own: a new or empty one, or one it kept its state in before.`,
    );
    expect(await tree(directory)).toEqual(before);
    // The object is intact.
    const storage = await ObjectStorage.open({ directory, clock: new FakeClock() });
    expect(await storage.get("k")).toBe("v");
    await storage.close();
  });

  it("the root of a host's objects is refused with ERR_DIRECTORY, and nothing is written in it", async () => {
    const root = await hostRoot(await tempDir());
    const before = await tree(root);
    const error = await refusal(root);
    expect((error as ActorStoreError).code).toBe("ERR_DIRECTORY");
    expect((error as Error).message).toMatch(
      /^The API state directory ".*" is the root of a host's objects \(directoryPerObject: the directories of objects are two levels below it\): .* Choose a directory of the API server's own/,
    );
    expect(await tree(root)).toEqual(before);
  });

  it("startApiServer refuses it the same way", async () => {
    const directory = await objectDirectory(await tempDir());
    const error = await startApiServer({ credentials: CREDENTIALS, fixture: FIXTURE, directory }).then(
      async (server) => {
        await server.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect((error as ActorStoreError).code).toBe("ERR_DIRECTORY");
  });

  it("its own directory (one object per record, directly below it) is accepted again, as is an unrelated one", async () => {
    const directory = await tempDir();
    expect(await refusal(directory)).toBeUndefined();
    // Now it holds the server's objects one level below: still its own, not a host's root.
    expect((await readdir(directory)).length).toBeGreaterThan(0);
    expect(await refusal(directory)).toBeUndefined();
    // A directory holding other things (not actorstore's) is not refused either.
    const other = await tempDir();
    await ObjectStorage.open({ directory: join(other, "not-mine", "deeper", "still"), clock: new FakeClock() }).then(
      (s) => s.close(),
    );
    expect(await refusal(other)).toBeUndefined();
  });
});
