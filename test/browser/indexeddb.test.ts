/**
 * IndexedDB persistence in headless Chromium (test/setup/chromium.ts), as a page uses it: the
 * package's browser build loaded without a bundler (test/browser/harness.ts), one browser profile
 * per test file. What a real browser does that `fake-indexeddb` does not: a quota (set through the
 * DevTools protocol's Storage.overrideQuotaForOrigin), workers sharing an origin's databases, and
 * the browser process killed while commits are in flight.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureDist, ROOT } from "../package/ensure-dist";
import { launchChromium, openStorageIn, openTab, serveBrowserBuild } from "./harness";

/**
 * The code a Web Worker or SharedWorker runs, bundled for the browser as the README says a worker's
 * code must be (a worker sees no import map): each message names a database; the worker opens it,
 * adds one to "n" and a row, and answers what it found and wrote.
 */
const WORKER = `
import { ObjectStorage, openIndexedDbPersistence } from ${JSON.stringify(join(ROOT, "dist/browser/index.js"))};
async function bump(name) {
  const storage = await ObjectStorage.open({
    persistence: await openIndexedDbPersistence(name),
    sqlJs: { locateFile: (file) => "/wasm/" + file },
  });
  const before = (await storage.get("n")) ?? 0;
  await storage.put("n", before + 1);
  storage.sql.exec("CREATE TABLE IF NOT EXISTS t (n INTEGER)");
  storage.sql.exec("INSERT INTO t VALUES (?)", before + 1);
  await storage.sync();
  const rows = storage.sql.exec("SELECT count(*) AS c FROM t").one().c;
  await storage.close();
  return { before, rows, codec: storage.codec };
}
const answer = (port) => async (m) => {
  try { port.postMessage(await bump(m.data)); } catch (e) { port.postMessage({ error: String(e && e.stack || e) }); }
};
if ("SharedWorkerGlobalScope" in self) self.onconnect = (e) => { e.ports[0].onmessage = answer(e.ports[0]); };
else self.onmessage = answer(self);
`;

/** Page code: starts a worker of `kind` on `/worker.js`, sends it `name`, resolves to its answer. */
function runWorker(kind: "Worker" | "SharedWorker", name: string): string {
  return `new Promise((resolve) => {
    const worker = new ${kind}("/worker.js", { type: "module" });
    const port = ${kind === "SharedWorker" ? "worker.port" : "worker"};
    worker.onerror = (e) => resolve({ error: "worker error: " + e.message });
    port.onmessage = (m) => resolve(m.data);
    port.postMessage(${JSON.stringify(name)});
  })`;
}

/** The browser process (not a renderer or helper: no `--type=`) started with `profile`, by /proc. */
async function browserPid(profile: string): Promise<number> {
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const args = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    const argv = args.split("\0");
    if (argv.includes(`--user-data-dir=${profile}`) && !argv.some((a) => a.startsWith("--type="))) return Number(entry);
  }
  throw new Error(`no browser process with profile ${profile}`);
}

interface WriteOutcome {
  confirmed: number;
  error?: { message: string; causeCode?: string; causeMessage?: string };
}

