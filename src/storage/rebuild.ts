/**
 * Rebuilding a database from what a persistence adapter holds: the newest snapshot at or before
 * the target, then the log records after it, in order. Used to open an object (newest state) and
 * to restore one (a bookmark's state).
 */

import type { CommitRecord } from "../durability/commit-record";
import { CommitTimeline } from "../durability/commit-timeline";
import { readSnapshotToOpen } from "../durability/image-handover";
import { type LoadResult, type SnapshotInfo, streamHistory } from "../durability/persistence";
import { SQLJS_REAL_TEXT_DIGITS, type SqlEngine } from "../engine/engine";
import { ActorStoreError } from "../errors";
import { SplitMix64 } from "../util/prng";
import { applyConnectionDefaults } from "./connection-defaults";
import { KvTable } from "./kv-table";
import { ReplayInputs, ReplayStatements, ReplayTransaction } from "./replay";
import { loggedBytes } from "./snapshots";
import type { CoreSettings } from "./storage-core";

/** What {@link openState} built. */
export interface OpenedState {
  engine: SqlEngine;
  /** The last commit replayed (the target's, or the newest). */
  lastSeq: number;
  lastTimeMs: number;
  /** The commit times of the whole retained history (through the newest commit, whatever the target). */
  timeline: CommitTimeline;
  /** Commits after the newest snapshot. */
  recordsSinceSnapshot: number;
  /** What those commits count toward the log since a snapshot (`loggedBytes`, snapshots.ts). */
  bytesSinceSnapshot: number;
}

/**
 * Opens an object's state in one pass over its history, streamed from the adapter a chunk at a
 * time (never the whole log in memory): every record gives its commit time to the timeline, and
 * the records after the base snapshot (the newest at or before `targetSeq`, or the newest) are
 * replayed onto it as they arrive.
 */
export async function openState(
  settings: CoreSettings,
  loaded: Pick<LoadResult, "snapshots" | "lastSeq">,
  targetSeq: number | undefined,
): Promise<OpenedState> {
  const snapshots = loaded.snapshots;
  const oldest = snapshots[0];
  const newest = snapshots[snapshots.length - 1];
  let timeline = oldest === undefined ? new CommitTimeline() : new CommitTimeline(oldest.seq, oldest.timeMs);
  let recordsSinceSnapshot = 0;
  let bytesSinceSnapshot = 0;
  const replayer = await Replayer.start(settings, snapshots, targetSeq);
  try {
    // The history up to the base snapshot gives only its commit times (the adapter may read them
    // without decoding the records); the records after it are replayed.
    const timesThrough = replayer.lastSeq;
    for await (const chunk of streamHistory(settings.persistence, loaded, { timesThrough })) {
      if (chunk.restartAt !== undefined) {
        // The log restarts after a snapshot newer than its end (a damaged tail was cut off while a
        // snapshot already covered it): the states in between are gone from the timeline.
        timeline = new CommitTimeline(chunk.restartAt.seq, chunk.restartAt.timeMs);
        continue;
      }
      if (chunk.times !== undefined) {
        const { firstSeq, timesMs } = chunk.times;
        for (let i = 0; i < timesMs.length; i++) timeline.append(firstSeq + i, timesMs[i] as number);
        if (firstSeq + timesMs.length - 1 > (newest?.seq ?? 0))
          recordsSinceSnapshot += firstSeq + timesMs.length - 1 - Math.max(firstSeq - 1, newest?.seq ?? 0);
        continue;
      }
      for (const record of chunk.records) {
        timeline.append(record.seq, record.timeMs);
        if (record.seq > (newest?.seq ?? 0)) {
          recordsSinceSnapshot++;
          bytesSinceSnapshot += loggedBytes(record);
        }
        if (record.seq > replayer.lastSeq && (targetSeq === undefined || record.seq <= targetSeq)) {
          const replacing = replayer.apply(record);
          if (replacing !== undefined) await replacing;
        }
      }
    }
    // Same when the log ends before the newest snapshot: the next commit follows the snapshot.
    if (newest !== undefined && newest.seq > timeline.lastSeq) timeline = new CommitTimeline(newest.seq, newest.timeMs);
    const end = targetSeq ?? loaded.lastSeq;
    // The history did not reach the target: read it directly (the adapter names what is gone).
    if (replayer.lastSeq < end) await replayer.applyAll(settings.persistence.streamRecords(replayer.lastSeq, end));
  } catch (e) {
    replayer.abandon();
    throw replayer.failure(e);
  }
  return { ...replayer.finish(), timeline, recordsSinceSnapshot, bytesSinceSnapshot };
}

/**
 * Rebuilds the database as of `targetSeq` (or the newest state): the newest snapshot at or before
 * it, then the records after that snapshot, streamed in order. A record that is itself a restore
 * is applied by rebuilding the state it names (recursively) and continuing from there.
 */
