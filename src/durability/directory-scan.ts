/**
 * Reading an object's directory without changing it: which segments, records and snapshots it
 * holds, which damage is a torn write (may be cut) and which is corruption (must not be touched).
 * The file adapter applies the plan this returns (cuts a torn tail, removes leftovers) only after it
 * holds the directory lock; the inspector and `repair` use the same scan read-only.
 *
 * The rules (docs/durability.md, "Torn writes and corruption"):
 * - Only an incomplete last frame at the end of the newest log segment is a torn write: the frame's
 *   declared length runs past the end of the file (or its length bytes do), no valid frame follows,
 *   and the bytes up to the end of the file do not form a whole frame under another length (which
 *   would be a damaged length field). A tail of zero bytes (space a crash allocated but never
 *   filled) is torn too.
 * - Anything else that fails to decode is corruption: `ERR_CORRUPT` naming the file and byte offset.
 * - An intact snapshot older than the log's start that no kept delta is built on is corruption too:
 *   no prune leaves one (it deletes snapshots before segments), so segments after it were lost. It
 *   is reported, never deleted as if finishing a prune.
 * - A damaged newest snapshot is skipped for an older one plus the log; if nothing older reaches
 *   the log, that is corruption with a sentence saying so. A delta is damaged when it, or any
 *   snapshot of its chain (the full image and the deltas it is built on), fails its checksum or
 *   does not match the checksum its successor names; the fallback is then an older complete chain.
 *
 * @packageDocumentation
 */
import { ActorStoreError } from "../errors";
import type { OffThreadCrc } from "./crc-off-thread";
import { crc32 } from "./crc32";
import { isLockFile } from "./directory-lock";
import {
  asPlainBytes,
  DELTA_RE,
  HEAD_RE,
  LOG_CUT_RE,
  logBoundName,
  SEGMENT_RE,
  SNAPSHOT_RE,
  segmentName as segmentNameOf,
  TMP_SUFFIX,
} from "./file-layout";
import { frameBinding, logBoundSeq } from "./log-binding";
import { type ObjectIdentity, parseIdentity } from "./object-identity";
import { type FrameBinding, scanFrames } from "./record-codec";
import { ChainReader, checksumFailure, layOutChain, readDeltaHeader } from "./snapshot-chain-read";
import { basesNeeded, chainOf } from "./snapshot-delta";
import { crcMatches } from "./snapshot-name-crc";
import { checkLogEnd, isTornTail } from "./torn-tail";

type Fs = typeof import("node:fs/promises");
type Path = typeof import("node:path");

/** A log segment as the adapter tracks it. @internal */
export interface Segment {
  name: string;
  firstSeq: number;
  /** The last seq in the segment (`firstSeq - 1` while empty). */
  lastSeq: number;
  /** Bytes known to be valid and durable; appends write here. */
  bytes: number;
}

/** A snapshot file: a full image, or a delta on `baseSeq` (snapshot-delta.ts). @internal */
export interface StoredSnapshot {
  name: string;
  seq: number;
  timeMs: number;
  /** The file's size. */
  bytes: number;
  crc: number;
  /** A delta's base seq; `undefined` for a full image. */
  baseSeq?: number | undefined;
  /** The size of the image this snapshot holds (a full image's is `bytes`; NaN: unreadable header). */
  imageBytes: number;
  /** The directory's identity, which the name's CRC covers (object-identity.ts); none in a directory without one. */
  identity?: ObjectIdentity | undefined;
}

