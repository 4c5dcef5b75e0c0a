/**
 * Provides the headless Chromium that the browser tests drive (a vitest globalSetup, so `npm ci &&
 * npm test` needs nothing installed by hand). Chosen in this order:
 *
 * 1. `ACTORSTORE_CHROMIUM=/path/to/chrome`, when set: that browser, as is.
 * 2. The Chromium build inside the `@sparticuz/chromium` dev dependency (Linux x64): a brotli-compressed
 *    headless shell plus the NSS/expat libraries it links against. It comes with `npm ci` from the npm
 *    registry (no install script: npm 11 skips those), so this step only unpacks it, once, into
 *    `node_modules/.cache/actorstore-chromium/<version>/` (about 2 s) and checks that it starts.
 * 3. Debian's `chromium` (`/usr/bin/chromium`): used when present, else installed with apt-get when this
 *    process is root, else a clear error saying what to install.
 *
 * Tests read the choice with `inject("chromium")`.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { arch, platform } from "node:os";
import { dirname, join, normalize, resolve } from "node:path";
import { promisify } from "node:util";
import { brotliDecompress } from "node:zlib";
import { chromium } from "playwright-core";
import type { TestProject } from "vitest/node";

/** How to start the browser: its executable and extra environment (library path). */
export interface ChromiumLaunch {
  executablePath: string;
  env: Record<string, string>;
  /** Where it came from, for messages: "env", "npm" or "debian". */
  source: "env" | "npm" | "debian";
}

declare module "vitest" {
  export interface ProvidedContext {
    chromium: ChromiumLaunch;
  }
}

const ROOT = resolve(import.meta.dirname, "../..");
const PACKAGE = join(ROOT, "node_modules/@sparticuz/chromium");
const DEBIAN_CHROMIUM = "/usr/bin/chromium";
/** The flags every launch uses (root, no sandbox, and none of Chromium's background connections). */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const run = promisify(execFile);

/** Extracts the regular files and directories of an uncompressed (ustar) tar image into `dir`. */
async function untar(tar: Buffer, dir: string): Promise<void> {
  let offset = 0;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString("latin1")
        .replace(/\0.*$/s, "");
    const name = [field(345, 155), field(0, 100)].filter((s) => s !== "").join("/");
    const size = Number.parseInt(field(124, 12).trim() || "0", 8);
    const mode = Number.parseInt(field(100, 8).trim() || "644", 8);
    const type = field(156, 1) || "0";
    const target = normalize(join(dir, name));
    if (!target.startsWith(dir)) throw new Error(`tar entry ${name} points outside ${dir}`);
    const body = tar.subarray(offset + 512, offset + 512 + size);
    if (type === "5") await mkdir(target, { recursive: true });
    else if (type === "0") {
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, body, { mode });
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
}

/** Unpacks @sparticuz/chromium once; returns the launch description, or a reason it cannot. */
async function fromNpmPackage(): Promise<ChromiumLaunch | string> {
  if (platform() !== "linux" || arch() !== "x64")
    return `@sparticuz/chromium ships Linux x64 only (this is ${platform()}-${arch()})`;
  if (!existsSync(join(PACKAGE, "bin/chromium.br"))) return "node_modules/@sparticuz/chromium is missing (run npm ci)";
  const { version } = JSON.parse(await readFile(join(PACKAGE, "package.json"), "utf8")) as { version: string };
  const dir = join(ROOT, "node_modules/.cache/actorstore-chromium", version);
  const launch: ChromiumLaunch = {
    executablePath: join(dir, "chromium"),
    env: { LD_LIBRARY_PATH: [join(dir, "lib"), process.env.LD_LIBRARY_PATH].filter(Boolean).join(":") },
    source: "npm",
  };
  if (existsSync(join(dir, "ok"))) return launch;
  // Unpack beside the final place and rename, so a run that stops half-way leaves nothing used later.
  const staging = `${dir}.${process.pid}.tmp`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  const inflate = async (file: string) => promisify(brotliDecompress)(await readFile(join(PACKAGE, "bin", file)));
  await writeFile(join(staging, "chromium"), await inflate("chromium.br"));
  await chmod(join(staging, "chromium"), 0o755);
  // lib/: libnss3, libnspr4, libexpat … built for Amazon Linux 2023, whose glibc is older than bookworm's.
  await untar(await inflate("al2023.tar.br"), staging);
  await rm(dir, { recursive: true, force: true });
  try {
    await rename(staging, dir);
  } catch {
    // Another run unpacked the same version at the same moment: use its copy.
    await rm(staging, { recursive: true, force: true });
  }
  const problem = await tryLaunch(launch);
  if (problem !== undefined) return `the unpacked @sparticuz/chromium does not start here: ${problem}`;
  await writeFile(join(dir, "ok"), `${new Date().toISOString()}\n`);
  return launch;
}