export async function buildState(
  settings: CoreSettings,
  snapshots: readonly SnapshotInfo[],
  targetSeq: number,
): Promise<{ engine: SqlEngine; lastSeq: number; lastTimeMs: number }> {
  const replayer = await Replayer.start(settings, snapshots, targetSeq);
  try {
    if (replayer.lastSeq < targetSeq)
      await replayer.applyAll(settings.persistence.streamRecords(replayer.lastSeq, targetSeq));
  } catch (e) {
    replayer.abandon();
    throw replayer.failure(e);
  }
  return replayer.finish();
}

/** Applies records one after the other onto an engine opened from a base snapshot. */
class Replayer {
  readonly #settings: CoreSettings;
  readonly #snapshots: readonly SnapshotInfo[];
  readonly #prng = new SplitMix64();
  #engine: SqlEngine;
  #replay: ReturnType<typeof startReplay>;
  /**
   * The digits of a REAL turned into text in the session being replayed, as its last session mark
   * says (`SessionMark.realTextDigits`); sql.js's 17 until a mark says otherwise, since only
   * sessions logged before the engine set the platform's 15 have marks without them (or none).
   */
  #realTextDigits = SQLJS_REAL_TEXT_DIGITS;
  /**
   * Whether the session being replayed ran with sql.js's legacy extension functions, as its last
   * session mark says (`SessionMark.nativeFunctions` absent); so until a mark says otherwise, since
   * only sessions logged before the engine left them out have no marks.
   */
  #legacyFunctions = true;
  /** Whether the engine's functions were made the session's since it was opened (see {@link Replayer.#functionsAsLogged}). */
  #functionsChecked = false;
  lastSeq: number;
  lastTimeMs: number;