/** What a directory holds, and what loading it for writing would change. @internal */
export interface DirectoryScan {
  segments: Segment[];
  /** Usable snapshots, oldest first (damaged ones left out). */
  snapshots: StoredSnapshot[];
  lastSeq: number;
  /** The newest usable snapshot's image, already read and verified (so opening reads it once). */
  verified: { seq: number; image: Uint8Array } | undefined;
  /**
   * The commit time of every frame of each segment the scan read, by segment name (the seqs are
   * the segment's `firstSeq` onward): opening builds its timeline of the history before the base
   * snapshot from these instead of decoding those records.
   */
  times: Map<string, Float64Array>;
  /**
   * The checked bytes of the segments after the base snapshot (those the open replays), up to
   * {@link VERIFIED_LOG_BYTES} in all, by segment name: the open decodes them without reading or
   * checksumming them again.
   */
  verifiedLog: Map<string, Uint8Array>;
  /**
   * Snapshots that were skipped and left on disk: newest ones that fail their checksum (or whose
   * chain does), and ones older than the log's start that cannot be used either.
   */
  damagedSnapshots: StoredSnapshot[];
  /** A torn tail to cut: the newest segment is cut back to `validBytes`. */
  torn: { segment: string; validBytes: number; fileBytes: number } | undefined;
  /** The newest segment holds no frame (after the cut): remove it. */
  emptyNewest: string | undefined;
  /** Unfinished snapshot or meta writes (`*.tmp`). */
  tmpFiles: string[];
  /** The log's head markers (`head-<seq>`, file-layout.ts), by name; the newest counts. */
  heads: { name: string; seq: number }[];
  /** A repair's log cuts (`logcut-<seq>`, file-layout.ts) that no longer excuse anything: a writer's load removes them. */
  staleLogCuts: string[];
  /** The directory's identity (object-identity.ts); `undefined` in a directory an older version wrote. */
  identity: ObjectIdentity | undefined;
  /** The seqs the log's binding markers name (`logbound-<seq>`, log-binding.ts); none while the log is not bound. */
  logBound: number[];
  /** How the segments' frames were checked (log-binding.ts); `undefined` without identity. */
  binding: FrameBinding | undefined;
}

/**
 * At most this many bytes of checked log segments are kept from the scan for the open that follows
 * (four default segments): more than that is read and checked again as it is streamed, so that
 * memory stays bounded whatever the log's length.
 * @internal
 */
export const VERIFIED_LOG_BYTES = 32 * 1024 * 1024;

/**
 * Reads `directory` (which must exist) without changing it. Throws `ERR_CORRUPT` on corruption.
 * With `offThread`, a large newest snapshot is checksummed on another thread while the log is
 * checked (crc-off-thread.ts); the scan still resolves only once that sum is known, and when it
 * differs, the directory is scanned again with every check in line, which skips the snapshot as
 * damaged (or fails) exactly as a scan without `offThread` does. @internal
 */
export async function scanDirectory(
  directory: string,
  fs: Fs,
  path: Path,
  offThread?: OffThreadCrc,
): Promise<DirectoryScan> {
  if (offThread === undefined) return scanOnce(directory, fs, path, undefined);
  let pending: Promise<boolean> | undefined;
  const started = (check: Promise<boolean>) => {
    pending = check;
  };
  try {
    const scan = await scanOnce(directory, fs, path, { offThread, started });
    if (pending === undefined || (await pending)) return scan;
  } catch (error) {
    // Damage found while the sum was pending may stem from trusting the image: decide by the sum.
    if (pending === undefined || (await pending)) throw error;
  }
  return scanOnce(directory, fs, path, undefined);
}

