/**
 * Every ```ts block of README.md and docs/*.md, used as a newcomer uses it: against the built package
 * (`actorstore`, `actorstore/testkit` … resolve through the package's own exports map to dist/), type-checked
 * in a strict project under node16 and under bundler resolution, and run by Node through tsx in an empty
 * directory of its own (its relative paths, like `./data`, land there).
 *
 * Many blocks are fragments: the prose around them says what `counter` or `storage` is. {@link BLOCKS}
 * completes each with the least code that prose implies (`before`), and checks after it what its comments
 * say happened (`after`, `output`). A block not listed there fails the test, so a new example cannot be
 * added unchecked; a block that cannot run here (it needs a browser or an S3 store) says which test runs
 * it, and is still type-checked.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureDist, ROOT } from "./ensure-dist";

/** How one block is completed and checked. */
interface Completion {
  /** Module code placed before the block: what the surrounding prose gives (imports, a class, a variable). */
  before?: string;
  /** The block is the body of this function (it `return`s): the block's imports stay at the top. */
  wrap?: string;
  /** Code after the block: what its comments claim, checked. */
  after?: string;
  /** The block's whole output when run. */
  output?: string;
  /** Where the block goes in its directory (default `example.ts`). */
  file?: string;
  /** Text replaced in the block before it runs (not when type-checked): a fixed port, say. */
  runReplace?: [string, string];
  /** Why the block is type-checked only, and which test runs it. */
  notRun?: string;
}

/** Classes the prose of docs/testing.md and docs/hosting.md refers to, as it describes them. */
const CLASSES = `
import { type AlarmInvocationInfo, DurableObject } from "actorstore";

export class Counter extends DurableObject<{ LIMIT?: number }> {
  async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== "/increment") return new Response("not found", { status: 404 });
    return Response.json({ count: await this.increment() });
  }
  async increment(by = 1): Promise<number> {
    const count = ((await this.ctx.storage.get<number>("count")) ?? 0) + by;
    await this.ctx.storage.put("count", count);
    return count;
  }
  async scheduleReport(delayMs: number, nowMs: number): Promise<void> {
    await this.ctx.storage.setAlarm(nowMs + delayMs);
  }
  async alarm(info: AlarmInvocationInfo): Promise<void> {
    if (!info.isRetry) throw new Error("report service unavailable");
  }
}

export class Reminder extends DurableObject {
  async remind(): Promise<void> {
    await this.ctx.storage.setAlarm(Date.now() + 1000);
  }
  async alarm(): Promise<void> {
    await this.ctx.storage.put("fired", Date.now());
  }
}

export class ChatRoom extends DurableObject {
  async post(text: string): Promise<number> {
    const log = ((await this.ctx.storage.get<string[]>("log")) ?? []).concat(text);
    await this.ctx.storage.put("log", log);
    return log.length;
  }
}
`;

/**
 * What a block imports from "vitest": its \`expect\`, and an \`it\` that starts the test at once (Node runs
 * the blocks, not vitest); \`tests\` lets the code after the block wait for them.
 */
const VITEST_SHIM = `
export { expect } from "vitest";
export const tests: Promise<unknown>[] = [];
export function it(_name: string, fn: () => unknown): void {
  tests.push(Promise.resolve().then(fn));
}
`;

const TEST_KIT = `import { createTestObject } from "actorstore/testkit";\nimport { expect } from "vitest";\n`;

