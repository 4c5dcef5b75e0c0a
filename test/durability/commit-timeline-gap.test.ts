/**
 * A log that restarted after a snapshot newer than its end must still open. Found by the crash test:
 * the object failed every open with "CommitTimeline.append() expected seq 185 but got 201". Such a
 * log comes only from `repair` now: a log cut back behind its newest snapshot is refused until
 * repaired (confirmed frames were lost, test/durability/lost-log-end.test.ts), and repair records
 * the cut so that the object opens from the snapshot and goes on.
 */
import { mkdtemp, readdir, readFile, rm, truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { runInspect } from "../../src/cli/inspect-commands";
import { CommitTimeline } from "../../src/durability/commit-timeline";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { decodeRecords, encodedRecordSize } from "../../src/durability/record-codec";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";
import { logBindingOf } from "./directory-files";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const rec = (seq: number, timeMs: number) => ({ seq, timeMs, reset: false, sql: [], kv: [] });

describe("CommitTimeline with a gap covered by a snapshot", () => {
  test("fromLoad: restarts at the snapshot that covers a gap", () => {
    const t = CommitTimeline.fromLoad({
      snapshots: [
        { seq: 0, timeMs: 0, bytes: 1 },
        { seq: 5, timeMs: 50, bytes: 1 },
      ],
      records: [rec(1, 10), rec(2, 20), rec(6, 60), rec(7, 70)],
    });
    expect([t.firstSeq, t.lastSeq]).toEqual([5, 7]);
    expect(t.findSeqForTime(65)).toBe(6);
    expect(() => CommitTimeline.fromLoad({ snapshots: [], records: [rec(1, 10), rec(3, 30)] })).toThrow(
      expect.objectContaining({
        code: "ERR_CORRUPT",
        message: expect.stringContaining("jumps from commit 1 to commit 3"),
      }),
    );
  });

  test("ObjectStorage.open: a log cut back behind its newest snapshot is refused; once repaired it opens, and keeps going", async () => {
    const directory = await mkdtemp(join(tmpdir(), "actorstore-gap-"));
    dirs.push(directory);
    const clock = new FakeClock();
    const options = { clock, snapshotEveryRecords: 4 };
    let storage = await ObjectStorage.open({ ...options, persistence: await openFilePersistence(directory) });
    for (let n = 1; n <= 4; n++) {
      await storage.put("n", n);
      await storage.sync();
    }
    await coreOf(storage).settled();
    await storage.close();
    // Cut the last frame (seq 4) although snapshot 4 covers it.
    const segment = (await readdir(directory)).filter((f) => f.startsWith("log-")).sort()[0] as string;
    const bytes = new Uint8Array(await readFile(join(directory, segment)));
    const { records, validBytes } = decodeRecords(bytes, 0, Infinity, false, await logBindingOf(directory));
    await truncate(join(directory, segment), validBytes - encodedRecordSize(records.at(-1) as (typeof records)[0]));
    await expect(
      ObjectStorage.open({ ...options, persistence: await openFilePersistence(directory) }),
    ).rejects.toMatchObject({ code: "ERR_CORRUPT", message: expect.stringContaining("the log ends at seq 3") });
    const said: string[] = [];
    expect(await runInspect([directory, "repair"], { out: (l) => said.push(l), err: (l) => said.push(l) })).toBe(0);
    storage = await ObjectStorage.open({ ...options, persistence: await openFilePersistence(directory) });
    expect(coreOf(storage).lastSeq).toBe(4);
    await storage.put("n", 5);
    await storage.close();
    // The log now jumps from seq 3 to seq 5.
    storage = await ObjectStorage.open({ ...options, persistence: await openFilePersistence(directory) });
    expect(await storage.get("n")).toBe(5);
    expect(coreOf(storage).lastSeq).toBe(5);
    await storage.close();
  });
});