describe("IndexedDB persistence in headless Chromium", () => {
  let server: Server;
  let origin: string;
  let profile: string;
  let context: BrowserContext;

  beforeAll(async () => {
    await ensureDist();
    const worker = await build({
      stdin: { contents: WORKER, resolveDir: ROOT, loader: "js" },
      bundle: true,
      platform: "browser",
      format: "esm",
      target: "es2022",
      write: false,
      logLevel: "silent",
    });
    ({ server, origin } = await serveBrowserBuild({ "/worker.js": worker.outputFiles[0]?.text ?? "" }));
    profile = await mkdtemp(join(tmpdir(), "actorstore-idb-"));
    context = await launchChromium(profile);
  }, 300_000);

  afterAll(async () => {
    await context?.close();
    await new Promise((resolve) => server?.close(resolve));
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  it("the origin's quota used up: the commit is refused saying so and what to do, and nothing unconfirmed is stored", async () => {
    const problems: string[] = [];
    // The DevTools session that sets the quota stays attached for the whole test (an override
    // ends with its session).
    const keeper = await openTab(context, origin, problems);
    const cdp = await context.newCDPSession(keeper);
    const usage = (await keeper.evaluate("navigator.storage.estimate()")) as { usage: number };
    await cdp.send("Storage.overrideQuotaForOrigin", { origin, quotaSize: usage.usage + 2_000_000 });

    const writer = await openTab(context, origin, problems);
    expect(await writer.evaluate(openStorageIn("quota"))).toEqual({ ok: true });
    // Rows of 100 KB of random bytes (nothing compresses them) until the browser refuses one.
    const outcome = (await writer.evaluate(`(async () => {
      const s = window.storage;
      s.sql.exec("CREATE TABLE t (n INTEGER PRIMARY KEY, b BLOB)");
      let confirmed = 0;
      for (let n = 1; n <= 100; n++) {
        const b = new Uint8Array(100_000);
        for (let i = 0; i < b.length; i += 65536) crypto.getRandomValues(b.subarray(i, i + 65536));
        try {
          s.sql.exec("INSERT INTO t VALUES (?, ?)", n, b);
          await s.put("n", n);
          await s.sync();
          confirmed = n;
        } catch (e) {
          return { confirmed, error: { message: e.message, causeCode: e.cause?.code, causeMessage: e.cause?.message } };
        }
      }
      return { confirmed };
    })()`)) as WriteOutcome;
    expect(outcome.error, "100 rows of 100 KB fit in a quota of 2 MB").toBeDefined();
    expect(outcome.confirmed).toBeGreaterThan(0);
    // The platform's reset error, whose cause says what the browser refused and what to do.
    expect(outcome.error?.message).toBe("Internal error in Durable Object storage write caused object to be reset.");
    expect(outcome.error?.causeCode).toBe("ERR_WRITE_FAILED");
    expect(outcome.error?.causeMessage).toMatch(
      /^Writing the commit log in IndexedDB database "quota" failed \(QuotaExceededError: the browser's storage quota for this origin is used up .*navigator\.storage\.persist\(\)\); call load\(\) to reopen\.$/,
    );
    await writer.close();

    // With room again: exactly the confirmed commits, and writes go on.
    await cdp.send("Storage.overrideQuotaForOrigin", { origin });
    const reader = await openTab(context, origin, problems);
    expect(await reader.evaluate(openStorageIn("quota"))).toEqual({ ok: true });
    const state = await reader.evaluate(`(async () => {
      const s = window.storage;
      const rows = s.sql.exec("SELECT count(*) AS c, max(n) AS m FROM t").one();
      const n = await s.get("n");
      await s.put("after", true);
      await s.sync();
      return { rows: rows.c, max: rows.m, n };
    })()`);
    expect(state).toEqual({ rows: outcome.confirmed, max: outcome.confirmed, n: outcome.confirmed });
    expect(problems).toEqual([]);
  }, 120_000);

  it("an open that another tab blocks (its deleteDatabase() waits on a connection that does not close) fails with ERR_LOCKED after openTimeoutMs, and opens once that tab lets go", async () => {
    const problems: string[] = [];
    const ours = await openTab(context, origin, problems);
    expect(await ours.evaluate(openStorageIn("blocked"))).toEqual({ ok: true });
    await ours.evaluate(
      `(async () => { await window.storage.put("a", 1); await window.storage.sync(); await window.storage.close(); })()`,
    );
    // The other tab: a connection with no versionchange handler, then a delete that it blocks.
    const other = await openTab(context, origin, problems);
    expect(
      await other.evaluate(`new Promise((resolve, reject) => {
        const open = indexedDB.open("blocked");
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          window.holder = open.result;
          const del = indexedDB.deleteDatabase("blocked");
          window.deleted = new Promise((done) => (del.onsuccess = () => done(true)));
          del.onblocked = () => resolve("blocked");
        };
      })`),
    ).toBe("blocked");
    const refused = await ours.evaluate(`(async () => {
      const persistence = await window.lib.openIndexedDbPersistence("blocked", { openTimeoutMs: 1000 });
      try { await persistence.load(); return { ok: true }; } catch (e) { return { code: e.code, message: e.message }; }
    })()`);
    expect(refused).toEqual({
      code: "ERR_LOCKED",
      message: expect.stringMatching(
        /^Opening IndexedDB database "blocked" did not complete within 1000 ms: another connection of this site blocks it .* Close the other tabs of this site that use it \(or reload them\), then open again\.$/,
      ),
    });
    // The other tab lets go: its delete goes through (the open given up holds nothing), and the
    // object opens again, empty.
    expect(await other.evaluate(`(async () => { window.holder.close(); return await window.deleted; })()`)).toBe(true);
    expect(await ours.evaluate(openStorageIn("blocked"))).toEqual({ ok: true });
    expect(await ours.evaluate(`(async () => (await window.storage.get("a")) ?? "absent")()`)).toBe("absent");
    await ours.evaluate(`window.storage.close()`);
    expect(problems).toEqual([]);
  }, 60_000);

  it("another tab upgrades the database: the writer's connection closes at once (the upgrade is not blocked), every confirmed write is in what it upgraded, and the writer's next write fails with a documented error", async () => {
    const problems: string[] = [];
    const ours = await openTab(context, origin, problems);
    expect(await ours.evaluate(openStorageIn("upgraded"))).toEqual({ ok: true });
    await ours.evaluate(`(async () => {
      for (let n = 1; n <= 5; n++) { await window.storage.put("n", n); await window.storage.sync(); }
    })()`);
    const other = await openTab(context, origin, problems);
    const upgraded = await other.evaluate(`new Promise((resolve, reject) => {
      const open = indexedDB.open("upgraded", 2);
      open.onblocked = () => resolve({ blocked: true });
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const db = open.result;
        const req = db.transaction(["records"]).objectStore("records").getAllKeys();
        req.onsuccess = () => { db.close(); resolve({ version: db.version, keys: req.result }); };
      };
    })`);
    expect(upgraded).toEqual({ version: 2, keys: [1, 2, 3, 4, 5] });
    const after = (await ours.evaluate(`(async () => {
      try { await window.storage.put("n", 6); await window.storage.sync(); return { ok: true }; }
      catch (e) { return { code: e.code, message: e.message, causeCode: e.cause?.code, causeMessage: e.cause?.message }; }
    })()`)) as Record<string, string | undefined>;
    // The platform's reset error; its cause says what happened and what to do.
    expect(after).toEqual({
      message: "Internal error in Durable Object storage write caused object to be reset.",
      causeCode: "ERR_CLOSED",
      causeMessage:
        'Cannot call append(): IndexedDB database "upgraded" was closed under this adapter, because another connection deleted or upgraded it (another tab, or other code of the origin). Load (or reload) the persistence to open it again (a deleted database opens empty).',
    });
    expect(problems).toEqual([]);
  }, 60_000);

  it("a Web Worker and a SharedWorker (bundled) open the same database in turn, and a tab sees what they wrote", async () => {
    const problems: string[] = [];
    const page = await openTab(context, origin, problems);
    expect(await page.evaluate(runWorker("Worker", "workers"))).toEqual({ before: 0, rows: 1, codec: "structured" });
    expect(await page.evaluate(runWorker("Worker", "workers"))).toEqual({ before: 1, rows: 2, codec: "structured" });
    expect(await page.evaluate(runWorker("SharedWorker", "workers"))).toEqual({
      before: 2,
      rows: 3,
      codec: "structured",
    });
    expect(await page.evaluate(openStorageIn("workers"))).toEqual({ ok: true });
    expect(await page.evaluate(`window.storage.get("n")`)).toBe(3);
    expect(problems).toEqual([]);
  }, 60_000);

  it("the browser SIGKILLed in the middle of commits: after a restart every confirmed commit is there, each whole", async () => {
    const crashProfile = await mkdtemp(join(tmpdir(), "actorstore-idb-crash-"));
    let crashed: BrowserContext | undefined = await launchChromium(crashProfile);
    try {
      const page = await openTab(crashed, origin);
      let confirmed = 0;
      await page.exposeFunction("confirmed", (n: number) => {
        confirmed = Math.max(confirmed, n);
      });
      expect(await page.evaluate(openStorageIn("crash"))).toEqual({ ok: true });
      // Each commit: "n", a key of its own and a SQL row (sizes vary, so snapshots come and go).
      void page
        .evaluate(`(async () => {
          const s = window.storage;
          s.sql.exec("CREATE TABLE t (n INTEGER PRIMARY KEY, b BLOB)");
          for (let n = 1; ; n++) {
            await s.transaction(async (txn) => {
              await txn.put("n", n);
              await txn.put("k:" + n, new Uint8Array(1000 + (n % 7) * 9000));
              s.sql.exec("INSERT INTO t VALUES (?, randomblob(?))", n, 2000);
            });
            await s.sync();
            await window.confirmed(n);
          }
        })()`)
        .catch(() => undefined);
      // Polled: the commits run in the browser, on its clock.
      for (let waited = 0; confirmed < 50; waited += 50) {
        if (waited > 60_000) throw new Error(`only ${confirmed} commits confirmed in 60 s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      process.kill(await browserPid(crashProfile), "SIGKILL");
      const atKill = confirmed;
      await crashed.close().catch(() => undefined);
      crashed = await launchChromium(crashProfile);
      const reopened = await openTab(crashed, origin);
      expect(await reopened.evaluate(openStorageIn("crash"))).toEqual({ ok: true });
      const state = (await reopened.evaluate(`(async () => {
        const s = window.storage;
        const rows = s.sql.exec("SELECT count(*) AS c, max(n) AS m FROM t").one();
        return { n: await s.get("n"), keys: (await s.list({ prefix: "k:" })).size, rows: rows.c, max: rows.m };
      })()`)) as { n: number; keys: number; rows: number; max: number };
      expect(state.n).toBeGreaterThanOrEqual(atKill);
      // Whole commits only: the key-value writes and the SQL row of each commit are there together.
      expect(state).toEqual({ n: state.n, keys: state.n, rows: state.n, max: state.n });
    } finally {
      await crashed?.close().catch(() => undefined);
      await rm(crashProfile, { recursive: true, force: true });
    }
  }, 90_000);
});
