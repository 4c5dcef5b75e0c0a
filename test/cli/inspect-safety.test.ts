/**
 * The inspector as a newcomer and a careful operator meet it: it never changes a directory it reads
 * (not even a torn tail or a leftover temp file), reads while the object is open and refuses to
 * change it then, says when a directory is not an object's, exits quietly when its reader goes away,
 * never overwrites a file without --force, and `bookmarks` differs from `bookmarks --all` as the
 * help says.
 */
import { execFile } from "node:child_process";
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { INSPECT_USAGE, runInspect } from "../../src/cli/inspect-commands";
import { ObjectStorage } from "../../src/index";

const root = await mkdtemp(join(tmpdir(), "actorstore-inspect-safety-"));
let counter = 0;
const freshDir = () => join(root, `d-${++counter}`);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function inspectCli(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runInspect(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

/** Every file of a directory with its bytes. */
async function contents(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir)).sort()) out[name] = (await readFile(join(dir, name))).toString("base64");
  return out;
}

async function objectWith(keys: number): Promise<string> {
  const dir = freshDir();
  const storage = await ObjectStorage.open({ directory: dir });
  for (let i = 0; i < keys; i++) {
    await storage.put(`key:${String(i).padStart(5, "0")}`, i);
    await storage.sync(); // one commit each
  }
  await storage.close();
  return dir;
}

