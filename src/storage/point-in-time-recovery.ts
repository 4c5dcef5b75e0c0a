/**
 * Point-in-time recovery over the commit log: bookmarks name commits, `getBookmarkForTime` finds
 * the commit in force at a time, and a restore request is kept durably until the next session
 * starts, which rebuilds the named state and commits it as a new commit (so it can be undone).
 */
import { type BookmarkFields, formatBookmark, parseBookmark } from "../durability/bookmarks";
import { type PersistenceAdapter, updateMeta } from "../durability/persistence";
import { formatDuration, planPrune, RetentionPolicy } from "../durability/retention";
import { ActorStoreError } from "../errors";
import { Mutex } from "../util/mutex";
import { type CoreSettings, StorageCore } from "./storage-core";

const META_VERSION = 1;

/** The PITR calls of one storage. */
export class PointInTimeRecovery {
  readonly #core: StorageCore;
  readonly #retention: RetentionPolicy;
  readonly #requests = new Mutex();
  /** The seq this session's restore request names, if it made one (applied by the next session). */
  #pendingRestoreSeq: number | undefined;
  /** The prune in flight (prunes run one at a time, and a request waits for the one in flight). */
  #pruning: Promise<void> = Promise.resolve();

  constructor(core: StorageCore, retentionMs: number) {
    this.#core = core;
    this.#retention = new RetentionPolicy({ clock: core.settings.clock, windowMs: retentionMs });
    core.onSnapshot = () => {
      // A prune that fails (the storage closed meanwhile) deletes less; the next snapshot's tries again.
      this.prune().catch(() => undefined);
    };
  }

  /** The retention window in ms. */
  get retentionMs(): number {
    return this.#retention.windowMs;
  }

  /** The bookmark of the state after every write issued so far. Adds no write. */
  async currentBookmark(): Promise<string> {
    await this.#core.sync();
    return this.#bookmarkOf(this.#core.lastSeq);
  }