  private constructor(
    settings: CoreSettings,
    snapshots: readonly SnapshotInfo[],
    engine: SqlEngine,
    base: SnapshotInfo | undefined,
  ) {
    this.#settings = settings;
    this.#snapshots = snapshots;
    this.#engine = engine;
    this.#replay = startReplay(engine, this.#prng);
    engine.setRealTextDigits(this.#realTextDigits);
    this.lastSeq = base?.seq ?? 0;
    this.lastTimeMs = base?.timeMs ?? 0;
  }

  /**
   * Opens the newest snapshot at or before `targetSeq` (or the empty database). A snapshot that
   * turns out damaged (`ERR_CORRUPT`; `load()` checks only the newest usable one) is passed over
   * for the one before it, whose longer log may still reach the state: the first such damage is
   * kept, the error to report if the log cannot.
   */
  static async start(
    settings: CoreSettings,
    snapshots: readonly SnapshotInfo[],
    targetSeq: number | undefined,
  ): Promise<Replayer> {
    let candidates = snapshots;
    let passedOver: ActorStoreError | undefined;
    for (;;) {
      const base = newestSnapshotAtOrBefore(candidates, targetSeq);
      let engine: SqlEngine;
      if (base === undefined) engine = settings.engineFactory.open();
      else {
        try {
          // Without a copy when the adapter hands the image over or lends it (image-handover.ts).
          const { image, use } = await readSnapshotToOpen(settings.persistence, base.seq);
          engine = settings.engineFactory.open(image, use);
        } catch (e) {
          if (!(e instanceof ActorStoreError && e.code === "ERR_CORRUPT")) throw e;
          passedOver ??= e;
          candidates = candidates.filter((s) => s.seq < base.seq);
          continue;
        }
      }
      const replayer = new Replayer(settings, snapshots, engine, base);
      replayer.#passedOver = passedOver;
      return replayer;
    }
  }

  /** The damage of a snapshot {@link Replayer.start} passed over, if it did. */
  #passedOver: ActorStoreError | undefined;

  /**
   * What a failure of the replay after `start` reports: when a damaged snapshot was passed over
   * and the older history could not reach the state either, that damage (the cause to repair).
   */
  failure(error: unknown): unknown {
    const history = error instanceof ActorStoreError && (error.code === "ERR_CORRUPT" || error.code === "ERR_BOOKMARK");
    return this.#passedOver !== undefined && history ? this.#passedOver : error;
  }

  /**
   * Applies the next record (it must be `lastSeq + 1`). Returns a promise only when the record
   * replaces the state (a restore or `deleteAll`), so that replaying a long log costs no promise a
   * record.
   */
  apply(record: CommitRecord): Promise<void> | undefined {
    if (record.seq !== this.lastSeq + 1)
      throw new ActorStoreError(
        "ERR_CORRUPT",
        `The stored history is incomplete: commit ${record.seq} follows commit ${this.lastSeq}, and no snapshot holds the state in between. Restore the data from a backup.`,
      );
    if (record.session !== undefined) {
      this.#realTextDigits = record.session.realTextDigits ?? SQLJS_REAL_TEXT_DIGITS;
      this.#engine.setRealTextDigits(this.#realTextDigits);
      this.#legacyFunctions = record.session.nativeFunctions !== true;
    }
    if (record.restoreToSeq !== undefined || record.reset) return this.#replace(record);
    // At a mark (whose settings the record sets on whatever connection runs it) or the first record.
    if (record.session !== undefined || !this.#functionsChecked) this.#functionsAsLogged();
    const r = this.#replay;
    r.transaction.apply(r.kv, this.#prng, r.statements, record, r.inputs);
    this.lastSeq = record.seq;
    this.lastTimeMs = record.timeMs;
    return undefined;
  }

  /** Applies every record of `stream`, in order. */
  async applyAll(stream: AsyncIterable<readonly CommitRecord[]>): Promise<void> {
    for await (const records of stream)
      for (const record of records) {
        const replacing = this.apply(record);
        if (replacing !== undefined) await replacing;
      }
  }

  /** The state is replaced: by an older state (a restore), or by an empty database (deleteAll). */
  async #replace(record: CommitRecord): Promise<void> {
    this.#replay.finish();
    this.#engine.close();
    this.#engine =
      record.restoreToSeq !== undefined
        ? (await buildState(this.#settings, this.#snapshots, record.restoreToSeq)).engine
        : this.#settings.engineFactory.open();
    this.#replay = startReplay(this.#engine, this.#prng);
    // A new connection, in the same session: it runs with the session's digits and functions.
    this.#engine.setRealTextDigits(this.#realTextDigits);
    this.#functionsAsLogged();
    if (record.restoreToSeq === undefined) {
      const r = this.#replay;
      r.transaction.apply(r.kv, this.#prng, r.statements, record, r.inputs);
    }
    this.lastSeq = record.seq;
    this.lastTimeMs = record.timeMs;
  }

  /**
   * Gives the engine the functions the session being replayed ran with: sql.js's legacy extension
   * functions are registered onto it; a connection that has them cannot lose them, so for a
   * session that ran without them the state moves to a new connection (as a restore does: the
   * same random source, the session's digits; the record being replayed carries the session's
   * settings).
   */
  #functionsAsLogged(): void {
    this.#functionsChecked = true;
    if (this.#legacyFunctions) this.#engine.setLegacyFunctions(true);
    else if (this.#engine.legacyFunctions) {
      this.#reopen();
      if (this.#engine.legacyFunctions) throw legacyModule();
    }
  }

  /** Moves the committed state to a new connection (the module's functions: without legacy ones, unless it has them). */
  #reopen(): void {
    this.#replay.finish();
    const bytes = this.#engine.exportBytes();
    this.#engine.close();
    this.#engine = this.#settings.engineFactory.open(bytes, "take");
    this.#replay = startReplay(this.#engine, this.#prng);
    this.#engine.setRealTextDigits(this.#realTextDigits);
  }

  /**
   * Ends the replay. The engine goes on to a live session, which runs without sql.js's legacy
   * extension functions, as the platform does: an engine that replayed a session with them is
   * replaced by a new connection (which has them anyway only when the module does, docs/sql.md).
   */
  finish(): { engine: SqlEngine; lastSeq: number; lastTimeMs: number } {
    if (this.#engine.legacyFunctions) {
      const module = this.#settings.engineFactory.open();
      const legacyModule = module.legacyFunctions;
      module.close();
      if (!legacyModule) this.#reopen();
    }
    this.#replay.finish();
    return { engine: this.#engine, lastSeq: this.lastSeq, lastTimeMs: this.lastTimeMs };
  }

  abandon(): void {
    this.#replay.abandon();
    this.#engine.close();
  }
}

/**
 * The log has a session that ran with SQLite's own math functions, but every connection of this
 * process's sql.js has the legacy ones, which nothing removes: it cannot be replayed as it ran.
 */
function legacyModule(): ActorStoreError {
  return new ActorStoreError(
    "ERR_BACKEND_UNSUPPORTED",
    "The stored history has sessions that ran with SQLite's own math functions, but sql.js was initialized in this process with its legacy extension functions (initSqlJs() was called before actorstore loaded it, without useOldExtensionFunctions: false), so they cannot be replayed as they ran. Let actorstore load sql.js first, or pass useOldExtensionFunctions: false to that initSqlJs() call.",
  );
}

function newestSnapshotAtOrBefore(
  snapshots: readonly SnapshotInfo[],
  targetSeq: number | undefined,
): SnapshotInfo | undefined {
  let best: SnapshotInfo | undefined;
  for (const s of snapshots) {
    if ((targetSeq === undefined || s.seq <= targetSeq) && (best === undefined || s.seq > best.seq)) best = s;
  }
  return best;
}

/** Everything replay keeps per engine. */
function startReplay(engine: SqlEngine, prng: SplitMix64) {
  engine.setRandomSource(prng);
  const inputs = new ReplayInputs();
  engine.setConnectionInputs(inputs);
  applyConnectionDefaults(engine);
  const kv = new KvTable(engine);
  const statements = new ReplayStatements(engine);
  const transaction = new ReplayTransaction(engine);
  return {
    kv,
    inputs,
    statements,
    transaction,
    finish(): void {
      transaction.commit();
      statements.dispose();
      kv.dispose();
    },
    abandon(): void {
      transaction.rollback();
      statements.dispose();
      kv.dispose();
    },
  };
}
