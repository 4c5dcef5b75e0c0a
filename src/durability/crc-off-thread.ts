/**
 * Checksumming a large snapshot image on another thread while the load goes on (Node only): the
 * image is read into a `SharedArrayBuffer`, a worker thread computes its CRC-32 with Node's native
 * `zlib.crc32`, and the load checks the log segments meanwhile. A delta chain is read the same way,
 * each file in pieces straight into the image it composes (or into a scratch buffer for bytes a
 * newer file rewrites), and the worker checks every file's CRC over its pieces. The load still
 * waits for the result before it resolves: nothing uses the image before every checksum is known
 * to match (docs/durability.md, "Snapshot fallback"). A snapshot being written is summed on a worker
 * too: its parts (shared memory, the engine's frozen chunks) before the write, and the file read
 * back by the worker itself after it.
 *
 * @packageDocumentation
 */
import type { FileHandle } from "node:fs/promises";
import { crc32Update } from "./crc32";
import { crcMatches, type SnapshotIdentity } from "./snapshot-name-crc";

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
let filesChecked = 0;

/** How many files those checks covered (a delta chain counts each of its files; tests). @internal */
export function offThreadCrcFiles(): number {
  return filesChecked;
}

/**
 * How many of those checks the worker itself answered, not the in-line fallback after it failed
 * to start or died (tests). @internal
 */
export function offThreadCrcAnswers(): number {
  return answers;
}

/**
 * The worker: the CRC-32 of each file it is given, chained over the file's pieces of the two shared
 * buffers (the image, the scratch), posted back. It sums each step as soon as the loading thread
 * has read it (`progress[0]` counts the steps read, `progress[1]` is set when the read gave up), so
 * the sums run alongside the reads instead of after them. It never waits on a read that gave up:
 * the loading thread sets the flag and moves the count, which wakes it, and it ends without an
 * answer. CommonJS (an eval worker, which only Node's worker threads run), so the built-in modules
 * are named without the `node:` scheme: this text ships in the browser build too, which carries no
 * `node:` specifier anywhere (test/browser/recipe.test.ts). If the worker cannot start or load
 * them, the check runs in line.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("worker_threads");
const { crc32 } = require("zlib");
const buffers = [new Uint8Array(workerData.image), new Uint8Array(workerData.scratch)];
const progress = new Int32Array(workerData.progress);
const steps = workerData.steps;
const crcs = new Array(workerData.files).fill(0);
const sumAll = () => {
  for (let k = 0; k * 4 < steps.length; k++) {
    for (;;) {
      const read = Atomics.load(progress, 0);
      if (Atomics.load(progress, 1) !== 0) return false;
      if (read > k) break;
      Atomics.wait(progress, 0, read);
    }
    const [file, buffer, at, length] = [steps[4 * k], steps[4 * k + 1], steps[4 * k + 2], steps[4 * k + 3]];
    crcs[file] = crc32(buffers[buffer].subarray(at, at + length), crcs[file]);
  }
  return true;
};
if (sumAll()) parentPort.postMessage(crcs);
`;

/** The most bytes of one read, and of one step of the worker's sums that follows it. */
const DEFAULT_STEP_BYTES = 4 * 1024 * 1024;
let stepBytes = DEFAULT_STEP_BYTES;

/**
 * Sets the size of the reads the worker sums one by one (tests use a few bytes, so that a small
 * image is read in many steps); returns the previous value. `undefined` restores the default.
 * @internal
 */
export function setOffThreadCrcStepBytes(bytes: number | undefined): number {
  const previous = stepBytes;
  stepBytes = bytes === undefined ? DEFAULT_STEP_BYTES : Math.max(1, Math.floor(bytes));
  return previous;
}

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

/**
 * A run of a file's bytes and where it is read to: into the image, or into the scratch buffer
 * (bytes that are only checksummed: a delta's header, a chunk a newer delta of the chain rewrites).
 * @internal
 */
export interface Piece {
  /** Where the run starts in the file. */
  offset: number;
  length: number;
  /** Read into the scratch buffer, not into the image. */
  scratch: boolean;
  /** Where the run starts in its buffer. */
  at: number;
}

