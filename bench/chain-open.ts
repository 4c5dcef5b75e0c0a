/**
 * Opening through a delta chain against opening the full image it composes (alone:
 * `npx tsx bench/chain-open.ts [MB] [rounds]`, default 200 MB and 5 rounds). Two directories are
 * grown the same way, 100 commits of MB/100 rows of 1 MB each with a snapshot every 20 commits:
 * one with incremental snapshots (a full image at ~20% of the size, then deltas: the chain an open
 * after a crash reads), one with every snapshot a full image. Both end with `abort()` once the last
 * snapshot is durable, so neither open replays any log. Then, alternating, `ObjectStorage.open()`
 * of a fresh copy of each (ended with `abort()`), and the ratio per pair; the median ratio is the
 * result (the machine is shared: read single rounds with care).
 */
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { openFilePersistence } from "../src/durability/file-persistence";
import { setDeltaLimits } from "../src/durability/snapshot-delta";
import { coreOf, ObjectStorage } from "../src/storage/object-storage";

const megabytes = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 5);

/** Grows a directory to about `megabytes`; every snapshot a full image when `full`. */
async function build(dir: string, full: boolean): Promise<string[]> {
  const limits = full ? setDeltaLimits({ chain: 0, fraction: 0 }) : undefined;
  try {
    const persistence = await openFilePersistence(dir);
    const storage = await ObjectStorage.open({ persistence, snapshotEveryRecords: 20 });
    storage.sql.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)");
    const perCommit = Math.max(1, Math.round(megabytes / 100));
    for (let c = 0; c < 100; c++) {
      for (let j = 0; j < perCommit; j++) storage.sql.exec("INSERT INTO t (v) VALUES (randomblob(1000000))");
      await storage.sync();
      // Let each snapshot finish, so that the chain holds one delta per 20 commits.
      if (c % 6 === 5) await coreOf(storage).settled();
    }
    await coreOf(storage).settled();
    storage.abort();
    await persistence.close();
    return (await readdir(dir)).filter((n) => n.startsWith("snap-")).sort();
  } finally {
    if (limits !== undefined) setDeltaLimits(limits);
  }
}

/** `ObjectStorage.open()` of a fresh copy of `dir`, in ms. */
async function timeOpen(dir: string): Promise<number> {
  const copy = `${dir}-open`;
  await rm(copy, { recursive: true, force: true });
  await cp(dir, copy, { recursive: true });
  const persistence = await openFilePersistence(copy);
  const t = performance.now();
  const storage = await ObjectStorage.open({ persistence });
  const ms = performance.now() - t;
  storage.abort();
  await persistence.close();
  await rm(copy, { recursive: true, force: true });
  return ms;
}

const root = await mkdtemp(join(tmpdir(), "actorstore-chain-open-"));
try {
  const chainDir = join(root, "chain");
  const fullDir = join(root, "full");
  const chain = await build(chainDir, false);
  const full = await build(fullDir, true);
  console.log(`chain: ${chain.join(", ")}\nfull images: ${full.join(", ")}`);
  if (!(chain.at(-1) ?? "").endsWith(".delta")) throw new Error("chain-open: the newest snapshot is no delta");
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const throughChain = await timeOpen(chainDir);
    const fromImage = await timeOpen(fullDir);
    ratios.push(throughChain / fromImage);
    console.log(
      `round ${r + 1}: through the chain ${throughChain.toFixed(0)} ms, from one full image ${fromImage.toFixed(0)} ms: ${(throughChain / fromImage).toFixed(2)}×`,
    );
  }
  ratios.sort((a, b) => a - b);
  console.log(
    `${megabytes} MB: open through the chain / open of the full image, median ${(ratios[ratios.length >> 1] as number).toFixed(2)}× (${(ratios[0] as number).toFixed(2)}–${(ratios.at(-1) as number).toFixed(2)}×, ${rounds} pairs)`,
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
