import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    "api/index": "src/api/index.ts",
    "testkit/index": "src/testkit/index.ts",
    "cli/inspect": "src/cli/inspect.ts",
  },
  format: ["esm"],
  dts: {
    entry: {
      index: "src/index.ts",
      "api/index": "src/api/index.ts",
      "testkit/index": "src/testkit/index.ts",
    },
  },
  sourcemap: true,
  clean: true,
  target: "es2022",
  platform: "neutral",
  // node: builtins are loaded lazily and only where they exist (file adapter, v8 codec, the CLI).
  external: ["sql.js", /^node:/],
  // Keep `node:` specifiers as written: Deno, Bun and workerd's nodejs_compat resolve only those.
  removeNodeProtocol: false,
  // Shared chunks: "actorstore" and "actorstore/testkit" must share one copy of ObjectStorage and
  // ObjectContext (their #private fields make copies incompatible), not bundle one each.
  splitting: true,
  treeshake: true,
});