/** A file read in pieces: its pieces, in file order, cover it exactly. @internal */
export interface ScatteredFile {
  path: string;
  /**
   * The CRC-32 in the file's name. With `named`, it is a snapshot name's CRC, which covers the
   * file's bytes followed by the name's seq and time (snapshot-name-crc.ts); without, the CRC of
   * the file's bytes.
   */
  crc: number;
  /** The seq and time in the snapshot file's name, whose CRC `crc` is. */
  named?: { seq: number; timeMs: number; identity?: SnapshotIdentity | undefined } | undefined;
  pieces: readonly Piece[];
}

/** Reads files and checks their CRC on another thread. @internal */
export interface OffThreadCrc {
  /** Whether an image of `size` bytes is read and checked here (the reads answer `undefined` otherwise). */
  accepts(size: number): boolean;
  /**
   * Reads `file` (`size` bytes by its stat) and starts checking it against `crc` (a snapshot
   * name's, with `named`: see {@link ScatteredFile}): `undefined` when
   * the image is too small to be worth a thread (check it in line), else the bytes (a view of a
   * `SharedArrayBuffer`, read once) and the check, which resolves `true` when the CRC matches and
   * `false` when it differs or the file did not read whole. Rejects when the file cannot be read.
   */
  readAndCheck(
    file: string,
    size: number,
    crc: number,
    named?: { seq: number; timeMs: number; identity?: SnapshotIdentity | undefined },
  ): Promise<{ image: Uint8Array; matches: Promise<boolean> } | undefined>;
  /**
   * Reads `files` piece by piece into an image of `imageBytes` (zeros where no piece lands) and a
   * scratch buffer of `scratchBytes`, and starts checking every file's CRC, all on one worker:
   * `undefined` when the image is too small to be worth a thread, else the image and the check,
   * which resolves `true` only when every file's CRC matches (and `false` when one differs or a
   * file did not read whole). Rejects when a file cannot be read. How a delta chain is read into
   * the image it composes (snapshot-chain-read.ts, `layOutChain`).
   */
  readScatteredAndCheck(
    files: readonly ScatteredFile[],
    imageBytes: number,
    scratchBytes: number,
  ): Promise<{ image: Uint8Array; matches: Promise<boolean> } | undefined>;
  /**
   * The CRC-32 of `parts` in order (`bytes` in all), computed on a worker: how a snapshot being
   * written is summed, so that the sum of a large one never takes turns of the event loop.
   * `undefined` (sum it in line) when the image is too small to be worth a thread, when a part
   * over 64 KiB is not in shared memory (only shared memory can be read by the worker; smaller
   * parts, a delta's header, are copied into it), or when the worker fails. The parts must not
   * change until it settles (a snapshot's frozen chunks do not).
   */
  crcOfParts(parts: readonly Uint8Array[], bytes: number): Promise<number | undefined>;
  /**
   * The length and CRC-32 of the file at `path`, which should hold `bytes` bytes, read and summed
   * on a worker (the read-back of a snapshot just written): nothing of it runs on the event loop.
   * `undefined` (read it in line) when the file is too small to be worth a thread, or when the
   * worker fails in any way, a read error included: the read in line then reports it.
   */
  crcOfFile(path: string, bytes: number): Promise<{ bytes: number; crc: number } | undefined>;
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
  const readScatteredAndCheck: OffThreadCrc["readScatteredAndCheck"] = async (files, imageBytes, scratchBytes) => {
    if (!accepts(imageBytes)) return undefined;
    const image = new Uint8Array(new SharedArrayBuffer(imageBytes));
    const scratch = new Uint8Array(new SharedArrayBuffer(scratchBytes));
    // The worker starts before the first read and sums each step once it is read: at 1 GB the sum
    // of the first touch of freshly read memory took as long again as the read when it followed it.
    const steps = readSteps(files, stepBytes);
    const progress = new Int32Array(new SharedArrayBuffer(8));
    const answer = startChecker(threads, image, scratch, files.length, steps, progress);
    let read = 0;
    try {
      for (const [i, f] of files.entries()) {
        const handle = await fs.open(f.path, "r");
        try {
          for (; read < steps.length && (steps[read] as ReadStep).file === i; read++) {
            const s = steps[read] as ReadStep;
            const target = (s.scratch ? scratch : image).subarray(s.at, s.at + s.length);
            if ((await readInto(handle, target, s.offset)) !== s.length)
              return { image, matches: Promise.resolve(false) };
            Atomics.store(progress, 0, read + 1);
            Atomics.notify(progress, 0);
          }
        } finally {
          await handle.close();
        }
      }
    } finally {
      if (read < steps.length) {
        // The read gave up (short file, error): the worker must not wait for steps never read.
        Atomics.store(progress, 1, 1);
        Atomics.store(progress, 0, steps.length + 1);
        Atomics.notify(progress, 0);
      }
    }
    checks++;
    filesChecked += files.length;
    return { image, matches: verdict(answer, image, scratch, files) };
  };
  return {
    accepts,
    readScatteredAndCheck,
    crcOfParts: async (parts, bytes) => {
      if (!accepts(bytes)) return undefined;
      const shared = sharedParts(parts);
      if (shared === undefined) return undefined;
      const answer = await sumOnWorker(threads, { parts: shared });
      if (answer === undefined) return undefined;
      partsSummed++;
      return answer.crc;
    },
    crcOfFile: async (path, bytes) => {
      if (!accepts(bytes)) return undefined;
      const answer = await sumOnWorker(threads, { path });
      if (answer === undefined || answer.bytes === undefined) return undefined;
      filesReadBack++;
      return { bytes: answer.bytes, crc: answer.crc };
    },
    readAndCheck: (file, size, crc, named) =>
      readScatteredAndCheck(
        [{ path: file, crc, named, pieces: [{ offset: 0, length: size, scratch: false, at: 0 }] }],
        size,
        0,
      ),
  };
}

