/**
 * Reading a range of the log from the objects that hold it (compacted segments, then log objects),
 * with a window of GETs in flight ahead of the reader.
 *
 * @packageDocumentation
 */
import type { CommitRecord } from "../durability/commit-record";
import { type RangeCursor, recordsInRange } from "../durability/record-range";
import type { S3Client } from "./s3-client";

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
