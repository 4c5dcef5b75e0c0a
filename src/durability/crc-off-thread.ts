/**
 * Checksumming a large snapshot image on another thread while the load goes on (Node only): the
 * image is read into a `SharedArrayBuffer`, a worker thread computes its CRC-32 with Node's native
 * `zlib.crc32`, and the load checks the log segments meanwhile. The load still waits for the
 * result before it resolves: nothing uses the image before its checksum is known to match
 * (docs/durability.md, "Snapshot fallback").
 *
 * @packageDocumentation
 */
import type { FileHandle } from "node:fs/promises";
import { crc32 } from "./crc32";

type Fs = typeof import("node:fs/promises");
type WorkerThreads = typeof import("node:worker_threads");

/** Images smaller than this are checked on the loading thread (a worker costs tens of ms to start). */
const DEFAULT_FROM_BYTES = 16 * 1024 * 1024;
let fromBytes = DEFAULT_FROM_BYTES;
let checks = 0;

/**
 * Sets the size from which images are checked on another thread (tests use 0); returns the previous
 * value. `undefined` restores the default. @internal
 */
export function setOffThreadCrcFromBytes(bytes: number | undefined): number {
  const previous = fromBytes;
  fromBytes = bytes ?? DEFAULT_FROM_BYTES;
  return previous;
}

/** How many checks ran on another thread in this process (tests). @internal */
export function offThreadCrcChecks(): number {
  return checks;
}

let answers = 0;

/**
 * How many of those checks the worker itself answered, not the in-line fallback after it failed
 * to start or died (tests). @internal
 */
export function offThreadCrcAnswers(): number {
  return answers;
}

/**
 * The worker: the CRC-32 of the shared bytes it is given, posted back. CommonJS (an eval worker,
 * which only Node's worker threads run), so the built-in modules are named without the `node:`
 * scheme: this text ships in the browser build too, which carries no `node:` specifier anywhere
 * (test/browser/recipe.test.ts). If the worker cannot start or load them, the check runs in line.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("worker_threads");
const { crc32 } = require("zlib");
parentPort.postMessage(crc32(new Uint8Array(workerData.buffer, 0, workerData.length), 0));
`;

let threadsLoaded: Promise<WorkerThreads | undefined> | undefined;

/**
 * Node's worker threads when its zlib has a native `crc32`, else `undefined`; loaded once per
 * process (a dynamic import on every open cost a round trip through the module loader each).
 */
function loadThreads(): Promise<WorkerThreads | undefined> {
  threadsLoaded ??= (async () => {
    try {
      const zlib = await import("node:zlib");
      if (typeof (zlib as { crc32?: unknown }).crc32 !== "function") return undefined;
      return await import("node:worker_threads");
    } catch {
      return undefined;
    }
  })();
  return threadsLoaded;
}

/** Reads files and checks their CRC on another thread. @internal */
export interface OffThreadCrc {
  /** Whether an image of `size` bytes is read and checked here ({@link OffThreadCrc.readAndCheck} answers `undefined` otherwise). */
  accepts(size: number): boolean;
  /**
   * Reads `file` (`size` bytes by its stat) and starts checking it against `crc`: `undefined` when
   * the image is too small to be worth a thread (check it in line), else the bytes (a view of a
   * `SharedArrayBuffer`, read once) and the check, which resolves `true` when the CRC matches and
   * `false` when it differs or the file did not read whole. Rejects when the file cannot be read.
   * With `capacity` (larger than `size`), the bytes have that length, zeros after the file's (room
   * for the deltas applied to a full image, snapshot-delta.ts).
   */
  readAndCheck(
    file: string,
    size: number,
    crc: number,
    capacity?: number,
  ): Promise<{ image: Uint8Array; matches: Promise<boolean> } | undefined>;
}

/**
 * The off-thread check for this runtime: `undefined` without worker threads, `SharedArrayBuffer`
 * or a native `zlib.crc32` (then every image is checked in line, as before). @internal
 */
export async function createOffThreadCrc(fs: Fs): Promise<OffThreadCrc | undefined> {
  if (typeof SharedArrayBuffer !== "function") return undefined;
  const threads = await loadThreads();
  if (threads === undefined) return undefined;
  const accepts = (size: number) => size >= fromBytes && size > 0;
  return {
    accepts,
    async readAndCheck(file, size, crc, capacity = size) {
      if (!accepts(size)) return undefined;
      const image = new Uint8Array(new SharedArrayBuffer(Math.max(size, capacity)));
      const handle = await fs.open(file, "r");
      let read: number;
      try {
        read = await readInto(handle, image.subarray(0, size));
      } finally {
        await handle.close();
      }
      if (read !== size) return { image, matches: Promise.resolve(false) };
      checks++;
      return { image, matches: checkOnWorker(threads, image.subarray(0, size), crc) };
    },
  };
}

/** Fills `target` from the start of the file; returns the bytes read (fewer when the file is shorter). */
export async function readInto(handle: FileHandle, target: Uint8Array): Promise<number> {
  let at = 0;
  while (at < target.length) {
    const { bytesRead } = await handle.read(target, at, Math.min(target.length - at, 16 * 1024 * 1024), at);
    if (bytesRead === 0) break;
    at += bytesRead;
  }
  return at;
}

/** The worker's verdict; when the worker fails (cannot start, dies), the CRC is computed here. */
function checkOnWorker(threads: WorkerThreads, image: Uint8Array, crc: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let settled = false;
    const inLine = () => {
      if (settled) return;
      settled = true;
      resolve(crc32(image) === crc);
    };
    let worker: InstanceType<WorkerThreads["Worker"]>;
    try {
      worker = new threads.Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { buffer: image.buffer, length: image.length },
      });
    } catch {
      inLine();
      return;
    }
    worker.once("message", (value: unknown) => {
      if (settled) return;
      settled = true;
      answers++;
      resolve(value === crc);
      void worker.terminate();
    });
    worker.once("error", inLine);
    worker.once("exit", inLine);
  });
}
