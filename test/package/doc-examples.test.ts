/**
 * The documentation's complete examples, run as a newcomer runs them: each block is copied into a
 * file of its own in an empty directory (its relative paths, like `./data`, land there) and run by
 * Node through tsx, with `actorstore` imports pointed at this repository's source. A block that
 * throws fails the test with its output.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./ensure-dist";

const tsxLoader = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const ENTRIES: Record<string, string> = {
  actorstore: "src/index.ts",
  "actorstore/testkit": "src/testkit/index.ts",
};

const root = await mkdtemp(join(tmpdir(), "actorstore-doc-examples-"));
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The `n`th ```ts block of a document (0-based). */
async function block(file: string, n: number): Promise<string> {
  const text = await readFile(join(ROOT, file), "utf8");
  const code = [...text.matchAll(/```ts\n([\s\S]*?)```/g)][n]?.[1];
  if (code === undefined) throw new Error(`${file} has no ts block ${n}`);
  return code;
}

/** Runs `code` as an ES module in a fresh directory; resolves with its output, rejects with it. */
async function run(name: string, code: string): Promise<string> {
  const dir = await mkdtemp(join(root, `${name}-`));
  const source = code.replace(/from "(actorstore(?:\/testkit)?)"/g, (whole, entry: string) => {
    const path = ENTRIES[entry];
    return path === undefined ? whole : `from ${JSON.stringify(pathToFileURL(join(ROOT, path)).href)}`;
  });
  await writeFile(join(dir, "example.mts"), source);
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", tsxLoader, "example.mts"], {
    cwd: dir,
    timeout: 60_000,
  });
  return stdout;
}

describe("documentation examples run as written", () => {
  it("README: the storage quick start", async () => {
    await expect(run("readme-storage", await block("README.md", 0))).resolves.toBe("");
  });

  it("README: an object, its events and its alarm (persisted under ./data)", async () => {
    await expect(run("readme-object", await block("README.md", 1))).resolves.toBe("");
  });

  it("hosting.md: the first host example, RPC and fetch() through a stub", async () => {
    await expect(run("hosting", await block("docs/hosting.md", 0))).resolves.toBe("");
  });

  it("hosting.md: references and pipelining (an RpcTarget, a callback)", async () => {
    await expect(run("hosting-references", await block("docs/hosting.md", 1))).resolves.toBe("");
  });
});
