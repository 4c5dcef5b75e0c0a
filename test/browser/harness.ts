/**
 * What the IndexedDB tests in headless Chromium share: a local server for the package's browser
 * build (no bundler: an import map resolves its bare "sql.js" import to an ESM shim of sql.js's
 * browser build), a page that exposes the build as `window.lib`, and a browser launched with a
 * profile of its own (a directory, so that IndexedDB survives a restart of the browser).
 */
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { inject } from "vitest";
import { ROOT } from "../package/ensure-dist";
import { CHROMIUM_FLAGS } from "../setup/chromium";

/** The page: loads the browser build as `window.lib`, then sets `window.ready`. */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8">
<script type="importmap">{ "imports": { "sql.js": "/shim/sql.js" } }</script>
</head><body>
<script type="module">
import * as lib from "/dist/browser/index.js";
window.lib = lib;
window.ready = true;
</script></body></html>`;

const TYPES: Record<string, string> = {
  ".js": "text/javascript",
  ".wasm": "application/wasm",
  ".map": "application/json",
};

/**
 * Serves `/` (the page, unless `pages` names another for it), `/dist/…` (the package's build),
 * `/shim/sql.js`, `/wasm/…` (sql.js's WASM files), the pages in `pages` (path → HTML) and the
 * scripts in `scripts` (path → JavaScript); nothing else. Returns its origin.
 */
export async function serveBrowserBuild(
  scripts: Record<string, string> = {},
  pages: Record<string, string> = {},
): Promise<{ server: Server; origin: string }> {
  const sqlJsDist = join(ROOT, "node_modules/sql.js/dist");
  // `var`, not `const`: sql.js assigns to `module.exports` and may reassign `exports`.
  const shim = `var module = { exports: {} };\nvar exports = module.exports;\n${await readFile(
    join(sqlJsDist, "sql-wasm-browser.js"),
    "utf8",
  )}\nexport default module.exports;\n`;
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
      res.end(body);
    };
    try {
      const page = pages[path] ?? (path === "/" ? PAGE : undefined);
      if (page !== undefined) return send(200, "text/html", page);
      if (path === "/shim/sql.js") return send(200, "text/javascript", shim);
      const script = scripts[path];
      if (script !== undefined) return send(200, "text/javascript", script);
      const [root, rest] = path.startsWith("/dist/")
        ? [join(ROOT, "dist"), path.slice("/dist/".length)]
        : path.startsWith("/wasm/")
          ? [sqlJsDist, path.slice("/wasm/".length)]
          : [undefined, ""];
      const file = root === undefined ? undefined : normalize(join(root, rest));
      if (root === undefined || file === undefined || !file.startsWith(root))
        return send(404, "text/plain", "not found");
      return send(200, TYPES[extname(file)] ?? "application/octet-stream", await readFile(file));
    } catch {
      return send(404, "text/plain", "not found");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Starts Chromium with `profile` as its user data directory. */
export function launchChromium(profile: string): Promise<BrowserContext> {
  const browser = inject("chromium");
  return chromium.launchPersistentContext(profile, {
    executablePath: browser.executablePath,
    env: { ...process.env, ...browser.env } as Record<string, string>,
    headless: true,
    args: CHROMIUM_FLAGS,
  });
}

/** A new tab showing the page, once the build has loaded; page errors are collected in `problems`. */
export async function openTab(context: BrowserContext, origin: string, problems: string[] = []): Promise<Page> {
  const page = await context.newPage();
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true, null, {
    timeout: 30_000,
  });
  return page;
}

/**
 * Page code that opens `window.storage` over IndexedDB database `name` (an expression for
 * `page.evaluate`, a string so that no bundler helper of this file ends up in the page). It
 * resolves to `{ ok: true }`, or `{ ok: false, name, code, message }` of the error.
 */
export function openStorageIn(name: string): string {
  return `(async () => {
    const { ObjectStorage, openIndexedDbPersistence } = window.lib;
    try {
      window.storage = await ObjectStorage.open({
        codec: "structured",
        persistence: await openIndexedDbPersistence(${JSON.stringify(name)}),
        sqlJs: { locateFile: (file) => "/wasm/" + file },
      });
      return { ok: true };
    } catch (e) {
      return { ok: false, name: e.name, code: e.code, message: e.message };
    }
  })()`;
}
