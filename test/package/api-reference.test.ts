/**
 * The API reference (`npm run docs:api`, TypeDoc over the TSDoc comments) as a user reads it: it covers
 * every entry point of the exports map, and everything an entry point exports has a TSDoc comment, as
 * has every public member of an exported class (a member that implements an interface's or overrides
 * a base class's is documented there; an overloaded method, on its first signature).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "./ensure-dist";

/** The source file of each entry point of package.json's exports map ("./s3" → src/s3/index.ts). */
async function entrySources(): Promise<string[]> {
  const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { exports: Record<string, unknown> };
  return Object.keys(pkg.exports)
    .filter((e) => e !== "./package.json")
    .map((e) => (e === "." ? "src/index.ts" : `src/${e.slice(2)}/index.ts`));
}

function documented(node: ts.Node): boolean {
  const target = ts.isVariableDeclaration(node) ? node.parent.parent : node;
  return ts.getJSDocCommentsAndTags(target).length > 0;
}

/** Whether `member` of `cls` is declared by a type it implements or extends. */
function inherited(checker: ts.TypeChecker, cls: ts.ClassDeclaration, name: string): boolean {
  for (const clause of cls.heritageClauses ?? []) {
    for (const t of clause.types) {
      if (checker.getTypeAtLocation(t).getProperty(name) !== undefined) return true;
    }
  }
  return false;
}

describe("the API reference", () => {
  it("typedoc.json documents every entry point of the exports map", async () => {
    const typedoc = JSON.parse(await readFile(join(ROOT, "typedoc.json"), "utf8")) as { entryPoints: string[] };
    const entries = await entrySources();
    expect(entries).toContain("src/s3/index.ts");
    expect([...typedoc.entryPoints].sort()).toEqual([...entries].sort());
  });

  it("every export of every entry point, and every public member of an exported class, has TSDoc", async () => {
    const entries = (await entrySources()).map((e) => join(ROOT, e));
    const program = ts.createProgram(entries, {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      types: ["node"],
    });
    const checker = program.getTypeChecker();
    const undocumented = new Set<string>();
    let checked = 0;
    for (const entry of entries) {
      const source = program.getSourceFile(entry);
      const module = source && checker.getSymbolAtLocation(source);
      if (module === undefined) throw new Error(`${entry} is not a module`);
      for (const exported of checker.getExportsOfModule(module)) {
        const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
        for (const declaration of symbol.declarations ?? []) {
          checked++;
          const where = declaration.getSourceFile().fileName.slice(ROOT.length + 1);
          if (!documented(declaration)) undocumented.add(`${exported.name} (${where})`);
          if (!ts.isClassDeclaration(declaration)) continue;
          const seen = new Set<string>();
          for (const member of declaration.members) {
            if (ts.isConstructorDeclaration(member) || ts.isClassStaticBlockDeclaration(member)) continue;
            if (ts.isSemicolonClassElement(member) || member.name === undefined) continue;
            if (ts.isPrivateIdentifier(member.name)) continue;
            const flags = ts.getCombinedModifierFlags(member);
            if (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
            const name = member.name.getText();
            if (seen.has(name)) continue; // a later overload signature, or the implementation
            seen.add(name);
            if (documented(member) || inherited(checker, declaration, name)) continue;
            if (ts.getJSDocTags(declaration).some((t) => t.tagName.text === "internal")) continue;
            undocumented.add(`${exported.name}.${name} (${where})`);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(300);
    expect([...undocumented]).toEqual([]);
  }, 120_000);
});
