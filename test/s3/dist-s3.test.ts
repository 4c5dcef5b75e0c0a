/**
 * "actorstore/s3" as a user gets it: its own entry in the built package, and the core entries never
 * load its S3 client (the core keeps sql.js as its only dependency).
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureDist, ROOT } from "../package/ensure-dist";

describe("dist/: actorstore/s3", () => {
  beforeAll(async () => {
    await ensureDist();
  }, 300_000);

  it('"actorstore/s3" exports s3Persistence, which validates its options', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { s3Persistence } from "actorstore/s3";
         let message = "";
         try { s3Persistence({ endpoint: "http://127.0.0.1:1", bucket: "objects", credentials: { accessKeyId: "a", secretAccessKey: "b" }, nope: 1 }); }
         catch (e) { message = e.constructor.name + ": " + e.message; }
         const p = s3Persistence({ endpoint: "http://127.0.0.1:1", bucket: "objects", credentials: { accessKeyId: "a", secretAccessKey: "b" } });
         console.log(JSON.stringify([typeof p.load, message]));`,
      ],
      { cwd: ROOT, timeout: 60_000 },
    );
    const [load, message] = JSON.parse(stdout.trim()) as [string, string];
    expect(load).toBe("function");
    expect(message).toMatch(/^TypeError: .*unknown option "nope"/);
  });

  it("no module reachable from the core entries imports aws4fetch", async () => {
    const dist = join(ROOT, "dist");
    const seen = new Set<string>();
    const visit = async (file: string): Promise<void> => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = await readFile(file, "utf8");
      expect(text.includes('from "aws4fetch"') || text.includes("from 'aws4fetch'"), file).toBe(false);
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g))
        await visit(join(file, "..", m[1] as string));
    };
    for (const entry of ["index.js", "testkit/index.js", "api/index.js"]) await visit(join(dist, entry));
    expect(seen.size).toBeGreaterThan(2);
    const s3Files = await readdir(join(dist, "s3"));
    expect(s3Files).toContain("index.js");
  });
});
