#!/usr/bin/env node
// Enforces the dependency direction described in docs/architecture.md.
// A lint rule rather than a convention: it fails `npm run lint` (and so `npm test`).
//
//   api/        leaf: imports nothing outside src/api/
//   engine/     only engine/sqljs.ts may import "sql.js" (or any file of the package), statically,
//               dynamically or through require(); it holds every workaround of it
//   time        Date.now, setTimeout and setInterval only in the clock modules (util/clock.ts,
//               engine/sqljs.ts which pins SQLite's 'now', testkit/date-clock.ts); see util/clock.ts
//   util/       imports nothing but util/ and errors
//   storage/    never imports context/ (the object context builds on storage, not the reverse)
//   host/       the object host sits above the object context: it may import context/, storage/,
//               durability/, util/ and errors; nothing outside host/ but the entry points imports it
//   cluster/    hosts on several processes (node:http): imports host/, context/, durability/, util/,
//               errors, the s3 entry (s3/index, s3/options) and s3/s3-credentials: the cluster's own
//               records in a bucket are signed with the S3 adapter's credentials (fixed or a provider's,
//               cached, fetched again on a refusal, never in an error), one implementation rather than
//               a copy, and internal (not exported by actorstore/s3); an entry of its own
//               (actorstore/cluster) that nothing else imports
//   server/     the API server: may import api/, storage/ and util/; nothing imports it but the
//               test kit's server helper (the other layers never depend on HTTP serving)
//   s3/         the actorstore/s3 entry: imports only durability/, util/, errors and "aws4fetch"; only
//               s3/ imports "aws4fetch", and only s3/, cli/ and cluster/ import s3/ (the core stays
//               sql.js-only)
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const src = join(root, "src");
const problems = [];

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...walk(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

const importRe =
  /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|require\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;
// What the cluster may import of s3/ (see the header): the entry, its options, and the credentials.
const CLUSTER_S3 = new Set(["s3/index", "s3/options", "s3/s3-credentials"]);
const TIME_MODULES = new Set(["util/clock.ts", "engine/sqljs.ts", "testkit/date-clock.ts"]);
const timeRe = /\bDate\.now\b|\bset(?:Timeout|Interval)\s*\(/;

for (const file of walk(src)) {
  const rel = relative(src, file).split("\\").join("/");
  // Strip comments first: doc examples mention imports that the module does not make.
  const text = readFileSync(file, "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
  if (!TIME_MODULES.has(rel) && timeRe.test(text)) {
    problems.push(
      `${rel}: time and timers go through the injected clock (util/clock.ts), not Date.now/setTimeout/setInterval`,
    );
  }
  for (const m of text.matchAll(importRe)) {
    const spec = m[1] ?? m[2] ?? m[3] ?? m[4];
    if (spec === undefined) continue;
    const target = spec.startsWith(".")
      ? relative(src, resolve(dirname(file), spec))
          .split("\\")
          .join("/")
      : spec;
    if ((spec === "sql.js" || spec.startsWith("sql.js/")) && rel !== "engine/sqljs.ts") {
      problems.push(`${rel}: only engine/sqljs.ts may import sql.js`);
    }
    if (rel.startsWith("api/") && spec.startsWith(".") && !target.startsWith("api/")) {
      problems.push(`${rel}: api/ is a leaf and must not import ${spec} (HTTP models never import storage code)`);
    }
    if (rel.startsWith("api/") && !spec.startsWith(".")) {
      problems.push(`${rel}: api/ must stay free of runtime dependencies (imports ${spec})`);
    }
    if (
      rel.startsWith("util/") &&
      spec.startsWith(".") &&
      !(target.startsWith("util/") || target === "errors" || target === "errors.js")
    ) {
      problems.push(`${rel}: util/ must not import ${spec}`);
    }
    if (spec === "aws4fetch" && !rel.startsWith("s3/")) {
      problems.push(
        `${rel}: only s3/ may import aws4fetch (the core keeps sql.js as its only dependency; the cluster signs through s3/s3-credentials)`,
      );
    }
    if (
      rel.startsWith("s3/") &&
      (spec.startsWith(".")
        ? !/^(s3|durability|util)\//.test(target) && target !== "errors" && target !== "errors.js"
        : spec !== "aws4fetch")
    ) {
      problems.push(`${rel}: s3/ may import only durability/, util/, errors and aws4fetch (imports ${spec})`);
    }
    if (
      spec.startsWith(".") &&
      target.startsWith("s3/") &&
      !rel.startsWith("s3/") &&
      !rel.startsWith("cli/") &&
      !(rel.startsWith("cluster/") && CLUSTER_S3.has(target))
    ) {
      problems.push(
        `${rel}: only the s3 entry, the CLI and the cluster (through s3/index, s3/options, s3/s3-credentials) may import s3/ (imports ${spec})`,
      );
    }
    if (
      rel.startsWith("server/") &&
      spec.startsWith(".") &&
      !/^(server|api|storage|util|durability|engine)\//.test(target) &&
      target !== "errors" &&
      target !== "limits"
    ) {
      problems.push(`${rel}: server/ may import only api/, storage/ and what storage builds on (imports ${spec})`);
    }
    if (
      !rel.startsWith("server/") &&
      rel !== "testkit/api-server.ts" &&
      spec.startsWith(".") &&
      target.startsWith("server/")
    ) {
      problems.push(`${rel}: nothing imports server/ (the API server is a top layer; imports ${spec})`);
    }
    if (
      (rel.startsWith("storage/") || rel.startsWith("engine/") || rel.startsWith("durability/")) &&
      target.startsWith("context/")
    ) {
      problems.push(`${rel}: ${rel.split("/")[0]}/ must not import the object context (${spec})`);
    }
    if (rel.startsWith("host/") && spec.startsWith(".")) {
      const ok = ["host/", "context/", "storage/", "durability/", "util/", "alarms/"].some((p) => target.startsWith(p));
      if (!ok && target !== "errors" && target !== "errors.js") {
        problems.push(
          `${rel}: host/ may import only context/, storage/, durability/, alarms/, util/ and errors (imports ${spec})`,
        );
      }
    }
    if (rel.startsWith("cluster/") && spec.startsWith(".")) {
      const ok = ["cluster/", "host/", "context/", "durability/", "util/"].some((p) => target.startsWith(p));
      if (!ok && target !== "errors" && target !== "errors.js" && !CLUSTER_S3.has(target)) {
        problems.push(
          `${rel}: cluster/ may import only host/, context/, durability/, util/, errors and the s3 entry (imports ${spec})`,
        );
      }
    }
    if (!rel.startsWith("cluster/") && spec.startsWith(".") && target.startsWith("cluster/")) {
      problems.push(`${rel}: nothing imports the cluster layer; it is an entry of its own (${spec})`);
    }
    const isEntry =
      rel === "index.ts" || rel === "testkit/index.ts" || rel.startsWith("testkit/") || rel.startsWith("cluster/");
    if (!rel.startsWith("host/") && !isEntry && spec.startsWith(".") && target.startsWith("host/")) {
      problems.push(`${rel}: only the entry points and the test kit may import the object host (${spec})`);
    }
  }
}

if (problems.length > 0) {
  console.error(`Layering check failed:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  process.exit(1);
}
console.log("layering ok");
