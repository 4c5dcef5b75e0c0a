/**
 * The persistence factories check their options with the same validator as ObjectStorage.open
 * (issue: options that say when they are wrong): createMemoryPersistence, openFilePersistence,
 * openIndexedDbPersistence. Each bad input is a TypeError with code ERR_INVALID_OPTION that names
 * the option and lists the valid ones; a near miss gets a "did you mean".
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IDBKeyRange, indexedDB } from "fake-indexeddb";
import { afterAll, describe, expect, it } from "vitest";
import { openIndexedDbPersistence } from "../../src/durability/indexeddb-persistence";
import { createMemoryPersistence, ObjectStorage, openFilePersistence } from "../../src/index";

const dir = mkdtempSync(join(tmpdir(), "persistence-options-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The error of `fn` (sync throw or rejection), checked to be the shared validator's. */
async function optionError(fn: () => unknown): Promise<TypeError & { option?: string }> {
  let error: unknown;
  try {
    await fn();
  } catch (e) {
    error = e;
  }
  expect(error, "expected an error").toBeInstanceOf(TypeError);
  expect((error as { code?: string }).code).toBe("ERR_INVALID_OPTION");
  return error as TypeError & { option?: string };
}

const memory = (o: unknown) => () => createMemoryPersistence(o as never);
const file =
  (o: unknown, d: unknown = dir) =>
  () =>
    openFilePersistence(d as string, o as never);
const idb =
  (o: unknown, ...name: unknown[]) =>
  () =>
    openIndexedDbPersistence((name.length === 0 ? "x" : name[0]) as string, o as never);

describe("createMemoryPersistence(options)", () => {
  it("unknown names: the valid one listed, a near miss named", async () => {
    const e = await optionError(memory({ maxHistoryByte: 1024 }));
    expect(e.message).toBe(
      'createMemoryPersistence(): unknown option "maxHistoryByte" (did you mean "maxHistoryBytes"?). Valid options: maxHistoryBytes.',
    );
    expect(e.option).toBe("maxHistoryByte");
    expect((await optionError(memory({ MaxHistoryBytes: 1 }))).message).toContain('(did you mean "maxHistoryBytes"?)');
    expect((await optionError(memory({ directory: "./data" }))).message).toMatch(
      /unknown option "directory"\. Valid options: maxHistoryBytes\.$/,
    );
  });

  it.each([0, -1, 0.5, Number.NaN, Number.NEGATIVE_INFINITY, "1", null, true, {}])(
    "maxHistoryBytes: %s is refused, naming the option and what it takes",
    async (bad) => {
      const e = await optionError(memory({ maxHistoryBytes: bad }));
      expect(e.message).toMatch(
        /^createMemoryPersistence\(\): option "maxHistoryBytes" must be a number ≥ 1 \(bytes\) or Infinity .*; got /,
      );
      expect(e.option).toBe("maxHistoryBytes");
    },
  );

  it("options that are not an object are refused; good ones work", async () => {
    expect((await optionError(memory("big"))).message).toMatch(/options must be an object/);
    expect((await optionError(memory([1]))).message).toMatch(/options must be an object/);
    expect(createMemoryPersistence({ maxHistoryBytes: 4096 }).maxHistoryBytes).toBe(4096);
    expect(createMemoryPersistence({ maxHistoryBytes: Number.POSITIVE_INFINITY }).maxHistoryBytes).toBe(
      Number.POSITIVE_INFINITY,
    );
    expect(createMemoryPersistence({}).maxHistoryBytes).toBe(64 * 1024 * 1024);
  });
});

