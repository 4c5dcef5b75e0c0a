import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { postOnce, startHost, stopHosts } from "../../examples/cluster-demo";

describe("cluster in separate processes: a paused owner", () => {
  test("while the owner is stopped (SIGSTOP) no other host confirms a write for its object; after SIGCONT the object continues with every confirmed write", async () => {
    const dir = await mkdtemp(join(tmpdir(), "actorstore-pause-"));
    const hosts = await Promise.all([startHost("host-a", dir), startHost("host-b", dir)]);
    try {
      await new Promise((r) => setTimeout(r, 600));
      const first = await postOnce(hosts[0].ready.front, "lobby");
      expect(first.status).toBe(200);
      const owner = first.body.servedBy as string;
      const paused = hosts.find((h) => h.ready.ready === owner) as (typeof hosts)[number];
      const other = hosts.find((h) => h !== paused) as (typeof hosts)[number];
      expect((await postOnce(other.ready.front, "lobby")).body.count).toBe(2);
      paused.child.kill("SIGSTOP");
      // Past the paused host's heartbeat ttl (1 s): the other host takes the object over by membership,
      // but the store's lock refuses it while the paused process holds the object.
      await new Promise((r) => setTimeout(r, 1_500));
      const during = await postOnce(other.ready.front, "lobby");
      expect(during.status).toBe(503);
      expect(during.text).toMatch(/locked|ERR_LOCKED|holds|open/i);
      paused.child.kill("SIGCONT");
      await new Promise((r) => setTimeout(r, 800));
      const after = await postOnce(other.ready.front, "lobby");
      expect(after.status).toBe(200);
      // Nothing confirmed was lost, and the refused write was never applied.
      expect(after.body.count).toBe(3);
    } finally {
      await stopHosts(hosts);
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