/** Parts up to this size that are not in shared memory are copied into it for the worker. */
const COPY_TO_SHARED_BYTES = 64 * 1024;

/** Each part as (shared buffer, offset, length), copying small unshared ones; `undefined` if one cannot be. */
function sharedParts(parts: readonly Uint8Array[]): [SharedArrayBuffer, number, number][] | undefined {
  const out: [SharedArrayBuffer, number, number][] = [];
  for (const part of parts) {
    if (part.length === 0) continue;
    if (part.buffer instanceof SharedArrayBuffer) out.push([part.buffer, part.byteOffset, part.length]);
    else if (part.length <= COPY_TO_SHARED_BYTES) {
      const copy = new Uint8Array(new SharedArrayBuffer(part.length));
      copy.set(part);
      out.push([copy.buffer as SharedArrayBuffer, 0, part.length]);
    } else return undefined;
  }
  return out;
}

/**
 * The second worker: the CRC-32 chained over pieces of shared buffers, or the length and CRC-32 of
 * a file it reads itself in 4 MiB slices (no byte of it crosses to the event loop). CommonJS, as
 * {@link WORKER_SOURCE}.
 */
const SUM_WORKER_SOURCE = `
const { parentPort, workerData } = require("worker_threads");
const { crc32 } = require("zlib");
let crc = 0;
if (workerData.path !== undefined) {
  const fs = require("fs");
  const fd = fs.openSync(workerData.path, "r");
  const slice = Buffer.allocUnsafe(4 * 1024 * 1024);
  let bytes = 0;
  try {
    for (;;) {
      const n = fs.readSync(fd, slice, 0, slice.length, bytes);
      if (n === 0) break;
      crc = crc32(slice.subarray(0, n), crc);
      bytes += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  parentPort.postMessage({ bytes, crc });
} else {
  for (const [buffer, at, length] of workerData.parts) crc = crc32(new Uint8Array(buffer, at, length), crc);
  parentPort.postMessage({ crc });
}
`;

let partsSummed = 0;
let filesReadBack = 0;

/** How many snapshot writes were summed, and read back, on a worker in this process (tests). @internal */
export function offThreadWriteSums(): { parts: number; files: number } {
  return { parts: partsSummed, files: filesReadBack };
}

/** The sum worker's answer, or `undefined` when it could not start, failed, died or answered nonsense. */
async function sumOnWorker(
  threads: WorkerThreads,
  data: { parts: [SharedArrayBuffer, number, number][] } | { path: string },
): Promise<{ crc: number; bytes?: number } | undefined> {
  const answer = await answerOf(threads, SUM_WORKER_SOURCE, data);
  const v = answer?.value as { crc?: unknown; bytes?: unknown } | null | undefined;
  const ok = typeof v?.crc === "number" && ("path" in data ? typeof v.bytes === "number" : v.bytes === undefined);
  return ok ? (v as { crc: number; bytes?: number }) : undefined;
}

