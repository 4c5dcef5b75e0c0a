/**
 * Snapshots of a large database are written in place (the engine's chunks frozen, copy on write)
 * or, where the adapter cannot take an image in parts, copied a few pages per turn while batches
 * keep committing (storage/snapshots.ts). Each snapshot file must hold exactly the state of the seq in
 * its name (never a mix of older and newer pages), and a reopen must give the same state. Written in
 * place, most snapshots after the first are deltas (only the chunks changed since the previous one):
 * their state is read through the adapter, which applies the chain, and must be exact too.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DelegatingPersistence } from "../../src/durability/delegating-persistence";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { dumpStorage } from "./dump";

const root = await mkdtemp(join(tmpdir(), "actorstore-bgsnap-"));
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const KEYS = 24_000;
const PER_BATCH = 100;
const keyOf = (i: number) => `k${String(i % KEYS).padStart(6, "0")}`;
const batchValue = (batch: number) => `<b:${batch}:>${"v".repeat(1000)}`;

/**
 * The file adapter itself writes snapshots in place (the engine's chunks frozen, no copy); behind a
 * wrapper, which does not pass `writeSnapshotParts` on, a large database is copied across turns.
 */
const PATHS = [
  { path: "written in place", wrap: false },
  { path: "copied across turns (through a wrapper)", wrap: true },
] as const;

describe.each(PATHS)("snapshots of a large database, $path", ({ wrap }) => {
  it("each snapshot holds exactly the state of its seq; reopening gives the same state", async () => {
    const dir = join(root, wrap ? "wrapped" : "direct");
    let inPlace = 0;
    // ObjectStorage.close() leaves its persistence open: each adapter is closed after its storage.
    const adapters: { close(): Promise<void> }[] = [];
    const open = async () => {
      const file = await openFilePersistence(dir);
      adapters.push(file);
      const parts = file.writeSnapshotParts?.bind(file);
      if (parts !== undefined)
        file.writeSnapshotParts = (info, p) => {
          inPlace++;
          return parts(info, p);
        };
      return ObjectStorage.open({
        persistence: wrap ? new DelegatingPersistence(file) : file,
        snapshotEveryRecords: 40,
      });
    };
    const storage = await open();
    const core = coreOf(storage);
    const seqOfBatch = new Map<number, number>();
    const batchOfSeq = new Map<number, number>();
    const batches = 320; // 32,000 puts of 1 KB over 24,000 keys: about 30 MB of database
    for (let b = 0; b < batches; b++) {
      for (let j = 0; j < PER_BATCH; j++) void storage.put(keyOf(b * PER_BATCH + j * 7), batchValue(b));
      if (b % 50 === 7) storage.sql.exec("CREATE TABLE IF NOT EXISTS t (b INTEGER)");
      if (b % 50 > 7) storage.sql.exec("INSERT INTO t VALUES (?)", b);
      await storage.sync();
      seqOfBatch.set(b, core.lastSeq);
      batchOfSeq.set(core.lastSeq, b);
    }
    await core.settled();
    const expected = await dumpStorage(storage);
    await storage.close();
    await adapters.shift()?.close();

    const names = (await readdir(dir)).filter((n) => n.startsWith("snap-")).sort();
    const reader = await openFilePersistence(dir, { readOnly: true });
    await reader.load();
    const engines = await loadSqlJsEngine();
    let checked = 0;
    let deltas = 0;
    for (const name of names) {
      const seq = Number(name.slice(5, 21));
      const upTo = batchOfSeq.get(seq);
      if (upTo === undefined || upTo < 100) continue; // the small early ones are exported at once
      const isDelta = name.endsWith(".delta");
      if (isDelta) deltas++;
      // A full image is read as the plain file; a delta through its chain.
      const image = isDelta
        ? (await reader.readSnapshot(seq)).slice()
        : new Uint8Array(await readFile(join(dir, name)));
      const engine = engines.open(image);
      // The last batch that wrote each key, among the batches up to the snapshot's seq.
      const want = new Map<string, number>();
      for (let b = 0; b <= upTo; b++) for (let j = 0; j < PER_BATCH; j++) want.set(keyOf(b * PER_BATCH + j * 7), b);
      const rows = engine.query("SELECT key, value FROM _cf_KV");
      const got = new Map<string, number>();
      for (const [key, value] of rows) {
        const text = Buffer.from(value as Uint8Array).toString("latin1");
        got.set(String(key), Number(/<b:(\d+):>/.exec(text)?.[1]));
      }
      expect(got).toEqual(want);
      const sqlRows = engine.query("SELECT count(*) FROM t")[0]?.[0];
      let inserts = 0;
      for (let b = 0; b <= upTo; b++) if (b % 50 > 7) inserts++;
      expect(sqlRows).toBe(inserts);
      engine.close();
      checked++;
    }
    // The database passed 16 MiB around batch 130: later snapshots went through the path tested.
    expect(checked).toBeGreaterThan(0);
    await reader.close();
    if (wrap) expect(inPlace + deltas).toBe(0);
    // This workload rewrites keys all over the database: a delta would hold most chunks, so most
    // snapshots are full images (snapshot-deltas.test.ts has a workload of deltas).
    else expect(inPlace).toBeGreaterThan(0);
    expect(seqOfBatch.size).toBe(batches);

    const again = await open();
    expect(await dumpStorage(again)).toEqual(expected);
    await again.close();
    await adapters.shift()?.close();
  }, 300_000);
});
