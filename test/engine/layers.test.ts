/**
 * scripts/check-layers.mjs (run by `npm run lint`) on a scratch tree: it must refuse sql.js imported
 * outside engine/sqljs.ts in every form, and time read or timers set outside the clock modules.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";

const SCRIPT = join(__dirname, "../../scripts/check-layers.mjs");
let root: string | undefined;

afterEach(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

/** Runs the check over a tree of `files` (paths under src/); returns its output and whether it passed. */
function check(files: Record<string, string>): { ok: boolean; output: string } {
  root = mkdtempSync(join(tmpdir(), "layers-"));
  mkdirSync(join(root, "scripts"));
  cpSync(SCRIPT, join(root, "scripts/check-layers.mjs"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, "src", path)), { recursive: true });
    writeFileSync(join(root, "src", path), text);
  }
  try {
    return { ok: true, output: execFileSync(process.execPath, [join(root, "scripts/check-layers.mjs")]).toString() };
  } catch (e) {
    return { ok: false, output: String((e as { stderr?: Buffer }).stderr ?? e) };
  }
}

describe("check-layers", () => {
  test("the clock modules and engine/sqljs.ts may do what they are for", () => {
    const result = check({
      "engine/sqljs.ts":
        'import initSqlJs from "sql.js";\nexport const now = () => Date.now();\nexport { initSqlJs };\n',
      "util/clock.ts": "export const t = () => setTimeout(() => Date.now(), 1);\n",
      "testkit/date-clock.ts": "export const n = () => Date.now();\n",
      "storage/ok.ts": "// Date.now() in a comment is fine\nexport const s = 'no timers here';\n",
    });
    expect(result).toEqual({ ok: true, output: "layering ok\n" });
  });

  test.each([
    ['import initSqlJs from "sql.js";', "only engine/sqljs.ts may import sql.js"],
    ['import type { Database } from "sql.js";', "only engine/sqljs.ts may import sql.js"],
    ['export { default } from "sql.js";', "only engine/sqljs.ts may import sql.js"],
    ['const m = await import("sql.js");', "only engine/sqljs.ts may import sql.js"],
    ['import "sql.js/dist/sql-wasm.js";', "only engine/sqljs.ts may import sql.js"],
    ['const m = require("sql.js");', "only engine/sqljs.ts may import sql.js"],
    ["export const t = Date.now();", "time and timers go through the injected clock"],
    ["export const t = () => setTimeout(() => {}, 5);", "time and timers go through the injected clock"],
    ["export const t = () => setInterval(() => {}, 5);", "time and timers go through the injected clock"],
  ])("refused in engine/sqljs-engine.ts: %s", (line, problem) => {
    const result = check({ "engine/sqljs-engine.ts": `${line}\n` });
    expect(result.ok).toBe(false);
    expect(result.output).toContain(`engine/sqljs-engine.ts: ${problem}`);
  });

  test("the repository itself passes", () => {
    expect(execFileSync(process.execPath, [SCRIPT]).toString()).toBe("layering ok\n");
  });
});
