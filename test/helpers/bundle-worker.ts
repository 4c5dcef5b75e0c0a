/**
 * Bundles a test's child-process worker once with esbuild, for the tests that kill real processes
 * (crash, point-in-time recovery, the directory lock): a plain `node` child starts faster than one
 * through tsx, and a SIGKILL then hits the worker itself.
 */
import { mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { build } from "esbuild";

/** The project's root directory. */
export const projectRoot = resolve(import.meta.dirname, "../..");

/**
 * Bundles `entry` (a path from the project root) into `outfile`, an ES module for Node 20 that
 * imports sql.js from the project (so `outfile` belongs inside node_modules, where that resolves).
 */
export async function bundleWorker(entry: string, outfile: string): Promise<void> {
  await mkdir(dirname(outfile), { recursive: true });
  await build({
    entryPoints: [join(projectRoot, entry)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["sql.js"],
    outfile,
    logLevel: "error",
  });
}