describe("actorstore-inspect: safety", () => {
  it("reading commands never change the directory: a torn tail and a temp file stay", async () => {
    const dir = await objectWith(3);
    const segment = (await readdir(dir)).find((n) => n.endsWith(".seg")) as string;
    await appendFile(join(dir, segment), new Uint8Array([0x20, 1, 2])); // a frame cut short
    await writeFile(join(dir, "meta.tmp"), "unfinished");
    const before = await contents(dir);
    const exportFile = join(root, `export-${counter}.sqlite`);
    for (const argv of [
      ["keys"],
      ["get", "key:00001"],
      ["sql", "SELECT count(*) FROM _cf_KV"],
      ["bookmarks"],
      ["export", exportFile],
    ]) {
      const run = await inspectCli(dir, ...argv);
      expect(run.code, `${argv.join(" ")}: ${run.err.join("\n")}`).toBe(0);
      expect(await contents(dir), argv.join(" ")).toEqual(before);
    }
    expect((await inspectCli(dir, "keys")).out).toEqual(["key:00000", "key:00001", "key:00002"]);
  });

  it("reads while the object is open; restore refuses with the holder's name", async () => {
    // The help says so, and asks no one to stop the owner for a read.
    expect(INSPECT_USAGE).toContain("restore and repair need the process that owns it stopped; reading does not");
    expect(INSPECT_USAGE).not.toMatch(/^Stop the process/m);
    const dir = await objectWith(2);
    const live = await ObjectStorage.open({ directory: dir });
    await live.put("key:live", 1);
    expect((await inspectCli(dir, "keys")).out).toEqual(["key:00000", "key:00001", "key:live"]);
    const bookmark = (await inspectCli(dir, "bookmarks")).out[1]?.split("\t")[2] as string;
    const restore = await inspectCli(dir, "restore", bookmark);
    expect(restore.code).toBe(1);
    expect(restore.err.join("\n")).toContain(`is open in process ${process.pid}`);
    await live.close();
    expect((await inspectCli(dir, "restore", bookmark)).code).toBe(0);
  });

  it("an empty or unrelated directory is 'not an actorstore directory', and stays untouched", async () => {
    const empty = freshDir();
    const unrelated = freshDir();
    await ObjectStorage.open().then((s) => s.close());
    for (const dir of [empty, unrelated]) await import("node:fs/promises").then((fs) => fs.mkdir(dir));
    await writeFile(join(unrelated, "notes.txt"), "hello");
    for (const dir of [empty, unrelated]) {
      const before = await contents(dir);
      for (const command of [["keys"], ["bookmarks"], ["sql", "SELECT 1"], ["export", join(root, "x.sqlite")]]) {
        const run = await inspectCli(dir, ...command);
        expect(run.code).toBe(1);
        expect(run.err.join("\n")).toContain("is not an actorstore directory");
      }
      expect(await contents(dir)).toEqual(before);
    }
  });

  it("a directory that holds objects' directories (an ObjectHost's directoryPerObject root) names some of them to pass instead", async () => {
    const hostRoot = freshDir();
    const objectDir = join(hostRoot, "COUNTER", "a1b2");
    const storage = await ObjectStorage.open({ directory: objectDir });
    await storage.put("n", 1);
    await storage.close();
    for (const dir of [hostRoot, join(hostRoot, "COUNTER")]) {
      const run = await inspectCli(dir, "keys");
      expect(run.code).toBe(1);
      expect(run.err).toEqual([
        `error: ${dir} is not an actorstore directory (it holds no log segments, snapshots or metadata), but the directories of objects are below it: ${objectDir}. Pass one of those.`,
      ]);
    }
    expect((await inspectCli(objectDir, "keys")).out).toEqual(["n"]);
  });

  it("export: refuses to overwrite an existing file without --force", async () => {
    const dir = await objectWith(1);
    const file = join(root, `existing-${counter}.sqlite`);
    await writeFile(file, "precious");
    const refused = await inspectCli(dir, "export", file);
    expect(refused.code).toBe(1);
    expect(refused.err.join("\n")).toContain("already exists; pass --force");
    expect(await readFile(file, "utf8")).toBe("precious");
    const forced = await inspectCli(dir, "export", file, "--force");
    expect(forced.code).toBe(0);
    expect((await readFile(file)).subarray(0, 15).toString()).toBe("SQLite format 3");
  });

  it("export: refuses a file name of the object's own directory (a log segment, snapshot, meta or lock), --force or not", async () => {
    const dir = await objectWith(3);
    const before = await contents(dir);
    const names = (await readdir(dir)).filter((n) => n.startsWith("snap-") || n.startsWith("lock-"));
    for (const name of ["log-0000000000000009.seg", "meta", ...names]) {
      for (const target of [join(dir, name), join(dir, "..", basename(dir), name)]) {
        for (const force of [[], ["--force"]]) {
          const run = await inspectCli(dir, "export", target, ...force);
          expect(run.code).toBe(1);
          expect(run.err.join("\n")).toContain("would be one of the object's own files");
        }
      }
    }
    expect(await contents(dir)).toEqual(before);
    expect(await inspectCli(dir, "keys")).toMatchObject({ code: 0 });
    // Any other name there is the user's business.
    expect((await inspectCli(dir, "export", join(dir, "backup.sqlite"))).code).toBe(0);
  });

  it("keys and sql print stored text so that it can neither split a line nor reach the terminal as escape sequences; get takes a key as keys prints it", async () => {
    const dir = freshDir();
    const hostile = [
      "two\nlines",
      "\u001b]0;title\u0007\u001b[2J",
      "tab\there",
      "c1\u009b31m",
      "bidi\u202eevil",
      "line\u2028separator",
      '"quoted"',
    ];
    const storage = await ObjectStorage.open({ directory: dir });
    await storage.put(Object.fromEntries([["plain é😀", 0], ...hostile.map((k, i) => [k, i + 1])]));
    storage.sql.exec("CREATE TABLE t (x TEXT)");
    for (const k of hostile) storage.sql.exec("INSERT INTO t VALUES (?)", k);
    await storage.close();
    const unsafe = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069\p{Cs}]/u;

    const keys = await inspectCli(dir, "keys");
    expect(keys.code).toBe(0);
    expect(keys.out).toHaveLength(hostile.length + 1);
    for (const line of keys.out) expect(line).not.toMatch(unsafe);
    expect(keys.out).toContain("plain é😀");
    // Each printed key is the stored key: plain as it is, the others as JSON strings.
    const printed = keys.out.map((l) => (l.startsWith('"') ? (JSON.parse(l) as string) : l));
    expect(printed.sort()).toEqual(["plain é😀", ...hostile].sort());
    for (const line of keys.out) {
      const got = await inspectCli(dir, "get", line);
      expect(got.code, line).toBe(0);
    }

    const rows = await inspectCli(dir, "sql", "SELECT x FROM t ORDER BY rowid");
    expect(rows.out.slice(1)).toHaveLength(hostile.length);
    for (const line of rows.out) expect(line).not.toMatch(unsafe);
    expect(rows.out.slice(1).map((l) => JSON.parse(l))).toEqual(hostile);
  });

  it("sql prints rows as it steps them: a statement that fails at its fourth row has printed three, and says so", async () => {
    const dir = freshDir();
    const storage = await ObjectStorage.open({ directory: dir });
    await storage.put("a", 1);
    await storage.close();
    const query =
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5) " +
      "SELECT CASE WHEN x = 4 THEN abs(-9223372036854775807 - 1) ELSE x END AS v FROM c";
    const run = await inspectCli(dir, "sql", query);
    expect(run.code).not.toBe(0);
    expect(run.out).toEqual(["v", "1", "2", "3"]);
    expect(run.err.join("\n")).toMatch(/integer overflow \(after 3 rows\)/);
    const whole = await inspectCli(dir, "sql", "SELECT 1 AS one WHERE 0");
    expect(whole).toMatchObject({ code: 0, out: ["one"] });
    expect(whole.err.join("\n")).toContain("(0 rows)");
  });

  it("get -- <key>: a key that looks like an option (--force, -h, --) is read after --", async () => {
    const dir = freshDir();
    const storage = await ObjectStorage.open({ directory: dir });
    await storage.put({ "--force": "f", "-h": "h", "--": "dd" });
    await storage.close();
    for (const [key, value] of [
      ["--force", "'f'"],
      ["-h", "'h'"],
      ["--", "'dd'"],
    ] as const)
      expect(await inspectCli(dir, "get", "--", key)).toMatchObject({ code: 0, out: [value] });
    expect((await inspectCli(dir, "get", "--force")).code).toBe(2);
    expect((await inspectCli(dir, "get", "-h")).out.join("\n")).toContain("Usage: actorstore-inspect");
    expect(INSPECT_USAGE).toContain("get -- <key>");
  });

  it("bookmarks shows the newest 50 commits; --all shows every one, as the help says", async () => {
    expect(INSPECT_USAGE).toContain("the newest 50 commits");
    expect(INSPECT_USAGE).toContain("--all:");
    const dir = await objectWith(60);
    const short = await inspectCli(dir, "bookmarks");
    const all = await inspectCli(dir, "bookmarks", "--all");
    const commits = (run: { out: string[] }) =>
      run.out.filter((l) => /^\d+\t/.test(l)).map((l) => Number(l.split("\t")[0]));
    expect(all.code).toBe(0);
    expect(commits(all)).toEqual(Array.from({ length: 61 }, (_, i) => i)); // seq 0 (empty) + 60 commits
    expect(commits(short)).toEqual([0, ...Array.from({ length: 50 }, (_, i) => i + 11)]);
    expect(short.out.join("\n")).toContain("10 earlier commits (--all shows them)");
    expect(all.out.join("\n")).not.toContain("earlier commits");
  });

  it("the executable exits quietly when its reader closes the pipe (keys | head -1)", async () => {
    const dir = await objectWith(1);
    // Enough keys that the output outlasts the pipe's buffer, in one batch.
    const storage = await ObjectStorage.open({ directory: dir });
    const entries: Record<string, number> = {};
    for (let i = 0; i < 6000; i++) entries[`k${String(i).padStart(6, "0")}-${"x".repeat(40)}`] = i;
    for (let i = 0; i < 6000; i += 128)
      await storage.put(Object.fromEntries(Object.entries(entries).slice(i, i + 128)));
    await storage.close();
    const repo = resolve(import.meta.dirname, "../..");
    const tsx = pathToFileURL(join(repo, "node_modules/tsx/dist/loader.mjs")).href;
    const cli = `"${process.execPath}" --import "${tsx}" "${join(repo, "src/cli/inspect.ts")}"`;
    const { stdout, stderr } = await promisify(execFile)("sh", [
      "-c",
      `${cli} "${dir}" keys | head -1; echo "status $?"`,
    ]);
    expect(stdout).toBe(`k000000-${"x".repeat(40)}\nstatus 0\n`);
    // No stack trace, no EPIPE: at most the key count diagnostic.
    expect(stderr).not.toMatch(/error|EPIPE|\n\s+at /i);
    // And the inspector's own status, without head's: 0.
    const { stdout: own } = await promisify(execFile)("bash", [
      "-c",
      `set -o pipefail; ${cli} "${dir}" keys | head -1 > /dev/null; echo "status $?"`,
    ]);
    expect(own).toBe("status 0\n");
  }, 60_000);
});
