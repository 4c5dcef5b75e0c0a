import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    "api/index": "src/api/index.ts",
  },
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "es2022",
  platform: "neutral",
  // node: builtins are loaded lazily and only where they exist (file adapter, v8 codec).
  external: ["sql.js", /^node:/],
  splitting: false,
  treeshake: true,
});
