/**
 * Where snapshots are written in place (the file adapter), close() writes one of the final state
 * when the log since the newest snapshot holds at least 8 MiB, so the next open replays nothing;
 * with less log, or through a wrapper (snapshots copied, not written in place), close() writes none.
 * The snapshot at close is a full image, never a delta on an earlier one.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DelegatingPersistence } from "../../src/durability/delegating-persistence";
import { openFilePersistence } from "../../src/durability/file-persistence";
import type { PersistenceAdapter } from "../../src/durability/persistence";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { dumpStorage } from "./dump";

/** A digest of the whole state (a deep comparison of tens of megabytes of blobs takes minutes). */
const digest = async (storage: ObjectStorage) =>
  createHash("sha256")
    .update(
      JSON.stringify(await dumpStorage(storage), (_key, value: unknown) =>
        value instanceof Uint8Array ? Buffer.from(value).toString("base64") : value,
      ),
    )
    .digest("hex");

const root = await mkdtemp(join(tmpdir(), "actorstore-close-snap-"));
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const VALUE = new Uint8Array(100_000).fill(0x62);

/** Seqs of the snapshot files in `dir` (full images and deltas), oldest first. */
const snapshotSeqs = async (dir: string) =>
  (await readdir(dir))
    .filter((n) => n.startsWith("snap-") && (n.endsWith(".sqlite") || n.endsWith(".delta")))
    .map((n) => Number(n.slice(5, 21)))
    .sort((a, b) => a - b);

/**
 * A 30 MB database with a snapshot of it (so the next one is due only after 15 MB of log), then
 * `logMb` MB of puts in batches of 10 (1 MB of log each); closed. Returns the last seq.
 */
async function grow(dir: string, logMb: number, wrap: (file: PersistenceAdapter) => PersistenceAdapter) {
  const storage = await ObjectStorage.open({ persistence: wrap(await openFilePersistence(dir)) });
  storage.sql.exec(
    "CREATE TABLE big (b BLOB); INSERT INTO big WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30) SELECT zeroblob(1000000) FROM n",
  );
  await storage.sync();
  await coreOf(storage).snapshot();
  for (let b = 0; b < logMb; b++) {
    for (let j = 0; j < 10; j++) void storage.put(`k${b}-${j}`, VALUE);
    await storage.sync();
  }
  const lastSeq = coreOf(storage).lastSeq;
  const expected = await digest(storage);
  await storage.close();
  return { lastSeq, expected };
}

describe("a final snapshot at close, where snapshots are written in place", () => {
  it("with 8 MiB or more of log since the newest snapshot: one of the final state, and the open replays nothing", async () => {
    const dir = join(root, "long");
    const { lastSeq, expected } = await grow(dir, 10, (f) => f);
    const seqs = await snapshotSeqs(dir);
    expect(seqs[seqs.length - 1]).toBe(lastSeq);
    expect(seqs.length).toBe(3); // the empty database, the forced one, the one at close
    // A full image although the forced one (frozen from the same engine) could be its delta base:
    // the next open reads one file instead of a chain.
    const atClose = (await readdir(dir)).filter((n) => n.startsWith(`snap-${String(lastSeq).padStart(16, "0")}-`));
    expect(atClose).toHaveLength(1);
    expect(atClose[0]).toMatch(/^snap-\d{16}-\d{16}-[0-9a-f]{8}\.sqlite$/);
    const again = await ObjectStorage.open({ persistence: await openFilePersistence(dir) });
    expect(await digest(again)).toBe(expected);
    await again.close(); // nothing logged since: no other snapshot
    expect(await snapshotSeqs(dir)).toEqual(seqs);
  }, 120_000);

  it("with less log: none", async () => {
    const dir = join(root, "short");
    const { lastSeq } = await grow(dir, 5, (f) => f);
    const seqs = await snapshotSeqs(dir);
    expect(seqs.length).toBe(2);
    expect(seqs[seqs.length - 1]).toBeLessThan(lastSeq);
  }, 120_000);

  it("through a wrapper (no in-place writes): none", async () => {
    const dir = join(root, "wrapped");
    const { lastSeq } = await grow(dir, 10, (f) => new DelegatingPersistence(f));
    const seqs = await snapshotSeqs(dir);
    expect(seqs.length).toBe(2);
    expect(seqs[seqs.length - 1]).toBeLessThan(lastSeq);
  }, 120_000);
});
