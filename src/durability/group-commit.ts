/**
 * The group-commit queue shared by the adapters that write the log as appended bytes (the file
 * adapter and the S3 adapter): appends are encoded at once, queued, and written by one loop; every
 * append that arrives while a write is in flight goes out with the others in the next write (one
 * flush, or one log object, for many commits). Each append still resolves only when its own bytes
 * are durable.
 *
 * @packageDocumentation
 */
import { toError } from "../errors";
import { concat } from "../util/bytes";
import type { CommitRecord } from "./commit-record";
import { checkAppendOrder } from "./persistence";
import { encodeRecords, encodeRecordsView } from "./record-codec";

/**
 * Buffers of written frames, kept for the next appends of any queue that reuses them
 * ({@link GroupCommitHooks.reuseFrames}). A new `ArrayBuffer` per append (~100 KB for 100 puts of
 * 1 KB) counted towards V8's external memory allocated since its last full GC, which starts one
 * after a few MiB when the JavaScript heap is small (docs/benchmarks-history.md, *Fewer full
 * GCs*). At most {@link FRAME_POOL_BUFFERS} are kept, none over {@link FRAME_BUFFER_MAX_BYTES}; a
 * buffer is here only while no queue holds it.
 */
const framePool: ArrayBuffer[] = [];
const FRAME_POOL_BUFFERS = 4;
const FRAME_BUFFER_MAX_BYTES = 1024 * 1024;
const FRAME_BUFFER_MIN_BYTES = 16 * 1024;

/** `length` bytes at the start of a pooled buffer (or a new one: a power of two, so it is reused). */
function pooledFrames(length: number): Uint8Array {
  for (let i = framePool.length - 1; i >= 0; i--) {
    const buffer = framePool[i] as ArrayBuffer;
    if (buffer.byteLength >= length) {
      framePool.splice(i, 1);
      return new Uint8Array(buffer, 0, length);
    }
  }
  let size = FRAME_BUFFER_MIN_BYTES;
  while (size < length) size *= 2;
  return new Uint8Array(new ArrayBuffer(length > FRAME_BUFFER_MAX_BYTES ? length : size), 0, length);
}

/** Hands a written write's buffer back to the pool; nothing may read `frames` afterwards. */
function recycleFrames(frames: Uint8Array): void {
  const buffer = frames.buffer;
  if (!(buffer instanceof ArrayBuffer) || buffer.byteLength > FRAME_BUFFER_MAX_BYTES) return;
  if (framePool.length >= FRAME_POOL_BUFFERS || framePool.includes(buffer)) return;
  framePool.push(buffer);
}

/** One write of the loop: the frames of every append queued since the last write. @internal */
export interface GroupWrite {
  /** The encoded frames, in seq order. */
  data: Uint8Array;
  /** The first and last seq the write holds. */
  firstSeq: number;
  lastSeq: number;
  /** How many appends share it. */
  appends: number;
}

/** What the adapter plugs into the queue. @internal */
export interface GroupCommitHooks {
  /** Makes one write durable; a rejection fails this write's appends and every later one. */
  write(batch: GroupWrite): Promise<void>;
  /** The error the appends of a failed write (and later ones) reject with; `cause` is what failed. */
  failed(cause: Error): Error;
  /** Runs after every successful write (stats, compaction). */
  written?(batch: GroupWrite): void;
  /**
   * Whether a write's `data` may be reused once `write` resolved and `written` returned: the
   * adapter keeps no reference to it (the file adapter, which writes it with positional writes that
   * have completed by then). A failed write's buffer is never reused.
   */
  reuseFrames?: boolean;
}

interface PendingAppend {
  frames: Uint8Array;
  firstSeq: number;
  lastSeq: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Appends queued in seq order and written together (group commit). The adapter checks that it may
 * write before {@link GroupCommitQueue.append}; the queue checks the order, encodes, and tracks the
 * accepted and durable seqs. @internal
 *
 * @example
 * ```ts
 * const queue = new GroupCommitQueue({ write: (b) => writeLog(b.data), failed: (e) => e });
 * queue.reset(loaded.lastSeq);
 * await queue.append(records);
 * ```
 */
export class GroupCommitQueue {
  readonly #hooks: GroupCommitHooks;
  #queue: PendingAppend[] = [];
  #draining: Promise<void> | null = null;
  /** Woken after every write round of the loop (and when it stops); see {@link settledThrough}. */
  #roundWaiters: Array<() => void> = [];
  /** Highest seq accepted (queued or durable) and highest durable seq. */
  #acceptedSeq = 0;
  #durableSeq = 0;
  /** Set when a write failed: every later append rejects until {@link reset}. */
  #failure: Error | null = null;
  /** The write in flight (settled, never rejecting), if any. */
  #writing: Promise<void> | null = null;
  /** What each frame's CRC starts from (record-codec.ts): the directory's binding, or none. */
  #binding: { seed: number } | undefined;

