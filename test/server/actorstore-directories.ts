/**
 * Directories the API server must refuse as its state directory, written by the real writers: an
 * object's directory (the file adapter) and the root of a host's objects (`directoryPerObject`).
 */
import { DurableObject } from "../../src/context/durable-object";
import { ObjectHost } from "../../src/host/object-host";
import { directoryPerObject } from "../../src/host/options";
import { ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";

/** Makes `directory` an object's directory, written by the file adapter. */
export async function objectDirectory(directory: string): Promise<string> {
  const storage = await ObjectStorage.open({ directory, clock: new FakeClock() });
  await storage.put("k", "v");
  await storage.close();
  return directory;
}

class Counter extends DurableObject {
  async increment(): Promise<number> {
    const next = ((await this.ctx.storage.get<number>("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", next);
    return next;
  }
}

/** Makes `root` the root of a host's objects, written by a host over `directoryPerObject(root)`. */
export async function hostRoot(root: string): Promise<string> {
  const host = new ObjectHost({
    namespaces: { COUNTER: Counter },
    clock: new FakeClock(),
    persistence: directoryPerObject(root),
  });
  await (host.env.COUNTER as unknown as { getByName(n: string): { increment(): Promise<number> } })
    .getByName("a")
    .increment();
  await host.close();
  return root;
}
