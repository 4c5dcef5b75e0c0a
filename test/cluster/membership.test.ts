import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { ClusterBucket } from "../../src/cluster/bucket";
import { BucketMembership, DirectoryMembership } from "../../src/cluster/membership";
import { FakeClock } from "../../src/util/clock";
import { FakeS3 } from "../s3/fake-s3";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function setup() {
  const dir = await mkdtemp(join(tmpdir(), "actorstore-members-"));
  dirs.push(dir);
  const make = (id: string, clock: FakeClock) =>
    new DirectoryMembership({ directory: dir, id, address: `http://${id}`, clock, heartbeatMs: 100, ttlMs: 1_000 });
  return { dir, make };
}

describe("membership: liveness judged on each observer's own clock", () => {
  test("a member whose clock is far off counts as live while its record keeps changing, and dead once it stops", async () => {
    const { make } = await setup();
    const ours = new FakeClock(1_000_000);
    // The other host's clock is an hour behind ours.
    const theirs = new FakeClock(1_000_000 - 3_600_000);
    const a = make("a", ours);
    const b = make("b", theirs);
    await a.join();
    await b.join();
    await a.refresh();
    // First sight: judged by b's own (wrong) clock: its record looks an hour old.
    expect(a.live()).toEqual(["a"]);
    // Its next heartbeat changes the record: from then on only changes count.
    await theirs.advance(100);
    await b.beat();
    await a.refresh();
    expect(a.live()).toEqual(["a", "b"]);
    for (let i = 0; i < 5; i++) {
      await ours.advance(500);
      await b.beat();
      await a.refresh();
      expect(a.live()).toEqual(["a", "b"]);
    }
    // b stops (a crash): unchanged for ttlMs on a's clock, it is dead.
    b.stop();
    await ours.advance(900);
    await a.refresh();
    expect(a.live()).toEqual(["a", "b"]);
    await ours.advance(200);
    await a.refresh();
    expect(a.live()).toEqual(["a"]);
    a.stop();
  });

  test("a member whose clock runs ahead is not kept alive by it: a record that stops changing dies after ttlMs", async () => {
    const { make } = await setup();
    const ours = new FakeClock(1_000_000);
    const theirs = new FakeClock(1_000_000 + 3_600_000);
    const a = make("a", ours);
    const b = make("b", theirs);
    await a.join();
    await b.join();
    b.stop();
    await a.refresh();
    expect(a.live()).toEqual(["a", "b"]);
    await ours.advance(1_000);
    await a.refresh();
    expect(a.live()).toEqual(["a"]);
    a.stop();
  });

  test("a host that did not read the records for a while (paused, stalled) does not count the others dead for that time: liveness is judged as of its last read", async () => {
    const { make } = await setup();
    const ours = new FakeClock(2_000_000);
    const theirs = new FakeClock(2_000_000);
    const a = make("a", ours);
    const b = make("b", theirs);
    await a.join();
    await b.join();
    await a.refresh();
    expect(a.live()).toEqual(["a", "b"]);
    // a is paused for ten times the ttl (its timers did not run: no read; stopped here so that the
    // fake clock does not run them either, which also leaves a itself out); b kept beating.
    a.stop();
    for (let i = 0; i < 10; i++) {
      await theirs.advance(1_000);
      await b.beat();
    }
    await ours.advance(10_000);
    // Nothing a has read says b stopped: b stays live until a reads the records again …
    expect(a.live()).toEqual(["b"]);
    await a.refresh();
    expect(a.live()).toEqual(["b"]);
    // … and dies only once a has seen its record unchanged for ttlMs.
    b.stop();
    await ours.advance(999);
    await a.refresh();
    expect(a.live()).toEqual(["b"]);
    await ours.advance(1);
    await a.refresh();
    expect(a.live()).toEqual([]);
  });

  test("leave deletes the record; a torn or foreign record is ignored; onChange reports changes", async () => {
    const { dir, make } = await setup();
    const clock = new FakeClock(5_000_000);
    const changes: string[] = [];
    const a = new DirectoryMembership({
      directory: dir,
      id: "a",
      address: "http://a",
      clock,
      heartbeatMs: 100,
      ttlMs: 1_000,
      onChange: (live) => changes.push(live.join(",")),
    });
    const b = make("b", clock);
    await a.join();
    await b.join();
    await writeFile(join(dir, "members", "torn.json"), '{"id": "torn", "addr');
    await writeFile(join(dir, "members", "foreign.json"), JSON.stringify({ hello: 1 }));
    await a.refresh();
    expect(a.live()).toEqual(["a", "b"]);
    expect(JSON.parse(await readFile(join(dir, "members", "b.json"), "utf8"))).toMatchObject({ id: "b", beat: 1 });
    await b.leave();
    await a.refresh();
    expect(a.live()).toEqual(["a"]);
    expect(changes).toEqual(["a", "a,b", "a"]);
    expect(() => make("not valid!", clock)).toThrow(TypeError);
    a.stop();
  });
});