  constructor(hooks: GroupCommitHooks) {
    this.#hooks = hooks;
  }

  /** The highest seq accepted by {@link append} (queued or durable). */
  get acceptedSeq(): number {
    return this.#acceptedSeq;
  }

  /** The highest durable seq. */
  get durableSeq(): number {
    return this.#durableSeq;
  }

  /** Why a write failed, until the next {@link reset}. */
  get failure(): Error | null {
    return this.#failure;
  }

  /**
   * Starts again after a load: nothing queued (call {@link idle} first), the log ends at `lastSeq`;
   * frames are encoded with `binding` (a directory's, log-binding.ts; none: the plain CRC).
   */
  reset(lastSeq: number, binding?: { seed: number }): void {
    this.#binding = binding;
    this.#acceptedSeq = lastSeq;
    this.#durableSeq = lastSeq;
    this.#failure = null;
  }

  /**
   * Queues `records` (which must continue the log: a `RangeError` otherwise, before anything is
   * queued) and resolves once they are durable. An empty call waits for what is queued.
   */
  append(records: readonly CommitRecord[]): Promise<void> {
    try {
      if (this.#failure !== null) throw this.#hooks.failed(this.#failure);
      if (records.length === 0) return this.settledThrough(this.#acceptedSeq);
      const firstSeq = this.#acceptedSeq + 1;
      const lastSeq = checkAppendOrder(records, this.#acceptedSeq);
      // Encode now, synchronously: the caller may reuse its objects once append returns.
      let frames: Uint8Array;
      if (this.#hooks.reuseFrames === true) {
        const view = encodeRecordsView(records, this.#binding);
        frames = pooledFrames(view.length);
        frames.set(view);
      } else frames = encodeRecords(records, this.#binding);
      this.#acceptedSeq = lastSeq;
      return new Promise<void>((resolve, reject) => {
        this.#queue.push({ frames, firstSeq, lastSeq, resolve, reject });
        this.#draining ??= this.#drain();
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Writes queued appends until the queue is empty, everything queued meanwhile in one write. */
  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const pending = this.#queue.splice(0);
        const first = pending[0] as PendingAppend;
        const last = pending[pending.length - 1] as PendingAppend;
        const reuse = this.#hooks.reuseFrames === true;
        let data = first.frames;
        if (pending.length > 1) {
          // Reusing buffers, the joined frames go into a pooled one and the parts back to the pool.
          const parts = pending.map((p) => p.frames);
          data = concat(parts, reuse ? pooledFrames : undefined);
          if (reuse) for (const part of parts) recycleFrames(part);
        }
        const batch: GroupWrite = {
          data,
          firstSeq: first.firstSeq,
          lastSeq: last.lastSeq,
          appends: pending.length,
        };
        const writing = this.#hooks.write(batch);
        this.#writing = writing.then(
          () => undefined,
          () => undefined,
        );
        try {
          await writing;
        } catch (error) {
          this.#failure = toError(error);
          const failed = this.#hooks.failed(this.#failure);
          // Later appends were encoded against seqs that will never be durable: fail them too.
          for (const p of pending.concat(this.#queue.splice(0))) p.reject(failed);
          return;
        }
        this.#writing = null;
        this.#durableSeq = batch.lastSeq;
        this.#hooks.written?.(batch);
        if (reuse) recycleFrames(data);
        for (const p of pending) p.resolve();
        this.#wakeRoundWaiters();
      }
    } finally {
      this.#writing = null;
      this.#draining = null;
      this.#wakeRoundWaiters();
    }
  }

  /** Resolves once every queued append has settled (whatever the outcome). */
  async idle(): Promise<void> {
    while (this.#draining !== null) await this.#draining;
  }

  /**
   * Resolves at once when no write is in flight, else once the one in flight has settled (not the
   * loop: the next write may start right after). A snapshot's paced write waits here before each
   * slice, so that its disk writes start between the log's flushes (file-io.ts, `WritePacing`).
   */
  async writeSettled(): Promise<void> {
    const writing = this.#writing;
    if (writing !== null) await writing;
  }

  /**
   * Resolves once every append up to `seq` has settled (durable, or failed). Not {@link idle}:
   * under a steady stream of appends the loop never ends, so a snapshot or a read that waited for
   * it would starve. Only the appends accepted before the call matter to these callers.
   */
  async settledThrough(seq: number): Promise<void> {
    while (this.#durableSeq < seq && this.#failure === null && this.#draining !== null) {
      await new Promise<void>((resolve) => this.#roundWaiters.push(resolve));
    }
  }

  #wakeRoundWaiters(): void {
    for (const wake of this.#roundWaiters.splice(0)) wake();
  }
}
