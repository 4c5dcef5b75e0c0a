/**
 * What a user sees of the package before running it: the npm page (README, license, links) and the
 * set-up commands. The README is rendered on the npm page, where relative links break, so every link
 * must be absolute and point at a file this repository has.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "./ensure-dist";

const REPOSITORY = "https://github.com/actorstore/actorstore";

async function text(file: string): Promise<string> {
  return readFile(join(ROOT, file), "utf8");
}

interface PackageJson {
  name: string;
  license: string;
  repository: { type: string; url: string };
  homepage: string;
  bugs: { url: string };
  keywords: string[];
  files: string[];
}

describe("package metadata", () => {
  it("has an MIT LICENSE file matching package.json, shipped in the tarball", async () => {
    const pkg = JSON.parse(await text("package.json")) as PackageJson;
    expect(pkg.license).toBe("MIT");
    const license = await text("LICENSE");
    expect(license.split("\n")[0]).toBe("MIT License");
    expect(license).toMatch(/Permission is hereby granted, free of charge/);
    expect(license).toMatch(/^Copyright \(c\) \d{4} \S/m);
    const { stdout } = await promisify(execFile)("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: ROOT,
      timeout: 60_000,
    });
    const files = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? [];
    expect(files).toContain("LICENSE");
    expect(files).toContain("README.md");
  });

  it("names its repository, homepage, issue tracker and keywords", async () => {
    const pkg = JSON.parse(await text("package.json")) as PackageJson;
    expect(pkg.repository).toEqual({ type: "git", url: `git+${REPOSITORY}.git` });
    expect(pkg.homepage).toBe(`${REPOSITORY}#readme`);
    expect(pkg.bugs).toEqual({ url: `${REPOSITORY}/issues` });
    expect(pkg.keywords).toEqual(expect.arrayContaining(["durable-objects", "sqlite", "browser"]));
  });
});

describe("README", () => {
  it("links only by absolute URL, and every link into this repository names a file that exists", async () => {
    const readme = await text("README.md");
    const targets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string);
    expect(targets.length).toBeGreaterThan(5);
    for (const target of targets) expect(target, target).toMatch(/^https:\/\//);
    const prefix = `${REPOSITORY}/blob/main/`;
    const own = targets.filter((t) => t.startsWith(prefix));
    expect(own.length).toBeGreaterThan(5);
    for (const target of own) {
      const file = target.slice(prefix.length).replace(/#.*$/, "");
      expect(existsSync(join(ROOT, file)), `${target}: ${file} does not exist`).toBe(true);
    }
  });

  it("its first object example extends the DurableObject base class", async () => {
    const readme = await text("README.md");
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] as string);
    const firstObject = blocks.find((b) => /\bclass \w+/.test(b));
    expect(firstObject).toBeDefined();
    expect(firstObject).toMatch(/import \{[^}]*\bDurableObject\b[^}]*\} from "actorstore"/);
    expect(firstObject).toMatch(/class \w+ extends DurableObject\b/);
  });

  it("the set-up is the README's command: .ci/run runs exactly that and installs nothing itself", async () => {
    const readme = await text("README.md");
    const command = readme.match(/^(npm ci && npm test)\s+#/m)?.[1];
    expect(command).toBe("npm ci && npm test");
    const steps = (await text(".ci/run"))
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#") && l !== "set -euo pipefail");
    expect(steps).toEqual([command]);
  });
});
