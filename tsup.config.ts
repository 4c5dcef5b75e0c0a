import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Plugin } from "esbuild";
import { defineConfig, type Options } from "tsup";

/** The storage core and the test kit: the entries a browser build carries. */
const BROWSER_ENTRIES = { index: "src/index.ts", "testkit/index": "src/testkit/index.ts" };

/**
 * A dynamic `import("node:…")` expression, optionally with a bundler hint comment inside the
 * parentheses (not `typeof import("node:…")`, which is a type).
 */
const NODE_DYNAMIC_IMPORT = /(?<!\btypeof\s+)\bimport\(\s*(?:\/\*[^*]*\*\/\s*)?["'](node:[^"']+)["']\s*\)/g;

/**
 * The browser build (the `browser` export condition) has no `node:` import at all, so a bundler never
 * has to resolve one and a page never requests one. The modules that use Node do so only behind a
 * dynamic `import("node:…")` and cope when it fails (the V8 codec and AsyncLocalStorage are optional;
 * the file adapter says it needs Node): here each such import becomes a rejected promise with a plain
 * message. A static `node:` import reaching the browser build fails the build.
 *
 * A module `x.ts` with a sibling `x.browser.ts` is built from the sibling instead (as a package's
 * `browser` field maps files): the file adapter and the test kit's API server, which need Node from
 * their first step, are replaced by modules with the same exports that reject saying so, so none of
 * their code (dead there) is in the bundle. test/package/browser-variants.test.ts keeps the exports equal.
 */
const nodeBuiltinsUnavailable: Plugin = {
  name: "node-builtins-unavailable",
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      const contents = source.replace(NODE_DYNAMIC_IMPORT, (_, name: string) => {
        const message = `${name} is not available in actorstore's browser build: file persistence and the v8 codec need Node.js; in a browser use openIndexedDbPersistence() and the structured codec.`;
        return `Promise.reject(new Error(${JSON.stringify(message)}))`;
      });
      return contents === source ? undefined : { contents, loader: "ts" };
    });
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      const variant = `${resolve(args.resolveDir, args.path)}.browser.ts`;
      return existsSync(variant) ? { path: variant } : undefined;
    });
    build.onResolve({ filter: /^node:/ }, (args) => ({
      errors: [{ text: `${args.importer} imports ${args.path}, which the browser build cannot contain` }],
    }));
  },
};

const shared: Options = {
  format: ["esm"],
  sourcemap: true,
  target: "es2022",
  external: ["sql.js"],
  // Shared chunks: "actorstore" and "actorstore/testkit" must share one copy of ObjectStorage and
  // ObjectContext (their #private fields make copies incompatible), not bundle one each.
  splitting: true,
  treeshake: true,
  // Keep `node:` specifiers as written: Deno, Bun and workerd's nodejs_compat resolve only those.
  removeNodeProtocol: false,
};

export default defineConfig([
  {
    ...shared,
    entry: {
      ...BROWSER_ENTRIES,
      "api/index": "src/api/index.ts",
      "cluster/index": "src/cluster/index.ts",
      "s3/index": "src/s3/index.ts",
      "cli/inspect": "src/cli/inspect.ts",
      "server/index": "src/server/index.ts",
      "server/cli": "src/server/cli.ts",
    },
    dts: {
      entry: {
        index: "src/index.ts",
        "api/index": "src/api/index.ts",
        "testkit/index": "src/testkit/index.ts",
        "cluster/index": "src/cluster/index.ts",
        "server/index": "src/server/index.ts",
        "s3/index": "src/s3/index.ts",
      },
    },
    // Everything but dist/browser/, which the second build writes at the same time.
    clean: ["!browser/**"],
    platform: "neutral",
    // node: builtins are loaded lazily and only where they exist (file adapter, v8 codec, the CLI).
    external: ["sql.js", "aws4fetch", /^node:/],
  },
  {
    ...shared,
    entry: BROWSER_ENTRIES,
    outDir: "dist/browser",
    clean: true,
    platform: "browser",
    esbuildPlugins: [nodeBuiltinsUnavailable],
  },
]);