/**
 * Fills `target` from the file's byte `position` on (its start by default); returns the bytes read
 * (fewer when the file is shorter).
 */
export async function readInto(handle: FileHandle, target: Uint8Array, position = 0): Promise<number> {
  let at = 0;
  while (at < target.length) {
    const { bytesRead } = await handle.read(target, at, Math.min(target.length - at, 16 * 1024 * 1024), position + at);
    if (bytesRead === 0) break;
    at += bytesRead;
  }
  return at;
}

/**
 * The CRC-32 of each file, chained over its pieces in file order (the same sum as over the file's
 * bytes in one run).
 */
function crcsInLine(image: Uint8Array, scratch: Uint8Array, files: readonly ScatteredFile[]): number[] {
  return files.map((f) =>
    f.pieces.reduce((crc, p) => crc32Update(crc, p.scratch ? scratch : image, p.at, p.at + p.length), 0),
  );
}

/** One read of a file into the image or the scratch buffer, and the step of the sums after it. */
interface ReadStep {
  /** The file's index in the list checked. */
  file: number;
  /** Where the read starts in the file. */
  offset: number;
  length: number;
  scratch: boolean;
  /** Where it lands in its buffer. */
  at: number;
}

/** The files' pieces cut into reads of at most `most` bytes, in file order. */
function readSteps(files: readonly ScatteredFile[], most: number): ReadStep[] {
  const steps: ReadStep[] = [];
  for (const [file, f] of files.entries())
    for (const p of f.pieces)
      for (let done = 0; done < p.length; done += most) {
        const length = Math.min(most, p.length - done);
        steps.push({ file, offset: p.offset + done, length, scratch: p.scratch, at: p.at + done });
      }
  return steps;
}

/** Starts the worker that sums each step once `progress` says it is read; its answer, if any. */
function startChecker(
  threads: WorkerThreads,
  image: Uint8Array,
  scratch: Uint8Array,
  files: number,
  steps: readonly ReadStep[],
  progress: Int32Array,
): Promise<{ value: unknown } | undefined> {
  const workerData = {
    image: image.buffer,
    scratch: scratch.buffer,
    progress: progress.buffer,
    files,
    steps: steps.flatMap((s) => [s.file, s.scratch ? 1 : 0, s.at, s.length]),
  };
  return answerOf(threads, WORKER_SOURCE, workerData);
}

/**
 * Every file's CRC matches, by the worker's sums; when the worker failed (could not start, died),
 * by the CRCs computed here. Called once every step was read.
 */
async function verdict(
  answer: Promise<{ value: unknown } | undefined>,
  image: Uint8Array,
  scratch: Uint8Array,
  files: readonly ScatteredFile[],
): Promise<boolean> {
  const agree = (crcs: unknown) =>
    Array.isArray(crcs) &&
    crcs.length === files.length &&
    files.every((f, i) => typeof crcs[i] === "number" && crcMatches(crcs[i], { crc: f.crc, ...f.named }));
  const answered = await answer;
  if (answered === undefined) return agree(crcsInLine(image, scratch, files));
  answers++;
  return agree(answered.value);
}

/**
 * The first message of a one-shot eval worker running `source` on `workerData` (then the worker
 * is terminated), or `undefined` when it could not start, failed or exited without answering.
 */
function answerOf(
  threads: WorkerThreads,
  source: string,
  workerData: unknown,
): Promise<{ value: unknown } | undefined> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (answer: { value: unknown } | undefined) => {
      if (settled) return;
      settled = true;
      resolve(answer);
    };
    let worker: InstanceType<WorkerThreads["Worker"]>;
    try {
      worker = new threads.Worker(source, { eval: true, workerData });
    } catch {
      done(undefined);
      return;
    }
    worker.once("message", (value: unknown) => {
      done({ value });
      void worker.terminate();
    });
    worker.once("error", () => done(undefined));
    worker.once("exit", () => done(undefined));
  });
}
