/**
 * When sql.js cannot load its WASM file, the caller gets one clear error and nothing else happens:
 * sql.js also threw the failure out of a promise nobody holds, an unhandled rejection that ended
 * the Node process (exit code 1) although the caller had caught the error, and printed it twice.
 * Each case is a child process running a plain script (sql.js keeps a failed load for the life of
 * the process, so it cannot share one with other tests).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runScript } from "../helpers/child-script";

const root = resolve(import.meta.dirname, "../..");
const entry = pathToFileURL(join(root, "src/engine/sqljs.ts")).href;

/** A script that loads the engine with `options` (source text), reports the error, then turns the event loop twice. */
function script(options: string): string {
  return `import { loadSqlJsEngine } from ${JSON.stringify(entry)};
try {
  await loadSqlJsEngine(${options});
  console.log("loaded");
} catch (error) {
  console.log("caught " + error.name + " " + error.code + ": " + error.message);
}
// Unhandled rejections are reported after the microtasks of a turn: give them two turns.
await new Promise((next) => setImmediate(next));
await new Promise((next) => setImmediate(next));
console.log("still running");
`;
}

describe("sql.js's WASM that does not load", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "actorstore-wasm-load-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const cases: [name: string, options: string, message: RegExp][] = [
    [
      "bytes that are not a WASM module, as sqlJs.wasmBinary",
      "{ wasmBinary: new Uint8Array([1, 2, 3]).buffer }",
      /could not load the WebAssembly module given as sqlJs\.wasmBinary \(CompileError: .*\)\. Pass the bytes of the file sql\.js 1\.16\.0 ships/,
    ],
    [
      "a locateFile pointing at a missing file",
      '{ locateFile: (file) => "/nonexistent-dir/" + file }',
      /could not load its WebAssembly file from "\/nonexistent-dir\/sql-wasm\.wasm" \(.*ENOENT.*\)\. Serve node_modules\/sql\.js\/dist\/sql-wasm\.wasm/,
    ],
  ];
  for (const [index, [name, options, message]] of cases.entries()) {
    it(`${name}: one ActorStoreError to the caller, no unhandled rejection, nothing printed`, async () => {
      const file = join(dir, `case-${index}.mts`);
      await writeFile(file, script(options));
      const result = await runScript(file, root);
      expect(result.err).not.toContain("Aborted(");
      expect(result.err).not.toContain("failed to asynchronously prepare wasm");
      expect(result.out).toMatch(/caught ActorStoreError ERR_INVALID_OPTION: /);
      expect(result.out).toMatch(message);
      expect(result.out).toContain("still running");
      expect(result.code).toBe(0);
    });
  }

  it("an unhandled rejection of the program's own while sql.js loads still ends the process, as Node's default", async () => {
    const file = join(dir, "own.mts");
    await writeFile(
      file,
      `import { loadSqlJsEngine } from ${JSON.stringify(entry)};
Promise.reject(new Error("the program's own"));
await loadSqlJsEngine({ wasmBinary: new Uint8Array([1, 2, 3]).buffer }).catch(() => {});
await new Promise((next) => setImmediate(next));
console.log("still running");
`,
    );
    const result = await runScript(file, root);
    expect(result.err).toContain("the program's own");
    expect(result.out).not.toContain("still running");
    expect(result.code).toBe(1);
  });
});
