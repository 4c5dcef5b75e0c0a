/**
 * The README's browser recipe, exactly as written: the first code block of its "In a browser" section
 * is bundled for the browser with esbuild (`platform: "browser"`) and with Vite's library build, each
 * from a small project that has `actorstore` in node_modules (a link to this repository, so the
 * package's `exports` map and its `browser` condition are what resolves). Each bundle runs in headless
 * Chromium from a local server that serves only the page, the bundle and the one WASM file the README
 * names, at the path the snippet's `locateFile` gives. A footer after the snippet uses `storage` over
 * three page loads: write and take a bookmark; reload and find the data (IndexedDB persistence), then ask
 * for a restore; reload and find the bookmarked state.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { build as esbuild } from "esbuild";
import { type BrowserContext, chromium } from "playwright-core";
import { build as viteBuild } from "vite";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ensureDist, ROOT } from "../package/ensure-dist";
import { CHROMIUM_FLAGS } from "../setup/chromium";

/** The README's browser snippet and the WASM file it tells users to serve. */
async function readmeRecipe(): Promise<{ snippet: string; wasmFile: string; assetsPath: string }> {
  const readme = await readFile(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("\n## In a browser"));
  const snippet = section.match(/```ts\n([\s\S]*?)```/)?.[1];
  if (snippet === undefined) throw new Error('README.md has no ```ts block under "## In a browser"');
  const wasmFile = snippet.match(/serve node_modules\/sql\.js\/dist\/(\S+\.wasm) there/)?.[1];
  const assetsPath = snippet.match(/locateFile: \(file\) => `([^`$]*)\$\{file\}`/)?.[1];
  if (wasmFile === undefined || assetsPath === undefined)
    throw new Error("The README's browser snippet no longer names its WASM file and path the way this test reads them");
  return { snippet, wasmFile, assetsPath };
}

/**
 * Runs after the snippet, in the same module: three page loads, told apart by localStorage. It uses
 * only `storage`, which the snippet defines.
 */
const FOOTER = `
;(async () => {
  const w = window as unknown as { __result?: unknown };
  try {
    const step = Number(localStorage.getItem("step") ?? "0") + 1;
    localStorage.setItem("step", String(step));
    if (step === 1) {
      storage.sql.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
      storage.sql.exec("INSERT INTO notes (body) VALUES (?)", "first");
      await storage.put("title", "first");
      localStorage.setItem("bookmark", await storage.getCurrentBookmark());
      await storage.put("title", "second");
      storage.sql.exec("INSERT INTO notes (body) VALUES (?)", "second");
      await storage.sync();
    } else if (step === 2) {
      await storage.onNextSessionRestoreBookmark(localStorage.getItem("bookmark") as string);
    }
    const notes = storage.sql.exec("SELECT body FROM notes ORDER BY id").toArray().map((r) => r.body);
    w.__result = { step, title: await storage.get("title"), notes, codec: storage.codec };
  } catch (e) {
    w.__result = { error: String((e as Error)?.stack ?? e) };
  }
})();
`;

/** A project with the snippet as its entry and actorstore installed (linked) in node_modules. */
async function makeProject(snippet: string): Promise<string> {
  await mkdir(join(ROOT, ".tmp"), { recursive: true });
  const dir = await mkdtemp(join(ROOT, ".tmp", "recipe-"));
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "recipe", private: true, type: "module" }));
  await mkdir(join(dir, "node_modules"));
  await symlink(ROOT, join(dir, "node_modules", "actorstore"), "dir");
  await mkdir(join(dir, "src"));
  await writeFile(join(dir, "src", "main.ts"), `${snippet}${FOOTER}`);
  return dir;
}

const TYPES: Record<string, string> = { ".js": "text/javascript", ".wasm": "application/wasm", ".html": "text/html" };

interface Served {
  server: Server;
  /** Every request path and its status, in order. */
  log: { path: string; status: number }[];
}

/** Serves `/` (a page loading /app.js), the bundle directory, and the README's one WASM file. */
async function serve(outDir: string, wasmFile: string, assetsPath: string): Promise<Served> {
  const log: Served["log"] = [];
  const wasm = await readFile(join(ROOT, "node_modules/sql.js/dist", wasmFile));
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const send = (status: number, type: string, body: string | Buffer) => {
      log.push({ path, status });
      res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
      res.end(body);
    };
    if (path === "/")
      return send(
        200,
        "text/html",
        `<!doctype html><meta charset="utf-8"><script type="module" src="/app.js"></script>`,
      );
    if (path === "/favicon.ico") return send(204, "text/plain", "");
    if (path === `${assetsPath}${wasmFile}`) return send(200, "application/wasm", wasm);
    const file = normalize(join(outDir, path));
    if (!file.startsWith(outDir) || extname(file) !== ".js") return send(404, "text/plain", "not found");
    try {
      return send(200, TYPES[".js"] as string, await readFile(file));
    } catch {
      return send(404, "text/plain", "not found");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, log };
}

interface StepResult {
  error?: string;
  step?: number;
  title?: unknown;
  notes?: unknown[];
  codec?: string;
}

/** Opens the page three times in one browser profile and returns what each load reported. */
async function runInBrowser(outDir: string, wasmFile: string, assetsPath: string) {
  const served = await serve(outDir, wasmFile, assetsPath);
  const profile = await mkdtemp(join(tmpdir(), "actorstore-recipe-"));
  const browser = inject("chromium");
  let context: BrowserContext | undefined;
  const problems: string[] = [];
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: browser.executablePath,
      env: { ...process.env, ...browser.env } as Record<string, string>,
      headless: true,
      args: CHROMIUM_FLAGS,
    });
    const page = await context.newPage();
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`console: ${m.text()}`);
    });
    page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
    const { port } = served.server.address() as AddressInfo;
    const steps: StepResult[] = [];
    for (let i = 0; i < 3; i++) {
      if (i === 0) await page.goto(`http://127.0.0.1:${port}/`);
      else await page.reload();
      // The result, or the first page error (a snippet that throws never reaches the footer).
      for (let waited = 0; problems.length === 0; waited += 100) {
        if (await page.evaluate(() => (window as unknown as { __result?: unknown }).__result !== undefined)) break;
        if (waited > 60_000) throw new Error(`page load ${i + 1} reported nothing within 60 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
      if (problems.length > 0) return { steps, problems, log: served.log };
      steps.push((await page.evaluate(() => (window as unknown as { __result: unknown }).__result)) as StepResult);
    }
    return { steps, problems, log: served.log };
  } finally {
    await context?.close();
    await new Promise((resolve) => served.server.close(resolve));
    await rm(profile, { recursive: true, force: true });
  }
}

/** What every bundler's run must show. */
function expectRecipeWorks(run: Awaited<ReturnType<typeof runInBrowser>>, wasmFile: string, assetsPath: string) {
  expect(run.problems).toEqual([]);
  const [first, second, third] = run.steps;
  expect(first?.error).toBeUndefined();
  expect(first).toEqual({ step: 1, title: "second", notes: ["first", "second"], codec: "structured" });
  // Reloaded: the data came back from IndexedDB.
  expect(second).toEqual({ step: 2, title: "second", notes: ["first", "second"], codec: "structured" });
  // Reloaded after onNextSessionRestoreBookmark: the state at the bookmark.
  expect(third).toEqual({ step: 3, title: "first", notes: ["first"], codec: "structured" });
  // Only the page, the bundle (and its chunks) and the README's WASM file were requested, all found.
  for (const { path, status } of run.log) {
    expect(path).toMatch(
      new RegExp(`^/$|^/favicon\\.ico$|^/[\\w.-]+\\.js$|^${assetsPath}${wasmFile.replace(".", "\\.")}$`),
    );
    expect(status, path).toBeLessThan(300);
  }
  expect(run.log.filter((r) => r.path.endsWith(".wasm")).length).toBe(3);
}

/** No `node:` module is imported by any file of the bundle. */
async function expectNoNodeImports(outDir: string) {
  for (const file of await readdir(outDir)) {
    if (!file.endsWith(".js")) continue;
    const code = await readFile(join(outDir, file), "utf8");
    expect(code, file).not.toMatch(/(?:import\s*\(|from)\s*["']node:|require\(\s*["']node:/);
  }
}

describe("the README's browser recipe, bundled and run in headless Chromium", () => {
  let recipe: Awaited<ReturnType<typeof readmeRecipe>>;
  let project: string;

  beforeAll(async () => {
    await ensureDist();
    recipe = await readmeRecipe();
    project = await makeProject(recipe.snippet);
  }, 300_000);

  afterAll(async () => {
    if (project) await rm(project, { recursive: true, force: true });
  });

  it("the snippet uses the package's own name and the browser build of sql.js's WASM file", () => {
    expect(recipe.snippet).toMatch(/from "actorstore";/);
    expect(recipe.wasmFile).toBe("sql-wasm-browser.wasm");
  });

  it("esbuild --platform=browser: bundles without a node: import, runs, persists across reloads, restores", async () => {
    const outDir = join(project, "dist-esbuild");
    const result = await esbuild({
      absWorkingDir: project,
      entryPoints: [join(project, "src/main.ts")],
      bundle: true,
      platform: "browser",
      format: "esm",
      target: "es2022",
      outfile: join(outDir, "app.js"),
      logLevel: "silent",
    });
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((w) => w.text)).toEqual([]);
    await expectNoNodeImports(outDir);
    const run = await runInBrowser(outDir, recipe.wasmFile, recipe.assetsPath);
    expectRecipeWorks(run, recipe.wasmFile, recipe.assetsPath);
  }, 180_000);

  it("Vite library build: bundles without a node: import, runs, persists across reloads, restores", async () => {
    const outDir = join(project, "dist-vite");
    const warnings: string[] = [];
    await viteBuild({
      configFile: false,
      root: project,
      logLevel: "silent",
      customLogger: {
        info: () => undefined,
        warn: (msg) => warnings.push(msg),
        warnOnce: (msg) => warnings.push(msg),
        error: (msg) => warnings.push(`error: ${msg}`),
        clearScreen: () => undefined,
        hasErrorLogged: () => false,
        hasWarned: false,
      },
      build: {
        outDir,
        emptyOutDir: true,
        target: "es2022",
        minify: false,
        lib: { entry: join(project, "src/main.ts"), formats: ["es"], fileName: () => "app.js" },
      },
    });
    expect(warnings).toEqual([]);
    await expectNoNodeImports(outDir);
    const run = await runInBrowser(outDir, recipe.wasmFile, recipe.assetsPath);
    expectRecipeWorks(run, recipe.wasmFile, recipe.assetsPath);
  }, 180_000);
});
