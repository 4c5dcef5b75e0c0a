/**
 * The crash-test child:
 * `node --import tsx test/crash/worker.ts <dir> <seed> <storage|context> <snapshotEveryRecords> [deltas]`
 * (crash.test.ts runs a bundle of this file, which starts faster).
 *
 * Opens the object in `<dir>` (file persistence with small segments), reports what it recovered,
 * then runs batches (workload.ts) until it is killed, continuing after the last recovered batch.
 * With `deltas`, nearly every snapshot after the first is written as a delta (snapshot-delta.ts's
 * limits opened wide; the database is small), so kills land in delta writes too.
 *
 * Output, one line each (stdout is a pipe, which Node writes synchronously on Linux, so a line is
 * in the parent's pipe before the next statement runs and survives SIGKILL):
 * - `S {"m":…,"consistent":…}`: the recovered state (see {@link summarize}).
 * - `C <n>`: every batch up to `n` is confirmed (its `sync()` resolved, or the object context
 *   released the response of the call that wrote it).
 */
import { ObjectContext } from "../../src/context/object-context";
import type { ObjectState } from "../../src/context/object-state";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { setDeltaLimits } from "../../src/durability/snapshot-delta";
import { ObjectStorage } from "../../src/storage/object-storage";
import { nextTurn } from "../../src/util/clock";
import { SplitMix64 } from "../../src/util/prng";
import { SETUP, summarize, writeBatch } from "./workload";

function report(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** The object class of context mode: one RPC method per batch. */
class Batches {
  readonly #ctx: ObjectState;
  constructor(ctx: ObjectState) {
    this.#ctx = ctx;
  }
  async batch(n: number, way: number, size: number): Promise<number> {
    await writeBatch(this.#ctx.storage as unknown as ObjectStorage, n, way, size);
    return n;
  }
}

async function main(): Promise<void> {
  const [directory, seedText, mode, snapshotText, deltas] = process.argv.slice(2);
  if (deltas === "deltas") setDeltaLimits({ chain: 6, fraction: 8 });
  if (directory === undefined || seedText === undefined) throw new Error("usage: worker.ts <dir> <seed> [mode]");
  const random = new SplitMix64();
  random.reseed(Number(seedText), 0);
  const next = (below: number): number => Number(BigInt.asUintN(32, random.nextInt64()) % BigInt(below));

  // Small segments, frequent snapshots and a two-second retention window: kills also land in
  // segment rolls, snapshot writes and prunes, and recovery time stays bounded across lives.
  const persistence = await openFilePersistence(directory, { segmentBytes: 256 * 1024 });
  const options = { persistence, snapshotEveryRecords: Number(snapshotText ?? 10_000), retentionMs: 2000 };
  let storage: ObjectStorage;
  let context: ObjectContext | undefined;
  if (mode === "context") {
    context = await ObjectContext.create(Batches, { storage: options, alarms: false });
    storage = await context.storage();
  } else {
    storage = await ObjectStorage.open(options);
  }
  const state = await summarize(storage);
  report(`S ${JSON.stringify(state)}`);
  if (!state.consistent) process.exit(3);
  if (state.m < 0) {
    storage.sql.exec(SETUP);
    await storage.put({ a: 0, b: 0, c: 0, p: new Uint8Array(0) });
    await storage.sync();
    report("C 0");
  }

  let confirmed = Math.max(0, state.m);
  const confirm = (n: number) => {
    if (n > confirmed) {
      confirmed = n;
      report(`C ${n}`);
    }
  };
  const inFlight: Array<Promise<void>> = [];
  for (let n = Math.max(0, state.m) + 1; ; n++) {
    const way = next(4);
    // Mostly small batches; some large ones make torn frames likely.
    const size = next(10) === 0 ? next(16 * 1024) : next(300);
    if (context !== undefined) {
      inFlight.push(context.call<number>("batch", n, way, size).then(confirm));
    } else {
      await writeBatch(storage, n, way, size);
      inFlight.push(storage.sync().then(() => confirm(n)));
    }
    // Up to four batches in flight (group commit); then wait for the oldest.
    if (inFlight.length >= 1 + next(4)) await inFlight.shift();
    if (context === undefined && next(40) === 0) {
      // Close and reopen now and then, so that kills also land while the directory lock is being
      // released and taken again.
      await Promise.all(inFlight.splice(0));
      await storage.close();
      storage = await ObjectStorage.open(options);
    }
    await nextTurn();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`worker failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(2);
});
