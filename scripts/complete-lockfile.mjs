#!/usr/bin/env node
// Adds lockfile entries for optional platform binaries that this workplace's npm registry does not
// serve (biome's and rollup's builds for other operating systems and CPUs). npm records no entry for
// a package it cannot fetch, and `npm ci` then refuses the lockfile as out of sync, even though it
// would skip those packages on this platform anyway. Run after `npm install` changes the lockfile.
import { readFileSync, writeFileSync } from "node:fs";

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
const packages = lock.packages;

/** os, cpu and libc of a platform package, from its name. */
function platformOf(name) {
  const tail = name.split("/")[1].replace(/^cli-|^rollup-/, "");
  const [os, cpuRaw, abi] = tail.split("-");
  const cpu = cpuRaw === "arm" ? "arm" : cpuRaw;
  const libc = os !== "linux" ? undefined : abi?.startsWith("musl") || abi === "musleabihf" ? "musl" : "glibc";
  return { os, cpu, libc };
}

let added = 0;
for (const [path, meta] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
    if (!/^@(biomejs\/cli|rollup\/rollup)-/.test(name)) continue;
    const prefix = path === "" ? "" : `${path}/`;
    const key = `${prefix}node_modules/${name}`;
    if (packages[key] !== undefined || packages[`node_modules/${name}`] !== undefined) continue;
    const { os, cpu, libc } = platformOf(name);
    packages[`node_modules/${name}`] = {
      version,
      cpu: [cpu],
      dev: true,
      ...(libc === undefined ? {} : { libc: [libc] }),
      license: meta.license ?? "MIT",
      optional: true,
      os: [os],
    };
    added++;
  }
}
const sorted = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
lock.packages = sorted;
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} platform entries`);