  /** The bookmark of the state in force at `ms` (whole ms, converted as the platform converts a date). */
  async bookmarkForTime(ms: number): Promise<string> {
    await this.#core.sync();
    const kept = this.#core.settings.persistence.keptHistory?.();
    const what = () => `The state at ${new Date(ms).toISOString()}`;
    let seq: number;
    try {
      // The present names the current state. Commit times are a running maximum, so after the clock
      // stepped back the latest commits carry a time after "now", and the lookup would name the
      // state before them (or none at all).
      seq =
        ms === this.#core.settings.clock.now()
          ? this.#core.lastSeq
          : this.#retention.seqForTime(this.#core.timeline, ms);
    } catch (e) {
      // Inside the retention window but before what the adapter keeps: say which bound it was.
      const inWindow = ms >= this.#core.settings.clock.now() - this.#retention.windowMs;
      if (kept !== undefined && inWindow && ms < (this.#core.timeline.timeOf(kept.fromSeq) ?? 0))
        throw kept.refuse(what());
      throw e;
    }
    if (kept !== undefined && seq < kept.fromSeq) throw kept.refuse(what());
    return this.#bookmarkOf(seq);
  }

  /**
   * Records durably that the next session must restore `bookmark`; returns a bookmark of the state
   * immediately before that restore (the end of this session, so writes confirmed after the request
   * belong to it), which undoes the restore when restored in turn. The caller has converted the
   * argument to a string (as the platform does).
   */
  async requestRestore(bookmark: string): Promise<string> {
    const parsed = parseBookmark(bookmark);
    // One request at a time, in call order: two in flight at once each read the metadata's version,
    // and the earlier one's retried compare-and-swap would overwrite the later one's request.
    return this.#requests.run(() => this.#requestRestore(bookmark, parsed));
  }

  async #requestRestore(bookmark: string, named: Required<BookmarkFields>): Promise<string> {
    const { seq, timeMs } = named;
    await this.#core.sync();
    // A prune in flight may be dropping this history: check against what it leaves.
    for (let pruning = this.#pruning; ; pruning = this.#pruning) {
      await pruning;
      if (pruning === this.#pruning) break;
    }
    const timeline = this.#core.timeline;
    const lastSeq = this.#core.lastSeq;
    if (seq > lastSeq) {
      throw new ActorStoreError(
        "ERR_BOOKMARK",
        `Bookmark ${bookmark} names a state this object has not reached yet (its latest commit is ${lastSeq}); use a bookmark returned by this object.`,
      );
    }
    const kept = this.#core.settings.persistence.keptHistory?.();
    if (kept !== undefined && seq < kept.fromSeq) throw kept.refuse(`Bookmark ${bookmark}`);
    if (seq < timeline.firstSeq) {
      // A prune under this window keeps every state since the window's start: one inside it that
      // is not there was lost (or pruned under a shorter window), not pruned for being too old.
      if (timeMs >= this.#core.settings.clock.now() - this.#retention.windowMs)
        throw new ActorStoreError(
          "ERR_BOOKMARK",
          `Bookmark ${bookmark} names a state this object no longer has: its history starts at commit ${timeline.firstSeq}, and the states before it are not there although they are inside the retention window of ${formatDuration(this.#retention.windowMs)} (a prune under this window keeps them), so they were lost (log files deleted from outside, or removed by a repair) or pruned under a shorter window; choose a newer bookmark.`,
        );
      throw new ActorStoreError(
        "ERR_BOOKMARK",
        `Bookmark ${bookmark} is older than the history this object keeps (the retention window is ${formatDuration(this.#retention.windowMs)}); choose a newer bookmark.`,
      );
    }
    // The seq alone would accept another object's bookmark for a commit this object also made, and
    // restore this object's state of that number. Each bookmark also holds its commit's time.
    const committedAt = this.#timeOf(seq);
    if (timeMs !== committedAt) {
      throw new ActorStoreError(
        "ERR_BOOKMARK",
        `Bookmark ${bookmark} was not made by this object: it names commit ${seq} at ${new Date(timeMs).toISOString()}, but this object's commit ${seq} was made at ${new Date(committedAt).toISOString()}. Use a bookmark returned by this object's getCurrentBookmark(), getBookmarkForTime() or onNextSessionRestoreBookmark().`,
      );
    }
    // An undo bookmark names the state just before the first restore after its commit; when no
    // restore has been applied since, that state is this session's end: nothing to restore, and a
    // pending request (the one it would undo) is cancelled.
    const target = named.beforeNextRestore ? await this.#stateBeforeRestoreAfter(seq, lastSeq) : seq;
    const undo = formatBookmark({ seq: lastSeq, timeMs: this.#timeOf(lastSeq), beforeNextRestore: true });
    const meta =
      target === undefined ? null : new TextEncoder().encode(JSON.stringify({ v: META_VERSION, restoreToSeq: target }));
    // From here on (in this turn: no prune starts in between) prunes keep this history; while the
    // write is in flight, the earlier request's too.
    if (target !== undefined) this.#pendingRestoreSeq = Math.min(this.#pendingRestoreSeq ?? target, target);
    // A later request replaces an earlier pending one (the newest call wins), through a
    // compare-and-swap like every metadata write.
    const persistence = this.#core.settings.persistence;
    await updateMeta(
      {
        readMetaVersion: () => persistence.readMetaVersion(),
        // A failed write may have landed all the same (see StorageCore.failWrite): the next session
        // may apply this request, so this one confirms nothing more. Writes it confirmed after the
        // caller was told the request failed would be undone by the restore.
        writeMetaIf: (version, bytes) =>
          persistence.writeMetaIf(version, bytes).catch((e: unknown) => {
            throw notWritten(e) ? e : this.#core.failWrite(e);
          }),
      },
      () => meta,
    );
    this.#pendingRestoreSeq = target;
    return undo;
  }

  /**
   * The state just before the first restore committed after `seq` (up to `lastSeq`), read from the
   * log; `undefined` when none was.
   */
  async #stateBeforeRestoreAfter(seq: number, lastSeq: number): Promise<number | undefined> {
    if (seq === lastSeq) return undefined;
    for await (const records of this.#core.settings.persistence.streamRecords(seq, lastSeq)) {
      for (const record of records) if (record.restoreToSeq !== undefined) return record.seq - 1;
    }
    return undefined;
  }

  /**
   * Drops history older than the retention window (keeping what any bookmark inside it needs, and
   * what this session's pending restore request needs), then thins the snapshots inside it.
   */
  prune(): Promise<void> {
    const run = this.#pruning.then(() => this.#prune());
    this.#pruning = run.catch(() => undefined);
    return run;
  }

  async #prune(): Promise<void> {
    const core = this.#core;
    // An adapter with its own bound (the in-memory one) may have dropped older history already:
    // commit times before it are no longer needed either.
    const kept = core.settings.persistence.keptHistory?.();
    if (kept !== undefined && kept.fromSeq > core.timeline.firstSeq) {
      core.snapshots = core.snapshots.filter((x) => x.seq >= kept.fromSeq);
      core.timeline.rebase(kept.fromSeq);
    }
    // The request the next session applies keeps its state reachable, even when this session runs
    // on past the window: pruning it would cancel a restore the caller was told is recorded.
    const keepFrom = Math.min(this.#retention.keepFromSeq(core.timeline), this.#pendingRestoreSeq ?? Infinity);
    const plan = planPrune(core.snapshots, keepFrom);
    if (plan.baseSeq !== null) {
      await core.settings.persistence.prune(keepFrom);
      // What is left starts at the base snapshot: bookmarks before it can no longer be restored.
      const dropped = new Set(plan.deleteSnapshots);
      core.snapshots = core.snapshots.filter((x) => !dropped.has(x.seq));
      core.timeline.rebase(plan.baseSeq);
    }
    // Inside the window, snapshots closer together than restores need go (the base and every
    // record after it stay, so each bookmark still restores exactly).
    await core.thinSnapshots(keepFrom);
  }

  #bookmarkOf(seq: number): string {
    return formatBookmark({ seq, timeMs: this.#timeOf(seq) });
  }

  /** The time a bookmark of `seq` holds: its commit's, in whole ms (0 for an empty history's start). */
  #timeOf(seq: number): number {
    const timeMs = this.#core.timeline.timeOf(seq) ?? this.#core.lastCommitTimeMs;
    return Number.isFinite(timeMs) ? Math.floor(timeMs) : 0;
  }
}

/**
 * The restore the previous session requested with `onNextSessionRestoreBookmark`, if any: the seq
 * to restore to. Used while the storage opens, before any state is built.
 */
export async function readPendingRestore(persistence: PersistenceAdapter): Promise<number | undefined> {
  return (await readPendingRestoreVersion(persistence)).seq;
}

/** {@link readPendingRestore} with the metadata version it read (to clear exactly that request). */
async function readPendingRestoreVersion(
  persistence: PersistenceAdapter,
): Promise<{ seq: number | undefined; version: number }> {
  const { bytes: meta, version } = await persistence.readMetaVersion();
  if (meta === null) return { seq: undefined, version };
  let parsed: { v?: number; restoreToSeq?: unknown };
  try {
    parsed = JSON.parse(new TextDecoder().decode(meta)) as typeof parsed;
  } catch {
    throw new ActorStoreError(
      "ERR_CORRUPT",
      "The pending restore request is unreadable; delete the object's meta file.",
    );
  }
  return { seq: typeof parsed.restoreToSeq === "number" ? parsed.restoreToSeq : undefined, version };
}

/**
 * Opens a core, applying a pending restore, whichever backend opens it: the request names the
 * object's next session, and one left in place for a later open would undo what this session
 * confirms. A restore that cannot be applied (its history was pruned) is cancelled rather than
 * left in place, where it would stop every later open.
 */
export async function openWithPendingRestore(settings: CoreSettings): Promise<StorageCore> {
  const persistence = settings.persistence;
  let requested = false;
  let requestVersion = 0;
  const restoreTarget = async () => {
    const { seq, version } = await readPendingRestoreVersion(persistence);
    requested = seq !== undefined;
    requestVersion = version;
    return seq;
  };
  // Clears the request this open read, and only that one (a compare-and-swap on its version).
  const clearRequest = () => persistence.writeMetaIf(requestVersion, null);
  let core: StorageCore;
  try {
    core = await StorageCore.open(settings, { restoreTarget });
  } catch (e) {
    // A failed open lets go of the persistence (a directory's lock), so that another open, the
    // inspector's repair or a person can act on it. Only a restore whose history is gone
    // (ERR_BOOKMARK) or damaged (ERR_CORRUPT) is cancelled: any other failure (a read error, a
    // lost connection, a fenced adapter) may pass, and the request stays for the next open.
    if (!requested || !historyUnusable(e)) {
      await persistence.close().catch(() => undefined);
      throw e;
    }
    await clearRequest().finally(() => persistence.close().catch(() => undefined));
    throw new ActorStoreError(
      "ERR_BOOKMARK",
      `The point-in-time restore requested by the previous session could not be applied and was cancelled: ${e instanceof Error ? e.message : String(e)} Open the storage again to continue from its latest state.`,
      { cause: e },
    );
  }
  if (requested) {
    try {
      await clearRequest();
    } catch (e) {
      // The caller gets no storage, so nothing else would ever close this one (and release a
      // directory's lock). The request stays: the next open applies it again, to the same state.
      await core
        .close()
        .catch(() => persistence.close())
        .catch(() => undefined);
      throw e;
    }
  }
  return core;
}

/** Whether a metadata write was refused before it began (the storage or adapter closed): nothing landed. */
function notWritten(error: unknown): boolean {
  return error instanceof ActorStoreError && error.code === "ERR_CLOSED";
}

/** Whether an open failed because the history a restore needs is gone or damaged. */
function historyUnusable(error: unknown): boolean {
  return error instanceof ActorStoreError && (error.code === "ERR_BOOKMARK" || error.code === "ERR_CORRUPT");
}