/** Each block, by its file and first line. */
const BLOCKS: Record<string, Completion> = {
  'README.md: import { ObjectStorage } from "actorstore";': {
    after: `
import assert from "node:assert/strict";
assert.deepEqual([...users.keys()], ["user:1", "user:2", "user:3"]);
assert.equal(n, 1);
assert.equal(await storage.get("user:1"), undefined); // deleteAll() ran; the restore waits for the next session
`,
  },
  'README.md: import { DurableObject, ObjectContext } from "actorstore";': {
    after: 'import assert from "node:assert/strict";\nassert.equal(await response.text(), "1");',
  },
  "README.md: import { createFirewallRules, EMPTY_FIREWALL_STATE, paginate, parseExpression, parseListingParams,": {
    wrap: "async function handle(request: Request, zones: { id: string; name: string }[]): Promise<Response | undefined>",
    after: `
import assert from "node:assert/strict";
const zones = [{ id: "z1", name: "a.com" }, { id: "z2", name: "b.com" }];
const ok = await handle(new Request("http://api/zones", { headers: { authorization: "Bearer t" } }), zones);
assert.deepEqual(await ok?.json(), {
  result: zones, success: true, errors: [], messages: [],
  result_info: { page: 1, per_page: 20, count: 2, total_count: 2, total_pages: 1 },
});
const refused = await handle(new Request("http://api/zones"), zones);
assert.equal(refused?.status, 401);
`,
  },
  'README.md: import Cloudflare from "cloudflare";': {
    before: `
import { readFileSync } from "node:fs";
import { startApiServer } from "actorstore/server";
const doc = readFileSync(process.env.ACTORSTORE_API_DOC ?? "", "utf8");
const fixture: unknown = JSON.parse(/## Fixture\\n+\`\`\`json\\n([\\s\\S]*?)\`\`\`/.exec(doc)?.[1] ?? "");
const server = await startApiServer({ credentials: { tokens: ["local-token"] }, fixture });
`,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: code for the block, where it is a template
    runReplace: ['"http://127.0.0.1:8787/client/v4"', "`http://127.0.0.1:${server.port}/client/v4`"],
    after: "await server.close();",
    output: "example.com\n",
  },
  "README.md: // Storage on its own…": {
    before: 'import { ObjectContext, ObjectStorage } from "actorstore";\nimport { ChatRoom } from "./classes.js";\n',
    after: 'console.log(await room.call("post", "hi"));\nawait room.close();\nawait storage.close();',
    output: "1\n",
  },
  'README.md: import { ObjectStorage, openIndexedDbPersistence } from "actorstore";': {
    notRun: "it needs a browser: test/browser/recipe.test.ts bundles it and runs it in Chromium",
  },
  'docs/api.md: import Cloudflare from "cloudflare";': { after: "void cf;" },
  'docs/durability.md: import { s3Persistence } from "actorstore/s3";': {
    before: 'import { ObjectStorage } from "actorstore";\n',
    notRun: "it needs an S3-compatible store: test/s3/ runs the adapter against Ceph",
  },
  'docs/errors.md: import { ActorStoreError, ObjectStorage } from "actorstore";': {
    output:
      'sql.exec() is only available on the SQLite backend. Open the storage with ObjectStorage.open({ backend: "sqlite" }).\n',
  },
  'docs/hosting.md: import { DurableObject, ObjectHost, directoryPerObject } from "actorstore";': {},
  'docs/hosting.md: import assert from "node:assert/strict";': {},
  'docs/hosting.md: import { createTestHost } from "actorstore/testkit";': {
    before: 'import { expect } from "vitest";\nimport { Counter } from "./classes.js";\n',
    after: "expect(await stub.increment(1)).toBe(3); // the count survived the eviction",
  },
  'docs/hosting.md: import { ClusterHost } from "actorstore/cluster";': {
    before: `
import { DurableObject } from "actorstore";
class Room extends DurableObject {
  async post(text: string): Promise<number> {
    return text.length;
  }
}
const credentials = { accessKeyId: "AKIA…", secretAccessKey: "…" };
`,
    notRun: "it needs an S3-compatible store: test/cluster/ runs clusters over Ceph",
  },
  'docs/sql.md: const cursor = storage.sql.exec("SELECT id, name FROM users WHERE id > ?", 10);': {
    before: `
import { ObjectStorage } from "actorstore";
const storage = await ObjectStorage.open();
storage.sql.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)");
storage.sql.exec("INSERT INTO users VALUES (1, 'Ada'), (11, 'Lin'), (12, 'Bo')");
`,
    output: "11 Lin\n12 Bo\n",
  },
  'docs/testing.md: import { createTestObject } from "actorstore/testkit";': {
    file: "test/counter.ts",
    after:
      'import { tests } from "vitest";\nif (tests.length !== 1) throw new Error("no test ran");\nawait Promise.all(tests);',
  },
  'docs/testing.md: await counter.call("scheduleReport", 60_000, counter.clock.now());': {
    before: `${TEST_KIT}import { Counter } from "./classes.js";\nconst counter = await createTestObject(Counter);\n`,
  },
  "docs/testing.md: await counter.seed({ count: 1 });": {
    before: `${TEST_KIT}import { Counter } from "./classes.js";\nconst counter = await createTestObject(Counter);\n`,
  },
  "docs/testing.md: const reminder = await createTestObject(Reminder, { fakeDate: true });": {
    before: `${TEST_KIT}import { Reminder } from "./classes.js";\n`,
    after: `
expect(reminder.alarmHistory.map((a) => a.ok)).toEqual([true]);
expect(await reminder.get("fired")).toBe(reminder.clock.now());
await reminder.close();
`,
  },
  'docs/testing.md: import { openFilePersistence } from "actorstore";': {
    before: `${TEST_KIT}import { mkdtempSync } from "node:fs";\nimport { ChatRoom } from "./classes.js";\nconst dir = mkdtempSync("room-");\n`,
    after: `
expect(await room.call("post", "hi")).toBe(1);
await room.restart();
expect(await room.call("post", "there")).toBe(2);
await room.close();
`,
  },
  'docs/testing.md: import { createMemoryPersistence } from "actorstore";': {
    before: 'import { expect } from "vitest";\nimport { Counter } from "./classes.js";\n',
    after: 'expect(await counter.call("increment", 1)).toBe(1); // the failed write was not kept',
  },
};