/** Starts and stops the browser once; returns why it failed, if it did. */
async function tryLaunch(launch: ChromiumLaunch): Promise<string | undefined> {
  try {
    const browser = await chromium.launch({
      executablePath: launch.executablePath,
      env: { ...process.env, ...launch.env } as Record<string, string>,
      args: CHROMIUM_FLAGS,
      timeout: 60_000,
    });
    await browser.close();
    return undefined;
  } catch (e) {
    return String((e as Error).message ?? e).split("\n")[0];
  }
}

/** Debian's chromium: present, or installed when root. */
async function fromDebian(why: string): Promise<ChromiumLaunch> {
  const launch: ChromiumLaunch = { executablePath: DEBIAN_CHROMIUM, env: {}, source: "debian" };
  if (existsSync(DEBIAN_CHROMIUM)) return launch;
  const hint = `The browser tests need Chromium and found none: ${why}; ${DEBIAN_CHROMIUM} is not installed.`;
  if (process.getuid?.() !== 0 || !existsSync("/usr/bin/apt-get"))
    throw new Error(
      `${hint} Install it (Debian/Ubuntu: sudo apt-get install -y chromium) or set ACTORSTORE_CHROMIUM to a Chromium or Chrome executable.`,
    );
  console.log(`[chromium] ${why}; installing Debian's chromium with apt-get (about a minute) …`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const apt = async (...args: string[]) =>
    run("apt-get", ["-o", "DPkg::Lock::Timeout=300", ...args], { env, maxBuffer: 64 << 20, timeout: 900_000 });
  try {
    await apt("update");
    await apt("install", "-y", "--no-install-recommends", "chromium");
  } catch (e) {
    throw new Error(`${hint} apt-get install chromium failed: ${String((e as Error).message ?? e).slice(0, 2000)}`);
  }
  if (!existsSync(DEBIAN_CHROMIUM))
    throw new Error(`${hint} apt-get installed chromium but ${DEBIAN_CHROMIUM} is missing.`);
  return launch;
}

/** Finds (and if needed unpacks or installs) the browser and hands it to the tests. */
export async function findChromium(): Promise<ChromiumLaunch> {
  const override = process.env.ACTORSTORE_CHROMIUM;
  if (override !== undefined && override !== "") {
    if (!existsSync(override)) throw new Error(`ACTORSTORE_CHROMIUM=${override} does not exist.`);
    return { executablePath: override, env: {}, source: "env" };
  }
  const packaged = await fromNpmPackage();
  return typeof packaged === "string" ? fromDebian(packaged) : packaged;
}

export default async function setup(project: TestProject): Promise<void> {
  const started = Date.now();
  const launch = await findChromium();
  const ms = Date.now() - started;
  if (ms > 1000) console.log(`[chromium] ready in ${(ms / 1000).toFixed(1)} s: ${launch.executablePath}`);
  project.provide("chromium", launch);
}
