/**
 * A restore into history that is not there says so truthfully: pruned (outside the retention
 * window) or lost (log files deleted from outside, or removed by a repair). Before, every such
 * refusal said the history "was pruned (outside the retention window)", also when a log segment
 * under a delta snapshot's base had been deleted and the states were well inside the window
 * (docs/durability.md, *Lost log segments*).
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runInspect } from "../../src/cli/inspect-commands";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { FakeClock } from "../../src/util/clock";
import { kvRecord, range } from "./adapter-contract";

const root = await mkdtemp(join(tmpdir(), "actorstore-lost-history-"));
let counter = 0;
const freshDir = (): string => join(root, `object-${++counter}`);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const oldestSegment = async (dir: string) =>
  (await readdir(dir)).filter((n) => n.startsWith("log-")).sort()[0] as string;

async function caught(run: () => Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await run();
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error("expected a refusal");
}

/** Puts `n` = from…to one commit a second, each synced; the bookmark before them and after each. */
async function bookmarkedPuts(storage: ObjectStorage, clock: FakeClock, from: number, to: number): Promise<string[]> {
  const bookmarks = [await storage.getCurrentBookmark()];
  for (let n = from; n <= to; n++) {
    await clock.advance(1000);
    await storage.put("n", n);
    await storage.sync();
    bookmarks.push(await storage.getCurrentBookmark());
    await coreOf(storage).settled();
  }
  return bookmarks;
}

describe("history that is not there", () => {
  it("file adapter: a lost segment under a delta's base is ERR_BOOKMARK saying pruned or lost, not only pruned", async () => {
    const dir = freshDir();
    const adapter = await openFilePersistence(dir, { segmentBytes: 64 });
    await adapter.load();
    await adapter.writeSnapshot({ seq: 0, timeMs: 1 }, new Uint8Array(4096).fill(1));
    for (const seq of range(1, 12)) {
      await adapter.append([kvRecord(seq)]);
      if (seq === 10) {
        const chunks = [{ index: 0, bytes: new Uint8Array(32).fill(2) }];
        expect(
          await adapter.writeSnapshotDelta?.(
            { seq, timeMs: seq },
            { baseSeq: 0, byteLength: 4096, chunkBytes: 32, chunks },
          ),
        ).toBe(true);
      }
    }
    await adapter.close();
    expect(await oldestSegment(dir)).toBe("log-0000000000000001.seg");
    await rm(join(dir, await oldestSegment(dir))); // commits 1–3
    const again = await openFilePersistence(dir, { segmentBytes: 64 });
    const loaded = await again.load();
    expect(loaded.snapshots.map((s) => [s.seq, s.baseSeq])).toEqual([
      [0, undefined],
      [10, 0],
    ]);
    const refusals = [
      await caught(() => again.readRecords(0, 9)),
      await caught(async () => {
        for await (const chunk of again.streamRecords(0, 12)) expect(chunk.length).toBeGreaterThan(0);
      }),
    ];
    for (const error of refusals) {
      expect(error.code).toBe("ERR_BOOKMARK");
      expect(error.message).toMatch(
        /not there: pruned \(outside the retention window\), or lost \(log files deleted from outside/,
      );
    }
    // What is left reads exactly.
    expect((await again.readRecords(3, 9)).map((r) => r.seq)).toEqual(range(4, 9));
    await again.close();
  });

  it("ObjectStorage: a bookmark inside the window whose history was lost is refused as lost, and one outside it as outside the window", async () => {
    const dir = freshDir();
    const clock = new FakeClock();
    const options = { clock, snapshotEveryRecords: 5, retentionMs: 60_000 };
    const open = async () =>
      ObjectStorage.open({ ...options, persistence: await openFilePersistence(dir, { segmentBytes: 150 }) });
    let storage = await open();
    await storage.put("pad", "x".repeat(20_000));
    await storage.sync();
    const bookmarks = await bookmarkedPuts(storage, clock, 2, 14);
    await storage.close();
    // The oldest segment deleted from outside; repair moves the snapshot it stranded aside.
    await rm(join(dir, await oldestSegment(dir)));
    const out: string[] = [];
    expect(
      await runInspect([dir, "repair"], { out: (l) => out.push(l), err: (l) => out.push(l) }),
      out.join("\n"),
    ).toBe(0);
    storage = await open();
    const lost = await caught(() => storage.onNextSessionRestoreBookmark(bookmarks[0] as string));
    expect(lost.code).toBe("ERR_BOOKMARK");
    expect(lost.message).toMatch(
      /not there although they are inside the retention window of 60000 ms .*lost \(log files deleted from outside, or removed by a repair\)/,
    );
    expect(lost.message).not.toMatch(/older than the history this object keeps/);
    const byTime = await caught(() => storage.getBookmarkForTime(clock.now() - 13_500));
    expect(byTime.code).toBe("ERR_BOOKMARK");
    expect(byTime.message).toMatch(/is not there, although it is inside the retention window of 60000 ms: .*lost/);
    expect(byTime.message).not.toMatch(/was pruned\./);
    // Once the window has passed those states, the refusal is about the window again.
    await clock.advance(120_000);
    const old = await caught(() => storage.onNextSessionRestoreBookmark(bookmarks[0] as string));
    expect(old.message).toMatch(/older than the history this object keeps \(the retention window is 60000 ms\)/);
    await storage.close();
  });

  it("repair's account of a lost newest segment is what restores then do: no state before the snapshot it opens from", async () => {
    // Before, repair said only the states of the missing seqs could no longer be restored, but the
    // history restarts at the snapshot, so every older bookmark was refused.
    const dir = freshDir();
    const clock = new FakeClock();
    const options = { clock, snapshotEveryRecords: 4 };
    const open = async () =>
      ObjectStorage.open({ ...options, persistence: await openFilePersistence(dir, { segmentBytes: 150 }) });
    let storage = await open();
    const bookmarks = await bookmarkedPuts(storage, clock, 1, 20);
    await storage.close();
    const segs = (await readdir(dir)).filter((n) => n.startsWith("log-")).sort();
    expect(segs.at(-1)).toBe("log-0000000000000019.seg");
    await rm(join(dir, segs.at(-1) as string));
    const out: string[] = [];
    expect(
      await runInspect([dir, "repair"], { out: (l) => out.push(l), err: (l) => out.push(l) }),
      out.join("\n"),
    ).toBe(0);
    const text = out.join("\n");
    expect(text).toContain("created logcut-0000000000000018");
    expect(text).toContain("no state before seq 20 can be restored any more");
    // As said: the states before 20 are refused (also those whose commits the log still holds) …
    storage = await open();
    expect(await storage.get("n")).toBe(20);
    for (const seq of [0, 16, 18]) {
      const error = await caught(() => storage.onNextSessionRestoreBookmark(bookmarks[seq] as string));
      expect(error.code, `seq ${seq}`).toBe("ERR_BOOKMARK");
    }
    await storage.put("n", 21);
    await storage.sync();
    // … and the snapshot's state is restored exactly.
    await storage.onNextSessionRestoreBookmark(bookmarks[20] as string);
    await storage.close();
    storage = await open();
    expect(await storage.get("n")).toBe(20);
    await storage.close();
  });
});