/** Every ```ts block of the README and docs/, keyed as in {@link BLOCKS}. */
async function documentedBlocks(): Promise<Map<string, string>> {
  const files = [
    "README.md",
    ...(await readdir(join(ROOT, "docs"))).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
  ];
  const blocks = new Map<string, string>();
  for (const file of files) {
    const text = await readFile(join(ROOT, file), "utf8");
    for (const [, code = ""] of text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
      const key = `${file}: ${code.split("\n").find((l) => l.trim() !== "")}`;
      if (blocks.has(key))
        throw new Error(`Two ts blocks of ${file} start alike; make their first lines differ: ${key}`);
      blocks.set(key, code);
    }
  }
  return blocks;
}

/**
 * The module a completed block becomes at `file` (for running, with `runReplace` applied). Its imports
 * of "vitest" load the shim beside the shared classes.
 */
function compose(code: string, c: Completion, file: string, forRun: boolean): string {
  let block = code;
  if (forRun && c.runReplace) {
    if (!block.includes(c.runReplace[0])) throw new Error(`runReplace: the block has no ${c.runReplace[0]}`);
    block = block.replaceAll(c.runReplace[0], c.runReplace[1]);
  }
  if (c.wrap !== undefined) {
    const imports = /^(?:import[\s\S]*?from "[^"]+";\n)*/.exec(block)?.[0] ?? "";
    block = `${imports}${c.wrap} {\n${block.slice(imports.length)}}\n`;
  }
  const up = "../".repeat(file.split("/").length - 1) || "./";
  return `${c.before ?? ""}\n${block}\n${c.after ?? ""}\nexport {};\n`
    .replaceAll('from "vitest"', `from "${up}vitest-shim.js"`)
    .replaceAll('from "./classes.js"', `from "${up}classes.js"`);
}

/** Files under the repository, so that `actorstore` resolves to it by its own name (dist/ via exports). */
let root = "";
let blocks = new Map<string, string>();
/** Each block's directory and file. */
const placed = new Map<string, { dir: string; file: string }>();

beforeAll(async () => {
  await ensureDist();
  blocks = await documentedBlocks();
  await mkdir(join(ROOT, ".tmp"), { recursive: true });
  root = await mkdtemp(join(ROOT, ".tmp", "doc-examples-"));
  let n = 0;
  for (const [key, code] of blocks) {
    const c = BLOCKS[key];
    if (c === undefined) continue;
    // The block as type-checked in dir/, as run in dir/run/ (where its relative paths land).
    const dir = join(root, `block-${n++}`);
    const file = c.file ?? "example.ts";
    for (const [at, forRun] of [
      [dir, false],
      [join(dir, "run"), true],
    ] as const) {
      await mkdir(join(at, dirname(file)), { recursive: true });
      await writeFile(join(at, file), compose(code, c, file, forRun));
      await writeFile(join(at, "classes.ts"), CLASSES);
      await mkdir(join(at, "src"), { recursive: true });
      await writeFile(join(at, "src", "counter.ts"), `export { Counter } from "../classes.js";\n`);
      await writeFile(join(at, "vitest-shim.ts"), VITEST_SHIM);
    }
    placed.set(key, { dir, file });
  }
}, 300_000);

