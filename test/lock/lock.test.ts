/**
 * One writer per directory, with real processes: a live holder in another process refuses an open
 * with ERR_LOCKED naming it; a killed holder's lock is taken over; two processes racing for one
 * directory many times are never both inside (an exclusive marker file proves it) and lose no
 * confirmed write; two processes racing to take over the same stale lock never both win.
 *
 * The worker (worker.ts) is bundled once with esbuild, as in the crash test.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { crc32 } from "../../src/durability/crc32";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { ObjectStorage } from "../../src/storage/object-storage";
import { bundleWorker, projectRoot } from "../helpers/bundle-worker";

const bundleDir = join(projectRoot, "node_modules", ".cache", "actorstore-lock");
const bundle = join(bundleDir, `worker-${process.pid}.mjs`);
const scratch = await mkdtemp(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "actorstore-lock-"));
let counter = 0;
const freshDir = () => join(scratch, `object-${++counter}`);

beforeAll(() => bundleWorker("test/lock/worker.ts", bundle));

/** Every child started, so that none outlives a failed test (a holder waits forever). */
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await rm(bundle, { force: true });
  await rm(scratch, { recursive: true, force: true });
});

interface Child {
  process: ChildProcess;
  lines: string[];
  /** Resolves with the first line starting with one of `prefixes`. */
  waitFor(...prefixes: string[]): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

function start(...args: string[]): Child {
  const child = spawn(process.execPath, [bundle, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr?.on("data", (b: Buffer) => {
    stderr += b.toString();
  });
  const lines: string[] = [];
  const waiters: Array<{ prefixes: string[]; done: (line: string) => void }> = [];
  const reader = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const drained = new Promise<void>((done) => reader.on("close", done));
  reader.on("line", (line) => {
    lines.push(line);
    for (const w of waiters.splice(0)) {
      if (w.prefixes.some((p) => line.startsWith(p))) w.done(line);
      else waiters.push(w);
    }
  });
  // Exited and every line read (the exit event can come before the pipe is drained).
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((done) =>
    child.on("exit", (code, signal) => void drained.then(() => done({ code, signal, stderr }))),
  );
  return {
    process: child,
    lines,
    exited,
    waitFor: (...prefixes) =>
      new Promise((done, fail) => {
        const seen = lines.find((l) => prefixes.some((p) => l.startsWith(p)));
        if (seen !== undefined) return done(seen);
        waiters.push({ prefixes, done });
        void exited.then((e) =>
          fail(new Error(`worker exited (${e.code ?? e.signal}) before ${prefixes}: ${e.stderr}`)),
        );
      }),
  };
}

async function kill(child: Child): Promise<void> {
  child.process.kill("SIGKILL");
  await child.exited;
}

describe("directory lock", () => {
  test("ObjectStorage.open: a second storage of the same directory in this process is refused with ERR_LOCKED", async () => {
    const directory = freshDir();
    const first = await ObjectStorage.open({ directory });
    await first.put("a", 1);
    const refused = await ObjectStorage.open({ directory }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ name: "ActorStoreError", code: "ERR_LOCKED" });
    const message = (refused as Error).message;
    expect(message).toContain(`process ${process.pid} on host ${hostname()}`);
    expect(message).toMatch(/since \d{4}-\d\d-\d\dT/);
    // The holder is undisturbed; after it closes, the directory opens again with its data.
    await first.put("b", 2);
    await first.close();
    const again = await ObjectStorage.open({ directory });
    expect([...(await again.list())]).toEqual([
      ["a", 1],
      ["b", 2],
    ]);
    await again.close();
  });

  test("an empty newest lock generation, which a power loss can leave, is taken over; one of garbage refuses with ERR_CORRUPT", async () => {
    const directory = freshDir();
    const first = await ObjectStorage.open({ directory });
    await first.put("a", 1);
    await first.close();
    const newest = (await readdir(directory)).filter((n) => /^lock-\d{16}$/.test(n)).sort();
    expect(newest).toHaveLength(1);
    const generation = Number((newest[0] as string).slice(5));
    const next = `lock-${String(generation + 1).padStart(16, "0")}`;
    // The name reached the disk, its content did not: no process can be holding the directory.
    await writeFile(join(directory, next), "");
    const second = await ObjectStorage.open({ directory });
    expect(await second.get("a")).toBe(1);
    await second.put("b", 2);
    await second.close();
    const names = (await readdir(directory)).filter((n) => /^lock-\d{16}$/.test(n));
    expect(names).toHaveLength(1);
    expect(Number((names[0] as string).slice(5))).toBeGreaterThan(generation + 1);
    // Content that is there but unreadable is damage: the lock cannot say whether its holder lives.
    const after = `lock-${String(Number((names[0] as string).slice(5)) + 1).padStart(16, "0")}`;
    await writeFile(join(directory, after), "not a lock");
    const refused = await ObjectStorage.open({ directory }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ name: "ActorStoreError", code: "ERR_CORRUPT" });
    expect((refused as Error).message).toContain(after);
  });

  test("a lock that names process 0 or a negative pid, which this library never writes, is damage, not a live holder", async () => {
    // Regression: kill(0, 0) and kill(-n, 0) test a process group, which exists, so such a lock
    // counted as held by a live process and the open was refused with ERR_LOCKED naming "process 0".
    for (const pid of [0, -1]) {
      const directory = freshDir();
      const first = await ObjectStorage.open({ directory });
      await first.put("a", 1);
      await first.close();
      const held = (await readdir(directory)).filter((n) => /^lock-\d{16}$/.test(n));
      const next = `lock-${String(Number((held[0] as string).slice(5)) + 1).padStart(16, "0")}`;
      const body = JSON.stringify({
        state: "held",
        pid,
        host: hostname(),
        boot: "",
        start: "",
        sinceMs: 0,
        token: "f".repeat(16),
      });
      const sum = crc32(new TextEncoder().encode(body)).toString(16).padStart(8, "0");
      await writeFile(join(directory, next), `actorstore-lock 1\n${body}\n${sum}\n`);
      const refused = await ObjectStorage.open({ directory }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toMatchObject({ name: "ActorStoreError", code: "ERR_CORRUPT" });
      expect((refused as Error).message).toContain(next);
    }
  });

  test("the same directory through a symbolic link is refused too, and a copy of a held directory is not", async () => {
    // Regression: the process's own locks were keyed by the path they were taken through, so a
    // path through a symbolic link took the live lock over and fenced the first storage.
    const directory = freshDir();
    await mkdir(directory);
    const alias = `${directory}-alias`;
    await symlink(directory, alias);
    const first = await ObjectStorage.open({ directory: join(directory, "object") });
    await first.put("a", 1);
    await first.sync();
    const refused = await ObjectStorage.open({ directory: join(alias, "object") }).then(
      async (s) => {
        await s.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ name: "ActorStoreError", code: "ERR_LOCKED" });
    // The holder was not fenced.
    await first.put("b", 2);
    await first.sync();
    // A copy holds the same lock file, naming this process: it is another directory, taken over.
    const copy = freshDir();
    await cp(join(directory, "object"), copy, { recursive: true });
    const fromCopy = await ObjectStorage.open({ directory: copy });
    expect([...(await fromCopy.list())]).toEqual([
      ["a", 1],
      ["b", 2],
    ]);
    await fromCopy.close();
    await first.close();
  });

  test("a live holder in another process is named; once it is killed, its lock is taken over", async () => {
    const directory = freshDir();
    const holder = start(directory, "hold", "h");
    await holder.waitFor("H");
    const refused = await ObjectStorage.open({ directory }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ code: "ERR_LOCKED" });
    expect((refused as Error).message).toContain(`process ${holder.process.pid} on host ${hostname()}`);
    // The read-only view needs no lock.
    const reader = await openFilePersistence(directory, { readOnly: true });
    expect((await reader.load()).lastSeq).toBeGreaterThan(0);
    await reader.close();
    await kill(holder);
    const storage = await ObjectStorage.open({ directory });
    expect(await storage.get("holder")).toBe("h");
    await storage.close();
    // Only the newest lock generation is left behind, and it says the directory is free.
    expect((await readdir(directory)).filter((n) => n.startsWith("lock"))).toHaveLength(1);
  });

  test("two processes racing for one directory: never both inside, no confirmed write lost", async () => {
    const directory = freshDir();
    await rm(`${directory}.inside`, { force: true });
    const rounds = 40;
    const racers = [start(directory, "race", "a", String(rounds)), start(directory, "race", "b", String(rounds))];
    // Both start their rounds at the same moment: on a loaded machine one racer could otherwise
    // finish all its rounds before the other has loaded, and nothing would be raced.
    await Promise.all(racers.map((r) => r.waitFor("R")));
    await writeFile(`${directory}.go`, "");
    const results = await Promise.all(racers.map((r) => r.exited));
    for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0 });
    const lines = racers.flatMap((r) => r.lines);
    expect(lines.filter((l) => l.startsWith("V"))).toEqual([]);
    const confirmed = lines.filter((l) => l.startsWith("C ")).map((l) => l.slice(2));
    expect(confirmed).toHaveLength(2 * rounds);
    // They did contend: some opens were refused while the other was inside.
    expect(lines.filter((l) => l === "L").length).toBeGreaterThan(0);
    const storage = await ObjectStorage.open({ directory });
    const stored = [...(await storage.list())].map(([k]) => k);
    await storage.close();
    expect(stored.sort()).toEqual([...confirmed].sort());
  }, 120_000);

  test("two processes racing to take over the same stale lock: exactly one wins", async () => {
    for (let i = 0; i < 4; i++) {
      const directory = freshDir();
      const holder = start(directory, "hold", "h");
      await holder.waitFor("H");
      await kill(holder);
      const racers = [start(directory, "once", "a"), start(directory, "once", "b")];
      await Promise.all(racers.map((r) => r.waitFor("R")));
      await writeFile(`${directory}.go`, "");
      const outcomes = await Promise.all(racers.map((r) => r.waitFor("W", "L ")));
      await writeFile(`${directory}.done`, "");
      for (const r of racers) expect((await r.exited).code).toBe(0);
      expect(
        outcomes.filter((o) => o === "W"),
        outcomes.join(" | "),
      ).toHaveLength(1);
      const loser = outcomes.find((o) => o.startsWith("L ")) as string;
      const winner = racers[outcomes.indexOf("W")] as Child;
      expect(loser).toContain(`process ${winner.process.pid} on host`);
    }
  }, 120_000);
});
