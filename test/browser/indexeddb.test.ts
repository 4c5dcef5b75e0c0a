/**
 * IndexedDB persistence in headless Chromium (test/setup/chromium.ts), as a page uses it: the
 * package's browser build loaded without a bundler (test/browser/harness.ts), one browser profile
 * per test file. What a real browser does that `fake-indexeddb` does not: a quota (set through the
 * DevTools protocol's Storage.overrideQuotaForOrigin).
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureDist } from "../package/ensure-dist";
import { launchChromium, openStorageIn, openTab, serveBrowserBuild } from "./harness";

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
    ({ server, origin } = await serveBrowserBuild());
    profile = await mkdtemp(join(tmpdir(), "actorstore-idb-"));
    context = await launchChromium(profile);
  }, 300_000);

  afterAll(async () => {
    await context?.close();
    await new Promise((resolve) => server?.close(resolve));
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  it("the origin's quota used up: the commit is refused saying so and what to do, an open over quota too, and nothing unconfirmed is stored", async () => {
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

    // Over quota, an open cannot even claim the database: it says why.
    await cdp.send("Storage.overrideQuotaForOrigin", { origin, quotaSize: 1 });
    const over = await openTab(context, origin, problems);
    const refused = (await over.evaluate(openStorageIn("quota"))) as { code?: string; message?: string };
    expect(refused).toMatchObject({ ok: false, name: "ActorStoreError", code: "ERR_WRITE_FAILED" });
    expect(refused.message).toMatch(
      /^Opening IndexedDB database "quota" failed: the browser refused the small write that claims it for this writer \(QuotaExceededError: the browser's storage quota for this origin is used up /,
    );
    await over.close();

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
});
