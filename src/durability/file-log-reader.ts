/**
 * Reading the file adapter's log segments back: records (decoded a chunk at a time) and commit
 * times (without decoding the records). Opening an object reads each segment once: the load's scan
 * (directory-scan.ts) already read and checked the segments, and hands over what it learned (each
 * segment's commit times, and the checked bytes of the segments after the base snapshot, up to a
 * bound), so the open neither reads nor checksums those bytes again. Everything else is read from
 * disk and checked as it is streamed.
 *
 * @packageDocumentation
 */
import { ActorStoreError } from "../errors";
import type { CommitRecord } from "./commit-record";
import type { DirectoryScan, Segment } from "./directory-scan";
import { corruptError } from "./directory-scan";
import type { DirectoryIo } from "./file-io";
import { isErrno } from "./file-layout";
import { type CommitTimes, STREAM_CHUNK_RECORDS } from "./persistence";
import { type FrameBinding, scanFrames } from "./record-codec";
import { type RangeCursor, recordsInRange } from "./record-range";

/** Reads records and commit times from a directory's segments. @internal */
export class SegmentReader {
  readonly #io: DirectoryIo;
  /** Commit times from the last scan, by segment name; each is handed out once. */
  #times = new Map<string, Float64Array>();
  /** Checked bytes from the last scan, by segment name; each is handed out once. */
  #verified = new Map<string, Uint8Array>();
  /** How the segments' frames are checked (log-binding.ts), as the last scan found. */
  #binding: FrameBinding | undefined;

  constructor(io: DirectoryIo) {
    this.#io = io;
  }

  /** Takes over what a load's scan read (dropping what an earlier scan left). */
  reset(scan: Pick<DirectoryScan, "times" | "verifiedLog" | "binding"> | undefined): void {
    this.#times = scan?.times ?? new Map();
    this.#verified = scan?.verifiedLog ?? new Map();
    this.#binding = scan?.binding;
  }

  /** The frames past `seq` must be bound from now on (this adapter bound the log, log-binding.ts). */
  bindAfter(seq: number): void {
    if (this.#binding !== undefined && this.#binding.unboundUpTo > seq)
      this.#binding = { seed: this.#binding.seed, unboundUpTo: seq };
  }

  /**
   * Records `fromSeq < seq <= toSeq` of `segments` (a copy the caller made), a chunk of at most
   * {@link STREAM_CHUNK_RECORDS} at a time: at most one segment's bytes and one chunk are held.
   */
  async *records(segments: readonly Segment[], fromSeq: number, toSeq: number): AsyncGenerator<CommitRecord[]> {
    const cursor: RangeCursor = { expected: fromSeq + 1, toSeq };
    const pruned = () => prunedError(fromSeq);
    for (const segment of segments) {
      if (segment.lastSeq < cursor.expected || segment.firstSeq > toSeq) continue;
      // The scan's checked bytes are used while the segment is as the scan saw it; appends since
      // make it longer, and then it is read again (and checked) instead.
      const cached = this.#verified.get(segment.name);
      this.#verified.delete(segment.name);
      const verified = cached !== undefined && cached.length === segment.bytes;
      const bytes = verified ? cached : await this.#read(segment, fromSeq);
      yield* recordsInRange(
        bytes,
        verified,
        cursor,
        () => changedError(this.#io.directory, segment),
        pruned,
        undefined,
        this.#binding,
      );
      if (cursor.expected > toSeq) return;
    }
    throw pruned();
  }

  /** The commit times of records `fromSeq < seq <= toSeq` of `segments`, a segment at a time. */
  async *times(segments: readonly Segment[], fromSeq: number, toSeq: number): AsyncGenerator<CommitTimes> {
    let expected = fromSeq + 1;
    for (const segment of segments) {
      if (segment.lastSeq < expected || segment.firstSeq > toSeq) continue;
      if (segment.firstSeq > expected) throw prunedError(fromSeq);
      const all = await this.#segmentTimes(segment, fromSeq);
      const from = expected - segment.firstSeq;
      const to = Math.min(segment.lastSeq, toSeq) - segment.firstSeq + 1;
      yield { firstSeq: expected, timesMs: all.subarray(from, to) };
      expected = segment.firstSeq + to;
      if (expected > toSeq) return;
    }
    throw prunedError(fromSeq);
  }

  /** Every commit time of `segment`: the scan's, or read and checked now. */
  async #segmentTimes(segment: Segment, fromSeq: number): Promise<Float64Array> {
    const count = segment.lastSeq - segment.firstSeq + 1;
    const cached = this.#times.get(segment.name);
    this.#times.delete(segment.name);
    if (cached !== undefined && cached.length === count) return cached;
    const bytes = await this.#read(segment, fromSeq);
    const scan = scanFrames(bytes, this.#binding);
    if (scan.tornTail || scan.seqs.length !== count || scan.seqs.some((seq, i) => seq !== segment.firstSeq + i))
      throw changedError(this.#io.directory, segment);
    return Float64Array.from(scan.times);
  }

  /** The confirmed prefix of `segment` (bytes past it may be a write in flight). */
  async #read(segment: Segment, fromSeq: number): Promise<Uint8Array> {
    try {
      return await this.#io.readPrefix(segment.name, segment.bytes);
    } catch (error) {
      if (isErrno(error, "ENOENT")) throw prunedError(fromSeq);
      throw error;
    }
  }
}

function changedError(directory: string, segment: Segment): ActorStoreError {
  return corruptError(directory, `log segment ${segment.name} changed on disk after it was written`);
}

/** Part of a requested range is not in the log (pruned, or segments lost: the reader cannot tell which). @internal */
export function prunedError(fromSeq: number): ActorStoreError {
  return new ActorStoreError(
    "ERR_BOOKMARK",
    `Cannot read records after seq ${fromSeq}: part of that history is not in the log: pruned (outside the retention window), or lost (log segments deleted from outside, or removed by a repair).`,
  );
}
