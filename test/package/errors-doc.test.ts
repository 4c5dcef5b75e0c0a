/**
 * docs/errors.md against the source: every code an `ActorStoreError` can carry is thrown somewhere in
 * `src/` and documented, and the document names no code that does not exist. A code that is listed
 * but never thrown would have users write handlers that never run; a code thrown but not documented
 * leaves them without the "what to do".
 */
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ACTOR_STORE_ERROR_CODES } from "../../src/errors";
import { ROOT } from "./ensure-dist";

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) =>
      e.isDirectory()
        ? sourceFiles(join(dir, e.name))
        : Promise.resolve(e.name.endsWith(".ts") ? [join(dir, e.name)] : []),
    ),
  );
  return nested.flat();
}

/** Each code passed as a literal to `new ActorStoreError(...)` in src/, with the files that throw it. */
async function thrownCodes(): Promise<Map<string, string[]>> {
  const thrown = new Map<string, string[]>();
  for (const file of await sourceFiles(join(ROOT, "src"))) {
    const text = await readFile(file, "utf8");
    for (const match of text.matchAll(/new ActorStoreError\(\s*"(ERR_[A-Z_]+)"/g)) {
      const code = match[1] as string;
      thrown.set(code, [...(thrown.get(code) ?? []), relative(ROOT, file)]);
    }
  }
  return thrown;
}

describe("docs/errors.md and the ActorStoreError codes", () => {
  it("documents every code, and every code is thrown somewhere in src/", async () => {
    const doc = await readFile(join(ROOT, "docs/errors.md"), "utf8");
    const thrown = await thrownCodes();
    expect(thrown.size).toBeGreaterThan(0);
    const undocumented = ACTOR_STORE_ERROR_CODES.filter((code) => !doc.includes(`ActorStoreError ${code}`));
    const neverThrown = ACTOR_STORE_ERROR_CODES.filter((code) => !thrown.has(code));
    expect({ undocumented, neverThrown }).toEqual({ undocumented: [], neverThrown: [] });
  });

  it("names no code that does not exist", async () => {
    const doc = await readFile(join(ROOT, "docs/errors.md"), "utf8");
    const named = new Set([...doc.matchAll(/ActorStoreError[`\s]+(ERR_[A-Z_]+)/g)].map((m) => m[1] as string));
    const thrown = await thrownCodes();
    const known: readonly string[] = ACTOR_STORE_ERROR_CODES;
    expect([...named].filter((code) => !known.includes(code))).toEqual([]);
    expect([...thrown.keys()].filter((code) => !known.includes(code))).toEqual([]);
  });
});
