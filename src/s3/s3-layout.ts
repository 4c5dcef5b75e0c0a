/**
 * The bucket layout of one object under its prefix (docs/durability.md, "S3"):
 *
 * ```
 * <prefix>claim/<epoch:16>                                  ownership records, one per open, create-only
 * <prefix>log/<position:16>                                 log objects: CRC frames of one group commit
 *                                                           (no frames: the fence an open writes)
 * <prefix>seg/<firstSeq:16>-<lastSeq:16>-<lastPosition:16>  compacted log: the frames of positions ≤ lastPosition
 * <prefix>snap/<seq:16>-<timeMs:16>-<crc32:8>-<epoch:16>    database images
 * <prefix>manifest/<n:16>                                  which segments and snapshots exist (JSON), create-only
 * <prefix>meta/<n:16>                                      metadata (tag, crc32le, bytes; x-amz-meta-version)
 * <prefix>probe/<random>                                    the conditional-write probe of an open (deleted)
 * ```
 *
 * @packageDocumentation
 */

const pad16 = (n: number): string => String(n).padStart(16, "0");

/** Key names under a prefix. @internal */
export class S3Layout {
  readonly prefix: string;
  constructor(prefix: string) {
    this.prefix = prefix;
  }
  get claims(): string {
    return `${this.prefix}claim/`;
  }
  get logs(): string {
    return `${this.prefix}log/`;
  }
  get segments(): string {
    return `${this.prefix}seg/`;
  }
  get snapshots(): string {
    return `${this.prefix}snap/`;
  }
  manifest(n: number): string {
    return `${this.prefix}manifest/${pad16(n)}`;
  }
  get metas(): string {
    return `${this.prefix}meta/`;
  }
  claim(epoch: number): string {
    return `${this.claims}${pad16(epoch)}`;
  }
  log(position: number): string {
    return `${this.logs}${pad16(position)}`;
  }
  segment(s: SegmentKey): string {
    return `${this.segments}${pad16(s.firstSeq)}-${pad16(s.lastSeq)}-${pad16(s.lastPosition)}`;
  }
  snapshot(s: SnapshotKey): string {
    return `${this.snapshots}${pad16(s.seq)}-${pad16(s.timeMs)}-${s.crc.toString(16).padStart(8, "0")}-${pad16(s.epoch)}`;
  }
  meta(version: number): string {
    return `${this.metas}${pad16(version)}`;
  }
  probe(id: string): string {
    return `${this.prefix}probe/${id}`;
  }

  /** The number after `base` in `key`, or `undefined` when `key` is not `base` + 16 digits. */
  number(base: string, key: string): number | undefined {
    if (!key.startsWith(base)) return undefined;
    const rest = key.slice(base.length);
    return /^\d{16}$/.test(rest) ? Number(rest) : undefined;
  }

  parseSegment(key: string): SegmentKey | undefined {
    if (!key.startsWith(this.segments)) return undefined;
    const m = /^(\d{16})-(\d{16})-(\d{16})$/.exec(key.slice(this.segments.length));
    if (m === null) return undefined;
    return { firstSeq: Number(m[1]), lastSeq: Number(m[2]), lastPosition: Number(m[3]) };
  }

  parseSnapshot(key: string): SnapshotKey | undefined {
    if (!key.startsWith(this.snapshots)) return undefined;
    const m = /^(\d{16})-(\d{16})-([0-9a-f]{8})-(\d{16})$/.exec(key.slice(this.snapshots.length));
    if (m === null) return undefined;
    return { seq: Number(m[1]), timeMs: Number(m[2]), crc: Number.parseInt(m[3] as string, 16), epoch: Number(m[4]) };
  }
}

/** What a compacted segment's key says. @internal */
export interface SegmentKey {
  firstSeq: number;
  /** `firstSeq - 1` when the folded objects held no records (only fences). */
  lastSeq: number;
  /** The last log position folded in: positions ≤ this are never read again. */
  lastPosition: number;
}

/** What a snapshot's key says. @internal */
export interface SnapshotKey {
  seq: number;
  timeMs: number;
  crc: number;
  /** The epoch of the writer that stored it (a replacement of the same seq has a higher one). */
  epoch: number;
}
