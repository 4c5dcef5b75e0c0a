/**
 * Compaction planning: which log objects a fold takes (all but the newest, with the previous
 * compacted segment while that is small), the segment it makes, the manifest that names it, and
 * what may be deleted once that manifest is the newest. The adapter (s3-persistence.ts) runs the
 * steps in order and commits the manifest; these functions hold no state of their own.
 *
 * @packageDocumentation
 */

import { concat } from "../util/bytes";
import type { S3Client } from "./s3-client";
import type { S3Layout } from "./s3-layout";
import type { LogObject, Manifest, ManifestSegment } from "./s3-manifest";
import { sameSegment } from "./s3-series";

/** What one fold takes. @internal */
export interface FoldPlan {
  /** The log objects folded (all of the chain but its newest), in position order. */
  folded: LogObject[];
  /** The previous segment, merged into the new one because it is under `segmentBytes`. */
  merge: ManifestSegment | undefined;
}

/** The fold of `chain` on top of `manifest`, or `null` when there is nothing to fold. @internal */
export function planFold(manifest: Manifest, chain: readonly LogObject[], segmentBytes: number): FoldPlan | null {
  const folded = chain.slice(0, -1);
  if (folded.length === 0) return null;
  const previous = manifest.segments[manifest.segments.length - 1];
  const merge = previous !== undefined && previous.bytes < segmentBytes ? previous : undefined;
  return { folded, merge };
}

/**
 * Downloads what a fold takes, `window` GETs at a time, and returns the new segment's body (the
 * merged segment's frames, then each folded object's) and its description.
 * @internal
 */
export async function readFold(
  client: S3Client,
  layout: S3Layout,
  manifest: Manifest,
  plan: FoldPlan,
  window: number,
  corrupt: (what: string) => Error,
): Promise<{ data: Uint8Array; segment: ManifestSegment }> {
  const { folded, merge } = plan;
  const parts: Uint8Array[] = [];
  if (merge !== undefined) {
    const found = await client.get(layout.segment(merge));
    if (found === null) throw corrupt(`the compacted segment ${layout.segment(merge)} is missing`);
    parts.push(found.body);
  }
  for (let i = 0; i < folded.length; i += window) {
    const batch = folded.slice(i, i + window);
    const found = await Promise.all(batch.map((o) => client.get(layout.log(o.position))));
    found.forEach((f, k) => {
      if (f === null) throw corrupt(`log object ${layout.log((batch[k] as LogObject).position)} is missing`);
      parts.push(f.body);
    });
  }
  const data = concat(parts);
  const withRecords = folded.filter((o) => o.lastSeq >= o.firstSeq);
  const m = manifest;
  const firstSeq = merge?.firstSeq ?? withRecords[0]?.firstSeq ?? (m.segments[m.segments.length - 1]?.lastSeq ?? 0) + 1;
  const lastSeq = withRecords[withRecords.length - 1]?.lastSeq ?? merge?.lastSeq ?? firstSeq - 1;
  const segment = {
    firstSeq,
    lastSeq,
    lastPosition: (folded[folded.length - 1] as LogObject).position,
    bytes: data.length,
  };
  return { data, segment };
}

/** `base` with `segment` recorded in place of the merged one. @internal */
export function withSegment(base: Manifest, segment: ManifestSegment, merge: ManifestSegment | undefined): Manifest {
  return {
    ...base,
    lastPosition: Math.max(base.lastPosition, segment.lastPosition),
    segments: [...base.segments.filter((s) => s !== merge && !sameSegment(s, merge)), segment],
  };
}

/**
 * Deletes, once the manifest naming `segment` is the newest, everything at or before its last
 * position: the folded objects and leftovers (a crash between manifest and deletes, a fenced
 * writer's late write to a deleted key), then the merged segment. Failures are left for the next
 * fold.
 * @internal
 */
export async function sweepFolded(
  client: S3Client,
  layout: S3Layout,
  plan: FoldPlan,
  segment: ManifestSegment,
): Promise<void> {
  const doomed = new Set(plan.folded.map((o) => layout.log(o.position)));
  const listed = await client.list(layout.logs).catch(() => [] as string[]);
  for (const key of listed) {
    const position = layout.number(layout.logs, key);
    if (position !== undefined && position <= segment.lastPosition) doomed.add(key);
  }
  for (const key of doomed) await client.delete(key).catch(() => undefined);
  if (plan.merge !== undefined) await client.delete(layout.segment(plan.merge)).catch(() => undefined);
}
