/**
 * actorstore outside Node: headless Chromium (provided by test/setup/chromium.ts, driven by playwright-core)
 * loads the package's browser build (dist/browser/, no bundler: an import map) from a local HTTP server, opens an in-memory ObjectStorage with sql.js
 * pointed at its WASM file by `sqlJs.locateFile`, and runs KV, SQL and a transaction.
 *
 * The test never skips: the browser is part of what `npm test` proves, and the global setup provides it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ensureDist } from "../package/ensure-dist";
import { CHROMIUM_FLAGS } from "../setup/chromium";
import { serveBrowserBuild } from "./harness";

/** What the page reports back. */
interface PageResult {
  error?: string;
  user?: unknown;
  listed?: string[];
  rows?: unknown[];
  afterRollback?: { n: unknown; rows: number };
  afterCommit?: { n: unknown; rows: number };
  codec?: string;
  bookmark?: string;
}

// The page: an import map resolves the bundle's bare "sql.js" import to an ESM shim of sql.js's
// browser build; the WASM file is found through sqlJs.locateFile, as the README tells users.
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8">
<script type="importmap">{ "imports": { "sql.js": "/shim/sql.js" } }</script>
</head><body>
<script type="module">
import { ObjectStorage } from "/dist/browser/index.js";
try {
  const storage = await ObjectStorage.open({ sqlJs: { locateFile: (file) => "/wasm/" + file } });
  await storage.put("user:1", { name: "Ada", tags: new Set(["a"]), at: new Date(0) });
  await storage.put({ "user:2": { name: "Lin" }, "other": 1 });
  const user = await storage.get("user:1");
  const listed = [...(await storage.list({ prefix: "user:" })).keys()];
  storage.sql.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL)");
  storage.sql.exec("INSERT INTO orders (total) VALUES (?), (?)", 9.5, 20);
  const rows = storage.sql.exec("SELECT id, total FROM orders ORDER BY id").toArray();
  await storage.transaction(async (txn) => {
    await txn.put("n", 1);
    storage.sql.exec("INSERT INTO orders (total) VALUES (1)");
    txn.rollback();
  });
  const afterRollback = { n: await storage.get("n") ?? null,
    rows: storage.sql.exec("SELECT count(*) AS c FROM orders").one().c };
  await storage.transaction(async (txn) => {
    await txn.put("n", 2);
    storage.sql.exec("INSERT INTO orders (total) VALUES (2)");
  });
  const afterCommit = { n: await storage.get("n"), rows: storage.sql.exec("SELECT count(*) AS c FROM orders").one().c };
  const bookmark = await storage.getCurrentBookmark();
  window.__result = { user: { name: user.name, tags: [...user.tags], at: user.at.toISOString() },
    listed, rows, afterRollback, afterCommit, codec: storage.codec, bookmark };
} catch (e) {
  window.__result = { error: String(e && e.stack || e) };
}
</script></body></html>`;

// A page whose locateFile points where the WASM file is not served (the commonest setup mistake).
const MISPLACED_WASM_PAGE = `<!doctype html>
<html><head><meta charset="utf-8">
<script type="importmap">{ "imports": { "sql.js": "/shim/sql.js" } }</script>
</head><body>
<script type="module">
import { ActorStoreError, ObjectStorage } from "/dist/browser/index.js";
try {
  await ObjectStorage.open({ sqlJs: { locateFile: (file) => "/static/" + file + "?token=s3cret" } });
  window.__result = { error: "opened" };
} catch (e) {
  window.__result = { user: { isActorStoreError: e instanceof ActorStoreError, code: e.code, message: e.message } };
}
</script></body></html>`;

describe("in a browser (headless Chromium)", () => {
  let server: Server;
  let origin: string;
  let userDataDir: string;

  beforeAll(async () => {
    await ensureDist();
    ({ server, origin } = await serveBrowserBuild({}, { "/": PAGE, "/misplaced-wasm": MISPLACED_WASM_PAGE }));
    userDataDir = await mkdtemp(join(tmpdir(), "actorstore-chromium-"));
  }, 300_000);

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
  });

  it("the built bundle: opens in-memory storage and runs KV, SQL and a transaction", async () => {
    const browser = inject("chromium");
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: browser.executablePath,
      env: { ...process.env, ...browser.env } as Record<string, string>,
      headless: true,
      args: CHROMIUM_FLAGS,
    });
    const problems: string[] = [];
    try {
      const page = await context.newPage();
      page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
      page.on("console", (m) => {
        if (m.type() === "error") problems.push(`console: ${m.text()}`);
      });
      const requested: string[] = [];
      page.on("request", (r) => requested.push(new URL(r.url()).pathname));
      await page.goto(`${origin}/`);
      await page.waitForFunction(() => (window as unknown as { __result?: unknown }).__result !== undefined, null, {
        timeout: 30_000,
      });
      const result = (await page.evaluate(() => (window as unknown as { __result: unknown }).__result)) as PageResult;
      expect(result.error, problems.join("\n")).toBeUndefined();
      expect(problems).toEqual([]);
      // The browser build asks for no node: module (it has no import of one at all).
      expect(
        requested.filter((p) => !/^\/$|^\/dist\/browser\/[\w.-]+\.js$|^\/shim\/sql\.js$|^\/wasm\//.test(p)),
      ).toEqual([]);
      expect(result.user).toEqual({ name: "Ada", tags: ["a"], at: "1970-01-01T00:00:00.000Z" });
      expect(result.listed).toEqual(["user:1", "user:2"]);
      expect(result.rows).toEqual([
        { id: 1, total: 9.5 },
        { id: 2, total: 20 },
      ]);
      expect(result.afterRollback).toEqual({ n: null, rows: 2 });
      expect(result.afterCommit).toEqual({ n: 2, rows: 3 });
      // No node:v8 in a browser: values are written by the portable codec.
      expect(result.codec).toBe("structured");
      expect(result.bookmark).toMatch(/^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("a WASM file not found where locateFile points: open() rejects naming the URL and the fix, without its query", async () => {
    const browser = inject("chromium");
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: browser.executablePath,
      env: { ...process.env, ...browser.env } as Record<string, string>,
      headless: true,
      args: CHROMIUM_FLAGS,
    });
    try {
      const page = await context.newPage();
      // sql.js also threw the failure out of a promise nobody holds: an uncaught error of the page.
      const pageErrors: string[] = [];
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      page.on("console", (message) => {
        if (message.type() === "error") pageErrors.push(message.text());
      });
      await page.goto(`${origin}/misplaced-wasm`);
      await page.waitForFunction(() => (window as unknown as { __result?: unknown }).__result !== undefined, null, {
        timeout: 30_000,
      });
      const result = (await page.evaluate(() => (window as unknown as { __result: unknown }).__result)) as PageResult;
      expect(result.error).toBeUndefined();
      // sql.js's own error was "both async and sync fetching of the wasm failed", naming nothing.
      expect(result.user).toEqual({
        isActorStoreError: true,
        code: "ERR_INVALID_OPTION",
        message: expect.stringContaining(
          'sql.js could not load its WebAssembly file from "/static/sql-wasm-browser.wasm" (both async and sync fetching of the wasm failed). Serve node_modules/sql.js/dist/sql-wasm-browser.wasm and point the sqlJs.locateFile option at it',
        ),
      });
      expect(JSON.stringify(result.user)).not.toContain("s3cret");
      expect(pageErrors.filter((text) => /Aborted\(|failed to asynchronously prepare wasm/.test(text))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
