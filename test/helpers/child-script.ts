/**
 * Runs a TypeScript script in a child Node process (through tsx), for tests whose failure is a
 * process that never exits (a worker thread or handle left keeping it alive).
 */
import { spawn } from "node:child_process";

/** How the child ended: its exit code (or "killed"), or a note that it was killed for hanging. */
export interface ChildOutcome {
  code: number | string;
  out: string;
  err: string;
  /** From the start to the end of the child, in ms. */
  ms: number;
}

/**
 * Runs `script` with `node --import tsx` in `cwd` and resolves once it has exited and its output
 * is read ("close", not "exit": the exit event can come before the pipes are drained). A child
 * still running after `limitMs` is killed and reported as `did not exit within … s`: the limit only
 * ends the test instead of the suite.
 */
export function runScript(script: string, cwd: string, limitMs = 60_000): Promise<ChildOutcome> {
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", script], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => {
    out += String(d);
  });
  child.stderr.on("data", (d) => {
    err += String(d);
  });
  return new Promise((done) => {
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      child.kill("SIGKILL");
    }, limitMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      const ms = performance.now() - started;
      done({ code: hung ? `did not exit within ${limitMs / 1000} s` : (code ?? "killed"), out, err, ms });
    });
  });
}