describe("openFilePersistence(directory, options)", () => {
  it("unknown names: valid ones listed, near misses named", async () => {
    const e = await optionError(file({ segmentByte: 1024 }));
    expect(e.message).toBe(
      'openFilePersistence(): unknown option "segmentByte" (did you mean "segmentBytes"?). Valid options: segmentBytes, allowUnsyncedWrites, readOnly.',
    );
    expect((await optionError(file({ allowUnsynced: true }))).message).toMatch(
      /unknown option "allowUnsynced"\. Valid options: segmentBytes, allowUnsyncedWrites, readOnly\.$/,
    );
    expect((await optionError(file({ readonly: true }))).message).toContain('(did you mean "readOnly"?)');
    expect((await optionError(file({ dir: "x" }))).message).toMatch(/unknown option "dir"\. Valid options: /);
  });

  it.each([
    [{ segmentBytes: 0 }, "segmentBytes", "an integer ≥ 1 (bytes)"],
    [{ segmentBytes: 1.5 }, "segmentBytes", "an integer ≥ 1 (bytes)"],
    [{ segmentBytes: "8MB" }, "segmentBytes", "an integer ≥ 1 (bytes)"],
    [{ allowUnsyncedWrites: "yes" }, "allowUnsyncedWrites", "true or false"],
    [{ readOnly: 1 }, "readOnly", "true or false"],
  ])("%j is refused", async (options, name, expected) => {
    const e = await optionError(file(options));
    expect(e.message).toMatch(
      new RegExp(`^openFilePersistence\\(\\): option "${name}" must be ${expected.replace(/[()]/g, "\\$&")}; got `),
    );
    expect(e.option).toBe(name);
  });

  it("the directory must be a non-empty string; nothing is created for a refused call", async () => {
    expect((await optionError(file({}, ""))).message).toBe(
      'openFilePersistence(): directory must be a non-empty string; got "".',
    );
    expect((await optionError(file({}, 42))).message).toBe(
      "openFilePersistence(): directory must be a non-empty string; got number.",
    );
    const target = join(dir, "never");
    await optionError(file({ segmentBytes: -1 }, target));
    await expect(import("node:fs/promises").then((fs) => fs.stat(target))).rejects.toThrow(/ENOENT/);
  });

  it("good options work, and ObjectStorage.open({ directory }) still opens", async () => {
    const adapter = await openFilePersistence(join(dir, "ok"), { segmentBytes: 4096, allowUnsyncedWrites: true });
    const storage = await ObjectStorage.open({ persistence: adapter });
    await storage.put("k", 1);
    await storage.close();
    const again = await ObjectStorage.open({ directory: join(dir, "ok") });
    expect(await again.get("k")).toBe(1);
    await again.close();
  });
});

describe("openIndexedDbPersistence(name, options)", () => {
  const good = { indexedDB, IDBKeyRange };

  it("unknown names: valid ones listed, near misses named", async () => {
    const e = await optionError(idb({ ...good, indexDB: indexedDB }));
    expect(e.message).toBe(
      'openIndexedDbPersistence(): unknown option "indexDB" (did you mean "indexedDB"?). Valid options: indexedDB, IDBKeyRange, openTimeoutMs, clock.',
    );
    expect((await optionError(idb({ idbKeyRange: IDBKeyRange }))).message).toContain('(did you mean "IDBKeyRange"?)');
  });

  it("wrong types are refused, naming what is needed", async () => {
    expect((await optionError(idb({ ...good, openTimeoutMs: 0 }))).message).toMatch(
      /^openIndexedDbPersistence\(\): option "openTimeoutMs" must be/,
    );
    expect((await optionError(idb({ ...good, clock: {} }))).message).toMatch(
      /^openIndexedDbPersistence\(\): option "clock" must be a clock such as systemClock or a FakeClock/,
    );
    expect((await optionError(idb({ indexedDB: {} }))).message).toMatch(
      /^openIndexedDbPersistence\(\): option "indexedDB" must be an IndexedDB factory such as the global indexedDB \(missing open\); got an object\.$/,
    );
    expect((await optionError(idb({ indexedDB, IDBKeyRange: "range" }))).message).toMatch(
      /option "IDBKeyRange" must be the IDBKeyRange class that goes with it; got "range"\./,
    );
    expect((await optionError(idb(null))).message).toMatch(/options must be an object/);
  });

  it("the name must be a non-empty string", async () => {
    expect((await optionError(idb(good, ""))).message).toBe(
      'openIndexedDbPersistence(): name must be a non-empty string; got "".',
    );
    expect((await optionError(idb(good, undefined))).message).toBe(
      "openIndexedDbPersistence(): name must be a non-empty string; got undefined.",
    );
  });

  it("good options work", async () => {
    const adapter = await openIndexedDbPersistence(`ok-${Math.random()}`, good);
    const storage = await ObjectStorage.open({ persistence: adapter, codec: "structured" });
    await storage.put("k", 2);
    expect(await storage.get("k")).toBe(2);
    await storage.close();
  });
});
