/**
 * The manifest: which compacted segments and snapshots make up an object's history, and the last
 * log position they cover. Manifests are a numbered, create-only series (`manifest/<n>`); the newest
 * one is the truth, and log objects after its `lastPosition` are the rest of the log.
 *
 * @packageDocumentation
 */
import type { SegmentKey, SnapshotKey } from "./s3-layout";

/** A compacted segment the manifest names. @internal */
export interface ManifestSegment extends SegmentKey {
  bytes: number;
}

/** A snapshot the manifest names. @internal */
export interface ManifestSnapshot extends SnapshotKey {
  bytes: number;
}

/** @internal */
export interface Manifest {
  /** Log positions up to this one are folded into `segments` (or pruned) and never read again. */
  lastPosition: number;
  /** In seq order. */
  segments: ManifestSegment[];
  /** In seq order. */
  snapshots: ManifestSnapshot[];
}

/** One log object after the manifest (a fence has no records: `lastSeq < firstSeq`). @internal */
export interface LogObject {
  position: number;
  firstSeq: number;
  lastSeq: number;
  epoch: number;
  bytes: number;
}

/** @internal */
export function emptyManifest(): Manifest {
  return { lastPosition: 0, segments: [], snapshots: [] };
}

/** @internal */
export function serializeManifest(m: Manifest): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ v: 1, ...m }));
}

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** Parses a manifest; `corrupt(what)` builds the error for a malformed one. @internal */
export function parseManifest(bytes: Uint8Array, corrupt: (what: string) => Error): Manifest {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw corrupt("is not valid JSON");
  }
  const o = raw as Partial<Manifest> & { v?: unknown };
  if (typeof o !== "object" || o === null || o.v !== 1 || !isCount(o.lastPosition)) throw corrupt("is malformed");
  const segments = Array.isArray(o.segments) ? o.segments : null;
  const snapshots = Array.isArray(o.snapshots) ? o.snapshots : null;
  if (segments === null || snapshots === null) throw corrupt("is malformed");
  for (const s of segments)
    if (!isCount(s.firstSeq) || !isCount(s.lastSeq + 1) || !isCount(s.lastPosition) || !isCount(s.bytes))
      throw corrupt("names a malformed segment");
  for (const s of snapshots)
    if (!isCount(s.seq) || !isCount(s.timeMs) || !isCount(s.crc) || !isCount(s.epoch) || !isCount(s.bytes))
      throw corrupt("names a malformed snapshot");
  return {
    lastPosition: o.lastPosition,
    segments: segments.map((s) => ({ ...s })),
    snapshots: snapshots.map((s) => ({ ...s })),
  };
}
