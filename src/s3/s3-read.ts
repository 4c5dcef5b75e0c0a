/**
 * Reading the log from the objects that hold it (compacted segments, then log objects): the check
 * of what an open found, and a range read with a window of GETs in flight ahead of the reader.
 *
 * @packageDocumentation
 */
import type { CommitRecord } from "../durability/commit-record";
import { type RangeCursor, recordsInRange } from "../durability/record-range";
import type { S3Client } from "./s3-client";
import type { S3Layout } from "./s3-layout";
import type { LogObject, Manifest } from "./s3-manifest";

/**
 * Checks the log an open found: the manifest's segments, then the log objects after it (with
 * their records), in seq order without gaps (except where a snapshot covers one) and with epochs
 * that never decrease. Returns the objects without their records and the newest seq. Each log
 * object is checked and then dropped: the records are streamed again (streamRecords) when the
 * storage opens, never held all at once.
 * @internal
 */
export function checkLoadedLog(
  m: Manifest,
  chain: ReadonlyArray<LogObject & { records: CommitRecord[] }>,
  layout: S3Layout,
  corrupt: (what: string) => Error,
): { objects: LogObject[]; lastSeq: number } {
  const oldest = m.snapshots[0]?.seq ?? 0;
  let expected: number | undefined;
  const take = (where: string, list: CommitRecord[]) => {
    for (const r of list) {
      if (expected !== undefined && r.seq !== expected) {
        const covered = m.snapshots.some((s) => s.seq === r.seq - 1) && r.seq > expected;
        if (!covered) throw corrupt(`${where} holds seq ${r.seq} where seq ${expected} belongs`);
      }
      expected = r.seq + 1;
    }
  };
  // Compacted segments are taken as the manifest describes them (their contents are checked
  // when streamed): reading them here too would download the log twice on every open.
  for (const segment of m.segments) {
    if (segment.lastSeq < segment.firstSeq) continue;
    if (expected !== undefined && segment.firstSeq !== expected && segment.lastSeq > oldest) {
      const covered = m.snapshots.some((s) => s.seq === segment.firstSeq - 1) && segment.firstSeq > expected;
      if (!covered)
        throw corrupt(
          `the compacted segment ${layout.segment(segment)} starts at seq ${segment.firstSeq} where seq ${expected} belongs`,
        );
    }
    expected = segment.lastSeq + 1;
  }
  const objects: LogObject[] = [];
  let previousEpoch = 0;
  for (const o of chain) {
    if (o.epoch < previousEpoch)
      throw corrupt(`log object ${layout.log(o.position)} has an older epoch than the one before it`);
    previousEpoch = o.epoch;
    take(layout.log(o.position), o.records);
    objects.push({ position: o.position, firstSeq: o.firstSeq, lastSeq: o.lastSeq, epoch: o.epoch, bytes: o.bytes });
  }
  const logEnd = expected === undefined ? 0 : expected - 1;
  const newest = m.snapshots[m.snapshots.length - 1]?.seq ?? 0;
  // A snapshot is only of a confirmed commit, and a prune keeps every record after its base: a log
  // that holds records but ends before the newest snapshot lost its last objects (the open would
  // otherwise be the snapshot's state, the commits after it silently gone).
  if (expected !== undefined && newest > logEnd)
    throw corrupt(
      `the snapshot of seq ${newest} is newer than the log's end (seq ${logEnd}), and a snapshot is written only of a confirmed commit: the log objects that held seqs ${logEnd + 1} to ${newest} and any after them are missing`,
    );
  return { objects, lastSeq: Math.max(logEnd, newest) };
}

/** One object of the log and the seqs it holds (`lastSeq < firstSeq`: none). @internal */
export interface LogSource {
  key: string;
  firstSeq: number;
  lastSeq: number;
}

/** What {@link readSources} needs besides the sources. @internal */
export interface SourceReader {
  client: S3Client;
  /** How many GETs are in flight ahead of the reader. */
  window: number;
  /** A body already downloaded (handed out once), if any. */
  cached(key: string): Uint8Array | undefined;
  /** The error for an object that does not hold what its key and the manifest say. */
  damaged(key: string, source: LogSource): Error;
  /** The error for a gap inside the range. */
  pruned(): Error;
}

/**
 * Yields the records of `sources` from `cursor.expected` through `cursor.toSeq`, advancing the
 * cursor. Returns the key of the first source found missing (a compaction or retention may have
 * removed it after the list was taken; the caller decides), or `undefined` once the sources are
 * exhausted or the range is complete.
 * @internal
 */
export async function* readSources(
  sources: readonly LogSource[],
  cursor: RangeCursor,
  reader: SourceReader,
): AsyncGenerator<readonly CommitRecord[], string | undefined> {
  const wanted = sources.filter(
    (x) => x.lastSeq >= cursor.expected && x.firstSeq <= cursor.toSeq && x.lastSeq >= x.firstSeq,
  );
  const fetches = wanted.map(() => null as Promise<{ body: Uint8Array } | null> | null);
  const fetchAt = (k: number) => {
    const source = wanted[k];
    if (source !== undefined && fetches[k] === null) {
      const cached = reader.cached(source.key);
      const pending = cached !== undefined ? Promise.resolve({ body: cached }) : reader.client.get(source.key);
      pending.catch(() => undefined);
      fetches[k] = pending;
    }
  };
  for (let k = 0; k < wanted.length; k++) {
    for (let ahead = k; ahead < Math.min(wanted.length, k + reader.window); ahead++) fetchAt(ahead);
    const source = wanted[k] as LogSource;
    const found = await (fetches[k] as Promise<{ body: Uint8Array } | null>);
    fetches[k] = null;
    if (found === null) return source.key;
    const damaged = () => reader.damaged(source.key, source);
    const contiguous = { next: source.firstSeq };
    yield* recordsInRange(found.body, false, cursor, damaged, reader.pruned, contiguous);
    if (cursor.expected > cursor.toSeq) return undefined;
    if (contiguous.next !== source.lastSeq + 1) throw damaged();
  }
  return undefined;
}
