/**
 * The inspector reaches the object through whatever adapter it is given: here the in-memory one,
 * through `runInspect(…, { open })` and through `--adapter <module>`, with no directory anywhere.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runInspect } from "../../src/cli/inspect-commands";
import { ReadOnlyPersistence } from "../../src/cli/read-only-persistence";
import { createMemoryPersistence } from "../../src/durability/memory-persistence";
import { ObjectStorage } from "../../src/index";
import { memoryAdapters } from "./fixtures/memory-opener";

const MODULE = fileURLToPath(new URL("./fixtures/memory-opener.ts", import.meta.url));

async function inspect(argv: string[], options = {}): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runInspect(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, options);
  return { code, out, err };
}

async function filledMemoryObject(): Promise<{
  persistence: ReturnType<typeof createMemoryPersistence>;
  early: string;
}> {
  const persistence = createMemoryPersistence();
  const storage = await ObjectStorage.open({ persistence });
  await storage.put("user:1", { name: "Ada" });
  const early = await storage.getCurrentBookmark();
  await storage.put("user:2", { name: "Lin" });
  storage.sql.exec("CREATE TABLE t (n INTEGER)");
  storage.sql.exec("INSERT INTO t VALUES (1), (2), (3)");
  await storage.close();
  return { persistence, early };
}

describe("actorstore-inspect over any adapter", () => {
  it("the read-only view refuses every write with ERR_CLOSED, as an adapter opened with readOnly does, and the data stays", async () => {
    const { persistence } = await filledMemoryObject();
    const view = new ReadOnlyPersistence(persistence);
    const loaded = await view.load();
    const writes = [
      () => view.append([]),
      () => view.writeSnapshot({ seq: loaded.lastSeq, timeMs: 0 }, new Uint8Array(8)),
      () => view.writeMetaIf(0, new Uint8Array(1)),
    ];
    for (const write of writes) {
      const error = await write().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ name: "ActorStoreError", code: "ERR_CLOSED" });
      expect((error as Error).message).toMatch(/^The inspector opened this directory read-only and cannot /);
    }
    expect((await persistence.load()).lastSeq).toBe(loaded.lastSeq);
  });

  it("runInspect with an opener: keys, get, sql, bookmarks and restore on an in-memory object", async () => {
    const { persistence, early } = await filledMemoryObject();
    const opened: string[] = [];
    const open = (location: string, mode: "read" | "write") => {
      opened.push(`${location}:${mode}`);
      return persistence;
    };
    expect(await inspect(["mem:room-1", "keys"], { open })).toMatchObject({ code: 0, out: ["user:1", "user:2"] });
    const got = await inspect(["mem:room-1", "get", "user:2"], { open });
    expect(got.code).toBe(0);
    expect(got.out.join("\n")).toContain("Lin");
    const rows = await inspect(["mem:room-1", "sql", "SELECT sum(n) AS s FROM t"], { open });
    expect(rows).toMatchObject({ code: 0, out: ["s", "6"] });
    const marks = await inspect(["mem:room-1", "bookmarks"], { open });
    expect(marks.code).toBe(0);
    // The empty database, then the two commits (the second put and the SQL commit together), newest last.
    expect(marks.out.slice(1).map((l) => l.split("\t")[0])).toEqual(["0", "1", "2"]);
    expect(opened.every((o) => o === "mem:room-1:read")).toBe(true);

    const restored = await inspect(["mem:room-1", "restore", early], { open });
    expect(restored.code).toBe(0);
    expect(opened).toContain("mem:room-1:write");
    expect(await inspect(["mem:room-1", "keys"], { open })).toMatchObject({ code: 0, out: ["user:1"] });
  });

  it("--adapter <module>: the command line loads the opener from a module", async () => {
    const { persistence } = await filledMemoryObject();
    memoryAdapters().set("mem:room-2", persistence);
    expect(await inspect(["--adapter", MODULE, "mem:room-2", "keys"])).toMatchObject({
      code: 0,
      out: ["user:1", "user:2"],
    });
    // restore's undo line names the adapter too, so that it runs as printed.
    const early = await inspect(["--adapter", MODULE, "mem:room-2", "bookmarks"]);
    const first = early.out.find((l) => l.startsWith("1\t"))?.split("\t")[2] as string;
    const restored = await inspect(["--adapter", MODULE, "mem:room-2", "restore", first]);
    expect(restored.code, restored.err.join("\n")).toBe(0);
    const undo = restored.out[2]?.split(" ").pop() as string;
    expect(restored.out[2]).toBe(`undo with: actorstore-inspect --adapter ${MODULE} mem:room-2 restore ${undo}`);
    expect(await inspect(["--adapter", MODULE, "mem:room-2", "keys"])).toMatchObject({ out: ["user:1"] });
    expect((await inspect(["--adapter", MODULE, "mem:room-2", "restore", undo])).code).toBe(0);
    expect(await inspect(["--adapter", MODULE, "mem:room-2", "keys"])).toMatchObject({ out: ["user:1", "user:2"] });
    const missing = await inspect(["--adapter", MODULE, "mem:nowhere", "keys"]);
    expect(missing.code).toBe(1);
    expect(missing.err.join("\n")).toContain("no object at mem:nowhere");
  });

  it("a module without an opener, a missing module name, and repair on a non-directory are clear errors", async () => {
    const notOpener = fileURLToPath(new URL("./inspect-adapter.test.ts", import.meta.url));
    const bad = await inspect(["--adapter", notOpener, "x", "keys"]);
    expect(bad.code).toBe(1);
    expect(bad.err.join("\n")).toMatch(/does not export an opener/);
    expect((await inspect(["--adapter"])).code).toBe(2);
    const { persistence } = await filledMemoryObject();
    const repair = await inspect(["mem:x", "repair"], { open: () => persistence });
    expect(repair.code).toBe(1);
    expect(repair.err.join("\n")).toMatch(/repair works on a directory only/);
  });
});
