/**
 * The file adapter under a steady stream of appends: snapshots and reads must not wait for the
 * stream to stop (they only need the appends queued before them), or a busy object never gets a
 * snapshot. Found by the crash test. No timing: the stream stops on its own after a few thousand
 * appends, and the test asserts the snapshot finished while appends were still being issued.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { openFilePersistence } from "../../src/durability/file-persistence";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const record = (seq: number): CommitRecord => ({
  seq,
  timeMs: 1_767_225_600_000 + seq,
  reset: false,
  sql: [],
  kv: [{ key: "k", value: new Uint8Array([seq % 256]) }],
});

/** Appends without pause, keeping up to four in flight, until `stop()` says so (or 3,000 appends). */
async function stream(persistence: { append(r: CommitRecord[]): Promise<void> }, from: number, stop: () => boolean) {
  const inFlight: Array<Promise<void>> = [];
  let seq = from;
  while (!stop() && seq < from + 3000) {
    inFlight.push(persistence.append([record(++seq)]));
    if (inFlight.length >= 4) await inFlight.shift();
  }
  await Promise.all(inFlight);
  return seq - from;
}

describe("file persistence under load", () => {
  test("writeSnapshot: finishes while appends keep streaming", async () => {
    const dir = await mkdtemp(join(tmpdir(), "actorstore-busy-"));
    dirs.push(dir);
    const persistence = await openFilePersistence(dir, { allowUnsyncedWrites: true });
    await persistence.load();
    await persistence.append([record(1)]);
    let done = false;
    const snapshot = persistence.writeSnapshot({ seq: 1, timeMs: 0 }, new Uint8Array(64)).then(() => {
      done = true;
    });
    const appended = await stream(persistence, 1, () => done);
    await snapshot;
    expect(appended).toBeLessThan(3000);
    expect((await persistence.load()).snapshots.map((s) => s.seq)).toEqual([1]);
    await persistence.close();
  });

  test("readRecords: answers while appends keep streaming", async () => {
    const dir = await mkdtemp(join(tmpdir(), "actorstore-busy-"));
    dirs.push(dir);
    const persistence = await openFilePersistence(dir, { allowUnsyncedWrites: true });
    await persistence.load();
    await persistence.append([record(1), record(2)]);
    let read: CommitRecord[] | undefined;
    const reading = persistence.readRecords(0, 2).then((r) => {
      read = r;
    });
    const appended = await stream(persistence, 2, () => read !== undefined);
    await reading;
    expect(appended).toBeLessThan(3000);
    expect(read?.map((r) => r.seq)).toEqual([1, 2]);
    await persistence.close();
  });
});
