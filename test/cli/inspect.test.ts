/**
 * actorstore-inspect against a real persisted directory: every command in-process, the export
 * opened by a second, independent sql.js database, and the executable once as a child process.
 */
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import initSqlJs from "sql.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runInspect } from "../../src/cli/inspect-commands";
import { ObjectStorage } from "../../src/index";

interface Run {
  code: number;
  out: string[];
  err: string[];
}

async function inspectCli(...argv: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runInspect(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe("actorstore-inspect", () => {
  let dir: string;
  let bookmarkBeforeDelete: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "actorstore-inspect-"));
    const storage = await ObjectStorage.open({ directory: dir });
    await storage.put({ "user:1": { name: "Ada" }, "user:2": { name: "Lin" }, config: new Map([["theme", "dark"]]) });
    storage.sql.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL, note TEXT)");
    storage.sql.exec("INSERT INTO orders (total, note) VALUES (9.5, 'first'), (20, NULL)");
    bookmarkBeforeDelete = await storage.getCurrentBookmark();
    storage.sql.exec("DELETE FROM orders WHERE id = 1");
    await storage.delete("user:2");
    await storage.close();
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("keys: lists keys in order, with --prefix and --limit", async () => {
    expect((await inspectCli(dir, "keys")).out).toEqual(["config", "user:1"]);
    expect((await inspectCli(dir, "keys", "--prefix", "user:")).out).toEqual(["user:1"]);
    expect((await inspectCli(dir, "keys", "--limit=1")).out).toEqual(["config"]);
    expect((await inspectCli(dir, "keys", "--limit", "0")).code).toBe(2);
  });

  it("get: prints a value as Node inspects it; a missing key is exit code 1", async () => {
    expect((await inspectCli(dir, "get", "config")).out).toEqual(["Map(1) { 'theme' => 'dark' }"]);
    expect((await inspectCli(dir, "get", "user:1")).out).toEqual(["{ name: 'Ada' }"]);
    const missing = await inspectCli(dir, "get", "user:2");
    expect(missing.code).toBe(1);
    expect(missing.err.join("\n")).toContain('No key "user:2"');
  });

  it("sql: runs read-only SQL, hidden tables included", async () => {
    const run = await inspectCli(dir, "sql", "SELECT id, total, note FROM orders ORDER BY id");
    expect(run.code).toBe(0);
    expect(run.out).toEqual(["id\ttotal\tnote", "2\t20\tNULL"]);
    expect((await inspectCli(dir, "sql", "SELECT key FROM _cf_KV ORDER BY key")).out).toEqual([
      "key",
      "config",
      "user:1",
    ]);
  });

  it("sql: rejects writes, and they never reach the directory", async () => {
    for (const write of [
      "DELETE FROM orders",
      "INSERT INTO orders (total) VALUES (1)",
      "DROP TABLE orders",
      "CREATE TABLE t (x)",
    ]) {
      const run = await inspectCli(dir, "sql", write);
      expect(run.code, write).toBe(1);
      expect(run.err.join("\n"), write).toContain("only runs read-only SQL");
    }
    expect((await inspectCli(dir, "sql", "SELECT 1; DELETE FROM orders")).code).toBe(2);
    const storage = await ObjectStorage.open({ directory: dir });
    expect(storage.sql.exec("SELECT count(*) AS n FROM orders").one()).toEqual({ n: 1 });
    await storage.close();
  });

  it("bookmarks: one line per commit with its time and bookmark", async () => {
    const run = await inspectCli(dir, "bookmarks");
    expect(run.code).toBe(0);
    expect(run.out[0]).toBe("seq\ttime\tbookmark\tchange");
    expect(run.out[1]).toMatch(/^0\t\d{4}-\d\d-\d\dT[\d:.]+Z\t0{8}-0{8}-[0-9a-f]{8}-[0-9a-f]{32}\tthe empty database$/);
    const lines = run.out.slice(2);
    expect(lines.length).toBe(2); // the puts and the SQL of one turn are one commit
    for (const line of lines) expect(line).toMatch(/^\d+\t\d{4}-\d\d-\d\dT[\d:.]+Z\t[0-9a-f-]{59}\t.+$/);
    expect(run.out.some((l) => l.includes(bookmarkBeforeDelete))).toBe(true);
    // How many SQL writes the first commit logs is an internal detail (schema setup may add some).
    expect(run.out.join("\n")).toMatch(/\t3 keys, \d+ SQL writes?\n/);
  });

  it("restore: applies a bookmark and prints how to undo it", async () => {
    const run = await inspectCli(dir, "restore", bookmarkBeforeDelete);
    expect(run.err).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.out[0]).toBe(`restored to ${bookmarkBeforeDelete}`);
    const undo = run.out[2]?.split(" ").pop() as string;
    expect(undo).toMatch(/^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/);

    const storage = await ObjectStorage.open({ directory: dir });
    expect(storage.sql.exec("SELECT count(*) AS n FROM orders").one()).toEqual({ n: 2 });
    expect(await storage.get("user:2")).toEqual({ name: "Lin" });
    await storage.close();
  });

  it("restore: the printed undo bookmark undoes the restore in a later run", async () => {
    const run = await inspectCli(dir, "restore", bookmarkBeforeDelete);
    const undo = run.out[2]?.split(" ").pop() as string;
    const again = await inspectCli(dir, "restore", undo);
    expect(again.err).toEqual([]);
    expect((await inspectCli(dir, "keys")).out).toEqual(["config", "user:1"]);
  });

  it("restore: the printed undo line runs as printed, whatever the directory's name", async () => {
    const spaced = join(dir, "..", `${dir.split("/").pop()} it's here`);
    await cp(dir, spaced, { recursive: true });
    try {
      const run = await inspectCli(spaced, "restore", bookmarkBeforeDelete);
      expect(run.code, run.err.join("\n")).toBe(0);
      const line = run.out[2] as string;
      expect(line.startsWith("undo with: actorstore-inspect ")).toBe(true);
      // What a POSIX shell makes of the printed command is the command line that undoes the restore.
      const { stdout } = await promisify(execFile)("sh", [
        "-c",
        `printf '%s\\n' ${line.slice("undo with: actorstore-inspect ".length)}`,
      ]);
      const argv = stdout.split("\n").slice(0, -1);
      expect(argv.slice(0, 2)).toEqual([spaced, "restore"]);
      expect((await inspectCli(...argv)).code).toBe(0);
      expect((await inspectCli(spaced, "keys")).out).toEqual(["config", "user:1"]);
    } finally {
      await rm(spaced, { recursive: true, force: true });
    }
  });

  it("restore: a malformed bookmark fails without changing anything", async () => {
    const run = await inspectCli(dir, "restore", "not-a-bookmark");
    expect(run.code).toBe(1);
    expect((await inspectCli(dir, "keys")).out).toEqual(["config", "user:1"]);
  });

  it("export: writes a standard SQLite file that another sql.js database opens", async () => {
    const file = join(dir, "..", `${dir.split("/").pop()}-export.sqlite`);
    try {
      const run = await inspectCli(dir, "export", file);
      expect(run.code).toBe(0);
      // The options actorstore loads sql.js with: the first initSqlJs() call's options hold for the
      // whole process, and the defaults would give every later connection the legacy functions.
      const SQL = await initSqlJs({ useOldExtensionFunctions: false } as object);
      const db = new SQL.Database(await readFile(file));
      expect(db.exec("SELECT id, total FROM orders")[0]?.values).toEqual([[2, 20]]);
      expect(db.exec("SELECT key FROM _cf_KV ORDER BY key")[0]?.values).toEqual([["config"], ["user:1"]]);
      expect(db.exec("PRAGMA integrity_check")[0]?.values).toEqual([["ok"]]);
      db.close();
    } finally {
      await rm(file, { force: true });
    }
  });

  it("export: a missing folder or a directory as the target is named with what to do", async () => {
    // Regression: Node's bare "ENOENT: no such file or directory, open …" and "EISDIR: illegal
    // operation on a directory, open" reached the user.
    const missing = join(dir, "..", `${dir.split("/").pop()}-no-such-folder`, "out.sqlite");
    const run = await inspectCli(dir, "export", missing);
    expect(run.code).toBe(1);
    expect(run.err).toEqual([
      `error: ${dirname(missing)} does not exist: create it first, or export to a file in an existing directory.`,
    ]);
    const folder = await mkdtemp(join(tmpdir(), "actorstore-inspect-export-"));
    try {
      const onto = await inspectCli(dir, "export", folder, "--force");
      expect(onto.code).toBe(1);
      expect(onto.err).toEqual([`error: ${folder} is a directory: give the name of a file to write.`]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it("usage: no arguments, unknown commands and a missing directory", async () => {
    expect((await inspectCli()).code).toBe(2);
    expect((await inspectCli("--help")).out.join("\n")).toContain("Usage: actorstore-inspect");
    expect((await inspectCli(dir, "frobnicate")).code).toBe(2);
    const missing = await inspectCli(join(dir, "nope"), "keys");
    expect(missing.code).toBe(1);
    expect(missing.err).toEqual([
      `error: ${join(dir, "nope")} does not exist: pass the directory given to ObjectStorage.open({ directory }).`,
    ]);
    const file = join(dir, "..", `${dir.split("/").pop()}-a-file`);
    await writeFile(file, "x");
    try {
      expect((await inspectCli(file, "keys")).err.join("\n")).toContain(`${file} is not a directory`);
    } finally {
      await rm(file);
    }
  });

  it("usage: a mistyped command is exit code 2 whatever the location, and the location comes first", async () => {
    const unknown = await inspectCli(join(dir, "nope"), "frobnicate");
    expect(unknown).toMatchObject({ code: 2, out: [] });
    expect(unknown.err.join("\n")).toContain('Unknown command "frobnicate".');
    const swapped = await inspectCli("keys", dir);
    expect(swapped).toMatchObject({ code: 2, out: [] });
    expect(swapped.err.join("\n")).toContain("The location comes first: actorstore-inspect <directory> keys");
  });

  it("the executable: runs as a process and sets its exit code", async () => {
    const root = resolve(import.meta.dirname, "../..");
    const tsx = pathToFileURL(join(root, "node_modules/tsx/dist/loader.mjs")).href;
    const { stdout } = await promisify(execFile)(process.execPath, [
      "--import",
      tsx,
      join(root, "src/cli/inspect.ts"),
      dir,
      "keys",
    ]);
    expect(stdout).toBe("config\nuser:1\n");
    await expect(
      promisify(execFile)(process.execPath, ["--import", tsx, join(root, "src/cli/inspect.ts"), dir, "nope"]),
    ).rejects.toMatchObject({ code: 2 });
  });
});
