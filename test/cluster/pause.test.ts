import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { type DemoHost, postOnce, startHost, stopHosts } from "../../examples/cluster-demo";

/**
 * Waits until each of `hosts` sees exactly `ids` as the live members (`GET /stats`). Membership
 * lives in other processes, so this polls in real time; a fixed wait instead (how long a heartbeat
 * takes to be seen, or to expire) is too short on a loaded machine.
 */
async function seeing(hosts: readonly DemoHost[], ids: readonly string[]): Promise<void> {
  const want = [...ids].sort().join(",");
  const deadline = Date.now() + 30_000;
  for (;;) {
    const views = await Promise.all(
      hosts.map(async (h) => {
        try {
          const res = await fetch(`http://127.0.0.1:${h.ready.front}/stats`, { signal: AbortSignal.timeout(5_000) });
          return ((await res.json()) as { live: string[] }).live.join(",");
        } catch (e) {
          return String(e); // a host just resumed may drop a pooled connection: ask again
        }
      }),
    );
    if (views.every((v) => v === want)) return;
    if (Date.now() > deadline) throw new Error(`members ${views.join(" / ")}, not ${want}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The hosts count a member dead after 3 s without a new heartbeat (the demo's 1 s), as the bucket
 * tests' do: on a loaded machine a heartbeat written every 200 ms was seen late often enough that a
 * host dropped the other for a moment. Objects are not evicted for being idle (the demo's 2 s): the
 * owner must still hold the lobby when it is stopped, however long the requests before took.
 */
const ENV = { ACTORSTORE_TTL_MS: "3000", ACTORSTORE_IDLE_MS: "600000" };

/**
 * One POST through `front`, sent again while the store's lock refuses it (a host that still counts
 * the owner dead for a moment tries to open the object itself and is refused: nothing was written).
 */
async function postPastLock(front: number, room: string): ReturnType<typeof postOnce> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await postOnce(front, room);
    if (r.status !== 503 || !r.text.startsWith("ERR_LOCKED") || Date.now() > deadline) return r;
    await new Promise((done) => setTimeout(done, 50));
  }
}

describe("cluster in separate processes: a paused owner", () => {
  test("while the owner is stopped (SIGSTOP) no other host confirms a write for its object; after SIGCONT the object continues with every confirmed write", async () => {
    const dir = await mkdtemp(join(tmpdir(), "actorstore-pause-"));
    const hosts = await Promise.all([
      startHost("host-a", dir, undefined, ENV),
      startHost("host-b", dir, undefined, ENV),
    ]);
    try {
      const ids = hosts.map((h) => h.ready.ready);
      // Both route the lobby to one owner only once each sees the other.
      await seeing(hosts, ids);
      const first = await postOnce(hosts[0].ready.front, "lobby");
      expect(first.status).toBe(200);
      const owner = first.body.servedBy as string;
      const paused = hosts.find((h) => h.ready.ready === owner) as (typeof hosts)[number];
      const other = hosts.find((h) => h !== paused) as (typeof hosts)[number];
      const second = await postPastLock(other.ready.front, "lobby");
      expect(second.body).toMatchObject({ count: 2, servedBy: owner });
      paused.child.kill("SIGSTOP");
      // Once the paused host's heartbeat is past its ttl for the other host, that host takes the
      // object over by membership, but the store's lock refuses it while the paused process holds the
      // object.
      await seeing([other], [other.ready.ready]);
      const during = await postOnce(other.ready.front, "lobby");
      expect(during.status).toBe(503);
      expect(during.text).toMatch(/locked|ERR_LOCKED|holds|open/i);
      paused.child.kill("SIGCONT");
      await seeing(hosts, ids);
      const after = await postPastLock(other.ready.front, "lobby");
      expect(after.status).toBe(200);
      // Nothing confirmed was lost, and the refused write was never applied.
      expect(after.body.count).toBe(3);
    } finally {
      await stopHosts(hosts);
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
