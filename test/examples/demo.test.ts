/**
 * The demo as users run it: a child process, twice over the same directory (the second run must find
 * the first run's data), and once with `--memory` (which must not touch the disk).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const demo = join(root, "examples/demo.ts");
// By URL: the demo runs with a temporary cwd, where a bare "tsx" would not resolve.
const tsxLoader = pathToFileURL(join(root, "node_modules/tsx/dist/loader.mjs")).href;

async function runDemo(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ["--import", tsxLoader, demo, ...args], { cwd, timeout: 60_000 });
  return stdout;
}

describe("examples/demo.ts", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "actorstore-demo-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("demo: persists in ./.actorstore-demo by default, and a second run finds the data", async () => {
    const first = await runDemo(dir);
    expect(first).toContain(`storage: commit log and snapshots in ${join(dir, ".actorstore-demo", "warehouse-1")}`);
    expect(first).toContain("[1] run #1 of this object: a fresh database");
    expect(first).toContain("[2] SQL: restocked gadget=5, widget=3");
    expect(first).toContain(
      "[3] input gate: 10 concurrent GET /visit moved visits 0 -> 10 (each saw a distinct value: yes)",
    );
    expect(first).toContain("-> 3 reserved, 2 refused (only 0 left); gadget=5, widget=0");
    expect(first).toMatch(/attempt 1 \(due \+30\.0 s\): failed \(supplier API unavailable\), retryCount=0/);
    expect(first).toMatch(/retry planned at \+32\.\d s \(backoff 2250 ms\)/);
    expect(first).toMatch(/attempt 2 \(due \+32\.\d s\): ok, retryCount=1/);
    expect(first).toContain("after the alarm: gadget=5, widget=3; alarm now null");
    expect(first).toMatch(
      /\[6\] bookmark [0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}; then a bad bulk update: gadget=0, widget=0/,
    );
    expect(first).toContain('[7] restore requested; the object reset itself ("Restoring to a bookmark.")');
    expect(first).toContain("next event, new session: gadget=5, widget=3 (resets so far: 1)");
    expect(await readdir(join(dir, ".actorstore-demo", "warehouse-1"))).not.toHaveLength(0);

    const second = await runDemo(dir);
    expect(second).toContain(
      "[1] run #2 of this object: the data survived (1 earlier run(s), 3 reservations on record)",
    );
    expect(second).toContain("moved visits 10 -> 20");
    expect(second).toContain("next event, new session: gadget=5, widget=3");
  });

  it("demo: --memory runs the same story without touching the disk", async () => {
    const cwd = await mkdtemp(join(tmpdir(), "actorstore-demo-mem-"));
    try {
      const out = await runDemo(cwd, "--memory");
      expect(out).toContain("storage: in memory (--memory)");
      expect(out).toContain("[1] run #1 of this object: a fresh database");
      expect(out).toContain("attempt 2 (due +32.3 s): ok, retryCount=1");
      expect(out).toContain("next event, new session: gadget=5, widget=3 (resets so far: 1)");
      expect(await readdir(cwd)).toEqual([]);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it("demo: an unknown or incomplete flag is refused with exit code 2 before anything runs or touches the disk", async () => {
    const cwd = await mkdtemp(join(tmpdir(), "actorstore-demo-typo-"));
    try {
      const failed = await runDemo(cwd, "--memroy").then(
        () => undefined,
        (e: unknown) => e as { code: number; stderr: string },
      );
      expect(failed?.code).toBe(2);
      expect(failed?.stderr).toContain("Unknown option --memroy");
      expect(await readdir(cwd)).toEqual([]);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it("demo: a directory it cannot use is reported in one actionable line, without a stack trace (exit code 1)", async () => {
    const cwd = await mkdtemp(join(tmpdir(), "actorstore-demo-file-"));
    try {
      await writeFile(join(cwd, "not-a-dir"), "");
      const failed = await runDemo(cwd, "--dir", "not-a-dir").then(
        () => undefined,
        (e: unknown) => e as { code: number; stderr: string },
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr.trim()).toMatch(
        /^ActorStoreError ERR_DIRECTORY: The storage directory .*not-a-dir.* is a file, not a directory\. Choose another directory/,
      );
      expect(failed?.stderr.trim().split("\n")).toHaveLength(1);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});

describe("parseDemoArgs", () => {
  it("reads every flag and refuses the rest, saying which", async () => {
    const { parseDemoArgs } = await import("../../examples/demo");
    expect(parseDemoArgs([])).toEqual({
      cluster: false,
      directory: resolve(".actorstore-demo", "warehouse-1"),
      bucket: undefined,
    });
    expect(parseDemoArgs(["--memory"])).toEqual({ cluster: false, directory: undefined, bucket: undefined });
    expect(parseDemoArgs(["--dir", "/tmp/x"])).toEqual({
      cluster: false,
      directory: "/tmp/x/warehouse-1",
      bucket: undefined,
    });
    expect(parseDemoArgs(["--cluster"])).toEqual({ cluster: true, directory: undefined, bucket: undefined });
    expect(parseDemoArgs(["--cluster", "--bucket", "{}"])).toEqual({
      cluster: true,
      directory: undefined,
      bucket: "{}",
    });
    expect(() => parseDemoArgs(["--memroy"])).toThrow(/Unknown option --memroy/);
    expect(() => parseDemoArgs(["--dir"])).toThrow(/--dir needs a value/);
    expect(() => parseDemoArgs(["--dir", "--memory"])).toThrow(/--dir needs a value/);
    expect(() => parseDemoArgs(["--memory", "--dir", "x"])).toThrow(/takes no --dir/);
    expect(() => parseDemoArgs(["--bucket", "{}"])).toThrow(/--bucket is for --cluster/);
  });
});
