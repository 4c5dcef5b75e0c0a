/**
 * A {@link PersistenceAdapter} over S3-compatible object storage, with one writer per object
 * enforced by the store through create-only writes (`If-None-Match: *`) and no clocks.
 *
 * Protocol (docs/durability.md, "S3" has the layout and why it is safe):
 * - open: probe that the store honours `If-None-Match`, claim epoch `e` by creating `claim/e`, read
 *   the newest manifest, walk the log objects after it, then create a fence (an empty log object) at
 *   the first free position: no older writer can ever extend the log past it; then copy the newest
 *   metadata object to the next index (the metadata's fence: no older writer's `writeMetaIf` lands).
 * - append: create the next log object (all commits queued meanwhile go together: group commit),
 *   then confirm only if `claim/e+1` does not exist. A newer claim, or a position taken by someone
 *   else, fences this writer for good (`ERR_FENCED`).
 * - snapshots, compaction and retention change the manifest, a create-only numbered series.
 *
 * @packageDocumentation
 */
import type { CommitRecord } from "../durability/commit-record";
import { crc32 } from "../durability/crc32";
import { GroupCommitQueue, type GroupWrite } from "../durability/group-commit";
import {
  checkRange,
  checkSnapshotSeq,
  collectRecords,
  fencedError,
  type LoadResult,
  missingSnapshot,
  snapshotTimeMs,
  type VersionedMeta,
} from "../durability/persistence";
import { decodeRecords } from "../durability/record-codec";
import type { RangeCursor } from "../durability/record-range";
import { planPrune } from "../durability/retention";
import { ActorStoreError } from "../errors";
import {
  type ResolvedS3Options,
  resolveS3Options,
  type S3Persistence,
  type S3PersistenceOptions,
  type S3PersistenceStats,
} from "./options";
import { conditionalWritesIgnored, S3Client } from "./s3-client";
import { planFold, readFold, sweepFolded, withSegment } from "./s3-compaction";
import { S3Layout } from "./s3-layout";
import { emptyManifest, type LogObject, type Manifest, parseManifest, serializeManifest } from "./s3-manifest";
import { checkLoadedLog, type LogSource, readSources } from "./s3-read";
import {
  createOwned,
  fenceMeta,
  findLast,
  prunedError,
  randomId,
  readMetaVersion,
  type WriterMeta,
  writeMetaIfNewest,
} from "./s3-series";

const FETCH_WINDOW = 8;
/** At most this many bytes of log objects read by load() are kept for the open's stream. */
const LOADED_CACHE_BYTES = 8 * 1024 * 1024;

class S3Adapter implements S3Persistence {
  readonly location: string;
  readonly #options: ResolvedS3Options;
  readonly #client: S3Client;
  readonly #layout: S3Layout;
  readonly #writer = randomId();

