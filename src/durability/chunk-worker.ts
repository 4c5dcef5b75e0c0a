/**
 * The engine's memory chunks allocated on a worker thread (Node only). A growing database needs a
 * new 256 KiB chunk about every 2.5 batches of the growth benchmark. Here a worker allocates them
 * (`new SharedArrayBuffer`) and posts them over; the engine takes one from the pool when it needs a
 * chunk and allocates its own only when the pool is empty (engine/chunk-supply.ts). What moves off
 * the event loop is the allocation itself, not the memory's first touches: a fresh buffer arrives
 * unmapped (64 page faults on the first write of each 256 KiB chunk, worker-allocated or not, on
 * the development VM), and the engine maps it on a turn of its own (`prepareAhead`). Mapping it on
 * the worker instead was measured worse: the faults then compete with the event loop for the same
 * two cores (docs/benchmarks-history.md, *The p99 tail, second look*).
 *
 * The worker is started on the first chunk asked for, once per process, and never keeps the
 * process alive (`unref`). If it cannot start or dies, the pool stops refilling and the engine
 * allocates its own chunks, as without it.
 *
 * @packageDocumentation
 */
import { type ChunkSupply, useChunkSupply } from "../engine/chunk-supply";
import { FILE_CHUNK_BYTES } from "../engine/sqljs-paged-file";

type WorkerThreads = typeof import("node:worker_threads");

/**
 * The worker: for each request, that many new (zero, not yet mapped) `SharedArrayBuffer`s of the size asked,
 * posted one by one (posting shares the buffer; nothing is copied). CommonJS in an eval worker,
 * the module named without the `node:` scheme (see crc-off-thread.ts for why).
 */
const WORKER_SOURCE = `
const { parentPort } = require("worker_threads");
parentPort.on("message", (m) => {
  for (let i = 0; i < m.count; i++) parentPort.postMessage(new SharedArrayBuffer(m.bytes));
});
`;

/** Chunks kept ready: 4 MiB of memory, a few batches' growth or the copies after a snapshot's freeze. */
const POOL_CHUNKS = 16;
/** Asked for again when this many or fewer are ready or on their way. */
const REFILL_BELOW = 8;

/** A pool of chunks refilled by a worker thread. @internal */
export class WorkerChunkSupply implements ChunkSupply {
  readonly #threads: WorkerThreads;
  readonly #bytes: number;
  readonly #ready: SharedArrayBuffer[] = [];
  /** Asked for and not received yet. */
  #coming = 0;
  #worker: InstanceType<WorkerThreads["Worker"]> | undefined;
  /** The worker could not start, or it exited: no more refills. */
  #failed = false;

  constructor(threads: WorkerThreads, bytes: number = FILE_CHUNK_BYTES) {
    this.#threads = threads;
    this.#bytes = bytes;
  }

  /** Chunks ready now (tests). */
  get ready(): number {
    return this.#ready.length;
  }

  /** Whether the worker failed (tests). */
  get failed(): boolean {
    return this.#failed;
  }

  take(bytes: number): SharedArrayBuffer | undefined {
    if (bytes !== this.#bytes) return undefined;
    const buffer = this.#ready.pop();
    this.#refill();
    return buffer;
  }

  /** Asks the worker to bring the pool back to {@link POOL_CHUNKS} when it ran low. */
  #refill(): void {
    if (this.#failed || this.#ready.length + this.#coming > REFILL_BELOW) return;
    const worker = this.#worker ?? this.#start();
    if (worker === undefined) return;
    const count = POOL_CHUNKS - this.#ready.length - this.#coming;
    this.#coming += count;
    worker.postMessage({ count, bytes: this.#bytes });
  }

  #start(): InstanceType<WorkerThreads["Worker"]> | undefined {
    let worker: InstanceType<WorkerThreads["Worker"]>;
    try {
      worker = new this.#threads.Worker(WORKER_SOURCE, { eval: true });
    } catch {
      this.#failed = true;
      return undefined;
    }
    worker.on("message", (buffer: unknown) => {
      this.#coming = Math.max(0, this.#coming - 1);
      // Only what the contract allows: a shared buffer of the size asked (fresh, so all zeros).
      if (buffer instanceof SharedArrayBuffer && buffer.byteLength === this.#bytes) this.#ready.push(buffer);
    });
    const stop = () => {
      this.#failed = true;
      this.#coming = 0;
    };
    worker.on("error", stop);
    worker.on("exit", stop);
    // After the listeners: adding a "message" listener refs the worker's port again.
    worker.unref();
    this.#worker = worker;
    return worker;
  }

  /** Stops the worker (tests); the chunks already ready stay usable. */
  async stop(): Promise<void> {
    this.#failed = true;
    await this.#worker?.terminate();
  }
}

let installed = false;

/**
 * Installs a {@link WorkerChunkSupply} for the process, once, where `SharedArrayBuffer` and worker
 * threads exist; otherwise the engine allocates its own chunks. @internal
 */
export async function installChunkWorker(): Promise<void> {
  if (installed) return;
  installed = true;
  if (typeof SharedArrayBuffer !== "function") return;
  let threads: WorkerThreads;
  try {
    threads = await import("node:worker_threads");
  } catch {
    return;
  }
  useChunkSupply(new WorkerChunkSupply(threads));
}
