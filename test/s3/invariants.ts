/**
 * The invariants checked after every fault test, read straight from the bucket: claims are
 * contiguous (epochs only increase), log objects' epochs never decrease along the log, the log has
 * no gaps, every confirmed commit is present with its value.
 */

import { expect } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { loadWithRecords } from "../../src/durability/persistence";
import { s3Persistence } from "../../src/s3/index";
import { resolveS3Options } from "../../src/s3/options";
import { S3Client } from "../../src/s3/s3-client";
import { S3Layout } from "../../src/s3/s3-layout";
import { optionsFor, type S3Target } from "./s3-harness";

/** `confirmed`: seq → the value text its writer confirmed. Returns the records found. */
export async function checkInvariants(
  target: S3Target,
  prefix: string,
  confirmed: ReadonlyMap<number, string>,
): Promise<CommitRecord[]> {
  const options = resolveS3Options(optionsFor(target, prefix));
  const client = new S3Client(options);
  const layout = new S3Layout(prefix);
  const claims = (await client.list(layout.claims)).map((k) => layout.number(layout.claims, k));
  expect(claims).toEqual(claims.map((_, i) => i + 1));
  const logs = await client.list(layout.logs);
  let previousEpoch = 0;
  for (const key of logs) {
    const found = await client.get(key);
    if (found === null) continue; // compacted meanwhile
    const epoch = Number(found.meta.epoch);
    expect(epoch, key).toBeGreaterThanOrEqual(previousEpoch);
    expect(epoch, key).toBeLessThanOrEqual(claims.length);
    previousEpoch = epoch;
  }
  const reader = s3Persistence({ ...optionsFor(target, prefix), readOnly: true });
  const loaded = await loadWithRecords(reader);
  const seqs = loaded.records.map((r) => r.seq);
  expect(seqs).toEqual(seqs.map((_, i) => (seqs[0] as number) + i));
  const bySeq = new Map(loaded.records.map((r) => [r.seq, r]));
  const decoder = new TextDecoder();
  for (const [seq, value] of confirmed) {
    const r = bySeq.get(seq);
    expect(r, `confirmed seq ${seq}`).toBeDefined();
    expect(decoder.decode((r as CommitRecord).kv[0]?.value ?? new Uint8Array()), `confirmed seq ${seq}`).toBe(value);
  }
  return loaded.records;
}
