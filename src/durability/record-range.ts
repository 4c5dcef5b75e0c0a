/**
 * Picking the records of a range out of a log body, a chunk at a time: what every adapter's
 * `streamRecords` does with each segment or object of its log once it holds its bytes.
 *
 * @packageDocumentation
 */
import type { CommitRecord } from "./commit-record";
import { STREAM_CHUNK_RECORDS } from "./persistence";
import { decodeRecords, type FrameBinding } from "./record-codec";

/** Where a range read stands: the next seq it wants, and the last one it wants. @internal */
export interface RangeCursor {
  expected: number;
  readonly toSeq: number;
}

/**
 * Yields the records of `bytes` with `cursor.expected <= seq <= cursor.toSeq`, at most
 * {@link STREAM_CHUNK_RECORDS} at a time, advancing `cursor.expected`; stops early once the range is
 * complete. `verified`: the frames' checksums were already checked. `damaged` makes the error for a
 * body that ends in an incomplete frame (or, with `contiguous`, whose seqs are not consecutive from
 * `contiguous.next`, which it advances); `pruned` the error for a gap inside the range. `binding`:
 * the frames are bound to a directory's identity (log-binding.ts).
 * @internal
 */
export function* recordsInRange(
  bytes: Uint8Array,
  verified: boolean,
  cursor: RangeCursor,
  damaged: () => Error,
  pruned: () => Error,
  contiguous?: { next: number },
  binding?: FrameBinding,
): Generator<CommitRecord[]> {
  for (let at = 0; at < bytes.length; ) {
    const decoded = decodeRecords(bytes, at, STREAM_CHUNK_RECORDS, verified, binding);
    if (decoded.tornTail) throw damaged();
    at = decoded.validBytes;
    const chunk: CommitRecord[] = [];
    for (const r of decoded.records) {
      if (contiguous !== undefined && r.seq !== contiguous.next++) throw damaged();
      if (r.seq < cursor.expected || r.seq > cursor.toSeq) continue;
      // A gap bridged by a snapshot can leave records missing inside an otherwise valid range.
      if (r.seq !== cursor.expected) throw pruned();
      chunk.push(r);
      cursor.expected++;
    }
    if (chunk.length > 0) yield chunk;
    if (cursor.expected > cursor.toSeq) return;
  }
}
