/**
 * The built type declarations as a TypeScript user compiles them: `strict`, `skipLibCheck: false`,
 * every entry point of the exports map imported by the package's own name, under each module
 * resolution a project uses (node16, nodenext, bundler), with the globals of the runtime the project
 * targets and nothing else: Node (`@types/node`, no DOM library), workers (`@cloudflare/workers-types`
 * only) and a browser (the DOM library). A declaration that names a type only one of them has (an
 * `IDBFactory`, a `RequestInfo`) fails here. The workers project also compiles an object class
 * written against the platform's types, used with actorstore without a cast.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureDist, ROOT } from "./ensure-dist";

/** The files live under the repository so that `actorstore` resolves to it (a package's self-reference). */
let dir = "";

beforeAll(async () => {
  await ensureDist();
  await mkdir(join(ROOT, ".tmp"), { recursive: true });
  dir = await mkdtemp(join(ROOT, ".tmp", "types-"));
  const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { exports: Record<string, unknown> };
  const entries = Object.keys(pkg.exports)
    .filter((e) => e !== "./package.json")
    .map((e) => e.replace(/^\./, "actorstore"));
  expect(entries).toContain("actorstore/testkit");
  await writeFile(
    join(dir, "entries.ts"),
    `${entries.map((e, i) => `import * as e${i} from ${JSON.stringify(e)};`).join("\n")}\nexport const all: object[] = [${entries.map((_, i) => `e${i}`).join(", ")}];\n`,
  );
  await writeFile(join(dir, "platform-class.ts"), PLATFORM_CLASS);
  await writeFile(
    join(dir, "commonjs.cts"),
    `${entries.map((e, i) => `import * as e${i} from ${JSON.stringify(e)};`).join("\n")}\nexport const all: object[] = [${entries.map((_, i) => `e${i}`).join(", ")}];\n`,
  );
}, 300_000);

afterAll(async () => {
  if (dir !== "") await rm(dir, { recursive: true, force: true });
});

/** An object class as written for the platform, with `env` typed by the platform's namespace type. */
const PLATFORM_CLASS = `
import type { AlarmInvocationInfo, DurableObjectNamespace, DurableObjectState, DurableObjectStorage } from "@cloudflare/workers-types";
import { DurableObject, ObjectStorage } from "actorstore";
import { createTestObject } from "actorstore/testkit";

interface Env {
  COUNTER: DurableObjectNamespace<Counter>;
}

export class Counter extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
  }
  async increment(by: number): Promise<number> {
    const storage: DurableObjectStorage = this.ctx.storage;
    const n = ((await storage.get<number>("n")) ?? 0) + by;
    await storage.put("n", n);
    return n;
  }
  async alarm(info?: AlarmInvocationInfo): Promise<void> {
    void info;
  }
}

export async function use(env: Env): Promise<number> {
  const counter = await createTestObject(Counter, { env });
  const storage: DurableObjectStorage = await ObjectStorage.open();
  await storage.put("k", 1);
  return counter.call("increment", 1);
}
`;

/** Parsed files, shared by the programs (parsing `@types/node` once, not once per program). */
const parsedFiles = new Map<string, ts.SourceFile>();

/** Type-checks `files` (in the temporary directory) with `options` on top of strict defaults. */
function check(files: string[], options: Record<string, unknown>): string[] {
  const parsed = ts.parseJsonConfigFileContent(
    { compilerOptions: { strict: true, skipLibCheck: false, noEmit: true, target: "es2022", ...options } },
    ts.sys,
    dir,
  );
  expect(parsed.errors).toEqual([]);
  const host = ts.createCompilerHost(parsed.options);
  const parse = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, ...rest) => {
    const key = `${fileName}\0${typeof language === "object" ? language.languageVersion : language}`;
    let file = parsedFiles.get(key);
    if (file === undefined) {
      file = parse(fileName, language, ...rest);
      if (file) parsedFiles.set(key, file);
    }
    return file;
  };
  const program = ts.createProgram({ rootNames: files.map((f) => join(dir, f)), options: parsed.options, host });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) =>
      d.file && d.start !== undefined
        ? `${d.file.fileName.slice(ROOT.length)}(${d.file.getLineAndCharacterOfPosition(d.start).line + 1}): ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
        : ts.flattenDiagnosticMessageText(d.messageText, "\n"),
    );
}

const RESOLUTIONS = [
  { module: "node16", moduleResolution: "node16" },
  { module: "nodenext", moduleResolution: "nodenext" },
  { module: "esnext", moduleResolution: "bundler" },
];

describe("the type declarations compile in a strict project", () => {
  for (const resolution of RESOLUTIONS) {
    it(`Node (@types/node, no DOM library), ${resolution.moduleResolution}`, () => {
      expect(check(["entries.ts"], { ...resolution, lib: ["es2022"], types: ["node"] })).toEqual([]);
    }, 120_000);
  }

  it("a CommonJS file (.cts) under nodenext: imports of every entry compile to require(), which Node 20.19+ serves", () => {
    const options = { module: "nodenext", moduleResolution: "nodenext", lib: ["es2022"], types: ["node"] };
    expect(check(["commonjs.cts"], options)).toEqual([]);
  }, 120_000);

  it("workers (@cloudflare/workers-types only), with a class written against the platform's types", () => {
    const options = {
      module: "esnext",
      moduleResolution: "bundler",
      lib: ["es2022"],
      types: ["@cloudflare/workers-types"],
    };
    expect(check(["entries.ts", "platform-class.ts"], options)).toEqual([]);
  }, 120_000);

  it("a browser (the DOM library, no @types/node)", () => {
    const options = {
      module: "esnext",
      moduleResolution: "bundler",
      lib: ["es2022", "dom", "dom.iterable"],
      types: [],
    };
    expect(check(["entries.ts"], options)).toEqual([]);
  }, 120_000);
});