async function scanOnce(
  directory: string,
  fs: Fs,
  path: Path,
  deferred: { offThread: OffThreadCrc; started(check: Promise<boolean>): void } | undefined,
): Promise<DirectoryScan> {
  const file = (name: string) => path.join(directory, name);
  const corrupt = (what: string, damage: Damage, advice?: string) => {
    // `repair` cuts damage; it cannot bring back what is missing, so it is not offered for that.
    const error = corruptError(
      directory,
      what,
      advice ??
        (damage.kind === "unreachable"
          ? "Restore the directory from a backup: repair cannot rebuild a state from files that are missing or damaged."
          : undefined),
    );
    damages.set(error, damage);
    return error;
  };
  // The adapter never writes a number past 2^53 - 1 into a name: one that does was not written by it.
  const seqOf = (name: string, digits: string | undefined) => {
    const value = Number(digits);
    if (!Number.isSafeInteger(value))
      throw corrupt(
        `${name} names the number ${digits ?? ""}, which is past the largest this adapter writes`,
        { kind: "unreachable" },
        "It is not one of the adapter's files: move it out of the directory.",
      );
    return value;
  };
  const segments: Segment[] = [];
  const all: StoredSnapshot[] = [];
  const tmpFiles: string[] = [];
  const heads: { name: string; seq: number }[] = [];
  const identities: ObjectIdentity[] = [];
  const logBound: number[] = [];
  const logCuts: { name: string; seq: number }[] = [];
  for (const entry of await fs.readdir(directory, { withFileTypes: true })) {
    // The adapter writes only files: a directory, whatever its name, is someone else's and is
    // neither read nor removed.
    if (entry.isDirectory()) continue;
    const name = entry.name;
    if (name.endsWith(TMP_SUFFIX)) {
      if (!isLockFile(name)) tmpFiles.push(name);
      continue;
    }
    const seg = SEGMENT_RE.exec(name);
    if (seg !== null) {
      const firstSeq = seqOf(name, seg[1]);
      segments.push({ name, firstSeq, lastSeq: firstSeq - 1, bytes: 0 });
      continue;
    }
    const head = HEAD_RE.exec(name);
    if (head !== null) {
      heads.push({ name, seq: seqOf(name, head[1]) });
      continue;
    }
    const cut = LOG_CUT_RE.exec(name);
    if (cut !== null) {
      logCuts.push({ name, seq: seqOf(name, cut[1]) });
      continue;
    }
    const bound = logBoundSeq(name);
    if (bound !== undefined) {
      logBound.push(bound);
      continue;
    }
    const identityFile = parseIdentity(name);
    if (identityFile !== undefined) {
      identities.push(identityFile);
      continue;
    }
    // A full image or a delta: the same name up to the delta's base seq.
    const full = SNAPSHOT_RE.exec(name);
    const delta = full === null ? DELTA_RE.exec(name) : null;
    const snap = full ?? delta;
    if (snap === null) continue;
    const { size } = await fs.stat(file(name));
    const stored = {
      name,
      seq: seqOf(name, snap[1]),
      timeMs: seqOf(name, snap[2]),
      crc: Number.parseInt(snap[3] ?? "", 16),
      bytes: size,
    };
    if (delta === null) all.push({ ...stored, imageBytes: size });
    else {
      const header = await readDeltaHeader(fs, file(name), size).catch(() => "unreadable");
      const imageBytes = typeof header === "string" ? Number.NaN : header.byteLength;
      all.push({ ...stored, baseSeq: seqOf(name, delta[4]), imageBytes });
    }
  }
  segments.sort((a, b) => a.firstSeq - b.firstSeq);
  all.sort((a, b) => a.seq - b.seq);
  // One identity per directory: a second one was copied in from another object's directory, and
  // which one this directory's files are bound to is for repair to find out (it checks them).
  if (identities.length > 1)
    throw corrupt(
      `it holds ${identities.length} identity files (${identities.map((i) => i.name).join(", ")}), where an object's directory has one: the others were copied from another object's directory`,
      { kind: "identities", names: identities.map((i) => i.name) },
      `Run actorstore-inspect ${directory} repair: it keeps the identity this directory's snapshot files are bound to and moves the others into a folder of copies.`,
    );
  const identity = identities[0];
  if (identity !== undefined) for (const s of all) s.identity = identity;
  // Frames past the marker's seq are bound to the identity (log-binding.ts).
  const binding = frameBinding(identity?.id, logBound);
  // A marker without an identity: the frames after its seq are bound to an identity file that is gone.
  const identityMissing = identity === undefined && logBound.length > 0;

  // The newest snapshot whose chain (its full image and each delta on the way, snapshot-delta.ts)
  // passes its checksums is the base of the newest state; newer ones that fail are skipped (kept on
  // disk for a person to look at), and the log must reach back to the base.
  const damagedSnapshots: StoredSnapshot[] = [];
  const damageNotes: string[] = [];
  const chains = new ChainReader(fs, file);
  let verified: DirectoryScan["verified"];
  const newest = all[all.length - 1];
  /**
   * The newest image, read while the segments below are read and checked (the two reads overlap
   * on the I/O threads), and checksummed off the thread once read: a full image as one file, a
   * delta's chain read straight into the image it composes (layOutChain), every file of it checked
   * on the worker. It is trusted only provisionally: scanDirectory waits for the sums before anyone
   * sees the scan, and a read that fails or a sum that differs makes it scan again with every
   * check in line (which names the damaged file and falls back).
   */
  let reading: Promise<{ image: Uint8Array } | undefined> | undefined;
  const newestChain = newest === undefined ? undefined : chainOf(all, newest.seq);
  const newestRoot = newestChain?.[0];
  if (deferred !== undefined && newestChain !== undefined && newestRoot !== undefined) {
    const { offThread } = deferred;
    let read: ReturnType<OffThreadCrc["readAndCheck"]> | undefined;
    // Too small for a thread, or a chain of another shape: read and checked in line below.
    if (newestChain.length === 1) {
      if (offThread.accepts(newestRoot.bytes))
        read = offThread.readAndCheck(file(newestRoot.name), newestRoot.bytes, newestRoot.crc, {
          seq: newestRoot.seq,
          timeMs: newestRoot.timeMs,
          identity,
        });
    } else if (offThread.accepts(newest?.imageBytes ?? 0)) {
      // Its headers are not yet checked: whatever they make the plan throw leaves the chain to the reader in line.
      const layout = await layOutChain(fs, file, newestChain).catch(() => undefined);
      if (layout !== undefined)
        read = offThread.readScatteredAndCheck(layout.files, layout.imageBytes, layout.scratchBytes);
    }
    if (read !== undefined) {
      reading = read.catch(() => undefined);
      deferred.started(read.then((r) => (r === undefined ? false : r.matches)).catch(() => false));
    }
  }
  for (let i = all.length - 1; i >= 0 && reading === undefined; i--) {
    const s = all[i] as StoredSnapshot;
    const chain = chainOf(all, s.seq);
    const image =
      chain === undefined
        ? { file: s, why: `the snapshot of seq ${String(s.baseSeq)} it applies to is missing` }
        : chain.length === 1
          ? ((await readVerified(fs, file(s.name), s)) ?? { file: s, why: checksumFailure(s) })
          : await chains.image(chain);
    if (image instanceof Uint8Array) {
      verified = { seq: s.seq, image };
      break;
    }
    damagedSnapshots.push(s);
    damageNotes.push(
      image.file === s
        ? `${s.name}: ${image.why}`
        : `${s.name}: ${image.file.name}, which it is built on, ${image.why}`,
    );
  }
  // Usable: not damaged, and (for a delta) every snapshot it is built on usable too.
  const snapshots: StoredSnapshot[] = [];
  for (const s of all) {
    if (damagedSnapshots.includes(s) || Number.isNaN(s.imageBytes)) continue;
    if (s.baseSeq === undefined || snapshots.some((b) => b.seq === s.baseSeq)) snapshots.push(s);
  }
  const oldestSnapshotSeq = snapshots[0]?.seq ?? 0;
  const snapshotSeqs = new Set(snapshots.map((s) => s.seq));

  // Segments are read one at a time and their records dropped once checked: the log is never in
  // memory at once (the adapter streams it again when the storage opens).
  let torn: DirectoryScan["torn"];
  let previous: Segment | undefined;
  const times = new Map<string, Float64Array>();
  const verifiedLog = new Map<string, Uint8Array>();
  let verifiedLogBytes = 0;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as Segment;
    const next = segments[i + 1];
    if (previous !== undefined && segment.firstSeq !== previous.lastSeq + 1) {
      // A gap is legitimate only when a usable snapshot covers it (the log was started again after
      // a snapshot newer than its end); otherwise confirmed commits are missing.
      if (!(segment.firstSeq > previous.lastSeq + 1 && snapshotSeqs.has(segment.firstSeq - 1)))
        throw corrupt(
          `log segment ${segment.name} starts at seq ${segment.firstSeq}, but the previous segment ends at seq ${previous.lastSeq}${damagedSnapshots.some((s) => s.seq === segment.firstSeq - 1) ? ", and the snapshot that bridged the gap fails its checksum" : ""}`,
          { kind: "gap", segment: segment.name, lastGoodSeq: previous.lastSeq, snapshotSeqs },
        );
    }
    if (next !== undefined && next.firstSeq - 1 <= oldestSnapshotSeq) {
      // Entirely older than every usable snapshot: not needed to open or restore; prune deletes it.
      segment.lastSeq = next.firstSeq - 1;
      segment.bytes = (await fs.stat(file(segment.name))).size;
      previous = segment;
      continue;
    }
    const bytes = asPlainBytes(await fs.readFile(file(segment.name)));
    // Frames are checked (length, checksum, seq) without decoding records: the storage decodes
    // them once, when it replays the log.
    const decoded = scanFrames(bytes, binding);
    let expected = segment.firstSeq;
    for (let f = 0; f < decoded.seqs.length; f++) {
      const seq = decoded.seqs[f] as number;
      if (seq !== expected)
        throw corrupt(`log segment ${segment.name} holds seq ${seq} where seq ${expected} belongs`, {
          kind: "segment",
          segment: segment.name,
          offset: decoded.offsets[f] as number,
          lastGoodSeq: expected - 1,
          snapshotSeqs,
        });
      expected++;
    }
    if (decoded.tornTail) {
      const at = decoded.validBytes;
      if (identityMissing && decoded.reason === "checksum")
        throw corrupt(
          `log segment ${segment.name} fails its checksum at byte ${at}, and the directory has no identity file although ${logBound.map(logBoundName).join(", ")} says its log is bound to one: the frames after seq ${Math.max(...logBound)} are bound to an ident-… file that was deleted or not copied along`,
          { kind: "unreachable" },
          `Put the identity file back (an empty file named ident-<32 hex digits>, from a backup or the directory's source); the directory then opens whole. Only if it cannot be found: remove ${logBoundName(Math.max(...logBound))} and run actorstore-inspect ${directory} repair, which drops every commit bound to the missing identity.`,
        );
      const why = reasonText(decoded.reason, binding);
      if (next !== undefined)
        throw corrupt(
          `log segment ${segment.name} is damaged at byte ${at} (${why}), and later segments hold newer commits`,
          { kind: "segment", segment: segment.name, offset: at, lastGoodSeq: expected - 1, snapshotSeqs },
        );
      if (!isTornTail(bytes, at, expected - 1, binding))
        throw corrupt(
          `log segment ${segment.name} is damaged at byte ${at} (${why}); the damage is not a write a crash interrupted (a whole frame or a valid frame follows it), so confirmed commits may be behind it`,
          { kind: "segment", segment: segment.name, offset: at, lastGoodSeq: expected - 1, snapshotSeqs },
        );
      torn = { segment: segment.name, validBytes: at, fileBytes: bytes.length };
    }
    segment.lastSeq = expected - 1;
    segment.bytes = decoded.validBytes;
    times.set(segment.name, Float64Array.from(decoded.times));
    if (
      segment.lastSeq > (reading !== undefined ? (newest?.seq ?? 0) : (verified?.seq ?? 0)) &&
      verifiedLogBytes + segment.bytes <= VERIFIED_LOG_BYTES
    ) {
      verifiedLog.set(segment.name, bytes.subarray(0, segment.bytes));
      verifiedLogBytes += segment.bytes;
    }
    previous = segment;
  }

  if (reading !== undefined && newest !== undefined && newestChain !== undefined) {
    const read = await reading;
    // Unread: the sum check has already failed, so the directory is scanned again in line.
    if (read !== undefined) verified = { seq: newest.seq, image: read.image };
  }

  const last = segments[segments.length - 1];
  const emptyNewest = last !== undefined && last.bytes === 0 ? last.name : undefined;
  const liveSegments = emptyNewest === undefined ? segments : segments.slice(0, -1);

  // The head marker names the newest segment the adapter wrote commits to, created once that
  // segment's first commits were durable; prune never deletes the newest segment and a load removes
  // only an empty one. So a segment from that seq on must be here: without one, the newest segment
  // was lost with the commits in it, which would otherwise look like a log that simply ends there.
  heads.sort((a, b) => a.seq - b.seq);
  const head = heads[heads.length - 1];
  if (head !== undefined && !liveSegments.some((s) => s.firstSeq >= head.seq)) {
    const newestLeft = liveSegments[liveSegments.length - 1];
    throw corrupt(
      `the log segment ${segmentNameOf(head.seq)} is missing: ${head.name} records that commits from seq ${head.seq} on were written to it, but no segment from seq ${head.seq} on is left (${newestLeft === undefined ? "no segment is left" : `the newest left is ${newestLeft.name}`}), so the commits it held are lost (deleted or moved out of the directory)`,
      { kind: "lostHead", markers: heads.map((h) => h.name), fromSeq: head.seq },
      `Put the segment back from a backup, or run actorstore-inspect ${directory} repair: it removes ${head.name} and the object opens without the commits from seq ${head.seq} on.`,
    );
  }

  // A snapshot older than the log's first record minus one cannot be replayed forward. No prune
  // leaves one behind: prune deletes the snapshots before the base (and makes that durable) before
  // any segment, and deletes every snapshot file before the base, also those a load skipped. So an
  // intact one means segments after it were lost (a file deleted from outside): that is damage,
  // reported, never "finished" by deleting the snapshot. One that cannot be used anyway (it fails
  // its checksum, or a delta's chain does) is skipped like a damaged newest snapshot and left on
  // disk (an older version's prune left such files behind); the next prune deletes it. A base that
  // a later delta is built on is not stranded: prune keeps it for that delta.
  const firstLogSeq = liveSegments[0]?.firstSeq;
  const logEnd = liveSegments[liveSegments.length - 1]?.lastSeq ?? 0;
  const lastSeq = Math.max(logEnd, snapshots[snapshots.length - 1]?.seq ?? 0, ...damagedSnapshots.map((s) => s.seq));
  const floor = (firstLogSeq ?? lastSeq + 1) - 1;
  const older = snapshots.filter((s, i) => s.seq < floor && i < snapshots.length - 1);
  const needed = basesNeeded(
    snapshots,
    snapshots.filter((s) => !older.includes(s)).map((s) => s.seq),
  );
  const stranded = older.filter((s) => !needed.has(s.seq));
  const unusable: StoredSnapshot[] = [];
  for (const s of stranded) {
    const chain = chainOf(all, s.seq);
    const image =
      chain === undefined
        ? undefined
        : chain.length === 1
          ? await readVerified(fs, file(s.name), s)
          : await chains.image(chain);
    if (image instanceof Uint8Array) {
      const firstName = liveSegments[0]?.name;
      throw corrupt(
        `snapshot ${s.name} holds the state of seq ${s.seq}, but the log after it starts only at seq ${floor + 1}${firstName === undefined ? "" : ` (${firstName})`}: the log segments that held commits ${s.seq + 1} to ${floor} are missing (deleted or moved out of the directory), so no state between seq ${s.seq} and the next snapshot can be rebuilt`,
        { kind: "stranded", snapshots: stranded.map((x) => x.name), fromSeq: s.seq, toSeq: floor },
        `Put the missing segments back from a backup, or run actorstore-inspect ${directory} repair: it moves ${stranded.length === 1 ? "that snapshot" : "those snapshots"} into a folder of copies and the object opens from the next snapshot.`,
      );
    }
    // Gone since the listing (a live writer pruning under a read-only scan): list again.
    await fs.stat(file(s.name));
    unusable.push(s);
  }
  for (const s of unusable) damagedSnapshots.push(s);
  const kept = snapshots.filter((s) => !unusable.includes(s));

  // The newest state must be reachable: a usable snapshot the log continues from, or the log from
  // seq 1 (the empty database). A damaged snapshot newer than the log's end cannot be skipped.
  const base = kept[kept.length - 1];
  const reachable = base !== undefined ? base.seq >= floor : floor === 0;
  if (!reachable || lastSeq > Math.max(logEnd, base?.seq ?? 0)) {
    const damaged = damageNotes.join("; ");
    throw corrupt(
      damaged !== ""
        ? `the newest snapshot cannot be read (${damaged}), and no older snapshot with the log after it reaches the newest commit (seq ${lastSeq}), so that state cannot be rebuilt`
        : `the log starts at commit ${firstLogSeq ?? lastSeq + 1}, but no snapshot holds the state before it (the log segments before it, or the snapshot that replaced them, are missing), so no commit can be rebuilt`,
      { kind: "unreachable" },
      // Snapshots this version wrote are bound to the identity: without its file they cannot be checked.
      damaged !== "" && identity === undefined
        ? `This directory has no identity file: if one (an empty file named ident-<32 hex digits>) was deleted or not copied along, put it back from where the directory came from (a backup, or the directory copied whole); the snapshot files written since it was created are bound to it and cannot be checked without it. Otherwise restore the directory from a backup: repair cannot rebuild a state from files that are missing or damaged.`
        : undefined,
    );
  }
  const logEndCheck = checkLogEnd(directory, kept, liveSegments, logCuts);
  if (logEndCheck.refused !== undefined) {
    const { what, damage, advice } = logEndCheck.refused;
    throw corrupt(what, damage, advice);
  }
  return {
    segments: liveSegments,
    snapshots: kept,
    lastSeq,
    verified: verified !== undefined && kept.some((s) => s.seq === verified?.seq) ? verified : undefined,
    times,
    verifiedLog,
    damagedSnapshots,
    torn,
    emptyNewest,
    tmpFiles,
    heads,
    staleLogCuts: logEndCheck.stale,
    identity,
    logBound,
    binding,
  };
}

