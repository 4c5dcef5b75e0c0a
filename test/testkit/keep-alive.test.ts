/**
 * What keeps a process alive (docs/testing.md): neither a pending alarm nor a blockConcurrencyWhile
 * timer on the real clock does. Each case is a child process running a plain script.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runScript as runChild } from "../helpers/child-script";

const root = resolve(import.meta.dirname, "../..");
const entry = pathToFileURL(join(root, "src/index.ts")).href;

/** The script run in a child Node process from the repository's root (tsx resolved from there). */
const runScript = (file: string) => runChild(file, root);

describe("what keeps a process alive", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "actorstore-keepalive-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a pending alarm does not: the script ends at once, exit code 0", async () => {
    const file = join(dir, "alarm.mts");
    await writeFile(
      file,
      `import { ObjectContext } from ${JSON.stringify(entry)};
class Reminder { constructor(ctx) { this.ctx = ctx; } async set() { await this.ctx.storage.setAlarm(Date.now() + 3_600_000); } async alarm() {} }
const context = await ObjectContext.create(Reminder);
await context.call("set");
console.log("alarm set");
`,
    );
    const result = await runScript(file);
    expect(result.out).toContain("alarm set");
    expect(result.code).toBe(0);
    expect(result.ms).toBeLessThan(50_000); // not the hour the alarm waits for
  });

  it("a blockConcurrencyWhile waiting on the real clock does not: Node exits with code 13", async () => {
    const file = join(dir, "block.mts");
    await writeFile(
      file,
      `import { ObjectContext } from ${JSON.stringify(entry)};
class Stuck { constructor(ctx) { this.ctx = ctx; } run() { return this.ctx.blockConcurrencyWhile(() => new Promise(() => {})); } }
const context = await ObjectContext.create(Stuck);
await context.call("run");
console.log("not reached");
`,
    );
    const result = await runScript(file);
    expect(result.out).not.toContain("not reached");
    expect(result.code).toBe(13); // unsettled top-level await: the 30 s timer did not hold the loop
  });
});
