/**
 * A child process for the directory-lock tests (lock.test.ts runs a bundle of this file):
 * `node worker.mjs <dir> <mode> <id> [rounds]`.
 *
 * - `hold`: opens the object in `<dir>`, prints `H`, then waits to be killed.
 * - `once`: prints `R`, waits for the file `<dir>.go`, then tries to open once; prints `W` after a
 *   confirmed write (and holds the directory until the file `<dir>.done` exists), or `L <message>` when refused with
 *   ERR_LOCKED.
 * - `race`: prints `R` and waits for the file `<dir>.go` (as `once` does, so that both racers start
 *   their rounds together however slow the machine), then `rounds` times: try to open; when it opens, claim `<dir>.inside` (an exclusive create:
 *   it fails if the other process is inside too, which prints `V` for a violation), write and
 *   confirm the key `<id>:<round>` (prints `C <id>:<round>`), hold a little, leave and close; when
 *   refused, print `L` and try again soon.
 */
import { existsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { ObjectStorage } from "../../src/storage/object-storage";

// A plain (ref'd) timer: the clock's timers are unref'd, and the process would exit while waiting.
const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
const say = (line: string) => process.stdout.write(`${line}\n`);

async function tryOpen(directory: string): Promise<ObjectStorage | string> {
  try {
    return await ObjectStorage.open({ directory });
  } catch (e) {
    if ((e as { code?: unknown }).code === "ERR_LOCKED") return (e as Error).message;
    throw e;
  }
}

async function main(): Promise<void> {
  const [directory, mode, id, roundsText] = process.argv.slice(2);
  if (directory === undefined || mode === undefined || id === undefined) throw new Error("usage");
  if (mode === "hold") {
    const storage = await tryOpen(directory);
    if (typeof storage === "string") throw new Error(storage);
    await storage.put("holder", id);
    await storage.sync();
    say("H");
    for (;;) await sleep(1000);
  }
  if (mode === "once") {
    // Ready, then wait for the parent's go (a file), so that both racers try within a millisecond.
    // Load the SQL engine first (an in-memory storage), so that after the go only the lock differs.
    await (await ObjectStorage.open()).close();
    say("R");
    while (!existsSync(`${directory}.go`)) await sleep(1);
    const storage = await tryOpen(directory);
    if (typeof storage === "string") {
      say(`L ${storage}`);
      return;
    }
    await storage.put(`once:${id}`, id);
    await storage.sync();
    say("W");
    // Hold the directory until the parent has both outcomes, so a refusal can only mean the
    // other racer tried while this one held it (however slow the machine).
    while (!existsSync(`${directory}.done`)) await sleep(5);
    await storage.close();
    return;
  }
  const rounds = Number(roundsText ?? 20);
  const inside = `${directory}.inside`;
  await (await ObjectStorage.open()).close();
  say("R");
  while (!existsSync(`${directory}.go`)) await sleep(1);
  for (let round = 0; round < rounds; ) {
    const storage = await tryOpen(directory);
    if (typeof storage === "string") {
      say("L");
      await sleep(Math.random() * 3);
      continue;
    }
    try {
      await writeFile(inside, id, { flag: "wx" });
    } catch {
      const { readdir, readFile } = await import("node:fs/promises");
      const names = (await readdir(directory)).filter((n) => n.startsWith("lock"));
      const contents = await Promise.all(names.map((n) => readFile(`${directory}/${n}`, "utf8").catch(() => "?")));
      say(
        `V ${process.pid} ${JSON.stringify(names)} ${JSON.stringify(contents)} inside=${await readFile(inside, "utf8").catch(() => "?")}`,
      );
    }
    await storage.put(`${id}:${round}`, round);
    await storage.sync();
    say(`C ${id}:${round}`);
    await sleep(Math.random() * 5);
    await rm(inside, { force: true });
    await storage.close();
    round++;
    await sleep(Math.random() * 3);
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`lock worker failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(2);
  },
);
