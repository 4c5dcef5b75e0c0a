/**
 * The package tests run against `dist/`. `npm test` builds it first (`check:package`); when a test
 * file runs on its own and there is no build, build once (a lock directory keeps two test files
 * from building over each other).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, "../..");
/** The built files every package test needs. */
const OUTPUTS = [
  "dist/index.js",
  "dist/api/index.js",
  "dist/testkit/index.js",
  "dist/cli/inspect.js",
  "dist/browser/index.js",
  "dist/browser/testkit/index.js",
  "dist/server/index.js",
  "dist/s3/index.js",
];

/** Builds `dist/` unless it is there. Returns the dist directory. */
export async function ensureDist(): Promise<string> {
  const lock = join(ROOT, ".tmp", "build.lock");
  const deadline = Date.now() + 300_000;
  for (;;) {
    if (Date.now() > deadline)
      throw new Error(`Timed out waiting for ${lock}: remove it if no build is running, or run npm run build.`);
    if (OUTPUTS.every((f) => existsSync(join(ROOT, f))) && !existsSync(lock)) return join(ROOT, "dist");
    try {
      await mkdir(join(ROOT, ".tmp"), { recursive: true });
      await mkdir(lock);
    } catch {
      // Another test file is building: wait for it.
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    try {
      await promisify(execFile)(process.execPath, [join(ROOT, "node_modules/tsup/dist/cli-default.js")], {
        cwd: ROOT,
        timeout: 240_000,
      });
    } finally {
      await rm(lock, { recursive: true, force: true });
    }
  }
}
