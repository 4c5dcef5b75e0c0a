/**
 * The built package as a user gets it: plain Node (no vitest transforms) imports each entry point by
 * the package's own name, so the exports map is exercised, and does one real operation with each.
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureDist, ROOT } from "./ensure-dist";

/** Runs an ES module in a fresh Node process at the repository root and returns its stdout. */
async function node(source: string, flags: string[] = []): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [...flags, "--input-type=module", "-e", source], {
    cwd: ROOT,
    timeout: 60_000,
  });
  return stdout.trim();
}

describe("dist/", () => {
  beforeAll(async () => {
    await ensureDist();
  }, 300_000);

  it('"actorstore": opens storage and runs KV, SQL and a transaction', async () => {
    const out = await node(`
      import { ObjectStorage, FakeClock, ActorStoreError } from "actorstore";
      const storage = await ObjectStorage.open({ clock: new FakeClock() });
      await storage.put("k", new Map([["a", 1n]]));
      storage.sql.exec("CREATE TABLE t (x)");
      await storage.transaction(async (txn) => { await txn.put("n", 1); storage.sql.exec("INSERT INTO t VALUES (?)", 2); });
      const row = storage.sql.exec("SELECT x FROM t").one();
      console.log(JSON.stringify({ k: String((await storage.get("k")).get("a")), n: await storage.get("n"), x: row.x,
        err: typeof ActorStoreError, codec: storage.codec }));
    `);
    expect(JSON.parse(out)).toEqual({ k: "1", n: 1, x: 2, err: "function", codec: "structured" });
  });

  it('"actorstore/api": a pure model function', async () => {
    const out = await node(`
      import { parseExpression, successEnvelope } from "actorstore/api";
      console.log(JSON.stringify([parseExpression('http.host eq "a.com"').ok, successEnvelope(1).success]));
    `);
    expect(out).toBe("[true,true]");
  });

  it('"actorstore/testkit": an object on a fake clock', async () => {
    const out = await node(`
      import { createTestObject } from "actorstore/testkit";
      class Counter {
        constructor(ctx) { this.ctx = ctx; }
        async increment() { const n = ((await this.ctx.storage.get("n")) ?? 0) + 1; await this.ctx.storage.put("n", n); return n; }
      }
      const c = await createTestObject(Counter);
      await c.call("increment");
      console.log(await c.call("increment"), await c.get("n"));
    `);
    expect(out).toBe("2 2");
  });

  it('"actorstore" under the browser condition: the browser build, in memory; file persistence says it needs Node', async () => {
    const out = await node(
      `
      import { ObjectStorage, openFilePersistence, openIndexedDbPersistence } from "actorstore";
      import { createTestObject } from "actorstore/testkit";
      import { readFileSync } from "node:fs";
      // sql.js's browser build fetches its WASM file, which Node cannot do from a path: hand it the bytes.
      const sqlJs = { wasmBinary: readFileSync("node_modules/sql.js/dist/sql-wasm-browser.wasm") };
      const storage = await ObjectStorage.open({ sqlJs });
      await storage.put("k", 1);
      const file = await openFilePersistence("./nowhere").then(() => "opened", (e) => e.message);
      const idb = await openIndexedDbPersistence("x").then(() => "opened", (e) => e.code);
      const t = await createTestObject(class { constructor(ctx) { this.ctx = ctx; } }, { storage: { sqlJs } });
      console.log(JSON.stringify({ k: await storage.get("k"), codec: storage.codec, file, idb,
        url: import.meta.resolve("actorstore"), shared: (await t.storage()) instanceof ObjectStorage }));
    `,
      ["--conditions=browser"],
    );
    expect(JSON.parse(out)).toEqual({
      k: 1,
      codec: "structured",
      file: expect.stringMatching(/^node:fs\/promises is not available in actorstore's browser build/),
      idb: "ERR_INVALID_OPTION",
      url: expect.stringMatching(/\/dist\/browser\/index\.js$/),
      shared: true,
    });
  });

  it('"actorstore/testkit" under the browser condition: startTestApiServer() rejects saying it needs Node, and nothing escapes as uncaught', async () => {
    // Before, it loaded the API server into the browser build, which opened a storage whose sql.js
    // (its browser build) found no WASM file: the call rejected with sql.js's text and the process
    // died of an uncaught error from inside sql.js.
    const out = await node(
      `
      import { startTestApiServer, TEST_API_TOKEN } from "actorstore/testkit";
      const error = await startTestApiServer().then(() => undefined, (e) => e);
      console.log(JSON.stringify({ name: error?.name, code: error?.code, message: error?.message, token: TEST_API_TOKEN }));
    `,
      ["--conditions=browser"],
    );
    expect(JSON.parse(out)).toEqual({
      name: "ActorStoreError",
      code: "ERR_INVALID_OPTION",
      message: expect.stringMatching(
        /^startTestApiServer\(\) needs Node\.js \(node:http\), which actorstore's browser build/,
      ),
      token: "actorstore-test-token",
    });
  });

  it("the browser build carries neither the file adapter nor the API server, which cannot run there", async () => {
    const dir = join(ROOT, "dist/browser");
    const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith(".js"));
    const code = (await Promise.all(files.map((f) => readFile(join(dir, f), "utf8")))).join("\n");
    // esbuild marks each bundled source file with a "// src/…" comment.
    const bundled = [...code.matchAll(/^\/\/ (src\/[\w/.-]+\.ts)$/gm)].map((m) => m[1] as string);
    expect(bundled).toContain("src/durability/indexeddb-persistence.ts");
    expect(bundled).toContain("src/durability/file-persistence.browser.ts");
    expect(bundled).toContain("src/testkit/api-server.browser.ts");
    const nodeOnly = /^src\/(server|api|cli)\/|^src\/durability\/(file-|directory-|snapshot-files|crc-off-thread)/;
    expect(bundled.filter((f) => nodeOnly.test(f) && !f.endsWith(".browser.ts"))).toEqual([]);
  });

  it('"actorstore/server": the API handler answers a request', async () => {
    const out = await node(`
      import { createApiHandler } from "actorstore/server";
      const handler = createApiHandler({ credentials: { tokens: ["t"] }, fixture: { accounts: [{ name: "A" }], zones: [] } });
      const response = await handler(new Request("http://x/client/v4/zones", { headers: { authorization: "Bearer t" } }));
      console.log(response.status, JSON.stringify((await response.json()).result));
      await handler.close();
    `);
    expect(out).toBe("200 []");
  });

  it("CommonJS: require() loads every entry point (Node 20.19 and later), as the README says", async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { exports: Record<string, unknown> };
    const entries = Object.keys(pkg.exports)
      .filter((e) => e !== "./package.json")
      .map((e) => e.replace(/^\./, "actorstore"));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "-e",
        `const entries = ${JSON.stringify(entries)};
        const counts = entries.map((e) => Object.keys(require(e)).length);
        const { ObjectStorage } = require("actorstore");
        ObjectStorage.open().then(async (s) => {
          await s.put("k", 1);
          console.log(JSON.stringify({ counts, k: await s.get("k") }));
        });`,
      ],
      { cwd: ROOT, timeout: 60_000 },
    );
    const out = JSON.parse(stdout) as { counts: number[]; k: unknown };
    expect(out.counts).toHaveLength(entries.length);
    expect(out.counts.every((n) => n > 0)).toBe(true);
    expect(out.k).toBe(1);
  });

  it("actorstore-inspect: the bin file runs and prints usage", async () => {
    const run = promisify(execFile)(process.execPath, ["dist/cli/inspect.js", "--help"], { cwd: ROOT });
    await expect(run).resolves.toMatchObject({ stdout: expect.stringContaining("Usage: actorstore-inspect") });
  });
});
