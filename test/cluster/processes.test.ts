import { describe, expect, test } from "vitest";
import { runClusterDemo } from "../../examples/cluster-demo";

describe("cluster in separate processes", () => {
  test("two hosts on loopback: requests through both reach the owner; kill -9 of the owner loses no confirmed write", async () => {
    const lines: string[] = [];
    // runClusterDemo throws when the room's next message number is not 3 (a confirmed write lost).
    // A member counts as dead after 3 s (the demo: 1 s), so a turn slowed by a loaded machine does not drop
    // a live host and give a room a second server; the kill then waits 3 s for the heartbeat to expire.
    await runClusterDemo(undefined, (line) => lines.push(line), undefined, { ttlMs: 3_000, idleMs: 600_000 });
    const before = lines.filter((l) => l.includes("POST /rooms/lobby") && !l.includes("after the kill"));
    expect(before).toHaveLength(2);
    // Both requests, one through each host, were served by the same host: the owner.
    const servedBy = before.map((l) => /served by (\S+)/.exec(l)?.[1]);
    expect(servedBy[0]).toBe(servedBy[1]);
    const after = lines.find((l) => l.includes("after the kill"));
    expect(after).toMatch(/message 3, served by (\S+)/);
    expect(after).not.toContain(`served by ${servedBy[0]} `);
    expect(lines.at(-1)).toBe("every confirmed message survived the kill.");
  }, 120_000);
});