describe("membership: a record that cannot be read now is not a dead host's", () => {
  test("over a bucket, a member whose record's GET fails (every attempt) stays live as last read, dies only once unreadable for ttlMs, and its record is kept", async () => {
    const s3 = await FakeS3.start();
    try {
      const clock = new FakeClock(1_000_000);
      const bucket = new ClusterBucket({
        endpoint: s3.endpoint,
        bucket: "objects",
        prefix: "m/",
        credentials: { accessKeyId: "AKFAKE", secretAccessKey: "not-a-real-secret" },
      });
      const make = (id: string) =>
        new BucketMembership({ bucket, id, address: `http://${id}`, clock, heartbeatMs: 100, ttlMs: 1_000 });
      const a = make("a");
      const b = make("b");
      await a.join();
      await b.join();
      await a.refresh();
      expect(a.live()).toEqual(["a", "b"]);
      const failing = {
        match: (r: { op: string; key: string }) => r.op === "GET" && r.key === "m/members/b.json",
        fault: { kind: "status" as const, status: 503, code: "SlowDown" },
        times: 1_000_000,
      };
      s3.fault(failing);
      const gets = () => s3.log.filter((r) => r.op === "GET" && r.key === "m/members/b.json").length;
      const before = gets();
      await a.refresh();
      expect(gets() - before).toBe(4); // each attempt failed
      expect(a.live()).toEqual(["a", "b"]);
      await clock.advance(900);
      await b.beat(); // written, but a cannot read it
      await a.refresh();
      expect(a.live()).toEqual(["a", "b"]);
      await clock.advance(200);
      await a.refresh();
      expect(a.live()).toEqual(["a"]); // unreadable for ttlMs: as a host that stopped
      s3.rules.splice(s3.rules.indexOf(failing), 1);
      expect(s3.keys("objects", "m/members/")).toEqual(["m/members/a.json", "m/members/b.json"]);
      await a.refresh();
      expect(a.live()).toEqual(["a", "b"]); // readable again, and changed
      a.stop();
      b.stop();
    } finally {
      await s3.close();
    }
  });

  test("over a directory, a record that cannot be read (not deleted) stays as last read, and a members directory that cannot be listed fails the refresh instead of emptying the view", async () => {
    const { dir, make } = await setup();
    const clock = new FakeClock(1_000_000);
    const a = make("a", clock);
    const b = make("b", clock);
    await a.join();
    await b.join();
    await a.refresh();
    expect(a.live()).toEqual(["a", "b"]);
    b.stop();
    // b's record is there but cannot be read (EISDIR stands for EMFILE, EIO).
    await rm(join(dir, "members", "b.json"));
    await mkdir(join(dir, "members", "b.json"));
    await a.refresh();
    expect(a.live()).toEqual(["a", "b"]);
    await clock.advance(1_100);
    await a.refresh();
    expect(a.live()).toEqual(["a"]);
    await rm(join(dir, "members", "b.json"), { recursive: true });
    await b.join();
    await a.refresh();
    expect(a.live()).toEqual(["a", "b"]);
    // The members directory cannot be listed (ENOTDIR stands for EMFILE, EIO): the view is kept.
    await rm(join(dir, "members"), { recursive: true });
    await writeFile(join(dir, "members"), "");
    await expect(a.refresh()).rejects.toMatchObject({ code: "ENOTDIR" });
    expect(a.live()).toEqual(["a", "b"]);
    a.stop();
    b.stop();
  });
});