afterAll(async () => {
  if (root !== "") await rm(root, { recursive: true, force: true });
});

/** Parsed files, shared by the two programs. */
const parsed = new Map<string, ts.SourceFile>();

describe("the documentation's ts blocks", () => {
  it("are each listed in BLOCKS, and BLOCKS lists no block that is gone", () => {
    expect(blocks.size).toBeGreaterThan(10);
    const unlisted = [...blocks.keys()].filter((k) => BLOCKS[k] === undefined);
    const gone = Object.keys(BLOCKS).filter((k) => !blocks.has(k));
    expect({ unlisted, gone }).toEqual({ unlisted: [], gone: [] });
  });

  for (const resolution of [
    { module: "node16", moduleResolution: "node16" },
    { module: "esnext", moduleResolution: "bundler" },
  ]) {
    it(`type-check against the built package, strict, ${resolution.moduleResolution} resolution`, () => {
      const options = ts.convertCompilerOptionsFromJson(
        {
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          target: "es2022",
          lib: ["es2022"],
          types: ["node"],
          ...resolution,
        },
        root,
      );
      expect(options.errors).toEqual([]);
      const files = [...placed.values()].map((p) => join(p.dir, p.file));
      const host = ts.createCompilerHost(options.options);
      const parse = host.getSourceFile.bind(host);
      host.getSourceFile = (name, language, ...rest) => {
        // Parsed once for both resolutions (the libraries and @types/node are most of the work).
        const key = `${name}\0${typeof language === "object" ? language.languageVersion : language}`;
        let file = parsed.get(key);
        if (file === undefined) {
          file = parse(name, language, ...rest);
          if (file) parsed.set(key, file);
        }
        return file;
      };
      const program = ts.createProgram({ rootNames: files, options: options.options, host });
      const errors = ts
        .getPreEmitDiagnostics(program)
        .map((d) =>
          d.file && d.start !== undefined
            ? `${d.file.fileName.slice(root.length)}(${d.file.getLineAndCharacterOfPosition(d.start).line + 1}): ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
            : ts.flattenDiagnosticMessageText(d.messageText, "\n"),
        );
      expect(errors).toEqual([]);
    }, 180_000);
  }
});

const tsxLoader = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;

/**
 * Runs the blocks one after another in one Node process (through tsx: one start-up, not one per block),
 * each with its own directory as the working directory; prints each block's output or error as JSON.
 */
const RUNNER = `
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { format } from "node:util";
const blocks: { key: string; dir: string; file: string }[] = JSON.parse(process.env.DOC_BLOCKS ?? "[]");
const results: { key: string; output: string; error?: string }[] = [];
let output = "";
let failure: unknown;
console.log = (...args: unknown[]) => { output += format(...args) + "\\n"; };
process.on("unhandledRejection", (e) => { failure ??= e; });
for (const { key, dir, file } of blocks) {
  process.chdir(dir);
  output = "";
  failure = undefined;
  try {
    await import(pathToFileURL(join(dir, file)).href);
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (failure !== undefined) throw failure;
    results.push({ key, output });
  } catch (e) {
    results.push({ key, output, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  }
}
process.stdout.write(JSON.stringify(results));
`;

describe("the documentation's ts blocks run as written", () => {
  const results = new Map<string, { output: string; error?: string }>();
  beforeAll(async () => {
    const runnable = [...placed].filter(([key]) => BLOCKS[key]?.notRun === undefined);
    await writeFile(join(root, "runner.ts"), RUNNER);
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", tsxLoader, join(root, "runner.ts")], {
      cwd: root,
      timeout: 300_000,
      maxBuffer: 16 * 1024 * 1024,
      env: {
        ...process.env,
        ACTORSTORE_API_DOC: join(ROOT, "docs/api.md"),
        DOC_BLOCKS: JSON.stringify(runnable.map(([key, p]) => ({ key, dir: join(p.dir, "run"), file: p.file }))),
      },
    });
    for (const r of JSON.parse(stdout) as { key: string; output: string; error?: string }[]) results.set(r.key, r);
  }, 300_000);

  for (const [key, c] of Object.entries(BLOCKS)) {
    if (c.notRun !== undefined) continue;
    it(key, () => {
      expect(results.get(key)).toEqual({ key, output: c.output ?? "" });
    });
  }
});
