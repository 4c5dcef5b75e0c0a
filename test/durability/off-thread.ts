/**
 * The set-up of tests of the off-thread checks (crc-off-thread.ts): every image goes to a worker
 * however small (threshold 0) while the file's tests run; afterwards the threshold is restored and
 * the test's directory removed.
 */
import * as fs from "node:fs/promises";
import { afterAll, beforeAll } from "vitest";
import { createOffThreadCrc, type OffThreadCrc, setOffThreadCrcFromBytes } from "../../src/durability/crc-off-thread";

/** Registers the hooks; the returned function gives the off-thread checker once `beforeAll` ran. */
export function everyImageOffThread(root: string): () => OffThreadCrc {
  let previousThreshold = 0;
  let offThread: OffThreadCrc | undefined;
  beforeAll(async () => {
    previousThreshold = setOffThreadCrcFromBytes(0);
    offThread = await createOffThreadCrc(fs);
    if (offThread === undefined) throw new Error("this Node has worker threads and zlib.crc32");
  });
  afterAll(async () => {
    setOffThreadCrcFromBytes(previousThreshold);
    await fs.rm(root, { recursive: true, force: true });
  });
  return () => {
    if (offThread === undefined) throw new Error("everyImageOffThread: used before beforeAll ran");
    return offThread;
  };
}
