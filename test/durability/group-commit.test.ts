/**
 * The log's write queue (group-commit.ts): with `reuseFrames` the buffers frames are copied into are
 * reused after their write succeeded. Every write must still carry exactly the frames of its
 * appends, a buffer must never be handed out while a write or a kept reference may read it, and a
 * queue without `reuseFrames` gives each write arrays of its own that stay unchanged.
 */
import { describe, expect, it } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { GroupCommitQueue, type GroupWrite } from "../../src/durability/group-commit";
import { encodeRecords } from "../../src/durability/record-codec";

const record = (seq: number, valueBytes: number): CommitRecord => ({
  seq,
  timeMs: 1_767_225_600_000 + seq,
  reset: false,
  sql: [],
  kv: [{ key: `k${seq}`, value: Uint8Array.from({ length: valueBytes }, (_, i) => (seq * 31 + i) & 0xff) }],
});

interface Seen {
  copy: Uint8Array;
  kept: Uint8Array;
  buffer: ArrayBufferLike;
}

function queue(reuseFrames: boolean, fail?: (batch: GroupWrite) => boolean) {
  const seen: Seen[] = [];
  let release: (() => void) | undefined;
  let hold = false;
  const q = new GroupCommitQueue({
    write: async (batch) => {
      seen.push({ copy: batch.data.slice(), kept: batch.data, buffer: batch.data.buffer });
      if (hold) await new Promise<void>((r) => (release = r));
      if (fail?.(batch)) throw new Error("disk full");
    },
    failed: (cause) => cause,
    reuseFrames,
  });
  return {
    q,
    seen,
    holdNext: () => (hold = true),
    releaseHeld: () => {
      hold = false;
      release?.();
    },
  };
}

describe("GroupCommitQueue frame buffers", () => {
  it("reused after a successful write: each write carries exactly its appends' frames", async () => {
    const { q, seen } = queue(true);
    const records: CommitRecord[][] = [];
    for (let seq = 1; seq <= 12; seq++) {
      const batch = [record(seq, 100 + ((seq * 997) % 40_000))];
      records.push(batch);
      await q.append(batch);
    }
    expect(seen.map((s) => s.copy)).toEqual(records.map((r) => encodeRecords(r)));
    // Sequential appends reuse buffers instead of allocating one each.
    expect(new Set(seen.map((s) => s.buffer)).size).toBeLessThan(seen.length);
  });

  it("appends queued while a write is in flight go out together, exactly concatenated", async () => {
    const { q, seen, holdNext, releaseHeld } = queue(true);
    holdNext();
    const first = q.append([record(1, 500)]);
    await Promise.resolve();
    const later = [2, 3, 4].map((seq) => q.append([record(seq, 3000 * seq)]));
    releaseHeld();
    await Promise.all([first, ...later]);
    expect(seen).toHaveLength(2);
    expect(seen[0]?.copy).toEqual(encodeRecords([record(1, 500)]));
    expect(seen[1]?.copy).toEqual(encodeRecords([2, 3, 4].map((seq) => record(seq, 3000 * seq))));
  });

  it("a failed write's buffer is never handed out again", async () => {
    let failing = true;
    const { q, seen } = queue(true, () => failing);
    await expect(q.append([record(1, 2000)])).rejects.toThrow("disk full");
    const failed = seen[0] as Seen;
    failing = false;
    q.reset(0);
    for (let seq = 1; seq <= 8; seq++) await q.append([record(seq, 2000)]);
    for (const s of seen.slice(1)) expect(s.buffer).not.toBe(failed.buffer);
    // What the failed write was given is unchanged.
    expect(failed.kept).toEqual(failed.copy);
  });

  it("without reuseFrames, every write's array stays as it was written", async () => {
    const { q, seen } = queue(false);
    for (let seq = 1; seq <= 8; seq++) await q.append([record(seq, 5000)]);
    for (const s of seen) expect(s.kept).toEqual(s.copy);
    expect(new Set(seen.map((s) => s.buffer)).size).toBe(seen.length);
  });
});
