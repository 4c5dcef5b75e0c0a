#!/usr/bin/env node
/**
 * `actorstore-inspect <directory> <command>`: look into (and restore) the persisted storage of one
 * object from a shell. The commands live in `inspect-commands.ts`; this file only wires them to the
 * process.
 *
 * @example
 * ```sh
 * npx actorstore-inspect ./data/room-1 keys --prefix user:
 * npx actorstore-inspect ./data/room-1 sql "SELECT count(*) FROM messages"
 * npx actorstore-inspect ./data/room-1 export room-1.sqlite
 * ```
 *
 * @packageDocumentation
 */
import { runInspect } from "./inspect-commands";

// A reader that stops early (`… keys | head -1`) closes the pipe: that is not an error, so stop
// quietly (exit code 0) instead of printing EPIPE's stack trace. Other write errors still surface.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
}

process.exitCode = await runInspect(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
});