  #epoch: number | undefined;
  #loaded = false;
  #probed = false;
  /** Terminal: another holder claimed a newer epoch. */
  #fenced: Error | null = null;
  #manifest: Manifest = emptyManifest();
  #manifestNumber = 0;
  /** Log objects after the manifest's last position, in position order. */
  #chain: LogObject[] = [];
  /**
   * Bodies of the log objects load() read, kept (up to {@link LOADED_CACHE_BYTES}) for the stream
   * that follows when the storage opens, so that an open does not download them twice. Each is
   * handed out once; that first stream takes them all, and what it does not use (objects before
   * the snapshot the open starts from) is released with it, as they are at close().
   */
  #loadedBodies = new Map<string, Uint8Array>();
  #loadedBytes = 0;
  #nextPosition = 1;
  /** Appends; everything queued while a log object is being written goes in the next one. */
  readonly #log = new GroupCommitQueue({
    write: (batch) => this.#writeBatch(batch),
    // A store found ignoring create-only writes is refused as such, not as a write to retry.
    failed: (cause) => this.#fenced ?? (isUnsupported(cause) ? cause : this.#failedError(cause)),
    written: (batch) => {
      this.#appends += batch.appends;
      if (this.#chain.length > this.#options.compactAfterObjects) this.#queueCompaction();
    },
  });
  #maintenance: Promise<unknown> = Promise.resolve();
  #compactionQueued = false;
  /** The newest index of the metadata series this adapter has seen. */
  #metaIndex = 0;
  #logObjects = 0;
  #appends = 0;
  #compactions = 0;

  constructor(options: ResolvedS3Options) {
    this.#options = options;
    this.#client = new S3Client(options);
    this.#layout = new S3Layout(options.prefix);
    this.location = this.#client.where;
  }

  get epoch(): number | undefined {
    return this.#epoch;
  }

  // -- open ----------------------------------------------------------------------------------------

  async load(): Promise<LoadResult> {
    if (this.#fenced !== null) throw this.#fenced;
    await this.#settle();
    if (this.#fenced !== null) throw this.#fenced;
    this.#loaded = false;
    this.#takeLoadedBodies();
    const client = this.#client;
    const layout = this.#layout;
    if (!this.#options.readOnly) {
      if (!this.#probed) await this.#probeConditionalWrites();
      this.#epoch = await this.#claim();
    } else {
      this.#epoch = await findLast(client, (n) => layout.claim(n));
    }
    this.#manifestNumber = await findLast(client, (n) => layout.manifest(n));
    this.#manifest = this.#manifestNumber === 0 ? emptyManifest() : await this.#readManifest(this.#manifestNumber);
    let { chain, position } = await this.#walkLog();
    // A read-only view claims nothing, so the live holder may have compacted while it walked: the
    // first missing position may be one it folded and deleted, not the end of the log. Deletes
    // follow the manifest that folds them, so a manifest newer than the one walked from says so;
    // the walk starts again from it. (An open that claims needs no check: a holder compacts only
    // after seeing no newer claim, so its manifest precedes the claim this open read after.)
    while (this.#options.readOnly) {
      const newest = await findLast(client, (n) => layout.manifest(n), this.#manifestNumber);
      if (newest === this.#manifestNumber) break;
      this.#manifest = await this.#readManifest(newest);
      this.#manifestNumber = newest;
      this.#takeLoadedBodies();
      ({ chain, position } = await this.#walkLog());
    }
    if (!this.#options.readOnly) {
      // Damage is refused before the fence takes the first free position: a log object put back
      // from a backup must still find its position free.
      checkLoadedLog(this.#manifest, chain, layout, (what) => this.#corrupt(what));
      // The fence: the first free position, taken by this epoch. An older writer's next log object
      // can only go to a position at or before it, which is taken: it can never extend the log.
      const epoch = this.#epoch as number;
      for (;;) {
        if (await createOwned(client, layout.log(position), new Uint8Array(0), this.#writerMeta())) {
          chain.push({ position, firstSeq: 0, lastSeq: -1, epoch, bytes: 0, records: [] });
          position++;
          break;
        }
        const landed = await this.#readLogObject(position);
        if (landed === null) continue;
        if (landed.epoch > epoch) throw this.#fence(landed.epoch);
        chain.push(landed);
        position++;
      }
      await this.#fenceMeta();
      if (await client.exists(layout.claim(epoch + 1))) throw this.#fence(epoch + 1);
    }
    return this.#build(chain, position);
  }

  /**
   * The log objects after the manifest, fetched a window at a time; the first missing position
   * ends the log (`position`).
   */
  async #walkLog(): Promise<{ chain: Array<LogObject & { records: CommitRecord[] }>; position: number }> {
    const chain: Array<LogObject & { records: CommitRecord[] }> = [];
    let position = this.#manifest.lastPosition + 1;
    for (;;) {
      const window = await Promise.all(
        Array.from({ length: FETCH_WINDOW }, (_, i) => this.#readLogObject(position + i)),
      );
      const end = window.indexOf(null);
      // Positions are created in order, each after the one before it: a writer (which claimed, so
      // nothing compacts under it) that finds one after a missing one has a log object deleted.
      const after = end === -1 || this.#options.readOnly ? -1 : window.findIndex((o, i) => i > end && o !== null);
      if (after !== -1)
        throw this.#corrupt(
          `log object ${this.#layout.log(position + end)} is missing, but ${this.#layout.log(position + after)} follows it: a log object was deleted, and the commits from it on would be lost`,
        );
      for (const o of end === -1 ? window : window.slice(0, end)) {
        const object = o as LogObject & { records: CommitRecord[] };
        // A newer holder already wrote here: never write after it (that would fence it wrongly).
        if (!this.#options.readOnly && object.epoch > (this.#epoch as number)) throw this.#fence(object.epoch);
        chain.push(object);
      }
      position += end === -1 ? FETCH_WINDOW : end;
      if (end !== -1) return { chain, position };
    }
  }

  #build(chain: Array<LogObject & { records: CommitRecord[] }>, nextPosition: number): Promise<LoadResult> {
    return (async () => {
      const m = this.#manifest;
      const { objects, lastSeq } = checkLoadedLog(m, chain, this.#layout, (what) => this.#corrupt(what));
      this.#chain = objects;
      this.#nextPosition = nextPosition;
      this.#log.reset(lastSeq);
      this.#loaded = true;
      const result: LoadResult = {
        snapshots: m.snapshots.map((s) => ({ seq: s.seq, timeMs: s.timeMs, bytes: s.bytes })),
        truncatedBytes: 0,
        lastSeq,
      };
      if (!this.#options.readOnly) result.epoch = this.#epoch as number;
      return result;
    })();
  }

  /** Refuses a store that ignores `If-None-Match: *`: it could not keep one writer per object. */
  async #probeConditionalWrites(): Promise<void> {
    const key = this.#layout.probe(this.#writer);
    const body = new TextEncoder().encode("probe");
    let second: Awaited<ReturnType<S3Client["putIfAbsent"]>>;
    // Removed once it exists: also when a write of it was refused for its answer's version id.
    let landed = false;
    try {
      await this.#client.putIfAbsent(key, body);
      landed = true;
      second = await this.#client.putIfAbsent(key, body);
    } catch (error) {
      landed ||= isUnsupported(error as Error);
      throw error;
    } finally {
      if (landed) await this.#client.delete(key).catch(() => undefined);
    }
    if (second.outcome !== "exists")
      throw conditionalWritesIgnored(
        this.location,
        "ignored If-None-Match: * (a create-only write replaced an existing object)",
      );
    this.#probed = true;
  }

  /** The metadata's fence (see {@link fenceMeta}). */
  async #fenceMeta(): Promise<void> {
    const epoch = this.#epoch as number;
    const done = await fenceMeta(this.#client, this.#layout, this.#metaIndex, epoch, this.#writerMeta(), (what) =>
      this.#corrupt(what),
    );
    this.#metaIndex = done.index;
    if (done.newer !== undefined) throw this.#fence(done.newer);
  }

  /** Creates the next claim: the new epoch. */
  async #claim(): Promise<number> {
    const body = new TextEncoder().encode(JSON.stringify({ writer: this.#writer }));
    let epoch = (await findLast(this.#client, (n) => this.#layout.claim(n))) + 1;
    for (;;) {
      const meta = { epoch: String(epoch), writer: this.#writer };
      if (await createOwned(this.#client, this.#layout.claim(epoch), body, meta)) return epoch;
      epoch++;
    }
  }

  async #readLogObject(position: number): Promise<(LogObject & { records: CommitRecord[] }) | null> {
    const key = this.#layout.log(position);
    const found = await this.#client.get(key);
    if (found === null) return null;
    const decoded = decodeRecords(found.body);
    if (decoded.tornTail) throw this.#corrupt(`log object ${key} is damaged (${decoded.reason})`);
    const epoch = Number(found.meta.epoch);
    if (!Number.isSafeInteger(epoch) || epoch < 1) throw this.#corrupt(`log object ${key} has no writer epoch`);
    const records = decoded.records;
    const firstSeq = records[0]?.seq ?? 0;
    const lastSeq = records[records.length - 1]?.seq ?? -1;
    if (records.length > 0 && this.#loadedBytes + found.body.length <= LOADED_CACHE_BYTES) {
      this.#loadedBodies.set(key, found.body);
      this.#loadedBytes += found.body.length;
    }
    return { position, firstSeq, lastSeq, epoch, bytes: found.body.length, records };
  }

  async #readManifest(n: number): Promise<Manifest> {
    const found = await this.#client.get(this.#layout.manifest(n));
    if (found === null) throw this.#corrupt(`manifest ${n} vanished`);
    return parseManifest(found.body, (what) => this.#corrupt(`manifest ${n} ${what}`));
  }

  // -- append (group commit) -------------------------------------------------------------------

  append(records: readonly CommitRecord[]): Promise<void> {
    try {
      this.#checkWritable("append");
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#log.append(records);
  }

  /** One log object: everything queued while the previous one was in flight. */
  async #writeBatch(batch: GroupWrite): Promise<void> {
    if (this.#fenced !== null) throw this.#fenced;
    const data = batch.data;
    const position = this.#nextPosition;
    const epoch = this.#epoch as number;
    if (!(await createOwned(this.#client, this.#layout.log(position), data, this.#writerMeta()))) {
      // Only a newer holder writes past our fence: this writer is fenced.
      const newer = (await this.#client.exists(this.#layout.claim(epoch + 1))) ? epoch + 1 : undefined;
      throw this.#fence(newer);
    }
    this.#nextPosition = position + 1;
    this.#logObjects++;
    this.#chain.push({ position, firstSeq: batch.firstSeq, lastSeq: batch.lastSeq, epoch, bytes: data.length });
    // Confirmed only if no newer claim exists now, after the write landed.
    await this.#checkNotFenced();
  }

  /**
   * Resolves while this writer still holds the object (no newer claim exists); rejects with
   * `ERR_FENCED` otherwise. A holder calls it before it serves an event, so that it never answers
   * from a state a newer holder may have moved past (a paused process that was taken over).
   */
  async verifyHolder(): Promise<void> {
    if (this.#fenced !== null) throw this.#fenced;
    await this.#checkNotFenced();
  }

  async #checkNotFenced(): Promise<void> {
    const epoch = this.#epoch as number;
    if (await this.#client.exists(this.#layout.claim(epoch + 1))) throw this.#fence(epoch + 1);
  }

  // -- snapshots -------------------------------------------------------------------------------

  writeSnapshot(info: { seq: number; timeMs: number }, image: Uint8Array): Promise<void> {
    const queued = this.#log.acceptedSeq;
    const copy = image.slice();
    return this.#maintain("writeSnapshot", async () => {
      await this.#log.settledThrough(queued);
      if (this.#log.failure !== null) throw this.#failedError(this.#log.failure);
      checkSnapshotSeq(info.seq, this.#log.durableSeq);
      const entry = {
        seq: info.seq,
        timeMs: snapshotTimeMs(info.timeMs),
        crc: crc32(copy),
        epoch: this.#epoch as number,
        bytes: copy.length,
      };
      const key = this.#layout.snapshot(entry);
      // Taken already means the same seq, image (its crc is in the key) and epoch: nothing to do.
      await this.#client.putIfAbsent(key, copy, this.#writerMeta());
      const replaced = this.#manifest.snapshots.filter((s) => s.seq === info.seq && this.#layout.snapshot(s) !== key);
      await this.#commitManifest((m) => ({
        ...m,
        snapshots: [...m.snapshots.filter((s) => s.seq !== info.seq), entry].sort((a, b) => a.seq - b.seq),
      }));
      for (const s of replaced) await this.#client.delete(this.#layout.snapshot(s)).catch(() => undefined);
    });
  }

  async readSnapshot(seq: number): Promise<Uint8Array> {
    const found = this.#manifest.snapshots.find((s) => s.seq === seq);
    if (found === undefined) throw missingSnapshot(seq);
    const object = await this.#client.get(this.#layout.snapshot(found));
    if (object === null) throw missingSnapshot(seq);
    if (crc32(object.body) !== found.crc)
      throw this.#corrupt(`snapshot ${this.#layout.snapshot(found)} fails its checksum`);
    return object.body;
  }

  // -- reading the log -------------------------------------------------------------------------

  readRecords(fromSeq: number, toSeq: number): Promise<CommitRecord[]> {
    return collectRecords(this.streamRecords(fromSeq, toSeq));
  }

  /**
   * Streams the records from the segments and log objects the manifest and the chain name. An
   * object found missing may have been folded or pruned after the list was taken (by this
   * holder's compaction, or the live holder's under a read-only view): the list is taken again
   * from the newest manifest and the read goes on from where it was. One that the newest manifest
   * still names is damage (`ERR_CORRUPT`), not pruned history.
   */
  async *streamRecords(fromSeq: number, toSeq: number): AsyncIterable<readonly CommitRecord[]> {
    await this.#log.settledThrough(this.#log.acceptedSeq);
    checkRange(fromSeq, toSeq, this.#firstSeq(), this.#log.durableSeq);
    // This stream takes what load() kept: the open's stream, the one it was kept for. What it does
    // not use is released with it instead of staying in memory for as long as the adapter lives.
    const loaded = this.#takeLoadedBodies();
    if (toSeq <= fromSeq) return;
    const cursor: RangeCursor = { expected: fromSeq + 1, toSeq };
    const reader = {
      client: this.#client,
      window: FETCH_WINDOW,
      cached: (key: string) => {
        const body = loaded.get(key);
        loaded.delete(key);
        return body;
      },
      damaged: (key: string, s: { firstSeq: number; lastSeq: number }) =>
        this.#corrupt(`${key} is damaged (it does not hold seq ${s.firstSeq} to ${s.lastSeq})`),
      pruned: () => prunedError(fromSeq),
    };
    for (;;) {
      const missing = yield* readSources(this.#sources(), cursor, reader);
      if (missing === undefined) break;
      if (this.#options.readOnly) await this.#refreshManifest();
      if (this.#sources().some((s) => s.key === missing))
        throw this.#corrupt(`${missing}, which the manifest names, is missing`);
    }
    if (cursor.expected <= toSeq) throw prunedError(fromSeq);
  }

  /** The objects that hold the log, oldest first. */
  #sources(): LogSource[] {
    return [
      ...this.#manifest.segments.map((s) => ({
        key: this.#layout.segment(s),
        firstSeq: s.firstSeq,
        lastSeq: s.lastSeq,
      })),
      ...this.#chain.map((o) => ({ key: this.#layout.log(o.position), firstSeq: o.firstSeq, lastSeq: o.lastSeq })),
    ];
  }

  /** A read-only view follows the live holder's compaction and retention: the newest manifest. */
  async #refreshManifest(): Promise<void> {
    const n = await findLast(this.#client, (k) => this.#layout.manifest(k), this.#manifestNumber);
    if (n === this.#manifestNumber) return;
    const m = await this.#readManifest(n);
    this.#manifest = m;
    this.#manifestNumber = n;
    this.#chain = this.#chain.filter((o) => o.position > m.lastPosition);
  }

  #firstSeq(): number {
    for (const s of this.#manifest.segments) if (s.lastSeq >= s.firstSeq) return s.firstSeq;
    for (const o of this.#chain) if (o.lastSeq >= o.firstSeq) return o.firstSeq;
    return this.#log.durableSeq + 1;
  }

  // -- compaction and retention ----------------------------------------------------------------

  #queueCompaction(): void {
    if (this.#compactionQueued) return;
    this.#compactionQueued = true;
    this.#maintain("compact", () => this.#compact())
      .catch(() => undefined)
      .finally(() => {
        this.#compactionQueued = false;
      });
  }

  compact(): Promise<void> {
    return this.#maintain("compact", () => this.#compact());
  }

  /**
   * Folds every log object but the newest into a compacted segment (merged with the previous
   * segment while that is small), records it in a new manifest, then deletes what was folded.
   * When an older writer's manifest turns up meanwhile (a holder that did not know yet it was
   * fenced may have compacted too), the plan was made against a manifest that is no longer the
   * newest: it is dropped and made again on top of the adopted one, or the two segments would
   * both cover the same log positions.
   */
  async #compact(): Promise<void> {
    this.#takeLoadedBodies();
    for (let done = false; !done; ) done = await this.#compactOnce();
  }

  /** One compaction against the current manifest; false when that manifest was superseded first. */
  async #compactOnce(): Promise<boolean> {
    const m = this.#manifest;
    const plan = planFold(m, this.#chain, this.#options.segmentBytes);
    if (plan === null) return true;
    const { data, segment } = await readFold(this.#client, this.#layout, m, plan, FETCH_WINDOW, (what) =>
      this.#corrupt(what),
    );
    const key = this.#layout.segment(segment);
    const put = await this.#client.putIfAbsent(key, data, this.#writerMeta());
    const committed = await this.#commitManifest((base) =>
      base !== m ? null : withSegment(base, segment, plan.merge),
    );
    if (!committed) {
      // Superseded: the segment is named by no manifest unless the adopted one names it too.
      const named = this.#manifest.segments.some((s) => this.#layout.segment(s) === key);
      if (put.outcome === "created" && !named) await this.#client.delete(key).catch(() => undefined);
      return false;
    }
    this.#chain = this.#chain.filter((o) => o.position > segment.lastPosition);
    this.#compactions++;
    // Everything at or before the folded position is never read again.
    await sweepFolded(this.#client, this.#layout, plan, segment);
    return true;
  }

  prune(keepFromSeq: number): Promise<void> {
    return this.#maintain("prune", async () => {
      const plan = planPrune(this.#manifest.snapshots, keepFromSeq);
      if (plan.baseSeq === null) return;
      // Fold the log first, so that whole segments can go.
      if (this.#chain.length > 1) await this.#compact();
      const doomed = new Set(plan.deleteSnapshots);
      const snapshots = this.#manifest.snapshots.filter((s) => doomed.has(s.seq));
      const segments = this.#manifest.segments.filter((s) => s.lastSeq <= plan.dropRecordsThrough);
      if (snapshots.length === 0 && segments.length === 0) return;
      await this.#commitManifest((m) => ({
        ...m,
        snapshots: m.snapshots.filter((s) => !doomed.has(s.seq)),
        segments: m.segments.filter((s) => !(s.lastSeq <= plan.dropRecordsThrough)),
      }));
      // Deleted only after the manifest stopped naming them.
      for (const s of snapshots) await this.#client.delete(this.#layout.snapshot(s)).catch(() => undefined);
      for (const s of segments) await this.#client.delete(this.#layout.segment(s)).catch(() => undefined);
    });
  }

  /**
   * Writes the next manifest, `change` applied to the newest one. A manifest written meanwhile by
   * an older writer (it could not know it was fenced) is adopted (the log objects it folded leave
   * the chain) and `change` applied again on top, or, when `change` returns `null` (its plan only
   * holds for the manifest it was made against), nothing is written and the result is `false`.
   * One by a newer writer means this one is fenced.
   */
  async #commitManifest(change: (m: Manifest) => Manifest | null): Promise<boolean> {
    const epoch = this.#epoch as number;
    for (;;) {
      const next = change(this.#manifest);
      if (next === null) return false;
      const n = this.#manifestNumber + 1;
      const body = serializeManifest(next);
      if (await createOwned(this.#client, this.#layout.manifest(n), body, this.#writerMeta())) {
        this.#manifest = next;
        this.#manifestNumber = n;
        await this.#checkNotFenced();
        return true;
      }
      const found = await this.#client.get(this.#layout.manifest(n));
      if (found === null) continue;
      const by = Number(found.meta.epoch);
      if (by > epoch) throw this.#fence(by);
      const adopted = parseManifest(found.body, (what) => this.#corrupt(`manifest ${n} ${what}`));
      this.#manifest = adopted;
      this.#manifestNumber = n;
      this.#chain = this.#chain.filter((o) => o.position > adopted.lastPosition);
    }
  }

  // -- metadata --------------------------------------------------------------------------------

  async readMeta(): Promise<Uint8Array | null> {
    return (await this.readMetaVersion()).bytes;
  }

  async readMetaVersion(): Promise<VersionedMeta> {
    const found = await readMetaVersion(this.#client, this.#layout, this.#metaIndex, (what) => this.#corrupt(what));
    this.#metaIndex = found.index;
    return { bytes: found.bytes, version: found.version };
  }

  /** A compare-and-swap that an older holder can never win (see {@link writeMetaIfNewest}). */
  async writeMetaIf(expectedVersion: number, bytes: Uint8Array | null): Promise<boolean> {
    this.#checkWritable("writeMetaIf");
    const epoch = this.#epoch as number;
    const done = await writeMetaIfNewest(
      this.#client,
      this.#layout,
      { known: this.#metaIndex, epoch, expectedVersion, bytes, meta: this.#writerMeta() },
      (what) => this.#corrupt(what),
    );
    this.#metaIndex = done.index;
    if (done.newer !== undefined) throw this.#fence(done.newer);
    if (!done.written) return false;
    await this.#checkNotFenced();
    return true;
  }

  // -- lifecycle -------------------------------------------------------------------------------

  async close(): Promise<void> {
    await this.#settle();
    this.#loaded = false;
    this.#takeLoadedBodies();
  }

  /** The bodies load() kept, which the adapter no longer holds after this. */
  #takeLoadedBodies(): Map<string, Uint8Array> {
    const taken = this.#loadedBodies;
    this.#loadedBodies = new Map();
    this.#loadedBytes = 0;
    return taken;
  }

  stats(): S3PersistenceStats {
    return {
      requests: { ...this.#client.counts },
      logObjects: this.#logObjects,
      appends: this.#appends,
      unfoldedObjects: this.#chain.length,
      segments: this.#manifest.segments.length,
      snapshots: this.#manifest.snapshots.length,
      compactions: this.#compactions,
    };
  }

  // -- helpers ---------------------------------------------------------------------------------

  #writerMeta(): WriterMeta {
    return { epoch: String(this.#epoch ?? 0), writer: this.#writer };
  }

  #checkWritable(method: string): void {
    if (this.#fenced !== null) throw this.#fenced;
    if (this.#options.readOnly)
      throw new ActorStoreError(
        "ERR_CLOSED",
        `Cannot call ${method}() on a read-only S3 persistence (readOnly: true); open one without it to write.`,
      );
    if (!this.#loaded)
      throw new ActorStoreError(
        "ERR_CLOSED",
        `Cannot call ${method}() before load(): load (or reload) the persistence first.`,
      );
  }

  #fence(newerEpoch?: number): Error {
    this.#fenced ??= fencedError(this.location, this.#epoch as number, newerEpoch);
    return this.#fenced;
  }

  #failedError(cause: Error): ActorStoreError {
    return new ActorStoreError(
      "ERR_WRITE_FAILED",
      `Writing the commit log to ${this.location} failed (${cause.message}); call load() to reopen.`,
      { cause },
    );
  }

  #corrupt(what: string): ActorStoreError {
    return new ActorStoreError(
      "ERR_CORRUPT",
      `The persisted data in ${this.location} is damaged: ${what}. Restore the prefix from a backup.`,
    );
  }

  #maintain(method: string, fn: () => Promise<void>): Promise<void> {
    const run = async () => {
      this.#checkWritable(method);
      try {
        await fn();
      } catch (error) {
        throw this.#fenced ?? error;
      }
    };
    const result = this.#maintenance.then(run, run);
    this.#maintenance = result.catch(() => undefined);
    return result;
  }

  async #settle(): Promise<void> {
    await this.#log.idle();
    await this.#maintenance;
  }
}

function isUnsupported(error: Error): boolean {
  return error instanceof ActorStoreError && error.code === "ERR_BACKEND_UNSUPPORTED";
}

/**
 * Opens persistence for one object on S3-compatible object storage (AWS S3, Cloudflare R2, Ceph
 * RADOS Gateway, MinIO). One writer per object is enforced by the store: each `load()` claims a new
 * epoch, and an older holder is fenced (`ERR_FENCED`) and confirms nothing after the newer claim.
 *
 * Throws a `TypeError` naming the option when an option is unknown or malformed. Credentials never
 * appear in errors.
 *
 * @example
 * ```ts
 * import { s3Persistence } from "actorstore/s3";
 * const persistence = s3Persistence({
 *   endpoint: "http://127.0.0.1:27480", bucket: "objects", prefix: "room-1/", region: "us-east-1",
 *   credentials: { accessKeyId: "…", secretAccessKey: "…" },
 * });
 * const storage = await ObjectStorage.open({ persistence });
 * ```
 */
export function s3Persistence(options: S3PersistenceOptions): S3Persistence {
  return new S3Adapter(resolveS3Options(options));
}
