/**
 * `actorstore-api serve`: started as a process, it serves the API until it is told to stop.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { hostRoot, objectDirectory } from "./actorstore-directories";
import { ENT_ZONE, FIXTURE, TOKEN } from "./helpers";

const CLI = fileURLToPath(new URL("../../src/server/cli.ts", import.meta.url));

function run(args: string[]) {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

describe("actorstore-api serve", () => {
  it("serves the fixture on the port it prints, with a directory, and stops on SIGTERM", async () => {
    const dir = await mkdtemp(join(tmpdir(), "actorstore-cli-"));
    try {
      const fixture = join(dir, "fixture.json");
      await writeFile(fixture, JSON.stringify(FIXTURE));
      const p = run(["serve", "--port", "0", "--directory", join(dir, "data"), "--token", TOKEN, "--fixture", fixture]);
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setInterval(() => {
          const m = /listening on (\S+)/.exec(p.out());
          if (m?.[1] !== undefined) {
            clearInterval(timer);
            resolve(m[1]);
          }
        }, 50);
        p.exited.then((code) => {
          clearInterval(timer);
          reject(new Error(`exited with ${code}: ${p.err()}`));
        });
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/client\/v4$/);
      const response = await fetch(`${url}/zones/${ENT_ZONE}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(response.status).toBe(200);
      const refused = await fetch(`${url}/zones/${ENT_ZONE}`, { headers: { authorization: "Bearer other" } });
      expect(refused.status).toBe(403);
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("exit codes are the inspector's: no command or an unknown one is a usage error (2, usage on stderr); --help is 0 on stdout", async () => {
    // Regression: no command printed the usage to stdout and exited 1, like a failure, where
    // actorstore-inspect prints it to stderr and exits 2; every usage error exited 1.
    const none = run([]);
    const help = run(["--help"]);
    const unknown = run(["serv"]);
    expect(await none.exited).toBe(2);
    expect(none.out()).toBe("");
    expect(none.err()).toMatch(/^Usage: actorstore-api serve/);
    expect(await help.exited).toBe(0);
    expect(help.out()).toMatch(/^Usage: actorstore-api serve/);
    expect(help.err()).toBe("");
    expect(await unknown.exited).toBe(2);
    expect(unknown.err()).toMatch(/^Unknown command serv\./);
  }, 60_000);

  it("refuses to start without credentials, and on an unknown option, saying why", async () => {
    const none = run(["serve", "--port", "0"]);
    expect(await none.exited).toBe(2);
    expect(none.err()).toMatch(/at least one --token/);
    const typo = run(["serve", "--prot", "1", "--token", "x"]);
    expect(await typo.exited).toBe(2);
    expect(typo.err()).toMatch(/Unknown option --prot/);
  }, 60_000);

  it("never repeats an argument's value in its errors (values may be tokens or keys), and reads --option=value", async () => {
    const secret = "s3cr3t-T0ken-value";
    const runs = [
      [["serve", secret], /Unexpected argument #1 \(not shown/],
      [["serve", "--port", "0", "--token", "x", secret], /Unexpected argument #5 \(not shown/],
      [["serve", `--tokn=${secret}`], /Unknown option --tokn\./],
      [["serve", "--token="], /--token needs a value/],
    ] as const;
    const started = runs.map(([args, expected]) => ({ p: run([...args]), expected }));
    for (const { p, expected } of started) {
      expect(await p.exited).toBe(2);
      expect(p.err()).toMatch(expected);
      expect(p.err() + p.out()).not.toContain(secret);
    }
    // --token=<token> is the token: the server starts and accepts it.
    const p = run(["serve", "--port=0", `--token=${secret}`]);
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setInterval(() => {
        const m = /listening on (\S+)/.exec(p.out());
        if (m?.[1] !== undefined) {
          clearInterval(timer);
          resolve(m[1]);
        }
      }, 50);
      p.exited.then((code) => {
        clearInterval(timer);
        reject(new Error(`exited with ${code}: ${p.err()}`));
      });
    });
    const response = await fetch(`${url}/zones`, { headers: { authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(200);
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
  }, 60_000);

  it("refuses a --directory that is an object's directory or a host's root: a usage error (2) that says why, without the path, writing nothing", async () => {
    // Regression: the server opened its own storage objects in <dir>/<record>/, writing them into
    // the object's directory or among the host's namespaces.
    const dir = await mkdtemp(join(tmpdir(), "actorstore-cli-dir-"));
    try {
      const object = await objectDirectory(join(dir, "object"));
      const root = await hostRoot(join(dir, "root"));
      const before = [await readdir(object, { recursive: true }), await readdir(root, { recursive: true })];
      const intoObject = run(["serve", "--port", "0", "--token", TOKEN, "--directory", object]);
      const intoRoot = run(["serve", "--port", "0", "--token", TOKEN, `--directory=${root}`]);
      expect(await intoObject.exited).toBe(2);
      expect(await intoRoot.exited).toBe(2);
      expect(intoObject.err()).toMatch(
        /^--directory is an actorstore object's directory \(it holds log segments, snapshots or metadata\): the API server would write its own storage objects into it, among that object's files\. Choose a directory of the API server's own: a new or empty one, or one it kept its state in before\.\n\nUsage: actorstore-api serve/,
      );
      expect(intoRoot.err()).toMatch(
        /^--directory is the root of a host's objects \(directoryPerObject: .*\n\nUsage: /,
      );
      for (const p of [intoObject, intoRoot]) {
        expect(p.out()).toBe("");
        expect(p.err()).not.toContain(dir);
      }
      expect([
        (await readdir(object, { recursive: true })).sort(),
        (await readdir(root, { recursive: true })).sort(),
      ]).toEqual(before.map((names) => names.sort()));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("a --fixture file that cannot be read is named with what to do, in one line and without a stack trace", async () => {
    const dir = await mkdtemp(join(tmpdir(), "actorstore-cli-fixture-"));
    try {
      const missing = run(["serve", "--port", "0", "--token", "x", "--fixture", join(dir, "fixture.json")]);
      expect(await missing.exited).toBe(1);
      expect(missing.err().trim()).toBe(
        `actorstore-api: createApiHandler: the fixture file ${join(dir, "fixture.json")} cannot be read (ENOENT): give the path of a JSON fixture (docs/api.md), or leave the fixture out to start with no zones.`,
      );
      const directory = run(["serve", "--port", "0", "--token", "x", "--fixture", dir]);
      expect(await directory.exited).toBe(1);
      expect(directory.err().trim()).toBe(
        `actorstore-api: createApiHandler: the fixture file ${dir} cannot be read (EISDIR): give the path of a JSON fixture (docs/api.md), or leave the fixture out to start with no zones.`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("a --port that is taken is named with what to do, in one line", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = blocker.address() as AddressInfo;
      const taken = run(["serve", "--port", String(port), "--token", "x"]);
      expect(await taken.exited).toBe(1);
      expect(taken.err().trim()).toBe(
        `actorstore-api: listen EADDRINUSE: address already in use 127.0.0.1:${port}: another process (perhaps an earlier actorstore-api) listens there; stop it, or choose another --port (0 picks a free one).`,
      );
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  }, 60_000);

  it("refuses a --max-request-bytes that is not a positive integer, saying so", async () => {
    const runs = ["0", "-1", "1.5", "lots"].map((bad) =>
      run(["serve", "--port", "0", "--token", "x", "--max-request-bytes", bad]),
    );
    for (const limit of runs) {
      expect(await limit.exited).toBe(2);
      expect(limit.err()).toMatch(/--max-request-bytes must be a positive integer/);
    }
  }, 60_000);
});
