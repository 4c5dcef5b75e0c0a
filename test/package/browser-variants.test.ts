/**
 * The browser build is made from `x.browser.ts` in place of `x.ts` where such a sibling exists
 * (tsup.config.ts). Each variant must export the same names as the module it replaces, with the same
 * constants, so that code written against the Node build's exports resolves in the browser build
 * too; its functions reject saying they need Node.
 */
import { readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./ensure-dist";

const SRC = join(ROOT, "src");

async function variants(): Promise<string[]> {
  const files = await readdir(SRC, { recursive: true });
  return files.filter((f) => f.endsWith(".browser.ts")).map((f) => join(SRC, f));
}

describe("browser variants of modules", () => {
  it("exist for the file adapter and the test kit's API server", async () => {
    expect((await variants()).map((f) => relative(SRC, f)).sort()).toEqual([
      "durability/file-persistence.browser.ts",
      "testkit/api-server.browser.ts",
    ]);
  });

  it("export the same names and constants as the module each replaces", async () => {
    for (const variant of await variants()) {
      const browser = (await import(variant)) as Record<string, unknown>;
      const node = (await import(variant.replace(/\.browser\.ts$/, ".ts"))) as Record<string, unknown>;
      expect(Object.keys(browser).sort(), variant).toEqual(Object.keys(node).sort());
      for (const [name, value] of Object.entries(node))
        if (typeof value === "function") expect(typeof browser[name], `${variant}: ${name}`).toBe("function");
        else expect(browser[name], `${variant}: ${name}`).toEqual(value);
    }
  });

  it("the browser openFilePersistence checks its arguments as the Node one does, then says it needs Node", async () => {
    const browser = await import("../../src/durability/file-persistence.browser");
    const node = await import("../../src/durability/file-persistence");
    for (const [dir, options] of [
      ["", {}],
      ["d", { segmentByte: 1 }],
      ["d", { readOnly: "yes" }],
    ] as const) {
      const expected = await node.openFilePersistence(dir, options as never).then(
        () => undefined,
        (e: Error) => e,
      );
      await expect(browser.openFilePersistence(dir, options as never)).rejects.toMatchObject({
        name: expected?.name,
        message: expected?.message,
      });
    }
    await expect(browser.openFilePersistence("./data")).rejects.toThrow(
      /^node:fs\/promises is not available in actorstore's browser build/,
    );
  });

  it("the browser startTestApiServer rejects with ERR_INVALID_OPTION naming what it needs", async () => {
    const { startTestApiServer } = await import("../../src/testkit/api-server.browser");
    await expect(startTestApiServer()).rejects.toMatchObject({
      name: "ActorStoreError",
      code: "ERR_INVALID_OPTION",
      message: expect.stringMatching(/needs Node\.js \(node:http\)/),
    });
  });
});
