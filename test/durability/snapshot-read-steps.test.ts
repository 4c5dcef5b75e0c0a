/**
 * A large image is read in steps, and the worker sums each step as soon as it is read
 * (crc-off-thread.ts): the verdict is the one a sum over the whole file gives, for every step size,
 * and a read that gives up part-way (a file shorter than it was said to be, a file that is gone)
 * never leaves the worker waiting for steps that will not come, which would keep the process alive.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { offThreadCrcAnswers, setOffThreadCrcStepBytes } from "../../src/durability/crc-off-thread";
import { crc32 } from "../../src/durability/crc32";
import { runScript } from "../helpers/child-script";
import { everyImageOffThread } from "./off-thread";

const root = await mkdtemp(join(tmpdir(), "actorstore-read-steps-"));
const offThread = everyImageOffThread(root);
let counter = 0;

/** `readAndCheck` with reads of `step` bytes; the step size is restored afterwards. */
async function readInSteps(file: string, size: number, crc: number, step: number) {
  const previous = setOffThreadCrcStepBytes(step);
  try {
    return await offThread().readAndCheck(file, size, crc);
  } finally {
    setOffThreadCrcStepBytes(previous);
  }
}

describe("an image read in steps, each summed once read", () => {
  test("the verdict is the whole file's sum, for any step size and any damage", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 700 }),
        fc.integer({ min: 1, max: 800 }),
        fc.option(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { nil: undefined }),
        async (bytes, step, damage) => {
          const file = join(root, `image-${++counter}`);
          await writeFile(file, bytes);
          const crc = crc32(bytes);
          if (damage !== undefined) {
            // One byte changed on disk after its sum was taken (as a snapshot's name records it).
            const changed = Uint8Array.from(bytes);
            const at = damage[0] % changed.length;
            changed[at] = (changed[at] as number) ^ damage[1];
            await writeFile(file, changed);
          }
          const answers = offThreadCrcAnswers();
          const read = await readInSteps(file, bytes.length, crc, step);
          expect(await read?.matches).toBe(damage === undefined);
          // The worker answered, not the in-line fallback.
          expect(offThreadCrcAnswers()).toBe(answers + 1);
          if (damage === undefined) expect(read?.image).toEqual(bytes);
        },
      ),
      { numRuns: 120 },
    );
    // 120 file writes and reads through a worker: 12 s in a quiet CI run, more on a loaded machine.
  }, 120_000);

  test("a file shorter than its stat said: the check fails; a file that is gone: the read rejects", async () => {
    const file = join(root, `short-${++counter}`);
    const bytes = Uint8Array.from({ length: 100 }, (_, i) => i);
    await writeFile(file, bytes);
    const short = await readInSteps(file, 200, crc32(bytes), 7);
    expect(await short?.matches).toBe(false);
    await expect(readInSteps(join(root, "gone"), 200, 0, 7)).rejects.toMatchObject({ code: "ENOENT" });
  });

  test("a read that gives up part-way leaves no worker waiting: the process exits", async () => {
    const repo = resolve(import.meta.dirname, "../..");
    const dir = await mkdtemp(join(tmpdir(), "actorstore-read-steps-child-"));
    try {
      const script = join(dir, "give-up.mts");
      const module = JSON.stringify(join(repo, "src/durability/crc-off-thread.ts"));
      await writeFile(
        script,
        [
          `import * as fs from "node:fs/promises";`,
          `import { createOffThreadCrc, setOffThreadCrcFromBytes, setOffThreadCrcStepBytes } from ${module};`,
          "setOffThreadCrcFromBytes(0);",
          "setOffThreadCrcStepBytes(5);",
          "const offThread = await createOffThreadCrc(fs);",
          `const file = ${JSON.stringify(join(dir, "image"))};`,
          "await fs.writeFile(file, new Uint8Array(100).fill(7));",
          // 20 steps read, then the 21st comes up short; then a file that is not there at all.
          "const short = await offThread.readAndCheck(file, 200, 0);",
          "const matches = await short.matches;",
          `const gone = await offThread.readAndCheck(file + "-gone", 200, 0).then(() => "read", (e) => e.code);`,
          "console.log(JSON.stringify({ matches, gone }));",
        ].join("\n"),
      );
      const { code, out, err } = await runScript(script, repo);
      expect({ code, err }).toEqual({ code: 0, err: "" });
      expect(JSON.parse(out)).toEqual({ matches: false, gone: "ENOENT" });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