/** Why a frame failed, as the scan says it: with a binding, a checksum may fail for belonging to another object. */
function reasonText(reason: string | undefined, binding: FrameBinding | undefined): string {
  if (reason === "checksum" && binding !== undefined)
    return "checksum: damaged, or copied from another object's directory, since the frames' checksums cover this directory's identity";
  if (reason === "unbound")
    return `a frame without this directory's identity in its checksum, after seq ${String(binding?.unboundUpTo)}, from where every frame of this log has it: copied from another object's directory (or written by an older version after this one bound the log)`;
  return reason ?? "damaged";
}

/**
 * Where a scan found corruption, for `repair`: a segment to cut at `offset` (later segments hold
 * commits that can no longer follow, unless a usable snapshot lets the log start again before
 * them), a segment that starts after a gap, the newest segment missing (its head marker, file-layout.ts,
 * names it), a log that ends before the newest snapshot, more than one identity file (object-identity.ts), or a state nothing reaches. `snapshotSeqs` are the
 * usable snapshots' seqs: a segment starting right after one of them may follow a gap.
 * @internal
 */
export type Damage =
  | { kind: "segment"; segment: string; offset: number; lastGoodSeq: number; snapshotSeqs: ReadonlySet<number> }
  | { kind: "gap"; segment: string; lastGoodSeq: number; snapshotSeqs: ReadonlySet<number> }
  | { kind: "stranded"; snapshots: readonly string[]; fromSeq: number; toSeq: number }
  | { kind: "lostHead"; markers: readonly string[]; fromSeq: number }
  | { kind: "lostTail"; logEnd: number; snapshotSeq: number }
  | { kind: "identities"; names: readonly string[] }
  | { kind: "unreachable" };

const damages = new WeakMap<Error, Damage>();

/** The damage behind an `ERR_CORRUPT` that {@link scanDirectory} threw, if it was one. @internal */
export function damageOf(error: unknown): Damage | undefined {
  return error instanceof Error ? damages.get(error) : undefined;
}

/**
 * The `ERR_CORRUPT` error of a damaged directory; `advice` replaces the default (a backup, or
 * `repair`) where repair cannot help. @internal
 */
export function corruptError(directory: string, what: string, advice?: string): ActorStoreError {
  return new ActorStoreError(
    "ERR_CORRUPT",
    `The persisted data in ${directory} is damaged: ${what}. Nothing was changed. ${advice ?? `Restore the directory from a backup, or run actorstore-inspect ${directory} repair (it keeps a copy of every file it changes).`}`,
  );
}

/**
 * Reads a snapshot file and returns it when its bytes match the CRC in its name (snapshot-name-crc.ts);
 * `undefined` when they do not or it is unreadable.
 */
async function readVerified(fs: Fs, file: string, named: StoredSnapshot): Promise<Uint8Array | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = asPlainBytes(await fs.readFile(file));
  } catch {
    return undefined;
  }
  return crcMatches(crc32(bytes), named) ? bytes : undefined;
}
