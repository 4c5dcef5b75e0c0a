/**
 * The point-in-time crash test's child (pitr-crash.test.ts runs a bundle of this file):
 * `<dir> <seed> <firstId> <retentionMs> <snapshotEveryRecords> <bookmarksFile> [deltas]`
 *
 * Opens the object in `<dir>` (file persistence, small segments, frequent snapshots), then runs
 * batches until it is killed. A batch writes a row and keys, and sometimes replaces everything
 * (`deleteAll()` in the same turn), sets or deletes the alarm; now and then the child asks for a
 * point-in-time restore to a bookmark it was given or confirmed itself, closes and opens again
 * (the open applies the restore), or just closes and opens again. So kills land in batches,
 * snapshot writes, prunes and thinnings (a short retention window), restore requests, the open
 * that applies a restore, and lock hand-overs.
 *
 * Output, one line each (stdout is a pipe, written synchronously: a line is in the parent's pipe
 * before the next statement runs):
 * - `S <hash>`: an open finished with this state ({@link stateHash}).
 * - `P <id> <hash>`: batch `<id>` is issued and leads to this state (not confirmed yet).
 * - `C <id> <bookmark>`: batch `<id>` is confirmed; `<bookmark>` names its state.
 * - `Q <bookmark>`: a restore to `<bookmark>` is being requested.
 * - `R <bookmark>`: the request is recorded; `<bookmark>` names the state before the restore.
 * - `X`: the request was refused (its history was pruned).
 */
import { readFileSync } from "node:fs";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { setDeltaLimits } from "../../src/durability/snapshot-delta";
import { ObjectStorage } from "../../src/storage/object-storage";
import { SplitMix64 } from "../../src/util/prng";
import { stateHash } from "./pitr-state";

function report(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<void> {
  const [directory, seedText, firstIdText, retentionText, snapshotText, bookmarksFile, deltas] = process.argv.slice(2);
  if (directory === undefined || bookmarksFile === undefined) throw new Error("usage: see pitr-worker.ts");
  if (deltas === "deltas") setDeltaLimits({ chain: 6, fraction: 8 });
  const random = new SplitMix64();
  random.reseed(Number(seedText), 0);
  const next = (below: number): number => Number(BigInt.asUintN(32, random.nextInt64()) % BigInt(below));
  const known = JSON.parse(readFileSync(bookmarksFile, "utf8")) as string[];
  const open = async () =>
    ObjectStorage.open({
      persistence: await openFilePersistence(directory, { segmentBytes: 4096 }),
      snapshotEveryRecords: Number(snapshotText),
      retentionMs: Number(retentionText),
    });
  let storage = await open();
  report(`S ${await stateHash(storage)}`);
  for (let id = Number(firstIdText); ; id++) {
    const op = next(100);
    if (op < 10 && known.length > 0) {
      const target = known[next(known.length)] as string;
      report(`Q ${target}`);
      let undo: string;
      try {
        undo = await storage.onNextSessionRestoreBookmark(target);
      } catch {
        report("X"); // older than the retention window
        continue;
      }
      report(`R ${undo}`);
      known.push(undo);
    }
    if (op < 14) {
      await storage.close();
      storage = await open();
      report(`S ${await stateHash(storage)}`);
      continue;
    }
    // One batch: everything issued in this turn commits together.
    const sql = storage.sql;
    if (op < 20) void storage.deleteAll();
    if (op >= 20 && op < 32) void storage.setAlarm(1_900_000_000_000 + id);
    else if (op >= 32 && op < 36) void storage.deleteAlarm();
    sql.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v BLOB)");
    sql.exec("INSERT INTO t VALUES (?, randomblob(?))", id, next(10) === 0 ? next(9000) : next(200));
    void storage.put({ a: id, [`k${id % 50}`]: "x".repeat(next(300)) });
    if (next(5) === 0) sql.exec("DELETE FROM t WHERE id % 7 = ?", id % 7);
    report(`P ${id} ${await stateHash(storage)}`);
    await storage.sync();
    const bookmark = await storage.getCurrentBookmark();
    report(`C ${id} ${bookmark}`);
    known.push(bookmark);
    if (known.length > 200) known.shift();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`worker failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(2);
});
